"""The client as real as the server: what mcp_min's client does with what real servers send (spec 2025-11-25 and
2026-07-28, basic/transports and basic/versioning), and the small server answers the conformance suite checks.
"""

import json
import threading
import time

import pytest

import mcp_full
import mcp_http
import mcp_min
import server_demo
from mcp_full import MCPClient, MCPServer, RPCError, error_response, notification, request, response
from harness import (TIMEOUT, chunked, connection, exchange, http_endpoint, open_session, pong, scripted_http,
                     stateless, text_result, wait_until)
from sample_servers import META, NAME_SCHEMA, cutting_server


def event_stream_answer(body: bytes) -> bytes:
    """An HTTP answer whose body is body, as a chunked event stream."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunked(body))


def test_a_priming_event_a_comment_and_an_event_without_data_are_no_messages():
    # A server may open its stream with an event of an id, a retry and an empty data line (spec 2025-11-25,
    # basic/transports, "Resumability"): none of them is a message; the response after them is.
    events = (b"id: event-1\nretry: 500\ndata: \n\n"  # the priming event
              b": a comment, as a keep-alive\n\n"
              b"event: message\nid: event-2\n\n"  # an event with no data at all
              b"event: message\ndata: " + json.dumps(pong(1)).encode() + b"\n\n")
    with scripted_http(event_stream_answer(events)) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        assert (transport.send(request(1, "ping")), transport.drain()) == (pong(1), [])


def test_an_event_that_is_not_json_is_a_parse_error_that_says_so():
    # Not a JSONDecodeError from deep inside: the client's one error type, -32700, naming the event (issue 28, row 10:
    # the connection is sound, what it carried is not).
    with scripted_http(event_stream_answer(b"event: message\ndata: {oops\n\n")) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(RPCError, match=r"an event of the stream is not JSON \(parse error: .*\): '\{oops'") as caught:
            transport.send(request(1, "ping"))
        assert caught.value.code == -32700


class Refusing:
    """A transport to a 2026-07-28 server that answers the first server/discover -32022, as a server does to a
    version it does not serve, listing the versions given; then it answers as the server would."""

    def __init__(self, supported: list):
        self.server, self.supported = mcp_full.MCPServer("refusing"), supported
        self.sent = []
        self.timeout = TIMEOUT

    def send(self, message: dict):
        self.sent.append(message)
        if len(self.sent) == 1:
            return error_response(message["id"], mcp_full.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version",
                                  {"supported": self.supported, "requested": "2026-07-28"})
        return self.server.handle(message)

    def drain(self) -> list:
        return []


def test_connect_asks_once_more_when_minus_32022_lists_the_version_it_speaks():
    # spec 2026-07-28, basic/versioning: a client retries with a version the server listed, even the one it sent.
    transport = Refusing(["2026-07-28"])
    client = MCPClient(transport)
    client.connect()
    assert client.era == "stateless"
    assert [m["method"] for m in transport.sent] == ["server/discover", "server/discover"]


def test_connect_falls_back_to_the_handshake_when_minus_32022_lists_no_version_it_speaks():
    # Only a listed version is worth a second try; otherwise the handshake.
    transport = Refusing(["2027-01-01"])
    client = MCPClient(transport)
    client.connect()
    assert client.era == "handshake"
    assert [m["method"] for m in transport.sent] == ["server/discover", "initialize", "notifications/initialized"]


def json_answer(status: bytes, message: dict) -> bytes:
    """An HTTP answer of the given status whose body is message, as JSON."""
    body = json.dumps(message).encode()
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (status, len(body), body)


# What a server of the TypeScript SDK 1.x answers a server/discover it cannot take: 400, -32000 and id null.
NOT_INITIALIZED_400 = json_answer(b"400 Bad Request", error_response(None, -32000, "Bad Request: Server not initialized"))
UNSUPPORTED_400 = json_answer(b"400 Bad Request", error_response(None, -32000,
                                                                 "Bad Request: Unsupported protocol version"))


@pytest.mark.parametrize("refusal", [NOT_INITIALIZED_400, UNSUPPORTED_400], ids=["not initialized", "unsupported"])
def test_connect_falls_back_to_the_handshake_when_discover_gets_an_http_error_with_a_json_rpc_error(refusal):
    # Any HTTP error status whose body is a JSON-RPC error (id null included) answers the POST's one request:
    # no 2026-07-28 there, so the handshake, as over stdio.
    initialized = response(2, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "typescript-1.x", "version": "1"}})
    accepted = b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
    with scripted_http(refusal, json_answer(b"200 OK", initialized), accepted,
                       json_answer(b"200 OK", response(3, {"tools": []}))) as (port, _):
        sent = []
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT,
                                           trace=lambda direction, message: sent.append(message.get("method")))
        client = MCPClient(transport)
        client.connect()
        assert (client.era, client.protocol_version, client.list_tools()) == ("handshake", "2025-11-25", [])
        assert sent == ["server/discover", None, "initialize", None, "notifications/initialized", "tools/list", None]


def test_an_http_error_with_a_json_rpc_error_is_that_requests_error_not_a_lost_answer():
    # The RPCError carries the server's code and message, whatever the body's id; the connection carries the next POST.
    with scripted_http(NOT_INITIALIZED_400, json_answer(b"200 OK", pong(2))) as (port, opened):
        client = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT))
        with pytest.raises(RPCError, match="Bad Request: Server not initialized") as caught:
            client.request("ping")
        assert (caught.value.code, client.request("ping"), len(opened)) == (-32000, {}, 1)


def test_an_http_error_whose_body_is_a_result_is_still_no_answer():
    # Only an error can be the answer an error status carries: a result there is the server's confusion, said so.
    with scripted_http(json_answer(b"400 Bad Request", response(None, {}))) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(ConnectionError, match="HTTP 400: the body held no response to ping"):
            transport.send(request(1, "ping"))


def test_discover_with_capabilities_but_no_version_is_400_over_http():
    # A required _meta field missing is a 400, whichever field it is (conformance: sep-2575-http-server-meta-invalid-400).
    meta = {"io.modelcontextprotocol/clientCapabilities": {}}
    with http_endpoint() as port:
        conn = connection(port)
        status, _, body = exchange(conn, request(1, "server/discover", {"_meta": meta}), {"Mcp-Method": "server/discover"})
        assert (status, json.loads(body)) == (400, error_response(
            1, -32602, "_meta must carry io.modelcontextprotocol/protocolVersion"))
        conn.close()


def test_a_stateless_notification_needs_no_mcp_method_header():
    # The spec defines no headers for a notification: notifications/cancelled without Mcp-Method is accepted.
    cancelled = notification("notifications/cancelled", {"requestId": 9, "_meta": META})
    with http_endpoint() as port:
        conn = connection(port)
        status, _, body = exchange(conn, cancelled, {"MCP-Protocol-Version": "2026-07-28"})
        assert (status, body) == (202, b"")
        conn.close()


def test_a_stateless_tool_result_says_is_error_false():
    # Course 004's transcript shows it, and its hand-written client reads r["isError"].
    server = mcp_full.MCPServer("honest")
    server.add_tool("add", lambda x, y: x + y, "Add.", {"type": "object", "properties": {}})
    result = server.handle(request(1, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 2}, "_meta": META}))
    assert result == response(1, {"content": [{"type": "text", "text": "3"}], "resultType": "complete",
                                  "isError": False, "_meta": {"io.modelcontextprotocol/serverInfo":
                                                              {"name": "honest", "version": "0.1.0"}}})


# ---- resumption: a stream cut short mid-call (spec 2025-11-25, basic/transports, "Resumability and Redelivery") ----

def resuming_client(port: int, **options) -> MCPClient:
    """An MCPClient over HTTP to port, in the handshake era (the one with sessions, so with resumable streams)."""
    client = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT), **options)
    client.connect("handshake")
    return client


def test_a_stream_cut_mid_call_is_resumed_and_each_event_arrives_once():
    # The server closes the POST's connection after progress 1; the client waits the retry, GETs with
    # Last-Event-ID, and gets progress 2 and the answer, replayed, none twice.
    progress = []
    with http_endpoint(cutting_server()) as port:
        client = resuming_client(port, on_progress=lambda params: progress.append(params["progress"]))
        result = client.call_tool("cut_short", progress=True)
        client.close()
    assert (result["content"], progress) == ([{"type": "text", "text": "whole"}], [1, 2])


def test_a_question_sent_after_the_cut_is_answered_on_the_resumed_stream():
    # Cut before any event (a priming event gives the id), then the server asks: the question and the answer
    # after it travel on the GET that resumed the stream.
    with http_endpoint(cutting_server()) as port:
        client = resuming_client(port, on_elicit=lambda question: {"action": "accept", "content": {"value": "Ada"}})
        result = client.call_tool("cut_then_ask")
        client.close()
    assert result["content"] == [{"type": "text", "text": "hello Ada"}]


def test_a_last_event_id_of_no_kept_stream_is_400_and_a_get_without_event_stream_is_406():
    # A reconnection the server cannot serve whole is refused, saying why; a GET is only ever an event stream.
    with http_endpoint() as port:
        conn = connection(port)
        session = open_session(conn)
        status, _, body = exchange(conn, verb="GET", headers={"Mcp-Session-Id": session, "Last-Event-ID": "nothing.3",
                                                              "Accept": "text/event-stream"})
        assert (status, json.loads(body)["error"]["message"]) == (
            400, "Last-Event-ID 'nothing.3' names no stream of this session kept for replay")
        conn = connection(port)
        status, _, body = exchange(conn, verb="GET", headers={"Mcp-Session-Id": session, "Accept": "application/json"})
        assert (status, json.loads(body)["error"]["message"]) == (406, "a GET opens an event stream: accept text/event-stream")
        conn.close()


class Recording:
    """A connection's stand-in for HttpStream.attach: it keeps what is written."""

    def __init__(self):
        self.written = []

    def start_events(self):
        self.written.append(b"(head)")

    def write_chunk(self, data: bytes):
        self.written.append(data)


def logged_stream(log: mcp_http.EventLog, count: int) -> mcp_http.HttpStream:
    """A session's stream, detached, that has sent count progress notifications."""
    stream = mcp_http.HttpStream(None, True, log=log, session_id="s")
    for n in range(count):
        stream.send(notification("notifications/progress", {"progressToken": 1, "progress": n}))
    return stream


EVENT_BYTES = len(logged_stream(mcp_http.EventLog(), 1).kept[0][1])  # one progress event, its id and framing


def test_a_stream_keeps_at_most_its_byte_bound_and_refuses_to_resume_past_what_it_forgot(monkeypatch):
    # REPLAY_STREAM_BYTES: the oldest events go first; resuming after one forgotten would skip messages, so it is refused.
    monkeypatch.setattr(mcp_http, "REPLAY_STREAM_BYTES", EVENT_BYTES * 5 // 2)  # room for two events
    log = mcp_http.EventLog()
    stream = logged_stream(log, 5)
    # the log counts the entries of all five (the three forgotten leave it by age or REPLAY_BYTES), the bytes of two
    kept = stream.kept_bytes + 5 * mcp_http.EVENT_ENTRY_BYTES
    assert ([number for number, _ in stream.kept], log.bytes) == ([4, 5], kept)
    assert log.find("s", f"{stream.key}.2") == (stream, 2)
    assert stream.attach(Recording(), 2) == (f"the events after {stream.key}.2 are no longer kept: a stream's "
                                             f"events are kept 60 s and {EVENT_BYTES * 5 // 2} bytes")
    handler = Recording()
    assert stream.attach(handler, 3) is None
    assert handler.written == [b"(head)"] + [event for _, event in stream.kept]


def test_the_server_keeps_at_most_its_byte_bound_across_streams_the_oldest_forgotten_first(monkeypatch):
    # REPLAY_BYTES holds across every stream: the first stream's oldest events go before the second's.
    kept_event = EVENT_BYTES + mcp_http.EVENT_ENTRY_BYTES  # an event counts its entries with its bytes
    monkeypatch.setattr(mcp_http, "REPLAY_BYTES", kept_event * 9 // 2)  # room for four events
    log = mcp_http.EventLog()
    first, second = logged_stream(log, 3), logged_stream(log, 3)
    assert ([n for n, _ in first.kept], [n for n, _ in second.kept]) == ([3], [1, 2, 3])
    assert log.bytes == first.kept_bytes + second.kept_bytes + 4 * mcp_http.EVENT_ENTRY_BYTES <= kept_event * 9 // 2


def test_an_event_older_than_replay_s_is_forgotten_and_so_is_its_finished_stream(monkeypatch):
    # REPLAY_S: an event expires; a stream whose response is out and whose events expired is forgotten whole.
    monkeypatch.setattr(mcp_http, "REPLAY_S", -1)  # every event is older than that at once
    log = mcp_http.EventLog()
    stream = logged_stream(log, 2)
    stream.send(response(7, {}))  # its response: the stream is done
    assert (log.find("s", f"{stream.key}.1"), log.bytes, log.streams) == ((None, 0), 0, {})


def test_another_sessions_stream_is_not_found():
    # A Last-Event-ID names a stream of the GET's own session, or none: no client reads another's.
    log = mcp_http.EventLog()
    stream = logged_stream(log, 1)
    assert (log.find("other", f"{stream.key}.1"), log.find("s", f"{stream.key}.1")) == ((None, 0), (stream, 1))


# ---- the standing GET stream (spec 2025-11-25, basic/transports, "Listening for Messages from the Server") ----

def test_a_list_change_made_by_another_session_reaches_an_idle_client_on_its_standing_stream():
    # The catalog is shared: the idle session hears of the change at once, on the GET it opened after the handshake.
    with http_endpoint(server_demo.make_server()) as port:  # one catalog, a session a client
        changer, idle = resuming_client(port), resuming_client(port)
        changer.call_tool("enable_subtract")
        assert idle.transport.arrived.get(timeout=TIMEOUT) == notification("notifications/tools/list_changed")
        changer.close()
        idle.close()


def test_what_waited_for_a_get_stream_comes_as_soon_as_it_opens():
    # A change made while a session had no GET stream waits in its outbox: the GET, once open, brings it at once,
    # not with the session's next request.
    with http_endpoint(server_demo.make_server()) as port:
        idle = connection(port)
        session = open_session(idle)
        changer = resuming_client(port)
        changer.call_tool("enable_subtract")
        idle.request("GET", "/mcp", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        stream = idle.getresponse()
        lines = iter(stream.readline, b"")
        assert json.loads(next(line for line in lines if line.startswith(b"data: "))[len(b"data: "):]) == notification(
            "notifications/tools/list_changed")
        changer.close()
        idle.close()


def test_a_standing_stream_that_gave_way_to_a_call_is_resumed_and_misses_nothing(monkeypatch):
    # Issue 42, row 6: past MAX_LONG, streams give way to calls. The standing stream is closed with an id and a retry;
    # a change made while it is away waits in its session's outbox, and the client, resuming, gets it.
    monkeypatch.setattr(mcp_http, "MAX_LONG", 1)
    monkeypatch.setattr(mcp_http, "LONG_S", 0.1)
    server, release = server_demo.make_server([*server_demo.DEFAULT_ALLOW, "hold"]), threading.Event()

    @server.tool()
    def hold() -> str:
        """Hold the call until released."""
        release.wait(TIMEOUT)
        return "released"
    httpd = mcp_http.http_server(server, port=0)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    port, answers = httpd.server_address[1], []
    try:
        idle, caller = resuming_client(port), resuming_client(port)
        standing = httpd.sessions[idle.transport.session_id].standing
        wait_until(lambda: standing.handler is not None, "the idle client's standing stream")
        calling = threading.Thread(target=lambda: answers.append(caller.call_tool("hold")))
        calling.start()
        wait_until(lambda: standing.handler is None, "the standing stream to give way to the call")
        server.add_tool("late", lambda: "late", "A tool added while the stream is away.", notify=True)
        release.set()
        calling.join(TIMEOUT)
        assert idle.transport.arrived.get(timeout=TIMEOUT) == notification("notifications/tools/list_changed")
        idle.close()
        caller.close()
    finally:
        release.set()
        httpd.shutdown()
        httpd.server_close()
    assert answers == [text_result("released")]


def test_a_get_stream_another_get_takes_over_ends_whole_and_its_connection_goes_on():
    # A session has one standing stream: a second GET takes it over, and the first's body ends, whole, so that its
    # connection can carry the session's next request.
    with http_endpoint(server_demo.make_server()) as port:
        first, second = connection(port), connection(port)
        session = open_session(first)
        first.request("GET", "/mcp", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        taken = first.getresponse()
        second.request("GET", "/mcp", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        assert (taken.status, second.getresponse().status, taken.read()) == (200, 200, b"")
        status, _, body = exchange(first, request(2, "ping"), {"Mcp-Session-Id": session})
        assert (status, json.loads(body)) == (200, response(2, {}))
        first.close()
        second.close()


def test_a_standing_stream_quiet_past_the_clients_timeout_still_carries_a_change(monkeypatch):
    # The timeout bounds a response, not the standing stream: one quiet (keep-alives aside) for longer than the
    # timeout is still read, and hears the change another session makes (it was dropped at the timeout).
    monkeypatch.setattr(mcp_http, "KEEPALIVE_S", 0.2)  # each read of the stream hears something within the timeout
    with http_endpoint(server_demo.make_server()) as port:
        changer = resuming_client(port)
        idle = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=2))
        idle.connect("handshake")
        time.sleep(2.5)
        changer.call_tool("enable_subtract")
        assert idle.transport.arrived.get(timeout=TIMEOUT) == notification("notifications/tools/list_changed")
        changer.close()
        idle.close()


def test_a_question_the_server_sends_outside_any_request_is_answered_from_the_standing_stream():
    # A request of the server's own, sent while no request is in flight, goes out on the standing stream; the
    # client's callback answers it there, and the answer reaches the server by POST.
    sessions = []

    def factory():
        sessions.append(MCPServer("asking"))
        return sessions[-1]
    with http_endpoint(factory) as port:
        client = resuming_client(port, on_elicit=lambda question: {"action": "accept", "content": {"value": "Bo"}})
        session = sessions[-1]  # (the first serves the stateless requests)
        id, slot = session._expect_response()
        session.send(request(id, "elicitation/create", {"message": "Name?", "requestedSchema": NAME_SCHEMA}))
        assert slot.get(timeout=TIMEOUT) == response(id, {"action": "accept", "content": {"value": "Bo"}})
        client.close()


def test_a_client_whose_session_was_forgotten_initializes_again_and_gets_its_answer():
    # Row 3 (issue 42): after a 404 of its session (forgotten, or ended), MCPClient never initialized again: every
    # request failed. A client receiving 404 for a request with Mcp-Session-Id MUST start a new session with a new
    # initialize, without a session id (spec 2025-11-25, basic/transports, "Session Management"); then the request goes again.
    sent = []
    with http_endpoint() as port:
        client = resuming_client(port)
        client.transport.trace = lambda direction, message: sent.append(message.get("method")) if direction == "→" else None
        first = client.transport.session_id
        status, _, _ = exchange(connection(port), verb="DELETE", headers={"Mcp-Session-Id": first})
        result = client.call_tool("add", {"x": 1, "y": 2})
        again = client.transport.session_id
        client.close()
    assert (status, result["content"], again not in (None, first)) == (200, [{"type": "text", "text": "3"}], True)
    assert sent == ["tools/call", "initialize", "notifications/initialized", "tools/call"]


def test_the_lab_offers_no_standing_stream_and_its_client_works_without_one():
    # The lab's server sends nothing outside a request: its sessions answer GET 405, and the client goes on.
    with http_endpoint(lambda: mcp_min.MCPServer("lab", "0")) as port:
        conn = connection(port)
        session = open_session(conn)
        status, _, body = exchange(conn, verb="GET", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        assert (status, json.loads(body)["error"]["message"]) == (
            405, "the lab's server sends nothing outside a request: no standing stream")
        client = resuming_client(port)
        assert (client.transport.standing_connection, client.request("ping")) == (None, {})
        client.close()


def test_get_streams_past_max_get_streams_are_503_and_the_session_works_without_one(monkeypatch):
    # Each GET stream holds a connection as long as it lasts: they may not crowd out the POSTs.
    monkeypatch.setattr(mcp_http, "MAX_GET_STREAMS", 1)
    with http_endpoint() as port:
        first, second = resuming_client(port), resuming_client(port)
        conn = connection(port)
        session = open_session(conn)
        status, _, body = exchange(conn, verb="GET", headers={"Mcp-Session-Id": session, "Accept": "text/event-stream"})
        assert (status, json.loads(body)["error"]["message"]) == (
            503, "1 GET streams are open already: the session works without one")
        assert (first.transport.standing_connection is not None, second.transport.standing_connection) == (True, None)
        assert second.call_tool("add", {"x": 1, "y": 2})["content"] == [{"type": "text", "text": "3"}]
        first.close()
        second.close()


def test_a_get_stream_whose_client_goes_gives_its_place_to_the_next(monkeypatch):
    # The server sees the client close a GET stream and ends it: its connection, and its place among the
    # MAX_GET_STREAMS, are free again for the next GET, not held until the session ends.
    monkeypatch.setattr(mcp_http, "MAX_GET_STREAMS", 1)
    with http_endpoint() as port:
        first, second = connection(port), connection(port)
        first_session, second_session = open_session(first), open_session(second)
        first.request("GET", "/mcp", headers={"Mcp-Session-Id": first_session, "Accept": "text/event-stream"})
        assert first.getresponse().status == 200  # the stream is open: its head is read, its body never ends
        first.close()

        def second_opens() -> bool:
            second.request("GET", "/mcp", headers={"Mcp-Session-Id": second_session, "Accept": "text/event-stream"})
            reply = second.getresponse()
            if reply.status == 503:  # not yet: the refusal closes the connection, and the next GET opens another
                reply.read()
            return reply.status == 200
        wait_until(second_opens, "the second session's GET stream")
        second.close()


def test_the_client_waits_the_retry_it_was_told_before_it_reconnects_and_then_gets_its_answer(monkeypatch):
    # A server that ends the POST's stream after a priming event (an id, retry: 200, no data), then answers on the GET.
    # Untold, the client would wait RETRY_CAP_S (10 s, RETRY_MS being longer here): past its timeout, so it would give up.
    monkeypatch.setattr(mcp_http, "RETRY_MS", 60_000)
    primed = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
              + chunked(b"id: p.1\nretry: 200\ndata: \n\n"))
    resumed = event_stream_answer(b"id: p.2\nevent: message\ndata: " + json.dumps(pong(1)).encode() + b"\n\n")
    with scripted_http(primed, resumed) as (port, opened):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=5)
        started = time.monotonic()
        assert transport.send(request(1, "ping")) == pong(1)
        assert (time.monotonic() - started >= 0.2, len(opened)) == (True, 2)


PRIMED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
          + chunked(b"id: p.1\nretry: 50\ndata: \n\n"))  # a priming event, then the connection's end: resume after p.1
BUSY = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        b"Connection: close\r\n\r\n{}")


def test_a_resume_refused_503_is_tried_again_after_the_retry_and_gets_the_answer():
    # Row 2 (issue 42): a busy server's 503 to the resume was a ConnectionError, and the answer lost; the stream is
    # still there, so the client waits the retry and tries again, as one more of its MAX_RESUMES reconnections.
    resumed = event_stream_answer(b"id: p.2\nevent: message\ndata: " + json.dumps(pong(1)).encode() + b"\n\n")
    with scripted_http(PRIMED, BUSY, BUSY, resumed) as (port, opened):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        assert (transport.send(request(1, "ping")), len(opened)) == (pong(1), 4)



def ended_after(event_id: bytes) -> bytes:
    """A resumed stream that gives the event event_id (no message) and ends, asking for a reconnection."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            + chunked(b"id: " + event_id + b"\nretry: 1\ndata: \n\n"))


def test_a_stream_that_goes_on_after_each_end_is_resumed_however_often_it_ends():
    # Row 7 (issue 42): every reconnection in a stream's life counted against MAX_RESUMES (20), so one the server ends
    # from time to time was given up after 21 ends. Now only reconnections in a row that bring nothing new count.
    answered = event_stream_answer(b"id: p.30\nevent: message\ndata: " + json.dumps(pong(1)).encode() + b"\n\n")
    ends = [ended_after(b"p.%d" % number) for number in range(2, 30)]  # 28 reconnections, each bringing an event
    with scripted_http(PRIMED, *ends, answered) as (port, opened):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        assert (transport.send(request(1, "ping")), len(opened)) == (pong(1), 30)


def test_a_stream_that_brings_nothing_new_is_given_up_after_max_resumes_and_no_more_gets_are_sent(monkeypatch):
    # The bound in a row still holds; and the client sends no GET past it that it would never read (before: one more).
    monkeypatch.setattr(mcp_http, "MAX_RESUMES", 3)
    with scripted_http(PRIMED, *[ended_after(b"p.1")] * 3) as (port, opened):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(ConnectionError) as raised:
            transport.send(request(1, "ping"))
    assert (str(raised.value), len(opened)) == ("the event stream ended 4 times in a row, bringing nothing new", 4)


def test_an_empty_event_id_leaves_nothing_to_resume_and_the_stream_is_over():
    # "id:" with no value resets the last event id (WHATWG, server-sent events): the stream, though it asked for a
    # retry, names no event a GET could resume after, so it is over (a GET would wait for an answer that never comes).
    reset = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
             + chunked(b"id: r.1\nretry: 200\ndata: \n\nid:\n\n"))
    with scripted_http(reset) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(ConnectionError, match="HTTP 200: the body held no response to ping"):
            transport.send(request(1, "ping"))


def test_a_stream_that_ends_without_a_retry_or_an_id_is_over_and_says_so():
    # No retry field: the server ended the stream, not just its connection (a cancelled request's, say).
    ended = event_stream_answer(b"id: q.1\nevent: message\ndata: " + json.dumps(notification("notifications/message", {
        "level": "info", "data": "hi"})).encode() + b"\n\n")
    with scripted_http(ended) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(ConnectionError, match="HTTP 200: the body held no response to ping"):
            transport.send(request(1, "ping"))


@pytest.mark.parametrize("body, problem", [
    (b"event: message\ndata: " + b"x" * 2000 + b"\n\n", "a line of the event stream is over 1000 bytes"),
    (b"event: message\n" + b"data: xxxxxxxxxx\n" * 150 + b"\n", "an event of the stream is over 1000 bytes")])
def test_an_event_over_the_message_limit_is_a_connection_error_that_says_so(monkeypatch, body, problem):
    # A server's line (or event) without end may not fill the client's memory: past the largest message it is refused.
    monkeypatch.setattr(mcp_http, "MAX_MESSAGE_BYTES", 1000)
    with scripted_http(event_stream_answer(body)) as (port, _):
        transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        with pytest.raises(ConnectionError, match=problem):
            transport.send(request(1, "ping"))


def test_the_conformance_servers_reconnection_fixture_answers_a_client_that_resumes():
    # tools/conformance_server.py's test_reconnection closes its stream's connection before it answers.
    import conformance_server
    with http_endpoint(conformance_server.server) as port:
        client = resuming_client(port)
        result = client.call_tool("test_reconnection")
        client.close()
    assert result["content"][0]["text"].startswith("Reconnection test completed successfully.")


# ---- the fixtures the suite calls beside its checks (tools/conformance_server.py) ----

def greet_result(name: str) -> dict:
    """What greet answers a 2026-07-28 call for name: one text block, resultType complete, no taskId."""
    return {"content": [{"type": "text", "text": f"Hello, {name}!"}], "resultType": "complete", "isError": False,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp_min-conformance", "version": "0.1.0"}}}


# (params of tools/call, a header the suite sets or changes, HTTP status, the JSON-RPC answer's result or error)
GREETINGS = [
    ({"name": "greet", "arguments": {"name": "World"}}, {}, 200, greet_result("World")),
    ({"name": "greet", "arguments": {"name": "sep-2243"}}, {"Mcp-Method": "tools/call"}, 200, greet_result("sep-2243")),
    # A v1 client's task hint on a tool that has no task is ignored: the plain result, no task (tasks extension).
    ({"name": "greet", "arguments": {"name": "legacy-hint"}, "task": {"ttl": 60000, "pollInterval": 100}}, {}, 200,
     greet_result("legacy-hint")),
    ({"name": "greet", "arguments": {"name": "header-mismatch"}}, {"Mcp-Method": "tasks/get"}, 400,
     {"code": -32020, "message": "the Mcp-Method header does not match the body"}),
]


@pytest.mark.parametrize("params, header, status, answer", GREETINGS,
                         ids=["plain", "mcp-method", "legacy task", "mismatch"])
def test_the_conformance_servers_greet_answers_as_the_tasks_scenarios_check(params, header, status, answer):
    import conformance_server
    message, headers = stateless(1, "tools/call", params)
    with http_endpoint(conformance_server.server) as port:
        conn = connection(port)
        got_status, _, body = exchange(conn, message, {**headers, **header})
        conn.close()
    expected = response(1, answer) if status == 200 else error_response(1, answer["code"], answer["message"])
    assert (got_status, json.loads(body)) == (status, expected)


def listening(port: int, **notifications) -> mcp_http.HttpTransport:
    """An HttpTransport with a subscriptions/listen stream open for the notifications named, acknowledged."""
    transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
    listen = request("listen", "subscriptions/listen", {"notifications": notifications, "_meta": META})
    assert transport.listen(listen) == notification("notifications/subscriptions/acknowledged", {
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen"}, "notifications": notifications})
    return transport


def test_the_conformance_servers_triggers_reach_only_the_listen_streams_that_asked():
    # server-stateless's checks: a trigger's list_changed reaches a stream that asked for it, tagged with its
    # subscription id, and never one filtered to the other list. A prompt change, a tool change, a prompt change:
    # each stream's first notifications are in that order, so one that leaked would arrive first.
    import conformance_server
    tagged = {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen"}}
    with http_endpoint(conformance_server.server) as port:
        tools, prompts = listening(port, toolsListChanged=True), listening(port, promptsListChanged=True)
        caller = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        for id, trigger in enumerate(["prompt", "tool", "prompt"]):
            call = request(id, "tools/call", {"name": f"test_trigger_{trigger}_change", "arguments": {}, "_meta": META})
            assert caller.send(call)["result"]["isError"] is False
        heard = [tools.arrived.get(timeout=TIMEOUT)] + [prompts.arrived.get(timeout=TIMEOUT) for _ in range(2)]
        for transport in (tools, prompts, caller):
            transport.close()
    assert heard == [notification("notifications/tools/list_changed", tagged),
                     notification("notifications/prompts/list_changed", tagged),
                     notification("notifications/prompts/list_changed", tagged)]


@pytest.mark.parametrize("trigger, listed, changed", [("test_trigger_tool_change", "tools", "test_changed_tool"),
                                                      ("test_trigger_prompt_change", "prompts", "test_changed_prompt")],
                         ids=["tools", "prompts"])
def test_each_conformance_trigger_changes_its_list_so_list_changed_is_no_false_alarm(trigger, listed, changed):
    # The trigger offers one entry anew, its description counting the changes: the lists either side of a second
    # call name the same entries, and differ in that one.
    import conformance_server
    server = conformance_server.server
    call = request(1, "tools/call", {"name": trigger, "arguments": {}, "_meta": META})
    server.handle(call)
    before = server.handle(request(2, f"{listed}/list", {"_meta": META}))["result"][listed]
    server.handle(call)
    after = server.handle(request(3, f"{listed}/list", {"_meta": META}))["result"][listed]
    assert [entry["name"] for entry in after] == [entry["name"] for entry in before]
    assert [entry["name"] for entry in after if entry not in before] == [changed]


# A stdio server that answers one ping twice: first with a response over the line limit, then with one of 100 kB,
# which the client reads in two reads at least (it reads 64 KiB at a time), so it must join the line's pieces.
OVER_THE_LIMIT_SERVER = r"""
import json, sys
ping = json.loads(sys.stdin.readline())
out = sys.stdout.buffer
out.write(json.dumps({"jsonrpc": "2.0", "id": ping["id"], "result": {"pad": "x" * 300_000}}).encode() + b"\n")
out.write(json.dumps({"jsonrpc": "2.0", "id": ping["id"], "result": {"pad": "y" * 100_000}}).encode() + b"\n")
out.flush()
sys.stdin.read()
"""


def test_the_stdio_client_drops_a_line_over_the_limit_whole_and_joins_a_line_read_in_pieces(monkeypatch, tmp_path):
    import sys
    import mcp_stdio
    monkeypatch.setattr(mcp_stdio, "MAX_MESSAGE_BYTES", 200_000)  # the first response is 300 kB: over it
    script = tmp_path / "server.py"
    script.write_text(OVER_THE_LIMIT_SERVER)
    transport = mcp_stdio.StdioTransport([sys.executable, str(script)], timeout=TIMEOUT)
    try:
        assert transport.send(request(1, "ping")) == response(1, {"pad": "y" * 100_000})
    finally:
        transport.close()
