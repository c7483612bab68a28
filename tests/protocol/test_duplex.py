"""Both directions on one wire: the server asks back, keeps reading while a tool runs, hears cancellations,
and streams list changes on subscriptions/listen; over memory, stdio and Streamable HTTP.

Nothing here measures time: where a test needs "while the tool runs", it checks the order in which
messages arrived (the ping's response before the tool's), or a tool waits for an event the test sets.
"""

import contextlib
import http.client
import json
import os
import threading
import time

import pytest

import mcp_full
import mcp_http
import mcp_stdio
from mcp_full import Context, MCPClient, MCPServer, RPCError, notification, request, response
from harness import DEMO, KINDS, LinePipe, TIMEOUT, connected, http_endpoint, line, stateless, text_result
from sample_servers import META, asking_server, confirming_server, course_server, holding_server, ready_server, subtract

INIT = {"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "raw", "version": "0"}}
ANSWERS = {"First?": "x", "Second?": "y", "Name?": "Ada", "Your name?": "Bo", "Password?": "open sesame"}


def answering_client_options() -> dict:
    """MCPClient callbacks that answer the asking server's questions."""
    return {"on_elicit": lambda q: {"action": "accept", "content": {"value": ANSWERS[q["params"]["message"]]}},
            "on_sample": lambda q: {"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}},
            "on_roots": lambda q: {"roots": [{"uri": "file:///a"}]}}


# ---- one tool body, every era: the handshake era asks with real requests ----

@pytest.mark.parametrize("kind", KINDS)
def test_the_handshake_era_asks_with_server_requests_on_every_transport(kind):
    # The same asking functions as in 2026-07-28, now in a 2025 session: each question is a request of the
    # server's own, answered by the client's callback, and the call completes in one round trip.
    with connected(kind, "asking", **answering_client_options()) as (client, wire):
        client.initialize()
        assert client.call_tool("two_rounds")["content"] == text_result("xy")["content"]
        assert client.call_tool("all_at_once")["content"] == text_result("Ada|hi|1")["content"]
        assert client.call_tool("haiku", {"topic": "frogs"})["content"] == text_result("hi")["content"]
        assert client.get_prompt("greeting")["messages"][0]["content"]["text"] == "Hello, Bo"
        assert client.read_resource("secret://vault")["contents"][0]["text"] == "gold"
        asked = [m for d, m in wire if d == "←" and "method" in m and "id" in m]
        answered = [m for d, m in wire if d == "→" and "method" not in m]
        assert [m["method"] for m in asked] == ["elicitation/create", "elicitation/create", "elicitation/create",
                                                 "sampling/createMessage", "roots/list", "sampling/createMessage",
                                                 "elicitation/create", "elicitation/create"]
        assert [m["id"] for m in answered] == [m["id"] for m in asked]  # each question answered, by its own id
        calls = [m for d, m in wire if d == "→" and m.get("method") == "tools/call"]
        assert len(calls) == 3  # no retries: the handshake era asks within the call


@pytest.mark.parametrize("kind", KINDS)
def test_the_handshake_era_refuses_to_ask_a_client_without_the_capability(kind):
    # A 2025 client that declared nothing is never sent a question: -32021 names what is missing.
    with connected(kind, "asking") as (client, wire):
        client.initialize()
        with pytest.raises(RPCError) as refused:
            client.call_tool("folders")
        assert (refused.value.code, refused.value.data) == (-32021, {"requiredCapabilities": {"roots": {}}})
        assert not [m for d, m in wire if d == "←" and "method" in m and "id" in m]


def test_a_client_without_a_callback_answers_minus_32601():
    # A server request the client has no callback for gets -32601 back, and the tool reports it.
    server = asking_server([])
    client = MCPClient(mcp_full.InMemoryTransport(server))
    client.capabilities = {"roots": {}}  # declared, yet no on_roots: a client bug, answered cleanly
    client.initialize()
    result = client.call_tool("folders")
    assert result["isError"] is True
    assert "-32601" in result["content"][0]["text"] and "roots/list" in result["content"][0]["text"]


def test_a_client_may_say_its_roots_changed():
    # notifications/roots/list_changed is a notification: no response, and the session goes on.
    server = asking_server([])
    client = MCPClient(mcp_full.InMemoryTransport(server), on_roots=lambda q: {"roots": []})
    client.initialize()
    client.notify("notifications/roots/list_changed")
    assert client.call_tool("folders")["content"] == text_result("[]")["content"]


# ---- the server keeps listening while a tool runs ----

def slow_call(id: int, n: int = 30, progress: bool = True) -> dict:
    """count_slowly n: a tenth of a second a step."""
    meta = {"progressToken": f"p{id}"} if progress else {}
    return request(id, "tools/call", {"name": "count_slowly", "arguments": {"n": n}, "_meta": meta})


def handshake_lines() -> bytes:
    """initialize and notifications/initialized as stdio lines."""
    return line(request(1, "initialize", INIT)) + line(notification("notifications/initialized"))


def read_until(pipe: LinePipe, done) -> list:
    """Messages read from pipe up to and including the first for which done(message) is true."""
    seen = []
    while not seen or not done(seen[-1]):
        seen.append(json.loads(pipe.read_line()))
    return seen


HOLD = request(2, "tools/call", {"name": "hold", "_meta": {"progressToken": "p"}})


def progress_step(step: int) -> dict:
    """hold's progress notification for step (1 or 2)."""
    return notification("notifications/progress", {"progressToken": "p", "progress": step, "total": 2})


@contextlib.contextmanager
def served_stdio(server: MCPServer):
    """serve_stdio(server) on a thread of this process, over two pipes; yields a LinePipe to it. At the end its
    input is closed and the server must return."""
    to_server, from_server = os.pipe(), os.pipe()
    with open(to_server[0], "rb", buffering=0) as stdin, open(from_server[1], "wb", buffering=0) as stdout:
        serving = threading.Thread(target=mcp_stdio.serve_stdio, args=(server, stdin, stdout), daemon=True)
        serving.start()
        pipe = LinePipe(files=(open(to_server[1], "wb", buffering=0), open(from_server[0], "rb", buffering=0)))
        try:
            yield pipe
        finally:
            pipe.process.stdin.close()
            serving.join(TIMEOUT)
            pipe.process.stdout.close()
        assert not serving.is_alive()  # end of input ended it


def test_ping_is_answered_while_a_slow_tool_runs_over_stdio():
    # hold waits until the test releases it, which the test does only once the pong has come: the pong
    # arrives while the tool still runs, and the tool then goes on to its end.
    released = threading.Event()
    with served_stdio(holding_server(released)) as pipe:
        pipe.write(handshake_lines())
        assert json.loads(pipe.read_line())["id"] == 1
        pipe.write(line(HOLD))
        assert json.loads(pipe.read_line()) == progress_step(1)  # hold is running now
        pipe.write(line(request(3, "ping")))
        assert json.loads(pipe.read_line()) == response(3, {})
        released.set()
        assert read_until(pipe, lambda m: "id" in m) == [progress_step(2), response(2, text_result("released"))]


def test_ping_is_answered_while_a_slow_tool_runs_over_http():
    # Two connections of one session: the ping's POST is answered while the first POST's tool still waits to
    # be released, which the helper does only after the pong; so the pong falls between the two progress steps.
    released, running = threading.Event(), threading.Event()
    with http_endpoint(lambda: holding_server(released)) as port:
        caller = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        seen = []

        def on_progress(params):
            seen.append(("progress", params["progress"]))
            running.set()
        client = MCPClient(caller, on_progress=on_progress)
        client.initialize()
        pinger = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        pinger.session_id, pinger.protocol_version = caller.session_id, caller.protocol_version

        def ping_once_hold_runs():
            running.wait(TIMEOUT)
            seen.append(("pong", pinger.send(request(99, "ping"))))
            released.set()
        helper = threading.Thread(target=ping_once_hold_runs)
        helper.start()
        result = client.call_tool("hold", progress=True)
        helper.join(TIMEOUT)
        assert result["content"] == text_result("released")["content"]
        assert seen == [("progress", 1), ("pong", response(99, {})), ("progress", 2)]
        pinger.connection.close()
        caller.session_id = None
        caller.close()


def test_ping_is_answered_while_a_slow_tool_runs_in_memory():
    # handle() may be called from two threads at once: a ping does not wait for the running tool, which
    # the test releases only after the pong.
    released = threading.Event()
    server = holding_server(released)
    client = MCPClient(mcp_full.InMemoryTransport(server))
    client.initialize()
    replies, started = [], threading.Event()
    server.on_send = started.set  # hold's first progress: it is running
    worker = threading.Thread(target=lambda: replies.append(server.handle(HOLD)))
    worker.start()
    started.wait(TIMEOUT)
    assert server.handle(request(51, "ping")) == response(51, {})
    assert replies == []  # hold is still waiting
    released.set()
    worker.join(TIMEOUT)
    assert replies == [response(2, text_result("released"))]


def test_a_slow_request_that_ends_leaves_the_next_readers_clock_alone():
    # Reader A serves a slow call; B takes over and serves a call that first lets A's call end, then asks the
    # client. A's end must not reset B's clock: B's call is slow too, so a third reader must read the answer.
    server = MCPServer("relay")
    released = threading.Event()

    @server.tool()
    def hold() -> str:
        """Wait until the second call lets this one end."""
        released.wait(TIMEOUT)
        return "held"

    @server.tool()
    def release_then_ask(ctx: Context) -> str:
        """End the first call, then ask the client for a value."""
        released.set()
        return ctx.elicit("value", "First?", {"type": "object"})["content"]["value"]

    with served_stdio(server) as pipe:
        pipe.write(handshake_lines())
        assert json.loads(pipe.read_line())["id"] == 1
        pipe.write(line(request(2, "tools/call", {"name": "hold"})))
        pipe.write(line(request(3, "tools/call", {"name": "release_then_ask"})))
        question = read_until(pipe, lambda m: m.get("method") == "elicitation/create")[-1]
        pipe.write(line(response(question["id"], {"action": "accept", "content": {"value": "x"}})))
        seen = read_until(pipe, lambda m: m.get("id") == 3)
        assert seen[-1] == response(3, text_result("x"))


def test_a_notification_is_handled_before_the_line_after_it_is_read():
    # Only a request may hand the reading on to a new reader: notifications/initialized, however long its
    # handling takes (here 0.2 s, as when its reader is descheduled), opens the gate before the next request
    # is read, and that request is served, not refused -32600.
    class Slow(MCPServer):
        def _notice(self, method, params):
            time.sleep(0.2)  # four times SLOW_S
            super()._notice(method, params)

    with served_stdio(Slow("slow")) as pipe:
        pipe.write(line(request(1, "initialize", INIT)))
        assert json.loads(pipe.read_line())["id"] == 1
        pipe.write(line(notification("notifications/initialized")) + line(request(2, "tools/list")))
        assert json.loads(pipe.read_line()) == response(2, {"tools": []})


# ---- cancellation ----

def test_a_cancelled_call_gets_no_response_and_the_next_call_works_over_stdio():
    # notifications/cancelled reaches the running count_slowly, which stops; no response ever has its id.
    # count_slowly 100 would count for 10 s (TIMEOUT): it ends early only because the cancellation reached it.
    pipe = LinePipe(DEMO)
    try:
        pipe.write(handshake_lines())
        pipe.read_line()
        pipe.write(line(slow_call(2, n=100)))
        seen = read_until(pipe, lambda m: m.get("method") == "notifications/progress")
        pipe.write(line(notification("notifications/cancelled", {"requestId": 2, "reason": "enough"})))
        pipe.write(line(request(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})))
        seen += read_until(pipe, lambda m: m.get("id") == 3)
        assert seen[-1] == response(3, text_result("5"))
    finally:
        pipe.process.stdin.close()
        rest = [json.loads(text) for text in pipe.process.stdout.read().splitlines()]  # the server exits once the tool stops
        pipe.process.wait(TIMEOUT)
    later = [m for m in seen + rest if m.get("id") == 2]
    progress = [m["params"]["progress"] for m in seen + rest if m.get("method") == "notifications/progress"]
    assert later == [] and max(progress) < 100  # no response, and the tool stopped counting early


def test_a_request_that_ended_is_forgotten_so_a_late_cancel_reaches_nothing():
    # notifications/cancelled names a running request; once its response is out, the server keeps nothing of it.
    kept = []
    server = MCPServer("late")

    @server.tool()
    def remember(ctx: Context) -> str:
        """Keep this request's Context."""
        kept.append(ctx)
        return "kept"

    client = MCPClient(mcp_full.InMemoryTransport(server))
    client.initialize()
    client.call_tool("remember")
    client.notify("notifications/cancelled", {"requestId": kept[0].id, "reason": "too late"})
    assert [ctx.cancelled for ctx in kept] == [False] and server._running == {}


def cancelling_server(record: list) -> MCPServer:
    """A server whose tool reports progress until it is cancelled, and records that it noticed."""
    server = MCPServer("cancel")

    @server.tool()
    def spin(ctx: Context) -> str:
        """Report progress until cancelled (at most about 5 s)."""
        for step in range(1, 500):
            if ctx.cancelled:
                record.append(f"cancelled after {step - 1}")
                return "stopped"
            ctx.progress(step)
            time.sleep(0.01)
        record.append("never cancelled")
        return "done"
    return server


def test_closing_the_stream_cancels_a_stateless_call_over_http():
    # 2026-07-28 over HTTP: the client closes the response stream after the first progress event; the tool
    # sees ctx.cancelled, and the server goes on serving the next request.
    record = []
    with http_endpoint(lambda: cancelling_server(record)) as port:
        message, headers = stateless(1, "tools/call", {"name": "spin", "arguments": {}, "_meta": {**META, "progressToken": 1}})
        message["params"]["_meta"] = {**META, "progressToken": 1}
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        conn.request("POST", "/mcp", json.dumps(message), {"Content-Type": "application/json",
                                                           "Accept": "application/json, text/event-stream", **headers})
        reply = conn.getresponse()
        assert reply.headers["Content-Type"] == "text/event-stream"
        assert reply.readline().startswith(b"event: message")  # the first progress event: the tool is running
        conn.sock.shutdown(2)
        conn.close()
        deadline = time.monotonic() + TIMEOUT
        while not record and time.monotonic() < deadline:
            time.sleep(0.02)
        assert record and record[0].startswith("cancelled after")
        client = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp"))
        client.connect()
        assert [tool["name"] for tool in client.list_tools()] == ["spin"]


def test_notifications_cancelled_reaches_a_call_in_an_http_session():
    # 2025 over HTTP: the cancellation is a POST of its own; the call's stream ends without a response.
    record = []
    with http_endpoint(lambda: cancelling_server(record)) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        caller = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        running = threading.Event()
        client = MCPClient(caller, on_progress=lambda params: running.set())
        client.initialize()
        other = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        other.session_id, other.protocol_version = caller.session_id, caller.protocol_version

        def cancel_once_it_runs():
            running.wait(TIMEOUT)  # spin's first progress: the call is running, so the cancellation finds it
            other.send(notification("notifications/cancelled", {"requestId": 2}))
        threading.Thread(target=cancel_once_it_runs).start()
        with pytest.raises(ConnectionError):
            client.call_tool("spin", progress=True)  # the stream ended and held no response
        assert record and record[0].startswith("cancelled after")
        assert client.request("tools/list")["tools"][0]["name"] == "spin"
        other.connection.close()


def test_the_client_cancels_when_its_own_timeout_expires_and_no_response_to_that_call_ever_comes():
    # The timeout cut to 0.3 s for one call (the handshake had the whole TIMEOUT): count_slowly 100 would count
    # for 10 s, so the client sends notifications/cancelled and raises; the next call gets its own response; and
    # everything the server writes until it exits (once the cancelled tool has stopped) holds nothing for id 2.
    wire = []
    transport = mcp_stdio.StdioTransport(DEMO, timeout=TIMEOUT, trace=lambda d, m: wire.append((d, m)))
    client = MCPClient(transport)
    client.initialize()
    transport.timeout = 0.3
    with pytest.raises(TimeoutError):
        client.call_tool("count_slowly", {"n": 100})
    assert wire[-1] == ("→", notification("notifications/cancelled", {"requestId": 2, "reason": "no response in 0.3 s"}))
    transport.timeout = TIMEOUT
    assert client.call_tool("add", {"x": 2, "y": 3}) == text_result("5")
    transport.process.stdin.close()
    rest = [json.loads(text) for text in transport.process.stdout.read().splitlines()]
    assert transport.process.wait(TIMEOUT) == 0
    transport.process.stdout.close()
    assert [m for d, m in wire if d == "←" and m.get("id") == 2] + [m for m in rest if m.get("id") == 2] == []


# ---- progress over HTTP arrives while the tool runs ----

def test_progress_reaches_an_http_client_before_the_tool_finishes():
    # The tool reports progress, then waits until the client's on_progress has seen it: if the stream were
    # written only at the end, the tool would wait in vain and say so.
    heard = threading.Event()
    server = MCPServer("progress")

    @server.tool()
    def wait_to_be_heard(ctx: Context) -> str:
        """Report progress, then wait until the client has heard it."""
        ctx.progress(1, total=2)
        return "heard" if heard.wait(TIMEOUT) else "nobody heard"

    with http_endpoint(lambda: server) as port:
        client = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT),
                           on_progress=lambda params: heard.set())
        client.connect()
        assert client.call_tool("wait_to_be_heard", progress=True)["content"] == text_result("heard")["content"]
        client.close()


# ---- subscriptions/listen (2026-07-28) ----

LISTEN_META = {**META}


def listen_request(id, **notifications) -> dict:
    """A subscriptions/listen request for the given filter."""
    return request(id, "subscriptions/listen", {"notifications": notifications, "_meta": LISTEN_META})


def stateless_call(id, name: str, arguments: dict | None = None, **meta) -> dict:
    """A 2026-07-28 tools/call."""
    return request(id, "tools/call", {"name": name, "arguments": arguments or {}, "_meta": {**META, **meta}})


def test_listen_over_stdio_acknowledges_first_tags_filters_and_ends_gracefully():
    # The acknowledgement comes first, with the filter honoured; only tools changes arrive, tagged with the
    # listen's id; progress never rides the stream; at end of input the stream ends with its response.
    pipe = LinePipe(DEMO)
    try:
        pipe.write(line(listen_request("L1", toolsListChanged=True, promptsListChanged=False, madeUp=True)))
        assert json.loads(pipe.read_line()) == notification("notifications/subscriptions/acknowledged", {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}, "notifications": {"toolsListChanged": True}})
        pipe.write(line(stateless_call(2, "count_slowly", {"n": 2}, progressToken="p")))
        pipe.write(line(stateless_call(3, "enable_subtract")))
        seen = read_until(pipe, lambda m: m.get("id") == 3)
        seen += read_until(pipe, lambda m: m.get("id") == 2) if not any(m.get("id") == 2 for m in seen) else []
    finally:
        pipe.process.stdin.close()
        rest = [json.loads(text) for text in pipe.process.stdout.read().splitlines()]
        assert pipe.process.wait(TIMEOUT) == 0
    tagged = [m for m in seen if "io.modelcontextprotocol/subscriptionId" in (m.get("params") or {}).get("_meta", {})]
    assert tagged == [notification("notifications/tools/list_changed",
                                   {"_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}})]
    assert [m["method"] for m in seen if m.get("method") == "notifications/progress"] == ["notifications/progress"] * 2
    assert rest == [response("L1", {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": "L1"}})]


def test_a_cancelled_listen_stream_ends_without_a_response():
    # notifications/cancelled for the listen's id ends it: no more notifications, and never a response.
    pipe = LinePipe(DEMO)
    try:
        pipe.write(line(listen_request(7, toolsListChanged=True)))
        pipe.read_line()
        pipe.write(line(notification("notifications/cancelled", {"requestId": 7})))
        pipe.write(line(stateless_call(8, "enable_subtract")))
        seen = read_until(pipe, lambda m: m.get("id") == 8)
    finally:
        pipe.process.stdin.close()
        rest = pipe.process.stdout.read()
        pipe.process.wait(TIMEOUT)
    assert [m for m in seen if "method" in m] == [] and rest == b""


def test_listen_delivers_resource_updates_only_for_the_uris_asked():
    # resourceSubscriptions names URIs: resources/updated arrives for those alone.
    server = course_server()
    transport = mcp_full.InMemoryTransport(server)
    ack = transport.listen(listen_request(1, resourceSubscriptions=["file:///readme.txt"]))
    assert ack["params"]["notifications"] == {"resourceSubscriptions": ["file:///readme.txt"]}
    server.resource_updated("file:///readme.txt")
    server.resource_updated("logo://png")
    assert transport.drain() == [notification("notifications/resources/updated", {
        "uri": "file:///readme.txt", "_meta": {"io.modelcontextprotocol/subscriptionId": 1}})]


def test_a_change_made_the_moment_the_acknowledgement_arrives_reaches_the_stream():
    # The stream is listed before its acknowledgement goes out: a change the client makes the moment it hears
    # the acknowledgement (here from its notification hook, before listen() has even returned) is not lost.
    server = course_server()
    transport = mcp_full.InMemoryTransport(server)

    def on_notification(message):
        if message["method"] == "notifications/subscriptions/acknowledged":
            server.add_tool("subtract", subtract, notify=True)
    transport.on_notification = on_notification
    assert transport.listen(listen_request(1, toolsListChanged=True))["params"]["notifications"] == {
        "toolsListChanged": True}
    assert transport.drain() == [notification("notifications/tools/list_changed",
                                              {"_meta": {"io.modelcontextprotocol/subscriptionId": 1}})]


def test_listen_is_a_2026_method():
    # In a handshake session there is no subscriptions/listen: -32601.
    server = ready_server()
    reply = server.handle(request(9, "subscriptions/listen", {"notifications": {"toolsListChanged": True}}))
    assert reply["error"]["code"] == -32601


@pytest.mark.parametrize("kind", KINDS)
def test_a_listening_client_sees_subtract_appear_at_once(kind):
    # MCPClient.listen: enable_subtract's list change arrives on the stream and the cache refreshes
    # without waiting for ttlMs, as in the handshake era.
    with connected(kind) as (client, wire):
        client.connect()
        assert client.era == "stateless"
        assert client.listen(tools=True) == {"toolsListChanged": True}
        client.list_tools()
        client.call_tool("enable_subtract")
        deadline = time.monotonic() + TIMEOUT
        while "subtract" not in [tool["name"] for tool in client.tools_cache] and time.monotonic() < deadline:
            time.sleep(0.02)
            client._pump_notifications()
        assert "subtract" in [tool["name"] for tool in client.tools_cache]
        client.stop_listening()


# ---- many at once on one session: nothing lost, nothing duplicated ----

def test_many_concurrent_calls_and_a_listen_stream_on_one_stdio_server_lose_nothing():
    # 200 calls sent at once beside a listen stream: each id answered exactly once with its own sum.
    pipe = LinePipe(DEMO)
    try:
        pipe.write(line(listen_request("L", toolsListChanged=True)))
        calls = [stateless_call(i, "add", {"x": i, "y": 1}) for i in range(1, 201)] + [stateless_call(201, "enable_subtract")]
        pipe.write(b"".join(line(call) for call in calls))
        seen = [json.loads(pipe.read_line()) for _ in range(1 + 201 + 1)]  # ack, 201 responses, one list change
    finally:
        pipe.process.stdin.close()
        seen += [json.loads(text) for text in pipe.process.stdout.read().splitlines()]
        pipe.process.wait(TIMEOUT)
    answers = {m["id"]: m["result"]["content"][0]["text"] for m in seen if "result" in m and m["id"] != "L"}
    assert answers == {**{i: str(i + 1) for i in range(1, 201)}, 201: "subtract is now available"}
    assert len([m for m in seen if "result" in m]) == 202  # 201 calls and the listen's graceful end
    assert [m["method"] for m in seen if "method" in m] == ["notifications/subscriptions/acknowledged",
                                                            "notifications/tools/list_changed"]


def test_many_concurrent_http_clients_on_one_session_lose_nothing():
    # Eight threads, 25 calls each, all on one handshake session: every response is its own.
    with http_endpoint() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        first = mcp_http.HttpTransport(url, timeout=TIMEOUT)
        MCPClient(first).initialize()
        results, errors = {}, []

        def caller(worker: int):
            transport = mcp_http.HttpTransport(url, timeout=TIMEOUT)
            transport.session_id, transport.protocol_version = first.session_id, first.protocol_version
            try:
                for n in range(25):
                    id = worker * 1000 + n
                    reply = transport.send(request(id, "tools/call", {"name": "add", "arguments": {"x": id, "y": 1}}))
                    results[id] = reply
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(exc)
            finally:
                transport.connection.close()
        threads = [threading.Thread(target=caller, args=(worker,)) for worker in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(TIMEOUT)
        assert errors == []
        assert results == {id: response(id, text_result(str(id + 1))) for id in results} and len(results) == 200
        first.close()


def test_a_transport_with_no_client_behind_it_answers_a_question_with_minus_32601():
    # A bare transport (no MCPClient set its on_request) has nobody to ask: it says so, and the tool hears it.
    server = confirming_server()
    transport = mcp_full.InMemoryTransport(server)
    transport.send(request(1, "initialize", INIT))  # declares elicitation, as a client that then cannot answer
    transport.send(notification("notifications/initialized"))
    reply = transport.send(request(2, "tools/call", {"name": "delete_db"}))
    [text] = [block["text"] for block in reply["result"]["content"]]
    assert reply["result"]["isError"] is True and "-32601" in text and "this client answers no elicitation/create" in text
