"""The client as real as the server: what mcp_min's client does with what real servers send (spec 2025-11-25 and
2026-07-28, basic/transports and basic/versioning), and the small server answers the conformance suite checks.
"""

import json

import pytest

import mcp_full
import mcp_http
from mcp_full import MCPClient, RPCError, error_response, notification, request, response
from test_hostile import chunked, pong, scripted_http
from test_transports import META, TIMEOUT, connection, exchange, http_endpoint


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
