"""The client speaks https: HttpTransport's connections to an https URL are TLS, the server's certificate checked, on
loopback against the project's endpoint behind a small TLS front written here, with certificates that the openssl
command makes for the tests.
"""

import contextlib
import select
import shutil
import socket
import socketserver
import ssl
import subprocess
import threading
import time

import pytest

import mcp_http
import server_demo
from mcp_full import MCPClient, notification, request
from harness import TIMEOUT, http_endpoint
from sample_servers import META, cutting_server


def self_signed(folder, name: str, subject_alt_name: str) -> tuple:
    """A self-signed certificate for subject_alt_name and its key, made by openssl in folder: (cert, key) paths."""
    cert, key = folder / f"{name}.pem", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName={subject_alt_name}"], check=True, capture_output=True, timeout=TIMEOUT)
    return cert, key


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict:
    """Two self-signed certificates: "loopback" names 127.0.0.1; "elsewhere" names another host only."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes these tests' certificates, and it is not installed")
    folder = tmp_path_factory.mktemp("tls")
    return {"loopback": self_signed(folder, "loopback", "IP:127.0.0.1"),
            "elsewhere": self_signed(folder, "elsewhere", "DNS:mcp.example.test")}


def trusting(cert) -> ssl.SSLContext:
    """A client's context that trusts cert as an authority of its own (a private CA), hostnames checked."""
    return ssl.create_default_context(cafile=str(cert))


class TlsFront(socketserver.ThreadingTCPServer):
    """A TLS front on loopback, relaying each connection it accepts (and counts) to a plain HTTP port, one thread a
    connection, which alone reads and writes its TLS socket while the client is not idle."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, backend_port: int, cert, key):
        super().__init__(("127.0.0.1", 0), Relay)
        self.backend_port = backend_port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(str(cert), str(key))
        # A CertificateRequest after the handshake (RFC 8446, 4.6.2), answered with no certificate, is the record
        # without data sent to an idle client here: only to a client whose context offers it (post_handshake_auth).
        self.context.verify_mode, self.context.post_handshake_auth = ssl.CERT_OPTIONAL, True
        self.context.load_verify_locations(str(cert))
        self.accepted, self.relays = 0, []

    def process_request(self, connection, client_address):
        self.accepted += 1
        super().process_request(connection, client_address)

    def ask(self):
        """Send the newest relay's client a post-handshake CertificateRequest, now (the relay is idle)."""
        tls = self.relays[-1]
        tls.verify_client_post_handshake()
        tls.do_handshake()  # sends it now, not with the next write

    def end(self, close_notify: bool):
        """Close the newest relay's connection, as a server closes an idle one: with a close_notify alert, or bare."""
        tls = self.relays[-1]
        if close_notify:
            tls.setblocking(False)  # it is sent at once; the client's own would be waited for
            with contextlib.suppress(ssl.SSLWantReadError):
                tls.unwrap()
        tls.shutdown(socket.SHUT_RDWR)  # (the relay's thread sees the end, and closes both sides)


class Relay(socketserver.BaseRequestHandler):
    """One connection of the front: TLS to the client, plain to the endpoint, bytes both ways until either ends."""

    def handle(self):
        try:
            tls = self.server.context.wrap_socket(self.request, server_side=True)
        except (ssl.SSLError, OSError):
            return  # a client that refused the certificate
        self.server.relays.append(tls)
        with tls, socket.create_connection(("127.0.0.1", self.server.backend_port)) as backend:
            while True:
                ready = [tls] if tls.pending() else select.select([tls, backend], [], [])[0]
                if tls in ready:
                    data = self.receive(tls)
                    if data == b"":
                        return
                    if data:
                        backend.sendall(data)
                if backend in ready:
                    data = backend.recv(65536)
                    if not data:
                        return
                    tls.sendall(data)

    def receive(self, tls: ssl.SSLSocket) -> bytes | None:
        """What the client sent (None: records without data, as its answer to a CertificateRequest; b"": the end)."""
        tls.setblocking(False)
        try:
            return tls.recv(65536)
        except ssl.SSLWantReadError:
            return None
        except (OSError, ValueError):
            return b""  # reset, or closed by end()
        finally:
            with contextlib.suppress(OSError, ValueError):
                tls.setblocking(True)


@contextlib.contextmanager
def tls_front(backend_port: int, cert, key):
    """A TlsFront to backend_port, served in a thread: yields it."""
    front = TlsFront(backend_port, cert, key)
    thread = threading.Thread(target=front.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield front
    finally:
        front.shutdown()
        front.server_close()
        thread.join(TIMEOUT)


@contextlib.contextmanager
def tls_endpoint(cert, key, factory=server_demo.make_server):
    """The project's endpoint behind a TLS front: yields the front."""
    with http_endpoint(factory) as port, tls_front(port, cert, key) as front:
        yield front


def https(front: TlsFront) -> str:
    """The front's URL."""
    return f"https://127.0.0.1:{front.server_address[1]}/mcp"


def trusting_transport(front: TlsFront, certificates: dict, **options) -> mcp_http.HttpTransport:
    """An HttpTransport to the front's https URL whose context trusts the "loopback" certificate."""
    return mcp_http.HttpTransport(https(front), timeout=TIMEOUT, tls=trusting(certificates["loopback"][0]), **options)


def listing(id: int) -> dict:
    """A 2026-07-28 tools/list, which needs no session."""
    return request(id, "tools/list", {"_meta": META})


def answered(replies: list) -> list:
    """The ids of the replies that are results."""
    return [reply["id"] for reply in replies if "result" in reply]


# ---- the URL and the context ----

@pytest.mark.parametrize("url, address", [("https://example.com/mcp", ("example.com", 443)),
                                          ("https://example.com:8443/mcp", ("example.com", 8443)),
                                          ("http://example.com/mcp", ("example.com", 80))])
def test_an_https_url_is_port_443_unless_it_names_one_and_http_stays_80(url, address):
    assert mcp_http.HttpTransport(url).address == address  # (no connection yet: the first request opens it)


def test_an_https_url_gets_the_systems_context_which_checks_the_certificate_and_the_host_and_http_gets_none():
    context = mcp_http.HttpTransport("https://example.com/mcp").tls
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert mcp_http.HttpTransport("http://example.com/mcp").tls is None


@pytest.mark.parametrize("url", ["ftp://example.com/mcp", "ws://example.com/mcp", "example.com/mcp", "/mcp"])
def test_a_url_of_another_scheme_is_a_value_error_naming_the_two_it_may_have(url):
    with pytest.raises(ValueError, match="an MCP endpoint's URL starts http:// or https://"):
        mcp_http.HttpTransport(url)


def test_a_tls_context_for_a_plain_http_url_is_a_value_error_not_plain_text_sent_anyway():
    with pytest.raises(ValueError, match="a TLS context is for an https:// URL, and this one is plain http"):
        mcp_http.HttpTransport("http://example.com/mcp", tls=ssl.create_default_context())


# ---- what the client checks ----

def test_a_self_signed_certificate_is_refused_by_the_default_context_as_a_connection_error_that_says_so(certificates):
    with tls_endpoint(*certificates["loopback"]) as front:
        transport = mcp_http.HttpTransport(https(front), timeout=TIMEOUT)
        with pytest.raises(ConnectionError, match=r"^TLS: the certificate of 127\.0\.0\.1:\d+ failed verification: "
                                                  r"self.signed certificate$"):
            transport.send(listing(1))
        transport.close()


def test_a_trusted_certificate_for_another_host_is_refused(certificates):
    # The context trusts the certificate, but it names mcp.example.test, not the URL's 127.0.0.1.
    with tls_endpoint(*certificates["elsewhere"]) as front:
        transport = mcp_http.HttpTransport(https(front), timeout=TIMEOUT, tls=trusting(certificates["elsewhere"][0]))
        with pytest.raises(ConnectionError, match=r"^TLS: the certificate of 127\.0\.0\.1:\d+ failed verification: "
                                                  r"IP address mismatch, certificate is not valid for '127\.0\.0\.1'"):
            transport.send(listing(1))
        transport.close()


def test_a_server_that_answers_in_plain_http_fails_the_handshake_as_a_connection_error_that_says_so():
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn, contextlib.suppress(OSError):
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")  # to the TLS ClientHello
            conn.recv(65536)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    transport = mcp_http.HttpTransport(f"https://127.0.0.1:{listener.getsockname()[1]}/mcp", timeout=TIMEOUT)
    with pytest.raises(ConnectionError, match=r"^TLS: the handshake with 127\.0\.0\.1:\d+ failed: \S"):
        transport.send(listing(1))
    transport.close()
    thread.join(TIMEOUT)
    listener.close()


# ---- every path of the client, over TLS ----

@pytest.mark.parametrize("mode, era, connections", [("auto", "stateless", 1),
                                                   ("handshake", "handshake", 2)])  # the standing GET's connection too
def test_a_session_over_https_is_a_session_over_http_on_as_many_connections(certificates, mode, era, connections):
    with tls_endpoint(*certificates["loopback"]) as front:
        client = MCPClient(trusting_transport(front, certificates))
        client.connect(mode)
        result = client.call_tool("add", {"x": 2, "y": 3})
        client.close()
    assert (result["content"], client.era, front.accepted) == ([{"type": "text", "text": "5"}], era, connections)


def test_an_event_stream_response_arrives_over_https_event_by_event(certificates):
    progress = []
    with tls_endpoint(*certificates["loopback"]) as front:
        client = MCPClient(trusting_transport(front, certificates),
                           on_progress=lambda params: progress.append(params["progress"]))
        client.connect("handshake")
        result = client.call_tool("count_slowly", {"n": 3}, progress=True)
        client.close()
    assert (result["content"], progress) == ([{"type": "text", "text": "counted to 3"}], [1, 2, 3])


def test_a_question_mid_call_is_answered_on_the_side_connection_over_https(certificates):
    with tls_endpoint(*certificates["loopback"], cutting_server()) as front:
        client = MCPClient(trusting_transport(front, certificates),
                           on_elicit=lambda question: {"action": "accept", "content": {"value": "Ada"}})
        client.connect("handshake")
        result = client.call_tool("ask")
        client.close()
    assert result["content"] == [{"type": "text", "text": "hello Ada"}]


def test_a_stream_cut_mid_call_is_resumed_over_https_and_each_event_arrives_once(certificates):
    # The GET with Last-Event-ID that resumes it goes on a new connection: a new handshake.
    progress = []
    with tls_endpoint(*certificates["loopback"], cutting_server()) as front:
        client = MCPClient(trusting_transport(front, certificates),
                           on_progress=lambda params: progress.append(params["progress"]))
        client.connect("handshake")
        result = client.call_tool("cut_short", progress=True)
        client.close()
    assert (result["content"], progress) == ([{"type": "text", "text": "whole"}], [1, 2])


def test_the_standing_stream_over_https_brings_a_change_made_by_another_session(certificates):
    with tls_endpoint(*certificates["loopback"], server_demo.make_server()) as front:  # one catalog for all
        changer, idle = (MCPClient(trusting_transport(front, certificates)) for _ in range(2))
        changer.connect("handshake")
        idle.connect("handshake")
        changer.call_tool("enable_subtract")
        assert idle.transport.arrived.get(timeout=TIMEOUT) == notification("notifications/tools/list_changed")
        changer.close()
        idle.close()


def test_a_listen_stream_over_https_brings_a_change_and_closing_it_ends_its_thread(certificates):
    # 2026-07-28: subscriptions/listen holds a connection of its own; stopping is closing it, under its reading thread.
    with tls_endpoint(*certificates["loopback"], server_demo.make_server()) as front:
        listener, changer = (MCPClient(trusting_transport(front, certificates)) for _ in range(2))
        listener.connect()
        changer.connect()
        before = set(threading.enumerate())
        assert listener.listen(tools=True) == {"toolsListChanged": True}
        readers = [thread for thread in set(threading.enumerate()) - before if thread.name.endswith("(read_listening)")]
        changer.call_tool("enable_subtract")
        heard = listener.transport.arrived.get(timeout=TIMEOUT)
        listener.stop_listening()
        for thread in readers:
            thread.join(TIMEOUT)
        changer.close()
        listener.close()
    assert (heard["method"], [thread.is_alive() for thread in readers]) == ("notifications/tools/list_changed", [False])


# ---- the kept-alive connection: a record without data is no end; an end is ----

def test_requests_on_a_kept_alive_connection_take_one_handshake_though_records_without_data_come_while_it_is_idle(
        certificates):
    # TLS 1.3 lets a server send records that hold no data after the handshake (session tickets, RFC 8446 4.6.1; a
    # CertificateRequest, 4.6.2): the idle connection then reads as ready, but it is not closed. The handshake's own
    # tickets come before the first response, which takes them in; so the front sends a CertificateRequest, later.
    context = trusting(certificates["loopback"][0])
    context.post_handshake_auth = True
    with tls_endpoint(*certificates["loopback"]) as front:
        transport = mcp_http.HttpTransport(https(front), timeout=TIMEOUT, tls=context)
        replies = []
        for id in range(3):
            replies.append(transport.send(listing(id)))
            front.ask()
        transport.close()
    assert (answered(replies), front.accepted) == ([0, 1, 2], 1)


@pytest.mark.parametrize("close_notify", [True, False])
def test_a_connection_the_server_closed_while_it_was_idle_is_opened_again(certificates, close_notify):
    with tls_endpoint(*certificates["loopback"]) as front:
        transport = trusting_transport(front, certificates)
        replies = [transport.send(listing(1))]
        front.end(close_notify)
        replies.append(transport.send(listing(2)))
        transport.close()
    assert (answered(replies), front.accepted) == ([1, 2], 2)


# ---- the deadline: each read over TLS waits only what is left of it ----

@contextlib.contextmanager
def trickling():
    """A plain server that reads one request, then sends a JSON body announced whole a byte every 50 ms, for TIMEOUT
    at most, then closes: yields its port."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        conn, _ = listener.accept()
        with conn, contextlib.suppress(OSError):
            reader = conn.makefile("rb")
            head = b"".join(iter(reader.readline, b"\r\n"))
            reader.read(int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]))
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            deadline = time.monotonic() + TIMEOUT
            while time.monotonic() < deadline:
                conn.sendall(b" ")
                time.sleep(0.05)  # the server's pace, not a wait for a thread
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        thread.join(TIMEOUT)
        listener.close()


def test_a_server_that_trickles_bytes_over_https_cannot_stretch_the_clients_timeout(certificates):
    # Each byte comes in a TLS record of its own, well within the timeout: only the response's deadline ends the wait
    # (past TIMEOUT the server closes, and the client would see a body cut short instead).
    with trickling() as port, tls_front(port, *certificates["loopback"]) as front:
        transport = mcp_http.HttpTransport(https(front), timeout=0.5, tls=trusting(certificates["loopback"][0]))
        with pytest.raises(TimeoutError, match=r"no response to tools/list \(id 1\) in 0\.5 s"):
            transport.send(listing(1))
        transport.close()
