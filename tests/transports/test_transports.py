"""The transports on real pipes and sockets: stdio (issue 3), Streamable HTTP (issue 5), and the
notifications a running tool sends, on every transport (issue 6).

Every wait is bounded (TIMEOUT), every socket is on 127.0.0.1, every child process is ended.

The demo transcripts live in docs/transcripts/; after a deliberate change to the demo, regenerate them with
    for t in stdio memory http; do python client_demo.py --transport $t > docs/transcripts/client_demo_$t.txt; done
and read the diff before committing it.
"""

import gc
import json
import os
import pathlib
import signal
import socket
import subprocess
import time

import pytest

import mcp_full
import mcp_http
import mcp_min
import mcp_stdio
import server_demo
from mcp_full import RPCError, error_response, notification, request, response
from mcp_stdio import MAX_DEPTH, MAX_MESSAGE_BYTES
from harness import (DEMO, KINDS, LinePipe, PYTHON, TAP, TIMEOUT, connected, connection, event_stream, exchange,
                     http_endpoint, initialize_request, line, open_session, pong, stateless, text_result, wait_until)
from sample_servers import META

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/transports/)

# ---------------------------------------------------------------------------------------------------
# What the demo server says, written out whole so every comparison below is a plain ==
# ---------------------------------------------------------------------------------------------------

INSTRUCTIONS = "The mcp_min course demo: arithmetic, pretend weather, and the lessons."
SERVER_INFO = {"name": "mcp_min-demo", "version": "0.1.0"}
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
NO_ARGUMENTS = {"type": "object", "properties": {}, "required": []}
X_AND_Y = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
DEMO_TOOLS = [
    {"name": "add", "description": "Add two integers.", "inputSchema": X_AND_Y},
    {"name": "weather", "description": "Tell the (pretend) weather in a city.",
     "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "delete_db",
     "description": "Delete the database (pretend); the user must confirm, even when the session may call it.",
     "inputSchema": NO_ARGUMENTS},
    {"name": "enable_subtract",
     "description": "Add the subtract tool at runtime; the client is told through notifications/tools/list_changed.",
     "inputSchema": NO_ARGUMENTS},
    {"name": "search_docs",
     "description": "Search the lessons' titles and text; the best k hits, each with its notebook and cell.",
     "inputSchema": {"type": "object",
                     "properties": {"query": {"type": "string"}, "k": {"type": "integer", "default": 3}},
                     "required": ["query"]}},
    {"name": "count_lessons", "description": "Count the lessons of a course (\"mcp\" is the only one here).",
     "inputSchema": {"type": "object", "properties": {"course": {"type": "string"}}, "required": ["course"]}},
    {"name": "count_slowly",
     "description": "Count to n, a tenth of a second a step, reporting progress and logging as it goes; stop if cancelled.",
     "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
]
SUBTRACT = {"name": "subtract", "description": "Subtract y from x.", "inputSchema": X_AND_Y}
LIST_CHANGED = notification("notifications/tools/list_changed")


INITIALIZE_RESULT = {"protocolVersion": "2025-06-18", "capabilities": CAPABILITIES, "serverInfo": SERVER_INFO,
                     "instructions": INSTRUCTIONS}
NOT_PERMITTED = error_response(4, -32600, "tool 'delete_db' not permitted for this session")

# Course 000's worked trace (steps 1-6), as (direction, message) pairs in the order they cross the wire.
WORKED_TRACE = [
    ("→", initialize_request()),
    ("←", response(1, INITIALIZE_RESULT)),
    ("→", notification("notifications/initialized")),
    ("→", request(2, "tools/list")),
    ("←", response(2, {"tools": DEMO_TOOLS})),
    ("→", request(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})),
    ("←", response(3, {"content": [{"type": "text", "text": "5"}]})),
    ("→", request(4, "tools/call", {"name": "delete_db", "arguments": {}})),
    ("←", NOT_PERMITTED),
    ("→", request(5, "tools/call", {"name": "enable_subtract", "arguments": {}})),
    ("←", LIST_CHANGED),  # the notification comes before the answer it was queued during
    ("←", response(5, text_result("subtract is now available"))),
    ("→", request(6, "tools/list")),  # the client re-lists on list_changed
    ("←", response(6, {"tools": DEMO_TOOLS + [SUBTRACT]})),
]


def run_worked_trace(client: mcp_full.MCPClient):
    """Drive course 000's six steps through an MCPClient; the delete_db refusal is part of the trace."""
    client.initialize(protocol_version="2025-06-18")
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    with pytest.raises(RPCError) as refused:
        client.call_tool("delete_db")
    assert (refused.value.code, refused.value.message) == (-32600, "tool 'delete_db' not permitted for this session")
    client.call_tool("enable_subtract")


# ---------------------------------------------------------------------------------------------------
# Helpers: raw pipes, an HTTP server in a thread, a client on any transport
# ---------------------------------------------------------------------------------------------------


def wire_lines(output: bytes) -> list:
    """Each line a server wrote, parsed as JSON."""
    return [json.loads(text) for text in output.splitlines()]


def ping(id: int) -> bytes:
    """A ping line: the good request that follows each bad one."""
    return line(request(id, "ping"))


def run_lines(command: list, data: bytes, **options) -> subprocess.CompletedProcess:
    """Feed data to command's stdin, close it, and collect everything, within TIMEOUT."""
    return subprocess.run(command, input=data, capture_output=True, timeout=TIMEOUT, cwd=HERE, **options)




# ---------------------------------------------------------------------------------------------------
# stdio (issue 3)
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_worked_trace_crosses_every_transport_message_for_message(kind):
    # Course 000's six steps give the same messages, in the same order, on memory, a pipe and a socket.
    with connected(kind) as (client, wire):
        run_worked_trace(client)
        assert wire == WORKED_TRACE
        assert [tool["name"] for tool in client.tools_cache] == [tool["name"] for tool in DEMO_TOOLS] + ["subtract"]


COURSE_LINES = [line(message) for direction, message in WORKED_TRACE if direction == "→"]
COURSE_ANSWERS = [line(message) for direction, message in WORKED_TRACE if direction == "←"]


def test_tap_passes_the_same_bytes_as_the_bare_server(tmp_path):
    # Putting the tap in front of the demo server changes not one byte of what the host reads. The lines
    # are sent all at once, so the server may answer a tools/call after a later ping: compare them sorted.
    data = b"".join(COURSE_LINES) + b"not json\n" + line(request(7, "ping"))
    bare = run_lines(DEMO, data)
    tapped = run_lines(TAP + ["--log", str(tmp_path / "tap.log"), "--"] + DEMO, data)
    assert sorted(bare.stdout.splitlines(keepends=True)) == sorted(COURSE_ANSWERS + [
        line(error_response(None, -32700, "parse error: Expecting value: line 1 column 1 (char 0)")), line(pong(7))])
    assert sorted(tapped.stdout.splitlines()) == sorted(bare.stdout.splitlines())
    assert (bare.returncode, tapped.returncode) == (0, 0)


def logged_as(arrow: str, wire_line: bytes) -> str:
    """How the tap logs one line: its arrow, then the line as it crossed."""
    return f"{arrow} {wire_line.decode().rstrip(chr(10))}"


def test_tap_logs_every_line_in_both_directions_in_order(tmp_path):
    # The tap's log holds each line the host sent (→) and each the server wrote (←), exchange by exchange.
    log = tmp_path / "tap.log"
    pipe = LinePipe(TAP + ["--log", str(log), "--"] + DEMO)
    logged = []

    def new_log_lines(count):
        wait_until(lambda: len(log.read_text(encoding="utf-8").splitlines()) >= len(logged) + count, "the tap's log")
        lines = log.read_text(encoding="utf-8").splitlines()
        fresh = lines[len(logged):]
        logged.extend(fresh)
        return fresh

    try:
        for sent in COURSE_LINES:
            pipe.write(sent)
            message = json.loads(sent)
            answers = [] if mcp_full.is_notification(message) else [pipe.read_line()]
            if message.get("params", {}).get("name") == "enable_subtract":
                answers.append(pipe.read_line())  # list_changed, then the answer
            fresh = new_log_lines(1 + len(answers))
            # Within one exchange the tap may log its two directions in either order; each keeps its own order.
            assert [text for text in fresh if text.startswith("→")] == [logged_as("→", sent)]
            assert [text for text in fresh if text.startswith("←")] == [logged_as("←", a) for a in answers]
    finally:
        exit_code = pipe.close()
    assert exit_code == 0
    assert [text for text in logged if text.startswith("←")] == [logged_as("←", a) for a in COURSE_ANSWERS]
    assert len(logged) == len(COURSE_LINES) + len(COURSE_ANSWERS)
    assert log.read_text(encoding="utf-8").splitlines() == logged  # nothing more after the host closed


def test_tap_ends_when_the_server_exits_first(tmp_path):
    # A server that quits while the host still holds the pipe open ends the tap, with the server's exit code.
    goodbye = notification("notifications/message", {"level": "info", "data": "bye"})
    server = [PYTHON, "-c", f"import sys; sys.stdout.write({json.dumps(goodbye)!r} + '\\n'); sys.exit(3)"]
    log = tmp_path / "tap.log"
    tap = subprocess.Popen(TAP + ["--log", str(log), "--"] + server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert tap.wait(timeout=TIMEOUT) == 3  # stdin is still open: only the server's exit can end it
        assert tap.stdout.read() == line(goodbye)
        assert log.read_text(encoding="utf-8") == "← " + json.dumps(goodbye) + "\n"
    finally:
        tap.kill()
        tap.wait()
        tap.stdin.close()
        tap.stdout.close()


def test_tap_ends_when_the_host_closes_and_logs_junk_as_it_is(tmp_path):
    # Closing the host's side ends the tap with the server's exit code; a line that is not JSON is logged unchanged.
    log = tmp_path / "tap.log"
    done = run_lines(TAP + ["--log", str(log), "--"] + DEMO, b"hello\n")
    parse_error = line(error_response(None, -32700, "parse error: Expecting value: line 1 column 1 (char 0)"))
    assert (done.returncode, done.stdout) == (0, parse_error)
    assert log.read_text(encoding="utf-8").splitlines() == ["→ hello", logged_as("←", parse_error)]


def test_tap_logs_a_last_line_that_lacks_its_newline(tmp_path):
    # A host's final message without a newline still reaches the server, so the log must show it too.
    log = tmp_path / "tap.log"
    last = line(request(2, "ping")).rstrip(b"\n")
    pipe = LinePipe(TAP + ["--log", str(log), "--"] + DEMO)
    assert answers_in_turn(pipe, [ping(1)]) == [pong(1)]
    pipe.write(last)
    pipe.process.stdin.close()  # the end of input ends the last line
    assert json.loads(pipe.read_line()) == pong(2)  # the server did answer it
    assert pipe.close() == 0
    logged = log.read_text(encoding="utf-8").splitlines()
    assert [text for text in logged if text.startswith("→")] == [logged_as("→", ping(1)), logged_as("→", last)]


def test_tap_takes_the_server_command_with_or_without_the_separator(tmp_path):
    # Some hosts (the Inspector's CLI) swallow "--"; the tap reads the command the same either way.
    with_separator = run_lines(TAP + ["--log", str(tmp_path / "a.log"), "--"] + DEMO, ping(1))
    without = run_lines(TAP + ["--log", str(tmp_path / "b.log")] + DEMO, ping(1))
    assert with_separator.stdout == without.stdout == line(pong(1))
    assert (tmp_path / "a.log").read_text(encoding="utf-8") == (tmp_path / "b.log").read_text(encoding="utf-8")


def test_tap_without_a_command_prints_its_usage():
    # No server command: exit code 2 and a usage line on stderr, nothing on stdout.
    done = run_lines(TAP + ["--log", "x.log"], b"")
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.startswith(b"usage: python tap.py")


def nested_ping(id: int, depth: int) -> bytes:
    """A ping whose params nest arrays so that the whole message is depth levels deep."""
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return f'{{"jsonrpc": "2.0", "id": {id}, "method": "ping", "params": {{"x": {inner}}}}}\n'.encode()


# Each bad line, and the one answer it must get (None: no answer at all).
BAD_LINES = [
    ("not JSON", b"{this is not json\n",
     error_response(None, -32700, "parse error: Expecting property name enclosed in double quotes: "
                                  "line 1 column 2 (char 1)")),
    ("invalid UTF-8", b'{"jsonrpc": "2.0", "id": 1, "method": "\xff"}\n',
     error_response(None, -32700, "parse error: 'utf-8' codec can't decode byte 0xff in position 39: "
                                  "invalid start byte")),
    ("nested one level too deep", nested_ping(1, MAX_DEPTH + 1),
     error_response(None, -32700, f"parse error: nested deeper than {MAX_DEPTH} levels")),
    ("over the size limit", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "'
     + b"x" * MAX_MESSAGE_BYTES + b'"}}\n',
     error_response(None, -32600, f"message larger than {MAX_MESSAGE_BYTES} bytes")),
    ("blank lines", b"\n   \n\t\r\n", None),
    ("a top-level array", b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]\n',
     error_response(None, -32600, "a message must be a JSON object")),
    ('"id": null', b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n',
     error_response(None, -32600, "id must be a string or an integer; a notification has no id key at all")),
    ("no jsonrpc member", b'{"id": 1, "method": "ping"}\n', error_response(1, -32600, 'jsonrpc must be "2.0"')),
    ("NaN", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}\n',
     error_response(None, -32700, "parse error: NaN is not JSON")),
]


def answers_in_turn(pipe: LinePipe, lines: list) -> list:
    """Each line written only once the one before it is answered (a ping answers itself, the bad line before it
    its error): the answers in order. Lines written at once may be answered in any order (serve_stdio reads on
    while a request is served), so a test that compares the order sends them one at a time."""
    answers = []
    for data in lines:
        pipe.write(data)
        answers.append(json.loads(pipe.read_line()))
    return answers


def test_each_bad_line_gets_its_error_and_the_next_request_still_works():
    # Every kind of bad line gets exactly its own error (blank lines none), and the ping after it is answered.
    pipe = LinePipe(DEMO)
    for number, (case, bad, answer) in enumerate(BAD_LINES, start=100):
        if answer is None:
            assert (case, answers_in_turn(pipe, [bad + ping(number)])) == (case, [pong(number)])
        else:
            assert (case, answers_in_turn(pipe, [bad, ping(number)])) == (case, [answer, pong(number)])
    assert pipe.close() == 0


def test_depth_and_size_limits_admit_what_is_exactly_at_them():
    # A message exactly MAX_DEPTH deep, and a line of exactly MAX_MESSAGE_BYTES, are served like any other.
    head = b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"pad": "'
    tail = b'"}}'
    full = head + b"x" * (MAX_MESSAGE_BYTES - len(head) - len(tail)) + tail + b"\n"
    assert len(full) == MAX_MESSAGE_BYTES + 1  # the newline is not part of the message
    pipe = LinePipe(DEMO)
    assert answers_in_turn(pipe, [nested_ping(1, MAX_DEPTH), full, ping(3)]) == [pong(1), pong(2), pong(3)]
    assert pipe.close() == 0


def test_stdio_server_exits_0_at_end_of_input_and_answers_a_last_line_without_newline():
    # End of input is the client's goodbye: exit code 0, after answering a final line that lacks its newline.
    done = run_lines(DEMO, b"")
    assert (done.returncode, done.stdout) == (0, b"")
    pipe = LinePipe(DEMO)
    assert answers_in_turn(pipe, [ping(1)]) == [pong(1)]
    pipe.write(ping(2).rstrip(b"\n"))
    pipe.process.stdin.close()  # the end of input ends the last line
    assert json.loads(pipe.read_line()) == pong(2)
    assert pipe.close() == 0


def count_slowly_lines(n: int) -> bytes:
    """The handshake, then one tools/call count_slowly(n) (a tenth of a second a step), as stdio lines."""
    messages = [notification("notifications/initialized"),
                request(2, "tools/call", {"name": "count_slowly", "arguments": {"n": n}})]
    return b"".join(line(message) for message in messages)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 0)], ids=["Ctrl-C", "SIGTERM"])
@pytest.mark.parametrize("moment", ["while a slow tool runs", "after a slow tool answered", "while idle"])
def test_ctrl_c_and_sigterm_end_the_stdio_server_cleanly_at_any_moment(signum, code, moment):
    # Exit 130 (Ctrl-C) or 0 (SIGTERM), and nothing on stderr: no "Fatal Python error" from a reader thread.
    pipe = LinePipe(DEMO, stderr=subprocess.PIPE)
    pipe.write(line(initialize_request()))
    assert json.loads(pipe.read_line())["id"] == 1  # the server is serving: its imports are behind it
    if moment != "while idle":  # count_slowly 100 counts for 10 s: the signal comes while it runs
        pipe.write(count_slowly_lines(100 if moment == "while a slow tool runs" else 3))
        first = json.loads(pipe.read_line())
        assert first["method"] == "notifications/message"  # its first log line: the tool is running now
        while moment == "after a slow tool answered" and "id" not in json.loads(pipe.read_line()):
            pass  # progress lines, then the answer
    pipe.process.send_signal(signum)
    try:
        assert pipe.process.wait(timeout=TIMEOUT) == code
    finally:
        pipe.close()
    assert pipe.process.stderr.read() == b""
    pipe.process.stderr.close()


NOISY_SERVER = '''
import json, os, subprocess, sys
sys.path.insert(0, {here!r})
from mcp_full import MCPServer
from mcp_stdio import serve_stdio

server = MCPServer("noisy")

@server.tool()
def chatter() -> str:
    """Write to stdout in every way a careless tool can."""
    print("junk from print")
    sys.stdout.write("junk from sys.stdout.write\\n")
    sys.stdout.flush()
    os.write(1, b"junk from os.write\\n")
    subprocess.run([sys.executable, "-c", "print('junk from a child process')"], check=True, timeout=10)
    return "said my piece"

if sys.argv[1:] == ["naive"]:
    for line in sys.stdin:  # what serve_stdio is there to prevent: the reply shares stdout with the tool
        reply = server.handle(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\\n")
            sys.stdout.flush()
else:
    serve_stdio(server)
'''
JUNK = ["junk from print", "junk from sys.stdout.write", "junk from os.write", "junk from a child process"]
NOISY_SESSION = (line(request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                 "clientInfo": {"name": "t", "version": "0"}}))
                 + line(notification("notifications/initialized"))
                 + line(request(2, "tools/call", {"name": "chatter", "arguments": {}}))
                 + ping(3))


def test_a_tool_that_prints_cannot_corrupt_the_wire(tmp_path):
    # Whatever a tool writes to stdout (print, sys.stdout, fd 1, a child process) lands on stderr instead.
    script = tmp_path / "noisy_server.py"
    script.write_text(NOISY_SERVER.format(here=str(HERE)), encoding="utf-8")
    done = run_lines([PYTHON, str(script)], NOISY_SESSION)
    answers = sorted(wire_lines(done.stdout), key=lambda answer: answer["id"])  # every line parses: no junk
    assert [answer["id"] for answer in answers] == [1, 2, 3]  # sent at once, answered by id, in any order
    assert answers[1:] == [response(2, text_result("said my piece")), pong(3)]
    assert sorted(done.stderr.decode().splitlines()) == sorted(JUNK)
    assert done.returncode == 0


def test_without_serve_stdio_a_printing_tool_puts_junk_on_the_wire(tmp_path):
    # The failure serve_stdio prevents: a naive loop sends the tool's chatter to the client as if it were messages.
    script = tmp_path / "noisy_server.py"
    script.write_text(NOISY_SERVER.format(here=str(HERE)), encoding="utf-8")
    done = run_lines([PYTHON, str(script), "naive"], NOISY_SESSION)
    wire = done.stdout.decode().splitlines()
    assert json.loads(wire[0])["id"] == 1
    assert wire[1:1 + len(JUNK)] == JUNK  # read where the client waits for the answer to tools/call
    assert [json.loads(text) for text in wire[1 + len(JUNK):]] == [response(2, text_result("said my piece")), pong(3)]


def test_stdio_transport_times_out_on_a_silent_server():
    # A server that reads but never answers makes send() raise TimeoutError after the timeout, not hang.
    silent = [PYTHON, "-c", "import sys\nfor _ in sys.stdin: pass"]
    transport = mcp_stdio.StdioTransport(silent, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(TimeoutError) as timed_out:
        transport.send(request(1, "ping"))
    assert 0.5 <= time.monotonic() - started < 3
    assert str(timed_out.value) == "no response to ping (id 1) in 0.5 s"
    assert transport.close() == 0  # it does exit on end of input


def test_stdio_transport_close_terminates_a_server_that_ignores_end_of_input():
    # close() closes stdin, waits, then sends SIGTERM to a server that keeps running regardless.
    stubborn = [PYTHON, "-c", "import time; time.sleep(60)"]
    transport = mcp_stdio.StdioTransport(stubborn, timeout=1)
    started = time.monotonic()
    assert transport.close() == -signal.SIGTERM
    assert time.monotonic() - started < 6
    assert transport.process.poll() == -signal.SIGTERM


def test_stdio_transport_close_kills_a_server_that_ignores_sigterm_too():
    # The last resort after SIGTERM is SIGKILL (spec 2025-11-25, basic/lifecycle, "Shutdown"), so close() always returns with the server gone.
    deaf = [PYTHON, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('deaf', flush=True); "
                          "time.sleep(60)"]
    transport = mcp_stdio.StdioTransport(deaf, timeout=1)
    assert transport.process.stdout.readline() == b"deaf\n"  # its SIGTERM is ignored from now on
    started = time.monotonic()
    try:
        assert transport.close() == -signal.SIGKILL
        assert time.monotonic() - started < 8
    finally:
        transport.process.kill()
        transport.process.wait(timeout=TIMEOUT)
        transport.process.stdout.close()


@pytest.mark.parametrize("kind", KINDS)
def test_demo_transcript_matches_the_stored_one(kind):
    # client_demo.py prints exactly the stored transcript (regenerate: see the top of this file).
    stored = (HERE / "docs" / "transcripts" / f"client_demo_{kind}.txt").read_text(encoding="utf-8")
    done = subprocess.run([PYTHON, "client_demo.py", "--transport", kind], capture_output=True, cwd=HERE,
                          timeout=30, env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode("utf-8") == stored


# ---------------------------------------------------------------------------------------------------
# Streamable HTTP (issue 5)
# ---------------------------------------------------------------------------------------------------

XY_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}


def test_two_http_sessions_keep_separate_gates_allow_lists_and_catalogs():
    # Each Mcp-Session-Id has its own server: its own gate, its own allow-list, its own runtime tools.
    allow_lists = []  # the next session's allow-list; the shared stateless server takes the default

    def factory():
        return server_demo.make_server(allow_lists.pop() if allow_lists else server_demo.DEFAULT_ALLOW)

    with http_endpoint(factory) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        first = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        second = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        try:
            allow_lists.append(["add", "enable_subtract", "subtract"])
            assert "result" in first.send(initialize_request(1))
            first.send(notification("notifications/initialized"))
            allow_lists.append(["add", "weather"])
            assert "result" in second.send(initialize_request(1))
            assert second.session_id != first.session_id
            # second has not sent initialized: its gate is shut while first's is open.
            assert second.send(request(2, "tools/list")) == error_response(2, -32600, "server not initialized",
                                                                           {"missing": "notifications/initialized"})
            assert first.send(request(2, "tools/call", {"name": "enable_subtract", "arguments": {}})) == response(
                2, text_result("subtract is now available"))
            second.send(notification("notifications/initialized"))
            assert first.send(request(3, "tools/call", {"name": "weather", "arguments": {"city": "Oslo"}})) == (
                error_response(3, -32600, "tool 'weather' not permitted for this session"))
            assert second.send(request(3, "tools/call", {"name": "weather", "arguments": {"city": "Oslo"}})) == (
                response(3, text_result("Sunny, 21 °C in Oslo")))
            assert second.send(request(4, "tools/list")) == response(4, {"tools": DEMO_TOOLS})  # no subtract here
            assert first.send(request(4, "tools/call", {"name": "subtract", "arguments": {"x": 5, "y": 3}})) == (
                response(4, text_result("2")))
        finally:
            first.close()
            second.close()


def test_the_lab_alone_serves_http_from_a_factory_each_session_with_its_own_catalog():
    # mcp_min's own server behind mcp_http: a factory makes each session's server, so a tool one session's server
    # gains is not another's, and the lab's client drives it as it drives the lab in memory.
    made = []

    def lab_server():
        server = mcp_min.MCPServer("course-lab")
        server.add_tool("add", lambda x, y: x + y, "Add two integers.", XY_SCHEMA)
        made.append(server)
        return server

    with http_endpoint(lab_server) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        first, second = (mcp_min.MCPClient(mcp_http.HttpTransport(url, timeout=TIMEOUT)) for _ in range(2))
        first.initialize()
        second.initialize()
        assert first.call_tool("add", {"x": 2, "y": 3}) == text_result("5")
        made[1].add_tool("subtract", lambda x, y: x - y, "Subtract y from x.", XY_SCHEMA)  # first's session only
        assert [tool["name"] for tool in first.list_tools()] == ["add", "subtract"]
        assert [tool["name"] for tool in second.list_tools()] == ["add"]
        first.close()
        second.close()
    assert len(made) == 3  # the shared one, for stateless requests, and one a session


def test_http_sessions_share_one_catalog_and_each_hears_of_its_changes():
    # Given an MCPServer, http_server opens each session with server.share_catalog(): one catalog, not a copy a
    # session. A tool added in one session is offered in the other, and both are told list_changed.
    catalog = server_demo.make_server()
    with http_endpoint(catalog) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        first = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        second = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        try:
            for transport in (first, second):
                assert "result" in transport.send(initialize_request(1))
                transport.send(notification("notifications/initialized"))
            assert first.send(request(2, "tools/call", {"name": "enable_subtract", "arguments": {}})) == response(
                2, text_result("subtract is now available"))
            assert first.drain() == [notification("notifications/tools/list_changed")]
            # The second session's change went out on its standing GET stream, outside any request of its own: the
            # transport's thread reads it from there, so wait for it where that thread hands it over.
            assert second.arrived.get(timeout=TIMEOUT) == notification("notifications/tools/list_changed")
            assert second.send(request(2, "tools/call", {"name": "subtract", "arguments": {"x": 5, "y": 3}})) == (
                response(2, text_result("2")))
            assert second.drain() == []
        finally:
            first.close()
            second.close()


def test_a_session_shares_the_catalog_and_starts_its_own_state():
    # server.share_catalog() copies no tool: memory a session stays the same however large the catalog.
    catalog = server_demo.make_server(allow=["add"])
    catalog.handle(initialize_request(1))
    other = catalog.share_catalog()
    assert (other.tools is catalog.tools, other.resources is catalog.resources) == (True, True)
    assert (other.allowed_tools, other.server_info) == ({"add"}, catalog.server_info)
    assert other.handle(request(2, "tools/list")) == error_response(2, -32600, "server not initialized",
                                                                    {"missing": "initialize"})
    assert catalog.sharing() == [catalog, other]
    del other
    gc.collect()  # a server refers to itself (its bound handlers): the cycle collector frees it
    assert catalog.sharing() == [catalog]  # a session that is gone is no longer told of changes


def test_session_header_missing_is_400_and_unknown_is_404():
    # A handshake-era request must name a live session: none is 400, one the server never issued is 404.
    with http_endpoint() as port:
        conn = connection(port)
        assert exchange(conn, request(1, "tools/list"))[0::2] == (
            400, json.dumps(error_response(None, -32600, "missing Mcp-Session-Id")).encode())
        assert exchange(conn, request(1, "tools/list"), {"Mcp-Session-Id": "made-up"})[0::2] == (
            404, json.dumps(error_response(None, -32600, "unknown or ended session")).encode())
        conn.close()


def test_delete_ends_a_session():
    # DELETE with the session's id ends it: the next request on it is 404, and so is a second DELETE.
    with http_endpoint() as port:
        conn = connection(port)
        session = open_session(conn)
        assert exchange(conn, request(2, "ping"), {"Mcp-Session-Id": session})[0::2] == (
            200, json.dumps(pong(2)).encode())
        assert exchange(conn, verb="DELETE", headers={"Mcp-Session-Id": session})[0::2] == (200, b"")
        gone = json.dumps(error_response(None, -32600, "unknown or ended session")).encode()
        assert exchange(conn, request(3, "ping"), {"Mcp-Session-Id": session})[0::2] == (404, gone)
        assert exchange(conn, verb="DELETE", headers={"Mcp-Session-Id": session})[0::2] == (404, gone)
        conn.close()


def test_unknown_protocol_version_header_is_400():
    # An MCP-Protocol-Version header naming no published revision is refused before the session is looked at.
    with http_endpoint() as port:
        conn = connection(port)
        session = open_session(conn)
        status, _, body = exchange(conn, request(2, "ping"),
                                   {"Mcp-Session-Id": session, "MCP-Protocol-Version": "1999-01-01"})
        assert (status, json.loads(body)) == (
            400, error_response(None, -32600, "unknown MCP-Protocol-Version 1999-01-01"))
        assert exchange(conn, request(3, "ping"), {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-06-18"})[
            0::2] == (200, json.dumps(pong(3)).encode())
        conn.close()


def without(headers: dict, name: str) -> dict:
    """headers less one."""
    return {key: value for key, value in headers.items() if key != name}


def stateless_rows():
    """(case, message, headers, status, body) for the stateless era's status mapping (spec 2026-07-28, basic/transports/streamable-http)."""
    old, old_headers = stateless(1, "tools/list",
                                 meta={**META, "io.modelcontextprotocol/protocolVersion": "2025-06-18"})
    unknown, unknown_headers = stateless(2, "tools/frobnicate")
    listing, listing_headers = stateless(3, "tools/list")
    prompts, prompts_headers = stateless(4, "prompts/list")
    call, call_headers = stateless(5, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})
    set_level, set_level_headers = stateless(6, "logging/setLevel", {"level": "info"})
    no_caps, no_caps_headers = stateless(7, "tools/list",
                                         meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"})
    nosuch, nosuch_headers = stateless(8, "tools/call", {"name": "nosuch", "arguments": {}})
    mismatch = "the MCP-Protocol-Version header does not match the body"
    return [
        ("unsupported version in _meta", old, old_headers, 400,
         error_response(1, -32022, "Unsupported protocol version",
                        {"supported": ["2026-07-28", "2025-11-25", "2025-06-18"], "requested": "2025-06-18"})),
        ("unknown method", unknown, unknown_headers, 404,
         error_response(2, -32601, "method not found: tools/frobnicate")),
        ("version header differs from _meta", listing, {**listing_headers, "MCP-Protocol-Version": "2025-11-25"}, 400,
         error_response(3, -32020, mismatch)),
        ("version header missing", listing, without(listing_headers, "MCP-Protocol-Version"), 400,
         error_response(3, -32020, mismatch)),
        ("Mcp-Method differs from the body", prompts, {**prompts_headers, "Mcp-Method": "tools/list"}, 400,
         error_response(4, -32020, "the Mcp-Method header does not match the body")),
        ("Mcp-Name differs from the body", call, {**call_headers, "Mcp-Name": "weather"}, 400,
         error_response(5, -32020, "the Mcp-Name header does not match the body")),
        ("Mcp-Name missing", call, without(call_headers, "Mcp-Name"), 400,
         error_response(5, -32020, "the Mcp-Name header does not match the body")),
        ("a handshake-only method", set_level, set_level_headers, 404,
         error_response(6, -32601, "method not found: logging/setLevel")),
        ("clientCapabilities missing", no_caps, no_caps_headers, 400,
         error_response(7, -32602, "_meta must carry io.modelcontextprotocol/clientCapabilities")),
        ("an unknown tool is the lab's own code, still a 200", nosuch, nosuch_headers, 200,
         error_response(8, mcp_min.UNKNOWN_TOOL, "unknown tool: nosuch")),
        ("all headers agree", call, call_headers, 200,
         response(5, {**text_result("5"), "resultType": "complete", "isError": False,
                      "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}})),
    ]


def test_stateless_errors_map_to_their_http_statuses():
    # Each stateless-era failure gets the status the spec gives it (2026-07-28, Streamable HTTP) and its JSON-RPC error body; no session is involved.
    with http_endpoint() as port:
        conn = connection(port)
        for case, message, headers, status, body in stateless_rows():
            got_status, _, got_body = exchange(conn, message, headers)
            assert (case, got_status, json.loads(got_body)) == (case, status, body)
        conn.close()


def test_stateless_requests_need_no_session():
    # A 2026-07-28 request is self-contained: no initialize, no Mcp-Session-Id asked for or handed out.
    with http_endpoint() as port:
        conn = connection(port)
        message, headers = stateless(1, "tools/list")
        status, reply_headers, body = exchange(conn, message, headers)
        assert (status, reply_headers["Mcp-Session-Id"]) == (200, None)
        assert json.loads(body) == response(1, {"tools": DEMO_TOOLS, "resultType": "complete", "ttlMs": 60000,
                                                "cacheScope": "private",
                                                "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}})
        conn.close()


def test_foreign_origin_gets_403_and_connection_stays_usable():
    # A request from a foreign Origin is refused with 403, and the same HTTPConnection then gets a correct answer.
    with http_endpoint() as port:
        conn = connection(port)
        smuggled = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 47\r\n\r\n" + json.dumps(
            request(666, "ping")).encode()  # if the server read the refused body as a request, 666 would answer next
        status, _, body = exchange(conn, body=smuggled, headers={"Origin": "http://evil.example"})
        assert (status, json.loads(body)) == (403, error_response(None, -32600, "Host or Origin is not a local name"))
        message, headers = stateless(7, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})
        status, _, body = exchange(conn, message, headers)
        assert (status, json.loads(body)["id"], json.loads(body)["result"]["content"]) == (
            200, 7, [{"type": "text", "text": "5"}])
        # A local Origin is welcome.
        status, _, body = exchange(conn, message, {**headers, "Origin": f"http://localhost:{port}"})
        assert (status, json.loads(body)["id"]) == (200, 7)
        conn.close()


def test_foreign_host_gets_403():
    # A Host header naming another machine (DNS rebinding) is refused with 403.
    with http_endpoint() as port:
        conn = connection(port)
        message, headers = stateless(1, "tools/list")
        status, _, body = exchange(conn, message, {**headers, "Host": "evil.example"})
        assert (status, json.loads(body)) == (403, error_response(None, -32600, "Host or Origin is not a local name"))
        conn.close()


def test_oversized_content_length_gets_413_before_the_body_is_read():
    # A Content-Length over MAX_MESSAGE_BYTES is refused with 413 from the headers alone.
    with http_endpoint() as port, socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw:
        raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1))
        reply = b""
        while chunk := raw.recv(65536):  # the server closes after refusing
            reply += chunk
        head, _, body = reply.partition(b"\r\n\r\n")
        assert head.split(b" ")[:2] == [b"HTTP/1.1", b"413"]
        assert json.loads(body) == error_response(None, -32600, f"the body must be {MAX_MESSAGE_BYTES} bytes at most")


@pytest.mark.parametrize("case", ["oversized body", "foreign origin"])
def test_a_refused_request_is_answered_even_when_the_client_sends_its_whole_body(case):
    # A plain client writes its whole body before reading; it must still read the refusal, not a broken pipe.
    headers = {"Origin": "http://evil.example"} if case == "foreign origin" else {}
    size = MAX_MESSAGE_BYTES + 1 if case == "oversized body" else MAX_MESSAGE_BYTES - 1
    expected = (413, f"the body must be {MAX_MESSAGE_BYTES} bytes at most") if case == "oversized body" else (
        403, "Host or Origin is not a local name")
    with http_endpoint() as port:
        conn = connection(port)
        status, _, body = exchange(conn, body=b" " * size, headers=headers)
        assert (status, json.loads(body)) == (expected[0], error_response(None, -32600, expected[1]))
        conn.close()


def test_body_that_is_not_json_is_400_with_parse_error():
    # A POST body that does not parse is 400 with a -32700 body whose id is null.
    with http_endpoint() as port:
        conn = connection(port)
        status, _, body = exchange(conn, body=b"{oops")
        assert (status, json.loads(body)) == (400, error_response(
            None, -32700, "parse error: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"))
        conn.close()


@pytest.mark.parametrize("body", [b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', b'"ping"', b"7", b"null"],
                         ids=["a batch", "a string", "a number", "null"])
def test_a_body_that_is_not_an_object_is_400_with_invalid_request(body):
    # Batches left in 2025-06-18; a scalar is no message either: one -32600 with a null id, never a silent 202.
    with http_endpoint() as port:
        conn = connection(port)
        status, _, reply = exchange(conn, body=body)
        assert (status, json.loads(reply)) == (400, error_response(None, -32600, "a message must be a JSON object"))
        conn.close()


def test_notification_is_202_with_no_body():
    # A notification is accepted with 202 and nothing else, the stateless era's included.
    with http_endpoint() as port:
        conn = connection(port)
        session = open_session(conn)  # asserts 202 and b"" for notifications/initialized
        cancelled = notification("notifications/cancelled", {"requestId": 9, "_meta": META})
        status, headers, body = exchange(conn, cancelled, {"MCP-Protocol-Version": "2026-07-28",
                                                           "Mcp-Method": "notifications/cancelled"})
        assert (status, body) == (202, b"")
        status, headers, body = exchange(conn, notification("notifications/cancelled", {"requestId": 9}),
                                         {"Mcp-Session-Id": session})
        assert (status, body) == (202, b"")
        conn.close()


def test_get_without_a_session_is_405_and_an_unknown_path_is_404():
    # A standalone stream belongs to a session (2026-07-28 has none: GET is 405), and there is one endpoint (/mcp).
    with http_endpoint() as port:
        conn = connection(port)
        status, _, body = exchange(conn, verb="GET", headers={"Accept": "text/event-stream"})
        assert (status, json.loads(body)) == (405, error_response(
            None, -32600, "a standalone stream belongs to a session: initialize first"))
        status, _, body = exchange(conn, request(1, "ping"), path="/elsewhere")
        assert (status, json.loads(body)) == (404, error_response(None, -32600, "not found: the endpoint is /mcp"))
        conn.close()


def test_list_changed_reaches_an_http_client_over_sse_before_the_answer():
    # A client that accepts text/event-stream gets the queued notification as an event ahead of the answer.
    with http_endpoint() as port:
        conn = connection(port)
        session = open_session(conn)
        call = request(2, "tools/call", {"name": "enable_subtract", "arguments": {}})
        status, headers, body = exchange(conn, call, {"Mcp-Session-Id": session})
        assert (status, headers["Content-Type"]) == (200, "text/event-stream")
        assert event_stream(body) == [LIST_CHANGED, response(2, text_result("subtract is now available"))]
        status, headers, body = exchange(conn, request(3, "tools/list"), {"Mcp-Session-Id": session})
        assert (status, headers["Content-Type"], json.loads(body)) == (
            200, "application/json", response(3, {"tools": DEMO_TOOLS + [SUBTRACT]}))
        conn.close()


# ---------------------------------------------------------------------------------------------------
# Notifications while a tool runs, on every transport (issue 6)
# ---------------------------------------------------------------------------------------------------

def counting(id: int, n: int, progress: bool, log: bool = True) -> list:
    """What count_slowly puts on the wire for request id: its log line, its progress, then its answer."""
    log_line = notification("notifications/message", {"level": "info", "data": f"counting to {n}"})
    arrived = [("←", log_line)] if log else []
    if progress:
        arrived += [("←", notification("notifications/progress", {"progressToken": id, "progress": i, "total": n,
                                                                  "message": f"{i} of {n}"}))
                    for i in range(1, n + 1)]
    return arrived + [("←", response(id, text_result(f"counted to {n}")))]


def count_call(id: int, n: int, progress: bool) -> tuple:
    params = {"name": "count_slowly", "arguments": {"n": n}}
    if progress:
        params["_meta"] = {"progressToken": id}
    return ("→", request(id, "tools/call", params))


@pytest.mark.parametrize("kind", KINDS)
def test_log_and_progress_arrive_before_the_answer_and_progress_increases(kind):
    # count_slowly's log line and each progress step reach the client first, then the answer.
    seen = []
    with connected(kind, on_progress=seen.append) as (client, wire):
        client.initialize()
        start = len(wire)
        assert client.call_tool("count_slowly", {"n": 3}, progress=True) == text_result("counted to 3")
        assert wire[start:] == [count_call(2, 3, True)] + counting(2, 3, progress=True)
        assert [step["progress"] for step in seen] == [1, 2, 3]


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_on_progress_is_called_as_each_step_arrives_not_after_the_answer(kind):
    # Over a real wire the steps arrive while the tool still runs: when on_progress hears a step, the answer
    # to the call (id 2) has not crossed yet. (In memory the server has finished before send returns.)
    answered_when_heard = []
    with connected(kind) as (client, wire):
        client.on_progress = lambda params: answered_when_heard.append(
            any(d == "←" and m.get("id") == 2 for d, m in wire))
        client.initialize()
        client.call_tool("count_slowly", {"n": 3}, progress=True)
    assert answered_when_heard == [False, False, False]


@pytest.mark.parametrize("kind", KINDS)
def test_no_progress_without_a_progress_token(kind):
    # A request without _meta.progressToken gets no notifications/progress, only the log line and the answer.
    with connected(kind) as (client, wire):
        client.initialize()
        start = len(wire)
        client.call_tool("count_slowly", {"n": 2})
        assert wire[start:] == [count_call(2, 2, False)] + counting(2, 2, progress=False)


@pytest.mark.parametrize("kind", KINDS)
def test_set_level_warning_keeps_info_lines_off_the_wire(kind):
    # After logging/setLevel "warning", count_slowly's info line is not sent; its progress still is.
    with connected(kind) as (client, wire):
        client.initialize()
        assert client.request("logging/setLevel", {"level": "warning"}) == {}
        start = len(wire)
        client.call_tool("count_slowly", {"n": 2}, progress=True)
        assert wire[start:] == [count_call(3, 2, True)] + counting(3, 2, progress=True, log=False)
        assert client.request("logging/setLevel", {"level": "debug"}) == {}
        start = len(wire)
        client.call_tool("count_slowly", {"n": 1})
        assert wire[start:] == [count_call(5, 1, False)] + counting(5, 1, progress=False)


@pytest.mark.parametrize("kind", KINDS)
def test_subscribed_resource_change_sends_resources_updated(kind):
    # After resources/subscribe, a tool changing the resource sends notifications/resources/updated before its answer.
    with connected(kind, server="notes") as (client, wire):
        client.initialize()
        assert client.request("resources/subscribe", {"uri": "note://today"}) == {}

        def edit(day):
            start = len(wire)
            assert client.call_tool("edit_note", {"day": day, "text": "buy milk"}) == text_result("saved")
            return [message for direction, message in wire[start:] if direction == "←"]

        assert edit("today") == [notification("notifications/resources/updated", {"uri": "note://today"}),
                                 response(3, text_result("saved"))]
        assert edit("tomorrow") == [response(4, text_result("saved"))]  # not subscribed: no notification
        assert client.request("resources/unsubscribe", {"uri": "note://today"}) == {}
        assert edit("today") == [response(6, text_result("saved"))]
        assert client.read_resource("note://today")["contents"] == [
            {"uri": "note://today", "mimeType": "text/plain", "text": "buy milk"}]


def test_registering_a_subscribed_resource_again_sends_resources_updated():
    # Registering a subscribed URI again replaces its content, so the subscriber is told, as by resource_updated.
    with connected("memory", server="notes") as (client, wire):
        client.initialize()
        client.request("resources/subscribe", {"uri": "note://today"})
        start = len(wire)
        assert client.call_tool("replace_note", {"day": "today", "text": "call mum"}) == text_result("replaced")
        assert [message for direction, message in wire[start:] if direction == "←"] == [
            notification("notifications/resources/updated", {"uri": "note://today"}),
            response(3, text_result("replaced"))]


@pytest.mark.parametrize("kind", KINDS)
def test_completion_offers_the_choices_that_start_with_what_was_typed(kind):
    # completion/complete completes a prompt's and a URI template's Literal arguments by prefix.
    with connected(kind) as (client, _):
        client.initialize()

        def complete(ref, name, value):
            return client.request("completion/complete", {"ref": ref, "argument": {"name": name, "value": value}})

        prompt = {"type": "ref/prompt", "name": "summarize_incident"}
        policy = {"type": "ref/resource", "uri": "policy://{doc_id}"}
        assert complete(prompt, "severity", "h") == {"completion": {"values": ["high"], "total": 1, "hasMore": False}}
        assert complete(policy, "doc_id", "") == {
            "completion": {"values": ["refunds", "security", "travel"], "total": 3, "hasMore": False}}
        assert complete(policy, "doc_id", "s") == {"completion": {"values": ["security"], "total": 1, "hasMore": False}}
        assert complete(policy, "doc_id", "x") == {"completion": {"values": [], "total": 0, "hasMore": False}}


SMALL_METHODS = [("logging/setLevel", {"level": "warning"}), ("resources/subscribe", {"uri": "lab://readme"}),
                 ("resources/unsubscribe", {"uri": "lab://readme"}),
                 ("completion/complete", {"ref": {"type": "ref/prompt", "name": "summarize_incident"},
                                          "argument": {"name": "severity", "value": "l"}})]
SMALL_ANSWERS = [{}, {}, {}, {"completion": {"values": ["low"], "total": 1, "hasMore": False}}]


@pytest.mark.parametrize("kind", KINDS)
def test_small_methods_wait_for_the_handshake(kind):
    # Before notifications/initialized each small method is -32600 "server not initialized"; after it, each works.
    with connected(kind) as (client, _):
        assert client.request("initialize", initialize_request()["params"])["protocolVersion"] == "2025-06-18"
        client.era = "handshake"  # initialize's response is in: send on, though notifications/initialized is not
        for method, params in SMALL_METHODS:
            with pytest.raises(RPCError) as refused:
                client.request(method, params)
            assert (method, refused.value.code, refused.value.message) == (method, -32600, "server not initialized")
        client.notify("notifications/initialized")
        assert [client.request(method, params) for method, params in SMALL_METHODS] == SMALL_ANSWERS


@pytest.mark.parametrize("kind", KINDS)
def test_small_methods_do_not_exist_in_the_stateless_era_but_completion_does(kind):
    # With _meta naming 2026-07-28, setLevel and (un)subscribe are -32601: that revision removed them;
    # completion/complete is still in it, and answers as in the handshake era.
    with connected(kind) as (client, _):
        assert client.connect()["supportedVersions"][0] == "2026-07-28"
        assert client.era == "stateless"
        for method, params in SMALL_METHODS[:3]:
            with pytest.raises(RPCError) as missing:
                client.request(method, params)
            assert (missing.value.code, missing.value.message) == (-32601, f"method not found: {method}")
        method, params = SMALL_METHODS[3]
        assert client.request(method, params)["completion"] == SMALL_ANSWERS[3]["completion"]


# ---- 2026-07-28 over HTTP: Mcp-Param-* headers, header whitespace, -32021 and discover's _meta ----

def region_server() -> mcp_full.MCPServer:
    """A server whose query tool repeats its region (and its limit) in Mcp-Param-* headers."""
    server = mcp_full.MCPServer("regions")

    @server.tool(headers={"region": "Region", "limit": "Limit"})
    def query(region: str, sql: str, limit: int = 10) -> str:
        """Run sql in a region."""
        return f"{region}:{limit}"

    @server.tool()
    def confirm(ctx: mcp_full.Context) -> str:
        """Ask the user."""
        return ctx.elicit("sure", "Sure?", {"type": "object"})["action"]
    return server


def raw_post(port: int, message: dict, headers: list) -> tuple:
    """POST message with headers given as (name, value) pairs, a name possibly twice: (status, body)."""
    conn = connection(port)
    body = json.dumps(message).encode()
    conn.putrequest("POST", "/mcp")
    for name, value in [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"),
                        ("Content-Length", str(len(body))), *headers]:
        conn.putheader(name, value)
    conn.endheaders(body)
    reply = conn.getresponse()
    result = reply.status, json.loads(reply.read())
    conn.close()
    return result


def query_call(arguments: dict) -> tuple:
    """A stateless tools/call of query, and its standard headers as pairs."""
    message, headers = stateless(1, "tools/call", {"name": "query", "arguments": arguments})
    return message, list(headers.items())


@pytest.mark.parametrize("case, arguments, params, status, text", [
    ("both present and equal", {"region": "us-west1", "sql": "x", "limit": 5},
     [("Mcp-Param-Region", "us-west1"), ("Mcp-Param-Limit", "5")], 200, "us-west1:5"),
    ("an integer compares as a number", {"region": "eu", "sql": "x", "limit": 5},
     [("Mcp-Param-Region", "eu"), ("Mcp-Param-Limit", "5.0")], 200, "eu:5"),
    ("a base64 value is unwrapped", {"region": "Zürich", "sql": "x"},
     [("Mcp-Param-Region", mcp_http.header_value("Zürich"))], 200, "Zürich:10"),
    ("an absent argument needs no header", {"region": "eu", "sql": "x"}, [("Mcp-Param-Region", "eu")], 200, "eu:10"),
    ("a header name in another case", {"region": "eu", "sql": "x"}, [("mcp-param-region", "eu")], 200, "eu:10"),
    ("mismatched", {"region": "eu", "sql": "x"}, [("Mcp-Param-Region", "us")], 400,
     "the Mcp-Param-Region header does not match the body"),
    ("missing", {"region": "eu", "sql": "x"}, [], 400, "the Mcp-Param-Region header does not match the body"),
    ("sent twice", {"region": "eu", "sql": "x"}, [("Mcp-Param-Region", "eu"), ("Mcp-Param-Region", "eu")], 400,
     "the Mcp-Param-Region header was sent 2 times"),
    ("for an argument that is absent", {"region": "eu", "sql": "x"},
     [("Mcp-Param-Region", "eu"), ("Mcp-Param-Limit", "3")], 400, "the Mcp-Param-Limit header does not match the body"),
    ("bad base64", {"region": "eu", "sql": "x"}, [("Mcp-Param-Region", "=?base64?ZX?=")], 400,
     "the Mcp-Param-Region header is not a valid =?base64?...?= value"),
])
def test_mcp_param_headers_must_repeat_their_arguments(case, arguments, params, status, text):
    # x-mcp-header (2026-07-28): each annotated argument present travels as Mcp-Param-{Name}; -32020 otherwise.
    with http_endpoint(region_server) as port:
        message, headers = query_call(arguments)
        got_status, body = raw_post(port, message, headers + params)
        got_text = body["result"]["content"][0]["text"] if got_status == 200 else body["error"]["message"]
        assert (case, got_status, got_text) == (case, status, text)
        if got_status == 400:
            assert body["error"]["code"] == -32020


def test_http_transport_mirrors_annotated_arguments_into_headers():
    # HttpTransport learns the annotations from tools/list and sends Mcp-Param-* itself, base64 where needed.
    with http_endpoint(region_server) as port:
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp"))
        client.connect()
        client.list_tools()
        assert client.call_tool("query", {"region": "Zürich", "sql": "x", "limit": 3})["content"][0]["text"] == "Zürich:3"
        client.close()


def test_a_tool_with_an_invalid_header_annotation_is_left_out_of_the_list():
    # A client must drop a tool it cannot mirror (an annotation under items, or a number), and keep the rest.
    result = {"tools": [
        {"name": "ok", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}},
        {"name": "nested", "inputSchema": {"type": "object", "properties": {"a": {"type": "array", "items": {
            "type": "string", "x-mcp-header": "A"}}}}},
        {"name": "number", "inputSchema": {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}},
        {"name": "twice", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                                                            "b": {"type": "string", "x-mcp-header": "a"}}}}]}
    transport = mcp_http.HttpTransport("http://127.0.0.1:9/mcp")
    transport.learn_headers(result)
    assert [tool["name"] for tool in result["tools"]] == ["ok"]
    assert list(transport.tool_schemas) == ["ok"]


def test_header_values_are_compared_without_surrounding_whitespace():
    # RFC 9110 section 5.5: spaces and tabs around a field value are not part of it.
    with http_endpoint() as port:
        message, headers = stateless(1, "tools/list")
        status, body = raw_post(port, message, [("MCP-Protocol-Version", "2026-07-28 \t"), ("Mcp-Method", "tools/list  ")])
        assert (status, body["result"]["tools"][0]["name"]) == (200, "add")


def test_a_missing_client_capability_is_400_over_http():
    # -32021 is a 400 with its data, like the other errors of a request the server will not serve.
    with http_endpoint(region_server) as port:
        message, headers = stateless(1, "tools/call", {"name": "confirm", "arguments": {}})
        status, body = raw_post(port, message, list(headers.items()))
        assert (status, body) == (400, error_response(1, -32021, "the client did not declare elicitation",
                                                      {"requiredCapabilities": {"elicitation": {}}}))


def test_discover_without_meta_is_400_over_http():
    # server/discover's _meta is required (2026-07-28): -32602 and 400.
    with http_endpoint() as port:
        status, body = raw_post(port, request(1, "server/discover"), [("Mcp-Method", "server/discover")])
        assert (status, body) == (400, error_response(1, -32602, "_meta must carry io.modelcontextprotocol/protocolVersion"))


@pytest.mark.parametrize("kind", KINDS)
def test_rounds_and_questions_cross_every_transport(kind):
    # Two rounds, three questions in one round, a prompt and a resource that ask: the same on memory, stdio and HTTP.
    answers = {"First?": "x", "Second?": "y", "Name?": "Ada", "Your name?": "Bo", "Password?": "open sesame"}
    options = {"on_elicit": lambda q: {"action": "accept", "content": {"value": answers[q["params"]["message"]]}},
               "on_sample": lambda q: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}},
               "on_roots": lambda q: {"roots": [{"uri": "file:///a"}]}}
    with connected(kind, "asking", **options) as (client, wire):
        client.connect()
        assert client.call_tool("two_rounds")["content"] == text_result("xy")["content"]
        assert client.call_tool("all_at_once")["content"] == text_result("Ada|hi|1")["content"]
        assert client.get_prompt("greeting")["messages"][0]["content"] == text_result("Hello, Bo")["content"][0]
        assert client.read_resource("secret://vault")["contents"][0]["text"] == "gold"
        sent = [m for d, m in wire if d == "→" and m.get("method") == "tools/call"]
        assert [sorted(m["params"].get("inputResponses", {})) for m in sent] == [[], ["a"], ["b"], [], ["name", "poem", "roots"]]


@pytest.mark.parametrize("kind", KINDS)
def test_a_client_without_the_capability_gets_32021_on_every_transport(kind):
    # The server refuses to ask what the client did not declare, on every transport.
    with connected(kind, "asking") as (client, _):
        client.connect()
        with pytest.raises(RPCError) as refused:
            client.call_tool("two_rounds")
        assert (refused.value.code, refused.value.data) == (-32021, {"requiredCapabilities": {"elicitation": {}}})
