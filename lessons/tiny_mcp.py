"""tiny_mcp.py: the small MCP server course 004 (section 4) launches "next to these lessons", written by hand.

It speaks only the stateless revision, 2026-07-28, over stdio: one JSON-RPC message a line in, one out. Two
tools search these lessons: search_docs (the best k hits for a query) and count_lessons. It uses nothing but
the standard library, not even mcp_min: it exists so that every byte of the protocol is in view. Course
004's own client code drives it as it stands: paste it into a notebook or a file in this folder and run it
(test_first_hour.py does, verbatim).

mcp_min.py is course 000's lab (the handshake era) and mcp_full.py the rest of MCP, 2026-07-28 included; this
file is what a first server looks like before any of them.
"""

import json
import pathlib
import sys

VERSION = "2026-07-28"
SERVER_INFO = {"name": "tiny-docs", "version": "0.1.0"}
LESSONS = pathlib.Path(__file__).resolve().parent
TOOLS = [
    {"name": "search_docs", "description": "Search the lessons; the best k hits, each with its url, title and score.",
     "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer", "default": 3}},
                     "required": ["query"]}},
    {"name": "count_lessons", "description": "Count the lessons of a course (this site has one course: mcp).",
     "inputSchema": {"type": "object", "properties": {"course": {"type": "string"}}, "required": ["course"]}},
]


def search_docs(query: str, k: int = 3) -> list:
    """The k lesson cells that mention the query's words most, best first."""
    words = query.lower().split()
    hits = []
    for path in sorted(LESSONS.glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for index, cell in enumerate(cells):
            text = "".join(cell["source"]).lower()
            score = sum(text.count(word) for word in words)
            if score and cell["cell_type"] == "markdown":
                hits.append({"url": f"{path.name}#cell-{index}", "title": text.split("\n")[0][:60], "score": score})
    hits.sort(key=lambda hit: (-hit["score"], hit["url"]))
    return hits[:k]


def count_lessons(course: str) -> int:
    """How many lessons a course has; only "mcp" is here."""
    if course != "mcp":
        raise ValueError(f"unknown course {course!r}: this site has only the course 'mcp'")
    return len(list(LESSONS.glob("*.ipynb")))


def answer(message: dict) -> dict | None:
    """The response to one message (None for a notification): every request carries its version in _meta."""
    if "id" not in message:
        return None  # a notification is never answered
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response: this server asks nothing, and a response is never answered (JSON-RPC 2.0, section 5)
    id, method, params = message["id"], message.get("method"), message.get("params") or {}
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str) or not is_id(id):
        # "id": null is no notification: a malformed request (course 000, "Three message shapes")
        return error(id if is_id(id) else None, -32600, "invalid request")
    meta = params.get("_meta") or {}
    if meta.get("io.modelcontextprotocol/protocolVersion") != VERSION:
        return error(id, -32022, "Unsupported protocol version",
                     {"supported": [VERSION], "requested": meta.get("io.modelcontextprotocol/protocolVersion")})
    stamp = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
    cache = {"ttlMs": 300_000, "cacheScope": "public"}  # the same answer for everyone, for five minutes
    if method == "server/discover":
        return result(id, {"supportedVersions": [VERSION], "capabilities": {"tools": {}}, **stamp, **cache})
    if method == "tools/list":
        return result(id, {"tools": TOOLS, **stamp, **cache})
    if method != "tools/call":
        return error(id, -32601, f"method not found: {method}")
    name, arguments = params.get("name"), params.get("arguments") or {}
    tools = {"search_docs": search_docs, "count_lessons": count_lessons}
    if name not in tools:
        return error(id, -32601, f"unknown tool: {name}")  # the lab's code (course 000); the spec says -32602
    schema = next(tool["inputSchema"] for tool in TOOLS if tool["name"] == name)
    missing = [key for key in schema["required"] if key not in arguments]
    if missing:
        return error(id, -32602, f"missing argument: {missing[0]}")  # the lab's code (course 000)
    try:
        value = tools[name](**arguments)
    except (TypeError, ValueError) as exc:  # the tool failed, not the protocol: a result the model can read
        return result(id, {"content": [{"type": "text", "text": f"ERROR: {exc}"}], "isError": True, **stamp})
    content = [{"type": "text", "text": json.dumps(value)}]
    return result(id, {"content": content, "structuredContent": value, "isError": False, **stamp})


def is_id(id) -> bool:
    """A request id is a string or an integer, never null."""
    return isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))


def result(id, value: dict) -> dict:
    """A successful response."""
    return {"jsonrpc": "2.0", "id": id, "result": value}


def error(id, code: int, message: str, data=None) -> dict:
    """An error response."""
    body = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": body}


def main():
    """Read a message a line until end of input; write each response as one line."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            reply = error(None, -32700, "parse error")
        else:
            try:
                reply = answer(message) if isinstance(message, dict) else error(None, -32600, "not a request object")
            except Exception as exc:  # a bug here is an error response, never a crash (course 000: -32603)
                id = message.get("id") if is_id(message.get("id")) else None
                reply = error(id, -32603, f"internal error: {exc!r}")
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
