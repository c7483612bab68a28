"""mcp_full: the rest of MCP, built on course 000's lab (mcp_min.py) by subclassing it.

mcp_min.py is the lab and stands alone; this module imports it and grows its server and client, each override
calling the lab's with super(), so that course 000's code still runs under everything added here:

   5. Tools from type hints       @server.tool(), schemas, content blocks, URI templates, pages,
                                  logging, subscriptions, completion                        course 002
   6. Versions and eras           2026-07-28: server/discover, _meta, resultType, cache hints, -32022;
                                  the client's connect(): probe, then fall back             course 002, 004
   7. Asking the client           Context: log, progress, elicit, sample, roots; input_required rounds
                                  with a signed requestState; -32021                         course 004
   8. Both directions             the server's own requests, cancellation, subscriptions/listen
   The server, The client: MCPServer and MCPClient, mcp_min's grown by all four
   In memory: InMemoryTransport, the lab's idea on this layer's Transport (the server's own messages cross
                                  as they are sent, its questions are answered)

A program written against the lab runs here unchanged, its import changed: the names are the lab's
(`from mcp_full import MCPServer, MCPClient, InMemoryTransport, request, RPCError, ...`).

The seam: what this layer needs beyond the lab's shapes it carries itself, through no hook of the lab's.
- The request being served (its id, params, _meta, stream, era) is a Context, which this layer's handle()
  makes and keeps in a contextvars.ContextVar for the duration of mcp_min's handle(): context() reads it.
  A handler keeps the course's shape, taking only params; a tool asks for the Context with a parameter
  annotated Context, and is wrapped at registration to receive it (a tool that takes none runs as it is).
- A 2026-07-28 request passes no gate: _gate, mcp_min's step, is overridden to let it by.
- "Answered later" (subscriptions/listen) and "input required" (a question not yet answered) are
  exceptions outside Exception, so that neither the lab's three-tier try nor a tool's own `except
  Exception` takes them for failures: _dispatch turns InputRequired into its result, handle() turns
  AnsweredLater into no response now.
- The -32603 boundary, the gate's and the lattice's codes live only in mcp_min.py; this layer reuses them.
The transports (mcp_stdio.py, mcp_http.py) take any server with the lab's seam: handle(), drain_outbox().

Example:
    server = MCPServer("demo")

    @server.tool()
    def add(x: int, y: int) -> int:
        "Add two integers."
        return x + y

    client = MCPClient(InMemoryTransport(server))
    client.connect()                            # server/discover: this server speaks 2026-07-28 too
    client.call_tool("add", {"x": 2, "y": 3})   # {"content": [{"type": "text", "text": "5"}], ...}

Glossary: mcp_min's, and
  era           how a request is served: "handshake" (2025-06-18, 2025-11-25) or "stateless" (2026-07-28)
  question      what a server asks its client while it serves a request: elicitation/create (the user),
                sampling/createMessage (the client's model) or roots/list (the client's folders)
  answer        the result a client gives to a question
  round         one input_required result and the retry that answers it (2026-07-28)
  stream        a channel that stays open for many messages: an HTTP event stream, a listen stream
  arrive        what a notification does at the client, which sees it in on_notification (the transport's hook,
                MCPClient's method); receive is the transport's step for any message it was not waiting for
"""

import mcp_min  # first: on a Python older than 3.10 it ends the program with one clear line

import collections
import contextvars
import functools
import json
import os
import re
import threading
import time
import types
import weakref

from mcp_min import (ENCODER, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, JSONRPC, METHOD_NOT_FOUND, NOT_INITIALIZED,
                     PARSE_ERROR, TOOL_NOT_ALLOWED, UNKNOWN_TOOL, RPCError, check_arguments, error_response,
                     first_line, is_notification, is_response, is_result, malformed, negotiate_version, notification,
                     param, print_trace, prompt_messages, report, request, resource_contents, response, text_content,
                     valid_id)  # also this module's names: a program written against the lab runs here unchanged

# The two codes this layer raises (spec 2026-07-28, basic, "Error Codes"); HTTP's -32020 is mcp_http.py's.
MISSING_CLIENT_CAPABILITY = -32021  # the request needs a capability the client did not declare (section 7)
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28: the version in _meta is not served here (section 6)

# ---------------------------------------------------------------------------------------------------
# ---- 5. Tools from type hints ----
# The decorators in the official SDK's style (course 002): a function's type hints become its inputSchema,
# its docstring its description; what it returns becomes content blocks. Resources may be URI templates;
# every */list answers in pages; and the small methods real hosts call: logging, subscriptions, completions.
# ---------------------------------------------------------------------------------------------------

JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]  # RFC 5424

# The content blocks a tool may return, each with the fields it must have.
CONTENT_BLOCKS = {"text": ("text",), "image": ("data", "mimeType"), "audio": ("data", "mimeType"),
                  "resource_link": ("uri", "name"), "resource": ("resource",)}


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
            fix = ("a lambda cannot carry hints: write a def, or pass input_schema={...}" if fn.__name__ == "<lambda>"
                   else f"such as {name}: int or {name}: str (or pass input_schema={{...}})")
            raise TypeError(f"{fn.__name__}'s parameter {name!r} needs a type hint, {fix}: "
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


def header_name(name: str, schema: dict) -> str:
    """name, if it may follow Mcp-Param- for an argument of this schema (2026-07-28, "x-mcp-header"); else ValueError."""
    if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):  # an HTTP token (RFC 9110, section 5.6.2)
        raise ValueError(f"{name!r} cannot be part of a header name")
    if schema.get("type") not in ("string", "integer", "boolean"):
        raise ValueError(f"only a string, integer or boolean argument can travel as header Mcp-Param-{name}")
    return name


def is_content_block(value) -> bool:
    """Whether value is a content block: a known "type" and every field that type needs."""
    if not isinstance(value, dict) or value.get("type") not in CONTENT_BLOCKS:
        return False
    return all(field in value for field in CONTENT_BLOCKS[value["type"]])


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
    if re.sub(r"\{\+?\w+\}", "", uri_template).count("{") or re.sub(r"\{\+?\w+\}", "", uri_template).count("}"):
        raise ValueError(f"{uri_template!r} is not a URI template: each variable is {{name}} or {{+name}}, braces closed")
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


MAX_PAGES = 1000  # a list that never ends is a broken server: the client stops following nextCursor here

# ---------------------------------------------------------------------------------------------------
# ---- 6. Versions and eras ----
# Handshake era: initialize, notifications/initialized, a session (course 000). Stateless era
# (2026-07-28, course 004): no handshake; every request carries its version and the client's
# capabilities in params._meta, and every result says its resultType; lists carry cache hints.
# ---------------------------------------------------------------------------------------------------

HANDSHAKE_VERSIONS = mcp_min.VERSIONS  # newest first: the versions initialize may agree on
STATELESS_VERSIONS = ["2026-07-28"]
SUPPORTED_VERSIONS = STATELESS_VERSIONS + HANDSHAKE_VERSIONS
PUBLISHED_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"

HANDSHAKE_ONLY = {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}
STATELESS_ONLY = {"subscriptions/listen"}
CACHEABLE = {"server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read",
             "prompts/list"}
ERROR_CODES = (PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
               -32020, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)  # every code this project sends


def is_stateless(message: dict) -> bool:
    """Whether a request is served in the stateless era: server/discover, or its _meta names a protocol version."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return message.get("method") == "server/discover" or (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta)


def check_meta(meta: dict):
    """Refuse a 2026-07-28 request whose _meta lacks what the handshake would have said, or names another version."""
    if PROTOCOL_VERSION_KEY not in meta:  # server/discover too: its _meta is required (2026-07-28)
        raise RPCError(INVALID_PARAMS, f"_meta must carry {PROTOCOL_VERSION_KEY}")
    if meta[PROTOCOL_VERSION_KEY] not in STATELESS_VERSIONS:
        raise RPCError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                       {"supported": SUPPORTED_VERSIONS, "requested": meta[PROTOCOL_VERSION_KEY]})
    if not isinstance(meta.get(CLIENT_CAPABILITIES_KEY), dict):
        raise RPCError(INVALID_PARAMS, f"_meta must carry {CLIENT_CAPABILITIES_KEY}")
    if LOG_LEVEL_KEY in meta and meta[LOG_LEVEL_KEY] not in LOG_LEVELS:
        raise RPCError(INVALID_PARAMS, f"unknown log level {meta[LOG_LEVEL_KEY]!r}; one of {LOG_LEVELS}")

# ---------------------------------------------------------------------------------------------------
# ---- 7. Asking the client ----
# A running tool, prompt or resource function gets a Context: it may log, report progress, and ask the
# client questions. In 2026-07-28 a question ends the round: the server answers input_required, and the
# client sends the request again with the answers (course 004, section 6). The handshake era sends the
# question as a request of the server's own and waits for its response (section 8).
# ---------------------------------------------------------------------------------------------------

STATE_TTL_S = 600  # a requestState is refused after ten minutes: time enough for a person to answer
ASK_TIMEOUT_S = 300  # how long a handshake-era function waits for the client's answer
MAX_INPUT_ROUNDS = 10  # input_required retries before the client gives up (the SDK's bound too)

# What a server may ask its client while it serves a request, and the capability a client declares for each.
QUESTION_CAPABILITIES = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                         "roots/list": "roots"}


class InputRequired(BaseException):
    """Raised by Context.ask when the client has not answered yet; MCPServer._dispatch answers input_required.

    A BaseException, like SystemExit: a tool's own `except Exception`, and the lab's lattice, must not take
    the question for a failure.
    """

    def __init__(self, questions: dict):
        super().__init__(", ".join(questions))
        self.questions = questions


CONTEXT = contextvars.ContextVar("mcp_full.context")  # the request being served on this thread (MCPServer.handle)


def context() -> "Context":
    """The Context of the request being served on this thread."""
    return CONTEXT.get()


class Context:
    """One request being served, as its handler and the function it runs see it: its id, method, params and
    _meta, its era, and where the messages it sends on the way go (its own stream, if the transport gave
    one, else the session's outbox). A tool, prompt or resource function asks for it with a parameter
    annotated Context, which its inputSchema leaves out:
        @server.tool()
        def count_slowly(n: int, ctx: Context) -> str:
            for i in range(n):
                if ctx.cancelled:
                    return "stopped"
                ctx.progress(i + 1, total=n)
            return "done"
    """

    last_progress = None  # the progress the function last reported for this request
    cancelled_by_client = False  # set by notifications/cancelled (section 8)
    _answers = None  # the client's answers so far, read when the function first asks

    def __init__(self, server: "MCPServer", message: dict, stream=None):
        params = message.get("params")
        self.params = params if isinstance(params, dict) else {}
        meta = self.params.get("_meta")
        self.meta = meta if isinstance(meta, dict) else {}
        self.server, self.method, self.stream = server, message.get("method"), stream
        self.id = message.get("id")  # a handler sees only a valid one: mcp_min's _check refuses the rest
        self.stateless = is_stateless(message)
        self.send = stream.send if stream else server.send
        self.asked = set()  # the keys the function has asked while serving this request

    @property
    def cancelled(self) -> bool:
        """Whether this request was cancelled: notifications/cancelled named it, or its stream says closed (the client
        closed it, or the transport stopped the request)."""
        return self.cancelled_by_client or bool(self.stream and self.stream.closed)

    def close_stream(self):
        """Close the connection carrying this request's stream, not the stream: over HTTP in a session the client
        reconnects and gets the rest (spec 2025-11-25, basic/transports, "Resumability and Redelivery")."""
        disconnect = getattr(self.stream, "disconnect", None)  # only a resumable transport's stream can be cut short
        if disconnect:
            disconnect()

    @property
    def progress_token(self):
        """The token the client gave for this request's progress; None: it wants no progress."""
        return self.meta.get("progressToken")

    @property
    def log_level(self) -> str | None:
        """The lowest level of log line the client wants: 2026-07-28 has no logging/setLevel, so its request says (or gets none)."""
        return self.meta.get(LOG_LEVEL_KEY) if self.stateless else self.server.log_level

    @property
    def client_capabilities(self) -> dict:
        """What the client declared it can do: in this request's _meta (2026-07-28), else at initialize."""
        if self.stateless:
            return self.meta.get(CLIENT_CAPABILITIES_KEY, {})
        return self.server.client_capabilities or {}

    def require(self, capabilities):
        """Refuse with MISSING_CLIENT_CAPABILITY, naming them, unless the client declared each capability."""
        missing = {name: {} for name in capabilities if name not in self.client_capabilities}
        if missing:
            raise RPCError(MISSING_CLIENT_CAPABILITY, f"the client did not declare {', '.join(missing)}",
                           {"requiredCapabilities": missing})

    def log(self, level: str, data, logger: str | None = None):
        """Send notifications/message, unless level is below the one the client set."""
        if self.log_level in LOG_LEVELS and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level):
            params = {"level": level, "data": data} | ({"logger": logger} if logger else {})
            self.send(notification("notifications/message", params))

    def progress(self, progress: float, total: float | None = None, message: str | None = None):
        """Send notifications/progress for the request's progressToken; progress must grow."""
        if self.progress_token is None:
            return
        if self.last_progress is not None and progress <= self.last_progress:
            raise ValueError(f"progress must increase: {progress} after {self.last_progress}")
        self.last_progress = progress
        params = {"progressToken": self.progress_token, "progress": progress, "total": total, "message": message}
        self.send(notification("notifications/progress", {k: v for k, v in params.items() if v is not None}))

    @property
    def binding(self) -> tuple:
        """What a requestState is minted for: the method, the tool's name (or the URI), the arguments."""
        return self.method, self.params.get("name", self.params.get("uri")), self.params.get("arguments", {})

    @property
    def answers(self) -> dict:
        """The client's answers so far: earlier rounds' from the signed requestState, this round's from inputResponses."""
        if self._answers is None:
            self._answers = self.server.answers(self) if self.stateless else {}  # the handshake era has no rounds
        return self._answers

    def ask(self, questions: dict) -> dict:
        """Put several questions to the client at once ({key: {method, params}}); its answers, by the same keys.

        In 2026-07-28 a question not yet answered ends this round: the server responds input_required, the
        client retries with the answers, and the function runs again from the top (spec 2026-07-28, basic,
        "Multi Round-Trip Requests"). So the code before a question must be safe to run once a round.
        """
        self.require(QUESTION_CAPABILITIES[question["method"]] for question in questions.values())
        again = [key for key in questions if key in self.asked]
        if again:  # its answer cannot change while this request is served: asking in a loop would never end
            raise RuntimeError(f"the question {again[0]!r} was asked already while serving this request, and gets the "
                               f"same answer: to ask again, use a new key, such as {again[0] + '-2'!r}")
        self.asked.update(questions)
        unanswered = {key: question for key, question in questions.items() if key not in self.answers}
        if unanswered and self.stateless:
            raise InputRequired(unanswered)
        if unanswered:
            self.answers.update(self.server.ask_now(self, unanswered))
        return {key: self.answers[key] for key in questions}

    def elicit(self, key: str, message: str, schema: dict) -> dict:
        """Ask the user a question through the client (elicitation/create): {action, content?}."""
        question = {"method": "elicitation/create", "params": {"message": message, "requestedSchema": schema}}
        return self.ask({key: question})[key]

    def sample(self, key: str, prompt: str, max_tokens: int = 256, **params) -> dict:
        """Borrow the client's model (sampling/createMessage): {role, content, model, stopReason}.

        Deprecated by 2026-07-28 (course 004, section 2): new servers should not depend on it.
        """
        messages = [{"role": "user", "content": text_content(prompt)}]
        question = {"method": "sampling/createMessage", "params": {"messages": messages, "maxTokens": max_tokens, **params}}
        return self.ask({key: question})[key]

    def roots(self, key: str = "roots") -> list:
        """The folders the client allows (roots/list): [{uri, name?}].

        Deprecated by 2026-07-28 (course 004, section 2): new servers should not depend on it.
        """
        return self.ask({key: {"method": "roots/list", "params": {}}})[key].get("roots", [])

# ---------------------------------------------------------------------------------------------------
# ---- 8. Both directions ----
# A session is not one request at a time. While a tool runs, the client may ping, cancel it, or answer
# the server's own request (a question, in the handshake era); a 2026-07-28 client keeps a
# subscriptions/listen stream open to hear list changes. Transports call MCPServer.handle from several
# threads at once: a request that runs long keeps its thread while another reads on.
# ---------------------------------------------------------------------------------------------------

MAX_KEPT_NOTIFICATIONS = 10_000  # notifications a client keeps until it pumps them; older ones are dropped


class AnsweredLater(BaseException):
    """Raised by a handler whose response comes when its stream ends (subscriptions/listen): no response now."""


class SessionExpired(ConnectionError):
    """The server has forgotten the session a request named (HTTP 404): the client starts a new one with a new
    initialize (spec 2025-11-25, basic/transports, "Session Management")."""


class Transport:
    """What this layer's client transports share: the trace hook, the notifications received, and the
    answers they send back when the server asks the client something (section 7)."""

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
        if not isinstance(message["method"], str) or not isinstance(message.get("params", {}), dict):
            return None  # not a message this client can read; a notification gets no answer, nor does this
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
        if not self.notifications:
            return []  # the usual case after a call, kept cheap
        with self._received:
            notifications = list(self.notifications)
            self.notifications.clear()
        return notifications

    def acknowledgement(self, listen_id) -> dict | None:
        """Take the acknowledgement of the listen stream listen_id out of the notifications received, if there."""
        with self._received:
            for message in self.notifications:
                meta = message.get("params", {}).get("_meta")
                meta = meta if isinstance(meta, dict) else {}
                if message["method"] == "notifications/subscriptions/acknowledged" and meta.get(SUBSCRIPTION_ID_KEY) == listen_id:
                    self.notifications.remove(message)
                    return message
        return None

# ---------------------------------------------------------------------------------------------------
# ---- The server ----
# mcp_min's MCPServer, grown by sections 5-8. Each override says which section it serves and calls the
# lab's with super(): course 000's handle, gate, _dispatch and _call_tool still run under it.
# ---------------------------------------------------------------------------------------------------

class MCPServer(mcp_min.MCPServer):
    """mcp_min's server with the rest of MCP: decorators, both eras, asking the client, cancellation, listening.

        server = MCPServer("demo", allowed_tools={"add"}, instructions="Arithmetic.")

        @server.tool()
        def add(x: int, y: int) -> int:
            "Add two integers."
            return x + y
    ttl_ms is how long a 2026-07-28 client may cache a list; page_size how many items a */list page holds;
    state_key signs requestState (a fresh random key by default).
    """

    # Every method this server serves: course 000's (mcp_min's table), and these.
    # Course 000's lab declares {"tools": {"listChanged": true}, "resources": {}, "prompts": {}}; this server also
    # notifies resource and prompt list changes, and serves logging, subscriptions and completions (section 5).
    # In 2026-07-28 list changes and resource updates reach a client on a subscriptions/listen stream (section 8).
    CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                    "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
    HANDLERS = mcp_min.MCPServer.HANDLERS | {
        "resources/templates/list": "_list_templates",  # 5. URI templates
        "logging/setLevel": "_set_level",  # 5. the small methods real hosts call
        "resources/subscribe": "_subscribe", "resources/unsubscribe": "_unsubscribe",
        "completion/complete": "_complete",
        "server/discover": "_discover",  # 6. 2026-07-28: what this server speaks, without a handshake
        "subscriptions/listen": "_listen",  # 8. 2026-07-28: a stream of list changes and resource updates
    }

    def __init__(self, name: str, version: str = "0.1.0", allowed_tools=None, instructions: str | None = None,
                 ttl_ms: int = 60_000, state_key: bytes | None = None, page_size: int = 100):
        super().__init__(name, version, allowed_tools)
        self.instructions, self.ttl_ms, self.page_size = instructions, ttl_ms, page_size
        self.templates = {}  # 5. URI templates: the catalog's fourth part
        self._sharing = [weakref.ref(self)]  # the servers on this catalog: only this one, until share_catalog()
        self.log_level, self.subscriptions = "info", set()  # 5. what the session's client set and subscribed to
        self.on_send = None  # set by a transport that delivers a notification before the response is ready
        # 8. Transports call handle() from several threads at once: _lock guards what follows, and the outbox.
        self._lock = threading.Lock()
        self._catalog_lock = threading.RLock()  # held to change the catalog, or to read a list of it: shared by its sessions
        self._running = {}  # request id -> its Context, so that notifications/cancelled reaches it
        self._waiting = {}  # id of a request this server sent -> the queue its response is put in
        self._last_request_id = 0
        self._listeners = []  # one {"id", "filter", "context"} an open subscriptions/listen stream
        self._telling = threading.RLock()  # held to acknowledge a stream, or to send on the streams: acknowledgement first
        # 7. input_required: each requestState is signed, expires, and is spent only once.
        self._state_key = state_key or os.urandom(32)
        self._states_spent = {}  # nonce -> expiry, forgotten once expired: shared by the servers on one catalog
        self._states_lock = threading.Lock()  # and the lock that guards it

    # -- the entry point: a Context for each request (the seam), then mcp_min's handle --

    def handle(self, message, stream=None) -> dict | None:
        """mcp_min's handle, with the request's Context set for its handler (context()); None for a notification.

        stream, if a transport gives one, carries this request's own messages (progress, log lines, the
        server's questions) as they happen, and tells whether the client closed it (mcp_http.py).
        """
        if not isinstance(message, dict):
            return super().handle(message)  # a batch or a scalar: the lab says what is wrong
        if is_response(message):
            self._receive_response(message)  # 8. the client answering a question this server asked
            return None
        ctx = Context(self, message, stream)
        token = CONTEXT.set(ctx)
        try:
            reply = super().handle(message)
        except AnsweredLater:  # 8. subscriptions/listen: its response comes when its stream ends
            return None
        finally:
            CONTEXT.reset(token)
        return None if ctx.cancelled else reply  # 8. a cancelled request gets no response (spec: SHOULD NOT)

    def _gate(self, method: str):
        """6. 2026-07-28: no handshake, so no gate; every other request passes mcp_min's."""
        if not context().stateless:
            super()._gate(method)

    def _dispatch(self, method: str, params: dict) -> dict:
        """mcp_min's flat table, in this request's era; findable while it runs (8); its input_required result (7)."""
        ctx = context()
        if "_meta" in params:
            param(params, "_meta", dict)
        if ctx.stateless:
            check_meta(ctx.meta)  # 6. what the handshake would have said, or -32022
        if method in (HANDSHAKE_ONLY if ctx.stateless else STATELESS_ONLY):  # 6. the other era's method
            raise RPCError(METHOD_NOT_FOUND, f"method not found: {method}")
        self._running[ctx.id] = ctx  # 8. notifications/cancelled may name it while it runs (one dict step: no lock)
        try:
            result = super()._dispatch(method, params)
        except InputRequired as exc:  # 7. 2026-07-28: the client answers, then sends the request again
            result = self.input_required(exc, ctx)
        finally:
            if self._running.get(ctx.id) is ctx:
                self._running.pop(ctx.id, None)  # (pop: a request reusing the id may have ended first)
        return self.stateless_result(method, result) if ctx.stateless else result

    def _notice(self, method: str, params: dict):
        """8. notifications/cancelled reaches the request it names; the rest as in mcp_min."""
        if method == "notifications/cancelled":
            self._cancel(params.get("requestId"))
        super()._notice(method, params)

    # -- 5. tools from type hints --

    def tool(self, name: str | None = None, description: str = "", notify: bool = False, headers: dict | None = None,
             requires: tuple = ()):
        """Decorator in the official SDK's style: @server.tool() offers the function below it (so does @server.tool)."""
        if callable(name):  # @server.tool without parentheses: name is the function itself
            return self.add_tool(name.__name__, name)
        return lambda fn: self.add_tool(name or fn.__name__, fn, description, notify=notify, headers=headers,
                                        requires=requires)

    def resource(self, uri: str, name: str | None = None, mime_type: str = "text/plain"):
        """Decorator: @server.resource("policy://{doc_id}") serves what the function returns."""
        if not isinstance(uri, str):  # @server.resource without its URI: say so now, not at the first read
            raise TypeError(f"a resource needs its URI first, as in @server.resource(\"notes://{{name}}\"), not {uri!r}")
        return lambda fn: self.add_resource(uri, fn, name or fn.__name__, mime_type=mime_type)

    def prompt(self, name: str | None = None, description: str = ""):
        """Decorator: @server.prompt() offers a prompt template (so does @server.prompt)."""
        if callable(name):  # @server.prompt without parentheses
            return self.add_prompt(name.__name__, name)
        return lambda fn: self.add_prompt(name or fn.__name__, fn, description)

    def add_tool(self, name: str, fn, description: str = "", input_schema: dict | None = None,
                 notify: bool = False, replace: bool = False, headers: dict | None = None, requires: tuple = ()):
        """Offer fn as a tool; without input_schema, derive it from fn's signature. Returns fn.

        headers maps an argument to the name of the Mcp-Param-{Name} header that repeats it over HTTP
        (2026-07-28's x-mcp-header); requires names the client capabilities the tool cannot run without
        (section 7). A name already offered is refused, unless replace.
        """
        schema, ctx_name, _ = signature_schema(fn, hinted=input_schema is None)
        schema = input_schema or schema
        for argument, header in (headers or {}).items():
            schema["properties"][argument]["x-mcp-header"] = header_name(header, schema["properties"][argument])
        super().add_tool(name, with_context(fn, ctx_name, tuple(requires)), description or first_line(fn.__doc__),
                         schema, notify, replace)
        self.tools[name]["returns"] = getattr(fn, "__annotations__", {}).get("return", "")  # its hint; "": none
        return fn

    def add_resource(self, uri: str, read, name: str | None = None, description: str = "",
                     mime_type: str = "text/plain", notify: bool = False, replace: bool = False):
        """Offer data at uri: read is the content (str or bytes) or a function returning it. Returns read.

        A uri with {variables} is a URI template: read gets each variable as a keyword argument, and
        raises KeyError for a value it does not know (the client gets "unknown resource"). With
        replace, offering a uri again replaces its content, and its subscribers hear of it.
        """
        if not callable(read):
            resource_contents(uri, read, mime_type)  # content that is neither text nor bytes is refused now, as in mcp_min
        reader = read if callable(read) else lambda: read
        _, ctx_name, choices = signature_schema(reader)
        description = description or first_line(reader.__doc__)
        if "{" not in uri:
            replaced = uri in self.resources  # (if not replace, offering it again raises)
            super().add_resource(uri, with_context(reader, ctx_name), name, description, mime_type, notify, replace)
            if replaced:
                self.resource_updated(uri)  # changed through the server's API: tell subscribers
            return read
        pattern, variables = template_pattern(uri), re.findall(r"\{\+?(\w+)\}", uri)
        parameters = [parameter for parameter in parameters_of(reader)[0] if parameter != ctx_name]
        if sorted(variables) != sorted(parameters):  # read gets each variable by name: they must be the same
            raise ValueError(f"the URI template {uri!r} has the variables {variables}, but {reader.__name__} takes "
                             f"{parameters}: name each parameter after a variable")
        spec = {"uriTemplate": uri, "name": name or uri, "mimeType": mime_type, "description": description}
        entry = {"spec": spec, "fn": with_context(reader, ctx_name), "pattern": pattern,
                 "spanning": set(re.findall(r"\{\+(\w+)\}", uri)), "choices": choices}
        self._offer(self.templates, uri, entry, "resources", notify, replace)
        return read

    def add_prompt(self, name: str, render, description: str = "", arguments: list | None = None,
                   notify: bool = False, replace: bool = False):
        """Offer a prompt template: render's parameters are its variables (unless arguments says); it returns the text."""
        schema, ctx_name, choices = signature_schema(render)
        if arguments is None:
            arguments = [{"name": key, "required": key in schema["required"]} for key in schema["properties"]]
        super().add_prompt(name, with_context(render, ctx_name), description or first_line(render.__doc__),
                           arguments, notify, replace)
        self.prompts[name]["choices"] = choices  # completion/complete offers them
        return render

    def tool_result(self, value) -> dict:
        """mcp_min's result, and also: content blocks sent as they are, a dict as structuredContent too, and
        None as no content when the function's hint says it returns None.

        A content block (e.g. {"type": "image", "data": <base64>, "mimeType": "image/png"}) or a list of
        them is how a tool returns pictures, sound or files; a dict that has a "type" key but not a
        block's fields is data, not a block.
        """
        if value is None:
            promised = self.tools.get(context().params.get("name"), {}).get("returns", "")
            if promised in (None, "None") or type(None) in getattr(promised, "__args__", ()):
                return {"content": []}  # `-> None` (or Optional): nothing to say, and said so
            if promised != "":
                raise TypeError(f"the tool returned nothing (None), though its hint says it returns "
                                f"{getattr(promised, '__name__', promised)}: a forgotten return?")
        if not isinstance(value, (dict, list)) or is_result(value):
            return super().tool_result(value)  # a string, a number, a boolean, a whole result: the lab's
        blocks = [value] if is_content_block(value) else value
        if isinstance(blocks, list) and blocks and all(is_content_block(block) for block in blocks):
            ENCODER.encode(blocks)  # fail here, inside the tool's try, not on the wire
            return {"content": blocks}
        result = super().tool_result(value)
        if isinstance(value, dict):
            result["structuredContent"] = value  # spec 2025-11-25, server/tools: structuredContent is an object
        return result

    def _initialize(self, params: dict) -> dict:
        # initialize {protocolVersion, capabilities, clientInfo}: mcp_min's, and the server's instructions
        result = super()._initialize(params)
        return result | ({"instructions": self.instructions} if self.instructions else {})

    # Each list is read under the catalog's lock: another thread adding to it meanwhile would end the reading
    # with "dictionary changed size during iteration" (8).

    def _list_tools(self, params: dict) -> dict:
        # tools/list {cursor?}
        with self._catalog_lock:
            tools = super()._list_tools(params)["tools"]
        return self._page("tools", tools, params)

    def _list_resources(self, params: dict) -> dict:
        # resources/list {cursor?}
        with self._catalog_lock:
            resources = super()._list_resources(params)["resources"]
        return self._page("resources", resources, params)

    def _list_prompts(self, params: dict) -> dict:
        # prompts/list {cursor?}
        with self._catalog_lock:
            prompts = super()._list_prompts(params)["prompts"]
        return self._page("prompts", prompts, params)

    def _list_templates(self, params: dict) -> dict:
        # resources/templates/list {cursor?}
        with self._catalog_lock:
            templates = [template["spec"] for template in self.templates.values()]
        return self._page("resourceTemplates", templates, params)

    def _offer(self, offered: dict, key: str, entry: dict, listed: str, notify: bool, replace: bool):
        """mcp_min's, under the catalog's lock: no list being read changes under it (its list_changed is told
        under it too, so a client that lists after the notification sees the change)."""
        with self._catalog_lock:
            super()._offer(offered, key, entry, listed, notify, replace)

    def _page(self, key: str, items: list, params: dict) -> dict:
        """One page of a */list result: from the cursor on, with nextCursor while more remain."""
        start = 0
        if "cursor" in params:
            start = cursor_offset(params["cursor"], key)
        if not 0 <= start < max(len(items), 1):
            raise RPCError(INVALID_PARAMS, f"unknown cursor: {params['cursor']!r}")
        result = {key: items[start:start + self.page_size]}
        if start + self.page_size < len(items):
            result["nextCursor"] = page_cursor(key, start + self.page_size)
        return result

    def _read_resource(self, params: dict) -> dict:
        # resources/read {uri}: a fixed resource (mcp_min's), else the first URI template the uri matches
        uri = param(params, "uri", str)
        template, variables = self._find_template(uri) if uri not in self.resources else (None, None)
        if template is None and uri not in self.resources:
            for template in list(self.templates.values()):  # a {name} that would have matched as {+name}: say so
                spanning = template_pattern(re.sub(r"\{(\w+)\}", r"{+\1}", template["spec"]["uriTemplate"]))
                if template_variables(spanning, uri, set(spanning.groupindex)) is not None:
                    raise RPCError(INVALID_PARAMS, f"unknown resource: {uri} (in {template['spec']['uriTemplate']}, a "
                                   "{name} is one path segment; a variable that holds a path is written {+name})", {"uri": uri})
            template = None
        if template is None:
            return super()._read_resource(params)  # a fixed resource, or "unknown resource"
        try:
            content = template["fn"](**variables)
        except KeyError:  # the template's function does not know this name: no bug, an unknown resource
            raise RPCError(INVALID_PARAMS, f"unknown resource: {uri}", {"uri": uri})
        except Exception as exc:
            if not isinstance(exc, RPCError):
                report(f"the resource {uri} failed", exc)  # its author sees where, as a tool's does
            raise
        return {"contents": [resource_contents(uri, content, template["spec"]["mimeType"])]}

    def _find_template(self, uri: str) -> tuple:
        """The first URI template uri matches, with its variables; (None, None) if none."""
        for template in list(self.templates.values()):
            variables = template_variables(template["pattern"], uri, template["spanning"])
            if variables is not None:
                return template, variables
        return None, None

    def _set_level(self, params: dict) -> dict:
        # logging/setLevel {level}: log lines below it are not sent
        if params.get("level") not in LOG_LEVELS:
            raise RPCError(INVALID_PARAMS, f"unknown log level {params.get('level')!r}; one of {LOG_LEVELS}")
        self.log_level = params["level"]
        return {}

    def _subscribe(self, params: dict) -> dict:
        # resources/subscribe {uri}
        self.subscriptions.add(param(params, "uri", str))
        return {}

    def _unsubscribe(self, params: dict) -> dict:
        # resources/unsubscribe {uri}
        self.subscriptions.discard(param(params, "uri", str))
        return {}

    def _complete(self, params: dict) -> dict:
        # completion/complete {ref: {type, name | uri}, argument: {name, value}}
        ref, argument = param(params, "ref", dict), param(params, "argument", dict)
        catalog = self.prompts if ref.get("type") == "ref/prompt" else self.templates
        offered = catalog.get(str(ref.get("name") if ref.get("type") == "ref/prompt" else ref.get("uri")))
        if offered is None or not isinstance(argument.get("name"), str):
            raise RPCError(INVALID_PARAMS, f"nothing to complete for {ref} and {argument}")
        typed = str(argument.get("value", ""))
        values = [choice for choice in offered.get("choices", {}).get(argument["name"], []) if choice.startswith(typed)]
        return {"completion": {"values": values[:100], "total": len(values), "hasMore": len(values) > 100}}

    def list_changed(self, listed: str):
        """mcp_min's, for every session on this catalog (each has its own client, so its own outbox); and every
        listen stream that asked for it (8)."""
        changed = notification(f"notifications/{listed}/list_changed")
        for server in self.sharing():
            with server._lock:
                if changed not in server._outbox:  # one waiting says it all: an idle session's outbox stays small
                    super(MCPServer, server).list_changed(listed)  # the lab's: into that session's outbox
            server.delivered()
            server._tell_listeners(lambda asked: asked.get(f"{listed}ListChanged"), f"notifications/{listed}/list_changed", {})

    def resource_updated(self, uri: str):
        """Tell each subscribed session, and every listen stream that subscribed to uri (notifications/resources/updated)."""
        for server in self.sharing():  # the resource belongs to the catalog: every session may have subscribed
            updated = notification("notifications/resources/updated", {"uri": uri})
            if uri in server.subscriptions and server._initialized and updated not in server._outbox:
                server.send(updated)  # (one waiting for this uri says it all)
            server._tell_listeners(lambda asked: uri in asked.get("resourceSubscriptions", []),
                                   "notifications/resources/updated", {"uri": uri})

    def send(self, message: dict):
        """Send the client a message: into the outbox, which a transport that set on_send carries at once."""
        with self._lock:
            self._outbox.append(message)
        self.delivered()

    def delivered(self):
        """Let a transport that set on_send carry the outbox now (stdio: progress reaches the client mid-call)."""
        if self.on_send and self._outbox:
            self.on_send()

    def drain_outbox(self) -> list:
        """mcp_min's, under the lock: several threads may queue at once."""
        with self._lock:
            return super().drain_outbox()

    def share_catalog(self) -> "MCPServer":
        """A new server on this server's catalog, for another client: the catalog is shared, not copied; its session
        starts afresh."""
        other = type(self)(self.server_info["name"], self.server_info["version"], allowed_tools=self.allowed_tools,
                           instructions=self.instructions, ttl_ms=self.ttl_ms, state_key=self._state_key,
                           page_size=self.page_size)
        other.tools, other.resources, other.templates, other.prompts = self.tools, self.resources, self.templates, self.prompts
        other._sharing = self._sharing  # one list for the whole catalog: a change to it is told to every session
        other._catalog_lock = self._catalog_lock  # and one lock for it
        # One key signs their states, so one record spends them: a state is spent once, whichever session it reaches
        other._states_spent, other._states_lock = self._states_spent, self._states_lock
        self._sharing[:] = [ref for ref in self._sharing if ref() is not None] + [weakref.ref(other)]
        return other

    def sharing(self) -> list:
        """The servers whose sessions share this catalog, this one among them."""
        servers = [ref() for ref in list(self._sharing)]
        return [server for server in servers if server is not None]

    # -- 6. versions and eras --

    def _discover(self, params: dict) -> dict:
        # server/discover {_meta}: what this server speaks, asked without a handshake
        result = {"supportedVersions": SUPPORTED_VERSIONS, "capabilities": self.CAPABILITIES}
        return result | ({"instructions": self.instructions} if self.instructions else {})

    def stateless_result(self, method: str, result: dict) -> dict:
        """A 2026-07-28 result: its resultType and the server's info; a list's cache hints; a tool's isError."""
        result = {**result, "resultType": result.get("resultType", "complete")}
        if method == "tools/call" and result["resultType"] == "complete":
            result.setdefault("isError", False)  # course 004's transcript shows it, and its client reads it
        result["_meta"] = {SERVER_INFO_KEY: self.server_info}
        if method in CACHEABLE and result["resultType"] == "complete":
            result |= {"ttlMs": self.ttl_ms, "cacheScope": "private"}  # private: what one may see depends on its allow-list
        return result

    # -- 7. asking the client --

    def ask_now(self, ctx: Context, questions: dict) -> dict:
        """Handshake era: send each question as a request of the server's own, then wait for the responses.

        The transport keeps reading while this waits, and hands each response to handle(), which passes
        it here through _receive_response (section 8).
        """
        import queue
        waiting = {}
        for key, question in questions.items():
            id, slot = self._expect_response()
            waiting[key] = id, slot
            ctx.send(request(id, question["method"], question.get("params")))
        answers, deadline = {}, time.monotonic() + ASK_TIMEOUT_S
        for key, (id, slot) in waiting.items():
            reply = None
            while reply is None and not ctx.cancelled and time.monotonic() < deadline:
                try:
                    reply = slot.get(timeout=0.05)
                except queue.Empty:
                    continue  # look at cancelled and the clock again
            if reply is None:
                self._forget_requests([id for id, _ in waiting.values()])
                raise RuntimeError(f"no answer to {questions[key]['method']} ('{key}')")
            if "error" in reply:
                raise RuntimeError(f"the client could not answer {questions[key]['method']}: {reply['error']}")
            answers[key] = reply["result"]
        return answers

    def answers(self, ctx: Context) -> dict:
        """The answers a retried request carries: earlier rounds' in its signed requestState, this round's in inputResponses."""
        answers = {}
        if "requestState" in ctx.params:
            answers = self._spend_state(ctx.params["requestState"], *ctx.binding)
        responses = param(ctx.params, "inputResponses", dict, {})
        for key, value in responses.items():
            if not isinstance(value, dict):
                raise RPCError(INVALID_PARAMS, f"inputResponses.{key} must be an object")
        return answers | responses  # without a requestState, this round's answers are used all the same

    def input_required(self, exc: InputRequired, ctx: Context) -> dict:
        """The result that asks the client: its questions, and a state carrying every answer given so far."""
        return {"resultType": "input_required", "inputRequests": exc.questions,
                "requestState": self._sign_state(*ctx.binding, ctx.answers)}

    def _sign_state(self, method: str, name: str, arguments: dict, answers: dict) -> str:
        """A requestState bound to this request, expiring, and signed, so that a client can neither forge nor reuse it."""
        import base64
        payload = {"method": method, "name": name, "arguments": arguments, "answers": answers,
                   "expires": int(time.time()) + STATE_TTL_S, "nonce": os.urandom(12).hex()}
        body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode()).decode("ascii")
        return body + "." + self._mac(body)

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
        with self._states_lock:
            while self._states_spent:  # the oldest first: every state lives STATE_TTL_S, so they expire in order
                nonce, expires = next(iter(self._states_spent.items()))
                if expires >= now:
                    break
                del self._states_spent[nonce]  # an expired state is refused anyway: forget it
            if payload["nonce"] in self._states_spent:
                raise RPCError(INVALID_PARAMS, "requestState was used already")
            self._states_spent[payload["nonce"]] = payload["expires"]
        return payload["answers"]

    def _mac(self, body: str) -> str:
        """The HMAC-SHA256 of body under this server's key, in hex."""
        import hashlib, hmac
        return hmac.new(self._state_key, body.encode(), hashlib.sha256).hexdigest()

    # -- 8. both directions --

    def _receive_response(self, message: dict):
        """Hand the client's response to the function that asked; a response to nothing asked is dropped."""
        if valid_id(message.get("id")):
            with self._lock:
                slot = self._waiting.pop(message["id"], None)
            if slot:
                slot.put(message)

    def _expect_response(self) -> tuple:
        """A fresh id for a request of the server's own, and the queue its response will be put in."""
        import queue
        with self._lock:
            self._last_request_id += 1
            slot = self._waiting[self._last_request_id] = queue.Queue(maxsize=1)
        return self._last_request_id, slot

    def _forget_requests(self, ids: list):
        """Stop waiting for these requests' responses (the function gave up or was cancelled)."""
        with self._lock:
            for id in ids:
                self._waiting.pop(id, None)

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

    def stop_waiting(self, reason: str):
        """Give every function waiting for the client's answer an error instead: the client has gone."""
        with self._lock:
            slots, self._waiting = list(self._waiting.items()), {}
        for id, slot in slots:
            slot.put(error_response(id, INTERNAL_ERROR, reason))

    def _listen(self, params: dict) -> dict:
        # subscriptions/listen {notifications: {toolsListChanged?, promptsListChanged?, resourcesListChanged?,
        #                                       resourceSubscriptions?: [uri]}}: a stream, answered when it ends
        ctx = context()
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
        raise AnsweredLater()  # the response comes when the stream ends (stop_listening, end_listening)

    def _tell_listeners(self, wants, method: str, params: dict):
        """Send a notification on every open listen stream whose filter wants it, tagged with its subscription id."""
        with self._telling:  # a stream being acknowledged gets its acknowledgement first
            with self._lock:
                listeners = [listener for listener in self._listeners if wants(listener["filter"])]
            for listener in listeners:
                tagged = {**params, "_meta": {SUBSCRIPTION_ID_KEY: listener["id"]}}
                listener["context"].send(notification(method, tagged))

    def stop_listening(self, ctx=None) -> list:
        """End ctx's listen stream (every one, if ctx is None) without a word: the client ended it. Those ended."""
        with self._lock:
            ended = [listener for listener in self._listeners if ctx is None or listener["context"] is ctx
                     or listener["context"].stream is ctx]
            self._listeners = [listener for listener in self._listeners if listener not in ended]
        return ended

    def end_listening(self, ctx=None):
        """End ctx's listen stream (every one, if ctx is None) gracefully: each gets its response (2026-07-28,
        "Graceful Closure")."""
        for listener in self.stop_listening(ctx):
            result = {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_KEY: listener["id"]}}
            listener["context"].send(response(listener["id"], result))


def with_context(fn, ctx_name: str | None, requires: tuple = ()):
    """fn as the lab calls it, with the keyword arguments the client sent: a function that takes a Context gets
    it, one that needs client capabilities checks them first, and an async def one runs to its end (course 002).
    A plain function is returned as it is: it costs nothing here."""
    coroutine = getattr(getattr(fn, "__code__", None), "co_flags", 0) & 0x80  # inspect.CO_COROUTINE: an async def
    if ctx_name is None and not requires and not coroutine:
        return fn

    def call(**arguments):
        ctx = context()
        ctx.answers  # a retry's requestState is checked before the function runs: the client wrote it (section 7)
        ctx.require(requires)  # a tool may say up front what it cannot run without
        if ctx_name:
            arguments[ctx_name] = ctx
        value = fn(**arguments)
        return run_coroutine(value, fn.__name__) if isinstance(value, types.CoroutineType) else value
    return functools.wraps(fn)(call)  # its name and docstring, and fn as __wrapped__

# ---------------------------------------------------------------------------------------------------
# ---- The client ----
# mcp_min's MCPClient, grown: both eras (6), the server's questions answered by callbacks (7), pages,
# caches a 2026-07-28 server says how long to keep, and a listen stream (8).
# ---------------------------------------------------------------------------------------------------

# What the client reads in a result, and the type each must have: a server that sends something else gets one
# RPCError naming it, never a KeyError from deep inside the client. A required key is marked by its method.
RESULT_KEYS = {"initialize": ("protocolVersion", "capabilities", "serverInfo"), "tools/list": ("tools",),
               "resources/list": ("resources",), "prompts/list": ("prompts",),
               "resources/templates/list": ("resourceTemplates",)}
RESULT_TYPES = {"protocolVersion": str, "capabilities": dict, "serverInfo": dict, "supportedVersions": list,
                "tools": list, "resources": list, "prompts": list, "resourceTemplates": list, "nextCursor": str,
                "ttlMs": (int, float), "_meta": dict, "resultType": str, "inputRequests": dict, "requestState": str}
ITEM_KEYS = {"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}
TYPE_NAMES = {str: "a string", dict: "an object", list: "a list", (int, float): "a number"}


def result_problem(method: str, result: dict) -> str | None:
    """What in a result this client could not use (a list that is not a list, say), or None."""
    for key in RESULT_KEYS.get(method, ()):
        if key not in result:
            return f"{key} is missing"
    for key, value in result.items():  # the keys the result has (a tool's: content alone), not every key there is
        kind = RESULT_TYPES.get(key)
        if kind is None:
            continue
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{key} must be {TYPE_NAMES[kind]}"
        if key in ITEM_KEYS:
            for at, item in enumerate(value):
                if not isinstance(item, dict) or not isinstance(item.get(ITEM_KEYS[key]), str):
                    return f"{key}[{at}] must be an object with a string {ITEM_KEYS[key]}"
        if key == "inputRequests":
            for name, question in value.items():
                if not isinstance(question, dict) or not isinstance(question.get("method"), str):
                    return f"inputRequests.{name} must be an object with a string method"
    return None


class MCPClient(mcp_min.MCPClient):
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
        super().__init__(transport, name, version)
        self.on_log, self.on_progress = on_log, on_progress
        self.answerers = {"elicitation/create": on_elicit, "sampling/createMessage": on_sample,
                          "roots/list": on_roots}
        self.capabilities = {QUESTION_CAPABILITIES[method]: {} for method, answerer in self.answerers.items() if answerer}
        transport.on_request = self.answer_request  # the server asks (handshake era): answer at once
        transport.on_notification = self.on_notification  # progress and log lines reach their callbacks as they arrive
        self.listening = None  # the request of this client's open subscriptions/listen stream
        self.era = None  # connect() decides: "handshake" or "stateless"
        self.tools_fresh_until = 0.0  # stateless era: ttlMs says how long tools_cache may be reused
        self._turn = threading.RLock()  # threads sharing this client take turns: one request on the wire at a time

    def request(self, method: str, params: dict | None = None) -> dict:
        """mcp_min's request; in the stateless era (and to discover it) params carry _meta (course 004)."""
        if self.era is None and method not in ("initialize", "server/discover", "ping"):
            raise RuntimeError(f"connect first: client.connect() (or client.initialize()) before {method}")
        if self.era == "stateless" or method == "server/discover":
            params = self.with_meta(dict(params or {}))
        with self._turn:  # (reentrant: a callback answering the server's question may ask the server in turn)
            try:
                result = super().request(method, params)
            except SessionExpired:
                if self.era != "handshake" or method == "initialize":
                    raise
                # A client receiving 404 for a request naming its session MUST start a new session (2025-11-25,
                # basic/transports, "Session Management"); the server served nothing of the request, so it goes again.
                self.initialize(self.protocol_version)
                result = super().request(method, params)
        problem = result_problem(method, result)
        if problem:
            raise RPCError(INTERNAL_ERROR, f"malformed response to {method}: {problem}", result)
        return result

    def initialize(self, protocol_version: str = HANDSHAKE_VERSIONS[0]) -> dict:
        """mcp_min's handshake; the session is in the handshake era."""
        result = super().initialize(protocol_version)
        self.era = "handshake"
        return result

    # -- 5. pages and the small methods --

    def list_tools(self, refresh: bool = False) -> list:
        """tools/list, every page, into tools_cache; a stateless cache still fresh (ttlMs) is reused unless refresh."""
        if self.tools_cache is not None and time.monotonic() < self.tools_fresh_until and not refresh:
            return self.tools_cache
        self.tools_cache, first = self.list_all("tools/list", "tools")
        self.tools_fresh_until = time.monotonic() + first.get("ttlMs", 0) / 1000
        return self.tools_cache

    def list_resources(self) -> list:
        """resources/list, every page, into resources_cache."""
        self.resources_cache = self.list_all("resources/list", "resources")[0]
        return self.resources_cache

    def list_prompts(self) -> list:
        """prompts/list, every page, into prompts_cache."""
        self.prompts_cache = self.list_all("prompts/list", "prompts")[0]
        return self.prompts_cache

    def list_resource_templates(self) -> list:
        """resources/templates/list, every page."""
        return self.list_all("resources/templates/list", "resourceTemplates")[0]

    def list_all(self, method: str, key: str) -> tuple[list, dict]:
        """Every item of a */list method, following nextCursor page by page; and the first page's result."""
        first = result = self.request(method)
        items = list(result[key])
        cursors = set()
        while "nextCursor" in result:
            cursor = result["nextCursor"]
            if cursor in cursors or len(cursors) == MAX_PAGES:
                raise RPCError(INVALID_PARAMS, f"{method} sent the cursor {cursor!r} again, or too many pages")
            cursors.add(cursor)
            result = self.request(method, {"cursor": cursor})
            items += result[key]
        return items, first

    def call_tool(self, name: str, arguments: dict | None = None, progress: bool = False) -> dict:
        """tools/call; if the server asks the client first (input_required), the callbacks answer; then the pump."""
        params = {"name": name, "arguments": arguments or {}}
        if progress:
            params["_meta"] = {"progressToken": self.next_id}  # the request id, as the SDK does
        result = self.request_in_rounds("tools/call", params)
        self._pump_notifications()
        return result

    def read_resource(self, uri: str) -> dict:
        """resources/read {uri}, in as many rounds as the server asks."""
        return self.request_in_rounds("resources/read", {"uri": uri})

    def get_prompt(self, name: str, arguments: dict | None = None) -> dict:
        """prompts/get {name, arguments}, in as many rounds as the server asks."""
        return self.request_in_rounds("prompts/get", {"name": name, "arguments": arguments or {}})

    def on_notification(self, message: dict):
        """A notification as it arrives: progress and log lines go to their callbacks at once; a list change
        makes the cache it invalidates stale, whatever ttlMs said (_pump_notifications lists it again)."""
        method = message["method"]
        if method == "notifications/tools/list_changed":
            self.tools_fresh_until = 0.0
        callback = {"notifications/message": self.on_log, "notifications/progress": self.on_progress}.get(method)
        if callback:
            callback(message.get("params", {}))

    # -- 6. versions and eras --

    def with_meta(self, params: dict) -> dict:
        """params with the _meta every 2026-07-28 request carries: version, capabilities, client info (course 004)."""
        meta = {PROTOCOL_VERSION_KEY: STATELESS_VERSIONS[0], CLIENT_CAPABILITIES_KEY: self.capabilities,
                CLIENT_INFO_KEY: self.client_info}
        return {**params, "_meta": {**params.get("_meta", {}), **meta}}

    def discover(self) -> dict:
        """server/discover: what a 2026-07-28 server speaks, asked without a handshake."""
        result = self.request("server/discover")
        self.server_info = result.get("_meta", {}).get(SERVER_INFO_KEY)
        self.server_capabilities = result.get("capabilities")
        return result

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
                result = self.discover_once_more_if_asked()
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

    def discover_once_more_if_asked(self) -> dict:
        """server/discover; asked again once if -32022 lists a version this client speaks, even the one just sent
        (spec 2026-07-28, basic, "Versioning": a client retries with a version the server listed)."""
        try:
            return self.discover()
        except RPCError as exc:
            supported = exc.data.get("supported") if isinstance(exc.data, dict) else None
            supported = supported if isinstance(supported, list) else []  # a string would match by its letters
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or STATELESS_VERSIONS[0] not in supported:
                raise
            return self.discover()

    def limit_wait(self, seconds: float | None):
        """Wait at most seconds for each response from now on (a transport in memory never waits)."""
        if seconds:
            self.transport.timeout = seconds

    # -- 7. answering the server's questions --

    def request_in_rounds(self, method: str, params: dict) -> dict:
        """A request the server may answer input_required (tools/call, prompts/get, resources/read): answer, send it again.

        Each retry is a new request with a new id, carrying this round's answers and the requestState
        exactly as the server sent it (spec 2026-07-28, basic, "Multi Round-Trip Requests").
        """
        for _ in range(MAX_INPUT_ROUNDS):
            result = self.request(method, params)
            if result.get("resultType") != "input_required":
                return result
            params = {key: value for key, value in params.items() if key not in ("inputResponses", "requestState")}
            params["inputResponses"] = self.answer(result.get("inputRequests", {}))
            if "requestState" in result:
                params["requestState"] = result["requestState"]
        raise RuntimeError(f"{method} still needs input after {MAX_INPUT_ROUNDS} rounds")

    def answer_request(self, message: dict) -> dict:
        """The response to a request the server sent (a question, handshake era): its callback's answer, or an error."""
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

    # -- 8. a listen stream --

    def listen(self, tools: bool = True, prompts: bool = False, resources: bool = False, uris: tuple = ()) -> dict:
        """Open a subscriptions/listen stream (2026-07-28); its acknowledged filter.

        The stream's notifications arrive among the responses to later requests, and
        _pump_notifications acts on them: a list change refreshes the cache at once, not when ttlMs ends.
        """
        wanted = {"toolsListChanged": tools, "promptsListChanged": prompts, "resourcesListChanged": resources}
        kinds = {key: True for key, value in wanted.items() if value}  # the kinds of notification the stream carries
        if uris:
            kinds["resourceSubscriptions"] = list(uris)
        with self._turn:
            message = request(self.next_id, "subscriptions/listen", self.with_meta({"notifications": kinds}))
            self.next_id += 1
            ack = self.transport.listen(message)
        if isinstance(ack, dict) and mcp_min.malformed(ack) is None and "error" in ack:
            raise RPCError(ack["error"]["code"], ack["error"]["message"], ack["error"].get("data"))
        params = ack.get("params") if isinstance(ack, dict) else None
        if not isinstance(params, dict) or not isinstance(params.get("notifications"), dict):
            raise RPCError(INTERNAL_ERROR, f"no acknowledgement of subscriptions/listen: {str(ack)[:100]}")
        self.listening = message
        return ack["params"]["notifications"]

    def stop_listening(self):
        """End the listen stream: notifications/cancelled on stdio, closing the stream over HTTP."""
        if self.listening:
            self.transport.cancel(self.listening, "the client stopped listening")
            self.listening = None

# ---------------------------------------------------------------------------------------------------
# ---- In memory ----
# mcp_min's proof of layering, both ways: what the server sends while it works (a progress line, a
# question) crosses at once, and a question is answered before the tool goes on.
# ---------------------------------------------------------------------------------------------------

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # the largest message: one stdio line or one HTTP body


def made_once_encoder(encoder: json.JSONEncoder):
    """json's C encoder with encoder's settings, made once; None where this Python's json has none."""
    # encoder.encode makes this C encoder afresh at every call, which costs more than encoding a short message. Its
    # maker, json.encoder.c_make_encoder, is not documented: where it is missing or takes other arguments, encoder
    # serves (tests/transports/test_parse.py checks that the two write the same bytes and raise the same errors).
    try:
        return json.encoder.c_make_encoder(None, encoder.default, json.encoder.encode_basestring_ascii, None,
                                           encoder.key_separator, encoder.item_separator, encoder.sort_keys,
                                           encoder.skipkeys, encoder.allow_nan)
    except (AttributeError, TypeError):  # (c_make_encoder is None without the C accelerator: not callable)
        return None


LENIENT = json.JSONEncoder()  # json.dumps's: what a client sends, NaN and all, is its server's to refuse
MADE_ONCE = {ENCODER: made_once_encoder(ENCODER), LENIENT: made_once_encoder(LENIENT)}


def to_json(value, encoder: json.JSONEncoder = ENCODER) -> str:
    """encoder.encode(value), ENCODER's or LENIENT's (json.dumps's): the same text and errors, by one encoder."""
    made = MADE_ONCE[encoder]
    if made is None:
        return encoder.encode(value)
    try:
        return "".join(made(value, 0))
    except RecursionError:  # made without json's check for cycles (its marks outlive a failure): encoder tells which
        return encoder.encode(value)


def encode(message: dict) -> str:
    """One message as JSON on one line; one that JSON cannot carry, or too large, becomes INTERNAL_ERROR."""
    try:
        text = to_json(message)
        if len(text) > MAX_MESSAGE_BYTES:  # the peer's line limit is likely ours: it could not read this
            raise ValueError(f"the message would be {len(text)} bytes, over {MAX_MESSAGE_BYTES}")
        return text
    except (TypeError, ValueError) as exc:
        return to_json(error_response(message.get("id"), INTERNAL_ERROR, f"internal error: {exc}"[:200]))


class InMemoryTransport(Transport):
    """Client and server share nothing but JSON text, as in mcp_min; the server's own messages cross as they are sent."""

    def __init__(self, server: MCPServer, trace=None):
        super().__init__(trace)
        self.server = server

    def send(self, message: dict) -> dict | None:
        """JSON text, json.loads, server.handle, as mcp_min's; the outbox crosses first, then the response."""
        wire = to_json(self.traced("→", message), LENIENT)
        self.server.on_send = self.carry  # what the server sends while it works crosses at once
        reply = self.server.handle(json.loads(wire))
        if self.server._outbox:
            self.carry()  # notifications arrive before the response
        return self.traced("←", None if reply is None else json.loads(encode(reply)))

    def carry(self):
        """Carry what the server queued across the JSON boundary; a question from the server is answered at once."""
        for message in self.server.drain_outbox():
            reply = self.receive(self.traced("←", json.loads(encode(message))))
            if reply is not None:
                self.server.handle(json.loads(to_json(self.traced("→", reply), LENIENT)))

    def listen(self, message: dict) -> dict | None:
        """Open a subscriptions/listen stream: its acknowledgement (or its error response)."""
        return self.send(message) or self.acknowledgement(message["id"])

    def cancel(self, message: dict, reason: str):
        """Cancel a request (a listen stream, here) with notifications/cancelled."""
        self.send(notification("notifications/cancelled", {"requestId": message["id"], "reason": reason}))

    def close(self):
        """Nothing to release in memory."""
