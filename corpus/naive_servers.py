"""MCP servers written the way a student writes a first one, for the report card's tests: a naive base that keeps
every rule, and one mistake each, most of them the naive failures course 000 names.

    python corpus/naive_servers.py [MISTAKE]  # without a mistake: the base
    python corpus/naive_servers.py --list     # each mistake, and the rule of the card it breaks

The base is plain on purpose: one method a seam, no checks beyond the ones the course asks for. A mistake is a
subclass that changes one method. The standard library only, not mcp_min: these are the student's own servers.
The flags that tell the card what only the author knows are FLAGS below.
"""

import json
import sys
import threading
import time
import traceback

VERSIONS = ["2025-11-25", "2025-06-18"]  # the handshake's, newest first
STATELESS = "2026-07-28"
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "naive", "version": "0.1.0"}
LISTS = {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
FLAGS = ["--not-allowed", "delete_db", "--raises", 'divide {"x": 1, "y": 0}',
         "--handler-fails", 'tools/call {"name": []}',  # a list for a name: the dispatch's dict lookup raises
         "--change-tools", "enable_subtract", "--change-resources", "add_note", "--change-prompts", "add_greeting"]


class Refused(Exception):
    """A deliberate protocol error: its code, its message, its data."""

    def __init__(self, code: int, message: str, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


class Base:
    """A naive server that keeps every rule of the card."""

    def __init__(self):
        self.initialized = False
        self.version = None
        self.outbox = []
        self.tools = {"add": lambda x, y: x + y, "divide": lambda x, y: x / y, "delete_db": lambda: "deleted",
                      "enable_subtract": self.enable_subtract, "add_note": self.add_note,
                      "add_greeting": self.add_greeting}
        self.required = {"add": ["x", "y"], "divide": ["x", "y"]}
        self.resources = {"notes://readme": "A naive server."}
        self.prompts = {"summarize": ("Summarize this {severity}-severity incident.", ["severity"])}

    # -- the loop: a line in, the outbox and the response out --

    def main(self):
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                if not self.parse_error():
                    break
                continue
            reply = self.handle(message)
            for queued in self.outbox:
                self.write(queued)
            self.outbox.clear()
            if reply is not None:
                self.write(reply)

    def write(self, message: dict):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def parse_error(self) -> bool:
        """Answer a line that is not JSON; whether to read on."""
        self.write(self.error(None, -32700, "parse error"))
        return True

    # -- one message --

    def handle(self, message):
        if not isinstance(message, dict):
            return self.error(None, -32600, "a message is a JSON object")
        if "method" not in message:
            if "result" in message or "error" in message:
                return None  # a response from the client: this server asked nothing
            return self.error(None, -32600, "a message has a method, or a result or an error")
        if self.is_notification(message):
            self.notice(message)
            return self.notification_reply(message)
        id = message["id"] if isinstance(message["id"], (str, int)) and not isinstance(message["id"], bool) else None
        try:
            return self.reply(id, self.serve(message))
        except Refused as exc:
            return self.error(id, exc.code, exc.message, exc.data)
        except Exception as exc:
            return self.internal_error(id, exc)

    def is_notification(self, message: dict) -> bool:
        return "id" not in message

    def notification_reply(self, message: dict):
        return None

    def reply(self, id, result: dict) -> dict:
        return {"jsonrpc": "2.0", "id": id, "result": result}

    def error(self, id, code: int, message: str, data=None) -> dict:
        error = {"code": code, "message": message} | ({"data": data} if data is not None else {})
        return {"jsonrpc": "2.0", "id": id, "error": error}

    def internal_error(self, id, exc: Exception) -> dict:
        return self.error(id, -32603, f"internal error: {exc!r}")

    def notice(self, message: dict):
        if message["method"] == "notifications/initialized" and self.version:
            self.initialized = True

    def serve(self, message: dict):
        self.check_jsonrpc(message)
        if message["id"] is None or isinstance(message["id"], (bool, float, list, dict)):
            raise Refused(-32600, "id must be a string or an integer")
        method, params = message["method"], message.get("params") or {}
        meta = params.get("_meta") if isinstance(params, dict) else None
        if method == "server/discover" or (isinstance(meta, dict) and VERSION_KEY in meta):
            return self.stateless(method, params, meta or {})
        self.gate(method)
        return self.dispatch(method, params)

    def check_jsonrpc(self, message: dict):
        if message.get("jsonrpc") != "2.0":
            raise Refused(-32600, 'jsonrpc must be "2.0"')

    def gate(self, method: str):
        if not self.initialized and method not in ("initialize", "ping"):
            raise Refused(-32600, "server not initialized")

    def dispatch(self, method: str, params: dict):
        handlers = {"initialize": self.initialize, "ping": lambda params: {}, "server/discover": self.discover,
                    "tools/list": self.list_tools, "tools/call": self.call_tool,
                    "resources/list": self.list_resources, "resources/templates/list": lambda params: {
                        "resourceTemplates": []}, "resources/read": self.read_resource,
                    "prompts/list": self.list_prompts, "prompts/get": self.get_prompt}
        if not isinstance(method, str) or method not in handlers:
            return self.unknown_method(method)
        return handlers[method](params)

    def unknown_method(self, method):
        raise Refused(-32601, f"method not found: {method}")

    # -- the eras --

    def initialize(self, params: dict) -> dict:
        self.version = self.negotiate(params.get("protocolVersion"))
        return {"protocolVersion": self.version, "capabilities": self.capabilities(), "serverInfo": SERVER_INFO}

    def negotiate(self, requested: str) -> str:
        if requested in VERSIONS:
            return requested
        older = [version for version in VERSIONS if version < str(requested)]
        return older[0] if older else VERSIONS[0]

    def capabilities(self) -> dict:
        return {"tools": {"listChanged": True}, "resources": {"listChanged": True}, "prompts": {"listChanged": True}}

    def stateless(self, method: str, params: dict, meta: dict) -> dict:
        if meta.get(VERSION_KEY) != STATELESS:
            raise self.unsupported(meta.get(VERSION_KEY))
        return self.stamp(method, self.dispatch(method, params))

    def unsupported(self, version) -> Refused:
        return Refused(-32022, "Unsupported protocol version", {"supported": [STATELESS] + VERSIONS,
                                                                 "requested": version})

    def stamp(self, method: str, result: dict) -> dict:
        result = result | {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
        return result | ({"ttlMs": 60000, "cacheScope": "public"} if method in LISTS else {})

    def discover(self, params: dict) -> dict:
        return {"supportedVersions": [STATELESS] + VERSIONS, "capabilities": self.capabilities()}

    # -- tools: the lattice, in its order --

    def list_tools(self, params: dict) -> dict:
        return {"tools": [{"name": name, "inputSchema": {"type": "object", "required": self.required.get(name, [])}}
                          for name in self.tools]}

    def call_tool(self, params: dict) -> dict:
        name, arguments = params.get("name"), params.get("arguments") or {}
        tool = self.tools.get(name)
        if tool is None:
            return self.unknown_tool(name)
        if not self.allowed(name):
            raise Refused(-32600, f"tool '{name}' not permitted for this session")
        self.check_arguments(name, arguments)
        try:
            value = tool(**arguments)
        except Exception as exc:
            return self.tool_failed(exc)
        return {"content": [{"type": "text", "text": str(value)}]}

    def unknown_tool(self, name):
        raise Refused(-32601, f"unknown tool: {name}")

    def allowed(self, name: str) -> bool:
        return name != "delete_db"

    def check_arguments(self, name: str, arguments: dict):
        for key in self.required.get(name, []):
            if key not in arguments:
                raise Refused(-32602, f"missing argument: {key}")

    def tool_failed(self, exc: Exception) -> dict:
        return {"content": [{"type": "text", "text": f"ERROR: {exc}"}], "isError": True}

    # -- resources and prompts --

    def list_resources(self, params: dict) -> dict:
        return {"resources": [{"uri": uri, "name": uri.split("//")[1]} for uri in self.resources]}

    def read_resource(self, params: dict) -> dict:
        uri = params.get("uri")
        if uri not in self.resources:
            return self.unknown_resource(uri)
        return {"contents": [{"uri": uri, "text": self.resources[uri]}]}

    def unknown_resource(self, uri):
        raise Refused(-32602, f"unknown resource: {uri}", {"uri": uri})

    def list_prompts(self, params: dict) -> dict:
        return {"prompts": [{"name": name, "arguments": [{"name": v, "required": True} for v in variables]}
                            for name, (_, variables) in self.prompts.items()]}

    def get_prompt(self, params: dict) -> dict:
        name, arguments = params.get("name"), params.get("arguments") or {}
        if name not in self.prompts:
            raise Refused(-32602, f"unknown prompt: {name}")
        template, variables = self.prompts[name]
        self.check_variables(variables, arguments)
        text = template.format(**arguments)
        return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}]}

    def check_variables(self, variables: list, arguments: dict):
        for variable in variables:
            if variable not in arguments:
                raise Refused(-32602, f"missing prompt variable: {variable}")

    # -- the catalog changes at runtime; the outbox tells the client --

    def enable_subtract(self) -> str:
        self.tools["subtract"] = lambda x, y: x - y
        self.list_changed("tools")
        return "subtract is now available"

    def add_note(self) -> str:
        self.resources["notes://report"] = "A note."
        self.list_changed("resources")
        return "notes://report added"

    def add_greeting(self) -> str:
        self.prompts["greet"] = ("Greet {name}.", ["name"])
        self.list_changed("prompts")
        return "greet added"

    def list_changed(self, kind: str):
        self.outbox.append({"jsonrpc": "2.0", "method": f"notifications/{kind}/list_changed"})


# ---- the mistakes, one a rule ----

class AnswersNotifications(Base):
    """Every message gets a reply, notifications too."""

    def notification_reply(self, message):
        return {"jsonrpc": "2.0", "id": None, "result": {}}


class NullIdIsNotification(Base):
    """"id": null taken for no id at all."""

    def is_notification(self, message):
        return message.get("id") is None


class ResultAndError(Base):
    """An error response built from the success one: "result": null stays beside the error."""

    def error(self, id, code, message, data=None):
        return super().error(id, code, message, data) | {"result": None}


class ParseErrorIgnored(Base):
    """A line that is not JSON is skipped in silence."""

    def parse_error(self):
        return True


class NoJsonrpcCheck(Base):
    """Whatever the jsonrpc field says, the message is served."""

    def check_jsonrpc(self, message):
        pass


class UnknownMethodEmptyResult(Base):
    """A method it does not know gets an empty result."""

    def unknown_method(self, method):
        return {}


class CrashesOnHandlerBug(Base):
    """No catch-all: an exception in a handler takes the whole server down."""

    def internal_error(self, id, exc):
        raise exc


class TracebackOnWire(Base):
    """The catch-all sends the traceback, to help debugging."""

    def internal_error(self, id, exc):
        return self.error(id, -32603, traceback.format_exc())


class NoGate(Base):
    """Every request is served at once, handshake or not."""

    def gate(self, method):
        pass


class HoldsRequestsUntilInitialized(Base):
    """A request between the initialize response and initialized waits for initialized, which never comes."""

    class Held(BaseException):
        """This request is kept for later."""

    def __init__(self):
        super().__init__()
        self.held = []

    def gate(self, method):
        if self.version and not self.initialized and method not in ("initialize", "ping"):
            raise self.Held()
        super().gate(method)

    def handle(self, message):
        try:
            return super().handle(message)
        except self.Held:
            self.held.append(message)
            return None

    def notice(self, message):
        super().notice(message)
        if self.initialized:
            for kept in self.held:
                self.write(self.handle(kept))
            self.held.clear()


class VersionEcho(Base):
    """initialize agrees to whatever version the client offers."""

    def negotiate(self, requested):
        return requested


class CapabilitiesTrue(Base):
    """Each capability switched on with true."""

    def capabilities(self):
        return {"tools": True, "resources": True, "prompts": True}


class UndeclaredPrompts(Base):
    """Serves prompts, but forgot to declare them."""

    def capabilities(self):
        return {"tools": {"listChanged": True}, "resources": {"listChanged": True}}


class UnknownToolIsErrorResult(Base):
    """An unknown tool is reported the way a failing tool is."""

    def unknown_tool(self, name):
        return self.tool_failed(KeyError(name))


class AllowListIgnored(Base):
    """Every tool may be called by anyone."""

    def allowed(self, name):
        return True


class MissingArgumentRunsTool(Base):
    """Arguments are not checked: the tool runs, and fails."""

    def check_arguments(self, name, arguments):
        pass


class ToolErrorAsInternalError(Base):
    """A tool's exception escapes into the catch-all: -32603."""

    def tool_failed(self, exc):
        raise exc


class ListChangedWithId(Base):
    """The tools' list_changed built with the request helper: it carries an id."""

    def list_changed(self, kind):
        if kind != "tools":
            return super().list_changed(kind)
        self.outbox.append({"jsonrpc": "2.0", "id": 99, "method": "notifications/tools/list_changed"})


class StopsAfterParseError(Base):
    """After a line that is not JSON, the loop ends."""

    def parse_error(self):
        super().parse_error()
        return False


class UnknownResourceEmpty(Base):
    """An unknown URI reads as empty contents."""

    def unknown_resource(self, uri):
        return {"contents": []}


class PromptVariableUnchecked(Base):
    """A missing prompt variable is not checked: the template fails to render."""

    def check_variables(self, variables, arguments):
        pass


class SilentResourceChange(Base):
    """A new resource, and nobody is told."""

    def list_changed(self, kind):
        if kind != "resources":
            super().list_changed(kind)


class PromptChangeWithPayload(Base):
    """The prompts' list_changed carries the new list, a diff instead of an invalidation."""

    def list_changed(self, kind):
        if kind != "prompts":
            return super().list_changed(kind)
        self.outbox.append({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed",
                            "params": {"prompts": sorted(self.prompts)}})


class DiscoverVersionsAsText(Base):
    """server/discover names its version as a string, not a list."""

    def discover(self, params):
        return super().discover(params) | {"supportedVersions": STATELESS}


class NoResultMeta(Base):
    """2026-07-28 results without _meta."""

    def stamp(self, method, result):
        stamped = super().stamp(method, result)
        del stamped["_meta"]
        return stamped


class NoResultType(Base):
    """tools/list forgets its resultType."""

    def stamp(self, method, result):
        stamped = super().stamp(method, result)
        if method == "tools/list":
            del stamped["resultType"]
        return stamped


class NoCacheHints(Base):
    """List results without ttlMs and cacheScope."""

    def stamp(self, method, result):
        stamped = super().stamp(method, result)
        return {key: value for key, value in stamped.items() if key not in ("ttlMs", "cacheScope")}


class UnsupportedVersionUnlisted(Base):
    """-32022, but without the versions it does serve."""

    def unsupported(self, version):
        return Refused(-32022, "Unsupported protocol version")


class PrintOnStdout(Base):
    """A debugging print() left in: it goes to stdout, the wire."""

    def call_tool(self, params):
        print(f"calling {params.get('name')}")
        return super().call_tool(params)


class AnswersTwice(Base):
    """Each response is written twice: by the handler that made it, and again by the loop."""

    def write(self, message):
        super().write(message)
        if "id" in message and "method" not in message:
            super().write(message)


class AnswersResponses(Base):
    """A message without a method is refused, a response from the client too."""

    def handle(self, message):
        if isinstance(message, dict) and "method" not in message:
            return self.error(message.get("id"), -32600, "a message has a method")
        return super().handle(message)


class ObjectsOnly(Base):
    """Every line is taken for an object: an array or a number ends the loop."""

    def handle(self, message):
        if message.get("method") is None and "result" not in message and "error" not in message:
            return self.error(None, -32600, "a message has a method, or a result or an error")
        return super().handle(message)


class NoServerInfo(Base):
    """initialize answers the version and the capabilities, and forgets who it is."""

    def initialize(self, params):
        return {key: value for key, value in super().initialize(params).items() if key != "serverInfo"}


class ListChangedOnInitialize(Base):
    """initialize tells the client at once that the tools may change: before the session is live."""

    def initialize(self, params):
        self.list_changed("tools")
        return super().initialize(params)


class LogsUndeclared(Base):
    """Each tool call is logged to the client, with no logging capability declared."""

    def call_tool(self, params):
        self.outbox.append({"jsonrpc": "2.0", "method": "notifications/message",
                            "params": {"level": "info", "data": f"calling {params.get('name')}"}})
        return super().call_tool(params)


class AsksForSampling(Base):
    """add asks the client's model for a second opinion, though the client declared no sampling."""

    def call_tool(self, params):
        if params.get("name") == "add":
            self.outbox.append({"jsonrpc": "2.0", "id": "sampling-1", "method": "sampling/createMessage",
                                "params": {"messages": [], "maxTokens": 10}})
        return super().call_tool(params)


class InitializedOpensTheGate(Base):
    """notifications/initialized opens the session, whether initialize came or not."""

    def notice(self, message):
        if message["method"] == "notifications/initialized":
            self.initialized = True


class ErrorWithoutReason(Base):
    """A failing tool says that it failed, and nothing more."""

    def tool_failed(self, exc):
        return {"content": [{"type": "text", "text": "ERROR"}], "isError": True}


class NeverExits(Base):
    """A thread that is not a daemon keeps the process alive after stdin ends."""

    def __init__(self):
        super().__init__()
        threading.Thread(target=self.heartbeat).start()

    def heartbeat(self):
        while True:
            time.sleep(1)


MISTAKES = {  # name: (the server, the rule of the card it breaks)
    "answers-notifications": (AnswersNotifications, "notification-no-response"),
    "null-id-is-notification": (NullIdIsNotification, "null-id-is-a-request"),
    "result-and-error": (ResultAndError, "response-shape"),
    "parse-error-ignored": (ParseErrorIgnored, "parse-error"),
    "no-jsonrpc-check": (NoJsonrpcCheck, "invalid-request"),
    "unknown-method-empty-result": (UnknownMethodEmptyResult, "method-not-found"),
    "crashes-on-handler-bug": (CrashesOnHandlerBug, "internal-error"),
    "traceback-on-wire": (TracebackOnWire, "no-traceback"),
    "no-gate": (NoGate, "handshake-gate"),
    "holds-requests-until-initialized": (HoldsRequestsUntilInitialized, "handshake-gate"),
    "version-echo": (VersionEcho, "version-negotiation"),
    "capabilities-true": (CapabilitiesTrue, "capabilities-objects"),
    "undeclared-prompts": (UndeclaredPrompts, "flat-methods"),
    "unknown-tool-is-error-result": (UnknownToolIsErrorResult, "unknown-tool"),
    "allow-list-ignored": (AllowListIgnored, "tool-not-allowed"),
    "missing-argument-runs-tool": (MissingArgumentRunsTool, "missing-argument"),
    "tool-error-as-internal-error": (ToolErrorAsInternalError, "tool-error-is-result"),
    "list-changed-with-id": (ListChangedWithId, "notification-has-no-id"),
    "stops-after-parse-error": (StopsAfterParseError, "survives-bad-input"),
    "unknown-resource-empty": (UnknownResourceEmpty, "resources-by-uri"),
    "prompt-variable-unchecked": (PromptVariableUnchecked, "prompt-variables"),
    "silent-resource-change": (SilentResourceChange, "resources-list-changed"),
    "prompt-change-with-payload": (PromptChangeWithPayload, "prompts-list-changed"),
    "discover-versions-as-text": (DiscoverVersionsAsText, "server-discover"),
    "no-result-meta": (NoResultMeta, "meta"),
    "no-result-type": (NoResultType, "result-type"),
    "no-cache-hints": (NoCacheHints, "cache-hints"),
    "unsupported-version-unlisted": (UnsupportedVersionUnlisted, "unsupported-version"),
    "print-on-stdout": (PrintOnStdout, "stdout-only-json"),
    "never-exits": (NeverExits, "exit-on-eof"),
    "answers-twice": (AnswersTwice, "one-response"),
    "answers-responses": (AnswersResponses, "one-response"),
    "objects-only": (ObjectsOnly, "not-a-message"),
    "no-server-info": (NoServerInfo, "server-info"),
    "list-changed-on-initialize": (ListChangedOnInitialize, "quiet-before-initialized"),
    "logs-undeclared": (LogsUndeclared, "negotiated-capabilities"),
    "asks-for-sampling": (AsksForSampling, "negotiated-capabilities"),
    "initialized-opens-the-gate": (InitializedOpensTheGate, "handshake-gate"),
    "error-without-reason": (ErrorWithoutReason, "tool-error-says-why"),
}
# A mistake that shows on its own only without a flag: undeclared-prompts's --change-prompts would call add_greeting,
# whose list_changed its capabilities never promised (negotiated-capabilities, a second rule broken, rightly).
FLAGS_OF = {"undeclared-prompts": FLAGS[:FLAGS.index("--change-prompts")]}

if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        for name, (server, broken) in MISTAKES.items():
            print(f"{name:34} breaks {broken:26} {server.__doc__}")
    else:
        (MISTAKES[sys.argv[1]][0] if sys.argv[1:] else Base)().main()
