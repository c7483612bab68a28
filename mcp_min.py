"""mcp_min: the Model Context Protocol in one standard-library module.

The lab of the course. Read it top to bottom: sections 1-4 are course text 000's lab and nothing else (the
messages, the server's handle, gate, _dispatch, _call_tool and _outbox, the client's tools_cache and
_pump_notifications, InMemoryTransport.send); each later section adds one mechanism, using only what comes
before it. The banners carry the section numbers the lessons use:

   1. Messages                    JSON-RPC 2.0 as plain dicts, the error codes, RPCError        course 000
   2. The server                  MCPServer: handle, the handshake gate, _dispatch, _call_tool   course 000
   3. The client                  MCPClient: tools_cache, _pump_notifications                    course 000
   4. In memory                   InMemoryTransport.send: only JSON crosses                       course 000
   5. Tools from type hints       @server.tool(), schemas, content blocks, templates, pages      course 002
   6. Versions and eras           negotiation; 2026-07-28: server/discover, _meta, cache hints   course 002, 004
   7. Asking the client           Context: log, progress, elicit, sample, roots; input_required  course 004
   8. Both directions             the server's own requests, cancellation, subscriptions/listen
   9. stdio                       serve_stdio, StdioTransport: one message a line
  10. Streamable HTTP             http_server, HttpTransport: one POST a message
  11. The wire tap                python mcp_min.py tap -- <server command>

A later section grows a class of an earlier one with @extend (a method added, or one taking the place of an
earlier method that it keeps and calls) or @serves (a handler added to the server's flat table), so that the
classes read in the course's order and no section names anything defined below it.

Glossary (one word per concept; the module, demos, tests and lessons use no synonyms):
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
  outbox        what the server queued for the client; a transport drains it before the next response
  question      what a server asks its client while it serves a request: elicitation/create (the user),
                sampling/createMessage (the client's model) or roots/list (the client's folders)
  answer        the result a client gives to a question
  round         one input_required result and the retry that answers it (2026-07-28)
  stream        a channel that stays open for many messages: an HTTP event stream, a listen stream
  wire          the text that crosses between client and server (course 000: json.loads(wire))
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

import sys

if sys.version_info < (3, 10):  # before anything else, so that an older Python gets one clear line
    sys.exit(f"mcp_min needs Python 3.10 or newer; this is Python {sys.version.split()[0]}")

import collections, json, os, re, threading, time, types, weakref
# base64, inspect, typing, queue, subprocess, select, signal, hmac and the HTTP modules are imported where
# they are used: a stdio server that needs none of them starts sooner.

# ---------------------------------------------------------------------------------------------------
# ---- 1. Messages ----
# JSON-RPC 2.0: three shapes, told apart by which keys are present, never by a type tag (course 000).
# ---------------------------------------------------------------------------------------------------

JSONRPC = "2.0"

# The five standard codes (course 000), and the three of the 2026-07-28 revision (spec 2026-07-28, basic,
# "Error Codes"), each raised in one place.
PARSE_ERROR = -32700  # the bytes were not JSON: raised at the transport edge, so the id is null
INVALID_REQUEST = -32600  # not a valid request object
METHOD_NOT_FOUND = -32601  # no such method
INVALID_PARAMS = -32602  # the method exists, its params are wrong
INTERNAL_ERROR = -32603  # a handler raised: the server's bug, never a crash
HEADER_MISMATCH = -32020  # 2026-07-28 over HTTP: a header disagrees with the body (section 10)
MISSING_CLIENT_CAPABILITY = -32021  # the request needs a capability the client did not declare (section 7)
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28: the version in _meta is not served here (section 6)

# The lab's policy codes (course 000). The spec chooses differently (README, "where this lab and the
# spec differ"); turning the lab into the spec is a one-line change per row.
UNKNOWN_TOOL = METHOD_NOT_FOUND  # spec: INVALID_PARAMS
TOOL_NOT_ALLOWED = INVALID_REQUEST  # spec: not specified
NOT_INITIALIZED = INVALID_REQUEST  # spec: no code; requests before `initialized` SHOULD wait

ERROR_CODES = (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
               HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)


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


def same_id(a, b) -> bool:
    """Whether two ids are the same id: 1 is not "1", nor true, nor 1.0."""
    return type(a) is type(b) and a == b

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the largest message: one stdio line or one HTTP body


def reject_constant(name: str):
    """NaN and Infinity are not JSON, though Python's json reads them."""
    raise ValueError(f"{name} is not JSON")


DECODER = json.JSONDecoder(parse_constant=reject_constant)  # made once: json.loads(text, **options) makes one a call
ENCODER = json.JSONEncoder(allow_nan=False)


def encode(message: dict) -> str:
    """One message as JSON on one line; one that JSON cannot carry, or too large, becomes INTERNAL_ERROR."""
    try:
        text = ENCODER.encode(message)
        if len(text) > MAX_MESSAGE_BYTES:  # the peer's line limit is likely ours: it could not read this
            raise ValueError(f"the message would be {len(text)} bytes, over {MAX_MESSAGE_BYTES}")
        return text
    except (TypeError, ValueError) as exc:
        return json.dumps(error_response(message.get("id"), INTERNAL_ERROR, f"internal error: {exc}"[:200]))

# ---------------------------------------------------------------------------------------------------
# ---- 2. The server ----
# One catalog, one session: handle() checks the message, the gate checks the session, _dispatch picks a
# handler from a flat table, _call_tool walks the error lattice, and notifications wait in _outbox.
# ---------------------------------------------------------------------------------------------------

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
PYTHON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
                "object": dict, "null": type(None)}

HANDSHAKE_VERSIONS = ["2025-11-25", "2025-06-18"]  # newest first: the versions initialize may agree on


def negotiate_version(requested: str) -> str:
    """Echo a version this server speaks; else the newest one not newer than asked; else the newest."""
    if requested in HANDSHAKE_VERSIONS:
        return requested
    older = [v for v in HANDSHAKE_VERSIONS if v < requested]  # dates as strings sort in time order
    return older[0] if older else HANDSHAKE_VERSIONS[0]


# Each capability's value is an object, never `true` (spec 2025-11-25, basic/lifecycle). The course's lab
# declares {"tools": {"listChanged": true}, "resources": {}, "prompts": {}}; this one also notifies resource
# and prompt list changes, and serves logging, subscriptions and completions (section 5).
HANDSHAKE_CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                          "prompts": {"listChanged": True}, "logging": {}, "completions": {}}


class MCPServer:
    """One MCP server: a catalog of tools, resources and prompts, and one session's state.

    allowed_tools is the session's allow-list (None allows every tool), set by whoever creates the
    session, never by the client: clientInfo is a claim, not an identity.
        server = MCPServer("demo", allowed_tools={"add"})
        server.add_tool("add", add, input_schema={"type": "object", "properties": {...}, "required": [...]})
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"})  # {"jsonrpc": "2.0", "id": 1, "result": {}}
    """

    # The flat table _dispatch reads (course 000): a method, and the name of the handler that serves it.
    # Later sections add their methods to it (@serves).
    HANDLERS = {"initialize": "_initialize", "ping": "_ping", "tools/list": "_list_tools", "tools/call": "_call_tool",
                "resources/list": "_list_resources", "resources/read": "_read_resource",
                "prompts/list": "_list_prompts", "prompts/get": "_get_prompt"}

    def __init__(self, name: str, version: str = "0.1.0", allowed_tools=None, instructions: str | None = None,
                 ttl_ms: int = 60_000, state_key: bytes | None = None, page_size: int = 100):
        self.server_info = {"name": name, "version": version}
        self.instructions = instructions
        if isinstance(allowed_tools, str):
            raise TypeError(f"allowed_tools is a collection of tool names, such as {{{allowed_tools!r}}}, not one string")
        self.allowed_tools = None if allowed_tools is None else set(allowed_tools)
        self.ttl_ms = ttl_ms  # how long a stateless client may cache a list result
        self.page_size = page_size  # items in one page of a */list result
        self.tools, self.resources, self.templates, self.prompts = {}, {}, {}, {}  # the catalog
        self._sharing = [weakref.ref(self)]  # the sessions on this catalog: only this one, until section 10
        # The session (handshake era): the gate, the agreed version, what the client declared and asked for.
        self._initialized = False
        self.protocol_version = self.client_info = self.client_capabilities = None
        self.log_level, self.subscriptions = "info", set()
        self._outbox = []
        self.on_queue = None  # set by a transport that can deliver a notification before the response is ready
        # Both directions (section 8): the requests running now, the server's own requests awaiting a
        # response, and the open subscriptions/listen streams. Transports call handle() from several
        # threads at once; _lock guards these and the outbox.
        self._lock = threading.Lock()
        self._running = {}  # request id -> its Context, so that notifications/cancelled reaches it
        self._waiting = {}  # id of a request this server sent -> the queue its response is put in
        self._last_request_id = 0
        self._listeners = []  # one {"id", "filter", "context"} an open subscriptions/listen stream
        self._telling = threading.RLock()  # held to acknowledge a stream, or to send on the streams: acknowledgement first
        # input_required (stateless era): each requestState is signed, expires, and is spent only once.
        self._state_key = state_key or os.urandom(32)
        self._states_spent = {}  # nonce -> expiry, forgotten once expired
        self._handlers = {method: getattr(self, name) for method, name in self.HANDLERS.items()}  # bound: to this server

    # -- the one entry point --

    def handle(self, message, stream=None) -> dict | None:
        """Handle one message: its response, or None for a notification (never a response, not even an error).

        stream, if a transport gives one, carries this request's own messages (progress, log lines, the
        server's questions) as they happen, and tells whether the client closed it (section 10).
        """
        if not isinstance(message, dict):
            # A batch (a list) or a scalar: no request object, no id to respond to (batches left in 2025-06-18).
            return error_response(None, INVALID_REQUEST, "a message must be a JSON object")
        if "method" not in message and ("result" in message or "error" in message):
            self._receive_response(message)  # the client answering a question this server asked (section 7)
            return None
        id = message.get("id") if valid_id(message.get("id")) else None  # an id we cannot echo is null
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        ctx = Context(self, id, message.get("method"), params, stream)
        try:
            result = self._serve(message, ctx)
            if result is None and not is_notification(message) and not ctx.later:
                raise TypeError(f"the handler of {message['method']} returned nothing (None): it must return its result")
            reply = response(id, result)
        except RPCError as exc:  # tier 1: a deliberate protocol error keeps its code
            reply = error_response(id, exc.code, exc.message, exc.data)
        except Exception as exc:  # tier 2: a handler bug becomes -32603, never a traceback on the wire
            reply = error_response(id, INTERNAL_ERROR, f"internal error: {exc!r}"[:200])
        if is_notification(message) or ctx.later or ctx.cancelled:
            return None  # tier 3: no response to a notification, nor (yet) to a request the client cancelled
        return reply

    def _serve(self, message: dict, ctx):
        """Check the message; hand a notification to _notice, and a request to the gate."""
        if message.get("jsonrpc") != JSONRPC:
            raise RPCError(INVALID_REQUEST, 'jsonrpc must be "2.0"')
        if not is_notification(message) and not valid_id(message["id"]):
            raise RPCError(INVALID_REQUEST, "id must be a string or an integer")  # "id": null too
        method, params = message.get("method"), message.get("params", {})
        if not isinstance(method, str):
            raise RPCError(INVALID_REQUEST, "method must be a string")
        if not isinstance(params, dict):
            raise RPCError(INVALID_REQUEST, "params must be an object")
        if is_notification(message):
            self._notice(method, params)
            return None
        return self._gate(message, method, params, ctx)

    def _notice(self, method: str, params: dict):
        """A notification from the client: notifications/initialized opens the session; the rest change nothing here."""
        if method == "notifications/initialized" and self.protocol_version:
            self._initialized = True  # the session is live only now (course 000, step 3)

    def _gate(self, message: dict, method: str, params: dict, ctx):
        """The handshake gate (course 000): nothing but initialize and ping before `initialized`.

        (message, the whole request, is for section 6, which sends a 2026-07-28 request past the gate.)
        """
        if not self._initialized and method not in ("initialize", "ping"):
            raise RPCError(NOT_INITIALIZED, "server not initialized")
        return self._dispatch(method, params, ctx)

    def _dispatch(self, method: str, params: dict, ctx):
        """Route a method to its handler: the flat table of course 000."""
        handler = self._handlers.get(method)
        if handler is None:
            raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(params, ctx)

    def _receive_response(self, message: dict):
        """Hand the client's response to the function that asked (section 7); a response to nothing asked is dropped."""
        if valid_id(message.get("id")):
            with self._lock:
                slot = self._waiting.pop(message["id"], None)
            if slot:
                slot.put(message)

    # -- the handlers, each under the request it serves --

    def _initialize(self, params, ctx):
        # initialize {protocolVersion, capabilities, clientInfo}
        if self._initialized:
            raise RPCError(INVALID_REQUEST, "session already initialized")
        self.protocol_version = negotiate_version(param(params, "protocolVersion", str))
        self.client_info = params.get("clientInfo")  # a claim, not an identity: it grants nothing
        self.client_capabilities = param(params, "capabilities", dict, {})  # what the server may ask of it
        result = {"protocolVersion": self.protocol_version, "capabilities": HANDSHAKE_CAPABILITIES,
                  "serverInfo": self.server_info}
        return result | ({"instructions": self.instructions} if self.instructions else {})

    def _ping(self, params, ctx):
        # ping {}: allowed at any time, even before the handshake
        return {}

    def _list_tools(self, params, ctx):
        # tools/list {cursor?}
        return self._page("tools", [tool["spec"] for tool in self.tools.values()], params)

    def _call_tool(self, params, ctx):
        # tools/call {name, arguments}: the error lattice of course 000, checked in this order
        name, arguments = param(params, "name", str), param(params, "arguments", dict, {})
        tool = self.tools.get(name)
        if tool is None:
            raise RPCError(UNKNOWN_TOOL, f"unknown tool: {name}")
        if self.allowed_tools is not None and name not in self.allowed_tools:
            raise RPCError(TOOL_NOT_ALLOWED, f"tool '{name}' not permitted for this session")  # before it runs
        check_arguments(tool["spec"]["inputSchema"], arguments)
        try:
            return tool_result(self._run(tool, arguments, ctx))
        except RPCError:
            raise  # a deliberate protocol error (a capability the client lacks, section 7): an error response
        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server
            report(f"the tool {name} failed", exc)  # the server's author sees where, on stderr
            # The tool failed, the protocol did not: a result the model can read and react to.
            return {"content": [text_content(f"ERROR: {str(exc) or type(exc).__name__}")], "isError": True}

    def _list_resources(self, params, ctx):
        # resources/list {cursor?}
        return self._page("resources", [resource["spec"] for resource in self.resources.values()], params)

    def _read_resource(self, params, ctx):
        # resources/read {uri}
        uri = param(params, "uri", str)
        resource, variables = self._find_resource(uri)
        if resource is None:
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        try:
            content = self._run(resource, variables, ctx)
        except KeyError:  # a URI template's function does not know this name (section 5)
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        return {"contents": [resource_contents(uri, content, resource["spec"]["mimeType"])]}

    def _find_resource(self, uri: str) -> tuple:
        """The resource at uri, and the variables its function takes (none here); (None, {}) if there is none."""
        return self.resources.get(uri), {}

    def _list_prompts(self, params, ctx):
        # prompts/list {cursor?}
        return self._page("prompts", [prompt["spec"] for prompt in self.prompts.values()], params)

    def _get_prompt(self, params, ctx):
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
        filled = {key: arguments[key] for key in known if key in arguments}
        rendered = self._run(prompt, filled, ctx)
        return {"description": prompt["spec"]["description"], "messages": prompt_messages(rendered)}

    def _page(self, key: str, items: list, params: dict) -> dict:
        """A */list result: the items under key (section 5 cuts a long list into pages)."""
        return {key: items}

    def _run(self, entry: dict, arguments: dict, ctx):
        """Call a catalog entry's function (a tool, a resource's reader, a prompt's renderer) with the client's arguments."""
        return entry["fn"](**arguments)

    # -- the catalog; registering with notify=True queues list_changed in the outbox --

    def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
                 notify: bool = False, replace: bool = False, **more):
        """Offer fn as a tool, its arguments described by input_schema (none: it takes none). Returns fn.

        A name already offered is refused, unless replace. more is kept in the tool's catalog entry, for
        later sections (section 5 derives the schema from fn's type hints).
        """
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", str(name)):
            raise ValueError(f"{name!r} is not a tool name: 1 to 128 letters, digits, '_', '-' or '.' (spec 2025-11-25)")
        schema = input_schema or {"type": "object", "properties": {}, "required": []}
        spec = {"name": name, "description": description or first_line(fn.__doc__), "inputSchema": schema}
        return self._offer("tool", self.tools, name, {"spec": spec, "fn": fn, **more}, notify, replace)

    def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                     mime_type: str = "text/plain", notify: bool = False, replace: bool = False, **more):
        """Offer data at uri: read is the content (str or bytes) or a function returning it. Returns read."""
        reader = read if callable(read) else lambda: read
        spec = {"uri": uri, "name": name or uri, "mimeType": mime_type, "description": description or first_line(reader.__doc__)}
        self._offer("resource", self.resources, uri, {"spec": spec, "fn": reader, **more}, notify, replace)
        return read

    def add_prompt(self, name: str, render, description: str = "", arguments: list = (), notify: bool = False,
                   replace: bool = False, **more):
        """Offer a prompt template: arguments are its variables ({name, required}); render(**them) is its text. Returns render."""
        spec = {"name": name, "description": description or first_line(render.__doc__), "arguments": list(arguments)}
        return self._offer("prompt", self.prompts, name, {"spec": spec, "fn": render, **more}, notify, replace)

    def _offer(self, what: str, offered: dict, key: str, entry: dict, notify: bool, replace: bool):
        """Put a tool's (resource's, prompt's) entry in the catalog under key; a second one is refused unless replace."""
        if key in offered and not replace:  # silently replacing the first would hide a mistake
            raise ValueError(f"a {what} named {key!r} is offered already; pass replace=True to replace it")
        offered[key] = entry
        self._list_changed(what + "s", notify)
        return entry["fn"]

    def _list_changed(self, listed: str, notify: bool):
        """Queue notifications/<listed>/list_changed: a bare cache invalidation, no payload (course 000)."""
        if not notify:
            return
        for server in self.sharing():  # every session on this catalog sees the change, so each is told
            if server._initialized:
                server.queue(notification(f"notifications/{listed}/list_changed"))

    def sharing(self) -> list:
        """The servers whose sessions share this catalog, this one among them."""
        servers = [ref() for ref in list(self._sharing)]
        return [server for server in servers if server is not None]

    def queue(self, message: dict):
        """Put a message for the client in the outbox; a transport that set on_queue delivers it at once."""
        with self._lock:
            self._outbox.append(message)
        if self.on_queue:
            self.on_queue()  # stdio: a tool's progress reaches the client while the tool still runs

    def drain_outbox(self) -> list:
        """Empty the outbox; what it held, oldest first (course 000: the transport drains it)."""
        with self._lock:
            messages, self._outbox = self._outbox, []
        return messages


class Context:
    """One request being served, as its handler and the function it runs see it: the request's id, method and
    params, and where the messages it sends on the way go (its own stream, if the transport gave one, else the
    outbox). Sections 5-8 teach it more: a function may ask for it, log, report progress, ask the client, and
    learn that the client cancelled.
    """

    cancelled = False  # section 8 tells: whether the client cancelled this request
    later = False  # the response comes later, when the request's stream ends (subscriptions/listen, section 8)

    def __init__(self, server: MCPServer, id, method, params: dict, stream=None):
        self.server, self.id, self.method, self.params, self.stream = server, id, method, params, stream
        self.meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        self.send = stream.send if stream else server.queue


# The content blocks a tool may return, each with the fields it must have.
CONTENT_BLOCKS = {"text": ("text",), "image": ("data", "mimeType"), "audio": ("data", "mimeType"),
                  "resource_link": ("uri", "name"), "resource": ("resource",)}


def param(params: dict, key: str, python_type: type, default=None):
    """params[key] (or default, if given, when the key is absent) if of python_type; else INVALID_PARAMS naming the key."""
    value = params.get(key, default)
    if not isinstance(value, python_type) or (isinstance(value, bool) and python_type is not bool):
        raise RPCError(INVALID_PARAMS, f"params.{key} must be {JSON_TYPES[python_type]}")
    return value


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


def is_json_type(value, schema_type: str | list) -> bool:
    """Whether value has the JSON Schema type schema_type (or one of a list of them); true and false are not integers."""
    if isinstance(schema_type, list):
        return any(is_json_type(value, one) for one in schema_type)
    if isinstance(value, bool):
        return schema_type == "boolean"
    return isinstance(value, PYTHON_TYPES.get(schema_type, object))


def text_content(text: str) -> dict:
    """A text block, the content most tools return."""
    return {"type": "text", "text": text}


def tool_result(value) -> dict:
    """Turn what a tool returned into a tools/call result.

    A content block (e.g. {"type": "image", "data": <base64>, "mimeType": "image/png"}) or a list of
    them is sent as it is: that is how a tool returns pictures, sound or files. A string becomes one text
    block; anything else becomes JSON text, and a dict is also sent as structuredContent (a dict that has
    a "type" key but not a block's fields is data, not a block).
    """
    blocks = [value] if is_content_block(value) else value
    if isinstance(blocks, list) and blocks and all(is_content_block(block) for block in blocks):
        ENCODER.encode(blocks)  # fail here, inside the tool's try, not on the wire
        return {"content": blocks}
    if isinstance(value, str):
        return {"content": [text_content(value)]}
    result = {"content": [text_content(ENCODER.encode(value))]}
    if isinstance(value, dict):
        result["structuredContent"] = value  # spec 2025-11-25, server/tools: structuredContent is an object
    return result


def is_content_block(value) -> bool:
    """Whether value is a content block: a known "type" and every field that type needs."""
    if not isinstance(value, dict) or value.get("type") not in CONTENT_BLOCKS:
        return False
    return all(field in value for field in CONTENT_BLOCKS[value["type"]])


def resource_contents(uri: str, content: str | bytes, mime_type: str) -> dict:
    """One entry of a resources/read result: text as it is, bytes as a base64 blob, anything else as JSON."""
    if isinstance(content, bytes):
        import base64
        return {"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(content).decode("ascii")}
    return {"uri": uri, "mimeType": mime_type, "text": content if isinstance(content, str) else json.dumps(content)}


def prompt_messages(rendered) -> list:
    """A prompt's messages: a string is one user message; a list may mix strings and {role, content} messages.

    A message's role is "user" or "assistant", and its content is one block (spec 2025-11-25, server/prompts, PromptMessage).
    """
    items = rendered if isinstance(rendered, list) else [rendered]
    return [{"role": "user", "content": text_content(item)} if isinstance(item, str) else item for item in items]


def first_line(doc: str | None) -> str:
    """The first line of a docstring: a tool's or a prompt's description."""
    return (doc or "").strip().split("\n")[0]


def report(what: str, exc: BaseException):
    """Write on stderr where a tool failed: the frames of its own code (file names only), then the exception.

    Never on stdout. Frames of this module and of the standard library are left out: they are not the
    tool author's to fix, and their line numbers change with the Python version.
    """
    import traceback
    stdlib = os.path.dirname(os.__file__)
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__)
              if os.path.abspath(frame.filename) != os.path.abspath(__file__) and not frame.filename.startswith(stdlib)]
    lines = [f"mcp_min: {what}:"] + [f'  File "{os.path.basename(frame.filename)}", line {frame.lineno}, in {frame.name}'
                                     + (f"\n    {frame.line}" if frame.line else "") for frame in frames]
    print("\n".join(lines + [f"{type(exc).__name__}: {exc}"]), file=sys.stderr, flush=True)

# ---------------------------------------------------------------------------------------------------
# ---- 3. The client ----
# Requests with ids counting up from 1; tools_cache, kept fresh by _pump_notifications (course 000). The
# client talks through a transport: send(message) -> the response (None for a notification), drain() -> the
# notifications that arrived, close(), and a trace(direction, message) hook: "→" client to server, "←" back.
# ---------------------------------------------------------------------------------------------------


def malformed(reply) -> str | None:
    """What makes a response unusable (course 000: result XOR error, error is {code, message}), or None."""
    if not isinstance(reply, dict):
        return "not an object"
    if ("result" in reply) == ("error" in reply):
        return "it needs exactly one of result and error"
    if "result" in reply and not isinstance(reply["result"], dict):
        return "result is not an object"
    error = reply.get("error", {"code": 0, "message": ""})
    if not isinstance(error, dict) or type(error.get("code")) is not int or not isinstance(error.get("message"), str):
        return "error is not an object with an integer code and a string message"
    return None


MAX_KEPT_NOTIFICATIONS = 10_000  # notifications a client keeps until it pumps them; older ones are dropped


class Transport:
    """What every client-side transport shares: the trace hook, the notifications received, and the
    answers it sends back when the server asks the client something (section 7)."""

    def __init__(self, trace=None):
        self.trace = trace
        self.notifications = collections.deque(maxlen=MAX_KEPT_NOTIFICATIONS)  # a flood keeps only the newest
        self.on_request = None  # set by MCPClient: the response to a request the server sent
        self.on_notification = None  # set by MCPClient: sees each notification the moment it arrives
        self._received = threading.Lock()  # HttpTransport's listen thread keeps notifications too

    def traced(self, direction: str, message):
        """Show message to the trace hook, if there is one, and return it."""
        if self.trace and message is not None:
            self.trace(direction, message)
        return message

    def receive(self, message: dict) -> dict | None:
        """A message from the server other than the awaited response: keep a notification, answer a request.

        Returns the response to send back for a request; None otherwise. A response to a request this
        client no longer waits for (one it cancelled) is dropped.
        """
        if "method" not in message:
            return None
        if is_notification(message):
            with self._received:
                self.notifications.append(message)
            if self.on_notification:
                self.on_notification(message)
            return None
        if self.on_request is None:
            return error_response(message.get("id"), METHOD_NOT_FOUND, f"this client answers no {message['method']}")
        return self.on_request(message)

    def drain(self) -> list:
        """The notifications received so far, handed over once."""
        with self._received:
            notifications = list(self.notifications)
            self.notifications.clear()
        return notifications


# What a server may ask its client while it serves a request (section 7), and the capability a client
# declares for each question it can answer.
QUESTION_CAPABILITIES = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                         "roots/list": "roots"}


class MCPClient:
    """A client over any transport: request ids count up from 1, and tools_cache is kept fresh.

        client = MCPClient(StdioTransport([sys.executable, "server_demo.py"]))
        client.connect()  # server/discover, or the handshake when the server is older (section 6)
        client.call_tool("add", {"x": 2, "y": 3})
    on_log and on_progress receive the params of notifications/message and notifications/progress.
    on_elicit, on_sample and on_roots answer the server's questions (section 7): each receives the
    question ({method, params}) and returns its answer; the client declares a capability for each one
    given. Sampling and roots are deprecated by 2026-07-28 (course 004, section 2).
    """

    def __init__(self, transport, name: str = "mcp_min", version: str = "0.1.0",
                 on_log=None, on_progress=None, on_elicit=None, on_sample=None, on_roots=None):
        self.transport = transport
        self.client_info = {"name": name, "version": version}
        self.on_log, self.on_progress = on_log, on_progress
        self.answerers = {"elicitation/create": on_elicit, "sampling/createMessage": on_sample,
                          "roots/list": on_roots}
        self.capabilities = {QUESTION_CAPABILITIES[method]: {} for method, answer in self.answerers.items() if answer}
        transport.on_request = self.answer_request  # the server asks (handshake era): answer at once
        transport.on_notification = self.hear  # progress and log lines reach their callbacks as they arrive
        self.next_id = 1
        self.listening = None  # the request of this client's open subscriptions/listen stream
        self.era = self.protocol_version = None  # connect() decides: "handshake" or "stateless"
        self.server_info = self.server_capabilities = None
        self.tools_cache = self.resources_cache = self.prompts_cache = None
        self.tools_fresh_until = 0.0  # stateless era: ttlMs says how long tools_cache may be reused

    def request(self, method: str, params: dict | None = None) -> dict:
        """Send a request and return its result; an error response raises RPCError."""
        if self.era is None and method not in ("initialize", "server/discover", "ping"):
            raise RuntimeError(f"connect first: client.connect() (or client.initialize()) before {method}")
        message = request(self.next_id, method, dict(params or {}) or None)
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

    def ping(self) -> dict:
        """ping: {} when the server is alive."""
        return self.request("ping")

    def list_tools(self, refresh: bool = False) -> list:
        """tools/list into tools_cache; a stateless cache still fresh (ttlMs) is reused unless refresh."""
        if self.tools_cache is not None and time.monotonic() < self.tools_fresh_until and not refresh:
            return self.tools_cache
        self.tools_cache, first = self.list_all("tools/list", "tools")
        self.tools_fresh_until = time.monotonic() + first.get("ttlMs", 0) / 1000
        return self.tools_cache

    def call_tool(self, name: str, arguments: dict | None = None, progress: bool = False) -> dict:
        """tools/call; if the server asks the client first (input_required), the callbacks answer."""
        params = {"name": name, "arguments": arguments or {}}
        if progress:
            params["_meta"] = {"progressToken": self.next_id}  # the request id, as the SDK does
        return self.request_and_pump("tools/call", params)

    def list_resources(self) -> list:
        """resources/list into resources_cache."""
        self.resources_cache = self.list_all("resources/list", "resources")[0]
        return self.resources_cache

    def read_resource(self, uri: str) -> dict:
        """resources/read {uri}."""
        return self.request_and_pump("resources/read", {"uri": uri})

    def list_prompts(self) -> list:
        """prompts/list into prompts_cache."""
        self.prompts_cache = self.list_all("prompts/list", "prompts")[0]
        return self.prompts_cache

    def get_prompt(self, name: str, arguments: dict | None = None) -> dict:
        """prompts/get {name, arguments}."""
        return self.request_and_pump("prompts/get", {"name": name, "arguments": arguments or {}})

    def list_all(self, method: str, key: str) -> tuple[list, dict]:
        """The items a */list method returns, and its result (section 5 follows the pages of a long list)."""
        result = self.request(method)
        return list(result[key]), result

    def request_and_pump(self, method: str, params: dict) -> dict:
        """A request, then _pump_notifications: a list that changed meanwhile is listed again at once (course 000)."""
        result = self.request(method, params)
        self._pump_notifications()
        return result

    def _pump_notifications(self) -> list:
        """Drain what the server pushed, and re-list on each list_changed (course 000); what was drained."""
        notifications = self.transport.drain()
        if not notifications:
            return notifications  # the usual case after a call, kept cheap
        refreshes = {  # list_changed is an invalidation, not a diff: fetch the list again
            "notifications/tools/list_changed": lambda: self.list_tools(refresh=True),
            "notifications/resources/list_changed": self.list_resources,
            "notifications/prompts/list_changed": self.list_prompts}
        changed = [message["method"] for message in notifications if message["method"] in refreshes]
        for method in dict.fromkeys(changed):  # each list once, however many times it changed meanwhile
            refreshes[method]()
        return notifications

    def hear(self, message: dict):
        """A notification as it arrives: progress and log lines go to their callbacks at once."""
        callback = {"notifications/message": self.on_log, "notifications/progress": self.on_progress}.get(message["method"])
        if callback:
            callback(message.get("params", {}))

    def answer_request(self, message: dict) -> dict:
        """The response to a request the server sent (a question, section 7): its callback's answer, or an error."""
        question = {"method": message.get("method"), "params": message.get("params") or {}}
        try:
            return response(message.get("id"), self.answer({"question": question})["question"])
        except RPCError as exc:
            return error_response(message.get("id"), exc.code, exc.message)
        except Exception as exc:  # the callback's bug is an error response, not a broken session
            return error_response(message.get("id"), INTERNAL_ERROR, f"the client failed: {exc!r}"[:200])

    def answer(self, questions: dict) -> dict:
        """The answers to the server's questions ({key: {method, params}}), each from the callback for its method."""
        answers = {}
        for key, question in questions.items():
            answerer = self.answerers.get(question.get("method"))
            if answerer is None:
                raise RPCError(METHOD_NOT_FOUND, f"this client cannot answer {question.get('method')}")
            answers[key] = answerer(question)
        return answers

    def close(self):
        """Close the transport."""
        self.transport.close()

# ---------------------------------------------------------------------------------------------------
# ---- 4. In memory ----
# The course's proof of layering: json.dumps, json.loads, server.handle, and back the same way. The first
# transport (section 3 says what every transport has); stdio and HTTP follow in sections 9 and 10.
# ---------------------------------------------------------------------------------------------------

def print_trace(direction: str, message: dict, width: int | None = None):
    """A trace hook that prints each message as one JSON line behind its arrow, cut to width (with "…") if given."""
    line = f"{direction} {json.dumps(message, ensure_ascii=False)}"
    if width is not None and len(line) > width:
        line = line[:width - 1] + "…"
    print(line, flush=True)


class InMemoryTransport(Transport):
    """The course's proof of layering: client and server share nothing but JSON text."""

    def __init__(self, server: MCPServer, trace=None):
        super().__init__(trace)
        self.server = server

    def send(self, message: dict) -> dict | None:
        """json.dumps, json.loads, server.handle; the outbox and the response come back as JSON text too."""
        wire = json.dumps(self.traced("→", message))
        self.server.on_queue = self.carry  # what the server sends while it works crosses at once
        reply = self.server.handle(json.loads(wire))
        if self.server._outbox:
            self.carry()  # the outbox first: notifications arrive before the response
        return self.traced("←", None if reply is None else DECODER.decode(encode(reply)))

    def carry(self):
        """Carry what the server queued across the JSON boundary; a question from the server is answered at once."""
        for message in self.server.drain_outbox():
            answer = self.receive(self.traced("←", DECODER.decode(encode(message))))
            if answer is not None:
                self.server.handle(DECODER.decode(ENCODER.encode(self.traced("→", answer))))

    def close(self):
        """Nothing to release in memory."""

# ---------------------------------------------------------------------------------------------------
# ---- 5. Tools from type hints ----
# The decorators in the official SDK's style (course 002): a function's type hints become its inputSchema,
# its docstring its description; what it returns becomes content blocks. Resources may be URI templates;
# every */list answers in pages; and the small methods real hosts call: logging, subscriptions, completions.
# ---------------------------------------------------------------------------------------------------

# From here on, a section grows the classes above it. @extend(cls) puts the function below on cls: a new
# method, or one that takes the place of a method of the same name. The one it replaces is first kept under
# a name of its own (offer_tool = MCPServer.add_tool), and the new one calls it: section 2's code still runs,
# and the later section adds what it teaches around it.


def extend(cls, name: str | None = None):
    """Decorator: put the function (or property) below on cls, in place of any method of that name (or of name)."""
    def add(member):
        function = member.fget if isinstance(member, property) else member
        function.__qualname__ = f"{cls.__name__}.{name or function.__name__}"  # as errors and tracebacks name a method
        setattr(cls, name or function.__name__, member)
        return member
    return add


def serves(method: str):
    """Decorator: add the function below to MCPServer as the handler of method, in its flat table."""
    def add(handler):
        setattr(MCPServer, handler.__name__, handler)
        MCPServer.HANDLERS[method] = handler.__name__
        return handler
    return add


LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]  # RFC 5424


@extend(MCPServer)
def tool(self, name: str | None = None, description: str = "", notify: bool = False, headers: dict | None = None,
         requires: tuple = ()):
    """Decorator in the official SDK's style: @server.tool() offers the function below it (so does @server.tool)."""
    if callable(name):  # @server.tool without parentheses: name is the function itself
        return self.add_tool(name.__name__, name)
    return lambda fn: self.add_tool(name or fn.__name__, fn, description, notify=notify, headers=headers,
                                    requires=requires)


@extend(MCPServer)
def resource(self, uri: str, name: str | None = None, mime_type: str = "text/plain"):
    """Decorator: @server.resource("policy://{doc_id}") serves what the function returns."""
    if not isinstance(uri, str):  # @server.resource without its URI: say so now, not at the first read
        raise TypeError(f"a resource needs its URI first, as in @server.resource(\"notes://{{name}}\"), not {uri!r}")
    return lambda fn: self.add_resource(uri, fn, name or fn.__name__, mime_type=mime_type)


@extend(MCPServer)
def prompt(self, name: str | None = None, description: str = ""):
    """Decorator: @server.prompt() offers a prompt template (so does @server.prompt)."""
    if callable(name):  # @server.prompt without parentheses
        return self.add_prompt(name.__name__, name)
    return lambda fn: self.add_prompt(name or fn.__name__, fn, description)


offer_tool = MCPServer.add_tool  # section 2's: the schema as given


@extend(MCPServer)
def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
             notify: bool = False, headers: dict | None = None, requires: tuple = (), replace: bool = False):
    """Offer fn as a tool; without input_schema, derive it from fn's signature. Returns fn.

    headers maps an argument to the name of the Mcp-Param-{Name} header that repeats it over HTTP
    (2026-07-28's x-mcp-header); requires names the client capabilities the tool cannot run without
    (section 7). A name already offered is refused, unless replace.
    """
    schema, context, _ = signature_schema(fn, hinted=input_schema is None)
    schema = input_schema or schema
    for argument, header in (headers or {}).items():
        schema["properties"][argument]["x-mcp-header"] = header_name(header, schema["properties"][argument])
    return offer_tool(self, name, fn, description, schema, notify, replace, context=context, requires=tuple(requires))


offer_resource = MCPServer.add_resource  # section 2's: a resource at one fixed uri


@extend(MCPServer)
def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                 mime_type: str = "text/plain", notify: bool = False, replace: bool = False):
    """Offer data at uri: read is the content (str or bytes) or a function returning it. Returns read.

    A uri with {variables} is a URI template: read gets each variable as a keyword argument,
    and raises KeyError for a value it does not know (the client gets "unknown resource"). With
    replace, offering a uri again replaces its content, and its subscribers hear of it.
    """
    reader = read if callable(read) else lambda: read
    _, context, choices = signature_schema(reader)
    if "{" not in uri:
        replaced = uri in self.resources  # (if not replace, offering it again raises)
        offer_resource(self, uri, read, name, description, mime_type, notify, replace, context=context)
        if replaced:
            self.resource_updated(uri)  # changed through the server's API: tell subscribers
        return read
    spec = {"uriTemplate": uri, "name": name or uri, "mimeType": mime_type,
            "description": description or first_line(reader.__doc__)}
    entry = {"spec": spec, "fn": reader, "pattern": template_pattern(uri), "spanning": set(re.findall(r"\{\+(\w+)\}", uri)),
             "choices": choices, "context": context}
    self._offer("resource", self.templates, uri, entry, notify, replace)
    return read


offer_prompt = MCPServer.add_prompt  # section 2's: the variables as given


@extend(MCPServer)
def add_prompt(self, name: str, render, description: str = "", notify: bool = False, replace: bool = False):
    """Offer a prompt template: render's parameters are its variables; it returns the text. Returns render."""
    schema, context, choices = signature_schema(render)
    arguments = [{"name": key, "required": key in schema["required"]} for key in schema["properties"]]
    return offer_prompt(self, name, render, description, arguments, notify, replace, choices=choices, context=context)


def header_name(name: str, schema: dict) -> str:
    """name, if it may follow Mcp-Param- for an argument of this schema (2026-07-28, "x-mcp-header"); else ValueError."""
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):  # an HTTP token (RFC 9110, section 5.6.2)
        raise ValueError(f"{name!r} cannot be part of a header name")
    if schema.get("type") not in ("string", "integer", "boolean"):
        raise ValueError(f"only a string, integer or boolean argument can travel as header Mcp-Param-{name}")
    return name


def json_schema(hint) -> dict:
    """The JSON Schema of one type hint: str, int, float, bool, list, dict, list[X], Literal, Optional."""
    if hint in JSON_TYPES:
        return {"type": JSON_TYPES[hint]}  # a plain type: typing is not needed (it costs a server's start-up)
    import typing
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"type": JSON_TYPES[type(args[0])], "enum": list(args)}
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        hints_of_value = [arg for arg in args if arg is not type(None)]  # Optional[X] is Union[X, None]
        inner = json_schema(hints_of_value[0])
        return {**inner, "type": [inner["type"], "null"]}  # Optional[X]: X or null
    if origin is list and args:
        return {"type": "array", "items": json_schema(args[0])}
    return {"type": JSON_TYPES.get(origin or hint, "string")}


def signature_schema(fn, hinted: bool = False) -> tuple[dict, str | None, dict]:
    """From fn's signature: its inputSchema, its Context parameter's name, and its Literal choices.

    With hinted, every parameter needs a type hint (a tool's do: the hint is the argument's JSON type);
    a prompt's and a template's variables are strings on the wire, so theirs default to str.
    """
    hints, defaults = parameters_of(fn)
    properties, required, context, choices = {}, [], None, {}
    for name in hints:
        if is_context(hints[name]):  # ctx: Context (or Context = None)
            context = name  # the server fills it in; the client never sees it
            continue
        if hinted and hints[name] is None:
            raise TypeError(f"{fn.__name__}'s parameter {name!r} needs a type hint, such as {name}: int or {name}: str: "
                            "the hint says what JSON the client must send")
        properties[name] = json_schema(hints[name] or str)
        if "enum" in properties[name]:
            choices[name] = [str(choice) for choice in properties[name]["enum"]]
        if name not in defaults:
            required.append(name)
        elif isinstance(defaults[name], (str, int, float, bool)):
            properties[name]["default"] = defaults[name]
    return {"type": "object", "properties": properties, "required": required}, context, choices


def parameters_of(fn) -> tuple[dict, dict]:
    """fn's parameters in order, {name: its hint or None}, and their defaults {name: default}.

    A function's own attributes say it all; inspect and typing (slow to import, a server's start-up) are
    asked only for another callable, or for hints written as strings.
    """
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x0C:  # not a plain function, or *args/**kwargs: let inspect read it
        import inspect
        signature = inspect.signature(fn)
        annotations = {name: p.annotation for name, p in signature.parameters.items() if p.annotation is not p.empty}
        defaults = {name: p.default for name, p in signature.parameters.items() if p.default is not p.empty}
        names = list(signature.parameters)
    else:
        names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        positional = names[:code.co_argcount]
        defaults = dict(zip(positional[len(positional) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
        defaults |= fn.__kwdefaults__ or {}
        annotations = getattr(fn, "__annotations__", {})
    if any(isinstance(hint, str) for hint in annotations.values()):  # from __future__ import annotations
        import typing
        annotations = typing.get_type_hints(fn)
    return {name: annotations.get(name) for name in names}, defaults


def is_context(hint) -> bool:
    """Whether a hint asks for the Context: Context, or Optional[Context] (ctx: Context = None)."""
    if hint is Context:
        return True
    return hint is not None and hint not in JSON_TYPES and Context in getattr(hint, "__args__", ())


run_plain = MCPServer._run  # section 2's: the function called with the client's arguments


@extend(MCPServer)
def _run(self, entry: dict, arguments: dict, ctx):
    """A function with a Context parameter gets ctx there; an async def one (course 002) is run to its end here."""
    if entry.get("context"):
        arguments = {**arguments, entry["context"]: ctx}
    value = run_plain(self, entry, arguments, ctx)
    if isinstance(value, types.CoroutineType):
        return run_coroutine(value, entry["fn"].__name__)
    return value


def run_coroutine(coroutine, name: str):
    """What a coroutine returns, run to its end: on a loop of its own, beside one already running (a notebook's)."""
    import asyncio
    try:
        asyncio.get_running_loop()  # a notebook's thread has a loop running already: run it beside
    except RuntimeError:
        return asyncio.run(coroutine)
    outcome = {}
    runner = threading.Thread(target=lambda: outcome.update(value=asyncio.run(coroutine)))
    runner.start()
    runner.join()
    if "value" not in outcome:
        raise RuntimeError(f"{name} failed: see stderr")
    return outcome["value"]


def template_pattern(uri_template: str) -> re.Pattern:
    """A regular expression for a URI template (RFC 6570): {name} matches one path segment, {+name} may span several."""
    pattern = ""
    for text, plus, name in re.findall(r"([^{]*)(?:\{(\+?)(\w+)\})?", uri_template):
        pattern += re.escape(text)
        if name:
            pattern += f"(?P<{name}>.+)" if plus else f"(?P<{name}>[^/]+)"
    return re.compile(pattern)


def template_variables(pattern: re.Pattern, uri: str, spanning: set) -> dict | None:
    """The decoded variables of uri if it matches the template's pattern and each is safe to hand over; else None.

    Decoding comes after matching, so %2F inside {name} would become a "/" the pattern never saw: such a
    value, a ".." step or a control character never reaches the function (lesson 5). Only {+name} may
    carry "/".
    """
    import urllib.parse
    match = pattern.fullmatch(uri)
    if match is None:
        return None
    variables = {}
    for name, raw in match.groupdict().items():
        try:
            value = urllib.parse.unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return None  # %ff and the like: not text
        if "/" in value and name not in spanning:
            return None
        if ".." in value.split("/") or any(ord(char) < 32 or char == "\x7f" for char in value):
            return None
        variables[name] = value
    return variables


find_fixed = MCPServer._find_resource  # section 2's: a resource at exactly that uri


@extend(MCPServer)
def _find_resource(self, uri: str) -> tuple:
    """The resource at uri, else the first URI template uri matches, with its variables; (None, {}) if none."""
    resource, variables = find_fixed(self, uri)
    if resource is not None:
        return resource, variables
    for template in list(self.templates.values()):
        variables = template_variables(template["pattern"], uri, template["spanning"])
        if variables is not None:
            return template, variables
    return None, {}


list_whole = MCPServer._page  # section 2's: every item at once


@extend(MCPServer)
def _page(self, key: str, items: list, params: dict) -> dict:
    """One page of a */list result: from the cursor on, with nextCursor while more remain."""
    start = 0
    if "cursor" in params:
        start = cursor_offset(params["cursor"], key)
    if not 0 <= start < max(len(items), 1):
        raise RPCError(INVALID_PARAMS, f"unknown cursor: {params['cursor']!r}")
    result = list_whole(self, key, items[start:start + self.page_size], params)
    if start + self.page_size < len(items):
        result["nextCursor"] = page_cursor(key, start + self.page_size)
    return result


def page_cursor(key: str, offset: int) -> str:
    """An opaque cursor for the page of a */list result that starts at offset."""
    import base64
    return base64.urlsafe_b64encode(f"{key}:{offset}".encode()).decode("ascii")


def cursor_offset(cursor, key: str) -> int:
    """Where the page a cursor names starts; INVALID_PARAMS for a cursor this server did not issue for key."""
    import base64
    try:
        listed, _, offset = base64.urlsafe_b64decode(cursor).decode("ascii").partition(":")
        if listed == key and offset.isdecimal() and offset.isascii():
            return int(offset)
    except (TypeError, ValueError):  # binascii.Error and UnicodeDecodeError are ValueErrors
        pass
    raise RPCError(INVALID_PARAMS, f"unknown cursor: {cursor!r}")


@serves("resources/templates/list")
def _list_templates(self, params, ctx):
    # resources/templates/list {cursor?}
    return self._page("resourceTemplates", [template["spec"] for template in self.templates.values()], params)


@serves("logging/setLevel")
def _set_level(self, params, ctx):
    # logging/setLevel {level}: log lines below it are not sent
    if params.get("level") not in LOG_LEVELS:
        raise RPCError(INVALID_PARAMS, f"unknown log level {params.get('level')!r}; one of {LOG_LEVELS}")
    self.log_level = params["level"]
    return {}


@serves("resources/subscribe")
def _subscribe(self, params, ctx):
    # resources/subscribe {uri}
    self.subscriptions.add(param(params, "uri", str))
    return {}


@serves("resources/unsubscribe")
def _unsubscribe(self, params, ctx):
    # resources/unsubscribe {uri}
    self.subscriptions.discard(param(params, "uri", str))
    return {}


@extend(MCPServer)
def resource_updated(self, uri: str):
    """Tell each subscribed client that the resource at uri changed (notifications/resources/updated)."""
    for server in self.sharing():  # the resource belongs to the catalog: every session may have subscribed
        if uri in server.subscriptions and server._initialized:
            server.queue(notification("notifications/resources/updated", {"uri": uri}))


@serves("completion/complete")
def _complete(self, params, ctx):
    # completion/complete {ref: {type, name | uri}, argument: {name, value}}
    ref, argument = param(params, "ref", dict), param(params, "argument", dict)
    catalog = self.prompts if ref.get("type") == "ref/prompt" else self.templates
    offered = catalog.get(str(ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")))
    if offered is None or not isinstance(argument.get("name"), str):
        raise RPCError(INVALID_PARAMS, f"nothing to complete for {ref} and {argument}")
    typed = str(argument.get("value", ""))
    values = [choice for choice in offered["choices"].get(argument["name"], []) if choice.startswith(typed)]
    return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}


MAX_PAGES = 1000  # a list that never ends is a broken server: stop following nextCursor here


list_first_page = MCPClient.list_all  # section 3's: one request


@extend(MCPClient)
def list_all(self, method: str, key: str) -> tuple[list, dict]:
    """Every item of a */list method, following nextCursor page by page; and the first page's result."""
    items, first = list_first_page(self, method, key)
    result = first
    cursors = set()
    while "nextCursor" in result:
        cursor = result["nextCursor"]
        if cursor in cursors or len(cursors) == MAX_PAGES:
            raise RPCError(INVALID_PARAMS, f"{method} sent the cursor {cursor!r} again, or too many pages")
        cursors.add(cursor)
        result = self.request(method, {"cursor": cursor})
        items += result[key]
    return items, first


@extend(MCPClient)
def list_resource_templates(self) -> list:
    """resources/templates/list."""
    return self.list_all("resources/templates/list", "resourceTemplates")[0]

# ---------------------------------------------------------------------------------------------------
# ---- 6. Versions and eras ----
# Handshake era: initialize, notifications/initialized, a session (course 000). Stateless era
# (2026-07-28, course 004): no handshake; every request carries its version and the client's
# capabilities in params._meta, and every result says its resultType; lists carry cache hints.
# ---------------------------------------------------------------------------------------------------

STATELESS_VERSIONS = ["2026-07-28"]
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
PUBLISHED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

# What a 2026-07-28 client can use here: list changes and resource updates on a subscriptions/listen
# stream (section 8), logging by each request's own _meta level, and completions.
STATELESS_CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                          "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
HANDSHAKE_ONLY = {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
STATELESS_ONLY = {"subscriptions/listen"}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read",
             "prompts/list"}


def is_stateless(message: dict) -> bool:
    """Whether a request is served in the stateless era: its _meta names a protocol version."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return message.get("method") == "server/discover" or (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta)


@extend(Context)
@property
def stateless(self) -> bool:
    """Whether this request is served in the stateless era: its _meta names a protocol version."""
    return PROTOCOL_VERSION_KEY in self.meta


handshake_gate = MCPServer._gate  # section 2's gate: a request of the handshake era still passes it


@extend(MCPServer)
def _gate(self, message: dict, method: str, params: dict, ctx):
    """A 2026-07-28 request passes no gate: it carries what the handshake would have said (course 004)."""
    if "_meta" in params:
        param(params, "_meta", dict)  # read by the era check, Context and the stateless era
    if is_stateless(message):
        return self._serve_stateless(method, params, ctx)
    return handshake_gate(self, message, method, params, ctx)


dispatch_in_any_era = MCPServer._dispatch  # section 2's flat table, which holds the methods of both eras


@extend(MCPServer)
def _dispatch(self, method: str, params: dict, ctx):
    """A method of the other era is not found in this one: initialize in 2026-07-28, subscriptions/listen before it."""
    other_era = HANDSHAKE_ONLY if ctx.stateless else STATELESS_ONLY  # the methods this request's era lacks
    if method in other_era:
        raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
    return dispatch_in_any_era(self, method, params, ctx)


@extend(MCPServer)
def _serve_stateless(self, method: str, params: dict, ctx):
    """Serve one self-contained 2026-07-28 request: no gate, and nothing read from the session."""
    meta = param(params, "_meta", dict, {})
    if PROTOCOL_VERSION_KEY not in meta:  # server/discover too: its _meta is required (2026-07-28)
        raise RPCError(INVALID_PARAMS, f"_meta must carry {PROTOCOL_VERSION_KEY}")
    if meta[PROTOCOL_VERSION_KEY] not in STATELESS_VERSIONS:
        raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                       {"supported": SUPPORTED_VERSIONS, "requested": meta[PROTOCOL_VERSION_KEY]})
    if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
        raise RPCError(INVALID_PARAMS, f"_meta must carry {CLIENT_CAPABILITIES_KEY}")
    if LOG_LEVEL_KEY in meta and meta[LOG_LEVEL_KEY] not in LOG_LEVELS:
        raise RPCError(INVALID_PARAMS, f"unknown log level {meta[LOG_LEVEL_KEY]!r}; one of {LOG_LEVELS}")
    result = self._dispatch(method, params, ctx)
    if result is None:
        return None  # subscriptions/listen: the stream stays open; its response comes when it ends
    result = {**result, "resultType": result.get("resultType", "complete"), "_meta": {SERVER_INFO_KEY: self.server_info}}
    if method in CACHEABLE and result["resultType"] == "complete":
        result |= {"ttlMs": self.ttl_ms, "cacheScope": "private"}  # private: what one may see depends on its allow-list
    return result


@serves("server/discover")
def _discover(self, params, ctx):
    # server/discover {_meta}: what this server speaks, asked without a handshake
    result = {"supportedVersions": SUPPORTED_VERSIONS, "capabilities": STATELESS_CAPABILITIES}
    return result | ({"instructions": self.instructions} if self.instructions else {})


send_request = MCPClient.request  # section 3's: the request as it is


@extend(MCPClient, "request")  # (named apart from section 1's request(), which builds a message)
def request_with_meta(self, method: str, params: dict | None = None) -> dict:
    """Send a request and return its result; in the stateless era (and to discover it) params carry _meta."""
    if self.era == "stateless" or method == "server/discover":  # each request says it all (course 004)
        params = self.with_meta(dict(params or {}))
    return send_request(self, method, params)


@extend(MCPClient)
def with_meta(self, params: dict) -> dict:
    """params with the _meta every 2026-07-28 request carries: version, capabilities, client info (course 004)."""
    meta = {PROTOCOL_VERSION_KEY: STATELESS_VERSIONS[0], CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: self.client_info}
    return {**params, "_meta": {**params.get("_meta", {}), **meta}}


@extend(MCPClient)
def discover(self) -> dict:
    """server/discover: what a 2026-07-28 server speaks, asked without a handshake."""
    result = self.request("server/discover")
    self.server_info = result.get("_meta", {}).get(SERVER_INFO_KEY)
    self.server_capabilities = result.get("capabilities")
    return result


@extend(MCPClient)
def connect(self, mode: str = "auto") -> dict:
    """Choose the era: "auto" probes with server/discover and falls back to the handshake; "handshake" does not probe.

    (The official SDK calls the second mode "legacy".)
    """
    if mode not in ("auto", "handshake"):
        raise ValueError(f"mode is 'auto' or 'handshake', not {mode!r}")
    if mode == "auto":
        whole = getattr(self.transport, "timeout", None)  # a silent server costs one timeout in all, not two
        try:
            self.limit_wait(whole and whole / 3)
            result = self.discover()
        except RPCError:
            return self.initialize()  # an older server: -32601 or the like
        except TimeoutError:
            self.limit_wait(whole and whole * 2 / 3)
            return self.initialize()  # an older server that ignores what it does not know
        finally:
            self.limit_wait(whole)
        if STATELESS_VERSIONS[0] in result.get("supportedVersions", []):
            self.era, self.protocol_version = "stateless", STATELESS_VERSIONS[0]
            return result
    return self.initialize()


@extend(MCPClient)
def limit_wait(self, seconds: float | None):
    """Wait at most seconds for each response from now on (a transport in memory never waits)."""
    if seconds:
        self.transport.timeout = seconds

# ---------------------------------------------------------------------------------------------------
# ---- 7. Asking the client ----
# A running tool, prompt or resource function gets a Context: it may log, report progress, and ask the
# client questions. In 2026-07-28 a question ends the round: the server answers input_required, and the
# client sends the request again with the answers (course 004, section 6). The handshake era sends the
# question as a request of the server's own and waits; handle() hands it the response (section 2), read
# while the tool waits (section 8).
# ---------------------------------------------------------------------------------------------------

STATE_TTL_S = 600  # a requestState is refused after ten minutes: time enough for a person to answer
ASK_TIMEOUT_S = 300  # how long a handshake-era function waits for the client's answer
MAX_INPUT_ROUNDS = 10  # input_required retries before the client gives up (the SDK's bound too)


class InputRequired(BaseException):
    """Raised by Context.ask when the client has not answered yet; the handler responds input_required.

    A BaseException, like SystemExit: a tool's own `except Exception` must not swallow the question.
    """

    def __init__(self, questions: dict):
        super().__init__(", ".join(questions))
        self.questions = questions


# Section 2's Context learns here what a function may do with the client: log, report progress, ask. A tool,
# prompt or resource function asks for it with a parameter annotated `Context`, which its inputSchema leaves
# out (section 5):
#     @server.tool()
#     def count_slowly(n: int, ctx: Context) -> str:
#         for i in range(n):
#             if ctx.cancelled:
#                 return "stopped"
#             ctx.progress(i + 1, total=n)
#         return "done"
Context.last_progress = None  # the progress a function last reported for this request


@extend(Context)
@property
def progress_token(self):
    """The token the client gave for this request's progress; None: it wants no progress."""
    return self.meta.get("progressToken")


@extend(Context)
@property
def log_level(self) -> str | None:
    """The lowest level of log line the client wants: 2026-07-28 has no logging/setLevel, so its request says (or gets none)."""
    return self.meta.get(LOG_LEVEL_KEY) if self.stateless else self.server.log_level


@extend(Context)
@property
def client_capabilities(self) -> dict:
    """What the client declared it can do: in this request's _meta (2026-07-28), else at initialize."""
    if self.stateless:
        return self.meta.get(CLIENT_CAPABILITIES_KEY, {})
    return self.server.client_capabilities or {}


@extend(Context)
def require(self, capabilities):
    """Refuse with MISSING_CLIENT_CAPABILITY, naming them, unless the client declared each capability."""
    missing = {name: {} for name in capabilities if name not in self.client_capabilities}
    if missing:
        raise RPCError(MISSING_CLIENT_CAPABILITY, f"the client did not declare {', '.join(missing)}",
                       {"requiredCapabilities": missing})


@extend(Context)
def log(self, level: str, data, logger: str | None = None):
    """Send notifications/message, unless level is below the one the client set."""
    if self.log_level in LOG_LEVELS and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
        params = {"level": level, "data": data} | ({"logger": logger} if logger else {})
        self.send(notification("notifications/message", params))


@extend(Context)
def progress(self, progress: float, total: float | None = None, message: str | None = None):
    """Send notifications/progress for the request's progressToken; progress must grow."""
    if self.progress_token is None:
        return
    if self.last_progress is not None and progress <= self.last_progress:
        raise ValueError(f"progress must increase: {progress} after {self.last_progress}")
    self.last_progress = progress
    params = {"progressToken": self.progress_token, "progress": progress, "total": total, "message": message}
    self.send(notification("notifications/progress", {k: v for k, v in params.items() if v is not None}))


@extend(Context)
def ask(self, questions: dict) -> dict:
    """Put several questions to the client at once ({key: {method, params}}); its answers, by the same keys.

    In 2026-07-28 a question not yet answered ends this round: the server responds input_required, the
    client retries with the answers, and the function runs again from the top (spec 2026-07-28, basic,
    "Multi Round-Trip Requests"). So the code before a question must be safe to run once a round.
    """
    self.require(QUESTION_CAPABILITIES[question["method"]] for question in questions.values())
    unanswered = {key: question for key, question in questions.items() if key not in self.answers}
    if unanswered and self.stateless:
        raise InputRequired(unanswered)
    if unanswered:
        self.answers |= self._ask_now(unanswered)
    return {key: self.answers[key] for key in questions}


@extend(Context)
def _ask_now(self, questions: dict) -> dict:
    """Handshake era: send each question as a request of the server's own, then wait for the responses.

    The transport keeps reading while this waits, and hands each response to MCPServer.handle, which
    passes it here (section 8).
    """
    import queue
    waiting = {}
    for key, question in questions.items():
        id, slot = self.server._expect_response()
        waiting[key] = id, slot
        self.send(request(id, question["method"], question.get("params")))
    answers, deadline = {}, time.monotonic() + ASK_TIMEOUT_S
    for key, (id, slot) in waiting.items():
        reply = None
        while reply is None and not self.cancelled and time.monotonic() < deadline:
            try:
                reply = slot.get(timeout=0.05)
            except queue.Empty:
                continue  # look at cancelled and the clock again
        if reply is None:
            self.server._forget_requests([id for id, _ in waiting.values()])
            raise RuntimeError(f"no answer to {questions[key]['method']} ('{key}')")
        if "error" in reply:
            raise RuntimeError(f"the client could not answer {questions[key]['method']}: {reply['error']}")
        answers[key] = reply["result"]
    return answers


@extend(Context)
def elicit(self, key: str, message: str, schema: dict) -> dict:
    """Ask the user a question through the client (elicitation/create): {action, content?}."""
    question = {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}
    return self.ask({key: question})[key]


@extend(Context)
def sample(self, key: str, prompt: str, max_tokens: int = 256, **params) -> dict:
    """Borrow the client's model (sampling/createMessage): {role, content, model, stopReason}.

    Deprecated by 2026-07-28 (course 004, section 2): new servers should not depend on it.
    """
    messages = [{"role": "user", "content": text_content(prompt)}]
    question = {"method": "sampling/createMessage", "params": {"messages": messages, "maxTokens": max_tokens, **params}}
    return self.ask({key: question})[key]


@extend(Context)
def roots(self, key: str = "roots") -> list:
    """The folders the client allows (roots/list): [{uri, name?}].

    Deprecated by 2026-07-28 (course 004, section 2): new servers should not depend on it.
    """
    return self.ask({key: {"method": "roots/list", "params": {}}})[key].get("roots", [])


@extend(MCPServer)
def _expect_response(self) -> tuple:
    """A fresh id for a request of the server's own, and the queue its response will be put in."""
    with self._lock:
        self._last_request_id += 1
        import queue
        slot = self._waiting[self._last_request_id] = queue.Queue(maxsize=1)
    return self._last_request_id, slot


@extend(MCPServer)
def _forget_requests(self, ids: list):
    """Stop waiting for these requests' responses (the function gave up or was cancelled)."""
    with self._lock:
        for id in ids:
            self._waiting.pop(id, None)


run_with_context = MCPServer._run  # section 5's: ctx handed over, a coroutine run to its end


@extend(MCPServer)
def _run(self, entry: dict, arguments: dict, ctx):
    """Before a function runs: the answers the client gave in earlier rounds, and the capabilities it cannot run without."""
    ctx.binding = (ctx.method, ctx.params.get("name", ctx.params.get("uri")), arguments)  # what a requestState is for
    ctx.answers = self._answers(*ctx.binding, ctx.params)
    ctx.require(entry.get("requires", ()))  # a tool may say up front what it cannot run without
    return run_with_context(self, entry, arguments, ctx)


dispatch_one_round = MCPServer._dispatch  # section 6's: a request served to its end


@extend(MCPServer)
def _dispatch(self, method: str, params: dict, ctx):
    """A function that asked what the client has not answered yet ends this round: the result is input_required."""
    try:
        return dispatch_one_round(self, method, params, ctx)
    except InputRequired as ask:  # 2026-07-28: the client answers, then sends the request again
        return self._input_required(ask, *ctx.binding, ctx.answers)


@extend(MCPServer)
def _answers(self, method: str, name: str, arguments: dict, params: dict) -> dict:
    """The client's answers so far: earlier rounds' from the signed requestState, this round's from inputResponses."""
    if PROTOCOL_VERSION_KEY not in (params.get("_meta") or {}):
        return {}  # the handshake era has no rounds: a requestState there is not one of its fields
    answers = {}
    if "requestState" in params:
        answers = self._spend_state(params["requestState"], method, name, arguments)
    responses = param(params, "inputResponses", dict, {})
    for key, value in responses.items():
        if not isinstance(value, dict):
            raise RPCError(INVALID_PARAMS, f"inputResponses.{key} must be an object")
    return answers | responses  # without a requestState, this round's answers are used all the same


@extend(MCPServer)
def _input_required(self, ask: InputRequired, method: str, name: str, arguments: dict, answers: dict) -> dict:
    """The result that asks the client: its questions, and a state carrying every answer given so far."""
    return {"resultType": "input_required", "inputRequests": ask.questions,
            "requestState": self._sign_state(method, name, arguments, answers)}


@extend(MCPServer)
def _sign_state(self, method: str, name: str, arguments: dict, answers: dict) -> str:
    """A requestState bound to this request, expiring, and signed, so that a client can neither forge nor reuse it."""
    import base64
    payload = {"method": method, "name": name, "arguments": arguments, "answers": answers,
               "expires": int(time.time()) + STATE_TTL_S, "nonce": os.urandom(12).hex()}
    body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode("ascii")
    return body + "." + self._mac(body)


@extend(MCPServer)
def _spend_state(self, state, method: str, name: str, arguments: dict) -> dict:
    """Accept a requestState once, for the request it was minted for, before it expires; the answers it carries.

    The spec calls requestState attacker-controlled (2026-07-28, basic, "Multi Round-Trip Requests").
    """
    import base64, hmac
    body, _, mac = state.partition(".") if isinstance(state, str) else ("", "", "")
    if not mac.isascii() or not hmac.compare_digest(mac, self._mac(body)):
        raise RPCError(INVALID_PARAMS, "requestState is not one this server signed")
    payload = json.loads(base64.urlsafe_b64decode(body))  # signed by us, so it is our JSON
    now = time.time()
    if [payload["method"], payload["name"], payload["arguments"]] != [method, name, arguments]:
        raise RPCError(INVALID_PARAMS, "requestState belongs to another request")
    if payload["expires"] < now:
        raise RPCError(INVALID_PARAMS, "requestState has expired")
    while self._states_spent:  # the oldest first: every state lives STATE_TTL_S, so they expire in order
        nonce, expires = next(iter(self._states_spent.items()))
        if expires >= now:
            break
        del self._states_spent[nonce]  # an expired state is refused anyway: forget it
    if payload["nonce"] in self._states_spent:
        raise RPCError(INVALID_PARAMS, "requestState was used already")
    self._states_spent[payload["nonce"]] = payload["expires"]
    return payload["answers"]


@extend(MCPServer)
def _mac(self, body: str) -> str:
    """The HMAC-SHA256 of body under this server's key, in hex."""
    import hashlib, hmac
    return hmac.new(self._state_key, body.encode(), hashlib.sha256).hexdigest()


one_round = MCPClient.request_and_pump  # section 3's: one request, its response, the notifications pumped


@extend(MCPClient)
def request_and_pump(self, method: str, params: dict) -> dict:
    """A request the server may answer input_required (tools/call, prompts/get, resources/read): answer, send it again.

    Each retry is a new request with a new id, carrying this round's answers and the requestState
    exactly as the server sent it (spec 2026-07-28, basic, "Multi Round-Trip Requests").
    """
    for _ in range(MAX_INPUT_ROUNDS):
        result = one_round(self, method, params)
        if result.get("resultType") != "input_required":
            return result
        params = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
        params["inputResponses"] = self.answer(result.get("inputRequests", {}))
        if "requestState" in result:
            params["requestState"] = result["requestState"]
    raise RuntimeError(f"{method} still needs input after {MAX_INPUT_ROUNDS} rounds")

# ---------------------------------------------------------------------------------------------------
# ---- 8. Both directions ----
# A session is not one request at a time. While a tool runs, the client may ping, cancel it, or answer
# the server's own request (a question, in the handshake era); a 2026-07-28 client keeps a
# subscriptions/listen stream open to hear list changes. Transports call MCPServer.handle from several
# threads at once: a request that runs long keeps its thread while another reads on (sections 9 and 10).
# ---------------------------------------------------------------------------------------------------


Context.cancelled_by_client = False  # set by notifications/cancelled (one assignment: no lock needed)


@extend(Context)
@property
def cancelled(self) -> bool:
    """Whether the client cancelled this request: notifications/cancelled named it."""
    return self.cancelled_by_client


dispatch_unwatched = MCPServer._dispatch  # section 7's


@extend(MCPServer)
def _dispatch(self, method: str, params: dict, ctx):
    """Serve a request, findable by its id while it runs: notifications/cancelled may name it."""
    with self._lock:
        self._running[ctx.id] = ctx
    try:
        return dispatch_unwatched(self, method, params, ctx)
    finally:
        with self._lock:
            if self._running.get(ctx.id) is ctx:
                del self._running[ctx.id]


notice_before = MCPServer._notice  # section 2's: notifications/initialized


@extend(MCPServer)
def _notice(self, method: str, params: dict):
    """notifications/cancelled reaches the request it names; the rest as before."""
    if method == "notifications/cancelled":
        self._cancel(params.get("requestId"))
    notice_before(self, method, params)


@extend(MCPServer)
def _cancel(self, request_id):
    """notifications/cancelled: tell the running request it was cancelled, or close its listen stream."""
    if not valid_id(request_id):
        return  # a malformed cancellation is ignored (2026-07-28, "Cancellation")
    with self._lock:
        running = self._running.get(request_id)
        listening = [listener for listener in self._listeners if listener["id"] == request_id]
    if running:
        running.cancelled_by_client = True
    for listener in listening:
        self.stop_listening(listener["context"])


@extend(MCPServer)
def stop_waiting(self, reason: str):
    """Give every function waiting for the client's answer an error instead: the client has gone."""
    with self._lock:
        slots, self._waiting = list(self._waiting.items()), {}
    for id, slot in slots:
        slot.put(error_response(id, INTERNAL_ERROR, reason))


@serves("subscriptions/listen")
def _listen(self, params, ctx):
    # subscriptions/listen {notifications: {toolsListChanged?, promptsListChanged?, resourcesListChanged?,
    #                                       resourceSubscriptions?: [uri]}}: a stream, answered when it ends
    asked = param(params, "notifications", dict, {})
    honoured = {key: True for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
                if asked.get(key) is True}
    uris = asked.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise RPCError(INVALID_PARAMS, "notifications.resourceSubscriptions must be a list of URIs")
    if uris:
        honoured["resourceSubscriptions"] = uris
    # The acknowledgement goes first, before any notification of this stream (2026-07-28, "Subscriptions"); the
    # stream is listed first, so a change made once the client has its acknowledgement reaches it.
    with self._telling:
        with self._lock:
            self._listeners.append({"id": ctx.id, "filter": honoured, "context": ctx})
        ctx.send(notification("notifications/subscriptions/acknowledged",
                              {"_meta": {SUBSCRIPTION_ID_KEY: ctx.id}, "notifications": honoured}))
    ctx.later = True  # answered when the stream ends (stop_listening, end_listening)
    return None


list_changed_in_outbox = MCPServer._list_changed  # section 2's


@extend(MCPServer)
def _list_changed(self, listed: str, notify: bool):
    """Queue list_changed for each session, and send it on every listen stream that asked for it."""
    list_changed_in_outbox(self, listed, notify)
    if notify:
        for server in self.sharing():
            server._tell_listeners(lambda asked: asked.get(f"{listed}ListChanged"), f"notifications/{listed}/list_changed", {})


updated_in_outbox = MCPServer.resource_updated  # section 5's


@extend(MCPServer)
def resource_updated(self, uri: str):
    """Tell each subscribed session, and every listen stream that subscribed to uri."""
    updated_in_outbox(self, uri)
    for server in self.sharing():
        server._tell_listeners(lambda asked: uri in asked.get("resourceSubscriptions", []),
                               "notifications/resources/updated", {"uri": uri})


@extend(MCPServer)
def _tell_listeners(self, wants, method: str, params: dict):
    """Send a notification on every open listen stream whose filter wants it, tagged with its subscription id."""
    with self._telling:  # a stream being acknowledged gets its acknowledgement first
        with self._lock:
            listeners = [listener for listener in self._listeners if wants(listener["filter"])]
        for listener in listeners:
            tagged = {**params, "_meta": {SUBSCRIPTION_ID_KEY: listener["id"]}}
            listener["context"].send(notification(method, tagged))


@extend(MCPServer)
def stop_listening(self, ctx=None) -> list:
    """End ctx's listen stream (every one, if ctx is None) without a word: the client ended it. Those ended."""
    with self._lock:
        ended = [listener for listener in self._listeners if ctx is None or listener["context"] is ctx]
        self._listeners = [listener for listener in self._listeners if listener not in ended]
    return ended


@extend(MCPServer)
def end_listening(self):
    """End every listen stream gracefully: each gets its response (2026-07-28, "Graceful Closure")."""
    for listener in self.stop_listening():
        result = {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: listener["id"]}}
        listener["context"].send(response(listener["id"], result))


@extend(MCPClient)
def listen(self, tools: bool = True, prompts: bool = False, resources: bool = False, uris: tuple = ()) -> dict:
    """Open a subscriptions/listen stream (2026-07-28); its acknowledged filter.

    The stream's notifications arrive among the responses to later requests, and
    _pump_notifications acts on them: a list change refreshes the cache at once, not when ttlMs ends.
    """
    wanted = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
    filter = {key: True for key, value in wanted.items() if value}
    if uris:
        filter["resourceSubscriptions"] = list(uris)
    message = request(self.next_id, "subscriptions/listen", self.with_meta({"notifications": filter}))
    self.next_id += 1
    ack = self.transport.listen(message)
    if ack is None or "error" in ack:
        error = (ack or {}).get("error", {"code": INTERNAL_ERROR, "message": "no acknowledgement"})
        raise RPCError(error.get("code"), error.get("message"), error.get("data"))
    self.listening = message
    return ack["params"]["notifications"]


@extend(MCPClient)
def stop_listening(self):
    """End the listen stream: notifications/cancelled on stdio, closing the stream over HTTP."""
    if self.listening:
        self.transport.cancel(self.listening, "the client stopped listening")
        self.listening = None


@extend(Transport)
def acknowledgement(self, listen_id) -> dict | None:
    """Take the acknowledgement of the listen stream listen_id out of the notifications received, if there."""
    with self._received:
        for message in self.notifications:
            meta = (message.get("params") or {}).get("_meta") or {}
            if message["method"] == "notifications/subscriptions/acknowledged" and meta.get(SUBSCRIPTION_ID_KEY) == listen_id:
                self.notifications.remove(message)
                return message
    return None


@extend(InMemoryTransport)
def listen(self, message: dict) -> dict | None:
    """Open a subscriptions/listen stream: its acknowledgement (or its error response)."""
    return self.send(message) or self.acknowledgement(message["id"])


@extend(InMemoryTransport)
def cancel(self, message: dict, reason: str):
    """Cancel a request (a listen stream, here) with notifications/cancelled."""
    self.send(notification("notifications/cancelled", {"requestId": message["id"], "reason": reason}))

# ---------------------------------------------------------------------------------------------------
# ---- 9. stdio ----
# One message per line; stdout carries the wire and nothing else. The transport edge: parse() turns
# bytes that are not JSON into PARSE_ERROR (course 000).
# ---------------------------------------------------------------------------------------------------

MAX_DEPTH = 100  # arrays and objects nested deeper are refused: json.loads would recurse that deep
SHORT_MESSAGE = 1024  # bytes: below this, a message is parsed first and its depth measured after
WALKED_STRINGS = 32  # strings leapt over one by one before the rest of a message is taken in bulk
ONE_KIND = bytes.maketrans(b"{}", b"[]")  # depth is all that is measured; json.loads checks the pairs match
NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))  # the bytes that neither nest nor quote


def parse(data: bytes | str):
    """Parse one message from the wire; anything that is not JSON raises PARSE_ERROR (course 000)."""
    try:
        if isinstance(data, bytes):
            wire, text = data, data.decode("utf-8")
        else:
            wire, text = data.encode("utf-8", "surrogatepass"), data
        if len(wire) >= SHORT_MESSAGE and nesting(wire) > MAX_DEPTH:  # checked before json.loads reads megabytes
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        message = DECODER.decode(text)
        # A short message is parsed first (it nests 512 levels at most, which json.loads survives), then
        # measured, if it holds brackets enough: nesting d levels deep takes d openers and d closers.
        if 2 * MAX_DEPTH < len(wire) < SHORT_MESSAGE and wire.count(b"[") + wire.count(b"{") > MAX_DEPTH:
            if wire.count(b"]") + wire.count(b"}") > MAX_DEPTH and depth(message) > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return message
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise RPCError(PARSE_ERROR, f"parse error: {str(exc)[:100]}")


def depth(value) -> int:
    """How deep arrays and objects nest in a parsed value (0 for a string or a number), level by level."""
    level, containers = 0, [value] if isinstance(value, (dict, list)) else []
    while containers:
        level += 1
        items = []
        for container in containers:
            items.extend(container.values() if isinstance(container, dict) else container)
        containers = [item for item in items if isinstance(item, (dict, list))]
    return level


def nesting(wire: bytes) -> int:
    """How deep arrays and objects nest in a long wire, brackets in strings aside; a bound when too few to pass MAX_DEPTH."""
    # A long message may hold too few brackets to nest MAX_DEPTH deep, strings and all: find() leaps from one
    # to the next at memory speed (counting would read every byte) and stops once there are enough.
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
    for _ in range(WALKED_STRINGS):
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

SLOW_S = 0.05  # a request still running after this has its own thread, and another thread reads on
WATCH_S = 0.02  # how often the watchdog looks
MAX_WORKERS = 32  # slow requests running at once on one connection; beyond them, requests wait their turn


def serve_stdio(server: MCPServer, stdin=None, stdout=None):
    """Serve one client over stdio until end of input, Ctrl-C (KeyboardInterrupt) or SIGTERM (SystemExit(0)).

    One thread at a time reads (it holds the baton), and serves what it read on the spot: most requests
    take microseconds, and a hand-over to another thread would cost more than the request. A request
    still running after SLOW_S keeps its thread, and the watchdog gives the baton to a new reader, so
    that a ping, a cancellation or the client's answer to the server's question is read while the tool
    works (section 8); a notification or a response never hands the baton on, so it is handled before the
    next line is read. A lock lets one thread at a time write a line, so lines never interleave. The
    calling thread only waits, so a signal always finds it waiting; the readers read and write the pipes'
    file descriptors directly, so none holds a lock of Python's files that the interpreter's exit waits for.
    """
    out = stdout or claim_stdout()
    lock, baton = threading.Lock(), threading.Lock()
    ended, gone = threading.Event(), threading.Event()  # end of input or the client gone; the client closed our stdout
    reading = {"thread": None, "since": None}  # the reader; since when it serves a request (None: it is reading)
    readers = []  # every reader started, the one holding the baton last

    def write(messages: list):
        with lock:  # the outbox is drained under the lock too: lines leave in the order they were queued
            data = b"".join(encode(message).encode() + b"\n" for message in server.drain_outbox() + messages)
            try:
                write_all(out, data)
            except OSError:  # BrokenPipeError: the client closed our stdout, so no answer can reach it
                gone.set()
                ended.set()

    lines = read_lines(stdin or sys.stdin.buffer, write)

    def read_and_serve():
        """Read and serve messages while this thread holds the baton; at end of input, say so."""
        me = threading.current_thread()
        for message in lines:
            if isinstance(message, dict) and "method" in message and "id" in message:
                with baton:  # a request may run long; a notification or a response is handled before the next line
                    reading["since"] = time.monotonic()
            reply = server.handle(message)
            write([reply] if reply is not None else [])  # after the outbox
            with baton:
                if reading["thread"] is not me or gone.is_set():
                    return  # a new reader took over while this request ran (its clock is its own), or nobody reads
                reading["since"] = None
        server.stop_waiting("the client closed its side of the connection")  # no answer can come any more
        ended.set()

    def start_reader():
        """A new reader takes the baton (called holding the baton lock, or before any reader runs)."""
        reading["thread"], reading["since"] = threading.Thread(target=read_and_serve, daemon=True), None
        readers.append(reading["thread"])
        reading["thread"].start()

    def watch():
        """Give the baton to a new reader when the request being served has run longer than SLOW_S."""
        while not ended.wait(WATCH_S):
            with baton:
                slow = reading["since"] is not None and time.monotonic() - reading["since"] > SLOW_S
                if slow and len([thread for thread in readers if thread.is_alive()]) < MAX_WORKERS:
                    start_reader()

    server.on_queue = lambda: write([])  # notifications and questions go out as they come
    restore = on_sigterm_exit()
    try:
        start_reader()
        threading.Thread(target=watch, daemon=True).start()
        ended.wait()  # Ctrl-C and SIGTERM interrupt this wait, whatever the readers are doing
        if not gone.is_set():
            for thread in readers:  # each running request still gets its response before the server exits
                thread.join()
        server.end_listening()
    finally:
        restore()


def on_sigterm_exit():
    """Make SIGTERM raise SystemExit(0) in the main thread, as a host's stop is a clean exit; a function that undoes it."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # a signal reaches only the main thread: elsewhere, leave the handlers be
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    return lambda: signal.signal(signal.SIGTERM, previous)


def file_descriptor(file) -> int | None:
    """file's descriptor, or None for a file of Python's own (io.BytesIO and the like)."""
    try:
        return file.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def write_all(out, data: bytes):
    """Write data whole: straight to out's file descriptor when it has one (no buffer, and no lock of Python's)."""
    fd = file_descriptor(out)
    if fd is None:
        out.write(data)
        out.flush()
        return
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_lines(stdin, write):
    """Each message read from stdin, one per line; a line that is not one gets its error written here."""
    for line in raw_lines(stdin):
        if line is None:
            write([error_response(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes")])
        elif line.strip():
            try:
                yield parse(line)
            except RPCError as exc:  # not JSON, so there is no id to respond to
                write([error_response(None, exc.code, exc.message)])


def raw_lines(stdin):
    """stdin's lines, newlines left out, read from its file descriptor when it has one; None for a line too long."""
    fd = file_descriptor(stdin)
    pieces, size, skipping = [], 0, False  # the line begun (its pieces and their size); inside a line too long
    while True:
        chunk = os.read(fd, 65536) if fd is not None else stdin.readline(65536)
        if not chunk:
            if skipping or pieces:
                yield None if skipping else b"".join(pieces)  # a last line without its newline
            return  # end of input: the server exits with code 0
        *complete, rest = chunk.split(b"\n")
        for line in complete:
            if skipping or size + len(line) > MAX_MESSAGE_BYTES:
                yield None  # the line ends here, dropped whole
            else:
                yield b"".join(pieces + [line])
            pieces, size, skipping = [], 0, False
        if not skipping and rest:
            pieces.append(rest)  # kept in pieces: an endless line costs linear time, not quadratic
            size += len(rest)
            if size > MAX_MESSAGE_BYTES:
                pieces, size, skipping = [], 0, True


def claim_stdout():
    """Keep the real stdout for the wire, and send fd 1 and sys.stdout to stderr for everything else."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)  # written whole by write_all: nothing waits in a buffer
    os.dup2(2, 1)  # a tool's print(), or a child process it starts, now lands on stderr
    sys.stdout = sys.stderr
    return out


class StdioTransport(Transport):
    """A server as a child process: requests to its stdin, responses read from its stdout.

        transport = StdioTransport([sys.executable, "server_demo.py"], trace=print_trace)
    The response is read on the caller's own thread; select() bounds each wait by `timeout` seconds.
    While it waits, whatever else arrives is handled: a notification is kept, a question from the
    server is answered at once.
    """

    def __init__(self, command: list, trace=None, timeout: float = 30.0, env: dict | None = None, stderr=None):
        super().__init__(trace)
        import subprocess
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        os.set_blocking(self.process.stdin.fileno(), False)  # a write waits in select(), with a deadline
        self.timeout = timeout
        self._lines = collections.deque()  # whole lines read but not handled yet
        self._partial = bytearray()  # the start of a line whose newline has not come yet
        self._skipping = False  # inside a line longer than MAX_MESSAGE_BYTES: dropped up to its newline

    def send(self, message: dict) -> dict | None:
        """Write one line; for a request, read until its response arrives."""
        self.write(message)
        if is_notification(message):
            return None
        return self.wait(message, lambda incoming: "method" not in incoming and same_id(incoming.get("id"), message["id"]))

    def listen(self, message: dict) -> dict:
        """Open a subscriptions/listen stream: its acknowledgement (or its error response)."""
        self.write(message)

        def opened(incoming):
            meta = (incoming.get("params") or {}).get("_meta") or {}
            acknowledged = incoming.get("method") == "notifications/subscriptions/acknowledged"
            return (acknowledged and same_id(meta.get(SUBSCRIPTION_ID_KEY), message["id"])) or (
                "error" in incoming and same_id(incoming.get("id"), message["id"]))
        return self.wait(message, opened)

    def cancel(self, message: dict, reason: str):
        """Cancel a request: on stdio, notifications/cancelled is the only way (2026-07-28, "Cancellation")."""
        self.write(notification("notifications/cancelled", {"requestId": message["id"], "reason": reason}))

    def write(self, message: dict):
        """One message as one line on the server's stdin; TimeoutError if the server reads none of it in time."""
        import select
        data = memoryview(json.dumps(self.traced("→", message)).encode() + b"\n")
        deadline = time.monotonic() + self.timeout
        fd = self.process.stdin.fileno()
        while data:
            try:
                data = data[os.write(fd, data[:65536]):]
            except BlockingIOError:  # the pipe is full: wait for the server to read, within the deadline
                if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
                    raise TimeoutError(f"the server read nothing of {message.get('method', 'a response')} in {self.timeout} s")

    def wait(self, message: dict, wanted) -> dict:
        """Read messages until one is wanted; past the deadline, whatever keeps arriving, cancel and raise TimeoutError."""
        deadline = time.monotonic() + self.timeout
        while True:
            if time.monotonic() > deadline:
                self.cancel(message, f"no response in {self.timeout} s")
                raise TimeoutError(f"no response to {message['method']} (id {message['id']}) in {self.timeout} s")
            if not self._lines:
                self._read(deadline)
                continue
            try:
                incoming = json.loads(self._lines.popleft())
            except (ValueError, RecursionError):
                continue  # junk on the server's stdout (a stray print) is not a message
            if not isinstance(incoming, dict):
                continue
            if wanted(self.traced("←", incoming)):
                return incoming
            answer = self.receive(incoming)
            if answer is not None:
                self.write(answer)

    def _read(self, deadline: float):
        """Read what the server wrote, within the deadline, into whole lines; a line too long is dropped."""
        import select
        fd = self.process.stdout.fileno()
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            return  # nothing yet: wait() looks at the clock
        chunk = os.read(fd, 65536)
        if not chunk:
            raise ConnectionError(f"the server closed its stdout (exit code {self.process.poll()})")
        *complete, rest = chunk.split(b"\n")
        if complete:
            first = bytes(self._partial) + complete[0]
            self._lines.extend(([] if self._skipping else [first]) + complete[1:])
            self._partial, self._skipping = bytearray(), False
        if not self._skipping:
            self._partial += rest  # growing a bytearray: an endless line costs linear time, not quadratic
        if len(self._partial) > MAX_MESSAGE_BYTES:
            self._partial, self._skipping = bytearray(), True

    def close(self) -> int:
        """Close stdin and wait for the server to exit; if it does not, terminate it, then kill it."""
        self.process.stdin.close()
        import subprocess
        for stop in (None, self.process.terminate, self.process.kill):  # ask, then insist
            if stop:
                stop()
            try:
                self.process.wait(timeout=2)
                break
            except subprocess.TimeoutExpired:
                continue
        self.process.stdout.close()
        return self.process.returncode

# ---------------------------------------------------------------------------------------------------
# ---- 10. Streamable HTTP ----
# One endpoint, one POST a message. In the handshake era initialize opens a session (Mcp-Session-Id); in
# 2026-07-28 every POST stands alone and its headers repeat its body. A response is JSON, or an event
# stream written as the request's messages happen.
# ---------------------------------------------------------------------------------------------------

MCP_PATH = "/mcp"
LOCAL_NAMES = {"127.0.0.1", "localhost", "::1"}  # Host and Origin a local server accepts (DNS rebinding)
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # sent as Mcp-Name
KEEPALIVE_S = 15  # an open event stream with nothing to say gets a comment line this often
REQUEST_S = 30  # a connection's next request must arrive whole (idle wait, headers, body) within this
MAX_CONNECTIONS = 128  # open at once (each a thread, and a file of the 256 a laptop allows); more wait
BUSY_S = 60  # a connection that waits this long for one of them to close is closed itself: every one is busy
SESSION_IDLE_S = 3600  # a handshake session unused this long is forgotten
MAX_SESSIONS = 1000  # open at once; initialize beyond them is 503
MAX_HEADERS = 100  # header lines in a request or a response, each MAX_HEADER_LINE bytes at most (http.server's bounds)
MAX_HEADER_LINE = 65536


@extend(MCPServer)
def session(self) -> MCPServer:
    """A new session on this server's catalog: the catalog is shared, not copied; the session starts afresh."""
    other = type(self)(self.server_info["name"], self.server_info["version"], allowed_tools=self.allowed_tools,
                       instructions=self.instructions, ttl_ms=self.ttl_ms, state_key=self._state_key,
                       page_size=self.page_size)
    other.tools, other.resources, other.templates, other.prompts = self.tools, self.resources, self.templates, self.prompts
    other._sharing = self._sharing  # one list for the whole catalog: a change to it is told to every session
    self._sharing[:] = [ref for ref in self._sharing if ref() is not None] + [weakref.ref(other)]
    return other


def header_value(text: str) -> str:
    """A header value for text: as it is if plain printable ASCII, else wrapped as =?base64?...?= (2026-07-28)."""
    sentinel = text.startswith("=?base64?") and text.endswith("?=")  # a plain value that looks wrapped is wrapped
    if text.isascii() and text.isprintable() and text == text.strip() and not sentinel:
        return text
    import base64
    return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="


def header_text(value: str | None) -> str | None:
    """The text a header value carries, unwrapping =?base64?...?=; ValueError for a wrapping that is not strict base64 of UTF-8."""
    if value and value.startswith("=?base64?") and value.endswith("?="):
        import base64
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    return value


def header_text_of(value) -> str:
    """The text a body value travels as in a header: integers in decimal, booleans as true or false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def header_matches(text: str | None, value) -> bool:
    """Whether a header's text repeats a body value; integers compare as numbers ("42.0" is 42)."""
    if value is None or text is None:
        return value is None and text is None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(text) == value
        except ValueError:
            return False
    return text == header_text_of(value)


def header_paths(schema: dict) -> dict:
    """{Mcp-Param-Name: path of property names} for each x-mcp-header in an inputSchema; ValueError if one is misplaced.

    An annotation may sit only at the end of a chain of "properties" keys, on a string, integer or
    boolean, and each name only once, whatever its case (2026-07-28, Streamable HTTP, "Custom Headers").
    """
    found = {}

    def walk(node, path, reachable):
        if isinstance(node, dict):
            if "x-mcp-header" in node:
                if not reachable or path == ():
                    raise ValueError("x-mcp-header outside a chain of properties")
                name = "Mcp-Param-" + header_name(str(node["x-mcp-header"]), node)
                if name.lower() in (known.lower() for known in found):
                    raise ValueError(f"{name} names two arguments")
                found[name] = path
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for name, child in value.items():
                        walk(child, path + (name,), reachable)
                elif key != "x-mcp-header":
                    walk(value, path, False)  # under items, anyOf, $defs...: not statically reachable
        elif isinstance(node, list):
            for item in node:
                walk(item, path, False)

    walk(schema, (), True)
    return found


def param_headers(schema: dict, arguments: dict) -> dict:
    """{Mcp-Param-Name: value} for each annotated argument present and not null (None for one that is absent)."""
    headers = {}
    for name, path in header_paths(schema).items():
        value = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        headers[name] = value
    return headers


class HttpStream:
    """One POST's response as a stream: the server's messages for this request become its events, written
    the moment they are sent, by whichever thread sends them.

    closed turns true when the client goes away; for a 2026-07-28 request that is the cancel
    (2026-07-28, "Cancellation"). Without an event stream (the client accepts only JSON) there is
    nowhere to put a notification, and no way to ask the client anything.
    """

    def __init__(self, handler, events_accepted: bool, listen: bool = False):
        self.handler, self.events_accepted = handler, events_accepted
        self.lock = threading.Lock()  # one writer at a time on this connection
        self.started = False  # the event stream's headers are out
        self.gone = False  # a write failed: the client went away
        self.ended = threading.Event() if listen else None  # set when a listen stream's response is out

    def send(self, message: dict):
        """Write one of the server's messages as an event of this request's stream, if it can carry it."""
        if not self.events_accepted:
            if "id" in message and "method" in message:
                raise RuntimeError("this POST accepts no text/event-stream, so the server cannot ask the client")
            return  # a notification with nowhere to go
        with self.lock:
            try:
                if not self.started:
                    self.handler.start_events()
                    self.started = True
                self.handler.write_event(message)
            except OSError:
                self.gone = True
        if "method" not in message and self.ended:
            self.ended.set()

    def send_comment(self, comment: bytes):
        """Write a comment line on the stream (a keep-alive)."""
        with self.lock:
            try:
                self.handler.write_chunk(comment)
            except OSError:
                self.gone = True

    @property
    def closed(self) -> bool:
        """Whether the client has gone: a write failed, or the connection reads as end of file."""
        return self.gone or self.handler.client_gone()


cancelled_by_notification = Context.cancelled  # section 8's property


@extend(Context)
@property
def cancelled(self) -> bool:
    """Whether the client cancelled this request: notifications/cancelled named it, or it closed the request's stream."""
    return cancelled_by_notification.fget(self) or bool(self.stream and self.stream.closed)


def read_head(reader) -> dict:
    """Header lines, up to the empty line that ends them (RFC 9112, section 5), read by the server and the client
    alike: {lower-case name: [its values, in order]}; ValueError(status, reason) for a head that is too large
    (431) or could be read another way (400).
    """
    fields, lines = {}, 0
    while True:
        line = reader.readline(MAX_HEADER_LINE + 1)
        if line in (b"\r\n", b"\n", b""):
            return fields  # the empty line that ends the head (or the end of the connection)
        lines += 1
        if len(line) > MAX_HEADER_LINE or lines > MAX_HEADERS:
            raise ValueError(431, "a header line is too long, or there are too many")
        name, colon, value = str(line, "latin-1").partition(":")
        if not colon or not name or name != name.strip() or "\r" in value[:-2]:
            # Whitespace before the colon, a line folded onto the one before, or a CR that ends no line: each
            # could be read another way by another reader (RFC 9112, sections 2.2, 5.1 and 5.2).
            raise ValueError(400, "a header line is a name, a colon and a value")
        fields.setdefault(name.lower(), []).append(value.strip(" \t\r\n"))


def http_server(server, host: str = "127.0.0.1", port: int = 0, allowed_hosts=LOCAL_NAMES):
    """A Streamable HTTP server at /mcp, for one MCPServer's catalog. Call serve_forever().

    The server answers the stateless requests itself, and each handshake session is a server.session(),
    sharing its catalog. server may instead be a factory, server() making each session's own catalog.

    Threads: one a connection (http.server's), which reads a POST, runs MCPServer.handle, and writes the
    events the request sends as they happen, then its response.
    """
    import http.server, secrets, select, socket, urllib.parse  # only when HTTP is served

    sessions = {}  # Mcp-Session-Id -> [MCPServer, when last used]: one a client, in the handshake era
    sessions_lock = threading.Lock()
    if isinstance(server, MCPServer):
        shared, factory = server, server.session
    else:
        shared, factory = server(), server  # shared serves every stateless request: there is no session
    arriving = {}  # connection -> the moment by which its next request must have arrived whole
    dates = {}  # a second -> its Date header, formatted once a second rather than for every response

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: many POSTs on one connection
        disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart

        def date_time_string(self, timestamp=None):
            """The Date header's text, formatted once a second."""
            second = int(time.time() if timestamp is None else timestamp)
            text = dates.get(second)
            if text is None:
                text = super().date_time_string(second)
                dates.clear()
                dates[second] = text
            return text

        def log_message(self, format, *args):
            pass  # no access log on stderr: trace the messages instead

        def do_GET(self):
            self.refuse(405, "this server opens no standalone stream: each request's messages travel on its own")

        def do_DELETE(self):
            if self.is_allowed() and self.session(end=True):
                self.respond(200, None)

        def handle_one_request(self):
            """Read and serve one request; the wait for it and its arrival, headers and body, are bounded together."""
            arriving[self.connection] = time.monotonic() + REQUEST_S  # the watchdog cuts a connection past it
            try:
                super().handle_one_request()
            finally:
                arriving.pop(self.connection, None)

        def parse_request(self) -> bool:
            """Read the request line and the header lines by hand (RFC 9112): http.server's own reader, built on
            the email package, costs more than all the rest of a POST. False, and a refusal sent, if malformed.
            """
            self.request_version, self.close_connection = "HTTP/1.1", True  # what a refusal speaks
            self.requestline = str(self.raw_requestline, "latin-1").rstrip("\r\n")
            self.command, self.path, version = (self.requestline.split(" ") + ["", ""])[:3]
            if self.requestline.count(" ") != 2 or version not in ("HTTP/1.1", "HTTP/1.0"):
                return self.refuse(400, "the request line is a method, a target and HTTP/1.1, one space apart")
            try:
                self.header_values = read_head(self.rfile)  # each name, lower-cased -> its values, in order
            except ValueError as exc:
                return self.refuse(*exc.args)  # 400, or 431 for a head too large
            self.request_version = version
            connection = self.header("Connection", "").lower()
            self.close_connection = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
            if self.header("Expect", "").lower() == "100-continue" and version == "HTTP/1.1":
                return self.handle_expect_100()  # curl asks before it sends a body over 1 kB
            return True

        def header(self, name: str, default=None):
            """The first value of the request's header name (in any case), or default."""
            values = self.header_values.get(name.lower())
            return values[0] if values else default

        def do_POST(self):
            lengths = self.header_values.get("content-length", [])
            if not self.is_allowed():
                return
            if "transfer-encoding" in self.header_values or len(lengths) > 1:
                # Two ways to frame one body could be read two ways: a smuggled request (RFC 9112, section 6.3).
                return self.refuse(400, "a body is framed by exactly one Content-Length, and no Transfer-Encoding")
            length = lengths[0] if lengths else ""
            if not re.fullmatch(r"[0-9]{1,10}", length):
                return self.refuse(411, "Content-Length is required, in decimal digits")
            if int(length) > MAX_MESSAGE_BYTES:
                return self.refuse(413, f"the body must be {MAX_MESSAGE_BYTES} bytes at most")
            body = self.rfile.read(int(length))
            if len(body) < int(length):
                self.close_connection = True
                return  # the body never came whole: the client went away, or the watchdog cut it off
            arriving.pop(self.connection, None)  # arrived: serving it may take as long as its tool needs
            try:
                message = parse(body)  # once the body is read, the connection is reusable
            except RPCError as exc:
                return self.respond(400, error_response(None, exc.code, exc.message))
            version = self.header("MCP-Protocol-Version")
            if not isinstance(message, dict):  # a batch, a string, a number: handle() says what is wrong
                return self.respond(400, shared.handle(message))
            if is_stateless(message):
                self.post_stateless(message)
            elif version is not None and version not in PUBLISHED_VERSIONS:
                self.respond(400, error_response(None, INVALID_REQUEST, f"unknown MCP-Protocol-Version {version}"))
            elif message.get("method") == "initialize":  # a new session, named by an unguessable id
                if not self.room_for_a_session():
                    return self.respond(503, error_response(message.get("id"), INTERNAL_ERROR,
                                                            f"{MAX_SESSIONS} sessions are open: try again later"))
                server, sid = factory(), secrets.token_urlsafe(24)
                reply = server.handle(message)
                if reply and "result" in reply:
                    with sessions_lock:
                        sessions[sid] = [server, time.monotonic()]
                self.respond(200, reply, {"Mcp-Session-Id": sid} if reply and "result" in reply else {})
            else:
                server = self.session()
                if server:
                    self.serve(server, message, lambda reply: 200)

        def post_stateless(self, message):
            """2026-07-28: no session; the headers repeat the body; errors map to HTTP statuses."""
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            meta, method = params.get("_meta"), message.get("method")
            meta = meta if isinstance(meta, dict) else {}
            if PROTOCOL_VERSION_KEY in meta:
                problem = self.header_mismatch(method, params, meta)
                if problem:
                    return self.respond(400, error_response(message.get("id"), HEADER_MISMATCH, problem))
            if is_notification(message):
                return self.respond(202, None)  # over HTTP, closing a stream is the cancel: nothing to pass on

            def status(reply):
                code = reply.get("error", {}).get("code")
                if code in (UNSUPPORTED_PROTOCOL_VERSION, INVALID_REQUEST, PARSE_ERROR, MISSING_CLIENT_CAPABILITY):
                    return 400
                if code == INVALID_PARAMS and CLIENT_CAPABILITIES_KEY not in meta:
                    return 400  # a required _meta field is missing (2026-07-28, basic, "_meta")
                if code == METHOD_NOT_FOUND and (method not in shared._handlers or method in HANDSHAKE_ONLY):
                    return 404  # the method itself is unknown here
                return 200  # a tool's failure, or the lab's unknown tool, is still a 200
            self.serve(shared, message, status)

        def header_mismatch(self, method, params: dict, meta: dict) -> str | None:
            """What in the headers does not repeat the body (2026-07-28, Streamable HTTP, "Server Validation"), or None."""
            expected = {"MCP-Protocol-Version": meta.get(PROTOCOL_VERSION_KEY), "Mcp-Method": method}
            if method in NAMED_METHODS:
                expected["Mcp-Name"] = params.get(NAMED_METHODS[method])
            tool = shared.tools.get(params.get("name")) if method == "tools/call" else None
            if tool and isinstance(params.get("arguments"), dict):
                expected |= param_headers(tool["spec"]["inputSchema"], params["arguments"])
            for header, value in expected.items():
                sent = self.header_values.get(header.lower(), [])
                if len(sent) > 1:
                    return f"the {header} header was sent {len(sent)} times"
                try:
                    text = header_text(sent[0].strip(" \t")) if sent else None  # whitespace around a value is not part of it
                except ValueError:
                    return f"the {header} header is not a valid =?base64?...?= value"
                if not header_matches(text, value):
                    return f"the {header} header does not match the body"
            return None

        def serve(self, server: MCPServer, message, status):
            """handle() on this connection's thread; what the request sends meanwhile goes out as events, at once."""
            if not isinstance(message, dict) or "method" not in message or "id" not in message:
                reply = server.handle(message)  # a notification, or the client's response to the server's question
                return self.respond(202 if reply is None else status(reply), reply)
            stream = HttpStream(self, "text/event-stream" in self.header("Accept", ""),
                                message.get("method") == "subscriptions/listen")
            reply = server.handle(message, stream)
            if reply is None and message.get("method") == "subscriptions/listen" and stream.started:
                return self.hold_open(server, stream)
            queued = server.drain_outbox()  # the session's list_changed, if any
            with stream.lock:
                if stream.gone:
                    self.close_connection = True
                    return
                if not stream.started:  # nothing was said before the response: one JSON body, in one write
                    return self.respond(202 if reply is None else status(reply), reply, queued=queued)
                try:
                    for event in queued + ([reply] if reply else []):
                        self.write_event(event)
                    self.write_chunk(b"")  # the end of the event stream; the connection stays usable
                except OSError:
                    self.close_connection = True

        def hold_open(self, server: MCPServer, stream: HttpStream):
            """Keep a listen stream open until the server ends it or the client goes; a comment now and then."""
            quiet_since = time.monotonic()
            while not stream.ended.wait(0.25):
                if stream.closed:  # the client closed it: over HTTP, that ends the subscription
                    server.stop_listening(stream)
                    self.close_connection = True
                    return
                if time.monotonic() - quiet_since > KEEPALIVE_S:
                    stream.send_comment(b": keep-alive\n\n")  # clients skip a comment; proxies see life
                    quiet_since = time.monotonic()
            with stream.lock:
                try:
                    self.write_chunk(b"")
                except OSError:
                    self.close_connection = True

        def client_gone(self) -> bool:
            """Whether the client closed the connection (it would read as end of file)."""
            try:
                readable = select.select([self.connection], [], [], 0)[0]
                return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True

        def start_events(self):
            """The headers of an event stream, sent in chunks so that the connection stays usable after it."""
            self.send_response(200)
            for name, value in {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                "X-Accel-Buffering": "no", "Transfer-Encoding": "chunked"}.items():
                self.send_header(name, value)
            self.end_headers()

        def write_event(self, message: dict):
            """One message as one event of the stream."""
            self.write_chunk(f"event: message\ndata: {encode(message)}\n\n".encode())

        def write_chunk(self, data: bytes):
            """One chunk of a chunked body; an empty one ends the body."""
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def session(self, end: bool = False):
            """The session that Mcp-Session-Id names (ended, if end); else respond 400 or 404 and return None."""
            sid = self.header("Mcp-Session-Id")
            with sessions_lock:
                session = sessions.pop(sid, None) if end else sessions.get(sid)
                if session:
                    session[1] = time.monotonic()
            if session is None:
                status, reason = (400, "missing Mcp-Session-Id") if sid is None else (404, "unknown or ended session")
                self.respond(status, error_response(None, INVALID_REQUEST, reason))
            return session and session[0]

        def room_for_a_session(self) -> bool:
            """Forget the sessions idle longer than SESSION_IDLE_S; whether another may open (MAX_SESSIONS)."""
            now = time.monotonic()
            with sessions_lock:
                for sid, (server, used) in list(sessions.items()):
                    if now - used > SESSION_IDLE_S:
                        del sessions[sid]  # its client sees 404 and may initialize again (spec: session expiry)
                return len(sessions) < MAX_SESSIONS

        def is_allowed(self) -> bool:
            """The path is /mcp, and Host and Origin are local names; otherwise refuse before reading a body."""
            host = urllib.parse.urlsplit("//" + self.header("Host", "")).hostname
            origin = self.header("Origin")
            if urllib.parse.urlsplit(self.path).path != MCP_PATH:
                return self.refuse(404, "not found: the endpoint is " + MCP_PATH)
            if host not in allowed_hosts or (origin and urllib.parse.urlsplit(origin).hostname not in allowed_hosts):
                return self.refuse(403, "Host or Origin is not a local name")  # a DNS-rebinding page, say
            return True

        def refuse(self, status: int, reason: str) -> bool:
            """Respond, drain the body, and close: a kept-alive connection never reads a stale body as a request."""
            self.close_connection = True
            self.respond(status, error_response(None, INVALID_REQUEST, reason), {"Connection": "close"})
            self.connection.shutdown(socket.SHUT_WR)  # the response is complete, and the client sees it end
            self.connection.settimeout(2)
            try:  # read what the client still sends (a body it writes before reading), so that it reads the response
                while self.connection.recv(1 << 20):
                    pass
            except OSError:
                pass  # the client closed, or took too long: either way the response is out
            return False

        def respond(self, status: int, reply, headers=None, queued=()):
            """Send the response whole, in one write: JSON, or an event stream when notifications go first."""
            body, content_type = (encode(reply).encode() if reply else b""), "application/json"
            if queued and "text/event-stream" in self.header("Accept", ""):
                body = "".join(f"event: message\ndata: {encode(m)}\n\n" for m in [*queued, reply]).encode()
                content_type = "text/event-stream"
            head = [f"HTTP/1.1 {status} {self.responses[status][0]}", f"Date: {self.date_time_string()}",
                    f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
            head += [f"{name}: {value}" for name, value in (headers or {}).items()]
            # Status line, headers and body leave in one write: one packet for a small response, not two.
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    class Server(http.server.ThreadingHTTPServer):
        """http.server's threads, bounded: how many connections at once, how long one may take to arrive."""
        daemon_threads = True
        request_queue_size = 1024  # connections waiting to be accepted (the default 5 resets a crowd)

        def __init__(self, *args):
            super().__init__(*args)
            self.open_connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
            self.closing = False
            threading.Thread(target=self.watch, daemon=True).start()

        def get_request(self):
            try:
                return super().get_request()
            except OSError:
                time.sleep(0.05)  # out of file descriptors, say: wait a moment rather than spin on accept
                raise

        def process_request(self, request, client_address):
            # Full: stop accepting until a connection closes (the others wait in the listen queue): an idle one
            # is cut off within REQUEST_S. A wait of BUSY_S means every connection is busy: give up on this one.
            if not self.open_connections.acquire(timeout=BUSY_S):
                request.close()
                return
            super().process_request(request, client_address)

        def process_request_thread(self, request, client_address):
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.open_connections.release()

        def handle_error(self, request, client_address):
            pass  # a client that went away mid-request: nothing to tell (and stderr may be a pipe nobody reads)

        def watch(self):
            """The watchdog: cut off each connection whose next request has not arrived whole by its deadline."""
            while not self.closing:
                time.sleep(0.25)
                now = time.monotonic()
                for connection, deadline in list(arriving.items()):
                    if now > deadline:
                        arriving.pop(connection, None)
                        try:
                            connection.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass  # closed already

        def server_close(self):
            self.closing = True
            shared.end_listening()  # graceful: each listen stream gets its response before the server goes
            super().server_close()

    return Server((host, port), Handler)


def serve_http(server, host: str = "127.0.0.1", port: int = 8000):
    """Serve Streamable HTTP at http://host:port/mcp until interrupted or terminated (server: as http_server's)."""
    import signal
    try:
        httpd = http_server(server, host, port)
    except OSError as exc:  # the port is taken, say: one line, not a traceback
        raise SystemExit(f"mcp_min: cannot serve http://{host}:{port}{MCP_PATH}: {exc.strerror}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a host's SIGTERM is a clean stop
    print(f"mcp_min: serving http://{host}:{httpd.server_address[1]}{MCP_PATH}", file=sys.stderr, flush=True)
    with httpd:
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass  # Ctrl-C: stop quietly


class HttpConnection:
    """One kept-alive HTTP/1.1 connection of a client, written and read by hand (RFC 9112), as the server reads
    its requests: a request leaves in one write; a response is its status, its headers, then its body, read
    whole or line by line as it arrives (an event stream comes in chunks)."""

    def __init__(self, address: tuple, timeout: float):
        self.address, self.timeout = address, timeout
        self.socket = self.reader = None  # opened by the first request, and again once closed
        self.status, self.headers = 0, {}  # the response being read: its status; lower-case name -> first value
        self.left = 0  # bytes of the body (or of its current chunk) not read yet
        self.chunked = self.in_chunk = self.closing = False  # chunked; inside a chunk; Connection: close

    def request(self, method: str, path: str, headers: dict, body: bytes = b""):
        """Send a request whole, then read the response's status line and headers; its body is read next."""
        import select, socket
        if self.closing or (self.socket and select.select([self.socket], [], [], 0)[0]):
            self.close()  # the server said Connection: close, or closed this idle connection (it reads as ready)
        if self.socket is None:
            self.socket = socket.create_connection(self.address, timeout=self.timeout)
            self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle delay
            self.reader = self.socket.makefile("rb")
        self.socket.settimeout(self.timeout)
        host = f"[{self.address[0]}]" if ":" in self.address[0] else self.address[0]  # an IPv6 address
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}:{self.address[1]}",
                 *(f"{name}: {value}" for name, value in headers.items()), f"Content-Length: {len(body)}"]
        self.socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        status = self.reader.readline(MAX_HEADER_LINE + 1).split(b" ", 2)
        if len(status) < 2 or not status[0].startswith(b"HTTP/1.") or not status[1].isdigit():
            raise ConnectionError(f"not an HTTP response: {b' '.join(status)[:80]!r}")  # b"": the server closed
        try:
            fields = read_head(self.reader)
        except ValueError as exc:
            raise ConnectionError(f"a malformed response head: {exc.args[1]}")
        self.status, self.headers = int(status[1]), {name: values[0] for name, values in fields.items()}
        self.chunked, self.in_chunk = "chunked" in self.headers.get("transfer-encoding", "").lower(), False
        self.closing = self.headers.get("connection", "").lower() == "close"
        length = self.headers.get("content-length", "0")
        if not length.isdigit():
            raise ConnectionError(f"Content-Length {length!r} is not a number")
        self.left = 0 if self.chunked else int(length)

    def more(self) -> bool:
        """Whether the body holds more: for a chunked body, move on to its next chunk, if any (RFC 9112, 7.1)."""
        if self.left or not self.chunked:
            return self.left > 0
        if self.in_chunk:
            self.reader.readline(3)  # the CRLF after a chunk's data
        size = self.reader.readline(MAX_HEADER_LINE + 1).split(b";")[0].strip()  # hex digits, then extensions
        if not size or size.strip(b"0123456789abcdefABCDEF"):
            raise ConnectionError(f"not a chunk size: {size[:20]!r}")
        self.left, self.in_chunk = int(size, 16), True
        if self.left == 0:  # the last chunk: then trailer lines, up to an empty one
            while self.reader.readline(MAX_HEADER_LINE + 1) not in (b"\r\n", b"\n", b""):
                pass
            self.chunked = self.in_chunk = False
        return self.left > 0

    def read(self) -> bytes:
        """The rest of the body."""
        pieces = []
        while self.more():
            pieces.append(self.take(self.reader.read(min(self.left, 1 << 20))))
        return b"".join(pieces)

    def read_line(self) -> bytes:
        """The body's next line (b"" at its end): an event stream is read line by line, across its chunks."""
        pieces = [b""]  # a line longer than one chunk comes in pieces: joined once, not copied a piece at a time
        while not pieces[-1].endswith(b"\n") and self.more():
            pieces.append(self.take(self.reader.readline(min(self.left, 1 << 20))))
        return b"".join(pieces)

    def take(self, data: bytes) -> bytes:
        """Count data read from the body; the server closing before the body ends is a ConnectionError."""
        if not data:
            raise ConnectionError("the server closed the connection before the body ended")
        self.left -= len(data)
        return data

    def close(self):
        """Close the connection; the next request opens a new one."""
        if self.socket is not None:
            self.reader.close()
            self.socket.close()
        self.socket = self.reader = None
        self.closing = False


class HttpTransport(Transport):
    """The client's side of Streamable HTTP: one POST a message, on one kept-alive connection.

        transport = HttpTransport("http://127.0.0.1:8000/mcp", trace=print_trace)
    It keeps Mcp-Session-Id and MCP-Protocol-Version, and reads JSON or event-stream responses, event
    by event as they arrive: a question from the server is answered with a POST of its own, on a second
    connection, while the first still streams.
    """

    def __init__(self, url: str, trace=None, timeout: float = 30.0):
        import urllib.parse
        super().__init__(trace)
        parts = urllib.parse.urlsplit(url)
        self.address, self.path, self.timeout = (parts.hostname, parts.port or 80), parts.path or "/", timeout
        self.connection = self.connect()
        self.side_connection = None  # opened the first time the server asks something mid-stream
        self.listen_connection = None  # the open subscriptions/listen stream's own connection
        import queue
        self.arrived = queue.Queue()  # what the listen stream brought, not yet handed over
        self.session_id = self.protocol_version = None
        self.tool_schemas = {}  # name -> inputSchema, for the tools whose arguments travel in headers too

    def connect(self) -> HttpConnection:
        """A new HTTP/1.1 connection to the server (opened on first use)."""
        return HttpConnection(self.address, self.timeout)

    def headers_for(self, message: dict) -> dict:
        """The headers of a POST: what 2026-07-28 repeats from the body, or the session's."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        meta = (message.get("params") or {}).get("_meta") or {}
        if PROTOCOL_VERSION_KEY in meta:  # stateless: the headers repeat what the body says
            headers |= {"MCP-Protocol-Version": meta[PROTOCOL_VERSION_KEY], "Mcp-Method": message["method"]}
            if message["method"] in NAMED_METHODS:
                headers["Mcp-Name"] = header_value(str(message["params"].get(NAMED_METHODS[message["method"]])))
            if message["method"] == "tools/call" and message["params"].get("name") in self.tool_schemas:
                arguments = message["params"].get("arguments") or {}
                for name, value in param_headers(self.tool_schemas[message["params"]["name"]], arguments).items():
                    if value is not None:
                        headers[name] = header_value(header_text_of(value))
        elif self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.protocol_version}
        return headers

    def send(self, message: dict) -> dict | None:
        """POST one message: 202 means no response; a JSON body or an event stream holds the response."""
        deadline = time.monotonic() + self.timeout
        try:
            reply = self.post(self.connection, message)
            self.session_id = reply.headers.get("mcp-session-id") or self.session_id
            if reply.status == 202 or is_notification(message):
                reply.read()
                return None
            for incoming in self.messages(reply, self.connection, deadline):
                if not isinstance(incoming, dict):
                    continue  # not a message at all
                if "method" not in incoming and same_id(incoming.get("id"), message["id"]):
                    reply.read()  # the rest of the body, so that the connection can carry the next POST
                    return self.received_response(message, incoming)
                answer = self.receive(incoming)
                if answer is not None:
                    self.post_aside(answer)
        except OSError as exc:
            self.connection.close()  # the next POST starts on a fresh connection; closing is the 2026 cancel
            if isinstance(exc, TimeoutError) and self.session_id and not is_notification(message):
                self.post_aside(notification("notifications/cancelled", {"requestId": message["id"],
                                                                          "reason": f"no response in {self.timeout} s"}))
            if isinstance(exc, TimeoutError):
                raise TimeoutError(f"no response to {message['method']} (id {message['id']}) in {self.timeout} s")
            raise ConnectionError(f"HTTP: {exc!r}") from exc
        raise ConnectionError(f"HTTP {reply.status}: the body held no response to {message['method']}")

    def received_response(self, message: dict, reply: dict) -> dict:
        """Learn what a response teaches the transport (the version, the tools' header annotations); return it."""
        if message["method"] == "initialize" and "result" in reply:
            self.protocol_version = reply["result"].get("protocolVersion")
        if message["method"] == "tools/list" and "result" in reply:
            self.learn_headers(reply["result"])
        return reply

    def post(self, connection: HttpConnection, message: dict) -> HttpConnection:
        """Send one POST on connection; the connection, its response's status and headers read, its body not yet."""
        connection.request("POST", self.path, self.headers_for(message), json.dumps(self.traced("→", message)).encode())
        return connection

    def post_aside(self, message: dict):
        """POST a message on the side connection, while the main one is busy streaming (202 expected)."""
        self.side_connection = self.side_connection or self.connect()
        try:
            self.post(self.side_connection, message).read()
        except OSError:
            self.side_connection.close()

    def messages(self, reply, connection, deadline: float, traced: bool = True):
        """The messages of a response body, each as it arrives: one JSON body, or an event stream's events."""
        if not reply.headers.get("content-type", "").startswith("text/event-stream"):
            body = reply.read()
            try:
                yield self.traced("←", json.loads(body))
            except ValueError:
                raise ConnectionError(f"HTTP {reply.status}: {body[:200].decode(errors='replace')}")
            return
        data = []
        while True:
            if deadline != float("inf"):
                connection.socket.settimeout(max(0.01, deadline - time.monotonic()))  # the whole wait is bounded
            line = reply.read_line()
            if not line:
                return
            line = line.decode().rstrip("\r\n")
            if line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
            elif not line and data:
                message = json.loads("\n".join(data))
                yield self.traced("←", message) if traced else message
                data = []

    def listen(self, message: dict) -> dict:
        """Open a subscriptions/listen stream on a connection of its own; its acknowledgement (or error).

        A thread then reads the stream, keeping its notifications for _pump_notifications.
        """
        self.listen_connection = self.connect()
        reply = self.post(self.listen_connection, message)
        incoming = self.messages(reply, self.listen_connection, float("inf"), traced=False)
        first = self.traced("←", next(incoming, None))
        if first is None or "error" in first or first.get("method") != "notifications/subscriptions/acknowledged":
            return first

        def keep_reading():
            try:
                for later in incoming:
                    self.arrived.put(later)  # handed over (and traced) by drain(), on the caller's thread
            except (OSError, ValueError, AttributeError):
                pass  # the stream was closed: by us (stop_listening) or by the server
        threading.Thread(target=keep_reading, daemon=True).start()
        return first

    def drain(self) -> list:
        """The notifications received so far, those of the listen stream included, handed over once."""
        while not self.arrived.empty():
            self.receive(self.traced("←", self.arrived.get()))
        return super().drain()

    def cancel(self, message: dict, reason: str):
        """Cancel the listen stream: over HTTP, closing the stream is the cancel (2026-07-28)."""
        if self.listen_connection:
            import socket
            try:
                self.listen_connection.socket.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass
            self.listen_connection.close()
            self.listen_connection = None

    def learn_headers(self, result: dict):
        """Keep each listed tool's x-mcp-header annotations, and drop a tool whose annotations are invalid.

        An HTTP client must mirror annotated arguments as Mcp-Param-{Name} headers, and must leave out of
        tools/list a tool it cannot mirror (2026-07-28, Streamable HTTP, "Custom Headers").
        """
        valid = []
        for tool in result.get("tools", []):
            try:
                if header_paths(tool.get("inputSchema", {})):
                    self.tool_schemas[tool["name"]] = tool["inputSchema"]
                valid.append(tool)
            except ValueError as exc:
                print(f"mcp_min: tool {tool.get('name')!r} left out: {exc}", file=sys.stderr)
        result["tools"] = valid

    def close(self):
        """End the session with DELETE, then close the connections."""
        if self.listen_connection:
            self.cancel({}, "closing")
        if self.session_id:
            try:
                self.connection.request("DELETE", self.path, {"Mcp-Session-Id": self.session_id})
                self.connection.read()
            except OSError:
                pass  # the server has gone already
            self.session_id = None
        self.connection.close()
        if self.side_connection:
            self.side_connection.close()

# ---------------------------------------------------------------------------------------------------
# ---- 11. The wire tap ----
# python mcp_min.py tap [--log FILE] -- <server command>: put it in front of any server command in a
# host's configuration, and watch every message the host and the server exchange.
# ---------------------------------------------------------------------------------------------------

TAP_USAGE = "usage: python mcp_min.py tap [--log FILE] [--] <server command> [args...]"
GRACE_S = 2.0  # after end of input a server may take this long to exit; then SIGTERM, then SIGKILL


def tap(command: list, log=None) -> int:
    """Run command as a server, pass every byte through untouched both ways, and log each line; its exit status.

    The server stops with the tap: when the host closes our stdin (after GRACE_S), when the host closes our
    stdout, or on SIGTERM or SIGINT. A server killed by signal N reports 128 + N, as a shell does.
    """
    import signal, subprocess
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    except OSError as exc:
        print(f"tap: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127  # as a shell says "command not found"
    log, log_lock = log or sys.stderr, threading.Lock()

    def pump(source: int, target: int, arrow: str):
        """Copy bytes as they arrive, logging each whole line before the bytes that end it are passed on."""
        pending = bytearray()  # the line begun and not ended: it grows, never copied whole (a long line is linear)
        while True:
            chunk = os.read(source, 65536)
            if not chunk:
                break
            *ends, rest = chunk.split(b"\n")
            if ends:
                write_log(arrow, [bytes(pending) + ends[0], *ends[1:]])  # so a request is logged before its response
                pending = bytearray()
            pending += rest
            unsent = memoryview(chunk)
            while unsent:  # then the bytes, unchanged
                unsent = unsent[os.write(target, unsent):]
        write_log(arrow, [bytes(pending)] if pending else [])  # a last line without its newline

    def write_log(arrow: str, lines: list):
        """Log each line, one message as stdio requires, as it is."""
        with log_lock:
            log.writelines(f"{arrow} {line.decode('utf-8', 'replace')}\n" for line in lines)
            log.flush()

    def upstream():
        """Host to server; when the host closes, so does the server's stdin, and the server has GRACE_S to go."""
        try:
            pump(0, child.stdin.fileno(), "→")
        except OSError:
            pass  # the server has exited: its stdin is gone
        child.stdin.close()
        stop_server(child, polite=True)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: threading.Thread(target=stop_server, args=(child,), daemon=True).start())
    threading.Thread(target=upstream, daemon=True).start()
    try:
        pump(child.stdout.fileno(), 1, "←")
    except BrokenPipeError:
        print("tap: the host closed its side of the pipe; stopping the server", file=sys.stderr)
        stop_server(child)
    code = child.wait()
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N


def stop_server(child, polite: bool = False):
    """Stop a server child: (politely: first wait GRACE_S for it to exit by itself) SIGTERM, then SIGKILL."""
    import subprocess
    steps = [None, child.terminate, child.kill] if polite else [child.terminate, child.kill]
    for step in steps:
        if step:
            step()
        try:
            child.wait(timeout=GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def main(argv: list | None = None) -> int:
    """The command line: python mcp_min.py tap [--log FILE] [--] <server command> [args...]."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["tap"] and args[1:2] in (["--help"], ["-h"]):
        print(TAP_USAGE + "\n\nRuns the server command, passes every byte between its stdio and ours unchanged, and logs"
              "\neach line with its direction (→ host to server, ← server to host) to FILE or stderr.")
        return 0
    log_path = args[2] if args[1:2] == ["--log"] and len(args) > 2 else None
    command = args[3:] if log_path else args[1:]
    command = command[1:] if command[:1] == ["--"] else command  # "--" may be eaten by the host: optional
    if args[:1] != ["tap"] or not command or command[0].startswith("-"):
        print(TAP_USAGE, file=sys.stderr)
        return 2
    if not log_path:
        return tap(command)
    try:
        log = open(log_path, "a", encoding="utf-8")
    except OSError as exc:
        print(f"tap: cannot write the log {log_path!r}: {exc.strerror}", file=sys.stderr)
        return 2
    with log:
        return tap(command, log)


if __name__ == "__main__":
    sys.exit(main())
