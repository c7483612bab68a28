"""mcp_min: course 000's lab, the Model Context Protocol's core in one standard-library module.

Read it top to bottom beside course 000 ("Phase 03: Deep Dive"): every name the course uses is here, and
what you read is what runs. The banners carry the section numbers the lessons use:

   1. Messages      JSON-RPC 2.0 as plain dicts, the five error codes, RPCError
   2. The server    MCPServer: handle and its three-tier try, the handshake gate, _dispatch over a flat
                    table, the _call_tool error lattice, add_tool(..., notify=True) and the _outbox
   3. The client    MCPClient: request, initialize, tools_cache, _pump_notifications
   4. In memory     InMemoryTransport.send: json.dumps, json.loads, server.handle, and back

The rest of MCP builds on this module by import, each layer in a file of its own, in the lessons' order:
mcp_full.py (decorators and schemas from type hints, both eras with the 2026-07-28 revision, asking the
client, cancellation), mcp_stdio.py and mcp_http.py (the transports), tap.py and board.py (watching the
wire). This module names none of them: nothing here exists for a later layer.

Glossary (one word per concept; the project uses no synonyms):
  message       one JSON-RPC object on the wire: a request, a notification or a response
  request       a message with an "id" and a "method"; it gets exactly one response (request() builds
                one; MCPClient.request() sends one and returns the result of its response)
  notification  a message with a "method" and no "id" key; it never gets a response
  response      a message that echoes a request's id and holds a result or an error (a variable
                holding one is named `reply`, as `response()` is the function that builds one)
  result        the object a successful response carries
  error         the {code, message, data?} object a failed response carries
  tool          a function a client may call (tools/call)
  resource      data a client may read by URI (resources/read)
  prompt        a message template a client may fill in (prompts/get)
  catalog       the tools, resources and prompts one server offers
  session       one client's state on a server: the gate, the agreed version, the outbox
  allow-list    the tools a session may call: the permission boundary
  outbox        what the server queued for the client until the client pumps it (course 000)
  wire          the text that crosses between client and server (course 000: json.loads(wire))
  transport     what carries messages between a client and a server: here, memory

Example (course 000's worked trace, steps 1-4):
    server = MCPServer("demo")
    server.add_tool("add", lambda x, y: x + y, "Add two integers.",
                    {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                     "required": ["x", "y"]})
    client = MCPClient(InMemoryTransport(server, trace=print_trace))
    client.initialize()
    client.call_tool("add", {"x": 2, "y": 3})   # {"content": [{"type": "text", "text": "5"}]}
"""

import sys

if sys.version_info < (3, 10):  # before anything else, so that an older Python gets one clear line
    sys.exit(f"mcp_min needs Python 3.10 or newer; this is Python {sys.version.split()[0]}")

import json
import os
import re

# ---------------------------------------------------------------------------------------------------
# ---- 1. Messages ----
# JSON-RPC 2.0: three shapes, told apart by which keys are present, never by a type tag (course 000).
# ---------------------------------------------------------------------------------------------------

JSONRPC = "2.0"

# The five standard codes (course 000, "The five standard error codes and where each is raised").
PARSE_ERROR = -32700  # the bytes were not JSON: raised at the transport edge, so the id is null
INVALID_REQUEST = -32600  # not a valid request object
METHOD_NOT_FOUND = -32601  # no such method
INVALID_PARAMS = -32602  # the method exists, its params are wrong
INTERNAL_ERROR = -32603  # a handler raised: the server's bug, never a crash

# The lab's policy codes, course 000's choices (README, "Where this lab and the spec differ"). Only the first is
# one line from the spec; the spec names no code for the other two cases.
UNKNOWN_TOOL = METHOD_NOT_FOUND  # spec: INVALID_PARAMS (this line, changed: a test applies it)
TOOL_NOT_ALLOWED = INVALID_REQUEST  # spec: not specified
NOT_INITIALIZED = INVALID_REQUEST  # spec: no code; a request after the initialize response is served (lesson 3)


class RPCError(Exception):
    """A deliberate protocol error; MCPServer.handle turns it into an error response with its code."""

    def __init__(self, code: int, message: str, data=None):
        if type(code) is not int:  # JSON-RPC 2.0, section 5.1: an integer; "404" would reach no client as a code
            raise TypeError(f"an RPCError's code is an integer, such as INVALID_PARAMS ({INVALID_PARAMS}), not {code!r}")
        shown = "" if data is None else f" (data: {json.dumps(data, ensure_ascii=False, default=repr)})"
        super().__init__(f"{code} {message}{shown}")  # what a traceback shows: the code, then the message and data
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


def is_response(message: dict) -> bool:
    """A response has a result or an error, and no method."""
    return "method" not in message and ("result" in message or "error" in message)


def valid_id(id) -> bool:
    """A request id is a string or an integer; null, floats and booleans are not ids."""
    return isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))

# ---------------------------------------------------------------------------------------------------
# ---- 2. The server ----
# One catalog, one session: handle() checks the message, the gate checks the session, _dispatch picks a
# handler from a flat table, _call_tool walks the error lattice, and notifications wait in _outbox.
# ---------------------------------------------------------------------------------------------------

VERSIONS = ["2025-11-25", "2025-06-18"]  # newest first: the versions initialize may agree on

# NaN and Infinity are not JSON. Made once: json.dumps(value, allow_nan=False) would make an encoder each call.
ENCODER = json.JSONEncoder(allow_nan=False)

PYTHON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
              "object": dict, "null": type(None)}  # a JSON Schema type, and the Python types json.loads makes


def negotiate_version(requested: str) -> str:
    """Echo a version this server speaks; else the newest one not newer than asked; else the newest."""
    if requested in VERSIONS:
        return requested
    older = [v for v in VERSIONS if v < requested]  # dates as strings sort in time order
    return older[0] if older else VERSIONS[0]


class MCPServer:
    """One MCP server: a catalog of tools, resources and prompts, and one session's state.

    allowed_tools is the session's allow-list (None allows every tool), set by whoever creates the
    session, never by the client: clientInfo is a claim, not an identity.
        server = MCPServer("demo", allowed_tools={"add"})
        server.add_tool("add", add, "Add two integers.", {"type": "object", "properties": {...}, "required": [...]})
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # {"jsonrpc": "2.0", "id": 1, "result": {}}
    """

    # The flat table _dispatch reads (course 000): each method, and the name of the handler that serves it.
    HANDLERS = {
        "initialize": "_initialize", "ping": "_ping",  # the session: ping is allowed at any time
        "tools/list": "_list_tools", "tools/call": "_call_tool",  # the six methods of course 000
        "resources/list": "_list_resources", "resources/read": "_read_resource",
        "prompts/list": "_list_prompts", "prompts/get": "_get_prompt",
    }
    # What initialize declares (course 000). Each value is an object, never `true` (spec 2025-11-25,
    # basic/lifecycle); the lab tells its client of tool list changes only.
    CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}}
    # Course 002 writes @mcp.tool() in the official SDK's style; the lab registers with add_* (course 000).
    DECORATORS = {"tool": "add_tool(name, fn, description, input_schema)", "resource": "add_resource(uri, read)",
                  "prompt": "add_prompt(name, render, description, arguments)"}

    def __init__(self, name: str, version: str = "0.1.0", allowed_tools=None):
        self.server_info = {"name": name, "version": version}
        if isinstance(allowed_tools, str):
            raise TypeError(f"allowed_tools is a collection of tool names, such as {{{allowed_tools!r}}}, not one string")
        self.allowed_tools = None if allowed_tools is None else set(allowed_tools)
        self.tools, self.resources, self.prompts = {}, {}, {}  # the catalog: name (or URI) -> its entry
        # The session: the gate, the agreed version, what the client declared, and what waits for it.
        self._initialized = False
        self.protocol_version = self.client_info = self.client_capabilities = None
        self._outbox = []

    def __getattr__(self, name: str):
        """Only for a name the server lacks: AttributeError as ever, and for a decorator, where to find one."""
        if name in self.DECORATORS:  # no name= and obj=: Python would add "Did you mean: 'tools'?"
            raise AttributeError(f"the lab's MCPServer has no {name}(): register with server.{self.DECORATORS[name]} "
                                 f"(course 000), or use mcp_full's MCPServer, whose @server.{name}() reads type hints")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)

    # -- the one entry point --

    def handle(self, message) -> dict | None:
        """Handle one message: its response, or None for a notification (never a response, not even an error)."""
        if not isinstance(message, dict):
            # A batch (a list) or a scalar: no request object, no id to respond to (batches left in 2025-06-18).
            return error_response(None, INVALID_REQUEST, "a message must be a JSON object")
        if is_response(message):
            return None  # a response is never answered (this server asks nothing, so it waits for none)
        id = message.get("id") if valid_id(message.get("id")) else None  # an id we cannot echo is null
        try:
            method, params = self._check(message)
            if is_notification(message):
                self._notice(method, params)
                return None
            self._gate(method)
            result = self._dispatch(method, params)
            if not isinstance(result, dict):  # the handler's bug (a forgotten return?): tier 2 says so
                returned = "nothing (None)" if result is None else f"a {type(result).__name__}"
                raise TypeError(f"the handler of {method} returned {returned}: it must return its result, a dict")
            reply = response(id, result)
        except RPCError as exc:  # tier 1: a deliberate protocol error keeps its code
            reply = error_response(id, exc.code, exc.message, exc.data)
        except Exception as exc:  # tier 2: a handler bug becomes -32603, never a traceback on the wire
            reply = error_response(id, INTERNAL_ERROR, f"internal error: {exc!r}"[:200])
        if is_notification(message):
            return None  # tier 3: no response to a notification, even one that could not be read
        return reply

    def _check(self, message: dict) -> tuple:
        """The method and params of a well-formed request or notification; else INVALID_REQUEST."""
        if message.get("jsonrpc") != JSONRPC:
            raise RPCError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not is_notification(message) and not valid_id(message["id"]):
            # "id": null too: a present key makes a request (course 000), so a notification leaves the key out
            hint = "; a notification has no id key at all" if message["id"] is None else ""
            raise RPCError(INVALID_REQUEST, "id must be a string or an integer" + hint)
        method, params = message.get("method"), message.get("params", {})
        if not isinstance(method, str):
            raise RPCError(INVALID_REQUEST, "method must be a string")
        if not isinstance(params, dict):
            raise RPCError(INVALID_REQUEST, "params must be an object")
        return method, params

    def _notice(self, method: str, params: dict):
        """A notification: notifications/initialized opens the session; no other changes anything here."""
        if method == "notifications/initialized" and self.protocol_version:
            self._initialized = True  # the session is live only now (course 000, step 3)

    def _gate(self, method: str):
        """The handshake gate (course 000): nothing but initialize and ping before `initialized`; data names the step missing."""
        if not self._initialized and method not in ("initialize", "ping"):
            missing = "notifications/initialized" if self.protocol_version else "initialize"  # initialize answered?
            raise RPCError(NOT_INITIALIZED, "server not initialized", {"missing": missing})

    def _dispatch(self, method: str, params: dict) -> dict:
        """Route a method to its handler: the flat table of course 000."""
        name = self.HANDLERS.get(method)
        if name is None:
            raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        return getattr(self, name)(params)

    # -- the handlers, each under the request it serves --

    def _initialize(self, params: dict) -> dict:
        # initialize {protocolVersion, capabilities, clientInfo}
        if self._initialized:
            raise RPCError(INVALID_REQUEST, "session already initialized")
        self.protocol_version = negotiate_version(param(params, "protocolVersion", str))
        self.client_info = params.get("clientInfo")  # a claim, not an identity: it grants nothing
        self.client_capabilities = param(params, "capabilities", dict, {})
        return {"protocolVersion": self.protocol_version, "capabilities": self.CAPABILITIES,
                "serverInfo": self.server_info}

    def _ping(self, params: dict) -> dict:
        # ping {}: allowed at any time, even before the handshake
        return {}

    def _list_tools(self, params: dict) -> dict:
        # tools/list {}
        return {"tools": [tool["spec"] for tool in self.tools.values()]}

    def _call_tool(self, params: dict) -> dict:
        # tools/call {name, arguments}: the error lattice of course 000, checked in this order
        name, arguments = param(params, "name", str), param(params, "arguments", dict, {})
        tool = self.tools.get(name)
        if tool is None:
            raise RPCError(UNKNOWN_TOOL, f"unknown tool: {name}")
        if self.allowed_tools is not None and name not in self.allowed_tools:
            raise RPCError(TOOL_NOT_ALLOWED, f"tool '{name}' not permitted for this session")  # before it runs
        check_arguments(tool["spec"]["inputSchema"], arguments, tool["takes"])
        try:
            return self.tool_result(tool["fn"](**arguments))
        except RPCError:
            raise  # the tool chose a protocol error itself: an error response with its code
        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server
            report(f"the tool {name} failed", exc)  # the server's author sees where, on stderr
            # The tool failed, the protocol did not: a result the model can read and react to.
            return {"content": [text_content(f"ERROR: {str(exc) or type(exc).__name__}")], "isError": True}

    def tool_result(self, value) -> dict:
        """What a tool returned, as a tools/call result: a string is one text block, a dict shaped like a result
        ({"content": [...], "isError": ...}) the result itself, any other JSON value its JSON text."""
        if isinstance(value, str):
            return {"content": [text_content(value)]}
        if type(value) is int:  # 5 -> "5" (course 000), its JSON text already; a bool is an int, but True is "true"
            return {"content": [text_content(str(value))]}
        if value is None:  # raised here, inside _call_tool's try: the tool's failure, an isError result and stderr
            raise TypeError("the tool returned nothing (None): a forgotten return? A tool with nothing to say returns \"\"")
        try:
            text = ENCODER.encode(value)  # what JSON cannot carry fails here, not on the wire
        except (TypeError, ValueError) as exc:
            raise TypeError(f"the tool returned what JSON cannot carry ({exc}): return a str, a number, true, false, "
                            "or lists and dicts of them") from None
        return checked_result(value) if is_result(value) else {"content": [text_content(text)]}

    def _list_resources(self, params: dict) -> dict:
        # resources/list {}
        return {"resources": [resource["spec"] for resource in self.resources.values()]}

    def _read_resource(self, params: dict) -> dict:
        # resources/read {uri}
        uri = param(params, "uri", str)
        resource = self.resources.get(uri)
        if resource is None:
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        content = run_reader(f"the resource {uri}", resource["fn"], {})
        return {"contents": [resource_contents(uri, content, resource["spec"]["mimeType"])]}

    def _list_prompts(self, params: dict) -> dict:
        # prompts/list {}
        return {"prompts": [prompt["spec"] for prompt in self.prompts.values()]}

    def _get_prompt(self, params: dict) -> dict:
        # prompts/get {name, arguments}: each required variable filled, or INVALID_PARAMS naming it
        name = param(params, "name", str)
        prompt = self.prompts.get(name)
        if prompt is None:
            raise RPCError(INVALID_PARAMS, f"unknown prompt: {name}")
        arguments = param(params, "arguments", dict, {})
        for variable in prompt["spec"]["arguments"]:
            if variable.get("required") and variable["name"] not in arguments:
                raise RPCError(INVALID_PARAMS, f"missing prompt variable: {variable['name']}")
        known = {variable["name"] for variable in prompt["spec"]["arguments"]}
        filled = {key: value for key, value in arguments.items() if key in known}
        rendered = run_reader(f"the prompt {name}", prompt["fn"], filled)
        return {"description": prompt["spec"]["description"], "messages": prompt_messages(rendered)}

    # -- the catalog; registering with notify=True after the handshake queues list_changed in the outbox --

    def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
                 notify: bool = False, replace: bool = False):
        """Offer fn as a tool, its arguments described by input_schema (None: it takes none). Returns fn.

        A name already offered is refused, unless replace.
        """
        check_name(name)
        schema = input_schema or {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
        takes = check_schema(name, fn, schema, described=input_schema is not None)
        spec = {"name": name, "description": description or first_line(fn.__doc__), "inputSchema": schema}
        self._offer(self.tools, name, {"spec": spec, "fn": fn, "takes": takes}, "tools", notify, replace)
        return fn

    def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                     mime_type: str = "text/plain", notify: bool = False, replace: bool = False):
        """Offer data at uri: read is the content (str or bytes) or a function returning it. Returns read."""
        if not callable(read):
            resource_contents(uri, read, mime_type)  # content that is neither text nor bytes is refused now
        reader = read if callable(read) else lambda: read
        spec = {"uri": uri, "name": name or uri, "mimeType": mime_type,
                "description": description or first_line(reader.__doc__)}
        self._offer(self.resources, uri, {"spec": spec, "fn": reader}, "resources", notify, replace)
        return read

    def add_prompt(self, name: str, render, description: str = "", arguments: list = (), notify: bool = False,
                   replace: bool = False):
        """Offer a prompt template: arguments are its variables ({name, required}); render(**them) is its text. Returns render."""
        spec = {"name": name, "description": description or first_line(render.__doc__), "arguments": list(arguments)}
        self._offer(self.prompts, name, {"spec": spec, "fn": render}, "prompts", notify, replace)
        return render

    def _offer(self, offered: dict, key: str, entry: dict, listed: str, notify: bool, replace: bool):
        """Put an entry in one part of the catalog; a second one under the same key is refused unless replace."""
        if getattr(getattr(entry["fn"], "__code__", None), "co_flags", 0) & 0x80:  # inspect.CO_COROUTINE
            raise TypeError(f"{entry['fn'].__name__} is an async def, which the lab never awaits: write a def, or use "
                            f"mcp_full's MCPServer, which runs async def {listed} (course 002)")
        added = key not in offered  # replacing an entry changes no list: no client's cache goes stale
        if not added and not replace:  # silently replacing the first would hide a mistake
            raise ValueError(f"a {listed[:-1]} named {key!r} is offered already; pass replace=True to replace it")
        if notify and not self.CAPABILITIES[listed].get("listChanged"):  # a notification the client was not promised
            raise ValueError(f"this server's capabilities promise no {listed} list changes: add it with notify=False")
        offered[key] = entry
        if notify:
            self.list_changed(listed)
        elif added and self._initialized and self.CAPABILITIES[listed].get("listChanged"):  # a client was promised a word
            say(f"mcp_min: {key!r} was added to a live session's {listed} without notify=True: the client's cache "
                f"will not show it until it lists the {listed} again")

    def list_changed(self, listed: str):
        """Queue notifications/<listed>/list_changed: a bare cache invalidation, no payload (course 000)."""
        if self._initialized:  # before the handshake the client has no cache to invalidate
            self._outbox.append(notification(f"notifications/{listed}/list_changed"))

    def drain_outbox(self) -> list:
        """Empty the outbox; what it held, oldest first (course 000: the client drains it)."""
        messages, self._outbox = self._outbox, []
        return messages


def param(params: dict, key: str, kind: type, default=None):
    """params[key] (or default, if given, when the key is absent) if of that kind; else INVALID_PARAMS naming the key."""
    value = params.get(key, default)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RPCError(INVALID_PARAMS, f"params.{key} must be {'string' if kind is str else 'object'}")
    return value


def check_arguments(schema: dict, arguments: dict, takes: tuple | None = None):
    """Raise INVALID_PARAMS, naming the argument, if one is missing, unexpected, or of the wrong JSON type or value."""
    for name in schema.get("required", []):
        if name not in arguments:
            raise RPCError(INVALID_PARAMS, f"missing required argument: {name}")
    properties = schema.get("properties", {})
    for name, value in arguments.items():
        # Unexpected: the function cannot take it (takes: what parameters() says of it), or the schema shuts it out.
        if (takes is not None and name not in takes[0]) or (
                schema.get("additionalProperties") is False and name not in properties):
            raise RPCError(INVALID_PARAMS, f"unexpected argument: {name} (this tool takes {', '.join(properties) or 'none'})")
        rule = properties.get(name, {})
        if "type" in rule and not is_json_type(value, rule["type"]):
            kinds = rule["type"] if isinstance(rule["type"], list) else [rule["type"]]
            raise RPCError(INVALID_PARAMS, f"argument '{name}' must be {' or '.join(kinds)}")
        if "enum" in rule and value not in rule["enum"]:
            raise RPCError(INVALID_PARAMS, f"argument '{name}' must be one of {rule['enum']}")


def is_json_type(value, schema_type: str | list) -> bool:
    """Whether value has the JSON Schema type schema_type (or one of a list of them); true and false are not integers."""
    if isinstance(schema_type, list):
        return any(is_json_type(value, one) for one in schema_type)
    if isinstance(value, bool):
        return schema_type == "boolean"
    return isinstance(value, PYTHON_TYPES.get(schema_type, object))


def parameters(fn) -> tuple | None:
    """The names fn takes by keyword, and those it needs (no default); None if it takes any name (**kwargs),
    or is not a function whose code says (a class, a builtin)."""
    fn = getattr(fn, "__wrapped__", fn)  # a wrapper (functools.wraps) takes what the function it wraps takes
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x08:  # inspect.CO_VARKEYWORDS: **kwargs takes any name
        return None
    given = 1 if hasattr(fn, "__self__") else 0  # a bound method's self is given already
    names = code.co_varnames[given:code.co_argcount + code.co_kwonlyargcount]
    optional = code.co_varnames[code.co_argcount - len(fn.__defaults__ or ()):code.co_argcount]
    return names, [name for name in names if name not in optional and name not in (fn.__kwdefaults__ or {})]


def check_schema(name: str, fn, schema: dict, described: bool) -> tuple | None:
    """Refuse, naming the fix, an input_schema that is no object schema or does not fit fn; what fn takes."""
    if not isinstance(schema, dict) or schema.get("type") != "object":  # arguments are an object (spec 2025-11-25)
        raise ValueError(f'the input_schema of {name} must be an object schema, {{"type": "object", "properties": '
                         f'{{...}}, "required": [...]}}: the arguments of tools/call are an object')
    takes = parameters(fn)
    properties = schema.get("properties", {})
    if takes is None:
        return takes  # it takes any name: any property fits
    strangers = [key for key in properties if key not in takes[0]]
    if strangers:
        raise ValueError(f"the input_schema of {name} names {', '.join(strangers)}, which its function does not take "
                         f"(it takes {', '.join(takes[0]) or 'nothing'}): name each property after a parameter")
    unsaid = [key for key in takes[1] if key not in properties]
    if unsaid and not described:
        raise ValueError(f"{name} takes {', '.join(unsaid)}, which no input_schema describes: pass input_schema={{"
                         f'"type": "object", "properties": {{...}}, "required": [...]}} (the lab reads no type hints; '
                         f"mcp_full's MCPServer does)")
    return takes


def check_name(name: str):
    """Refuse a tool name the spec does not allow, naming what it may hold."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", str(name)):
        raise ValueError(f"{name!r} is not a tool name: 1 to 128 letters, digits, '_', '-' or '.' (spec 2025-11-25)")


def text_content(text: str) -> dict:
    """A text block, the content most tools return."""
    return {"type": "text", "text": text}


def is_result(value) -> bool:
    """Whether a tool returned a dict shaped like a tools/call result: it has content or isError."""
    return isinstance(value, dict) and ("content" in value or "isError" in value)


def checked_result(value: dict) -> dict:
    """A result a tool returned whole: a list of content blocks, isError true or false, no other field; else TypeError."""
    blocks = value.get("content")
    if set(value) - {"content", "isError", "structuredContent", "_meta"} or not isinstance(blocks, list) \
            or not all(isinstance(block, dict) and "type" in block for block in blocks) \
            or type(value.get("isError", False)) is not bool:  # a result's fields (spec 2025-11-25, server/tools)
        raise TypeError('the tool returned a dict with "content" or "isError", so a tools/call result, but not one: '
                        '{"content": [{"type": "text", "text": "..."}], "isError": true or false}; to send data '
                        "with those keys, return json.dumps(data)")
    return dict(value)


def resource_contents(uri: str, content, mime_type: str) -> dict:
    """One entry of a resources/read result: text as it is, bytes as a base64 blob; anything else raises TypeError."""
    if isinstance(content, bytes):
        import base64  # only when a resource is binary
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(content).decode("ascii")}
    if not isinstance(content, str):  # a resource's contents are text or a blob (spec 2025-11-25, server/resources)
        raise TypeError(f"a resource is text (str) or bytes, not a {type(content).__name__} ({uri}): for JSON, return "
                        f'json.dumps(...) and add it with mime_type="application/json"')
    return {"uri": uri, "mimeType": mime_type, "text": content}


def prompt_messages(rendered) -> list:
    """A prompt's messages: a string is one user message; a list may mix strings and {role, content} messages.

    A message's role is "user" or "assistant", and its content is one block (spec 2025-11-25, server/prompts).
    """
    items = rendered if isinstance(rendered, list) else [rendered]
    return [{"role": "user", "content": text_content(item)} if isinstance(item, str) else item for item in items]


def run_reader(what: str, fn, arguments: dict):
    """Call a resource's or a prompt's function; its bug is reported on stderr, then answered -32603."""
    try:
        return fn(**arguments)
    except RPCError:
        raise
    except Exception as exc:
        report(f"{what} failed", exc)
        raise


def first_line(doc: str | None) -> str:
    """The first line of a docstring: a tool's or a prompt's description."""
    return (doc or "").strip().split("\n")[0]


def report(what: str, exc: BaseException):
    """Write on stderr where a function of the catalog failed: the frames of its own code, then the exception.

    Never on stdout, which may be the wire. Frames of this project's modules and of the standard library are
    left out: they are not the function's author's to fix, and their line numbers change.
    """
    import traceback
    ours, stdlib = os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.__file__)
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)  # the project's mcp_*.py are not the author's
              if not (os.path.dirname(os.path.abspath(frame.filename)) == ours and
                      os.path.basename(frame.filename).startswith("mcp_")) and not frame.filename.startswith(stdlib)]
    lines = [f"mcp_min: {what}:"] + [f'  File "{os.path.basename(frame.filename)}", line {frame.lineno}, in {frame.name}'
                                     + (f"\n    {frame.line}" if frame.line else "") for frame in frames]
    say("\n".join(lines + [f"{type(exc).__name__}: {exc}"]))


def say(text: str):
    """Write a diagnosis on stderr, never on stdout (the wire, over stdio)."""
    print(text, file=sys.stderr, flush=True)

# ---------------------------------------------------------------------------------------------------
# ---- 3. The client ----
# Requests with ids counting up from 1; tools_cache, kept fresh by _pump_notifications (course 000). The
# client talks through a transport: send(message) -> the response (None for a notification), drain() -> the
# notifications the server pushed since, close().
# ---------------------------------------------------------------------------------------------------

def malformed(reply) -> str | None:
    """What makes a response unusable (course 000: result XOR error, error is {code, message}), or None."""
    if not isinstance(reply, dict):
        return "not an object"
    if ("result" in reply) == ("error" in reply):
        return "it needs exactly one of result and error"
    if "result" in reply:
        return None if isinstance(reply["result"], dict) else "result is not an object"
    error = reply["error"]
    if not isinstance(error, dict) or type(error.get("code")) is not int or not isinstance(error.get("message"), str):
        return "error is not an object with an integer code and a string message"
    return None


class MCPClient:
    """A client over any transport: request ids count up from 1, and tools_cache is kept fresh.

        client = MCPClient(InMemoryTransport(server))
        client.initialize()
        client.call_tool("add", {"x": 2, "y": 3})
    """

    def __init__(self, transport, name: str = "mcp_min", version: str = "0.1.0"):
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.capabilities = {}  # what this client can do for the server: nothing, in the lab
        self.next_id = 1
        self.protocol_version = self.server_info = self.server_capabilities = None
        self.tools_cache = self.resources_cache = self.prompts_cache = None

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send a request and return its result; an error response raises RPCError."""
        if method.startswith("notifications/"):  # a request would wait for a response that never comes
            raise ValueError(f"{method} is a notification: send it with notify({method!r}), which waits for nothing")
        if params is not None and not isinstance(params, dict):  # MCP's params are by name, never by position
            raise TypeError(f"params is a dict, such as {{'name': 'add', 'arguments': {{'x': 2}}}}, not a {type(params).__name__}")
        message = request(self.next_id, method, params)
        self.next_id += 1
        reply = self.transport.send(message)
        if reply is None:
            raise ConnectionError(f"no response to {method}")
        problem = malformed(reply)
        if problem:
            raise RPCError(INTERNAL_ERROR, f"malformed response to {method}: {problem}", reply)
        if "error" in reply:
            raise RPCError(reply["error"]["code"], reply["error"]["message"], reply["error"].get("data"))
        return reply["result"]

    def notify(self, method: str, params: dict | None = None):
        """Send a notification; nothing comes back."""
        self.transport.send(notification(method, params))

    def initialize(self, protocol_version: str = VERSIONS[0]) -> dict:
        """The handshake: initialize, check the response, then notifications/initialized (course 000)."""
        result = self.request("initialize", {"protocolVersion": protocol_version, "capabilities": self.capabilities,
                                             "clientInfo": self.client_info})
        if result.get("protocolVersion") not in VERSIONS:
            raise ConnectionError(f"the server chose version {result.get('protocolVersion')!r}, which this client lacks")
        self.protocol_version = result["protocolVersion"]
        self.server_info, self.server_capabilities = result.get("serverInfo"), result.get("capabilities")
        self.notify("notifications/initialized")
        return result

    def ping(self) -> dict:
        """ping: {} when the server is alive."""
        return self.request("ping")

    def list_tools(self) -> list:
        """tools/list into tools_cache."""
        self.tools_cache = self.request("tools/list")["tools"]
        return self.tools_cache

    def call_tool(self, name: str, arguments: dict | None = None) -> dict:
        """tools/call, then _pump_notifications: a list that changed meanwhile is listed again at once."""
        result = self.request("tools/call", {"name": name, "arguments": arguments or {}})
        self._pump_notifications()
        return result

    def list_resources(self) -> list:
        """resources/list into resources_cache."""
        self.resources_cache = self.request("resources/list")["resources"]
        return self.resources_cache

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
        """Drain what the server pushed, and re-list on each list_changed (course 000); what was drained."""
        notifications = self.transport.drain()
        if not notifications:
            return notifications  # the usual case after a call: nothing was pushed
        refreshes = {  # list_changed is an invalidation, not a diff: fetch the list again
            "notifications/tools/list_changed": self.list_tools,
            "notifications/resources/list_changed": self.list_resources,
            "notifications/prompts/list_changed": self.list_prompts}
        changed = [message["method"] for message in notifications if message.get("method") in refreshes]
        for method in dict.fromkeys(changed):  # each list once, however many times it changed meanwhile
            refreshes[method]()
        return notifications

    def close(self):
        """Close the transport."""
        self.transport.close()

# ---------------------------------------------------------------------------------------------------
# ---- 4. In memory ----
# The course's proof of layering: json.dumps, json.loads, server.handle, and back the same way. A trace
# hook sees every message that crosses: "→" client to server, "←" back.
# ---------------------------------------------------------------------------------------------------

def print_trace(direction: str, message: dict, width: int | None = None):
    """A trace hook that prints each message as one JSON line behind its arrow, cut to width (with "…") if given."""
    line = f"{direction} {json.dumps(message, ensure_ascii=False)}"
    if width is not None and len(line) > width:
        line = line[:width - 1] + "…"
    print(line, flush=True)


class InMemoryTransport:
    """The course's proof of layering: client and server share nothing but JSON text."""

    def __init__(self, server: MCPServer, trace=None):
        self.server, self.trace = server, trace

    def send(self, message: dict) -> dict | None:
        """json.dumps, json.loads, server.handle; the response comes back as JSON text too."""
        wire = json.dumps(self.traced("→", message))
        reply = self.server.handle(json.loads(wire))
        return self.traced("←", None if reply is None else json.loads(json.dumps(reply)))

    def drain(self) -> list:
        """The server's outbox, carried across the JSON boundary, oldest first."""
        return [self.traced("←", json.loads(json.dumps(message))) for message in self.server.drain_outbox()]

    def traced(self, direction: str, message):
        """Show message to the trace hook, if there is one, and return it."""
        if self.trace and message is not None:
            self.trace(direction, message)
        return message

    def close(self):
        """Nothing to release in memory."""
