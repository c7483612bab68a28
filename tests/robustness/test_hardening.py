"""Hardening: tools that misbehave, the size and depth limits, many HTTP clients at once, and the
allow-list in every era on every transport.

The stdio tests run a small server script written to tmp_path; it imports the server it serves from
tests/sample_servers.py, so the same server runs in memory, over a pipe and over HTTP.
"""

import collections
import http.client
import json
import pathlib
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

import mcp_http
import mcp_stdio
import server_demo
from mcp_full import (CLIENT_CAPABILITIES_KEY, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, PROTOCOL_VERSION_KEY, TOOL_NOT_ALLOWED, InMemoryTransport, MCPClient, RPCError, notification, request)
from mcp_http import HttpTransport
from mcp_stdio import MAX_DEPTH, MAX_MESSAGE_BYTES, StdioTransport
from harness import LinePipe
from sample_servers import guarded_server, misbehaving_server

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/robustness/)
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hardening", "version": "1"}}
ERAS = {"handshake": "handshake", "auto": "stateless"}  # connect(mode) -> the era it must reach
STATELESS_META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}
SCRIPT = """import pathlib, sys
sys.path[:0] = [{root!r}, {root!r} + "/tests"]
import mcp_stdio
import sample_servers
marks = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
mcp_stdio.serve_stdio(sample_servers.{builder}(lambda name: (marks / name).touch()))
"""


# -- the servers (sample_servers.py), over a pipe --

def write_script(tmp_path, builder: str) -> pathlib.Path:
    """A server script in tmp_path that serves the builder of sample_servers.py over stdio."""
    script = tmp_path / f"serve_{builder}.py"
    script.write_text(SCRIPT.format(root=str(HERE), builder=builder))
    return script


def run_stdio(command: list, lines: list, timeout: float = 60) -> tuple:
    """Send lines to a stdio server, close its input; every stdout line must be JSON. (replies, stderr)."""
    done = subprocess.run(command, input=b"".join(line + b"\n" for line in lines), capture_output=True,
                          timeout=timeout, cwd=HERE)
    assert done.returncode == 0, done.stderr[-2000:]
    replies = [json.loads(line) for line in done.stdout.split(b"\n")[:-1]]  # junk on the wire fails here
    return replies, done.stdout, done.stderr.decode(errors="replace")


def line(message) -> bytes:
    """One message as a line's bytes."""
    return json.dumps(message).encode()


def call(id, name, arguments=None, meta=None) -> dict:
    """A tools/call request."""
    params = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return request(id, "tools/call", params)


HANDSHAKE = [line(request(0, "initialize", INIT_PARAMS)), line(notification("notifications/initialized"))]


def assert_failed_cleanly(reply: dict):
    """A tool that broke the rules gets an isError result, or a -32603 without a traceback."""
    shown = json.dumps(reply)
    shown = shown if len(shown) < 300 else f"{shown[:200]}... ({len(shown)} characters)"  # keep failures short
    assert "Traceback" not in shown, shown
    if "error" in reply:
        assert reply["error"]["code"] == INTERNAL_ERROR, shown
        return
    is_error = reply["result"].get("isError") is True
    assert is_error, shown
    result = reply["result"]
    assert [block["type"] for block in result["content"]] == ["text"], shown
    assert result["content"][0]["text"].startswith("ERROR: "), shown


# -- misbehaving tools --

BROKEN_RESULTS = ["returns_object", "returns_nan", "returns_circular", "returns_bad_block"]


def test_a_tool_that_raises_gets_an_is_error_result_in_memory():
    # The tool's exception is the tool's failure, not the protocol's: a result the model can read.
    client = MCPClient(InMemoryTransport(misbehaving_server()))
    client.initialize()
    assert client.call_tool("raises") == {"content": [{"type": "text", "text": "ERROR: the tool broke"}],
                                          "isError": True}
    assert client.call_tool("echo", {"text": "still here"}) == {"content": [{"type": "text", "text": "still here"}]}


@pytest.mark.parametrize("tool", BROKEN_RESULTS + ["huge"])
def test_a_tool_returning_what_json_cannot_carry_fails_cleanly_in_memory(tool):
    # Not JSON-serialisable, NaN, a cycle, bytes in a block, more than a message may hold.
    transport = InMemoryTransport(misbehaving_server())
    MCPClient(transport).initialize()
    assert_failed_cleanly(transport.send(call(7, tool)))
    assert transport.send(call(8, "echo", {"text": "ok"}))["result"] == {"content": [{"type": "text", "text": "ok"}]}


@pytest.mark.parametrize("tool", ["raises"] + BROKEN_RESULTS + ["huge"])
def test_a_misbehaving_tool_over_stdio_fails_cleanly_and_the_stream_stays_intact(tmp_path, tool):
    # Over a real pipe: every stdout line is JSON, the broken call fails cleanly, the next call works.
    script = write_script(tmp_path, "misbehaving_server")
    replies, raw, _ = run_stdio([sys.executable, str(script)],
                                HANDSHAKE + [line(call(1, tool)), line(call(2, "echo", {"text": "after"}))])
    replies.sort(key=lambda reply: reply["id"])  # sent at once, so answered by id, in any order
    assert [reply["id"] for reply in replies] == [0, 1, 2]
    assert_failed_cleanly(replies[1])
    assert replies[2]["result"] == {"content": [{"type": "text", "text": "after"}]}
    assert max(len(wire_line) for wire_line in raw.split(b"\n")) <= MAX_MESSAGE_BYTES  # no line a peer must refuse


@pytest.mark.parametrize("tool, stray, text", [
    ("prints", "stray print from a tool", "printed"),
    ("writes_fd1", "raw bytes on fd 1", "wrote"),
    ("runs_child", "child on stdout", "child ran"),
])
def test_a_tool_writing_to_stdout_over_stdio_lands_on_stderr_not_the_wire(tmp_path, tool, stray, text):
    # print(), os.write(1, ...) and a child process all go to stderr; the wire carries only JSON.
    script = write_script(tmp_path, "misbehaving_server")
    replies, raw, stderr = run_stdio([sys.executable, str(script)],
                                     HANDSHAKE + [line(call(1, tool)), line(call(2, "echo", {"text": "after"}))])
    replies.sort(key=lambda reply: reply["id"])  # sent at once, so answered by id, in any order
    assert [reply["id"] for reply in replies] == [0, 1, 2]
    assert replies[1]["result"] == {"content": [{"type": "text", "text": text}]}
    assert replies[2]["result"] == {"content": [{"type": "text", "text": "after"}]}
    assert stray.encode() not in raw
    assert stray in stderr


def test_a_megabyte_of_tool_text_crosses_stdio_whole(tmp_path):
    # Big is not broken: a result under MAX_MESSAGE_BYTES arrives intact.
    script = write_script(tmp_path, "misbehaving_server")
    client = MCPClient(StdioTransport([sys.executable, str(script)], timeout=30))
    try:
        client.initialize()
        assert client.call_tool("large") == {"content": [{"type": "text", "text": "y" * 1_000_000}]}
        assert client.ping() == {}
    finally:
        assert client.transport.close() == 0


# -- wrongly typed params are the client's mistake (-32602), not the server's bug (-32603) --

@pytest.mark.parametrize("message", [
    request(1, "tools/call", {"name": "search_docs", "arguments": {"query": "x"}, "_meta": "not an object"}),
    request(1, "server/discover", {"_meta": ["not", "an", "object"]}),
    request(1, "prompts/get", {"name": "summarize_incident", "arguments": True}),
    request(1, "completion/complete", {"ref": {"type": "ref/prompt", "name": ["a", "list"]},
                                       "argument": {"name": "severity", "value": "l"}}),
    request(1, "completion/complete", {"ref": {"type": "ref/prompt", "name": "summarize_incident"},
                                       "argument": {"name": {"an": "object"}, "value": "l"}}),
    request(1, "tools/call", {"name": "delete_db", "arguments": {}, "_meta": STATELESS_META,
                              "requestState": "\u00e9t\u00e9", "inputResponses": {}}),
], ids=["tools_call_meta_string", "discover_meta_list", "prompt_arguments_true", "complete_ref_name_list",
        "complete_argument_name_object", "request_state_non_ascii"])
def test_a_wrongly_typed_params_field_is_invalid_params_not_an_internal_error(message):
    # Found by test_fuzz.py: each of these is the client's error, so the code must be -32602.
    server = server_demo.make_server(allow=server_demo.DEFAULT_ALLOW + ["delete_db"])
    MCPClient(InMemoryTransport(server)).initialize()
    reply = server.handle(message)
    assert reply["id"] == 1
    assert reply["error"]["code"] == INVALID_PARAMS, reply["error"]


# -- limits: MAX_MESSAGE_BYTES and MAX_DEPTH --

def padded_ping(id, size: int) -> bytes:
    """A ping request padded with a string so that its line is exactly size bytes long."""
    head, tail = b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % id, b'"}}'
    return head + b"x" * (size - len(head) - len(tail)) + tail


def nested_call(id, depth: int) -> bytes:
    """A tools/call to weather whose whole message nests exactly depth levels deep."""
    inner = "[" * (depth - 3) + "]" * (depth - 3)
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"weather","arguments":{"city":%s}}}'
            % (id, inner)).encode()


def test_parse_takes_max_depth_and_refuses_one_level_more():
    # The depth the module promises to read, and a clear parse error just past it.
    assert mcp_stdio.parse(nested_call(1, MAX_DEPTH))["id"] == 1
    with pytest.raises(RPCError) as refused:
        mcp_stdio.parse(nested_call(2, MAX_DEPTH + 1))
    assert refused.value.code == PARSE_ERROR
    assert str(MAX_DEPTH) in refused.value.message


def test_stdio_limits_give_clear_errors_and_the_session_goes_on():
    # Over a line too long and a message too deep, then a normal call on the same session. Each line is sent
    # once the one before it is answered: lines sent at once may be answered in any order.
    pipe = LinePipe([sys.executable, str(HERE / "server_demo.py")])
    pipe.write(HANDSHAKE[0] + b"\n")
    replies = [json.loads(pipe.read_line())]
    pipe.write(HANDSHAKE[1] + b"\n")
    for data in [
        padded_ping(1, MAX_MESSAGE_BYTES + 1),  # one byte over: refused, id unreadable
        padded_ping(2, MAX_MESSAGE_BYTES),  # exactly the limit: served
        nested_call(3, MAX_DEPTH),  # as deep as allowed: parsed (weather wants a string)
        nested_call(4, MAX_DEPTH + 1),  # one level deeper: refused before json.loads recurses
        line(call(5, "add", {"x": 2, "y": 3})),
    ]:
        pipe.write(data + b"\n")
        replies.append(json.loads(pipe.read_line()))
    assert pipe.close() == 0
    assert [reply["id"] for reply in replies] == [0, None, 2, 3, None, 5]
    assert replies[1]["error"]["code"] == INVALID_REQUEST
    assert str(MAX_MESSAGE_BYTES) in replies[1]["error"]["message"]
    assert replies[2]["result"] == {}
    assert replies[3]["error"] == {"code": INVALID_PARAMS, "message": "argument 'city' must be string"}
    assert replies[4]["error"]["code"] == PARSE_ERROR
    assert str(MAX_DEPTH) in replies[4]["error"]["message"]
    assert replies[5]["result"] == {"content": [{"type": "text", "text": "5"}]}


class ServedHttp:
    """mcp_http.http_server on a free loopback port, served by a thread until the with-block ends."""

    def __init__(self, factory):
        self.httpd = mcp_http.http_server(factory, port=0)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


def raw_post(port: int, body: bytes, session_id: str) -> tuple:
    """POST body with http.client, as urllib and HttpTransport do: (status, parsed JSON body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Mcp-Session-Id": session_id, "MCP-Protocol-Version": "2025-11-25"}
    try:
        connection.request("POST", "/mcp", body, headers)
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


def test_http_depth_limit_gives_a_clear_error_and_the_session_goes_on():
    # Deep messages are refused with 400 and -32700; the session that sent them still works.
    with ServedHttp(lambda: server_demo.make_server()) as served:
        client = MCPClient(HttpTransport(served.url, timeout=30))
        client.initialize()
        sid = client.transport.session_id
        status, body = raw_post(served.port, nested_call(3, MAX_DEPTH), sid)
        assert (status, body["id"], body["error"]["code"]) == (200, 3, INVALID_PARAMS)
        status, body = raw_post(served.port, nested_call(4, MAX_DEPTH + 1), sid)
        assert (status, body["id"], body["error"]["code"]) == (400, None, PARSE_ERROR)
        assert str(MAX_DEPTH) in body["error"]["message"]
        assert client.call_tool("add", {"x": 2, "y": 3}) == {"content": [{"type": "text", "text": "5"}]}
        client.close()


def test_http_server_refuses_an_oversized_body_from_its_headers_alone():
    # With Content-Length past the limit the server answers 413 before any of the body is sent.
    with ServedHttp(lambda: server_demo.make_server()) as served:
        with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1))
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.split(b" ")[:2] == [b"HTTP/1.1", b"413"]
        assert json.loads(body)["error"]["code"] == INVALID_REQUEST
        assert str(MAX_MESSAGE_BYTES) in json.loads(body)["error"]["message"]


def test_http_client_posting_an_oversized_body_reads_the_413_and_the_session_goes_on():
    # An ordinary client (http.client, as urllib and HttpTransport) sends the whole body before it
    # reads: the 413 must reach it, and the session must still work afterwards.
    with ServedHttp(lambda: server_demo.make_server()) as served:
        client = MCPClient(HttpTransport(served.url, timeout=30))
        client.initialize()
        at_limit = padded_ping(2, MAX_MESSAGE_BYTES)
        assert raw_post(served.port, at_limit, client.transport.session_id) == (
            200, {"jsonrpc": "2.0", "id": 2, "result": {}})
        try:
            status, body = raw_post(served.port, padded_ping(1, MAX_MESSAGE_BYTES + 1), client.transport.session_id)
        except (BrokenPipeError, ConnectionResetError) as exc:
            pytest.fail(f"the client never saw the 413: {exc!r} (the server closed without reading the body)")
        assert (status, body["id"], body["error"]["code"]) == (413, None, INVALID_REQUEST)
        assert client.call_tool("add", {"x": 2, "y": 3}) == {"content": [{"type": "text", "text": "5"}]}
        client.close()


# -- many HTTP clients at once --

@pytest.mark.parametrize("mode", ERAS)
def test_eight_parallel_http_clients_each_get_their_own_answers(mode):
    # 8 threads x 200 calls; client k adds k*1000 + i, so a crossed answer shows as a wrong sum.
    clients, calls = 8, 200
    start = threading.Barrier(clients, timeout=30)

    def run(k):
        client = MCPClient(HttpTransport(served.url, timeout=30))
        client.connect(mode)
        assert client.era == ERAS[mode]
        start.wait()  # all clients in flight at once
        sums = [client.call_tool("add", {"x": k * 1000, "y": i})["content"][0]["text"] for i in range(calls)]
        session = client.transport.session_id
        client.close()
        return session, sums

    with ServedHttp(lambda: server_demo.make_server()) as served:
        with ThreadPoolExecutor(clients) as pool:
            outcomes = [future.result(timeout=120) for future in [pool.submit(run, k) for k in range(clients)]]
    for k, (session, sums) in enumerate(outcomes):
        assert sums == [str(k * 1000 + i) for i in range(calls)]
    sessions = [session for session, _ in outcomes]
    if mode == "handshake":
        assert len(set(sessions)) == clients  # each client its own session
    else:
        assert sessions == [None] * clients  # 2026-07-28 has no sessions


# -- the allow-list, in every era, on every transport --


def assert_forbidden_refused(client: MCPClient):
    """forbidden is refused with the lab's code, even with arguments missing or a requestState forged."""
    for arguments, extra in [({"path": "/etc"}, {}), ({}, {}), ({"path": 1}, {"requestState": "x.y"})]:
        with pytest.raises(RPCError) as refused:
            client.request("tools/call", {"name": "forbidden", "arguments": arguments, **extra})
        assert refused.value.code == TOOL_NOT_ALLOWED
        assert refused.value.message == "tool 'forbidden' not permitted for this session"
    assert client.call_tool("allowed_tool")["content"] == [{"type": "text", "text": "allowed ran"}]


@pytest.mark.parametrize("mode", ERAS)
def test_allow_list_holds_in_memory(mode):
    runs = collections.Counter()
    client = MCPClient(InMemoryTransport(guarded_server(lambda name: runs.update([name]))))
    client.connect(mode)
    assert client.era == ERAS[mode]
    assert_forbidden_refused(client)
    assert runs == {"allowed_tool": 1}


@pytest.mark.parametrize("mode", ERAS)
def test_allow_list_holds_over_stdio(tmp_path, mode):
    # A marker file per tool body that ran: only allowed_tool's may appear.
    script = write_script(tmp_path, "guarded_server")
    marks = tmp_path / "marks"
    marks.mkdir()
    client = MCPClient(StdioTransport([sys.executable, str(script), str(marks)], timeout=30))
    try:
        client.connect(mode)
        assert client.era == ERAS[mode]
        assert_forbidden_refused(client)
    finally:
        assert client.transport.close() == 0
    assert sorted(path.name for path in marks.iterdir()) == ["allowed_tool"]


@pytest.mark.parametrize("mode", ERAS)
def test_allow_list_holds_over_http(mode):
    runs = collections.Counter()
    lock = threading.Lock()

    def record(name):
        with lock:
            runs.update([name])

    with ServedHttp(lambda: guarded_server(record)) as served:
        client = MCPClient(HttpTransport(served.url, timeout=30))
        client.connect(mode)
        assert client.era == ERAS[mode]
        assert_forbidden_refused(client)
        client.close()
    assert runs == {"allowed_tool": 1}
