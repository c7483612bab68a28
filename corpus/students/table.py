"""A student's MCP server: a table of handlers, looked up before the handshake is checked.

Its order of checks: each request finds its handler in HANDLERS first (an unknown method is -32601 even before
initialize), then the gate (a handler that needs the session waits for notifications/initialized), then runs it.
Tools and resources (notes); the standard library only.

    python corpus/students/table.py
"""

import json
import sys


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


state = {"protocol": None, "ready": False}
outbox = []
notes = {"notes://welcome": "Welcome to the notes server."}
tools = {
    "add": (lambda x, y: x + y, ["x", "y"]),
    "divide": (lambda x, y: x / y, ["x", "y"]),
    "delete_db": (lambda: "the database is gone", []),
}
forbidden = {"delete_db"}


def add_note():
    notes[f"notes://{len(notes)}"] = "Another note."
    outbox.append({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"})
    return "a note was added"


def enable_subtract():
    tools["subtract"] = (lambda x, y: x - y, ["x", "y"])
    outbox.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    return "subtract is now available"


tools["add_note"] = (add_note, [])
tools["enable_subtract"] = (enable_subtract, [])


def initialize(params):
    asked = params.get("protocolVersion")
    state["protocol"] = asked if asked in ("2025-06-18", "2025-11-25") else "2025-11-25"
    return {"protocolVersion": state["protocol"],
            "capabilities": {"tools": {"listChanged": True}, "resources": {"listChanged": True}},
            "serverInfo": {"name": "table", "version": "0.3"}}


def list_tools(params):
    return {"tools": [{"name": name, "inputSchema": {"type": "object", "required": required}}
                      for name, (_, required) in tools.items()]}


def call_tool(params):
    name, arguments = params.get("name"), params.get("arguments") or {}
    if name not in tools:
        raise RpcError(-32601, f"no tool named {name}")
    if name in forbidden:
        raise RpcError(-32600, f"{name} is not allowed here")
    function, required = tools[name]
    missing = [key for key in required if key not in arguments]
    if missing:
        raise RpcError(-32602, f"missing: {', '.join(missing)}")
    try:
        text = str(function(**arguments))
    except Exception as exc:
        return {"content": [{"type": "text", "text": f"{name} failed: {exc}"}], "isError": True}
    return {"content": [{"type": "text", "text": text}]}


def list_resources(params):
    return {"resources": [{"uri": uri, "name": uri.split("://")[1]} for uri in notes]}


def read_resource(params):
    uri = params.get("uri")
    if uri not in notes:
        raise RpcError(-32602, f"no note at {uri}")
    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": notes[uri]}]}


HANDLERS = {  # method: (its handler, whether it needs the session to be live)
    "initialize": (initialize, False),
    "ping": (lambda params: {}, False),
    "tools/list": (list_tools, True),
    "tools/call": (call_tool, True),
    "resources/list": (list_resources, True),
    "resources/read": (read_resource, True),
}


def error(id, code, message):
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def respond(message):
    method = message["method"]
    if method not in HANDLERS:
        raise RpcError(-32601, f"no such method: {method}")
    handler, needs_session = HANDLERS[method]
    if needs_session and not state["ready"]:
        raise RpcError(-32600, "the session has not been initialized")
    return handler(message.get("params") or {})


def process(line):
    try:
        message = json.loads(line)
    except ValueError:
        return error(None, -32700, "parse error")
    if not isinstance(message, dict):
        return error(None, -32600, "not a message")
    if "method" not in message:
        return None if "result" in message or "error" in message else error(None, -32600, "not a message")
    if "id" not in message:
        if message["method"] == "notifications/initialized" and state["protocol"]:
            state["ready"] = True
        return None
    id = message["id"]
    if id is None or isinstance(id, (bool, float, list, dict)):
        return error(None, -32600, "a request's id is a string or an integer")
    if message.get("jsonrpc") != "2.0":
        return error(id, -32600, "only JSON-RPC 2.0 is spoken here")
    try:
        return {"jsonrpc": "2.0", "id": id, "result": respond(message)}
    except RpcError as exc:
        return error(id, exc.code, str(exc))
    except Exception as exc:
        return error(id, -32603, f"{type(exc).__name__}: {exc}")


while True:
    line = sys.stdin.readline()
    if not line:
        break
    if not line.strip():
        continue
    reply = process(line)
    while outbox:
        sys.stdout.write(json.dumps(outbox.pop(0)) + "\n")
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
