"""Hostile and clumsy peers, round three: what a peer does over HTTP, and the one answer (or clear refusal) it gets.

Each test is bounded by TIMEOUT and runs on loopback; none sleeps to let a thread catch up.
"""

import contextlib
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest

import board
import mcp_full
import mcp_http
import mcp_min
import server_demo
from mcp_full import RPCError, error_response, notification, request, response
from harness import (HERE, TIMEOUT, connected, connection, event_stream, exchange, http_endpoint, initialize_request,
                     open_session, raw, scripted_http, stateless, text_result, wait_until)
from sample_servers import META


def head_and_body(answer: bytes) -> tuple:
    """An HTTP answer's status line and headers (lower-case names), and its body as sent."""
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    return lines[0], {name.lower(): value for name, _, value in (line.partition(": ") for line in lines[1:])}, body


def post(message: dict, *, version: str = "HTTP/1.1", headers: dict | None = None) -> bytes:
    """A POST /mcp of message as raw bytes, with headers (Host first)."""
    body = json.dumps(message).encode()
    fields = {"Host": "127.0.0.1", "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
              "Content-Length": str(len(body)), "Connection": "close", **(headers or {})}
    return (f"POST /mcp {version}\r\n" + "".join(f"{name}: {value}\r\n" for name, value in fields.items())
            + "\r\n").encode("latin-1") + body


def test_a_delete_with_a_body_is_refused_and_its_body_is_never_served_as_a_request():
    # Row 7: the body after a DELETE's head would have been read as the next request on a kept-alive connection.
    smuggled = post(request(1, "ping"))
    delete = (b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: x\r\nContent-Length: %d\r\n\r\n"
              % len(smuggled)) + smuggled
    with http_endpoint() as port:
        answer = raw(port, delete)
    assert answer.count(b"HTTP/1.1 ") == 1  # one answer: the refusal, not a pong as well
    status, _, body = head_and_body(answer)
    assert (status, json.loads(body)["error"]["message"]) == ("HTTP/1.1 400 Bad Request", "a DELETE carries no body")


def test_a_bracket_in_host_origin_or_target_gets_a_400_not_a_silent_close():
    # Row 8: "[" opens an IPv6 address that never ends; urlsplit refuses it, and so does the server, in words.
    with http_endpoint() as port:
        for headers, target in (({"Host": "["}, "/mcp"), ({"Origin": "http://[oops"}, "/mcp"), ({}, "http://[oops/mcp")):
            data = post(request(1, "ping"), headers=headers).replace(b"POST /mcp ", f"POST {target} ".encode(), 1)
            status, _, body = head_and_body(raw(port, data))
            assert (status, json.loads(body)["error"]["message"]) == (
                "HTTP/1.1 400 Bad Request", "Host, Origin or the target cannot be read as a URL's part"), (headers, target)


def test_an_http_1_0_client_gets_its_event_stream_unchunked_and_closed():
    # Row 11: HTTP/1.0 has no chunked framing; the events come as they are and the close ends the stream.
    call = request(2, "tools/call", {"name": "count_slowly", "arguments": {"n": 2}, "_meta": {"progressToken": 7}})
    with http_endpoint() as port:
        opened = raw(port, post(initialize_request(1)))
        session = head_and_body(opened)[1]["mcp-session-id"]
        raw(port, post(notification("notifications/initialized"), headers={"Mcp-Session-Id": session}))
        answer = raw(port, post(call, version="HTTP/1.0", headers={"Mcp-Session-Id": session}))
    status, headers, body = head_and_body(answer)
    assert (status, "transfer-encoding" in headers, headers["connection"]) == ("HTTP/1.1 200 OK", False, "close")
    events = [json.loads(line[len(b"data: "):]) for line in body.split(b"\n") if line.startswith(b"data: ")]
    assert [event.get("method", event.get("id")) for event in events] == [
        "notifications/message", "notifications/progress", "notifications/progress", 2]


def test_100_continue_is_sent_only_for_a_body_the_server_will_read():
    # Row 19: a foreign Origin is refused before any "100 Continue": the client never uploads what is refused.
    with http_endpoint() as port:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
            head = post(request(1, "ping"), headers={"Origin": "http://evil.example", "Expect": "100-continue"})
            conn.sendall(head.partition(b"\r\n\r\n")[0] + b"\r\n\r\n")  # the head alone, as curl sends it
            first = conn.recv(65536)
    assert first.startswith(b"HTTP/1.1 403 ") and b"100 Continue" not in first


LISTEN = request(3, "subscriptions/listen", {"notifications": {"toolsListChanged": True}, "_meta": META})
LISTEN_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}


def demo_servers() -> tuple:
    """A factory of demo servers for http_server, and the list of those it made (the first serves 2026-07-28)."""
    made = []

    def factory():
        made.append(server_demo.make_server())
        return made[-1]
    return factory, made


def test_a_listen_that_accepts_json_only_is_refused_and_nothing_is_kept():
    # Row 1: with no event stream to carry it, a listen would be kept forever, unheard; it is 406 and forgotten.
    factory, made = demo_servers()
    with http_endpoint(factory) as port:
        answer = raw(port, post(LISTEN, headers={"Accept": "application/json", **LISTEN_HEADERS}))
        status, _, body = head_and_body(answer)
        assert (status, json.loads(body)["error"]["code"]) == ("HTTP/1.1 406 Not Acceptable", -32600)
        assert made[0]._listeners == []


def test_a_listen_stream_the_client_closes_is_forgotten():
    # Row 1: a stream that ended is no longer kept by the server (before, each one stayed, with its connection).
    factory, made = demo_servers()
    with http_endpoint(factory) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
            conn.sendall(post(LISTEN, headers={**LISTEN_HEADERS, "Connection": "keep-alive"}))
            received = b""
            while b"notifications/subscriptions/acknowledged" not in received:
                received += conn.recv(65536)  # the head, then the acknowledgement's event (TIMEOUT bounds each)
            assert len(made[0]._listeners) == 1
        wait_until(lambda: made[0]._listeners == [], "the server to forget the closed stream")


def test_a_server_whose_handle_breaks_the_seam_says_so_on_stderr_over_http(capsys):
    # Lesson 3's mistake: handle(self, message) overridden without the stream the HTTP transport passes. The
    # connection's thread raises; before, nothing was said anywhere.
    class Narrow(mcp_full.MCPServer):
        def handle(self, message):
            return super().handle(message)

    with http_endpoint(lambda: Narrow("narrow")) as port:
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT))
        client.initialize()  # initialize is handled without a stream: this one passes
        with pytest.raises(ConnectionError):
            client.list_tools()  # the connection closes: its thread raised
    said = capsys.readouterr().err
    assert said.startswith("mcp_min: a request from 127.0.0.1 failed:\n") and "TypeError" in said, said


def test_an_idle_session_keeps_one_list_change_of_each_kind_however_many_happen():
    # Row 4: a thousand changes to a shared catalog reach an idle session's outbox once: it invalidates, it
    # carries no diff (course 000), so the thousandth says what the first did.
    server = server_demo.make_server()
    idle = server.share_catalog()
    idle.handle(initialize_request(1))
    idle.handle(notification("notifications/initialized"))
    idle.handle(request(2, "resources/subscribe", {"uri": "lab://readme"}))
    for i in range(1000):
        server.add_tool(f"t{i}", lambda: i, "A tool.", notify=True)
        server.add_resource("lab://readme", f"version {i}", replace=True)
    assert idle.drain_outbox() == [notification("notifications/tools/list_changed"),
                                   notification("notifications/resources/updated", {"uri": "lab://readme"})]


def test_a_stderr_nobody_reads_costs_diagnoses_never_answers():
    # Row 17: every failing tool writes its report on stderr; with nobody reading the pipe, it fills (64 KiB), and
    # before, each report then waited, holding its connection. Now the reports are dropped and every call is answered.
    child = subprocess.Popen([sys.executable, str(HERE / "server_demo.py"), "--http", "--port", "0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        port = int(child.stderr.readline().split(b":")[-1].split(b"/")[0])  # "mcp_min: serving http://...:PORT/mcp"
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT))
        client.initialize()
        failed = [client.call_tool("count_lessons", {"course": "postgres"})["isError"] for _ in range(400)]
        assert failed == [True] * 400  # about 100 KiB of reports went to a pipe that holds 64
        assert client.call_tool("add", {"x": 2, "y": 3})["content"] == [{"type": "text", "text": "5"}]
        client.close()
    finally:
        child.terminate()
        child.wait(TIMEOUT)
        child.stderr.close()


@pytest.mark.parametrize("relay", ["tap.py", "board.py"])
def test_a_tap_whose_log_nobody_reads_still_relays_every_message(relay):
    # Row 16: the tap logs to stderr by default; a host that never reads it once stalled the tap at about 64 KiB.
    # The board relays through the tap, so the same holds for it (it once answered 0 of 400 pings of 2 kB).
    pings = b"".join(json.dumps(request(id, "ping", {"pad": "x" * 2000})).encode() + b"\n" for id in range(1, 3001))
    tap = subprocess.Popen([sys.executable, str(HERE / relay), "--", sys.executable, str(HERE / "server_demo.py")],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    answers = []
    writer = threading.Thread(target=lambda: (tap.stdin.write(pings), tap.stdin.close()), daemon=True)
    reader = threading.Thread(target=lambda: answers.extend(tap.stdout.read().splitlines()), daemon=True)
    try:
        writer.start()
        reader.start()  # the stderr pipe stays unread
        reader.join(6 * TIMEOUT)  # a stalled tap would never end its stdout: the bound says so
        assert not reader.is_alive(), f"the tap stalled after {len(answers)} answers"
        assert sorted(json.loads(answer)["id"] for answer in answers) == list(range(1, 3001))  # each once
        assert tap.wait(TIMEOUT) == 0
    finally:
        tap.kill()
        tap.wait()
        tap.stdout.close()
        tap.stderr.close()


@pytest.mark.parametrize("kind", ["stdio", "http"])
def test_one_client_shared_by_four_threads_gives_each_call_its_own_answer(kind):
    # Row 18: the threads take turns on the wire (one request at a time), so each gets the answer to its own call.
    sums = {}

    def calls(k: int, client):
        sums[k] = [client.call_tool("add", {"x": k * 1000, "y": i})["content"][0]["text"] for i in range(50)]
    with connected(kind) as (client, _):
        client.initialize()
        threads = [threading.Thread(target=calls, args=(k, client)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(6 * TIMEOUT)
    assert sums == {k: [str(k * 1000 + i) for i in range(50)] for k in range(4)}


def test_a_listen_client_that_stops_reading_never_stalls_another_clients_list_change():
    # Row 3: every list change is sent on every listen stream; once a stream's reader stops and the socket is
    # full, a send waits at most STREAM_WRITE_S, the stream is dropped, and the changes go on for everyone else.
    server = server_demo.make_server()
    with http_endpoint(lambda: server) as port:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as silent:  # closed at the end, in any case
            silent.sendall(post(LISTEN, headers={**LISTEN_HEADERS, "Connection": "keep-alive"}))
            received = b""
            while b"notifications/subscriptions/acknowledged" not in received:
                received += silent.recv(65536)  # acknowledged: from now on it reads nothing
            changes = threading.Thread(target=lambda: [server.add_tool(f"t{i}", lambda: i, "A tool.", notify=True)
                                                       for i in range(30_000)], daemon=True)
            changes.start()  # some 5 MB of list_changed for the silent stream: more than loopback's buffers hold
            changes.join(6 * TIMEOUT)
            assert not changes.is_alive(), "a list change waited on a client that reads nothing"
            wait_until(lambda: server._listeners == [], "the silent stream to be dropped")


def test_a_client_that_half_closes_after_its_request_still_gets_its_answer_in_both_eras():
    # Row 6: shutdown(SHUT_WR) says "I have sent all I will", not "I am gone": the socket still reads. Before, the
    # end of file on read was taken for the client gone, and the answer dropped (202, no body).
    half_closed = threading.Event()
    server = mcp_full.MCPServer("half")

    @server.tool()
    def add_once_half_closed(x: int, y: int) -> int:
        """Add, once the client has half-closed its socket."""
        half_closed.wait(TIMEOUT)
        return x + y
    call = {"name": "add_once_half_closed", "arguments": {"x": 2, "y": 3}}
    with http_endpoint(lambda: server) as port:
        opened = raw(port, post(initialize_request(1)))
        session = head_and_body(opened)[1]["mcp-session-id"]
        raw(port, post(notification("notifications/initialized"), headers={"Mcp-Session-Id": session}))
        eras = {"handshake": (request(2, "tools/call", call), {"Mcp-Session-Id": session}),
                "2026-07-28": (request(2, "tools/call", {**call, "_meta": META}),
                               {**LISTEN_HEADERS, "Mcp-Method": "tools/call", "Mcp-Name": call["name"]})}
        for era, (message, headers) in eras.items():
            half_closed.clear()
            with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
                conn.sendall(post(message, headers=headers))
                conn.shutdown(socket.SHUT_WR)
                half_closed.set()
                answer = b"".join(iter(lambda: conn.recv(65536), b""))
            status, _, body = head_and_body(answer)
            assert (status, json.loads(body)["result"]["content"]) == (
                "HTTP/1.1 200 OK", [{"type": "text", "text": "5"}]), era


def http_answer(body: bytes, content_type: str = "application/json", status: str = "200 OK") -> bytes:
    """An HTTP response carrying body, as a scripted server sends it."""
    return (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body


ACCEPTED = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
INITIALIZED = response(1, {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})
ASKING = {"resultType": "input_required", "requestState": "s"}


def odd(result: dict) -> bytes:
    """The response to the client's second request (the first after the handshake), holding result."""
    return http_answer(json.dumps(response(2, result)).encode())


@pytest.mark.parametrize("case, answers, call, problem", [
    ("capabilities a list", [json.dumps(response(1, {**INITIALIZED["result"], "capabilities": []})).encode()], None,
     "malformed response to initialize: capabilities must be an object"),
    ("serverInfo a string", [json.dumps(response(1, {**INITIALIZED["result"], "serverInfo": "s"})).encode()], None,
     "malformed response to initialize: serverInfo must be an object"),
    ("no tools", [odd({})], "list_tools", "malformed response to tools/list: tools is missing"),
    ("tools a number", [odd({"tools": 5})], "list_tools", "malformed response to tools/list: tools must be a list"),
    ("a tool a number", [odd({"tools": [5]})], "list_tools",
     "malformed response to tools/list: tools[0] must be an object with a string name"),
    ("a tool named by a list", [odd({"tools": [{"name": ["a"]}]})], "list_tools",
     "malformed response to tools/list: tools[0] must be an object with a string name"),
    ("nextCursor a list", [odd({"tools": [], "nextCursor": ["c"]})], "list_tools",
     "malformed response to tools/list: nextCursor must be a string"),
    ("ttlMs a word", [odd({"tools": [], "ttlMs": "soon"})], "list_tools",
     "malformed response to tools/list: ttlMs must be a number"),
    ("resources null", [odd({"resources": None})], "list_resources",
     "malformed response to resources/list: resources must be a list"),
    ("prompts a string", [odd({"prompts": "abc"})], "list_prompts",
     "malformed response to prompts/list: prompts must be a list"),
    ("inputRequests a number", [odd({**ASKING, "inputRequests": 5})], "call_tool",
     "malformed response to tools/call: inputRequests must be an object"),
    ("a question a number", [odd({**ASKING, "inputRequests": {"k": 5}})], "call_tool",
     "malformed response to tools/call: inputRequests.k must be an object with a string method"),
    ("requestState a number", [odd({**ASKING, "inputRequests": {}, "requestState": 5})], "call_tool",
     "malformed response to tools/call: requestState must be a string"),
    ("a body of invalid UTF-8", [http_answer(b'{"jsonrpc": "2.0", "id": 2, "result": {"x": "\xff"}}')], "list_tools",
     "the response body is not JSON (parse error: "),
    ("a body nested too deep", [http_answer(b"[" * 100_000 + b"]" * 100_000)], "list_tools",
     "the response body is not JSON (parse error: "),
])
def test_a_result_well_formed_but_odd_inside_is_one_protocol_error_naming_it(case, answers, call, problem):
    # Row 10: each of these once escaped as a KeyError, TypeError, AttributeError, JSONDecodeError, RecursionError
    # or UnicodeDecodeError from deep inside the client; now it is the client's one error type, saying what is odd.
    script = [http_answer(body) if body.startswith(b"{") else body for body in answers]
    if call:
        script = [http_answer(json.dumps(INITIALIZED).encode()), ACCEPTED, *script]
    with scripted_http(*script) as (port, _):
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT))
        with pytest.raises(RPCError) as caught:
            client.initialize()
            getattr(client, call)(*(["add"] if call == "call_tool" else []))
        assert caught.value.message.startswith(problem), caught.value.message
        client.close()


def test_a_notification_that_is_not_a_message_is_dropped_and_the_call_still_answered():
    # Row 10: a method that is a list, or params that are a list, once broke the pump (unhashable) or a callback.
    events = b"".join(b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n" for event in (
        {"jsonrpc": "2.0", "method": ["notifications/tools/list_changed"]},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": [1]},
        response(2, {"content": [], "isError": False})))
    script = [http_answer(json.dumps(INITIALIZED).encode()), ACCEPTED, http_answer(events, "text/event-stream")]
    heard = []
    with scripted_http(*script) as (port, _):
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT),
                                    on_log=heard.append)
        client.initialize()
        assert (client.call_tool("add"), heard) == ({"content": [], "isError": False}, [])
        client.close()


def test_a_stray_100_continue_is_skipped_and_the_final_response_read():
    # Row 10: an interim response the client never asked for (RFC 9110, 15.2: a client must accept one) was read
    # as the answer: "HTTP 100" and an empty body. Now the final response behind it is the answer.
    pong = http_answer(json.dumps(response(1, {})).encode())
    with scripted_http(b"HTTP/1.1 100 Continue\r\n\r\n" + pong) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        assert transport.send(request(1, "ping")) == response(1, {})
        transport.close()


@contextlib.contextmanager
def one_answer(answer):
    """A server that reads one request and calls answer(conn) (until the client goes, or TIMEOUT); yields its URL."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn:
            reader = conn.makefile("rb")
            head = b"".join(iter(reader.readline, b"\r\n"))
            reader.read(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
            conn.settimeout(TIMEOUT)
            with contextlib.suppress(OSError):
                answer(conn)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        thread.join(TIMEOUT)
        listener.close()


def trickle(conn):
    """A JSON body announced whole, sent a byte every 50 ms, for TIMEOUT at most."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        conn.sendall(b" ")
        time.sleep(0.05)  # the server's pace, not a wait for a thread


def test_a_server_that_trickles_bytes_cannot_stretch_the_clients_timeout():
    # Row 9: the timeout bounded each recv, so a byte every 50 ms held the client for as long as the server liked
    # (15-25 s for a 2 s timeout); now it bounds the whole response.
    transport_timeout = 0.5
    with one_answer(trickle) as url:
        transport = mcp_http.HttpTransport(url, timeout=transport_timeout)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            transport.send(request(1, "ping"))
        assert time.monotonic() - started < TIMEOUT / 2
        transport.close()


def endless_chunks(conn):
    """A chunked JSON body that never ends: 1 MiB chunks, 64 MiB at most."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    for _ in range(64):
        conn.sendall(b"100000\r\n" + b"[" * (1 << 20) + b"\r\n")


def announced(conn):
    """A body announced as 300 MB; its first MiB."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n")
    conn.sendall(b"[" * (1 << 20))


@pytest.mark.parametrize("answer", [endless_chunks, announced])
def test_a_response_body_over_the_message_limit_is_refused_not_kept_whole(answer):
    # Row 9: a 300 MB body was read whole, then parsed; now reading stops at MAX_MESSAGE_BYTES (4 MiB).
    with one_answer(answer) as url:
        transport = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        tracemalloc.start()
        try:
            with pytest.raises(ConnectionError, match=r"over 4194304 bytes \(MAX_MESSAGE_BYTES\)"):
                transport.send(request(1, "ping"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        transport.close()
    assert peak < 3 * mcp_full.MAX_MESSAGE_BYTES, peak


def flood(conn):
    """A listen stream: its acknowledgement, 30,000 log lines in one go, then a last one saying so."""
    ack = notification("notifications/subscriptions/acknowledged",
                       {"_meta": {"io.modelcontextprotocol/subscriptionId": 3}, "notifications": {}})
    line = notification("notifications/message", {"level": "info", "data": "x"})
    last = notification("notifications/message", {"level": "info", "data": "last"})
    events = [ack] + [line] * 30_000 + [last]
    body = b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(body) + body)


def test_a_flooding_listen_stream_keeps_only_the_newest_notifications():
    # Row 9: every notification of a listen stream waited in an unbounded queue for the next pump (1.43 million,
    # 1.6 GB in 12 s); now the newest MAX_KEPT_NOTIFICATIONS (10,000) wait, as over stdio.
    with one_answer(flood) as url:
        transport = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        assert transport.listen(LISTEN)["method"] == "notifications/subscriptions/acknowledged"
        wait_until(lambda: transport.arrived.queue and transport.arrived.queue[-1]["params"]["data"] == "last",
                   "the last line")
        assert transport.arrived.qsize() == mcp_full.MAX_KEPT_NOTIFICATIONS
        transport.close()


def test_bodies_being_served_hold_at_most_the_parsed_limit_and_the_next_is_told_503(monkeypatch):
    # Row 13: a 4 MiB body of {}s parses to some 100 MB, and 16 allowed ones at once held 1.64 GB while their tools
    # ran. Now what the bodies being served hold, parsed, is bounded (here to 32 MiB); one more hears 503, in words.
    monkeypatch.setattr(mcp_http, "MAX_PARSED_IN_FLIGHT", 32 * 1024 * 1024)
    entered, release = threading.Event(), threading.Event()
    server = mcp_full.MCPServer("holding")

    @server.tool()
    def hold(items: list) -> int:
        """Count the items, once released."""
        entered.set()
        release.wait(TIMEOUT)
        return len(items)
    call = request(2, "tools/call", {"name": "hold", "arguments": {"items": [{}] * 300_000}, "_meta": META})
    headers = {**LISTEN_HEADERS, "Mcp-Method": "tools/call", "Mcp-Name": "hold"}
    answers = []
    with http_endpoint(lambda: server) as port:
        first = threading.Thread(target=lambda: answers.append(raw(port, post(call, headers=headers))))
        first.start()
        assert entered.wait(TIMEOUT)  # the first body (~22 MB parsed) is held while its tool runs
        status, _, body = head_and_body(raw(port, post(call, headers=headers)))
        release.set()
        first.join(TIMEOUT)
        again = head_and_body(raw(port, post(call, headers=headers)))
    assert (status, json.loads(body)["error"]["code"]) == ("HTTP/1.1 503 Service Unavailable", -32603)
    assert "MAX_PARSED_IN_FLIGHT" in json.loads(body)["error"]["message"]
    assert [json.loads(head_and_body(answer)[2])["result"]["content"][0]["text"] for answer in answers] == ["300000"]
    assert json.loads(again[2])["result"]["content"][0]["text"] == "300000"  # served once the first let go


def a_second_client_is_served(port: int) -> float:
    """How long a new client takes to initialize and call a tool (TimeoutError past TIMEOUT)."""
    started = time.monotonic()
    client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT))
    client.initialize()
    assert client.call_tool("add", {"x": 2, "y": 3})["content"] == [{"type": "text", "text": "5"}]
    took = time.monotonic() - started
    client.close()
    return took


def test_three_hundred_idle_sockets_lock_no_one_out():
    # Row 2: 128 idle connections took every slot, and the rest waited in the listen queue, so a new client waited
    # REQUEST_S (30 s) for one to be cut. Now, when the slots are full, the connection idle the longest is cut.
    with http_endpoint() as port:
        idle = [socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) for _ in range(300)]
        try:
            # The 300th accepted cuts the 172nd oldest: the server has taken the whole crowd in, and holds 128 of it.
            wait_until(lambda: select.select([idle[299 - mcp_http.MAX_CONNECTIONS]], [], [], 0)[0], "the crowd taken in")
            assert a_second_client_is_served(port) < 1.0
        finally:
            for conn in idle:
                conn.close()


def test_a_hundred_and_twenty_eight_listen_streams_lock_no_one_out():
    # Row 2: each listen stream holds its connection for as long as it lasts; 128 held every slot. Now streams may
    # hold at most MAX_STREAMS (64, half the slots); one more is refused 503, and its connection is idle, so cut.
    with http_endpoint() as port:
        conns, refused = [], 0
        try:
            for _ in range(128):
                conns.append(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT))
                conns[-1].sendall(post(LISTEN, headers={**LISTEN_HEADERS, "Connection": "keep-alive"}))
                received = b""
                while b"acknowledged" not in received and not (b"\r\n\r\n" in received and b" 503 " in received):
                    received += conns[-1].recv(65536)
                refused += b" 503 " in received
            assert refused == 128 - mcp_http.MAX_STREAMS
            assert a_second_client_is_served(port) < 1.0
        finally:
            for conn in conns:
                conn.close()



def holding_server() -> tuple:
    """The demo server with a tool that holds each call until released, or stops once cancelled: (server, release,
    the ids of the calls it saw cancelled)."""
    server, release, stopped = server_demo.make_server([*server_demo.DEFAULT_ALLOW, "hold"]), threading.Event(), []

    @server.tool()
    def hold(ctx: mcp_full.Context) -> str:
        """Hold the call until released; stop if cancelled."""
        ctx.progress(1, total=2)  # (sent only if the call gave a progressToken: then its event stream has started)
        while not release.wait(0.05) and not ctx.cancelled:
            pass
        if ctx.cancelled:
            stopped.append(ctx.id)
            return "stopped"
        return "released"
    return server, release, stopped


def read_until_ended(conns: list, received: list, ended: set, count: int):
    """Read conns into received (bytes for each) until count of them have ended, closed by the server."""
    deadline = time.monotonic() + TIMEOUT
    while len(ended) < count:
        ready = select.select([conn for n, conn in enumerate(conns) if n not in ended], [], [],
                              max(0.0, deadline - time.monotonic()))[0]
        if not ready:
            raise TimeoutError(f"{len(ended)} of the calls answered in {TIMEOUT} s, not {count}")
        for conn in ready:
            n = conns.index(conn)
            data = conn.recv(65536)
            received[n] += data
            if not data:
                ended.add(n)


def busy(id) -> dict:
    """The error a call stopped past the share of long-held connections gets."""
    return error_response(id, -32603, f"the server is busy: long requests hold the {mcp_http.MAX_LONG} "
                                      f"connections they may (MAX_LONG); this request ran past LONG_S "
                                      f"({mcp_http.LONG_S} s) and was stopped: try again later")


def test_a_hundred_and_twenty_eight_slow_calls_lock_no_one_out():
    # Row 2: 128 calls of a slow tool held every slot, and a new client waited for one to end (BUSY_S, a minute, at
    # most). Now long requests and streams may hold MAX_LONG (96) connections: a call that runs past LONG_S beyond
    # those is stopped, the newest first, so that the other 32 slots serve short requests.
    server, release, stopped = holding_server()
    call, headers = stateless(2, "tools/call", {"name": "hold", "arguments": {}})
    excess = mcp_http.MAX_CONNECTIONS - mcp_http.MAX_LONG
    with http_endpoint(server) as port:
        calls = [socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) for _ in range(mcp_http.MAX_CONNECTIONS)]
        received, ended = [b""] * len(calls), set()
        try:
            for conn in calls:
                conn.sendall(post(call, headers=headers))
            read_until_ended(calls, received, ended, excess)  # the newest 32, stopped, have their answers
            assert a_second_client_is_served(port) < 1.0
            release.set()
            read_until_ended(calls, received, ended, len(calls))
        finally:
            release.set()
            for conn in calls:
                conn.close()
        wait_until(lambda: len(stopped) == excess, "each stopped call's tool to see it cancelled")
    answers = [head_and_body(answer) for answer in received]
    assert all(answer.count(b"HTTP/1.1 ") == 1 for answer in received)  # one answer each
    assert sorted(status for status, _, _ in answers) == ["HTTP/1.1 200 OK"] * mcp_http.MAX_LONG + [
        "HTTP/1.1 503 Service Unavailable"] * excess
    assert [json.loads(body) for status, _, body in answers if " 503 " in status] == [busy(2)] * excess
    assert {json.loads(body)["result"]["content"][0]["text"] for status, _, body in answers if " 200 " in status} == {
        "released"}


def events_until(conn, received: bytes, end: bytes | None) -> bytes:
    """Read conn until received holds end (None: until the server closes it); what it holds then."""
    while end is None or end not in received:
        data = conn.recv(65536)
        if not data:
            assert end is None, f"closed before {end!r}: {received!r}"
            return received
        received += data
    return received


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_call_stopped_past_the_share_gets_one_answer_the_error_and_the_older_call_its_result(monkeypatch, era):
    # The share is one connection here: the older of two long calls runs on; the newer is cancelled (its tool sees
    # ctx.cancelled) and, its event stream started, gets one answer, the error naming the limit, and no other.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 1)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    server, release, stopped = holding_server()
    with http_endpoint(server) as port:
        session = None
        if era == "2025-11-25":
            session = head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]
            raw(port, post(notification("notifications/initialized"), headers={"Mcp-Session-Id": session}))

        def call(id: int) -> tuple:
            """Send a call of hold; its connection, and what it sent up to its progress (its tool is running)."""
            if session:
                message, headers = request(id, "tools/call", {"name": "hold", "arguments": {},
                                                              "_meta": {"progressToken": id}}), {"Mcp-Session-Id": session}
            else:
                message, headers = stateless(id, "tools/call", {"name": "hold", "arguments": {}},
                                             meta={**META, "progressToken": id})
            conn = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            conn.sendall(post(message, headers=headers))
            return conn, events_until(conn, b"", b"notifications/progress")
        (older, older_sent), (newer, newer_sent) = call(2), call(3)
        with older, newer:
            newer_sent = events_until(newer, newer_sent, None)  # stopped: answered, and closed
            wait_until(lambda: stopped == [3], "the newer call's tool to see it cancelled")
            release.set()
            older_sent = events_until(older, older_sent, None)

    def responses(answer: bytes) -> list:
        messages = [json.loads(line[len(b"data: "):]) for line in answer.split(b"\n") if line.startswith(b"data: ")]
        return [message for message in messages if "method" not in message]
    assert responses(newer_sent) == [busy(3)]
    assert [reply["result"]["content"] for reply in responses(older_sent)] == [[{"type": "text", "text": "released"}]]



@pytest.mark.parametrize("stream", ["a listen stream", "a session's GET stream"])
def test_an_open_stream_gives_way_to_a_long_call_past_the_share_and_loses_nothing(monkeypatch, stream):
    # The share is one connection here, and an open stream holds it. It held it first, and a call running past LONG_S
    # was stopped; now streams give way to calls: the listen stream gets its graceful end, the listen's response
    # (2026-07-28, "Subscriptions"); the GET stream an id and a retry, to resume from its events kept. The call runs on.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 1)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    server, release, stopped = holding_server()
    with http_endpoint(server) as port, socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as held:
        if stream == "a listen stream":
            listen, headers = stateless(1, "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            held.sendall(post(listen, headers=headers))
            opened = events_until(held, b"", b"notifications/subscriptions/acknowledged")
            call, headers = stateless(2, "tools/call", {"name": "hold", "arguments": {}})
        else:
            headers = {"Mcp-Session-Id": head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]}
            raw(port, post(notification("notifications/initialized"), headers=headers))
            held.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                         f"Mcp-Session-Id: {headers['Mcp-Session-Id']}\r\n\r\n".encode())
            opened = events_until(held, b"", b"\r\n\r\n")  # the head: the stream is open
            call = request(2, "tools/call", {"name": "hold", "arguments": {}})
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as caller:
            caller.sendall(post(call, headers=headers))
            gave_way = events_until(held, opened, None)  # the stream's end, and its connection closed
            release.set()
            answer = events_until(caller, b"", None)
    assert stopped == []
    assert json.loads(head_and_body(answer)[2])["result"]["content"] == [{"type": "text", "text": "released"}]
    if stream == "a listen stream":
        assert event_stream(head_and_body(gave_way)[2].replace(b"\r\n", b"\n")) == [
            notification("notifications/subscriptions/acknowledged",
                         {"_meta": {"io.modelcontextprotocol/subscriptionId": 1},
                          "notifications": {"toolsListChanged": True}}),
            response(1, {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": 1}})]
    else:
        pieces = b"".join(head_and_body(gave_way)[2].split(b"\r\n")[1::2])  # its chunks' sizes left out
        assert re.fullmatch(rb"id: [\w-]+\.0\ndata: \n\nretry: 1000\n\n", pieces)  # an id to resume from


def test_one_peers_crowd_of_streams_gives_way_to_another_clients_slow_call(monkeypatch):
    # Row 6 (issue 42): one peer's 64 listen and 32 GET streams filled MAX_LONG (96), so anyone else's call that ran
    # past LONG_S was past the share at once, and stopped. Scaled down: the share is 3, and one peer's GET stream and
    # two listen streams fill it. Now streams give way to calls, the one held longest first (the GET: its client is
    # told to resume, and misses nothing), and the call runs on to its answer.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 3)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    server, release, stopped = holding_server()
    with http_endpoint(server) as port, contextlib.ExitStack() as held:
        streams = [held.enter_context(socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)) for _ in range(3)]
        session = head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]
        raw(port, post(notification("notifications/initialized"), headers={"Mcp-Session-Id": session}))
        streams[0].sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                           f"Mcp-Session-Id: {session}\r\n\r\n".encode())
        opened = [events_until(streams[0], b"", b"\r\n\r\n")]  # the head: the stream is open
        for conn in streams[1:]:
            conn.sendall(post(LISTEN, headers=LISTEN_HEADERS))
            opened.append(events_until(conn, b"", b"notifications/subscriptions/acknowledged"))
        call, headers = stateless(2, "tools/call", {"name": "hold", "arguments": {}})
        answers = []
        caller = threading.Thread(target=lambda: answers.append(raw(port, post(call, headers=headers))))
        caller.start()
        wait_until(lambda: stopped or select.select([streams[0]], [], [], 0)[0], "the call stopped, or a stream ending")
        release.set()
        caller.join(TIMEOUT)
        assert stopped == []
        gave_way = events_until(streams[0], opened[0], None)
    status, _, body = head_and_body(answers[0])
    assert (status, json.loads(body)["result"]["content"]) == ("HTTP/1.1 200 OK", [{"type": "text", "text": "released"}])
    pieces = b"".join(head_and_body(gave_way)[2].split(b"\r\n")[1::2])  # its chunks' sizes left out
    assert re.fullmatch(rb"id: [\w-]+\.0\ndata: \n\nretry: 1000\n\n", pieces)  # an id to resume from, and the wait


def test_what_a_stopped_calls_session_heard_meanwhile_comes_with_its_next_request(monkeypatch):
    # A call stopped past the share has its one answer, the busy error: a change its session heard of while the call
    # ran is not spent on the call's late end (its tool here heeds no cancel), but comes with the next request.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 0)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    server, release = mcp_full.MCPServer("stubborn"), threading.Event()

    @server.tool()
    def hold(ctx: mcp_full.Context) -> str:
        """Report progress, then hold until released, cancelled or not."""
        ctx.progress(1)
        release.wait(TIMEOUT)
        return "released"
    httpd = mcp_http.http_server(server, port=0)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    port = httpd.server_address[1]
    try:
        session = {"Mcp-Session-Id": head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]}
        raw(port, post(notification("notifications/initialized"), headers=session))
        call = request(2, "tools/call", {"name": "hold", "arguments": {}, "_meta": {"progressToken": 2}})
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
            conn.sendall(post(call, headers=session))
            events_until(conn, b"", b"notifications/progress")
            server.add_tool("late", lambda: "late", "A tool added while the call runs.", notify=True)
            stopped = events_until(conn, b"", None)  # the busy error, then the end
        release.set()
        wait_until(lambda: not httpd.serving, "the call to end")
        status, _, body = head_and_body(raw(port, post(request(3, "ping"), headers=session)))
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
    assert b'"code": -32603' in stopped
    assert (status, event_stream(body)) == ("HTTP/1.1 200 OK", [notification("notifications/tools/list_changed"),
                                                                response(3, {})])


def test_a_call_stopped_after_its_stream_was_resumed_gets_the_error_on_the_get_which_goes_on(monkeypatch):
    # In a session the client may take a stream over with GET and Last-Event-ID: the error then ends that GET's
    # stream, as the answer would have, and the GET's connection carries the next request.
    server, release, stopped = holding_server()
    with http_endpoint(server) as port:
        session = {"Mcp-Session-Id": head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]}
        raw(port, post(notification("notifications/initialized"), headers=session))
        call = request(2, "tools/call", {"name": "hold", "arguments": {}, "_meta": {"progressToken": 2}})
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
            conn.sendall(post(call, headers=session))
            progress = events_until(conn, b"", b"notifications/progress")
        last = next(line for line in progress.split(b"\n") if line.startswith(b"id: "))[len(b"id: "):].decode()
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as get:
            get.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
                        f"Mcp-Session-Id: {session['Mcp-Session-Id']}\r\nLast-Event-ID: {last}\r\n\r\n".encode())
            resumed = events_until(get, b"", b"\r\n\r\n")  # the head: the stream is the GET's now
            monkeypatch.setattr(mcp_http, "MAX_LONG", 0)
            resumed = events_until(get, resumed, b"\r\n0\r\n\r\n")  # the error, then the stream's end
            wait_until(lambda: stopped == [2], "the call's tool to see it cancelled")
            get.sendall(post(request(3, "ping"), headers=session))
            pong = events_until(get, b"", None)
        release.set()
    errors = [json.loads(line[len(b"data: "):]) for line in resumed.split(b"\n") if line.startswith(b"data: ")]
    assert errors == [busy(2)]
    assert json.loads(head_and_body(pong)[2]) == response(3, {})

def test_the_labs_call_past_the_share_is_answered_at_once_and_what_it_returns_later_is_dropped(monkeypatch):
    # mcp_min's MCPServer has no Context, so a call cannot be cancelled: stopped, it gets the error at once, and its
    # function runs to its end, holding its connection till then; what it returns goes nowhere.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 0)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    release, returned = threading.Event(), []

    def lab() -> mcp_min.MCPServer:
        server = mcp_min.MCPServer("lab")
        server.add_tool("hold", lambda: returned.append(release.wait(TIMEOUT)) or "released", "Hold until released.")
        return server
    with http_endpoint(lab) as port:
        session = {"Mcp-Session-Id": head_and_body(raw(port, post(initialize_request(1))))[1]["mcp-session-id"]}
        raw(port, post(notification("notifications/initialized"), headers=session))
        answer = raw(port, post(request(2, "tools/call", {"name": "hold", "arguments": {}}), headers=session))
        assert returned == []  # answered, and the connection closed, while the function still runs
        release.set()
        wait_until(lambda: returned == [True], "the function to return")
    status, headers, body = head_and_body(answer)
    assert (status, headers["connection"], json.loads(body)) == ("HTTP/1.1 503 Service Unavailable", "close", busy(2))

TAPPED = """import sys, tracemalloc
sys.path.insert(0, sys.argv[1])
import tap
tracemalloc.start()
with open(sys.argv[2], "a", encoding="utf-8") as log:
    code = tap.tap([sys.executable, "-c", "import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)"], log)
sys.stderr.write(f"{code} {tracemalloc.get_traced_memory()[1]}")
"""


def test_a_long_line_through_the_tap_is_held_about_once_not_five_times(tmp_path):
    # Row 15: a 64 MB line was held some five times at once (the line joined, decoded, formatted, joined, encoded:
    # 342 MB peak). Now the line begun is kept once, and logged a MiB at a time. 16 MB here, each way: the echo
    # server sends it back, so both directions may hold one at once.
    line = b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "' + b"\xc3\xa9" * 8_000_000 + b'"}}'
    tap = subprocess.Popen([sys.executable, "-c", TAPPED, str(HERE), str(tmp_path / "wire.log")],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    echoed = []
    reader = threading.Thread(target=lambda: echoed.append(tap.stdout.read()), daemon=True)
    reader.start()
    try:
        tap.stdin.write(line + b"\n")
        tap.stdin.close()
        reader.join(6 * TIMEOUT)
        code, peak = map(int, tap.stderr.read().split())
        assert (code, echoed) == (0, [line + b"\n"])
    finally:
        tap.kill()
        tap.wait()
        tap.stdout.close()
        tap.stderr.close()
    assert (tmp_path / "wire.log").read_bytes() == "→ ".encode() + line + b"\n" + "← ".encode() + line + b"\n"
    assert peak < 3 * len(line), peak


STUBBORN = """import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
while True:  # reads nothing, so the end of its stdin never stops it; says a line now and then
    print("tick", flush=True)
    time.sleep(0.05)
"""


def a_board_before_a_stubborn_server(tmp_path, stdout) -> tuple:
    """board.py in front of a server that only stops when stopped: (the board's process, the server's pid)."""
    pid_file = tmp_path / "server.pid"
    board = subprocess.Popen([sys.executable, str(HERE / "board.py"), "--", sys.executable, "-c", STUBBORN,
                              str(pid_file)], stdin=subprocess.PIPE, stdout=stdout, stderr=subprocess.PIPE)
    assert board.stderr.readline().startswith(b"board: http://127.0.0.1:")
    wait_until(lambda: pid_file.exists() and pid_file.read_text(), "the server to start")
    return board, int(pid_file.read_text())


def gone(pid: int) -> bool:
    """Whether no process has this pid any more (a zombie still has it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize("stop", ["SIGTERM", "the host closes its side"])
def test_when_the_board_stops_or_its_host_goes_its_server_stops_too(tmp_path, stop):
    # Row 14: SIGTERM killed the board and left its server running; a host gone left both waiting on each other.
    board, server = a_board_before_a_stubborn_server(tmp_path, subprocess.PIPE)
    try:
        if stop == "SIGTERM":
            board.send_signal(signal.SIGTERM)
        else:
            board.stdout.close()  # the board's next write of the server's ticks fails
        assert board.wait(TIMEOUT) == 128 + signal.SIGTERM  # the board's own SIGTERM, or its server's, as a shell says
        assert gone(server)
        assert b"Traceback" not in board.stderr.read()
    finally:
        board.kill()
        board.wait()
        board.stderr.close()
        if not gone(server):
            os.kill(server, signal.SIGKILL)


def test_a_taken_port_gives_the_board_one_line_not_a_traceback():
    # Row 14: --port of a port in use printed http.server's traceback; now one line, and exit status 2.
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, str(HERE / "board.py"), "--port", str(port), "--", sys.executable, "-c", ""],
                             capture_output=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert (run.returncode, run.stderr.decode()) == (2, f"board: cannot serve the page on 127.0.0.1:{port}: "
                                                        "Address already in use\n")


@contextlib.contextmanager
def board_page():
    """board.serve for a new recording, on a free port; yields the port."""
    httpd = board.serve(board.Recording(), 0)
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_bracket_in_host_gets_the_boards_page_a_400_not_a_traceback(capfd):
    # Row 14: urlsplit refuses "[" that opens no IPv6 address; the board's page said so with a traceback on stderr.
    with board_page() as port:
        answer = raw(port, b"GET / HTTP/1.1\r\nHost: [\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 400 ") and "Traceback" not in capfd.readouterr().err


def test_an_idle_connection_to_the_boards_page_is_closed(monkeypatch):
    # Row 20: a connection that never sent a request was kept open forever, a thread with it; now PAGE_IDLE_S (10 s,
    # here half a second) closes it.
    monkeypatch.setattr(board, "PAGE_IDLE_S", 0.5)
    with board_page() as port:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as idle:
            assert idle.recv(1) == b""  # closed; TIMEOUT would raise first


def test_the_board_keeps_a_bounded_number_of_bytes_and_says_when_it_stops(monkeypatch):
    # Row 14: the board kept every line, and every line's event (472 MB for 224 MB of traffic). Now it keeps
    # MAX_KEPT_BYTES (64 MiB; 1 MiB here) of lines, then one banner, and nothing more; the relay goes on.
    monkeypatch.setattr(board, "MAX_KEPT_BYTES", 1024 * 1024)
    recording = board.Recording()
    tracemalloc.start()
    try:
        for i in range(10_000):  # some 10 MB, each line a new object, as the relay's are
            recording.record_lines("→", [json.dumps(request(i, "ping", {"pad": "x" * 1000})).encode()])
        recording.catch_up()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert recording.board.events[-1]["label"].startswith("the board keeps no more lines (")
    assert peak < 8 * 1024 * 1024, peak


def test_a_list_read_while_another_thread_adds_to_it_is_always_whole():
    # Row 12: reading a list iterated the shared catalog while another thread added to it: about 1 in 2,000
    # listings failed with "dictionary changed size during iteration". Now both hold the catalog's lock.
    server = server_demo.make_server()
    failed, done = [], threading.Event()

    def keep_listing():
        while not done.is_set():
            reply = server.handle(request(1, "tools/list", {"_meta": META}))
            failed.extend([reply["error"]["message"]] if "error" in reply else [])
    lister = threading.Thread(target=keep_listing)
    lister.start()
    try:
        for i in range(20_000):
            server.add_tool(f"t{i}", lambda: i, "A tool.")
    finally:
        done.set()
        lister.join(TIMEOUT)
    assert failed == []


# ---- round four (issue 42): no answer lost to a resume, a crowd or an eviction ----

def late_server(released: threading.Event) -> mcp_full.MCPServer:
    """A server whose tool late closes its stream's connection before any event, then answers once released."""
    server = mcp_full.MCPServer("late")

    @server.tool()
    def late(ctx: mcp_full.Context) -> str:
        """Close the stream's connection, wait until released, answer."""
        ctx.close_stream()
        released.wait(TIMEOUT)
        return "late"
    return server


def cut_call(port: int) -> tuple:
    """A new session calls late, and its stream's connection is cut: (the session, the last event id it was given)."""
    conn = connection(port)
    session = open_session(conn)
    status, _, body = exchange(conn, request(2, "tools/call", {"name": "late", "arguments": {}}), {"Mcp-Session-Id": session})
    conn.close()
    assert (status, b"retry: 1000" in body) == (200, True)
    return session, re.findall(r"^id: (\S+)$", body.decode(), re.M)[-1]


def resume(port: int, session: str, last: str):
    """GET the stream after last: the response, its head read."""
    conn = connection(port)
    conn.request("GET", "/mcp", headers={"Mcp-Session-Id": session, "Last-Event-ID": last, "Accept": "text/event-stream"})
    return conn.getresponse()


def test_an_answer_given_after_close_stream_reaches_the_client_that_resumed_before_it():
    # Row 1: the priming event's id (the cut came before any event) named no stream kept, so a client that resumed
    # before the tool answered (RETRY_MS, a second, later) got 400 and lost the answer. Now the priming event is kept.
    released = threading.Event()
    with http_endpoint(late_server(released)) as port:
        session, last = cut_call(port)
        try:
            reply = resume(port, session, last)
        finally:
            released.set()
        assert (reply.status, event_stream(reply.read())) == (200, [response(2, text_result("late"))])


def test_standing_streams_at_their_cap_leave_room_for_a_resume(monkeypatch):
    # Row 2: a resume counted against the MAX_GET_STREAMS (32) standing streams, so 32 clients' standing streams made
    # everyone else's resume 503 and its answer lost. Now resumes have a budget of their own (here: the cap is 1).
    monkeypatch.setattr(mcp_http, "MAX_GET_STREAMS", 1)
    released = threading.Event()
    with http_endpoint(late_server(released)) as port:
        standing = connection(port)
        standing.request("GET", "/mcp", headers={"Mcp-Session-Id": open_session(standing), "Accept": "text/event-stream"})
        assert standing.getresponse().status == 200  # the one standing stream allowed is open
        session, last = cut_call(port)
        try:
            reply = resume(port, session, last)
        finally:
            released.set()
        assert (reply.status, event_stream(reply.read())) == (200, [response(2, text_result("late"))])
        standing.close()
