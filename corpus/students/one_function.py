"""A student's MCP server, course 000's way: one function answers each message, with a chain of if/elif on its method.

Its order of checks: tools/call looks at the arguments before the name (first that they are an object, then the
tool's name, the allow-list, the required arguments), and runs the tool last. Tools only; the standard library only.

    python corpus/students/one_function.py
"""

import json
import sys

VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"]  # newest first
ALLOWED = {"add", "divide", "enable_subtract", "subtract"}  # delete_db exists, and this session may not call it
session = {"version": None, "live": False}
pending = []  # notifications to write before the next response


def add(args):
    return args["x"] + args["y"]


def divide(args):
    return args["x"] / args["y"]


def subtract(args):
    return args["x"] - args["y"]


def delete_db(args):
    return "deleted everything"


def enable_subtract(args):
    TOOLS["subtract"] = {"function": subtract, "required": ["x", "y"], "description": "Subtract y from x."}
    pending.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    return "subtract is now available"


TOOLS = {
    "add": {"function": add, "required": ["x", "y"], "description": "Add two numbers."},
    "divide": {"function": divide, "required": ["x", "y"], "description": "Divide x by y."},
    "delete_db": {"function": delete_db, "required": [], "description": "Delete the database."},
    "enable_subtract": {"function": enable_subtract, "required": [], "description": "Offer subtract from now on."},
}


def result(id, value):
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id, code, message):
    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}


def schema(tool):
    return {"type": "object", "properties": {name: {"type": "number"} for name in tool["required"]},
            "required": tool["required"]}


def call_tool(id, params):
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict):
        return error(id, -32602, "arguments must be an object")
    name = params.get("name")
    if name not in TOOLS:
        return error(id, -32601, f"unknown tool: {name}")
    if name not in ALLOWED:
        return error(id, -32600, f"tool {name} is not allowed in this session")
    for key in TOOLS[name]["required"]:
        if key not in arguments:
            return error(id, -32602, f"missing argument: {key}")
    try:
        value = TOOLS[name]["function"](arguments)
    except Exception as exc:
        return result(id, {"content": [{"type": "text", "text": f"ERROR: {exc}"}], "isError": True})
    return result(id, {"content": [{"type": "text", "text": str(value)}]})


def handle(message):
    if not isinstance(message, dict):
        return error(None, -32600, "a message is a JSON object")
    if "method" not in message:
        if "result" in message or "error" in message:
            return None  # a response: this server never asks anything
        return error(None, -32600, "a message has a method, or a result or an error")
    if "id" not in message:  # a notification: never answered
        if message["method"] == "notifications/initialized" and session["version"]:
            session["live"] = True
        return None
    id = message["id"]
    if not isinstance(id, (str, int)) or isinstance(id, bool):
        return error(None, -32600, "id must be a string or an integer")
    if message.get("jsonrpc") != "2.0":
        return error(id, -32600, 'jsonrpc must be "2.0"')
    method, params = message["method"], message.get("params", {})
    if not isinstance(params, dict):
        return error(id, -32602, "params must be an object")
    try:
        if method == "initialize":
            asked = params.get("protocolVersion")
            session["version"] = asked if asked in VERSIONS else VERSIONS[0]
            return result(id, {"protocolVersion": session["version"],
                               "capabilities": {"tools": {"listChanged": True}},
                               "serverInfo": {"name": "one-function", "version": "1.0"}})
        if method == "ping":
            return result(id, {})
        if not session["live"]:
            return error(id, -32600, "server not initialized")
        if method == "tools/list":
            return result(id, {"tools": [{"name": name, "description": tool["description"], "inputSchema": schema(tool)}
                                         for name, tool in TOOLS.items()]})
        if method == "tools/call":
            return call_tool(id, params)
        return error(id, -32601, f"method not found: {method}")
    except Exception as exc:
        return error(id, -32603, f"internal error: {exc}")


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        print(json.dumps(error(None, -32700, "parse error")), flush=True)
        continue
    reply = handle(message)
    for queued in pending:
        print(json.dumps(queued), flush=True)
    pending.clear()
    if reply is not None:
        print(json.dumps(reply), flush=True)
