"""The course's demo server: python server_demo.py (stdio), or --http to serve http://127.0.0.1:PORT/mcp.

usage: python server_demo.py [--allow TOOL,...] [--http [--port PORT]] [--state-key KEY]

  --allow TOOL,...  the session's allow-list (default: all but delete_db)
  --http            serve Streamable HTTP instead of stdio
  --port PORT       the HTTP port (default 8000; 0 picks a free one)
  --state-key KEY   a fixed key for requestState signatures (reproducible transcripts)

A host starts it as a subprocess (see README, "Point a real host at it"). The tools are course 000's
(add, weather, delete_db, subtract added at runtime) and course 004's (search_docs, count_lessons),
plus count_slowly, which reports progress and logs while it runs.
"""

import json, os, sys, time
from typing import Literal

from mcp_full import Context, MCPServer
from mcp_stdio import serve_stdio

LESSONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lessons")  # os.path: quicker to import than pathlib
DEFAULT_ALLOW = ["add", "weather", "enable_subtract", "subtract", "search_docs", "count_lessons", "count_slowly"]
POLICIES = {"refunds": "Refunds are granted within 30 days of purchase.",
            "security": "Report incidents within one hour to security@example.com.",
            "travel": "Book economy for flights under six hours."}


def make_server(allow=DEFAULT_ALLOW, state_key: bytes | None = None) -> MCPServer:
    """Build the demo's catalog on a new server; allow is this session's allow-list."""
    server = MCPServer("mcp_min-demo", "0.1.0", allowed_tools=allow, state_key=state_key,
                       instructions="The mcp_min course demo: arithmetic, pretend weather, and the lessons.")

    @server.tool()
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    @server.tool()
    def weather(city: str) -> str:
        """Tell the (pretend) weather in a city."""
        return f"Sunny, 21 °C in {city}"

    @server.tool()
    def delete_db(ctx: Context) -> str:
        """Delete the database (pretend); the user must confirm, even when the session may call it."""
        answer = ctx.elicit("confirm", "Really delete the database?",
                            {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
        if answer.get("action") != "accept" or not answer.get("content", {}).get("confirm"):
            return "Nothing deleted: the user said no."
        return "Database deleted (pretend)."

    @server.tool()
    def enable_subtract() -> str:
        """Add the subtract tool at runtime; the client is told through notifications/tools/list_changed."""
        server.add_tool("subtract", subtract, notify=True, replace=True)  # asked twice: offered once
        return "subtract is now available"

    def subtract(x: int, y: int) -> int:
        """Subtract y from x."""
        return x - y

    @server.tool()
    def search_docs(ctx: Context, query: str, k: int = 3) -> dict:
        """Search the lessons' titles and text; the best k hits, each with its notebook and cell."""
        words = query.lower().split()
        hits = []
        for cell in lesson_cells():
            score = sum(cell["text"].lower().count(word) for word in words)
            if score:
                hits.append({"url": f"lessons/{cell['lesson']}#cell-{cell['cell']}", "title": cell["title"],
                             "score": score})
        ctx.log("info", f"scanned {len(lesson_cells())} cells for {words}")
        hits.sort(key=lambda hit: (-hit["score"], hit["url"]))
        return {"hits": hits[:k]}

    @server.tool()
    def count_lessons(course: str) -> int:
        """Count the lessons of a course ("mcp" is the only one here)."""
        if course != "mcp":
            raise ValueError(f"unknown course {course!r}; this server knows only 'mcp'")
        return len(lesson_files())

    @server.tool()
    def count_slowly(n: int, ctx: Context) -> str:
        """Count to n, a tenth of a second a step, reporting progress and logging as it goes; stop if cancelled."""
        ctx.log("info", f"counting to {n}")
        for i in range(1, n + 1):
            time.sleep(0.1)
            if ctx.cancelled:
                return f"stopped at {i}"  # nobody reads this: a cancelled request gets no response
            ctx.progress(i, total=n, message=f"{i} of {n}")
        return f"counted to {n}"

    server.add_resource("lab://readme", "mcp_min's demo server: try tools/list, then tools/call add.",
                        name="readme", description="What this server is.")

    @server.resource("policy://{doc_id}", name="policy")
    def policy(doc_id: Literal["refunds", "security", "travel"]) -> str:
        """One company policy, by its id."""
        return POLICIES[doc_id]

    @server.prompt()
    def summarize_incident(severity: Literal["low", "medium", "high"]) -> str:
        """Ask for a three-sentence incident summary at a given severity."""
        return (f"Summarize this {severity}-severity incident in three sentences, "
                "focusing on root cause and remediation.")

    return server


def lesson_files() -> list:
    """The lessons' notebook names, in order."""
    return sorted(name for name in os.listdir(LESSONS) if name.endswith(".ipynb"))


def lesson_cells() -> list:
    """Every markdown cell of every lesson: its notebook, index, title and text."""
    cells = []
    for name in lesson_files():
        with open(os.path.join(LESSONS, name), encoding="utf-8") as file:
            notebook = json.load(file)
        title = name.removesuffix(".ipynb")
        for index, cell in enumerate(notebook.get("cells", [])):
            text = "".join(cell.get("source", []))
            if cell.get("cell_type") != "markdown":
                continue
            if index == 0 and text.startswith("#"):
                title = text.split("\n")[0].lstrip("# ")
            cells.append({"lesson": name, "cell": index, "title": title, "text": text})
    return cells




def options(argv: list) -> dict:
    """The flags given, by name; --help prints the usage and exits 0, a mistake says what it is and exits 2."""
    given = {"--allow": None, "--http": False, "--port": "8000", "--state-key": None}  # four flags: no argparse
    words = list(argv)
    while words:
        flag = words.pop(0)
        if flag in ("-h", "--help"):
            print(__doc__)  # the module's docstring is the usage
            raise SystemExit(0)
        if flag == "--http":
            given[flag] = True
        elif flag in given and words:  # --port 8001: a flag, then its value
            given[flag] = words.pop(0)
        else:
            return usage_error(f"{flag} is not an option here, or it lacks its value")
    if not given["--port"].isdigit():
        return usage_error(f"--port takes a number, not {given['--port']!r}")
    return given


def usage_error(problem: str):
    """Say what is wrong on stderr, in one line; exit 2, as a command line mistake does."""
    print(f"server_demo: {problem}; python server_demo.py --help lists the flags", file=sys.stderr)
    raise SystemExit(2)


def main(argv=None) -> int:
    """Serve the demo over stdio (the default) or HTTP."""
    given = options(sys.argv[1:] if argv is None else argv)
    allow = given["--allow"].split(",") if given["--allow"] else DEFAULT_ALLOW
    key = given["--state-key"].encode() if given["--state-key"] else None
    if given["--http"]:
        from mcp_http import serve_http  # only when HTTP is served: a stdio server starts sooner without it
        serve_http(make_server(allow, key), port=int(given["--port"]))  # one catalog, shared by every session
    else:
        if sys.stdin.isatty():  # a person, not a host: say what this is and how to talk to it
            print("server_demo: an MCP server; it speaks JSON-RPC, one message a line, on stdin and stdout.\n"
                  'Paste {"jsonrpc": "2.0", "id": 1, "method": "ping"} and press Enter; Ctrl-D ends it.\n'
                  "To watch a whole session instead: python client_demo.py", file=sys.stderr)
        try:
            serve_stdio(make_server(allow, key))
        except KeyboardInterrupt:
            return 130  # Ctrl-C in a terminal: stop quietly, as a shell expects
    return 0


if __name__ == "__main__":
    sys.exit(main())
