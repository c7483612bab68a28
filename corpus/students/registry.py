"""A student's MCP server: tools and prompts registered with decorators, served by a small class.

Its order of checks: tools/call finds the tool, then checks its required arguments, and only then the allow-list
(a tool the session may not call is refused after its arguments are found complete), then runs it. Tools and
prompts; the standard library only.

    python corpus/students/registry.py
"""

import json
import sys

TOOLS = {}
PROMPTS = {"summarize": ("Summarize this text in one sentence: {text}", ["text"])}


def tool(*required, allowed=True):
    """Register a function as a tool, with its required arguments and whether this session may call it."""
    def register(function):
        TOOLS[function.__name__] = {"function": function, "required": list(required), "allowed": allowed,
                                    "description": function.__doc__}
        return function
    return register


@tool("x", "y")
def add(x, y):
    """Add two numbers."""
    return x + y


@tool("x", "y")
def divide(x, y):
    """Divide x by y."""
    return x / y


@tool(allowed=False)
def drop_tables():
    """Drop every table."""
    return "dropped"


def subtract(x, y):
    """Subtract y from x."""
    return x - y


@tool()
def learn_subtract():
    """Offer subtract from now on."""
    tool("x", "y")(subtract)
    server.notify("notifications/tools/list_changed")
    return "subtract is now available"


@tool()
def add_greeting():
    """Offer a greeting prompt from now on."""
    PROMPTS["greet"] = ("Greet {name} warmly.", ["name"])
    server.notify("notifications/prompts/list_changed")
    return "greet is now available"


class Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Server:
    def __init__(self):
        self.version = None
        self.initialized = False
        self.queue = []

    def notify(self, method):
        self.queue.append({"jsonrpc": "2.0", "method": method})

    def send(self, message):
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def run(self):
        while True:
            try:
                line = input()
            except EOFError:
                return
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                self.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
                continue
            reply = self.on_message(message)
            for queued in self.queue:
                self.send(queued)
            self.queue.clear()
            if reply is not None:
                self.send(reply)

    def on_message(self, message):
        if not isinstance(message, dict) or not ("method" in message or "result" in message or "error" in message):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "invalid request"}}
        if "method" not in message:
            return None  # a response to a request of ours: we never send any
        if "id" not in message:
            if message["method"] == "notifications/initialized" and self.version is not None:
                self.initialized = True
            return None
        id = message["id"]
        if type(id) not in (int, str):
            return {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "bad id"}}
        try:
            if message.get("jsonrpc") != "2.0":
                raise Refusal(-32600, "jsonrpc must be 2.0")
            return {"jsonrpc": "2.0", "id": id, "result": self.dispatch(message["method"], message.get("params") or {})}
        except Refusal as refusal:
            return {"jsonrpc": "2.0", "id": id, "error": {"code": refusal.code, "message": str(refusal)}}
        except Exception as exc:
            return {"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": f"internal error: {exc!r}"}}

    def dispatch(self, method, params):
        if method == "initialize":
            offered = params.get("protocolVersion")
            self.version = offered if offered in ("2025-06-18", "2025-11-25") else "2025-11-25"
            return {"protocolVersion": self.version,
                    "capabilities": {"tools": {"listChanged": True}, "prompts": {"listChanged": True}},
                    "serverInfo": {"name": "registry", "version": "2.1"}}
        if method == "ping":
            return {}
        if not self.initialized:
            raise Refusal(-32600, "not initialized")
        if method == "tools/list":
            return {"tools": [{"name": name, "description": entry["description"],
                               "inputSchema": {"type": "object", "required": entry["required"]}}
                              for name, entry in TOOLS.items()]}
        if method == "tools/call":
            return self.call(params.get("name"), params.get("arguments") or {})
        if method == "prompts/list":
            return {"prompts": [{"name": name, "arguments": [{"name": v, "required": True} for v in variables]}
                                for name, (_, variables) in PROMPTS.items()]}
        if method == "prompts/get":
            return self.prompt(params.get("name"), params.get("arguments") or {})
        raise Refusal(-32601, f"unknown method {method}")

    def call(self, name, arguments):
        if name not in TOOLS:
            raise Refusal(-32601, f"unknown tool {name}")
        entry = TOOLS[name]
        for key in entry["required"]:
            if key not in arguments:
                raise Refusal(-32602, f"{name} needs {key}")
        if not entry["allowed"]:
            raise Refusal(-32600, f"{name} is not allowed")
        try:
            value = entry["function"](**arguments)
        except Exception as exc:
            return {"content": [{"type": "text", "text": f"{name} raised {type(exc).__name__}: {exc}"}],
                    "isError": True}
        return {"content": [{"type": "text", "text": json.dumps(value)}]}

    def prompt(self, name, arguments):
        if name not in PROMPTS:
            raise Refusal(-32602, f"unknown prompt {name}")
        template, variables = PROMPTS[name]
        missing = [variable for variable in variables if variable not in arguments]
        if missing:
            raise Refusal(-32602, f"missing {', '.join(missing)}")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": template.format(**arguments)}}]}


server = Server()
server.run()
