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
  response      a message that echoes a request's id and holds a result or an error (a variable
                holding one is named `reply`, as `response()` is the function that builds one)
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

import base64, inspect, itertools, json, os, re, sys, threading, time, types, typing
# subprocess, select, signal, hmac and the HTTP modules are imported where they are used: a stdio
# server that needs none of them starts sooner.

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
        self.code, self.message, self.data = code, message, data


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
PYTHON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
                "object": dict, "null": type(None)}


def text_content(text: str) -> dict:
    """A text block, the content most tools return."""
    return {"type": "text", "text": text}


def tool_result(value) -> dict:
    """Turn what a tool returned into a tools/call result.

    A content block (a dict whose "type" is in CONTENT_TYPES, e.g. {"type": "image", "data": <base64>,
    "mimeType": "image/png"}) or a list of them is sent as it is: that is how a tool returns pictures,
    sound or files. A string becomes one text block; anything else becomes JSON text, and a dict is
    also sent as structuredContent.
    """
    blocks = [value] if isinstance(value, dict) and value.get("type") in CONTENT_TYPES else value
    if isinstance(blocks, list) and blocks and all(isinstance(b, dict) and b.get("type") in CONTENT_TYPES
                                                   for b in blocks):
        ENCODER.encode(blocks)  # fail here, inside the tool's try, not on the wire
        return {"content": blocks}
    if isinstance(value, str):
        return {"content": [text_content(value)]}
    result = {"content": [text_content(ENCODER.encode(value))]}
    if isinstance(value, dict):
        result["structuredContent"] = value  # the handshake era wants an object here (WIRE.md 4)
    return result


def resource_contents(uri: str, content: str | bytes, mime_type: str) -> dict:
    """One entry of a resources/read result: text as it is, bytes as a base64 blob, anything else as JSON."""
    if isinstance(content, bytes):
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(content).decode("ascii")}
    return {"uri": uri, "mimeType": mime_type, "text": content if isinstance(content, str) else json.dumps(content)}


def json_schema(hint) -> dict:
    """The JSON Schema of one type hint: str, int, float, bool, list, dict, list[X], Literal, Optional."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"type": JSON_TYPES[type(args[0])], "enum": list(args)}
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        inner = json_schema(next(a for a in args if a is not type(None)))
        return {**inner, "type": [inner["type"], "null"]}  # Optional[X]: X or null
    if origin is list and args:
        return {"type": "array", "items": json_schema(args[0])}
    return {"type": JSON_TYPES.get(origin or hint, "string")}


def signature_schema(fn) -> tuple[dict, str | None, dict]:
    """From fn's signature: its inputSchema, its Context parameter's name, and its Literal choices."""
    hints = typing.get_type_hints(fn)
    properties, required, context, choices = {}, [], None, {}
    for name, parameter in inspect.signature(fn).parameters.items():
        if hints.get(name) is Context:
            context = name  # the server fills it in; the client never sees it
            continue
        properties[name] = json_schema(hints.get(name, str))
        if "enum" in properties[name]:
            choices[name] = [str(choice) for choice in properties[name]["enum"]]
        if parameter.default is inspect.Parameter.empty:
            required.append(name)
        elif isinstance(parameter.default, (str, int, float, bool)):
            properties[name]["default"] = parameter.default
    return {"type": "object", "properties": properties, "required": required}, context, choices


def check_arguments(schema: dict, arguments: dict):
    """Raise INVALID_PARAMS, naming the argument, if one is missing or of the wrong JSON type or value."""
    for name in schema.get("required", []):
        if name not in arguments:
            raise RPCError(INVALID_PARAMS, f"missing required argument: {name}")
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        rule = properties.get(name, {})
        if "type" in rule and not is_json_type(value, rule["type"]):
            kinds = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
            raise RPCError(INVALID_PARAMS, f"argument '{name}' must be {' or '.join(kinds)}")
        if "enum" in rule and value not in rule["enum"]:
            raise RPCError(INVALID_PARAMS, f"argument '{name}' must be one of {rule['enum']}")


def is_json_type(value, kind: str | list) -> bool:
    """Whether value has the JSON Schema type kind (or one of a list of them); true and false are not integers."""
    if isinstance(kind, list):
        return any(is_json_type(value, one) for one in kind)
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, PYTHON_TYPES.get(kind, object))


def param(params: dict, key: str, kind: type, default=None):
    """params[key] (or default, if given, when the key is absent) if it is of kind; else INVALID_PARAMS naming the key."""
    value = params.get(key, default)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RPCError(INVALID_PARAMS, f"params.{key} must be {JSON_TYPES[kind]}")
    return value


class InputRequired(Exception):
    """Raised inside a tool by Context.elicit; _call_tool responds input_required instead."""

    def __init__(self, key: str, input_request: dict):
        super().__init__(key)
        self.key, self.input_request = key, input_request


class Context:
    """What a running tool may tell its client: log lines and progress, queued in the outbox.

    A tool asks for it with a parameter annotated `Context`, which its inputSchema leaves out:
        @server.tool()
        def count_slowly(n: int, ctx: Context) -> str:
            for i in range(n):
                ctx.progress(i + 1, total=n)
            return "done"
    """

    def __init__(self, server, params: dict, inputs: dict):
        meta = params.get("_meta") or {}
        self.queue = server.queue
        self.progress_token = meta.get("progressToken")  # no token: the client wants no progress
        self.stateless = PROTOCOL_VERSION_KEY in meta
        # 2026-07-28 has no logging/setLevel: a request asks for log lines in its own _meta, or gets none.
        self.log_level = meta.get(LOG_LEVEL_KEY) if self.stateless else server.log_level
        self.client_capabilities = meta.get(CLIENT_CAPABILITIES_KEY, {})
        self.inputs = inputs
        self.last_progress = None

    def log(self, level: str, data, logger: str | None = None):
        """Send notifications/message, unless level is below the one the client set."""
        if self.log_level in LOG_LEVELS and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
            params = {"level": level, "data": data} | ({"logger": logger} if logger else {})
            self.queue(notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None):
        """Send notifications/progress for the request's progressToken; progress must grow."""
        if self.progress_token is None:
            return
        if self.last_progress is not None and progress <= self.last_progress:
            raise ValueError(f"progress must increase: {progress} after {self.last_progress}")
        self.last_progress = progress
        params = {"progressToken": self.progress_token, "progress": progress, "total": total, "message": message}
        self.queue(notification("notifications/progress", {k: v for k, v in params.items() if v is not None}))

    def elicit(self, key: str, message: str, schema: dict) -> dict:
        """Ask the user through the client (elicitation/create); the user's input comes with the client's retry."""
        if key in self.inputs:
            return self.inputs[key]
        if not self.stateless or "elicitation" not in self.client_capabilities:
            # This lab sends no server-to-client requests: only 2026-07-28's input_required can ask.
            raise RuntimeError(f"this needs the user's input ('{key}'), which only a 2026-07-28 client "
                               "that declares the elicitation capability can give")
        raise InputRequired(key, {"method": "elicitation/create",
                                  "params": {"message": message, "requestedSchema": schema}})


class MCPServer:
    """One MCP server: a catalog of tools, resources and prompts, and one session's state.

    allowed_tools is the session's allow-list (None allows every tool), set by whoever creates the
    session, never by the client: clientInfo is a claim, not an identity.
        server = MCPServer("demo", allowed_tools={"add"})
        server.add_tool("add", lambda x, y: x + y, input_schema={...})
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # {"jsonrpc": "2.0", "id": 1, "result": {}}
    """

    def __init__(self, name: str, version: str = "0.1.0", allowed_tools=None, instructions: str | None = None,
                 ttl_ms: int = 60_000, state_key: bytes | None = None):
        self.server_info = {"name": name, "version": version}
        self.instructions = instructions
        self.allowed_tools = None if allowed_tools is None else set(allowed_tools)
        self.ttl_ms = ttl_ms  # how long a stateless client may cache a list result
        self.tools, self.resources, self.templates, self.prompts = {}, {}, {}, {}  # the catalog
        # The session (handshake era): the gate, the agreed version, what the client asked for.
        self._initialized = False
        self.protocol_version = self.client_info = None
        self.log_level, self.subscriptions = "info", set()
        self._outbox = []
        self.on_queue = None  # set by a transport that can deliver a notification before the response is ready
        # input_required (stateless era): each requestState is signed, and spent only once.
        self._state_key = state_key or os.urandom(32)
        self._states_issued, self._states_spent = 0, set()
        self._handlers = {  # the flat table _dispatch reads (course 000)
            "initialize": self._initialize, "ping": self._ping, "server/discover": self._discover,
            "tools/list": self._list_tools, "tools/call": self._call_tool, "resources/list": self._list_resources,
            "resources/templates/list": self._list_templates, "resources/read": self._read_resource,
            "prompts/list": self._list_prompts, "prompts/get": self._get_prompt, "logging/setLevel": self._set_level,
            "resources/subscribe": self._subscribe, "resources/unsubscribe": self._unsubscribe,
            "completion/complete": self._complete}

    # -- the catalog; registering with notify=True queues list_changed in the outbox --

    def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
                 notify: bool = False):
        """Offer fn as a tool; without input_schema, derive it from fn's signature. Returns fn."""
        schema, context, _ = signature_schema(fn)
        spec = {"name": name, "description": description or first_line(fn.__doc__),
                "inputSchema": input_schema or schema}
        self.tools[name] = {"spec": spec, "fn": fn, "context": context}
        self._list_changed("tools", notify)
        return fn

    def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                     mime_type: str = "text/plain", notify: bool = False):
        """Offer data at uri: read is the content (str or bytes) or a function returning it. Returns read.

        A uri with {variables} is a URI template: read gets each variable as a keyword argument,
        and raises KeyError for a value it does not know (the client gets "unknown resource").
        """
        reader = read if callable(read) else lambda: read
        spec = {"name": name or uri, "mimeType": mime_type, "description": description or first_line(reader.__doc__)}
        if "{" in uri:
            self.templates[uri] = {"spec": {"uriTemplate": uri, **spec}, "read": reader,
                                   "pattern": template_pattern(uri), "choices": signature_schema(reader)[2]}
        else:
            replaced = uri in self.resources
            self.resources[uri] = {"spec": {"uri": uri, **spec}, "read": reader}
            if replaced:
                self.resource_updated(uri)  # changed through the server's API: tell subscribers
        self._list_changed("resources", notify)
        return read

    def add_prompt(self, name: str, render, description: str = "", notify: bool = False):
        """Offer a prompt template: render's parameters are its variables; it returns the text. Returns render."""
        schema, _, choices = signature_schema(render)
        arguments = [{"name": key, "required": key in schema["required"]} for key in schema["properties"]]
        spec = {"name": name, "description": description or first_line(render.__doc__), "arguments": arguments}
        self.prompts[name] = {"spec": spec, "render": render, "choices": choices}
        self._list_changed("prompts", notify)
        return render

    def tool(self, name: str | None = None, description: str = "", notify: bool = False):
        """Decorator in the official SDK's style: @server.tool() offers the function below it."""
        return lambda fn: self.add_tool(name or fn.__name__, fn, description, notify=notify)

    def resource(self, uri: str, name: str | None = None, mime_type: str = "text/plain"):
        """Decorator: @server.resource("policy://{doc_id}") serves what the function returns."""
        return lambda fn: self.add_resource(uri, fn, name or fn.__name__, mime_type=mime_type)

    def prompt(self, name: str | None = None, description: str = ""):
        """Decorator: @server.prompt() offers a prompt template."""
        return lambda fn: self.add_prompt(name or fn.__name__, fn, description)

    def _list_changed(self, kind: str, notify: bool):
        """Queue notifications/<kind>/list_changed: a bare cache invalidation, no payload (course 000)."""
        if notify and self._initialized:
            self.queue(notification(f"notifications/{kind}/list_changed"))

    def resource_updated(self, uri: str):
        """Tell a subscribed client that the resource at uri changed (notifications/resources/updated)."""
        if uri in self.subscriptions and self._initialized:
            self.queue(notification("notifications/resources/updated", {"uri": uri}))

    def queue(self, note: dict):
        """Put a notification in the outbox; a transport that set on_queue delivers it at once."""
        self._outbox.append(note)
        if self.on_queue:
            self.on_queue()  # stdio: a tool's progress reaches the client while the tool still runs

    # -- the one entry point --

    def handle(self, message) -> dict | None:
        """Handle one message: its response, or None for a notification (never a response, not even an error)."""
        if not isinstance(message, dict):
            # A batch (a list) or a scalar: no request object, no id to respond to (batches left in 2025-06-18).
            return error_response(None, INVALID_REQUEST, "a message must be a JSON object")
        if "method" not in message and ("result" in message or "error" in message):
            return None  # a response: this lab sends no requests, so it awaits none
        id = message.get("id") if valid_id(message.get("id")) else None  # an id we cannot echo is null
        try:
            reply = response(id, self._serve(message))
        except RPCError as exc:  # tier 1: a deliberate protocol error keeps its code
            reply = error_response(id, exc.code, exc.message, exc.data)
        except Exception as exc:  # tier 2: a handler bug becomes -32603, never a traceback on the wire
            reply = error_response(id, INTERNAL_ERROR, f"internal error: {exc!r}"[:200])
        return None if is_notification(message) else reply  # tier 3: a notification never gets a response

    def _serve(self, message: dict):
        """Check the message, pick its era, pass the handshake gate, and dispatch."""
        if message.get("jsonrpc") != JSONRPC:
            raise RPCError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not is_notification(message) and not valid_id(message["id"]):
            raise RPCError(INVALID_REQUEST, "id must be a string or an integer")  # "id": null too
        method, params = message.get("method"), message.get("params", {})
        if not isinstance(method, str):
            raise RPCError(INVALID_REQUEST, "method must be a string")
        if not isinstance(params, dict):
            raise RPCError(INVALID_REQUEST, "params must be an object")
        if "_meta" in params:
            param(params, "_meta", dict)  # read by the era check, Context and the stateless era
        if is_notification(message):
            if method == "notifications/initialized" and self.protocol_version:
                self._initialized = True  # the session is live only now (course 000, step 3)
            return None  # notifications/cancelled and the rest: one request at a time, nothing to stop
        if is_stateless(message):
            return self._serve_stateless(method, params)
        # The handshake gate (course 000): nothing but initialize and ping before `initialized`.
        if not self._initialized and method not in ("initialize", "ping"):
            raise RPCError(NOT_INITIALIZED, "server not initialized")
        return self._dispatch(method, params)

    def _dispatch(self, method: str, params: dict, stateless: bool = False):
        """Route a method to its handler: the flat table of course 000."""
        handler = self._handlers.get(method)
        if handler is None or (stateless and method in HANDSHAKE_ONLY):
            raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(params)

    # -- the handlers, each under the request it serves --

    def _initialize(self, params):
        # initialize {protocolVersion, capabilities, clientInfo}
        if self._initialized:
            raise RPCError(INVALID_REQUEST, "session already initialized")
        self.protocol_version = negotiate_version(param(params, "protocolVersion", str))
        self.client_info = params.get("clientInfo")  # a claim, not an identity: it grants nothing
        result = {"protocolVersion": self.protocol_version, "capabilities": HANDSHAKE_CAPABILITIES,
                  "serverInfo": self.server_info}
        return result | ({"instructions": self.instructions} if self.instructions else {})

    def _ping(self, params):
        # ping {}: allowed at any time, even before the handshake
        return {}

    def _list_tools(self, params):
        # tools/list {cursor?}: one page holds them all
        return {"tools": [tool["spec"] for tool in self.tools.values()]}

    def _call_tool(self, params):
        # tools/call {name, arguments}: the error lattice of course 000, checked in this order
        name, arguments = param(params, "name", str), param(params, "arguments", dict, {})
        tool = self.tools.get(name)
        if tool is None:
            raise RPCError(UNKNOWN_TOOL, f"unknown tool: {name}")
        if self.allowed_tools is not None and name not in self.allowed_tools:
            raise RPCError(TOOL_NOT_ALLOWED, f"tool '{name}' not permitted for this session")  # before it runs
        check_arguments(tool["spec"]["inputSchema"], arguments)
        inputs = {}
        if "requestState" in params:  # a retry after input_required: only a state we signed counts
            self._spend_state(params["requestState"], name, arguments)
            inputs = params.get("inputResponses") or {}
        context = {tool["context"]: Context(self, params, inputs)} if tool["context"] else {}
        try:
            return tool_result(tool["fn"](**arguments, **context))
        except InputRequired as ask:
            return {"resultType": "input_required", "inputRequests": {ask.key: ask.input_request},
                    "requestState": self._sign_state(name, arguments)}
        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server
            # The tool failed, the protocol did not: a result the model can read and react to.
            return {"content": [text_content(f"ERROR: {exc or type(exc).__name__}")], "isError": True}

    def _list_resources(self, params):
        # resources/list {cursor?}
        return {"resources": [entry["spec"] for entry in self.resources.values()]}

    def _list_templates(self, params):
        # resources/templates/list {cursor?}
        return {"resourceTemplates": [entry["spec"] for entry in self.templates.values()]}

    def _read_resource(self, params):
        # resources/read {uri}: a static resource, else the first template that matches
        uri = param(params, "uri", str)
        entry, variables = self.resources.get(uri), {}
        for template in () if entry else self.templates.values():
            match = template["pattern"].fullmatch(uri)
            if match:
                import urllib.parse
                entry, variables = template, {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
                break
        try:
            content = entry["read"](**variables) if entry else None
        except KeyError:  # the template's function does not know this name
            entry = None
        if entry is None:
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        return {"contents": [resource_contents(uri, content, entry["spec"]["mimeType"])]}

    def _list_prompts(self, params):
        # prompts/list {cursor?}
        return {"prompts": [prompt["spec"] for prompt in self.prompts.values()]}

    def _get_prompt(self, params):
        # prompts/get {name, arguments}: each required variable filled, or INVALID_PARAMS naming it
        name = param(params, "name", str)
        prompt = self.prompts.get(name)
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"unknown prompt: {name}")
        arguments = param(params, "arguments", dict, {})
        known = [a["name"] for a in prompt["spec"]["arguments"]]
        for argument in prompt["spec"]["arguments"]:
            if argument["required"] and argument["name"] not in arguments:
                raise RPCError(INVALID_PARAMS, f"missing prompt variable: {argument['name']}")
        rendered = prompt["render"](**{key: arguments[key] for key in known if key in arguments})
        return {"description": prompt["spec"]["description"], "messages": prompt_messages(rendered)}

    def _set_level(self, params):
        # logging/setLevel {level}: log lines below it are not sent
        if params.get("level") not in LOG_LEVELS:
            raise RPCError(INVALID_PARAMS, f"unknown log level {params.get('level')!r}; one of {LOG_LEVELS}")
        self.log_level = params["level"]
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
        ref, argument = param(params, "ref", dict), param(params, "argument", dict)
        catalog = self.prompts if ref.get("type") == "ref/prompt" else self.templates
        entry = catalog.get(str(ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")))
        if entry is None or not isinstance(argument.get("name"), str):
            raise RPCError(INVALID_PARAMS, f"nothing to complete for {ref} and {argument}")
        typed = str(argument.get("value", ""))
        values = [c for c in entry["choices"].get(argument["name"], []) if c.startswith(typed)]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    # -- the stateless era's parts (section 3 explains the era) --

    def _serve_stateless(self, method: str, params: dict):
        """Serve one self-contained 2026-07-28 request: no gate, and nothing read from the session."""
        meta = params.get("_meta") or {}
        version = meta.get(PROTOCOL_VERSION_KEY)
        if version is not None or method != "server/discover":  # a bare discover may probe without _meta
            if version not in STATELESS_VERSIONS:
                raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                               {"supported": SUPPORTED_VERSIONS, "requested": version})
            if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
                raise RPCError(INVALID_PARAMS, f"_meta must carry {CLIENT_CAPABILITIES_KEY}")
        result = self._dispatch(method, params, stateless=True)
        result = {**result, "resultType": result.get("resultType", "complete"), "_meta": {SERVER_INFO_KEY: self.server_info}}
        if method in CACHEABLE and result["resultType"] == "complete":
            result |= {"ttlMs": self.ttl_ms, "cacheScope": "private"}  # private: what one may see depends on its allow-list
        return result

    def _discover(self, params):
        # server/discover {_meta}: what this server speaks, asked without a handshake
        result = {"supportedVersions": SUPPORTED_VERSIONS, "capabilities": STATELESS_CAPABILITIES}
        return result | ({"instructions": self.instructions} if self.instructions else {})

    def _sign_state(self, tool: str, arguments: dict) -> str:
        """Mint a requestState bound to this call and signed, so that a client can neither forge nor reuse it."""
        self._states_issued += 1
        payload = json.dumps({"tool": tool, "arguments": arguments, "n": self._states_issued}, sort_keys=True)
        body = base64.urlsafe_b64encode(payload.encode()).decode("ascii")
        return body + "." + self._mac(body)

    def _spend_state(self, state, tool: str, arguments: dict):
        """Accept a requestState once, for the call it was minted for: the spec calls it attacker-controlled."""
        import hmac
        body, _, mac = str(state).partition(".")
        if not hmac.compare_digest(mac, self._mac(body)):
            raise RPCError(INVALID_PARAMS, "requestState is not one this server signed")
        payload = json.loads(base64.urlsafe_b64decode(body))
        if (payload["tool"], payload["arguments"], payload["n"] in self._states_spent) != (tool, arguments, False):
            raise RPCError(INVALID_PARAMS, "requestState belongs to another call, or was used already")
        self._states_spent.add(payload["n"])

    def _mac(self, body: str) -> str:
        """The HMAC-SHA256 of body under this server's key, in hex."""
        import hashlib, hmac
        return hmac.new(self._state_key, body.encode(), hashlib.sha256).hexdigest()


def first_line(doc: str | None) -> str:
    """The first line of a docstring: a tool's or a prompt's description."""
    return (doc or "").strip().split("\n")[0]


def template_pattern(uri_template: str) -> re.Pattern:
    """A regular expression for a level-1 URI template (RFC 6570): each {name} matches one path segment."""
    parts = re.split(r"\{(\w+)\}", uri_template)
    pattern = "".join(re.escape(text) + (f"(?P<{name}>[^/]+)" if name else "")
                      for text, name in zip(parts[0::2], parts[1::2] + [""]))
    return re.compile(pattern)


def prompt_messages(rendered) -> list:
    """A prompt's messages: a string is one user message; a list may mix strings and {role, content} messages.

    A message's role is "user" or "assistant", and its content is one block (WIRE.md 8.9).
    """
    items = rendered if isinstance(rendered, list) else [rendered]
    return [{"role": "user", "content": text_content(item)} if isinstance(item, str) else item for item in items]


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
    """A client over any transport: request ids count up from 1, and tools_cache is kept fresh.

        client = MCPClient(StdioTransport([sys.executable, "server_demo.py"]))
        client.connect()  # server/discover, or the handshake when the server is older
        client.call_tool("add", {"x": 2, "y": 3})
    on_log and on_progress receive the params of notifications/message and notifications/progress;
    on_input(input_request) returns the user's input for an input_required request (an elicitation result).
    """

    def __init__(self, transport, name: str = "mcp_min", version: str = "0.1.0",
                 on_log=None, on_progress=None, on_input=None):
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.on_log, self.on_progress, self.on_input = on_log, on_progress, on_input
        self.capabilities = {"elicitation": {}} if on_input else {}
        self.next_id = 1
        self.era = self.protocol_version = None  # connect() decides: "handshake" or "stateless"
        self.server_info = self.server_capabilities = None
        self.tools_cache = self.resources_cache = self.prompts_cache = None
        self.tools_fresh_until = 0.0  # stateless era: ttlMs says how long tools_cache may be reused

    def request(self, method: str, params: dict | None = None, stateless: bool | None = None) -> dict:
        """Send a request and return its result; an error response raises RPCError."""
        if self.era == "stateless" if stateless is None else stateless:  # each request says it all (course 004)
            meta = {PROTOCOL_VERSION_KEY: STATELESS_VERSIONS[0], CLIENT_CAPABILITIES_KEY: self.capabilities,
                    CLIENT_INFO_KEY: self.client_info}
            params = {**(params or {}), "_meta": {**(params or {}).get("_meta", {}), **meta}}
        message = request(self.next_id, method, params)
        self.next_id += 1
        reply = self.transport.send(message)
        if reply is None:
            raise ConnectionError(f"no response to {method}")
        if "error" in reply:
            raise RPCError(reply["error"].get("code"), reply["error"].get("message"), reply["error"].get("data"))
        return reply["result"]

    def notify(self, method: str, params: dict | None = None):
        """Send a notification; nothing comes back."""
        self.transport.send(notification(method, params))

    def initialize(self, protocol_version: str = HANDSHAKE_VERSIONS[0]) -> dict:
        """The handshake: initialize, check the response, then notifications/initialized (course 000)."""
        result = self.request("initialize", {"protocolVersion": protocol_version, "capabilities": self.capabilities,
                                             "clientInfo": self.client_info})
        if result.get("protocolVersion") not in HANDSHAKE_VERSIONS:
            raise ConnectionError(f"the server chose version {result.get('protocolVersion')!r}, which this client lacks")
        self.era, self.protocol_version = "handshake", result["protocolVersion"]
        self.server_info, self.server_capabilities = result.get("serverInfo"), result.get("capabilities")
        self.notify("notifications/initialized")
        return result

    def discover(self) -> dict:
        """server/discover: what a 2026-07-28 server speaks, asked without a handshake."""
        result = self.request("server/discover", stateless=True)
        self.server_info = result.get("_meta", {}).get(SERVER_INFO_KEY)
        self.server_capabilities = result.get("capabilities")
        return result

    def connect(self, mode: str = "auto") -> dict:
        """Choose the era: "auto" probes with server/discover and falls back to the handshake; "legacy" does not probe."""
        if mode not in ("auto", "legacy"):
            raise ValueError(f"mode is 'auto' or 'legacy', not {mode!r}")
        if mode == "auto":
            try:
                result = self.discover()
            except (RPCError, TimeoutError):
                return self.initialize()  # an older server: -32601 or the like, or silence
            if STATELESS_VERSIONS[0] in result.get("supportedVersions", []):
                self.era, self.protocol_version = "stateless", STATELESS_VERSIONS[0]
                return result
        return self.initialize()

    def ping(self) -> dict:
        """ping: {} when the server is alive."""
        return self.request("ping")

    def list_tools(self, refresh: bool = False) -> list:
        """tools/list into tools_cache; a stateless cache still fresh (ttlMs) is reused unless refresh."""
        if self.tools_cache is not None and time.monotonic() < self.tools_fresh_until and not refresh:
            return self.tools_cache
        result = self.request("tools/list")
        self.tools_cache = result["tools"]
        self.tools_fresh_until = time.monotonic() + result.get("ttlMs", 0) / 1000
        return self.tools_cache

    def call_tool(self, name: str, arguments: dict | None = None, progress: bool = False) -> dict:
        """tools/call; an input_required result goes to on_input and the call is retried, a bounded number of times."""
        params = {"name": name, "arguments": arguments or {}}
        if progress:
            params["_meta"] = {"progressToken": self.next_id}  # the request id, as the SDK does
        for _ in range(MAX_INPUT_ROUNDS):
            result = self.request("tools/call", params)
            self._pump_notifications()
            if result.get("resultType") != "input_required":
                return result
            if self.on_input is None:
                raise RuntimeError(f"{name} needs input, and this client has no on_input callback")
            inputs = {key: self.on_input(asked) for key, asked in result.get("inputRequests", {}).items()}
            params = {**params, "inputResponses": inputs, "requestState": result.get("requestState")}
        raise RuntimeError(f"{name} still needs input after {MAX_INPUT_ROUNDS} rounds")

    def list_resources(self) -> list:
        """resources/list into resources_cache."""
        self.resources_cache = self.request("resources/list")["resources"]
        return self.resources_cache

    def list_resource_templates(self) -> list:
        """resources/templates/list."""
        return self.request("resources/templates/list")["resourceTemplates"]

    def read_resource(self, uri: str) -> dict:
        """resources/read {uri}."""
        return self.request("resources/read", {"uri": uri})

    def list_prompts(self) -> list:
        """prompts/list into prompts_cache."""
        self.prompts_cache = self.request("prompts/list")["prompts"]
        return self.prompts_cache

    def get_prompt(self, name: str, arguments: dict | None = None) -> dict:
        """prompts/get {name, arguments}."""
        return self.request("prompts/get", {"name": name, "arguments": arguments or {}})

    def _pump_notifications(self) -> list:
        """Drain what the server pushed: re-list on list_changed, and hand log lines and progress to the callbacks."""
        notes = self.transport.drain()
        if not notes:
            return notes  # the usual case after a call, kept cheap
        actions = {  # list_changed is an invalidation, not a diff: fetch the list again
            "notifications/tools/list_changed": lambda params: self.list_tools(refresh=True),
            "notifications/resources/list_changed": lambda params: self.list_resources(),
            "notifications/prompts/list_changed": lambda params: self.list_prompts(),
            "notifications/message": self.on_log, "notifications/progress": self.on_progress}
        for note in notes:
            action = actions.get(note.get("method"))
            if action:
                action(note.get("params", {}))
        return notes

    def close(self):
        """Close the transport."""
        self.transport.close()


# ---------------------------------------------------------------------------------------------------
# ---- 5. Transports ----
# Each has send(message) -> the response, or None for a notification; drain() -> the notifications
# that arrived; close(); and a trace(direction, message) hook: "→" client to server, "←" back.
# ---------------------------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one stdio line or one HTTP body
MAX_DEPTH = 100  # arrays and objects nested deeper are refused: json.loads would recurse that deep
SHORT_MESSAGE = 1024  # bytes: below this, a pass over every byte costs less than leaping with find()
WALKED_STRINGS = 32  # strings leapt over one by one before the rest of a message is taken in bulk
ONE_KIND = bytes.maketrans(b"{}", b"[]")  # depth is all that is measured; json.loads checks the pairs match
NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))  # the bytes that neither nest nor quote


def reject_constant(name: str):
    """NaN and Infinity are not JSON, though Python's json reads them."""
    raise ValueError(f"{name} is not JSON")


DECODER = json.JSONDecoder(parse_constant=reject_constant)  # made once: json.loads(text, **options) makes one a call
ENCODER = json.JSONEncoder(allow_nan=False)


def parse(data: bytes | str):
    """Parse one message from the wire; anything that is not JSON raises PARSE_ERROR (course 000)."""
    try:
        if isinstance(data, bytes):
            wire, text = data, data.decode("utf-8")
        else:
            wire, text = data.encode("utf-8", "surrogatepass"), data
        # A short message is counted, brackets in strings and all: most hold far too few to nest MAX_DEPTH deep.
        few = len(wire) < SHORT_MESSAGE and wire.count(b"[") + wire.count(b"{") <= MAX_DEPTH
        if not few and nesting(wire) > MAX_DEPTH:  # checked first: json.loads would recurse as deep as it goes
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return DECODER.decode(text)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise RPCError(PARSE_ERROR, f"parse error: {str(exc)[:100]}")


def nesting(wire: bytes) -> int:
    """How deep arrays and objects nest in wire, brackets in strings aside; a bound when too few to pass MAX_DEPTH."""
    # A long message may hold too few brackets to nest MAX_DEPTH deep, strings and all: find() leaps from one
    # to the next at memory speed (counting would read every byte) and stops once there are enough.
    if len(wire) >= SHORT_MESSAGE:
        brackets = 0
        for opener in (b"[", b"{"):
            at = wire.find(opener)
            while at >= 0 and brackets <= MAX_DEPTH:
                brackets, at = brackets + 1, wire.find(opener, at + 1)
        if brackets <= MAX_DEPTH:
            return brackets
    # Then only the brackets outside strings count. find() leaps over a long string too, so a long message's
    # first strings are stepped over one by one; an escaped quote ends the walk, and if it skipped little
    # (many short strings), the bulk below takes the whole message instead.
    outside, start = [], 0
    for _ in range(WALKED_STRINGS if len(wire) >= SHORT_MESSAGE else 0):
        opening = wire.find(b'"', start)
        closing = wire.find(b'"', opening + 1) if opening >= 0 else -1
        if closing < 0 or wire.endswith(b"\\", opening + 1, closing):
            break
        outside.append(wire[start:opening])
        start = closing + 1
    rest = b"".join([*outside, wire[start:]]) if start > len(wire) // 2 else wire
    if b"\\" in rest:  # an escaped backslash escapes nothing; an escaped quote ends no string
        rest = rest.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Keep brackets and quotes; a string without brackets is now "" and goes, then what any other string holds.
    brackets = rest.translate(ONE_KIND, NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in brackets:
        brackets = b"".join(brackets.split(b'"')[::2])
    depth = 0
    while brackets and depth <= MAX_DEPTH:  # each pass peels the innermost pairs: one level
        peeled = brackets.replace(b"[]", b"")
        if len(peeled) == len(brackets):
            break  # brackets that never close: not JSON, which json.loads will say
        brackets, depth = peeled, depth + 1
        if depth == 1 and b"[" * MAX_DEPTH in brackets:  # [[[[... a hundred more levels: settled at once
            return MAX_DEPTH + 1
    return depth + brackets.count(b"[")


def encode(message: dict) -> str:
    """One message as JSON on one line; one that JSON cannot carry, or too large, becomes INTERNAL_ERROR."""
    try:
        text = ENCODER.encode(message)
        if len(text) > MAX_MESSAGE_BYTES:  # the peer's line limit is likely ours: it could not read this
            raise ValueError(f"the message would be {len(text)} bytes, over {MAX_MESSAGE_BYTES}")
        return text
    except (TypeError, ValueError) as exc:
        return json.dumps(error_response(message.get("id"), INTERNAL_ERROR, f"internal error: {exc}"[:200]))


def take_outbox(server: MCPServer) -> list:
    """Empty the server's outbox; return what it held, oldest first."""
    if not server._outbox:
        return []
    notes = list(server._outbox)
    server._outbox.clear()
    return notes


def print_trace(direction: str, message: dict):
    """A trace hook that prints each message as one compact JSON line behind its arrow."""
    print(direction, json.dumps(message, ensure_ascii=False), flush=True)


class Transport:
    """What every transport keeps: the notifications received, and the trace hook."""

    def __init__(self, trace=None):
        self.trace = trace
        self.notifications = []

    def traced(self, direction: str, message):
        """Show message to the trace hook, if there is one, and return it."""
        if self.trace and message is not None:
            self.trace(direction, message)
        return message

    def is_response_to(self, incoming: dict, id) -> bool:
        """Keep a notification for drain(); tell whether incoming is the response to request id."""
        if "method" in incoming and "id" not in incoming:
            self.notifications.append(incoming)
        return "method" not in incoming and incoming.get("id") == id

    def drain(self) -> list:
        """The notifications received so far, handed over once."""
        notes, self.notifications = self.notifications, []
        return notes


class InMemoryTransport(Transport):
    """The course's proof of layering: client and server share nothing but JSON text."""

    def __init__(self, server: MCPServer, trace=None):
        super().__init__(trace)
        self.server = server

    def send(self, message: dict) -> dict | None:
        """json.dumps, json.loads, server.handle; the outbox and the response come back the same way."""
        wire = json.dumps(self.traced("→", message))
        reply = self.server.handle(json.loads(wire))
        self.collect()  # the outbox first: notifications arrive before the response
        return self.traced("←", None if reply is None else json.loads(encode(reply)))

    def collect(self):
        """Carry what the server queued across the JSON boundary."""
        for note in take_outbox(self.server):
            self.notifications.append(self.traced("←", json.loads(encode(note))))

    def drain(self) -> list:
        """The notifications received so far, and any the server queued since, handed over once."""
        self.collect()
        return super().drain()

    def close(self):
        """Nothing to release in memory."""


# -- stdio: one message per line; stdout carries the wire and nothing else --

def serve_stdio(server: MCPServer, stdin=None, stdout=None):
    """Serve one client over stdio: a message per line in, responses per line out, until end of input."""
    stdout = stdout or claim_stdout()
    stdin = stdin or sys.stdin.buffer
    server.on_queue = lambda: write_lines(stdout, take_outbox(server))  # notifications go out as they come
    while line := stdin.readline(MAX_MESSAGE_BYTES + 1):  # end of input ends the loop: exit code 0
        if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
            while (rest := stdin.readline(MAX_MESSAGE_BYTES)) and not rest.endswith(b"\n"):
                pass  # drop the rest of the oversized line
            reply = error_response(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes")
        elif not line.strip():
            continue
        else:
            try:
                reply = server.handle(parse(line))
            except RPCError as exc:  # raised by parse(): not JSON, so there is no id to respond to
                reply = error_response(None, exc.code, exc.message)
        write_lines(stdout, take_outbox(server) + ([reply] if reply is not None else []))  # the outbox first


def write_lines(stdout, messages: list):
    """Write each message as one line, and flush."""
    for message in messages:
        stdout.write(encode(message).encode() + b"\n")
    stdout.flush()


def claim_stdout():
    """Keep the real stdout for the wire, and send fd 1 and sys.stdout to stderr for everything else."""
    sys.stdout.flush()
    wire = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a tool's print(), or a child process it starts, now lands on stderr
    sys.stdout = sys.stderr
    return wire


class StdioTransport(Transport):
    """A server as a child process: requests to its stdin, responses read from its stdout.

        transport = StdioTransport([sys.executable, "server_demo.py"], trace=print_trace)
    The response is read on the caller's own thread; select() bounds each wait by `timeout` seconds.
    """

    def __init__(self, command: list, trace=None, timeout: float = 30.0, env: dict | None = None, stderr=None):
        super().__init__(trace)
        import subprocess
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        self.timeout = timeout
        self._buffer = b""

    def send(self, message: dict) -> dict | None:
        """Write one line; for a request, read lines until its response arrives, keeping notifications."""
        self.process.stdin.write(json.dumps(self.traced("→", message)).encode() + b"\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + self.timeout
        while not is_notification(message):
            line, newline, self._buffer = self._buffer.partition(b"\n")
            if not newline:
                self._buffer = line + self._read(deadline, message)
                continue
            try:
                incoming = json.loads(line)
            except (ValueError, RecursionError):
                continue  # junk on the server's stdout (a stray print) is not a message
            if isinstance(incoming, dict) and self.is_response_to(self.traced("←", incoming), message["id"]):
                return incoming
        return None

    def _read(self, deadline: float, waiting_for: dict) -> bytes:
        """The next bytes from the server's stdout, or TimeoutError once the deadline passes."""
        import select
        fd = self.process.stdout.fileno()
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            raise TimeoutError(f"no response to {waiting_for['method']} (id {waiting_for['id']}) in {self.timeout} s")
        chunk = os.read(fd, 65536)
        if not chunk:
            raise ConnectionError(f"the server closed its stdout (exit code {self.process.poll()})")
        return chunk

    def close(self) -> int:
        """Close stdin and wait for the server to exit; if it does not, terminate it, then kill it."""
        self.process.stdin.close()
        import subprocess
        for stop in (None, self.process.terminate, self.process.kill):  # ask, then insist (WIRE.md 2)
            if stop:
                stop()
            try:
                self.process.wait(timeout=2)
                break
            except subprocess.TimeoutExpired:
                continue
        self.process.stdout.close()
        return self.process.returncode


# -- Streamable HTTP: one endpoint, one POST a message --

MCP_PATH = "/mcp"
LOCAL_NAMES = {"127.0.0.1", "localhost", "::1"}  # Host and Origin a local server accepts (DNS rebinding)
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # sent as Mcp-Name


def http_server(factory, host: str = "127.0.0.1", port: int = 0, allowed_hosts=LOCAL_NAMES):
    """A Streamable HTTP server at /mcp; factory() makes each session's MCPServer. Call serve_forever()."""
    import http.server, secrets, socket, urllib.parse  # only when HTTP is served

    sessions = {}  # Mcp-Session-Id -> (MCPServer, lock): one a client, in the handshake era
    sessions_lock = threading.Lock()
    shared = (factory(), threading.Lock())  # serves every stateless request: there is no session

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: many POSTs on one connection
        disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart

        def log_message(self, format, *args):
            pass  # no access log on stderr: trace the messages instead

        def do_GET(self):
            self.refuse(405, "this server opens no standalone stream")

        def do_DELETE(self):
            if self.is_allowed() and self.session(end=True):
                self.respond(200, None)

        def do_POST(self):
            length = self.headers.get("Content-Length", "")
            if not self.is_allowed():
                return
            if not length.isdigit() or int(length) > MAX_MESSAGE_BYTES:
                return self.refuse(413 if length.isdigit() else 411, f"the body must be {MAX_MESSAGE_BYTES} bytes at most")
            try:
                message = parse(self.rfile.read(int(length)))  # once the body is read, the connection is reusable
            except RPCError as exc:
                return self.respond(400, error_response(None, exc.code, exc.message))
            version = self.headers.get("MCP-Protocol-Version")
            if not isinstance(message, dict) or is_stateless(message):
                self.post_stateless(message)
            elif version is not None and version not in PUBLISHED_VERSIONS:
                self.respond(400, error_response(None, INVALID_REQUEST, f"unknown MCP-Protocol-Version {version}"))
            elif message.get("method") == "initialize":  # a new session, named by an unguessable id
                entry, sid = (factory(), threading.Lock()), secrets.token_urlsafe(24)
                reply, notes = self.serve(entry, message)
                opened = bool(reply and "result" in reply)
                if opened:
                    with sessions_lock:
                        sessions[sid] = entry
                self.respond(200 if reply else 202, reply, notes, {"Mcp-Session-Id": sid} if opened else {})
            elif entry := self.session():
                reply, notes = self.serve(entry, message)
                self.respond(200 if reply else 202, reply, notes)  # 202: a notification, or a response

        def post_stateless(self, message):
            """2026-07-28: no session; the headers repeat the body; errors map to HTTP statuses (WIRE.md 7)."""
            params = message.get("params") if isinstance(message, dict) and isinstance(message.get("params"), dict) else {}
            meta, method = params.get("_meta") or {}, message.get("method") if isinstance(message, dict) else None
            expected = {"MCP-Protocol-Version": meta.get(PROTOCOL_VERSION_KEY), "Mcp-Method": method}
            if method in NAMED_METHODS:
                expected["Mcp-Name"] = str(params.get(NAMED_METHODS[method]))
            wrong = [header for header, value in expected.items() if header_text(self.headers.get(header)) != value]
            if wrong and PROTOCOL_VERSION_KEY in meta:
                problem = f"the {wrong[0]} header does not match the body"
                return self.respond(400, error_response(message.get("id"), HEADER_MISMATCH, problem))
            reply, notes = self.serve(shared, message)
            code = (reply or {}).get("error", {}).get("code")
            status = 200 if reply else 202  # a tool's failure, or the lab's unknown tool, is still a 200
            if code in (UNSUPPORTED_PROTOCOL_VERSION, INVALID_REQUEST, PARSE_ERROR) or (code == INVALID_PARAMS and CLIENT_CAPABILITIES_KEY not in meta):
                status = 400
            elif code == METHOD_NOT_FOUND and (method not in shared[0]._handlers or method in HANDSHAKE_ONLY):
                status = 404  # the method itself is unknown here
            self.respond(status, reply, notes)

        def serve(self, entry, message):
            """handle() under the session's lock, with the notifications it queued."""
            with entry[1]:
                return entry[0].handle(message), take_outbox(entry[0])

        def session(self, end: bool = False):
            """The session that Mcp-Session-Id names (ended, if end); else respond 400 or 404 and return None."""
            sid = self.headers.get("Mcp-Session-Id")
            with sessions_lock:
                entry = sessions.pop(sid, None) if end else sessions.get(sid)
            if entry is None:
                status, reason = (400, "missing Mcp-Session-Id") if sid is None else (404, "unknown or ended session")
                self.respond(status, error_response(None, INVALID_REQUEST, reason))
            return entry

        def is_allowed(self) -> bool:
            """The path is /mcp, and Host and Origin are local names; otherwise refuse before reading a body."""
            host = urllib.parse.urlsplit("//" + self.headers.get("Host", "")).hostname
            origin = self.headers.get("Origin")
            if urllib.parse.urlsplit(self.path).path != MCP_PATH:
                return self.refuse(404, "not found: the endpoint is " + MCP_PATH)
            if host not in allowed_hosts or (origin and urllib.parse.urlsplit(origin).hostname not in allowed_hosts):
                return self.refuse(403, "Host or Origin is not a local name")  # a DNS-rebinding page, say
            return True

        def refuse(self, status: int, reason: str) -> bool:
            """Respond, drain the body, and close: a kept-alive connection never reads a stale body as a request."""
            self.close_connection = True
            self.respond(status, error_response(None, INVALID_REQUEST, reason), [], {"Connection": "close"})
            self.connection.shutdown(socket.SHUT_WR)  # the response is complete, and the client sees it end
            self.connection.settimeout(2)
            try:  # read what the client still sends (a body it writes before reading), so that it reads the response
                while self.connection.recv(1 << 20):
                    pass
            except OSError:
                pass  # the client closed, or took too long: either way the response is out
            return False

        def respond(self, status: int, reply, notes=(), headers=None):
            """Send the response as JSON, or as an event stream when notifications go first and SSE is accepted."""
            body, kind = (encode(reply).encode() if reply else b""), "application/json"
            if notes and "text/event-stream" in self.headers.get("Accept", ""):
                body = "".join(f"event: message\ndata: {encode(m)}\n\n" for m in [*notes, reply]).encode()
                kind = "text/event-stream"
            self.send_response(status)
            for name, value in {**(headers or {}), "Content-Type": kind, "Content-Length": str(len(body))}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    httpd = http.server.ThreadingHTTPServer((host, port), Handler)
    httpd.daemon_threads = True
    return httpd


def serve_http(factory, host: str = "127.0.0.1", port: int = 8000):
    """Serve Streamable HTTP at http://host:port/mcp until interrupted or terminated."""
    import signal
    httpd = http_server(factory, host, port)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a host's SIGTERM is a clean stop
    print(f"mcp_min: serving http://{host}:{httpd.server_address[1]}{MCP_PATH}", file=sys.stderr, flush=True)
    with httpd:
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass  # Ctrl-C: stop quietly


class HttpTransport(Transport):
    """The client's side of Streamable HTTP: one POST a message, on one kept-alive connection.

        transport = HttpTransport("http://127.0.0.1:8000/mcp", trace=print_trace)
    It keeps Mcp-Session-Id and MCP-Protocol-Version, and reads JSON or event-stream responses.
    """

    def __init__(self, url: str, trace=None, timeout: float = 30.0):
        import http.client, urllib.parse
        super().__init__(trace)
        parts = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
        self.path = parts.path or "/"
        self.session_id = self.protocol_version = None

    def send(self, message: dict) -> dict | None:
        """POST one message: 202 means no response; a JSON or event-stream body holds the response."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        meta = (message.get("params") or {}).get("_meta") or {}
        if PROTOCOL_VERSION_KEY in meta:  # stateless: the headers repeat what the body says
            headers |= {"MCP-Protocol-Version": meta[PROTOCOL_VERSION_KEY], "Mcp-Method": message["method"]}
            if message["method"] in NAMED_METHODS:
                headers["Mcp-Name"] = header_value(str(message["params"].get(NAMED_METHODS[message["method"]])))
        elif self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.protocol_version}
        status, reply_headers, body = self._exchange("POST", json.dumps(self.traced("→", message)).encode(), headers)
        self.session_id = reply_headers.get("Mcp-Session-Id") or self.session_id
        if status == 202 or is_notification(message):
            return None
        stream = reply_headers.get("Content-Type", "").startswith("text/event-stream")
        incoming = sse_messages(body.decode()) if stream else [json.loads(body)]
        reply = next((m for m in incoming if self.is_response_to(self.traced("←", m), message["id"])), None)
        if reply is None:
            raise ConnectionError(f"HTTP {status}: {body[:200].decode(errors='replace')}")
        if message["method"] == "initialize" and "result" in reply:
            self.protocol_version = reply["result"].get("protocolVersion")
        return reply

    def _exchange(self, verb: str, body: bytes | None, headers: dict):
        """One HTTP exchange: (status, headers, body)."""
        if self.connection.sock is None:  # (re)connect, and send each write at once: no 40 ms Nagle delay
            import socket
            self.connection.connect()
            self.connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection.request(verb, self.path, body, headers)
        reply = self.connection.getresponse()
        return reply.status, reply.headers, reply.read()

    def close(self):
        """End the session with DELETE, then close the connection."""
        if self.session_id:
            self._exchange("DELETE", None, {"Mcp-Session-Id": self.session_id})
            self.session_id = None
        self.connection.close()


def header_value(text: str) -> str:
    """A header value for text: as it is if plain printable ASCII, else wrapped as =?base64?...?= (2026-07-28)."""
    if text.isascii() and text.isprintable() and text == text.strip():
        return text
    return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="


def header_text(value: str | None) -> str | None:
    """The text a header value carries, unwrapping =?base64?...?=."""
    if value and value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2]).decode("utf-8", "replace")
    return value


def sse_messages(body: str) -> list:
    """The messages of an event stream: each event's data lines, joined and parsed."""
    events = body.replace("\r\n", "\n").split("\n\n")
    datas = ["\n".join(line[5:].lstrip(" ") for line in event.split("\n") if line.startswith("data:"))
             for event in events]
    return [json.loads(data) for data in datas if data]


# ---------------------------------------------------------------------------------------------------
# ---- 6. The wire tap ----
# python mcp_min.py tap [--log FILE] -- <server command>: put it in front of any server command in a
# host's configuration, and watch every message the host and the server exchange.
# ---------------------------------------------------------------------------------------------------

def tap(command: list, log=None) -> int:
    """Run command as a server, pass every byte through untouched both ways, and log each line."""
    import subprocess
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    log, log_lock = log or sys.stderr, threading.Lock()

    def pump(source: int, target: int, arrow: str):
        """Copy bytes as they arrive; then log the whole lines among them."""
        pending = b""
        while chunk := os.read(source, 65536):
            *lines, pending = (pending + chunk).split(b"\n")
            write_log(arrow, lines)  # logged first, so that a request is always logged before its response
            unsent = chunk
            while unsent:  # then the bytes, unchanged
                unsent = unsent[os.write(target, unsent):]
        write_log(arrow, [pending] if pending else [])  # a last line without its newline

    def write_log(arrow: str, lines: list):
        """Log each line, one message as stdio requires, as it is."""
        with log_lock:
            log.writelines(f"{arrow} {line.decode('utf-8', 'replace')}\n" for line in lines)
            log.flush()

    def upstream():
        """Host to server; when the host closes, so does the server's stdin."""
        try:
            pump(0, child.stdin.fileno(), "→")
        except OSError:
            pass  # the server has exited: its stdin is gone
        child.stdin.close()

    threading.Thread(target=upstream, daemon=True).start()
    pump(child.stdout.fileno(), 1, "←")
    return child.wait()


def main(argv: list | None = None) -> int:
    """The command line: python mcp_min.py tap [--log FILE] [--] <server command> [args...]."""
    args = sys.argv[1:] if argv is None else argv
    log_path = args[2] if args[1:2] == ["--log"] and len(args) > 2 else None
    command = args[3:] if log_path else args[1:]
    command = command[1:] if command[:1] == ["--"] else command  # "--" may be eaten by the host: optional
    if args[:1] != ["tap"] or not command:
        print("usage: python mcp_min.py tap [--log FILE] [--] <server command> [args...]", file=sys.stderr)
        return 2
    if log_path:
        with open(log_path, "a", encoding="utf-8") as log:
            return tap(command, log)
    return tap(command)


if __name__ == "__main__":
    sys.exit(main())
