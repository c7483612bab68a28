"""mcp_min: the Model Context Protocol in one standard-library module.

The lab of the course (course text 000 is its map). Read it top to bottom; the banners carry the
section numbers the lessons use:

  1. Messages            JSON-RPC 2.0 as plain dicts, the error codes, RPCError
  2. The server          MCPServer.handle, the handshake gate, _dispatch, _call_tool, the _outbox
  3. Versions and eras   negotiation, the stateless 2026-07-28 revision, input_required
  4. The client          MCPClient, tools_cache, _pump_notifications
  5. Transports          InMemoryTransport, stdio, Streamable HTTP, all with one trace hook
  6. The wire tap        python mcp_min.py tap -- <server command>

Glossary (one word per concept; the module uses no synonyms):
  message       one JSON-RPC object on the wire: a request, a notification or a response
  request       a message with an "id" and a "method"; it gets exactly one response
  notification  a message with a "method" and no "id" key; it never gets a response
  response      a message that echoes a request's id and holds a result or an error
  result        the object a successful response carries
  error         the {code, message, data?} object a failed response carries
  tool          a function a client may call (tools/call)
  resource      data a client may read by URI (resources/read); a URI template names many
  prompt        a message template a client may fill in (prompts/get)
  catalog       the tools, resources and prompts one server offers
  session       one client's state on a server in the handshake era: gate, version, outbox
  allow-list    the tools a session may call: the permission boundary
  era           how a request is served: "handshake" (2025-06-18, 2025-11-25) or "stateless" (2026-07-28)
  outbox        notifications the server queued; the transport delivers them before the next response
  transport     what carries messages between a client and a server: memory, stdio or HTTP

Example:
    server = MCPServer("demo")

    @server.tool()
    def add(x: int, y: int) -> int:
        "Add two integers."
        return x + y

    client = MCPClient(InMemoryTransport(server))
    client.initialize()
    client.call_tool("add", {"x": 2, "y": 3})   # {"content": [{"type": "text", "text": "5"}]}
"""

import base64
import hashlib
import hmac
import inspect
import json
import os
import re
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
import types
import typing
import urllib.parse

# ---------------------------------------------------------------------------------------------------
# ---- 1. Messages ----
# JSON-RPC 2.0: three shapes, told apart by which keys are present, never by a type tag (course 000).
# ---------------------------------------------------------------------------------------------------

JSONRPC = "2.0"

# The five standard codes, and the two of the 2026-07-28 revision that this lab raises.
PARSE_ERROR = -32700  # the bytes were not JSON: raised at the transport edge, so the id is null
INVALID_REQUEST = -32600  # not a valid request object
METHOD_NOT_FOUND = -32601  # no such method
INVALID_PARAMS = -32602  # the method exists, its params are wrong
INTERNAL_ERROR = -32603  # a handler raised: the server's bug, never a crash
HEADER_MISMATCH = -32020  # 2026-07-28 over HTTP: a header disagrees with the body
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28: the version in _meta is not served here

# The lab's policy codes (course 000). The spec chooses differently (README, "where this lab and the
# spec differ"); turning the lab into the spec is a one-line change per row.
UNKNOWN_TOOL = METHOD_NOT_FOUND  # spec: INVALID_PARAMS
TOOL_NOT_ALLOWED = INVALID_REQUEST  # spec: not specified
NOT_INITIALIZED = INVALID_REQUEST  # spec: no code; requests before `initialized` SHOULD wait

ERROR_CODES = (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
               HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION)


class RPCError(Exception):
    """A deliberate protocol error; MCPServer.handle turns it into an error response with its code."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def request(id: int | str, method: str, params: dict | None = None) -> dict:
    """A request: it demands exactly one response carrying the same id."""
    message = {"jsonrpc": JSONRPC, "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: dict | None = None) -> dict:
    """A notification: the "id" key is absent (never "id": None), so nobody replies."""
    message = {"jsonrpc": JSONRPC, "method": method}
    if params is not None:
        message["params"] = params
    return message


def response(id: int | str, result: dict) -> dict:
    """A successful response: the request's id and its result."""
    return {"jsonrpc": JSONRPC, "id": id, "result": result}


def error_response(id: int | str | None, code: int, message: str, data=None) -> dict:
    """A failed response: the request's id (null when it could not be read) and an error."""
    error = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": JSONRPC, "id": id, "error": error}


def is_notification(message: dict) -> bool:
    """The one predicate of course 000: a message without an "id" key is a notification."""
    return "id" not in message


def valid_id(id) -> bool:
    """A request id is a string or an integer; null, floats and booleans are not ids."""
    return isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))


# ---------------------------------------------------------------------------------------------------
# ---- 2. The server ----
# One catalog, one session: handle() checks the message, the gate checks the session, _dispatch
# picks a handler, _call_tool walks the error lattice, and notifications wait in _outbox.
# ---------------------------------------------------------------------------------------------------

LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]  # RFC 5424
CONTENT_TYPES = {"text", "image", "audio", "resource_link", "resource"}  # the blocks a tool may return
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
PYTHON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool,
                "array": list, "object": dict, "null": type(None)}


# Content blocks: a tool returns one of these (or a list of them) to send pictures, sound or files
# as they are; any other return value becomes one text block.
def text_content(text: str) -> dict:
    """A text block."""
    return {"type": "text", "text": text}


def image_content(data: bytes, mime_type: str) -> dict:
    """An image block: the bytes travel as base64."""
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def audio_content(data: bytes, mime_type: str) -> dict:
    """An audio block: the bytes travel as base64."""
    return {"type": "audio", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime_type}


def resource_link(uri: str, name: str, mime_type: str | None = None) -> dict:
    """A link to a resource the client may read later (2025-06-18 and on)."""
    block = {"type": "resource_link", "uri": uri, "name": name}
    if mime_type:
        block["mimeType"] = mime_type
    return block


def embedded_resource(uri: str, content: str | bytes, mime_type: str = "text/plain") -> dict:
    """A resource's contents carried inside the result."""
    return {"type": "resource", "resource": resource_contents(uri, content, mime_type)}


def resource_contents(uri: str, content: str | bytes, mime_type: str) -> dict:
    """One entry of resources/read's contents: text as it is, bytes as a base64 blob."""
    if isinstance(content, bytes):
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(content).decode("ascii")}
    if isinstance(content, str):
        return {"uri": uri, "mimeType": mime_type, "text": content}
    raise TypeError(f"a resource is str or bytes, not {type(content).__name__}")


def tool_result(value) -> dict:
    """Turn what a tool returned into a tools/call result (content blocks pass as they are)."""
    if isinstance(value, dict) and value.get("type") in CONTENT_TYPES:
        value = [value]
    if isinstance(value, list) and value and all(isinstance(b, dict) and b.get("type") in CONTENT_TYPES
                                                 for b in value):
        json.dumps(value, allow_nan=False)  # fail here, inside the tool's try, not on the wire
        return {"content": value}
    if isinstance(value, str):
        return {"content": [text_content(value)]}
    result = {"content": [text_content(json.dumps(value, allow_nan=False))]}
    if isinstance(value, dict):
        result["structuredContent"] = value  # the handshake era wants an object here (WIRE.md 4)
    return result


def json_schema(hint) -> dict:
    """The JSON Schema of one type hint: str, int, float, bool, list, dict, list[X], Literal, Optional."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return {"type": JSON_TYPES[type(args[0])], "enum": list(args)}
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = json_schema(next(a for a in args if a is not type(None)))
        return {**inner, "type": [inner["type"], "null"]}  # Optional[X]: X or null
    if origin is list and args:
        return {"type": "array", "items": json_schema(args[0])}
    return {"type": JSON_TYPES.get(origin or hint, "string")}


def signature_schema(fn) -> tuple[dict, str | None, dict]:
    """Derive (inputSchema, the Context parameter's name, each Literal parameter's choices) from fn."""
    hints = typing.get_type_hints(fn)
    properties, required, context, choices = {}, [], None, {}
    for param in inspect.signature(fn).parameters.values():
        hint = hints.get(param.name, str)
        if hint is Context:
            context = param.name  # the server fills it in; the client never sees it
            continue
        properties[param.name] = json_schema(hint)
        if "enum" in properties[param.name]:
            choices[param.name] = [str(c) for c in properties[param.name]["enum"]]
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
        elif isinstance(param.default, (str, int, float, bool)):
            properties[param.name]["default"] = param.default
    return {"type": "object", "properties": properties, "required": required}, context, choices


def check_arguments(schema: dict, arguments: dict):
    """Raise INVALID_PARAMS for a missing required argument or one of the wrong JSON type or value."""
    problem = None
    properties = schema.get("properties", {})
    missing = [name for name in schema.get("required", []) if name not in arguments]
    if missing:
        problem = f"missing required argument: {missing[0]}"
    for name, value in arguments.items():
        rule = properties.get(name, {})
        types = rule.get("type", [])
        types = [types] if isinstance(types, str) else types
        if problem is None and types and not any(is_json_type(value, t) for t in types):
            problem = f"argument '{name}' must be {' or '.join(types)}"
        if problem is None and "enum" in rule and value not in rule["enum"]:
            problem = f"argument '{name}' must be one of {rule['enum']}"
    if problem:
        raise RPCError(INVALID_PARAMS, problem)


def is_json_type(value, name: str) -> bool:
    """Whether value has the JSON Schema type name; true and false are not integers here."""
    if isinstance(value, bool):
        return name == "boolean"
    return isinstance(value, PYTHON_TYPES.get(name, object))


def param(params: dict, key: str, kind: type):
    """params[key], which must be of kind; otherwise INVALID_PARAMS, the one place it is raised for shape."""
    value = params.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) != (kind is bool):
        raise RPCError(INVALID_PARAMS, f"params.{key} must be {JSON_TYPES.get(kind, kind.__name__)}")
    return value


class InputRequired(Exception):
    """Raised inside a tool by Context.elicit: the stateless era answers input_required instead."""

    def __init__(self, key: str, input_request: dict):
        super().__init__(key)
        self.key = key
        self.input_request = input_request


class Context:
    """What a running tool may tell its client: log lines and progress, queued in the outbox.

    A tool asks for it with a parameter annotated `Context`, which the inputSchema leaves out:
        @server.tool()
        def count_slowly(n: int, ctx: Context) -> str:
            for i in range(n):
                ctx.progress(i + 1, total=n)
            return "done"
    """

    def __init__(self, server, params: dict, inputs: dict):
        meta = params.get("_meta") or {}
        self.outbox = server._outbox
        self.progress_token = meta.get("progressToken")  # no token: the client wants no progress
        self.stateless = PROTOCOL_VERSION_KEY in meta
        # 2026-07-28 has no logging/setLevel: a request asks for logs in its own _meta, or gets none.
        self.log_level = meta.get(LOG_LEVEL_KEY) if self.stateless else server.log_level
        self.client_capabilities = meta.get(CLIENT_CAPABILITIES_KEY, {}) if self.stateless else {}
        self.inputs = inputs
        self.last_progress = None

    def log(self, level: str, data, logger: str | None = None):
        """Send notifications/message, unless the level is below the one the client set."""
        if self.log_level not in LOG_LEVELS or LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        params = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self.outbox.append(notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None):
        """Send notifications/progress for this request's progressToken; progress must grow."""
        if self.progress_token is None:
            return
        if self.last_progress is not None and progress <= self.last_progress:
            raise ValueError(f"progress must increase: {progress} after {self.last_progress}")
        self.last_progress = progress
        params = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        self.outbox.append(notification("notifications/progress", params))

    def elicit(self, key: str, message: str, schema: dict) -> dict:
        """Ask the user through the client (elicitation/create); the answer arrives with the retry."""
        if key in self.inputs:
            return self.inputs[key]
        if not self.stateless:
            # This lab sends no server-to-client requests; only 2026-07-28's input_required can ask.
            raise RuntimeError(f"this needs the user's confirmation ('{key}'), which only a 2026-07-28 "
                               "client can give: retry with that protocol version")
        if "elicitation" not in self.client_capabilities:
            raise RuntimeError(f"this needs the user's confirmation ('{key}'), but the client declared "
                               "no elicitation capability")
        params = {"message": message, "requestedSchema": schema}
        raise InputRequired(key, {"method": "elicitation/create", "params": params})


class MCPServer:
    """One MCP server: a catalog of tools, resources and prompts, and one session's state.

    `allowed_tools` is the session's allow-list (None allows every tool). It is set by whoever
    creates the session, never by the client: clientInfo is a claim, not an identity.
        server = MCPServer("demo", allowed_tools={"add"})
        server.add_tool("add", lambda x, y: x + y, input_schema={...})
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})   # {"jsonrpc": "2.0", "id": 1, "result": {}}
    """

    def __init__(self, name: str, version: str = "0.1.0", allowed_tools=None, instructions: str | None = None,
                 ttl_ms: int = 60_000, state_key: bytes | None = None):
        self.server_info = {"name": name, "version": version}
        self.instructions = instructions
        self.allowed_tools = None if allowed_tools is None else set(allowed_tools)
        self.ttl_ms = ttl_ms  # how long a stateless client may cache a list result
        self.tools = {}  # name -> {"spec": the tools/list entry, "fn", "context": parameter name}
        self.resources = {}  # uri -> {"spec", "read"}
        self.templates = {}  # uriTemplate -> {"spec", "read", "pattern", "choices"}
        self.prompts = {}  # name -> {"spec", "render", "choices"}
        # The session (handshake era): the gate, the agreed version, what the client asked for.
        self._initialized = False
        self.protocol_version = None
        self.client_info = None
        self.log_level = "info"
        self.subscriptions = set()
        self._outbox = []
        # input_required (stateless era): requestState is signed, and each one is spent once.
        self._state_key = state_key or secrets.token_bytes(32)
        self._states_issued = 0
        self._states_spent = set()
        self._handlers = {
            "initialize": self._initialize,
            "ping": self._ping,
            "server/discover": self._discover,
            "tools/list": self._list_tools,
            "tools/call": self._call_tool,
            "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates,
            "resources/read": self._read_resource,
            "prompts/list": self._list_prompts,
            "prompts/get": self._get_prompt,
            "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe,
            "resources/unsubscribe": self._unsubscribe,
            "completion/complete": self._complete,
        }

    # -- registration: the catalog, and the outbox when it changes --

    def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
                 notify: bool = False):
        """Offer fn as a tool; without input_schema, derive it from fn's signature and type hints."""
        schema, context, _ = signature_schema(fn)
        spec = {"name": name, "description": description or first_line(fn.__doc__),
                "inputSchema": input_schema or schema}
        self.tools[name] = {"spec": spec, "fn": fn, "context": context}
        self._list_changed("tools", notify)

    def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                     mime_type: str = "text/plain", notify: bool = False):
        """Offer data at uri: read is the content (str or bytes) or a function returning it.

        A uri with {variables} is a URI template: read receives each variable as a keyword argument,
        and raises KeyError for a value it does not know (the client gets "unknown resource").
        """
        if not callable(read):
            content = read
            read = lambda: content  # noqa: E731 (a constant resource)
        spec = {"name": name or uri, "mimeType": mime_type}
        if description or read.__doc__:
            spec["description"] = description or first_line(read.__doc__)
        if "{" in uri:
            _, _, choices = signature_schema(read)
            self.templates[uri] = {"spec": {"uriTemplate": uri, **spec}, "read": read,
                                   "pattern": template_pattern(uri), "choices": choices}
        else:
            changed = uri in self.resources
            self.resources[uri] = {"spec": {"uri": uri, **spec}, "read": read}
            if changed:
                self.resource_updated(uri)
        self._list_changed("resources", notify)

    def add_prompt(self, name: str, render, description: str = "", notify: bool = False):
        """Offer a prompt template; render's parameters are its variables, and it returns the text."""
        schema, _, choices = signature_schema(render)
        arguments = [{"name": key, "required": key in schema["required"]} for key in schema["properties"]]
        spec = {"name": name, "description": description or first_line(render.__doc__), "arguments": arguments}
        self.prompts[name] = {"spec": spec, "render": render, "choices": choices}
        self._list_changed("prompts", notify)

    def tool(self, name: str | None = None, description: str = "", notify: bool = False):
        """Decorator in the official SDK's style: @server.tool() registers the function below it."""
        def register(fn):
            self.add_tool(name or fn.__name__, fn, description, notify=notify)
            return fn
        return register

    def resource(self, uri: str, name: str | None = None, mime_type: str = "text/plain"):
        """Decorator: @server.resource("policy://{doc_id}") serves the function's return value."""
        def register(fn):
            self.add_resource(uri, fn, name or fn.__name__, mime_type=mime_type)
            return fn
        return register

    def prompt(self, name: str | None = None, description: str = ""):
        """Decorator: @server.prompt() registers a prompt template."""
        def register(fn):
            self.add_prompt(name or fn.__name__, fn, description)
            return fn
        return register

    def _list_changed(self, kind: str, notify: bool):
        """Queue notifications/<kind>/list_changed: a bare cache invalidation, no payload (course 000)."""
        if notify and self._initialized:
            self._outbox.append(notification(f"notifications/{kind}/list_changed"))

    def resource_updated(self, uri: str):
        """Tell a subscribed client that the resource at uri changed (notifications/resources/updated)."""
        if uri in self.subscriptions and self._initialized:
            self._outbox.append(notification("notifications/resources/updated", {"uri": uri}))

    # -- the one entry point --

    def handle(self, message) -> dict | None:
        """Answer one message: its response, or None for a notification (never a reply, not even an error)."""
        if not isinstance(message, dict):
            # A batch (a list) or a scalar: no request object, so no id to answer (batches left in 2025-06-18).
            return error_response(None, INVALID_REQUEST, "a message must be a JSON object")
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response to the server: this lab sends no requests, so none is awaited
        id = message.get("id")
        try:
            result = self._serve(message)
        except RPCError as exc:  # tier 1: a deliberate protocol error keeps its code
            if is_notification(message):
                return None
            return error_response(id if valid_id(id) else None, exc.code, exc.message, exc.data)
        except Exception as exc:  # tier 2: a handler bug becomes -32603, never a traceback on the wire
            if is_notification(message):
                return None
            return error_response(id if valid_id(id) else None, INTERNAL_ERROR, f"internal error: {exc!r}"[:200])
        if is_notification(message):  # tier 3: a notification is never answered
            return None
        return response(id, result)

    def _serve(self, message: dict):
        """Check the message, pick its era, pass the handshake gate, and dispatch."""
        if message.get("jsonrpc") != JSONRPC:
            raise RPCError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not is_notification(message) and not valid_id(message["id"]):
            raise RPCError(INVALID_REQUEST, "id must be a string or an integer")  # "id": null included
        method = message.get("method")
        if not isinstance(method, str):
            raise RPCError(INVALID_REQUEST, "method must be a string")
        params = message.get("params", {})
        if not isinstance(params, dict):
            raise RPCError(INVALID_REQUEST, "params must be an object")
        if is_notification(message):
            return self._notified(method)
        if is_stateless(message):
            return self._serve_stateless(method, params)
        # The handshake gate (course 000): nothing but initialize and ping before `initialized`.
        if not self._initialized and method not in ("initialize", "ping"):
            raise RPCError(NOT_INITIALIZED, "server not initialized")
        return self._dispatch(method, params)

    def _notified(self, method: str):
        """Act on a notification: only notifications/initialized changes anything here."""
        if method == "notifications/initialized" and self.protocol_version is not None:
            self._initialized = True  # the session is live only now (course 000, step 3)
        # notifications/cancelled: requests run one at a time here, so there is nothing left to stop.

    def _dispatch(self, method: str, params: dict, stateless: bool = False):
        """Route a method to its handler: the flat table of course 000."""
        handler = self._handlers.get(method)
        if handler is None or (stateless and method in HANDSHAKE_ONLY):
            raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(params)

    # -- the handlers, each beside the request it answers --

    def _initialize(self, params):
        # initialize {protocolVersion, capabilities, clientInfo}
        if self._initialized:
            raise RPCError(INVALID_REQUEST, "session already initialized")
        self.protocol_version = negotiate_version(param(params, "protocolVersion", str))
        self.client_info = params.get("clientInfo")  # a claim, not an identity: it grants nothing
        result = {"protocolVersion": self.protocol_version, "capabilities": HANDSHAKE_CAPABILITIES,
                  "serverInfo": self.server_info}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _ping(self, params):
        # ping {} (allowed at any time, even before the handshake)
        return {}

    def _list_tools(self, params):
        # tools/list {cursor?}: one page holds them all
        return {"tools": [tool["spec"] for tool in self.tools.values()]}

    def _call_tool(self, params):
        # tools/call {name, arguments}: the error lattice of course 000, checked in this order
        name = param(params, "name", str)
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RPCError(INVALID_PARAMS, "params.arguments must be object")
        tool = self.tools.get(name)
        if tool is None:
            raise RPCError(UNKNOWN_TOOL, f"unknown tool: {name}")
        if self.allowed_tools is not None and name not in self.allowed_tools:
            # The permission boundary, checked before the tool can run.
            raise RPCError(TOOL_NOT_ALLOWED, f"tool '{name}' not permitted for this session")
        check_arguments(tool["spec"]["inputSchema"], arguments)
        inputs = {}
        if "requestState" in params:  # a retry after input_required: only a state we signed counts
            self._spend_state(params["requestState"], name, arguments)
            inputs = params.get("inputResponses") or {}
        kwargs = dict(arguments)
        if tool["context"]:
            kwargs[tool["context"]] = Context(self, params, inputs)
        try:
            return tool_result(tool["fn"](**kwargs))
        except InputRequired as ask:
            return {"resultType": "input_required", "inputRequests": {ask.key: ask.input_request},
                    "requestState": self._sign_state(name, arguments)}
        except Exception as exc:
            # The tool failed, the protocol did not: a result the model can read and react to.
            return {"content": [text_content(f"ERROR: {exc or type(exc).__name__}")], "isError": True}

    def _list_resources(self, params):
        # resources/list {cursor?}
        return {"resources": [entry["spec"] for entry in self.resources.values()]}

    def _list_templates(self, params):
        # resources/templates/list {cursor?}
        return {"resourceTemplates": [entry["spec"] for entry in self.templates.values()]}

    def _read_resource(self, params):
        # resources/read {uri}: a static resource first, then the first template that matches
        uri = param(params, "uri", str)
        entry, variables = self.resources.get(uri), {}
        for template in self.templates.values() if entry is None else ():
            match = template["pattern"].fullmatch(uri)
            if match:
                entry = template
                variables = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
                break
        if entry is not None:
            try:
                content = entry["read"](**variables)
            except KeyError:
                entry = None  # a template's function raises KeyError for a name it does not know
        if entry is None:
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        return {"contents": [resource_contents(uri, content, entry["spec"]["mimeType"])]}

    def _list_prompts(self, params):
        # prompts/list {cursor?}
        return {"prompts": [prompt["spec"] for prompt in self.prompts.values()]}

    def _get_prompt(self, params):
        # prompts/get {name, arguments}: every required variable filled, or INVALID_PARAMS naming it
        name = param(params, "name", str)
        prompt = self.prompts.get(name)
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"unknown prompt: {name}")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise RPCError(INVALID_PARAMS, "params.arguments must be object")
        missing = [a["name"] for a in prompt["spec"]["arguments"] if a["required"] and a["name"] not in arguments]
        if missing:
            raise RPCError(INVALID_PARAMS, f"missing prompt variable: {missing[0]}")
        known = {a["name"] for a in prompt["spec"]["arguments"]}
        rendered = prompt["render"](**{k: v for k, v in arguments.items() if k in known})
        return {"description": prompt["spec"]["description"], "messages": prompt_messages(rendered)}

    def _set_level(self, params):
        # logging/setLevel {level}: log lines below it are not sent
        level = params.get("level")
        if level not in LOG_LEVELS:
            raise RPCError(INVALID_PARAMS, f"unknown log level: {level!r}; use one of {LOG_LEVELS}")
        self.log_level = level
        return {}

    def _subscribe(self, params):
        # resources/subscribe {uri}
        self.subscriptions.add(param(params, "uri", str))
        return {}

    def _unsubscribe(self, params):
        # resources/unsubscribe {uri}
        self.subscriptions.discard(param(params, "uri", str))
        return {}

    def _complete(self, params):
        # completion/complete {ref: {type, name | uri}, argument: {name, value}}
        ref = param(params, "ref", dict)
        argument = param(params, "argument", dict)
        if ref.get("type") == "ref/prompt":
            entry = self.prompts.get(ref.get("name"))
        else:
            entry = self.templates.get(ref.get("uri"))
        if entry is None:
            raise RPCError(INVALID_PARAMS, f"nothing to complete for {ref}")
        typed = str(argument.get("value", ""))
        values = [c for c in entry["choices"].get(argument.get("name"), []) if c.startswith(typed)]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    # -- the stateless era (section 3 explains it; these are the server's parts) --

    def _serve_stateless(self, method: str, params: dict):
        """Serve one self-contained 2026-07-28 request: no gate, nothing read from the session."""
        meta = params.get("_meta") or {}
        version = meta.get(PROTOCOL_VERSION_KEY)
        if version is not None or method != "server/discover":  # a bare discover may probe without _meta
            if version not in STATELESS_VERSIONS:
                raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                               {"supported": SUPPORTED_VERSIONS, "requested": version})
            if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
                raise RPCError(INVALID_PARAMS, f"_meta must carry {CLIENT_CAPABILITIES_KEY}")
        result = self._dispatch(method, params, stateless=True)
        result = {**result, "resultType": result.get("resultType", "complete")}
        if method in CACHEABLE and result["resultType"] == "complete":
            result["ttlMs"] = self.ttl_ms
            result["cacheScope"] = "private"  # what one client may see can differ (its allow-list)
        result["_meta"] = {SERVER_INFO_KEY: self.server_info}
        return result

    def _discover(self, params):
        # server/discover {_meta}: what this server speaks, asked without a handshake
        result = {"supportedVersions": SUPPORTED_VERSIONS, "capabilities": STATELESS_CAPABILITIES}
        if self.instructions:
            result["instructions"] = self.instructions
        return result

    def _sign_state(self, tool: str, arguments: dict) -> str:
        """Mint a requestState bound to this call and signed, so a client can neither forge nor reuse it."""
        self._states_issued += 1
        payload = {"tool": tool, "arguments": arguments_digest(arguments), "n": self._states_issued}
        body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode("ascii")
        return body + "." + hmac.new(self._state_key, body.encode(), hashlib.sha256).hexdigest()

    def _spend_state(self, state, tool: str, arguments: dict):
        """Accept a requestState once, for the call it was minted for; the spec calls it attacker-controlled."""
        body, _, mac = str(state).partition(".")
        expected = hmac.new(self._state_key, body.encode(), hashlib.sha256).hexdigest()
        problem = None
        if not hmac.compare_digest(mac, expected):
            problem = "requestState is not one this server signed"
        else:
            payload = json.loads(base64.urlsafe_b64decode(body))
            if payload["tool"] != tool or payload["arguments"] != arguments_digest(arguments):
                problem = "requestState belongs to another call"
            elif payload["n"] in self._states_spent:
                problem = "requestState was already used"
            self._states_spent.add(payload["n"])
        if problem:
            raise RPCError(INVALID_PARAMS, problem)


def first_line(doc: str | None) -> str:
    """The first line of a docstring: a tool's or a prompt's description."""
    return (doc or "").strip().split("\n")[0]


def template_pattern(uri_template: str) -> re.Pattern:
    """A regular expression for a level-1 URI template (RFC 6570): each {name} matches one path segment."""
    parts = re.split(r"\{(\w+)\}", uri_template)
    literal = [re.escape(text) for text in parts[0::2]]
    names = [f"(?P<{name}>[^/]+)" for name in parts[1::2]]
    return re.compile("".join(a + b for a, b in zip(literal, names + [""])))


def prompt_messages(rendered) -> list:
    """A prompt's messages: a string is one user message; a list may hold messages or strings."""
    items = rendered if isinstance(rendered, list) else [rendered]
    messages = []
    for item in items:
        if isinstance(item, str):
            item = {"role": "user", "content": text_content(item)}
        if not (isinstance(item, dict) and item.get("role") in ("user", "assistant")
                and isinstance(item.get("content"), dict)):
            raise TypeError("a prompt message is a string or {role: user|assistant, content: one block}")
        messages.append(item)
    json.dumps(messages, allow_nan=False)  # fail inside handle, not on the wire
    return messages


def arguments_digest(arguments: dict) -> str:
    """A short fingerprint of a call's arguments, for binding a requestState to them."""
    return hashlib.sha256(json.dumps(arguments, sort_keys=True).encode()).hexdigest()[:32]


# ---------------------------------------------------------------------------------------------------
# ---- 3. Versions and eras ----
# Handshake era: initialize, notifications/initialized, a session (course 000). Stateless era
# (2026-07-28, course 004): no handshake, every request carries its version in params._meta.
# ---------------------------------------------------------------------------------------------------

HANDSHAKE_VERSIONS = ["2025-11-25", "2025-06-18"]  # newest first
STATELESS_VERSIONS = ["2026-07-28"]
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
PUBLISHED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

# Each capability's value is an object, never `true` (WIRE.md 8.5). The course's lab declares
# {"tools": {"listChanged": true}, "resources": {}, "prompts": {}}; this one also notifies
# resource and prompt list changes, and serves logging, subscriptions and completions.
HANDSHAKE_CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                          "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
# 2026-07-28 removed setLevel, subscribe and the session's list_changed stream this lab would need.
STATELESS_CAPABILITIES = {"tools": {}, "resources": {}, "prompts": {}}
HANDSHAKE_ONLY = {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe",
                  "completion/complete"}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read",
             "prompts/list"}


def negotiate_version(requested: str) -> str:
    """Echo a version this server speaks; else the newest one not newer than asked; else the newest."""
    if requested in HANDSHAKE_VERSIONS:
        return requested
    older = [v for v in HANDSHAKE_VERSIONS if v < requested]  # dates as strings sort in time order
    return older[0] if older else HANDSHAKE_VERSIONS[0]


def is_stateless(message: dict) -> bool:
    """Whether a request is served in the stateless era: its _meta names a protocol version."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return message.get("method") == "server/discover" or (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta)


# ---------------------------------------------------------------------------------------------------
# ---- 4. The client ----
# ---------------------------------------------------------------------------------------------------

MAX_INPUT_ROUNDS = 10  # input_required retries before the client gives up (the SDK's bound too)


class MCPClient:
    """A client over any transport: ids count up from 1, and tools_cache is kept fresh.

        client = MCPClient(StdioTransport([sys.executable, "server_demo.py"]))
        client.connect()                  # server/discover, or the handshake as a fallback
        client.call_tool("add", {"x": 2, "y": 3})
    on_log(params) and on_progress(params) receive notifications/message and notifications/progress;
    on_input(input_request) answers an input_required request (it returns the result to send back).
    """

    def __init__(self, transport, name: str = "mcp_min", version: str = "0.1.0",
                 on_log=None, on_progress=None, on_input=None):
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.on_log = on_log
        self.on_progress = on_progress
        self.on_input = on_input
        self.capabilities = {"elicitation": {}} if on_input else {}
        self.next_id = 1
        self.era = None  # "handshake" or "stateless", decided by connect()
        self.protocol_version = None
        self.server_info = None
        self.server_capabilities = None
        self.tools_cache = None
        self.resources_cache = None
        self.prompts_cache = None
        self.tools_expire_at = 0.0  # stateless era: ttlMs says how long tools_cache stays fresh

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send a request and return its result; an error response raises RPCError."""
        if self.era == "stateless":
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), PROTOCOL_VERSION_KEY: self.protocol_version,
                               CLIENT_CAPABILITIES_KEY: self.capabilities, CLIENT_INFO_KEY: self.client_info}
        message = request(self.next_id, method, params)
        self.next_id += 1
        reply = self.transport.send(message)
        if reply is None:
            raise ConnectionError(f"no response to {method}")
        if "error" in reply:
            error = reply["error"]
            raise RPCError(error.get("code"), error.get("message"), error.get("data"))
        return reply["result"]

    def notify(self, method: str, params: dict | None = None):
        """Send a notification; nothing comes back."""
        self.transport.send(notification(method, params))

    def initialize(self, protocol_version: str = HANDSHAKE_VERSIONS[0]) -> dict:
        """The handshake: initialize, check the answer, then notifications/initialized (course 000)."""
        result = self.request("initialize", {"protocolVersion": protocol_version, "capabilities": self.capabilities,
                                             "clientInfo": self.client_info})
        if result.get("protocolVersion") not in HANDSHAKE_VERSIONS:
            raise ConnectionError(f"the server answered version {result.get('protocolVersion')!r}, "
                                  f"which this client does not speak")
        self.era = "handshake"
        self.protocol_version = result["protocolVersion"]
        self.server_info = result.get("serverInfo")
        self.server_capabilities = result.get("capabilities")
        self.notify("notifications/initialized")
        return result

    def discover(self) -> dict:
        """server/discover: what a 2026-07-28 server speaks, asked without a handshake."""
        self.era, self.protocol_version = "stateless", STATELESS_VERSIONS[0]
        try:
            result = self.request("server/discover")
        finally:
            self.era, self.protocol_version = None, None
        return result

    def connect(self, mode: str = "auto") -> dict:
        """Choose the era: probe with server/discover ("auto"), or go straight to it ("legacy", "2026-07-28")."""
        if mode == "legacy":
            return self.initialize()
        if mode == "auto":
            try:
                result = self.discover()
            except (RPCError, TimeoutError):
                return self.initialize()  # any error: an older server, so the handshake at once
            if STATELESS_VERSIONS[0] not in result.get("supportedVersions", []):
                return self.initialize()
            self.server_info = result.get("_meta", {}).get(SERVER_INFO_KEY)
            self.server_capabilities = result.get("capabilities")
        self.era, self.protocol_version = "stateless", STATELESS_VERSIONS[0]
        return {"protocolVersion": self.protocol_version, "serverInfo": self.server_info}

    def ping(self) -> dict:
        """ping: {} when the server is alive."""
        return self.request("ping")

    def list_tools(self) -> list:
        """tools/list, kept in tools_cache; a fresh stateless cache (ttlMs) is not fetched again."""
        if self.tools_cache is not None and time.monotonic() < self.tools_expire_at:
            return self.tools_cache
        result = self.request("tools/list")
        self.tools_cache = result["tools"]
        self.tools_expire_at = time.monotonic() + result.get("ttlMs", 0) / 1000
        return self.tools_cache

    def call_tool(self, name: str, arguments: dict | None = None, progress: bool = False) -> dict:
        """tools/call; input_required is answered through on_input and retried, a bounded number of times."""
        params = {"name": name, "arguments": arguments or {}}
        if progress:
            params["_meta"] = {"progressToken": self.next_id}  # the SDK's habit: the request id
        for _ in range(MAX_INPUT_ROUNDS):
            result = self.request("tools/call", params)
            self._pump_notifications()
            if result.get("resultType") != "input_required":
                return result
            if self.on_input is None:
                raise RuntimeError(f"{name} needs input, and this client has no on_input callback")
            answers = {key: self.on_input(asked) for key, asked in result.get("inputRequests", {}).items()}
            params = {**params, "inputResponses": answers, "requestState": result.get("requestState")}
        raise RuntimeError(f"{name} still needs input after {MAX_INPUT_ROUNDS} rounds")

    def list_resources(self) -> list:
        """resources/list, kept in resources_cache."""
        self.resources_cache = self.request("resources/list")["resources"]
        return self.resources_cache

    def list_resource_templates(self) -> list:
        """resources/templates/list."""
        return self.request("resources/templates/list")["resourceTemplates"]

    def read_resource(self, uri: str) -> dict:
        """resources/read {uri}."""
        return self.request("resources/read", {"uri": uri})

    def list_prompts(self) -> list:
        """prompts/list, kept in prompts_cache."""
        self.prompts_cache = self.request("prompts/list")["prompts"]
        return self.prompts_cache

    def get_prompt(self, name: str, arguments: dict | None = None) -> dict:
        """prompts/get {name, arguments}."""
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    def _pump_notifications(self) -> list:
        """Drain what the server pushed: re-list on list_changed, hand logs and progress to the callbacks."""
        notes = self.transport.drain()
        for note in notes:
            method = note.get("method")
            if method == "notifications/tools/list_changed":
                self.tools_expire_at = 0.0  # an invalidation, not a diff: fetch the list again
                self.list_tools()
            elif method == "notifications/resources/list_changed":
                self.list_resources()
            elif method == "notifications/prompts/list_changed":
                self.list_prompts()
            elif method == "notifications/message" and self.on_log:
                self.on_log(note.get("params", {}))
            elif method == "notifications/progress" and self.on_progress:
                self.on_progress(note.get("params", {}))
        return notes

    def close(self):
        """Close the transport."""
        self.transport.close()


# ---------------------------------------------------------------------------------------------------
# ---- 5. Transports ----
# Each one has send(message) -> response or None, drain() -> the notifications that arrived, close(),
# and an optional trace(direction, message) hook: "→" for what the client sent, "←" for what came back.
# ---------------------------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one stdio line or one HTTP body
MAX_DEPTH = 100  # arrays and objects nested deeper than this are refused (json.loads would recurse)


def parse(data: bytes | str):
    """Parse one message from the wire; anything that is not JSON raises PARSE_ERROR (course 000)."""
    problem = None
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        # Counting brackets is cheap and bounds the recursion before json.loads can blow it.
        if text.count("[") + text.count("{") > MAX_DEPTH and nesting(text) > MAX_DEPTH:
            problem = f"nested deeper than {MAX_DEPTH} levels"
        else:
            return json.loads(text, parse_constant=reject_constant)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        problem = str(exc)[:100]
    raise RPCError(PARSE_ERROR, f"parse error: {problem}")


def reject_constant(name: str):
    """NaN and Infinity are not JSON, though Python's json reads them."""
    raise ValueError(f"{name} is not JSON")


def nesting(text: str) -> int:
    """How deep brackets nest in text, ignoring those inside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if escaped:
            escaped = False
        elif in_string and char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
        elif not in_string and char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not in_string and char in "]}":
            depth -= 1
    return deepest


def encode(message: dict) -> str:
    """One message as compact JSON on one line; a result JSON cannot carry becomes INTERNAL_ERROR."""
    try:
        return json.dumps(message, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return json.dumps(error_response(message.get("id"), INTERNAL_ERROR, f"internal error: {exc}"[:200]))


def take_outbox(server: MCPServer) -> list:
    """Empty the server's outbox and return what was in it, oldest first."""
    notes = list(server._outbox)
    server._outbox.clear()
    return notes


def print_trace(direction: str, message: dict):
    """A trace hook that prints each message as one compact JSON line after its arrow."""
    print(direction, json.dumps(message, ensure_ascii=False), flush=True)


class InMemoryTransport:
    """The course's proof of layering: client and server share nothing but JSON text."""

    def __init__(self, server: MCPServer, trace=None):
        self.server = server
        self.trace = trace
        self.notifications = []

    def send(self, message: dict) -> dict | None:
        """json.dumps, json.loads, server.handle; the outbox and the response come back the same way."""
        wire = json.dumps(message)
        if self.trace:
            self.trace("→", message)
        reply = self.server.handle(json.loads(wire))
        self._collect()  # the outbox first: notifications arrive before the response
        if reply is None:
            return None
        reply = json.loads(encode(reply))
        if self.trace:
            self.trace("←", reply)
        return reply

    def _collect(self):
        """Carry what the server queued across the JSON boundary."""
        for note in take_outbox(self.server):
            note = json.loads(encode(note))
            if self.trace:
                self.trace("←", note)
            self.notifications.append(note)

    def drain(self) -> list:
        """The notifications received so far, handed over once."""
        self._collect()
        notes, self.notifications = self.notifications, []
        return notes

    def close(self):
        """Nothing to release in memory."""


# -- stdio: one message per line, stdout for the wire only --

def serve_stdio(server: MCPServer, stdin=None, stdout=None):
    """Serve one client over stdio: a message per line in, answers per line out, until end of input."""
    if stdout is None:
        stdout = claim_stdout()
    stdin = stdin or sys.stdin.buffer
    while True:
        line = stdin.readline(MAX_MESSAGE_BYTES + 1)
        if not line:
            return  # end of input: the client is done, the process exits 0
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            skip_line(stdin)
            answer = error_response(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes")
        elif not line.strip():
            continue
        else:
            try:
                answer = server.handle(parse(line))
            except RPCError as exc:  # only parse() raises here
                answer = error_response(None, exc.code, exc.message)
        for note in take_outbox(server):  # queued while handling: written before the answer
            stdout.write(encode(note).encode() + b"\n")
        if answer is not None:
            stdout.write(encode(answer).encode() + b"\n")
        stdout.flush()


def claim_stdout():
    """Keep the real stdout for the wire, and point fd 1 and sys.stdout at stderr for everything else."""
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a tool's print(), or a child process it starts, now lands on stderr
    sys.stdout = sys.stderr
    return wire


def skip_line(stream):
    """Read and drop the rest of an oversized line."""
    chunk = b""
    while chunk is not None and not chunk.endswith(b"\n"):
        chunk = stream.readline(MAX_MESSAGE_BYTES) or None


class StdioTransport:
    """A server as a child process: requests on its stdin, answers read from its stdout.

        transport = StdioTransport([sys.executable, "server_demo.py"], trace=print_trace)
    The answer is read on the caller's thread, with select() bounding each wait by `timeout`.
    """

    def __init__(self, command: list, trace=None, timeout: float = 30.0, env: dict | None = None, stderr=None):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=stderr, env=env)
        self.trace = trace
        self.timeout = timeout
        self.notifications = []
        self._buffer = b""

    def send(self, message: dict) -> dict | None:
        """Write one line; for a request, read lines until its response arrives."""
        if self.trace:
            self.trace("→", message)
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        if is_notification(message):
            return None
        deadline = time.monotonic() + self.timeout
        while True:
            incoming = self._read_message(deadline, message)
            if "method" not in incoming:
                if incoming.get("id") == message["id"]:
                    return incoming
                continue  # a response to nobody we wait for: dropped
            if "id" in incoming:  # the server asks us something: answer it so it is not left waiting
                self._answer_server(incoming)
                continue
            self.notifications.append(incoming)

    def _read_message(self, deadline: float, waiting_for: dict) -> dict:
        """The next JSON message from the server's stdout; lines that are not JSON are skipped."""
        while True:
            line, newline, rest = self._buffer.partition(b"\n")
            if newline:
                self._buffer = rest
                try:
                    message = json.loads(line)
                except ValueError:
                    continue  # junk on the server's stdout (a stray print): not a message
                if isinstance(message, dict):
                    if self.trace:
                        self.trace("←", message)
                    return message
                continue
            remaining = deadline - time.monotonic()
            fd = self.process.stdout.fileno()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError(f"no response to {waiting_for['method']} (id {waiting_for['id']}) "
                                   f"within {self.timeout} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise ConnectionError(f"the server closed its stdout (exit code {self.process.poll()})")
            self._buffer += chunk

    def _answer_server(self, incoming: dict):
        """Answer a server's request: ping gets {}; this client offers nothing else."""
        if incoming.get("method") == "ping":
            answer = response(incoming["id"], {})
        else:
            answer = error_response(incoming["id"], METHOD_NOT_FOUND, f"method not found: {incoming.get('method')}")
        if self.trace:
            self.trace("→", answer)
        self.process.stdin.write(json.dumps(answer).encode() + b"\n")
        self.process.stdin.flush()

    def drain(self) -> list:
        """Notifications received so far, and any the server wrote since, without waiting."""
        fd = self.process.stdout.fileno()
        while self.process.poll() is None and select.select([fd], [], [], 0)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self._buffer += chunk
        while b"\n" in self._buffer:
            line, _, self._buffer = self._buffer.partition(b"\n")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and "method" in message and "id" not in message:
                if self.trace:
                    self.trace("←", message)
                self.notifications.append(message)
        notes, self.notifications = self.notifications, []
        return notes

    def close(self) -> int:
        """Close stdin, wait for the server to exit, and terminate it if it does not (WIRE.md 2)."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process.stdout.close()
        return self.process.returncode


# -- Streamable HTTP: one endpoint, each message one POST --

MCP_PATH = "/mcp"
LOCAL_NAMES = {"127.0.0.1", "localhost", "::1"}  # Host and Origin a local server accepts (DNS rebinding)
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # their Mcp-Name


def http_server(factory, host: str = "127.0.0.1", port: int = 0, allowed_hosts=LOCAL_NAMES):
    """A Streamable HTTP server at /mcp; factory() makes an MCPServer for each session. Call serve_forever()."""
    import http.server  # imported only when HTTP is served: stdio starts faster without it

    sessions = {}  # Mcp-Session-Id -> (MCPServer, lock): one per client in the handshake era
    sessions_lock = threading.Lock()
    shared = (factory(), threading.Lock())  # serves stateless requests; they share no session

    def serve(entry, message):
        """handle() under the session's lock, with the notifications it queued."""
        server, lock = entry
        with lock:
            return server.handle(message), take_outbox(server)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: many POSTs on one connection

        def log_message(self, format, *args):
            pass  # stderr stays quiet; trace the messages instead

        def do_GET(self):
            self.refuse(405, "this server opens no standalone stream; POST to " + MCP_PATH)

        def do_DELETE(self):
            if self.check_request():
                sid = self.headers.get("Mcp-Session-Id")
                with sessions_lock:
                    ended = sessions.pop(sid, None) if sid else None
                if sid is None:
                    self.refuse(400, "missing Mcp-Session-Id")
                elif ended is None:
                    self.refuse(404, "unknown or ended session")
                else:
                    self.reply(200, None, [])

        def do_POST(self):
            if not self.check_request():
                return
            length = self.headers.get("Content-Length", "")
            if not length.isdigit():
                return self.refuse(411, "a POST needs Content-Length")
            if int(length) > MAX_MESSAGE_BYTES:
                return self.refuse(413, f"message larger than {MAX_MESSAGE_BYTES} bytes")
            body = self.rfile.read(int(length))  # from here on, the connection is clean to reuse
            try:
                message = parse(body)
            except RPCError as exc:
                return self.reply(400, error_response(None, exc.code, exc.message), [])
            if not isinstance(message, dict):
                return self.reply(400, serve(shared, message)[0], [])
            if is_stateless(message):
                return self.post_stateless(message)
            self.post_handshake(message)

        def post_stateless(self, message):
            """2026-07-28: no session; headers must agree with the body; errors map to HTTP statuses."""
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            method = message.get("method")
            problem = None
            if PROTOCOL_VERSION_KEY in meta and self.headers.get("MCP-Protocol-Version") != meta[PROTOCOL_VERSION_KEY]:
                problem = "the MCP-Protocol-Version header differs from _meta's protocol version"
            elif PROTOCOL_VERSION_KEY in meta and self.headers.get("Mcp-Method") != method:
                problem = "the Mcp-Method header differs from the body's method"
            elif method in NAMED_METHODS and self.headers.get("Mcp-Name") != params.get(NAMED_METHODS[method]):
                problem = "the Mcp-Name header differs from the body"
            if problem:
                return self.reply(400, error_response(message.get("id"), HEADER_MISMATCH, problem), [])
            answer, notes = serve(shared, message)
            if answer is None:
                return self.reply(202, None, [])
            code = answer.get("error", {}).get("code")
            status = 200  # a tool's error, or the lab's unknown tool, is still a 200 with an error body
            if code == UNSUPPORTED_PROTOCOL_VERSION or (code == INVALID_PARAMS and CLIENT_CAPABILITIES_KEY not in meta):
                status = 400
            elif code == METHOD_NOT_FOUND and (method not in shared[0]._handlers or method in HANDSHAKE_ONLY):
                status = 404  # the method itself is unknown here (WIRE.md 7)
            self.reply(status, answer, notes)

        def post_handshake(self, message):
            """2025 eras: initialize opens a session; every later message names it in Mcp-Session-Id."""
            version = self.headers.get("MCP-Protocol-Version")
            if version is not None and version not in PUBLISHED_VERSIONS:
                return self.reply(400, error_response(None, INVALID_REQUEST, f"unknown MCP-Protocol-Version {version}"), [])
            headers = {}
            if message.get("method") == "initialize" and not is_notification(message):
                entry = (factory(), threading.Lock())
                answer, notes = serve(entry, message)
                if "result" in answer:
                    sid = secrets.token_urlsafe(24)  # random and unguessable: it names the session
                    with sessions_lock:
                        sessions[sid] = entry
                    headers["Mcp-Session-Id"] = sid
            else:
                sid = self.headers.get("Mcp-Session-Id")
                with sessions_lock:
                    entry = sessions.get(sid)
                if sid is None:
                    return self.reply(400, error_response(None, INVALID_REQUEST, "missing Mcp-Session-Id"), [])
                if entry is None:
                    return self.reply(404, error_response(None, INVALID_REQUEST, "unknown or ended session"), [])
                answer, notes = serve(entry, message)
            if answer is None:
                return self.reply(202, None, [])  # a notification, or a response to the server
            self.reply(200, answer, notes, headers)

        def check_request(self) -> bool:
            """The path is /mcp, and Host and Origin are local names; else refuse before reading the body."""
            host = urllib.parse.urlsplit("//" + self.headers.get("Host", "")).hostname
            origin = self.headers.get("Origin")
            if urllib.parse.urlsplit(self.path).path != MCP_PATH:
                self.refuse(404, "not found: the endpoint is " + MCP_PATH)
            elif host not in allowed_hosts or (origin and urllib.parse.urlsplit(origin).hostname not in allowed_hosts):
                self.refuse(403, "Host or Origin is not a local name")  # a DNS-rebinding page, say
            else:
                return True
            return False

        def refuse(self, status: int, reason: str):
            """Answer before reading the body, and close: a kept-alive connection must not read it as a request."""
            self.close_connection = True
            self.reply(status, error_response(None, INVALID_REQUEST, reason), [], {"Connection": "close"})

        def reply(self, status: int, answer, notes: list, headers: dict | None = None):
            """Send the answer as JSON, or as an event stream when notifications go first and SSE is accepted."""
            if answer is None:
                body, kind = b"", None
            elif notes and "text/event-stream" in self.headers.get("Accept", ""):
                events = [f"event: message\ndata: {encode(m)}\n\n" for m in notes + [answer]]
                body, kind = "".join(events).encode(), "text/event-stream"
            else:
                body, kind = encode(answer).encode(), "application/json"
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if kind:
                self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def serve_http(factory, host: str = "127.0.0.1", port: int = 8000):
    """Serve Streamable HTTP at http://host:port/mcp until interrupted."""
    httpd = http_server(factory, host, port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a host's SIGTERM is a clean stop, exit 0
    print(f"mcp_min: serving http://{host}:{httpd.server_address[1]}{MCP_PATH}", file=sys.stderr, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


def sse_messages(body: str) -> list:
    """The JSON messages of an event stream: each event's data lines, joined."""
    messages = []
    for event in body.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:"))
        if data:
            messages.append(json.loads(data))
    return messages


class HttpTransport:
    """A client's side of Streamable HTTP: one POST a message, on one kept-alive connection.

        transport = HttpTransport("http://127.0.0.1:8000/mcp", trace=print_trace)
    It keeps Mcp-Session-Id and MCP-Protocol-Version, and reads JSON or event-stream answers.
    """

    def __init__(self, url: str, trace=None, timeout: float = 30.0, headers: dict | None = None):
        import http.client
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
        self.path = parts.path or "/"
        self.trace = trace
        self.headers = headers or {}
        self.session_id = None
        self.protocol_version = None
        self.notifications = []

    def send(self, message: dict) -> dict | None:
        """POST one message; 202 means no answer; a JSON or event-stream body holds the response."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                   **self.headers}
        meta = (message.get("params") or {}).get("_meta") or {}
        if PROTOCOL_VERSION_KEY in meta:  # stateless: the headers repeat what the body says (WIRE.md 7)
            headers["MCP-Protocol-Version"] = meta[PROTOCOL_VERSION_KEY]
            headers["Mcp-Method"] = message["method"]
            if message["method"] in NAMED_METHODS:
                headers["Mcp-Name"] = str(message["params"].get(NAMED_METHODS[message["method"]]))
        else:
            if self.session_id:
                headers["Mcp-Session-Id"] = self.session_id
            if self.protocol_version:
                headers["MCP-Protocol-Version"] = self.protocol_version
        if self.trace:
            self.trace("→", message)
        status, reply_headers, body = self._post("POST", json.dumps(message).encode(), headers)
        self.session_id = reply_headers.get("Mcp-Session-Id") or self.session_id
        if status == 202 or not body:
            return None
        kind = reply_headers.get("Content-Type", "")
        messages = sse_messages(body.decode()) if kind.startswith("text/event-stream") else [json.loads(body)]
        answer = None
        for incoming in messages:
            if self.trace:
                self.trace("←", incoming)
            if "method" in incoming:
                self.notifications.append(incoming)
            elif incoming.get("id") == message.get("id"):
                answer = incoming
        if answer is None:
            raise ConnectionError(f"HTTP {status}: {body[:200].decode(errors='replace')}")
        if message.get("method") == "initialize" and "result" in answer:
            self.protocol_version = answer["result"].get("protocolVersion")
        return answer

    def _post(self, verb: str, body: bytes | None, headers: dict):
        """One HTTP exchange: (status, headers, body)."""
        self.connection.request(verb, self.path, body, headers)
        reply = self.connection.getresponse()
        return reply.status, reply.headers, reply.read()

    def drain(self) -> list:
        """The notifications that came on the event streams so far (this lab opens no GET stream)."""
        notes, self.notifications = self.notifications, []
        return notes

    def close(self):
        """End the session with DELETE, then close the connection."""
        if self.session_id:
            try:
                self._post("DELETE", None, {"Mcp-Session-Id": self.session_id})
            except OSError:
                pass  # the server is gone already: nothing left to end
            self.session_id = None
        self.connection.close()


# ---------------------------------------------------------------------------------------------------
# ---- 6. The wire tap ----
# python mcp_min.py tap [--log FILE] -- <server command>: put it in front of any server command in
# a host's configuration, and watch every message the host and the server exchange.
# ---------------------------------------------------------------------------------------------------

def tap(command: list, log=None) -> int:
    """Run command as a server, pass bytes through untouched in both directions, log each line."""
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    log = log or sys.stderr
    log_lock = threading.Lock()

    def pump(source_fd: int, target_fd: int, arrow: str):
        """Copy bytes as they arrive, then log the whole lines among them."""
        pending = b""
        while True:
            chunk = os.read(source_fd, 65536)
            if not chunk:
                break
            write_all(target_fd, chunk)  # first the bytes, unchanged and at once; logging comes after
            pending += chunk
            lines = pending.split(b"\n")
            pending = lines.pop()
            for line in lines:
                log_line(arrow, line)
        if pending:
            log_line(arrow, pending)

    def log_line(arrow: str, line: bytes):
        """Write one logged line: the message as compact JSON, or the raw bytes if it is not JSON."""
        try:
            shown = json.dumps(json.loads(line), ensure_ascii=False)
        except ValueError:
            shown = f"(not JSON) {line!r}"
        with log_lock:
            log.write(f"{arrow} {shown}\n")
            log.flush()

    def upstream():
        """Host to server; when the host closes, so does the server's stdin."""
        try:
            pump(0, child.stdin.fileno(), "→")
        except OSError:
            pass  # the server exited first: its stdin is gone
        finally:
            child.stdin.close()

    threading.Thread(target=upstream, daemon=True).start()
    pump(child.stdout.fileno(), 1, "←")
    return child.wait()


def write_all(fd: int, data: bytes):
    """os.write until every byte is out."""
    while data:
        data = data[os.write(fd, data):]


def main(argv: list | None = None) -> int:
    """The command line: `tap [--log FILE] -- <server command>`."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["tap"] or "--" not in args or not args[args.index("--") + 1:]:
        print("usage: python mcp_min.py tap [--log FILE] -- <server command> [args...]", file=sys.stderr)
        return 2
    options, command = args[1:args.index("--")], args[args.index("--") + 1:]
    if options[:1] == ["--log"] and len(options) == 2:
        with open(options[1], "a", encoding="utf-8") as log:
            return tap(command, log)
    return tap(command)


if __name__ == "__main__":
    sys.exit(main())
