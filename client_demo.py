"""Replay the course's traces against server_demo.py, printing every message as it crosses.

    python client_demo.py                     # over stdio: server_demo.py runs as a child process
    python client_demo.py --transport memory  # the same server in this process
    python client_demo.py --transport http    # server_demo.py --http on a free loopback port
    python client_demo.py --full              # each message whole (by default a line is cut at 120 columns)
    python client_demo.py --board             # also draw every message on the wire board (board.py) in a browser
"""

import argparse, json, pathlib, subprocess, sys, time

from mcp_full import InMemoryTransport, MCPClient
from mcp_min import TOOL_NOT_ALLOWED, UNKNOWN_TOOL, RPCError, print_trace, request
from mcp_http import HttpTransport
from mcp_stdio import StdioTransport

HERE = pathlib.Path(__file__).resolve().parent
STATE_KEY = "demo-key"  # a fixed signing key for the demo server
WIDTH = 120  # a printed message is cut here (with "…") unless --full


def caption(text: str):
    """One line that says what the next messages are."""
    print(f"\n# {text}", flush=True)


BOARD = None  # with --board: the board's Recording, which every transport's trace hook also feeds


def trace(direction: str, message: dict):
    """Print each message, cut to WIDTH columns (None: whole); with --board, also hand it to the board."""
    print_trace(direction, message, WIDTH)
    if BOARD:
        BOARD.record(direction, json.dumps(message).encode())


def open_transport(kind: str, title: str, allow: str | None = None):
    """A transport to a fresh demo server, and a function that shuts it down and returns its exit code."""
    flags = ["--state-key", STATE_KEY] + (["--allow", allow] if allow else [])
    if BOARD:
        BOARD.begin(f"{title}, over {kind}")  # a new server: a new session on the board
    if kind == "memory":
        sys.path.insert(0, str(HERE))
        from server_demo import DEFAULT_ALLOW, make_server
        server = make_server(allow.split(",") if allow else DEFAULT_ALLOW, STATE_KEY.encode())
        return InMemoryTransport(server, trace=trace), lambda: None  # no process: no exit code
    if kind == "stdio":
        transport = StdioTransport([sys.executable, str(HERE / "server_demo.py"), *flags], trace=trace)
        return transport, transport.close
    child = subprocess.Popen([sys.executable, str(HERE / "server_demo.py"), "--http", "--port", "0", *flags],
                             stderr=subprocess.PIPE, text=True)
    url = child.stderr.readline().split()[-1]  # "mcp_min: serving http://127.0.0.1:PORT/mcp", once it listens
    transport = HttpTransport(url, trace=trace)

    def stop():
        transport.close()
        child.terminate()
        child.stderr.close()
        return child.wait()
    return transport, stop


def finish(stop):
    """Shut the server down, and say how its process ended (a server in memory has none)."""
    code = stop()
    if code is not None:
        print(f"  server exited with code {code}")


def attempt(call):
    """Run one client call; a protocol error is part of the lesson, so it is printed, not raised."""
    try:
        return call()
    except RPCError as exc:
        print(f"  (RPCError {exc.code}: {exc.message})")


def await_subtract(client: MCPClient):
    """Pump notifications until list_changed has brought subtract into tools_cache, then show the cache."""
    deadline = time.monotonic() + 5  # over HTTP the stream has a connection of its own: it may lag the response
    while "subtract" not in [tool["name"] for tool in client.tools_cache or []] and time.monotonic() < deadline:
        client._pump_notifications()
    print(f"  tools_cache now: {[tool['name'] for tool in client.tools_cache or []]}")


def part_one(kind: str):
    """Course 000's worked trace, then each error of the tool lattice once."""
    transport, stop = open_transport(kind, "part 1: the handshake era (course 000)")
    client = MCPClient(transport, name="client_demo", on_progress=lambda p: None, on_log=lambda p: None)
    caption("1-2. initialize, then notifications/initialized (no response: it is a notification)")
    client.initialize(protocol_version="2025-06-18")
    caption("3. tools/list fills the client's tools_cache")
    client.list_tools()
    caption("4. tools/call add")
    client.call_tool("add", {"x": 2, "y": 3})
    caption(f"5. delete_db exists but is not in this session's allow-list: {TOOL_NOT_ALLOWED}, and it never runs")
    attempt(lambda: client.call_tool("delete_db"))
    caption("6. enable_subtract registers subtract with notify=True; list_changed arrives first, the client re-lists")
    client.call_tool("enable_subtract")
    await_subtract(client)
    caption(f"lattice: an unknown tool is {UNKNOWN_TOOL}")
    attempt(lambda: client.call_tool("drop_tables"))
    caption("lattice: a missing required argument is -32602")
    attempt(lambda: client.call_tool("add", {"x": 2}))
    caption("lattice: the tool raised: an isError result the model can read, not a protocol error (the server also "
            "writes where, for its author, on its stderr: expected)")
    client.call_tool("count_lessons", {"course": "postgres"})
    caption("a tool that talks while it runs: progress and a log line arrive before its response")
    client.call_tool("count_slowly", {"n": 3}, progress=True)
    finish(stop)


def part_two(kind: str):
    """Course 004's transcript: the stateless 2026-07-28 revision, then a confirmation round trip."""
    transport, stop = open_transport(kind, "part 2: the stateless era (course 004)")
    client = MCPClient(transport, name="client_demo")
    caption("server/discover: versions, capabilities and a cache hint, without a handshake")
    client.connect()
    caption("subscriptions/listen: list changes reach a 2026 client on a stream; first its acknowledgement")
    client.listen(tools=True)
    caption("tools/list carries ttlMs and cacheScope")
    client.list_tools()
    caption("search_docs: every request carries its version and capabilities in _meta")
    client.call_tool("search_docs", {"query": "handshake gate", "k": 2})
    caption("count_lessons with an unknown course: isError (and, for the server's author, where on its stderr)")
    client.call_tool("count_lessons", {"course": "postgres"})
    caption("an unknown tool: a protocol error")
    attempt(lambda: client.call_tool("drop_tables"))
    caption("enable_subtract: list_changed comes on the listen stream, tagged with its id; the client re-lists")
    client.call_tool("enable_subtract")
    await_subtract(client)
    caption("a request that names an old version in _meta: -32022 lists the versions served")
    meta = {"io.modelcontextprotocol/protocolVersion": "2025-06-18", "io.modelcontextprotocol/clientCapabilities": {}}
    transport.send(request(client.next_id, "tools/list", {"_meta": meta}))
    caption("the client ends the listen stream")
    client.stop_listening()
    finish(stop)
    for era in ("handshake", "stateless"):
        transport, stop = open_transport(kind, f"part 2: delete_db, confirmed ({era} era)", allow="add,delete_db")
        client = MCPClient(transport, name="client_demo", on_elicit=confirm)
        if era == "handshake":
            caption("delete_db asks a 2025 client to confirm: a request of the server's own, in the middle of the call")
            client.initialize()
        else:
            caption("the same delete_db asks a 2026 client: input_required, the user confirms, the retry")
            client.connect()
        client.call_tool("delete_db")
        finish(stop)


def confirm(input_request: dict) -> dict:
    """The user's side of elicitation/create: print the question, answer yes."""
    print(f"  (the user is asked: {json.dumps(input_request['params']['message'])} and accepts)")
    return {"action": "accept", "content": {"confirm": True}}


def main(argv=None) -> int:
    """Run both parts over the chosen transport."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--transport", choices=["stdio", "memory", "http"], default="stdio")
    parser.add_argument("--full", action="store_true", help="print each message whole")
    parser.add_argument("--board", action="store_true", help="draw the sessions live on the wire board (board.py)")
    args = parser.parse_args(argv)
    global WIDTH, BOARD
    WIDTH = None if args.full else WIDTH
    if args.board:
        import board  # the board served in this process: its page shows every session, one after another
        BOARD = board.Recording(about={"command": f"client_demo.py --transport {args.transport}", "fault": None})
        url = board.url_of(board.serve(BOARD))
        print(f"board: {url}", file=sys.stderr, flush=True)
    print(f"=== Part 1: the handshake era (course 000), over {args.transport} ===")
    part_one(args.transport)
    print(f"\n=== Part 2: the stateless era (course 004), over {args.transport} ===")
    part_two(args.transport)
    if args.board:
        BOARD.end()
        print(f"board: the demo is over; the page stays at {url} until you press Enter", file=sys.stderr, flush=True)
        sys.stdin.readline()  # at the end of a pipe (a test) this returns at once: the demo ends
    return 0


if __name__ == "__main__":
    sys.exit(main())
