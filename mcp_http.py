"""mcp_http: Streamable HTTP, one endpoint and one POST a message (spec 2025-11-25 and 2026-07-28, basic/transports).

  10. Streamable HTTP    the 2026-07-28 headers; HTTP/1.1 (HttpHandler, HttpServer); the MCP binding on it
                         (Endpoint, EndpointHandler, HttpStream, EventLog, Session): http_server, serve_http;
                         with a verifier (mcp_auth.py), a resource server (spec 2025-11-25, basic/authorization);
                         the client, HttpTransport over HttpConnection (https too; its auth: mcp_oauth's OAuthClient)

In the handshake era initialize opens a session (Mcp-Session-Id); in 2026-07-28 every POST stands alone and
its headers repeat its body. A response is JSON, or an event stream written as the request's messages happen.
The server reads each request's head itself, and the client each response, by RFC 9112: http.server's and
http.client's readers cost more than the rest of a round trip. The server is two layers, as http.server's
servers are: HTTP/1.1, which knows nothing of MCP, and the MCP endpoint built on it, whose handlers reach it
through self.server.

    python server_demo.py --http --port 8000    # serves http://127.0.0.1:8000/mcp
    client = MCPClient(HttpTransport("http://127.0.0.1:8000/mcp", trace=print_trace))

Glossary: mcp_full's, and
  connection    one TCP socket between a client and the server, carrying one HTTP request after another (the
                socket socketserver calls its request: a request here is always an HTTP or a JSON-RPC request)
  server        here, the HTTP server (HttpServer, Endpoint), which handlers reach as self.server
  mcp           the MCP server that answers (mcp_min's or mcp_full's MCPServer); a factory makes one a session
  session       the spec's Streamable HTTP session (basic/transports, "Session Management"), which
                Mcp-Session-Id names: one client's state on a server, as in mcp_min, with what HTTP keeps of it
                (Session: its id, last use and standing GET stream)
"""

import base64
import collections
import contextlib
import email.utils
import functools
import http.server
import io
import json
import os
import queue
import re
import secrets
import select
import signal
import socket
import ssl
import sys
import threading
import time
import urllib.parse

import mcp_full
from mcp_min import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, TOOL_NOT_ALLOWED, \
    RPCError, error_response, is_notification, notification, report, say
from mcp_full import (CLIENT_CAPABILITIES_KEY, HANDSHAKE_ONLY, LENIENT, MAX_KEPT_NOTIFICATIONS, MAX_MESSAGE_BYTES,
                      MISSING_CLIENT_CAPABILITY, PROTOCOL_VERSION_KEY, PUBLISHED_VERSIONS, UNSUPPORTED_PROTOCOL_VERSION,
                      SessionExpired, Transport, encode, header_name, is_stateless, to_json)
from mcp_stdio import Lines, parse, same_id

HEADER_MISMATCH = -32020  # 2026-07-28 over HTTP: a header disagrees with the body (spec 2026-07-28, basic, "Error Codes")

# ---------------------------------------------------------------------------------------------------
# ---- 10. Streamable HTTP ----
# One endpoint, one POST a message. In the handshake era initialize opens a session (Mcp-Session-Id); in
# 2026-07-28 every POST stands alone and its headers repeat its body. A response is JSON, or an event
# stream written as the request's messages happen.
# ---------------------------------------------------------------------------------------------------

MCP_PATH = "/mcp"
METADATA_PATH = "/.well-known/oauth-protected-resource" + MCP_PATH  # RFC 9728, section 3.1: inserted before the path
LOCAL_NAMES = {"127.0.0.1", "localhost", "::1"}  # Host and Origin a local server accepts (DNS rebinding)
NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # sent as Mcp-Name
KEEPALIVE_S = 15  # an open event stream with nothing to say gets a comment line this often
STREAM_WRITE_S = 2  # a listen stream whose client reads nothing for this long is dropped: others never wait on it
REQUEST_S = 30  # a connection's next request must arrive whole (idle wait, headers, body) within this
WATCH_S = 0.25  # how often the watchdog looks while a POST is served; else it sleeps until the next deadline
# serve_http's accept loop waits this long at most: a Ctrl-C or SIGTERM that reached another thread (the system may
# pick any) is acted on only once the main thread wakes, and an idle server wakes no more often than this.
ACCEPT_POLL_S = 1
MAX_CONNECTIONS = 128  # open at once (each a thread, and a file of the 256 a laptop allows); more wait
MAX_LONG = MAX_CONNECTIONS * 3 // 4  # held by streams and long POSTs together (96): the other 32 serve short requests
LONG_S = 0.5  # a POST served longer than this is long: a tools/call takes milliseconds, so only a slow tool's is
MAX_GET_STREAMS = 32  # GET streams open at once (each holds a connection as long as it lasts): more are 503
MAX_STREAMS = 64  # listen streams open at once (more are 503): with MAX_GET_STREAMS, they fit in MAX_LONG
MAX_RESUMED = 32  # GETs resuming a stream open at once, apart from MAX_GET_STREAMS (more are 503; the client retries)
BUSY_S = 60  # a connection that waits this long for one of them to close is closed itself: every one is busy
SESSION_IDLE_S = 3600  # a handshake session unused this long is forgotten
MAX_SESSIONS = 1000  # open at once; one more forgets the idle session unused the longest (all busy: 503)
MAX_HEADERS = 100  # header lines in a request or a response, each MAX_HEADER_LINE bytes at most (http.server's bounds)
MAX_HEADER_LINE = 65536
DRAIN_S = 2  # a refused request's connection reads what its client still sends this long at most, then closes
BODY_PIECE = 65536  # a body is read, and charged to MAX_PARSED_IN_FLIGHT, this much at a time at most
# Resumability (spec 2025-11-25, basic/transports, "Resumability and Redelivery"): each event of a session's stream
# carries an id, and what a stream sent is kept for a client that reconnects with GET and Last-Event-ID.
RETRY_MS = 1000  # the wait a server that closes a stream's connection early asks of the client before it reconnects
REPLAY_S = 60  # an event is kept for replay this long after it was sent
REPLAY_STREAM_BYTES = 1 << 20  # and at most this much of one stream's events, the oldest forgotten first
REPLAY_BYTES = 32 << 20  # and at most this much of the whole server's, each event's entries counted with its bytes
EVENT_ENTRY_BYTES = 256  # what keeping an event costs besides its bytes (its entries in the log and its stream: ~210)
SWEEP_S = 1  # this often the log forgets the streams that ended after their events had expired
RETRY_CAP_S = 10  # a client waits the retry it is told, or RETRY_MS untold, but never longer than this (or its timeout)
MAX_RESUMES = 20  # times in a row a client reconnects to a stream that brings nothing new: then it gives up
MAX_AUTHORIZATIONS = 3  # times a client with auth answers a refusal of one request (401, 403 insufficient_scope)
MAX_PARSED_IN_FLIGHT = 256 * 1024 * 1024  # what the bodies being served hold at once, parsed (parsed_size); past it, 503


# ---- The 2026-07-28 headers: what a POST's headers repeat of its body, for the client and the server alike ----

def header_value(text: str) -> str:
    """A header value for text: as it is if plain printable ASCII, else wrapped as =?base64?...?= (2026-07-28)."""
    sentinel = text.startswith("=?base64?") and text.endswith("?=")  # a plain value that looks wrapped is wrapped
    if text.isascii() and text.isprintable() and text == text.strip() and not sentinel:
        return text
    return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="


def header_text(value: str | None) -> str | None:
    """The text a header value carries, unwrapping =?base64?...?=; ValueError for a wrapping that is not strict base64 of UTF-8."""
    if value and value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
    return value


def header_text_of(value) -> str:
    """The text a body value travels as in a header: integers in decimal, booleans as true or false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def header_matches(text: str | None, value) -> bool:
    """Whether a header's text repeats a body value; integers compare as numbers ("42.0" is 42)."""
    if value is None or text is None:
        return value is None and text is None
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(text) == value
        except ValueError:
            return False
    return text == header_text_of(value)


def header_paths(schema: dict) -> dict:
    """{Mcp-Param-Name: path of property names} for each x-mcp-header in an inputSchema; ValueError if one is misplaced.

    An annotation may sit only at the end of a chain of "properties" keys, on a string, integer or
    boolean, and each name only once, whatever its case (2026-07-28, Streamable HTTP, "Custom Headers").
    """
    found = {}

    def walk(node, path, reachable):
        if isinstance(node, dict):
            if "x-mcp-header" in node:
                if not reachable or path == ():
                    raise ValueError("x-mcp-header outside a chain of properties")
                name = "Mcp-Param-" + header_name(str(node["x-mcp-header"]), node)
                if name.lower() in (known.lower() for known in found):
                    raise ValueError(f"{name} names two arguments")
                found[name] = path
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    for name, child in value.items():
                        walk(child, path + (name,), reachable)
                elif key != "x-mcp-header":
                    walk(value, path, False)  # under items, anyOf, $defs...: not statically reachable
        elif isinstance(node, list):
            for item in node:
                walk(item, path, False)

    walk(schema, (), True)
    return found


def param_headers(schema: dict, arguments: dict) -> dict:
    """{Mcp-Param-Name: value} for each annotated argument present and not null (None for one that is absent)."""
    headers = {}
    for name, path in header_paths(schema).items():
        value = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        headers[name] = value
    return headers


def repeated_headers(message: dict, schema: dict | None = None) -> dict | None:
    """What the headers of a 2026-07-28 POST repeat of its body, {header: its value in the body, None if absent}
    (2026-07-28, Streamable HTTP, "Standard Headers" and "Custom Headers"; schema: a tools/call's tool's inputSchema);
    None for a message whose _meta names no protocol version: its headers repeat nothing."""
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    if PROTOCOL_VERSION_KEY not in meta:
        return None
    method = message.get("method")
    headers = {"MCP-Protocol-Version": meta[PROTOCOL_VERSION_KEY], "Mcp-Method": method}
    if isinstance(method, str) and method in NAMED_METHODS:  # a list or an object is no key: it names nothing
        headers["Mcp-Name"] = params.get(NAMED_METHODS[method])
    if schema is not None and isinstance(params.get("arguments"), dict):
        headers |= param_headers(schema, params["arguments"])
    return headers


# ---- HTTP/1.1, knowing nothing of MCP (RFC 9112) ----
# The server reads each request's line and head by hand, and the client each response's: http.server's and
# http.client's readers, built on the email package, cost more than the rest of a round trip. What could be read
# two ways is refused and its connection closed, so that no byte of it is read as the next request.

def read_head(reader) -> dict:
    """Header lines, up to the empty line that ends them (RFC 9112, section 5), read by the server and the client
    alike: {lower-case name: [its values, in order]}; ValueError(status, reason) for a head that is too large
    (431) or could be read another way (400).
    """
    # A head usually arrives whole, in one packet: when it is all in the reader's buffer, each line ending in CRLF
    # and the first empty line ending it, it is taken at once and split, not read a line at a time.
    arrived = reader.peek(1)
    end = arrived.find(b"\r\n\r\n")
    if end > 0 and not arrived.startswith(b"\r\n") and arrived.count(b"\n", 0, end) == arrived.count(b"\r\n", 0, end):
        lines = reader.read(end + 4)[:end].split(b"\r\n")
    else:
        lines = []
        while (line := reader.readline(MAX_HEADER_LINE + 1)) not in (b"\r\n", b"\n", b""):  # b"": the connection ended
            if len(line) > MAX_HEADER_LINE or len(lines) == MAX_HEADERS:
                raise ValueError(431, "a header line is too long, or there are too many")
            lines.append(line.removesuffix(b"\n").removesuffix(b"\r"))
    if len(lines) > MAX_HEADERS:
        raise ValueError(431, "a header line is too long, or there are too many")
    fields = {}
    for line in lines:
        name, colon, value = str(line, "latin-1").partition(":")
        if not colon or not name or name != name.strip() or "\r" in value:
            # Whitespace before the colon, a line folded onto the one before, or a CR that ends no line: each
            # could be read another way by another reader (RFC 9112, sections 2.2, 5.1 and 5.2).
            raise ValueError(400, "a header line is a name, a colon and a value")
        fields.setdefault(name.lower(), []).append(value.strip(" \t"))
    return fields


@functools.lru_cache(maxsize=256)  # a client names the same host with each request: read it once
def host_of(url: str) -> str | None:
    """The host a URL (or "//" and a Host header) names, lower-cased; ValueError if it cannot be read as one."""
    return urllib.parse.urlsplit(url).hostname


@functools.lru_cache(maxsize=2)  # formatted once a second, not for every response
def http_date(second: int) -> str:
    """The Date header's text for a second (RFC 9110, section 5.6.7)."""
    return email.utils.formatdate(second, usegmt=True)


def sse_event(data: str, event_id: str | None = None) -> bytes:
    """One event of an event stream (WHATWG, server-sent events): its id, if any, and its data, on one line."""
    named = f"id: {event_id}\n" if event_id is not None else ""
    return f"{named}event: message\ndata: {data}\n\n".encode()


class HttpHandler(http.server.BaseHTTPRequestHandler):
    """One connection of an HttpServer: its requests one after another (keep-alive), each request's line, head and
    body read by hand and bounded; a response written whole, in one write, or as an event stream in chunks.
    A subclass serves the methods (do_POST, ...); a refusal's body is error_body's."""
    protocol_version = "HTTP/1.1"  # keep-alive: many requests on one connection
    raw_requestline: bytes  # read by http.server's handle_one_request, before parse_request
    disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart
    refusal_type = "text/plain; charset=utf-8"  # the Content-Type of error_body's bodies

    def date_time_string(self, timestamp=None):
        """The Date header's text, formatted once a second."""
        return http_date(int(time.time() if timestamp is None else timestamp))

    def log_message(self, format, *args):
        pass  # no access log on stderr: a binding traces what it serves instead

    def handle_one_request(self):
        """Read and serve one request; the wait for it and its arrival, head and body, are bounded together."""
        self.server.expect(self.connection)  # a first request's time counts from accept
        try:
            super().handle_one_request()
        finally:
            self.server.arrived(self.connection)

    def parse_request(self) -> bool:
        """Read the request line and the header lines by hand (RFC 9112, sections 3 and 5). False, and a refusal
        sent, if malformed."""
        self.request_version, self.close_connection = "HTTP/1.1", True  # what a refusal speaks
        self.requestline = str(self.raw_requestline, "latin-1").rstrip("\r\n")
        self.command, self.path, version = (self.requestline.split(" ") + ["", ""])[:3]
        if self.requestline.count(" ") != 2 or version not in ("HTTP/1.1", "HTTP/1.0"):
            return self.refuse(400, "the request line is a method, a target and HTTP/1.1, one space apart")
        try:
            self.header_values = read_head(self.rfile)  # each name, lower-cased -> its values, in order
        except ValueError as exc:
            return self.refuse(*exc.args)  # 400, or 431 for a head too large
        self.request_version = version
        connection = self.header("Connection", "").lower()
        self.close_connection = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")
        # curl asks before it sends a body over 1 kB: read_body answers 100 once Host, Origin and length are checked
        self.continue_expected = self.header("Expect", "").lower() == "100-continue" and version == "HTTP/1.1"
        return True

    def header(self, name: str, default=None):
        """The first value of the request's header name (in any case), or default."""
        values = self.header_values.get(name.lower())
        return values[0] if values else default

    @property
    def accepts_events(self) -> bool:
        """Whether the client accepts an event stream (its Accept names text/event-stream)."""
        return "text/event-stream" in self.header("Accept", "")

    def is_allowed(self) -> bool:
        """The path is the one served, and Host and Origin are allowed names; otherwise refuse before reading a body."""
        hosts = len(self.header_values.get("host", []))
        missing = hosts == 0 and self.request_version == "HTTP/1.1"
        if hosts > 1 or missing or len(self.header_values.get("origin", [])) > 1:
            # One Host, which an HTTP/1.1 request must carry; with two, which one counts would be each reader's guess
            # (RFC 9112, section 3.2; RFC 6454, section 7)
            return self.refuse(400, "a request carries one Host header, and one Origin at most")
        try:
            host = host_of("//" + self.header("Host", ""))
            origin = self.header("Origin")
            path = urllib.parse.urlsplit(self.path).path
            origin_host = host_of(origin) if origin else None
        except ValueError:  # "[" that opens no IPv6 address, say
            return self.refuse(400, "Host, Origin or the target cannot be read as a URL's part")
        if path != self.server.served_path:
            return self.refuse(404, "not found: the endpoint is " + self.server.served_path)
        allowed = self.server.allowed_hosts
        if host not in allowed or (origin and origin_host not in allowed):
            return self.refuse(403, "Host or Origin is not a local name")  # a DNS-rebinding page, say
        return True

    def no_body(self) -> bool:
        """Whether the request (a GET, a DELETE) has no body; else refuse: it would be read as the next request."""
        if "transfer-encoding" in self.header_values or self.header("Content-Length", "0") != "0":
            return self.refuse(400, f"a {self.command} carries no body")
        return True

    def body_length(self) -> int | None:
        """The length of the request's body, up to MAX_MESSAGE_BYTES; None, and a refusal sent, if it is framed any
        other way than by one Content-Length."""
        lengths = self.header_values.get("content-length", [])
        length = lengths[0] if lengths else ""
        if "transfer-encoding" in self.header_values or len(lengths) > 1:
            # Two ways to frame one body could be read two ways: a smuggled request (RFC 9112, section 6.3).
            self.refuse(400, "a body is framed by exactly one Content-Length, and no Transfer-Encoding")
        elif not (len(length) <= 10 and length.isascii() and length.isdigit()):  # 1 to 10 decimal digits
            self.refuse(411, "Content-Length is required, in decimal digits")
        elif int(length) > MAX_MESSAGE_BYTES:
            self.refuse(413, f"the body must be {MAX_MESSAGE_BYTES} bytes at most")
        else:
            return int(length)
        return None

    def read_body(self, length: int, admit) -> bytes | None:
        """The request's body, 100 Continue sent first if the client waits for it, each piece let in by admit(its
        length) as it arrives; None if it never came whole, or admit refused a piece (and said so)."""
        if self.continue_expected:
            self.handle_expect_100()  # only now: a body the server refuses is never sent
        pieces, left = [], length  # what a head claims costs nothing until its bytes come
        while left:
            piece = self.rfile.read1(min(left, BODY_PIECE))
            if not piece:
                self.close_connection = True
                return None  # the client went away, or the watchdog cut it off
            if not admit(len(piece)):
                return None
            pieces.append(piece)
            left -= len(piece)
        return b"".join(pieces)

    def refuse(self, status: int, reason: str, body: bytes | None = None, headers: dict | None = None) -> bool:
        """Respond status with body (error_body's for reason, if None) and headers, drain what the client still
        sends, and close: a kept-alive connection never reads a stale body as a request. False."""
        self.close_connection = True
        self.send_whole(status, self.error_body(reason) if body is None else body, self.refusal_type,
                        {**(headers or {}), "Connection": "close"})
        self.connection.shutdown(socket.SHUT_WR)  # the response is complete, and the client sees it end
        deadline = time.monotonic() + DRAIN_S  # in all: a client that trickles bytes holds its slot no longer
        try:  # read what the client still sends (a body it writes before reading), so that it reads the response
            while (left := deadline - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(1 << 20):
                    break
        except OSError:
            pass  # the client closed, or took too long: either way the response is out
        return False

    def error_body(self, reason: str) -> bytes:
        """A refusal's body: the reason, as text (a binding says it in its own protocol)."""
        return reason.encode()

    def send_whole(self, status: int, body: bytes, content_type: str, headers: dict | None = None):
        """A response whole: status line, headers and body leave in one write (one packet for a small one, not two)."""
        head = [f"HTTP/1.1 {status} {self.responses[status][0]}", f"Date: {self.date_time_string()}",
                f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in (headers or {}).items()]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)

    def start_events(self):
        """The headers of an event stream, sent in chunks so that the connection stays usable after it; to an
        HTTP/1.0 client, which reads no chunks, as the bytes themselves, the stream ending with the connection."""
        self.send_response(200)
        framing = {"Transfer-Encoding": "chunked"} if self.request_version == "HTTP/1.1" else {"Connection": "close"}
        for name, value in {"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                            "X-Accel-Buffering": "no", **framing}.items():
            self.send_header(name, value)
        self.end_headers()
        self.close_connection = self.close_connection or self.request_version != "HTTP/1.1"

    def write_chunk(self, data: bytes):
        """One chunk of a chunked body; an empty one ends the body (HTTP/1.0: data as it is; the close ends it)."""
        if self.request_version != "HTTP/1.1":
            self.wfile.write(data)
        else:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def client_gone(self) -> str | None:
        """What reading the connection would say now: "end of file" (a close or a half-close), "reset", or None."""
        try:
            if self.connection.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                return "reset"  # after an end of file, a reset shows only here: reads go on saying end of file
            readable = select.select([self.connection], [], [], 0)[0]
            return "end of file" if readable and self.connection.recv(1, socket.MSG_PEEK) == b"" else None
        except OSError:
            return "reset"


class HttpServer(http.server.ThreadingHTTPServer):
    """http.server's threads, bounded: MAX_CONNECTIONS at once, each request arriving whole within REQUEST_S of the
    moment its connection was accepted or became idle; one path served, to the Host and Origin names allowed.
    Its watchdog looks by each deadline, and every WATCH_S while a request is served (look); idle, it sleeps."""
    daemon_threads = True
    request_queue_size = 1024  # connections waiting to be accepted (the default 5 resets a crowd)

    def __init__(self, address: tuple, handler: type, served_path: str, allowed_hosts):
        self.wake = threading.Event()  # set when the watchdog must look sooner than it planned (guarded by lock)
        self.looks_by = float("inf")  # the moment by which the sleeping watchdog looks next (guarded by lock)
        super().__init__(address, handler)  # (a port in use: its server_close, below, wakes no watchdog yet)
        self.served_path, self.allowed_hosts = served_path, allowed_hosts
        self.open_connections = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self.lock = threading.Lock()  # connections' threads add and remove; the watchdog and accept look at it all
        self.arriving = {}  # connection -> the moment by which its next request must have arrived whole
        self.handed_over = set()  # connections cut to make room, whose slots went to the connections they made room for
        self.closing = False
        threading.Thread(target=self.watch, daemon=True).start()

    def get_request(self):
        try:
            return super().get_request()
        except OSError:
            time.sleep(0.05)  # out of file descriptors, say: wait a moment rather than spin on accept
            raise

    def process_request(self, connection, client_address):
        # Full: the connection waiting the longest for its next request is cut to make room, so that idle
        # sockets lock nobody out; with none waiting, stop accepting until a connection closes (the others wait
        # in the listen queue). A wait of BUSY_S means every connection is busy: give up on this one.
        if not self.open_connections.acquire(blocking=False):
            with self.lock:
                idlest = min(self.arriving, key=self.arriving.get, default=None)
                self.arriving.pop(idlest, None)
                if idlest is not None:
                    self.handed_over.add(idlest)  # its slot is this one's now: a crowd of idle sockets is cut at once
            if idlest is not None:
                with contextlib.suppress(OSError):  # closed already
                    idlest.shutdown(socket.SHUT_RDWR)
            elif not self.open_connections.acquire(timeout=BUSY_S):
                connection.close()
                return
        with self.lock:
            self.arriving[connection] = time.monotonic() + REQUEST_S  # idle from now on: cut first, the earliest accepted
            self.look_by(self.arriving[connection])
        super().process_request(connection, client_address)

    def process_request_thread(self, connection, client_address):
        try:
            super().process_request_thread(connection, client_address)
        finally:
            with self.lock:
                self.arriving.pop(connection, None)  # a connection that ended before its first request was read
                cut = connection in self.handed_over
                self.handed_over.discard(connection)
            if not cut:  # (a connection cut to make room gave its slot to the one it made room for)
                self.open_connections.release()

    def handle_error(self, connection, client_address):
        """A connection's thread raised: a client that went away is nothing to tell; a bug is told on stderr."""
        error = sys.exc_info()[1]
        if not isinstance(error, (OSError, ValueError)):  # a reset, a timeout or a broken pipe: the client's doing
            report(f"a request from {client_address[0]} failed", error)  # the server's author sees where

    def expect(self, connection: socket.socket):
        """The connection's next request must arrive whole within REQUEST_S (its first, of the connection's accept)."""
        with self.lock:
            self.look_by(self.arriving.setdefault(connection, time.monotonic() + REQUEST_S))

    def arrived(self, connection: socket.socket):
        """The connection's request came whole (or never will): no deadline until the next is awaited."""
        with self.lock:
            self.arriving.pop(connection, None)

    def watch(self):
        """The watchdog's thread: look, then sleep until the next look is due or something sooner wakes it."""
        # An idle server sleeps: a server left open for hours, with nothing to do, wakes no CPU.
        while not self.closing:
            now = time.monotonic()
            self.look(now)
            with self.lock:  # what arrives from here on is looked at by looks_by, or wakes the watchdog
                self.looks_by = self.next_look(now)
                self.wake.clear()
            self.wake.wait(None if self.looks_by == float("inf") else max(0.0, self.looks_by - now))

    def look_by(self, moment: float):
        """(Holding lock.) The watchdog must look by moment: wake it if it sleeps past that."""
        if moment < self.looks_by:
            self.looks_by = moment
            self.wake.set()

    def next_look(self, now: float) -> float:
        """(Holding lock.) When the watchdog must look next: by the earliest deadline (never, with none)."""
        return min(self.arriving.values(), default=float("inf"))

    def look(self, now: float):
        """Cut off each connection whose next request has not arrived whole by its deadline."""
        with self.lock:
            late = [connection for connection, deadline in self.arriving.items() if now > deadline]
            for connection in late:
                del self.arriving[connection]
        for connection in late:
            with contextlib.suppress(OSError):  # closed already
                connection.shutdown(socket.SHUT_RDWR)

    def server_close(self):
        self.closing = True
        self.wake.set()
        super().server_close()


# ---- The MCP binding: sessions, both eras, streams and replay, the share of long requests ----
# An Endpoint is the HttpServer of one path, /mcp, and each of its connections an EndpointHandler, which reaches it
# through self.server (as http.server's handlers do). An MCP server ("mcp" throughout) answers: the endpoint's own
# for the stateless requests, each handshake session's for that session's.

SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abAB]")  # half of a character past U+FFFF, escaped (\uD800 to \uDBFF)
NON_BMP_LEAD = re.compile(rb"[\xf0-\xf4]")  # the first byte of a character past U+FFFF in UTF-8


def parsed_size(body: bytes) -> int:
    """At least the bytes parse() holds at its peak for body, itself included (tracemalloc), and at most 4 times that
    for floats, integers, strings of any characters and deep nesting (tests/transports/test_parse.py measures it)."""
    # What a string costs depends on its widest character: 1, 2 or 4 bytes each, for the decoded text and for each
    # string (Python's str, PEP 393). Decoding UTF-8 or an escape widens a buffer, and both are held as it does.
    size = len(body)
    if body.isascii():
        text, width = size, 4 if SURROGATE_ESCAPE.search(body) else 2 if b"\\u" in body else 1
    else:
        width = 4 if NON_BMP_LEAD.search(body) or SURROGATE_ESCAPE.search(body) else 2
        text = (1 + width) * size
    quotes = body.count(b'"') - body.count(b'\\"') + body.count(b'\\\\"')  # \" is no quote, \\" is one
    # Each string ~80 bytes besides its characters; each value's slot and number ~48; each key's entry in its object
    # and in the decoder's memo of keys ~200; each array or object ~100.
    return (size + text + (5 * (1 + width) + 1) * size // 4 + 40 * quotes + 48 * body.count(b",")
            + 200 * body.count(b":") + 100 * (body.count(b"[") + body.count(b"{")))


class Budget:
    """What the requests being served may hold at once, counted; a request alone is always let in (it bounds crowds)."""

    def __init__(self, limit: int):
        self.limit, self.used, self.lock = limit, 0, threading.Lock()

    def take(self, n: int, mine: int = 0) -> bool:
        """Hold n more for a request that holds mine already, if they fit or nobody else holds any."""
        with self.lock:
            if self.used > mine and self.used + n > self.limit:
                return False
            self.used += n
            return True

    def give(self, n: int):
        """Let go of n: a request was served."""
        with self.lock:
            self.used -= n


class HttpStream:
    """One POST's response as a stream: the server's messages for this request become its events, written
    the moment they are sent, by whichever thread sends them.

    closed turns true when the client goes away; for a 2026-07-28 request that is the cancel
    (2026-07-28, "Cancellation"). Without an event stream (the client accepts only JSON) there is
    nowhere to put a notification, and no way to ask the client anything.

    A stream of a handshake session is resumable (log is the server's EventLog): each event carries an id,
    is kept for replay, and the connection carrying the stream may change. The client going away detaches
    the stream rather than closing it, for a disconnection is no cancel (2025-11-25, "Resumability and
    Redelivery"); a GET with Last-Event-ID attaches a new connection, which gets what it missed first.
    """

    def __init__(self, handler, events_accepted: bool, listen: bool = False, log=None, session_id=None):
        self.handler, self.events_accepted = handler, events_accepted  # handler: the connection it is written on
        self.lock = threading.Lock()  # one writer at a time on this connection
        self.started = False  # the event stream's headers are out
        self.gone = False  # a write failed: the client went away
        self.probed = False  # a comment was sent to see whether an end of file was a close or a half-close
        self.stopped = False  # the server stopped the request and answered it (MAX_LONG): nothing more goes out
        self.ended = threading.Event() if listen else None  # set when a listen stream's response is out
        self.log, self.session_id = log, session_id  # resumable: the server's EventLog, and the session's id
        self._key = None  # names the stream in its events' ids, "key.number": made when an event first needs it
        self.number = 0  # the number of its last event
        self.kept, self.kept_bytes = collections.deque(), 0  # (number, event) kept for replay, guarded by log.lock
        self.done = threading.Event()  # set when its response is out: nothing more will be sent on it

    @property
    def key(self) -> str:
        """The stream's name in its events' ids ("key.number"), unguessable; most streams never need one."""
        if self._key is None:
            self._key = secrets.token_urlsafe(9)
        return self._key

    def send(self, message: dict):
        """Write one of the server's messages as an event of this request's stream, if it can carry it."""
        if not self.events_accepted:
            if "id" in message and "method" in message:
                raise RuntimeError("this POST accepts no text/event-stream, so the server cannot ask the client")
            return  # a notification with nowhere to go
        with self.lock:
            self.write(message)
        if "method" not in message and self.ended:
            self.ended.set()

    def write(self, message: dict):
        """(Holding lock.) Write message as the stream's next event, unless the request was stopped."""
        if self.stopped:
            return  # its one answer is out: what its tool says or returns later goes nowhere
        if "method" not in message:
            self.done.set()  # (under the lock: a GET waiting for it writes its end only once this is out)
        event_id = None
        if self.log is not None:
            self.number += 1
            event_id = f"{self.key}.{self.number}"
        event = sse_event(encode(message), event_id)
        if event_id is not None:
            self.log.keep(self, self.number, event)
        try:
            if self.gone or self.handler is None:
                pass  # the client went away, or stopped reading (or, resumable, may come back for it)
            else:
                if not self.started:
                    self.handler.start_events()
                    self.started = True
                self.handler.write_chunk(event)
        except OSError:  # TimeoutError too: a listen stream's reader that stopped reading is dropped
            self.detach()

    def send_comment(self, comment: bytes):
        """Write a comment line on the stream (a keep-alive)."""
        with self.lock:
            try:
                if not self.gone and not self.stopped and self.handler is not None:
                    self.handler.write_chunk(comment)
            except OSError:
                self.detach()

    def detach(self):
        """(Holding lock.) The connection failed: a resumable stream waits for another; any other is gone."""
        if self.log is not None:
            self.handler = None
        else:
            self.gone = True

    def attach(self, handler, after: int) -> str | None:
        """Carry the stream on handler's connection from now on, first replaying the events after number after;
        what is wrong, if the events after it are not all kept (then nothing is written)."""
        with self.lock:
            with self.log.lock:
                missed = [event for number, event in self.kept if number > after]
                first = self.kept[0][0] if self.kept else self.number + 1
            if not first - 1 <= after <= self.number:
                return (f"the events after {self.key}.{after} are no longer kept: a stream's events are kept "
                        f"{REPLAY_S} s and {REPLAY_STREAM_BYTES} bytes")
            self.started, self.handler = True, handler  # first: a sender that sees it waits for this lock
            handler.start_events()
            for event in missed:
                handler.write_chunk(event)
        return None

    def disconnect(self):
        """Close the connection carrying this stream, but not the stream: the client waits the retry it is told,
        then reconnects with GET and Last-Event-ID and gets the rest (2025-11-25, "Sending Messages to the Server":
        after an event with an id, a server MAY close the connection, and SHOULD send a retry field first)."""
        with self.lock:
            if self.log is None or self.handler is None:
                return  # a stream that cannot be resumed is not cut short
            handler, self.handler = self.handler, None
            try:
                if not self.started:
                    handler.start_events()
                    self.started = True
                if self.number == 0:  # a priming event: an id to reconnect with, and no message (data is empty)
                    priming = f"id: {self.key}.{self.number}\ndata: \n\n".encode()
                    self.log.keep(self, self.number, priming)  # kept like any event: its id finds the stream
                    handler.write_chunk(priming)
                handler.write_chunk(f"retry: {RETRY_MS}\n\n".encode())
                handler.write_chunk(b"")  # the body ends whole, as the SDKs end theirs: a reader sees no error
                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # the client went away first: it reconnects all the same
            handler.close_connection = True

    @property
    def closed(self) -> bool:
        """Whether the client has gone: a write failed, or the connection was reset (an end of file alone is no
        proof), but never for a resumable stream, whose client may come back; or whether the server stopped the
        request (MAX_LONG), which its tool sees as the client's cancel."""
        if self.stopped:
            return True
        if self.log is not None:
            return False
        if self.gone or self.handler is None:
            return True  # a write failed, or its response is out (None)
        # A client may half-close once its request is sent and still read the answer. On an event stream one
        # comment tells the two apart: a closed socket answers it with a reset.
        if self.started and not self.probed and self.handler.client_gone() == "end of file":
            self.probed = True
            self.send_comment(b":\n\n")
        self.gone = self.handler.client_gone() == "reset"
        return self.gone


class EventLog:
    """The events of a server's session streams, kept for a client that reconnects with Last-Event-ID (2025-11-25,
    "Resumability and Redelivery"): each for REPLAY_S seconds, at most REPLAY_STREAM_BYTES of one stream's and
    REPLAY_BYTES of the server's, the oldest forgotten first."""

    def __init__(self):
        self.lock = threading.Lock()
        self.order = collections.deque()  # (stream, number, size, when) of each event kept, oldest first
        self.bytes = 0  # of the events kept, and EVENT_ENTRY_BYTES for each entry of order
        self.streams = {}  # stream key -> HttpStream: those with events kept, or still running
        self.emptied = {}  # stream key -> HttpStream: running when its last event was forgotten (kept for a resume)
        self.swept = time.monotonic()

    def keep(self, stream: HttpStream, number: int, event: bytes):
        """Keep one event of stream; forget the oldest ones past the bounds."""
        now = time.monotonic()
        with self.lock:
            self.streams[stream.key] = stream
            stream.kept.append((number, event))
            stream.kept_bytes += len(event)
            self.order.append((stream, number, len(event), now))
            self.bytes += len(event) + EVENT_ENTRY_BYTES
            while stream.kept_bytes > REPLAY_STREAM_BYTES:
                _, old = stream.kept.popleft()
                stream.kept_bytes -= len(old)
                self.bytes -= len(old)
            self.forget(now)

    def forget(self, now: float):
        """(Holding lock.) Forget the events older than REPLAY_S, and the oldest while over REPLAY_BYTES; every
        SWEEP_S, the streams that have ended since their last event was forgotten."""
        while self.order and (self.bytes > REPLAY_BYTES or self.order[0][3] < now - REPLAY_S):
            stream, number, size, _ = self.order.popleft()
            self.bytes -= EVENT_ENTRY_BYTES
            if stream.kept and stream.kept[0][0] == number:  # (else forgotten already, past its stream's bound)
                stream.kept.popleft()
                stream.kept_bytes -= size
                self.bytes -= size
            if not stream.kept and stream.done.is_set():
                self.streams.pop(stream.key, None)
            elif not stream.kept:
                self.emptied[stream.key] = stream  # a running stream: a client that missed nothing may resume it
        if now - self.swept >= SWEEP_S:
            self.swept = now
            for key, stream in list(self.emptied.items()):
                if stream.kept or stream.done.is_set():
                    del self.emptied[key]
                if not stream.kept and stream.done.is_set():
                    self.streams.pop(key, None)

    def find(self, session_id: str, event_id: str) -> tuple:
        """The stream of session_id that event_id names, and the event's number; (None, 0) if none is kept."""
        key, _, number = event_id.strip().rpartition(".")
        with self.lock:
            self.forget(time.monotonic())
            stream = self.streams.get(key)
        if stream is None or stream.session_id != session_id or not number.isdigit():
            return None, 0  # another session's stream is not this client's to read
        return stream, int(number)


class Session:
    """One handshake session over HTTP: its MCP server, its last use, its standing GET stream, its requests in flight."""

    def __init__(self, mcp, sid: str, log: EventLog, subject: str | None = None):
        self.mcp, self.sid, self.used = mcp, sid, time.monotonic()
        self.subject = subject  # with a verifier, whose token opened it: no other subject's request may use it
        self.allowed = mcp.allowed_tools  # its server's allow-list before any token's grants narrow it
        self.in_flight = 0  # POSTs being served: while one is, the session's notifications wait for its end
        self.standing = HttpStream(None, True, log=log, session_id=sid)  # the GET stream, once a client opens it
        self.lock = threading.Lock()

    @property
    def busy(self) -> bool:
        """Whether a request of the session is in flight or its standing stream is open: then it is never forgotten."""
        return self.in_flight > 0 or self.standing.handler is not None

    def deliver(self):
        """The server sent something outside any request: on the GET stream at once, if one is open and no
        request is in flight (else it goes out at the end of the next POST, after that POST's own messages)."""
        if self.in_flight == 0 and self.standing.handler is not None:
            for message in self.mcp.drain_outbox():
                self.standing.send(message)


class EndpointHandler(HttpHandler):
    """One connection of an Endpoint: its POSTs (a message each), its GET (a session's standing stream, or a stream
    resumed) and its DELETE (a session's end). A refusal's body is a JSON-RPC error."""
    refusal_type = "application/json"

    def handle_one_request(self):
        """HttpHandler's, then let go of what the request held: its bytes of the parsed budget, its listen stream."""
        self.held, self.streaming = 0, False  # bytes of the parsed budget this request holds; whether it holds a stream
        self.grant = None  # with a verifier, what the request's token grants, once authenticate() has verified it
        self.stream = self.request_id = self.message = None  # the request's HttpStream, id and message, once serve()
        # has them (stop, missing_scope)
        self.giving_way = False  # made true by the watchdog: this request's stream gives way to calls (MAX_LONG)
        try:
            super().handle_one_request()
        finally:
            self.server.finished(self)
            if self.held:
                self.server.parsed.give(self.held)
            if self.streaming:
                self.server.listen_streams.give(1)

    def error_body(self, reason: str) -> bytes:
        """A refusal's body: a JSON-RPC error, -32600, saying why."""
        return encode(error_response(None, INVALID_REQUEST, reason)).encode()

    def authenticate(self) -> bool:
        """With a verifier, the request's bearer token verified (its Grant kept as self.grant); else 401, whose
        WWW-Authenticate names the Protected Resource Metadata (spec 2025-11-25, basic/authorization)."""
        self.grant = None
        verifier = self.server.verifier
        if verifier is None:
            return True
        values = self.header_values.get("authorization", [])
        scheme, _, token = values[0].partition(" ") if len(values) == 1 else ("", "", "")
        if scheme.lower() != "bearer" or not token.strip():  # no error code for a request without a token (RFC 6750, 3.1)
            return self.refuse(401, "this server needs an access token: Authorization: Bearer <token>",
                               headers={"WWW-Authenticate": self.server.challenge()})
        try:
            self.grant = verifier.verify(token.strip(), self.server.resource)
        except ValueError as exc:  # mcp_auth's InvalidToken: forged, for another resource, expired...
            return self.refuse(401, f"invalid token: {exc}",
                               headers={"WWW-Authenticate": self.server.challenge("invalid_token", description=str(exc))})
        return True

    def publish_metadata(self):
        """The Protected Resource Metadata (RFC 9728, section 3.2): which resource this is, and who issues its tokens."""
        if self.no_body():
            body = json.dumps(self.server.metadata()).encode()
            self.send_whole(200, body, "application/json", {"Cache-Control": "no-store"})

    def missing_scope(self, mcp, reply) -> str | None:
        """The scope a tools/call needs and the request's token lacks, if reply is the lattice's refusal of it (the
        allow-list's -32600, which carries no data); else None."""
        scopes, message = self.server.scopes, self.message
        if self.grant is None or scopes is None or not isinstance(reply, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        error, name = reply.get("error", {}), params.get("name") if isinstance(params, dict) else None
        if error.get("code") != TOOL_NOT_ALLOWED or "data" in error or name not in mcp.tools:
            return None
        # The scopes that grant it, the mapping's first named: the token's own, if they granted it, would have
        # let it through; none at all means no token could (a tool outside the server's own allow-list).
        granting = [scope for scope, tools in scopes.items() if name in tools and scope not in self.grant.scopes]
        return granting[0] if granting else None

    def do_GET(self):
        """A session's standing stream, or (with Last-Event-ID) a stream resumed: what it missed, then the rest."""
        if self.server.verifier is not None and urllib.parse.urlsplit(self.path).path == METADATA_PATH:
            return self.publish_metadata()  # public: a client reads it to learn where to get a token
        if not self.is_allowed() or not self.authenticate() or not self.no_body():
            return
        if not self.accepts_events:
            return self.refuse(406, "a GET opens an event stream: accept text/event-stream")
        self.server.arrived(self.connection)  # the stream may stay open as long as the session lasts
        if self.header("Mcp-Session-Id") is None:  # 2026-07-28 has no sessions, so no stream outside a request
            return self.refuse(405, "a standalone stream belongs to a session: initialize first")
        session = self.session()
        if session is None:
            return
        if not isinstance(session.mcp, mcp_full.MCPServer):
            return self.refuse(405, "the lab's server sends nothing outside a request: no standing stream")
        last = self.header("Last-Event-ID")
        stream, after = (session.standing, session.standing.number) if last is None else \
            self.server.log.find(session.sid, last)
        # A connection each: they may not crowd out the POSTs. A resume carries a request's answer: standing
        # streams, which a session can do without, never take its place.
        streams = self.server.get_streams if last is None else self.server.resumed
        if not streams.take(1):
            if last is not None:
                return self.refuse(503, f"{MAX_RESUMED} resumed streams are open already (MAX_RESUMED): retry shortly")
            return self.refuse(503, f"{MAX_GET_STREAMS} GET streams are open already: the session works without one")
        try:
            # What the session's server sends may go out here from any thread: a client that stops reading is
            # dropped after STREAM_WRITE_S (the stream waits for the next GET), and nobody else waits on it.
            self.connection.settimeout(STREAM_WRITE_S)
            # Held from before its head goes out. A standing stream gives way to calls past MAX_LONG; a resumed
            # request's stream carries its answer.
            self.server.stream_opened(self, gives_way=stream is session.standing)
            problem = f"Last-Event-ID {last!r} names no stream of this session kept for replay" if stream is None \
                else stream.attach(self, after)
            if problem:
                return self.refuse(400, problem)
            session.deliver()  # what waited in the outbox, if nothing is in flight
            # Until its response is out, another GET takes it over, either side goes, or it gives way.
            self.hold(stream, stream.done, lambda: stream.handler is not self or self.server.closing
                      or self.giving_way or bool(self.client_gone()))
            if self.giving_way:
                stream.disconnect()  # its events are kept: its client resumes after the retry, and misses nothing
            with stream.lock:
                self.end_events(stream)
        finally:
            streams.give(1)

    def do_DELETE(self):
        """The end of the session Mcp-Session-Id names."""
        if not self.is_allowed() or not self.authenticate() or not self.no_body():
            return
        session = self.session(end=True)
        if session:
            session.standing.done.set()  # its GET, if open, ends
            self.respond(200, None)

    def do_POST(self):
        """One message: in the handshake era, of a session (initialize opens one); in 2026-07-28, standing alone."""
        if not self.is_allowed() or not self.authenticate():  # before the body is read: a stranger's costs nothing
            return
        length = self.body_length()
        if length is None:
            return
        body = self.read_body(length, self.reserve)  # its bytes as they arrive; once read, its parse's
        if body is None or not self.reserve(parsed_size(body) - len(body)):
            return
        self.server.started(self)  # serving it may take as long as its tool needs (past LONG_S, MAX_LONG allowing)
        try:
            message = parse(body)  # once the body is read, the connection is reusable
        except RPCError as exc:
            return self.respond(400, error_response(None, exc.code, exc.message))
        version = self.header("MCP-Protocol-Version")
        if not isinstance(message, dict):  # a batch, a string, a number: handle() says what is wrong
            return self.respond(400, self.server.mcp.handle(message))
        if is_stateless(message):
            self.post_stateless(message)
        elif version is not None and version not in PUBLISHED_VERSIONS:
            self.respond(400, error_response(None, INVALID_REQUEST, f"unknown MCP-Protocol-Version {version}"))
        elif message.get("method") == "initialize":
            self.respond(*self.server.open_session(message, self.grant))
        else:
            session = self.session()
            if session:
                if self.grant is not None:  # the grants of the token this request carries: its session's allow-list
                    # (requests in flight at once share the newest; all carry tokens of the one subject, so none can
                    # get more than a token that subject holds grants: and a step-up takes effect in the session)
                    session.mcp.allowed_tools = self.server.allow_list(self.grant, session.allowed)
                self.serve(session.mcp, message, lambda reply: 200, session)

    def reserve(self, n: int) -> bool:
        """Hold n more bytes of the parsed budget for this request; past MAX_PARSED_IN_FLIGHT, refuse 503."""
        if self.server.parsed.take(n, self.held):
            self.held += n
            return True
        reason = (f"the server holds all the request bodies it may at once ({MAX_PARSED_IN_FLIGHT} bytes parsed, "
                  "MAX_PARSED_IN_FLIGHT): try again shortly")
        return self.refuse(503, reason, encode(error_response(None, INTERNAL_ERROR, reason)).encode())

    def post_stateless(self, message: dict):
        """2026-07-28: no session; the headers repeat the body; errors map to HTTP statuses."""
        mcp = self.server.mcp if self.grant is None else self.server.granted(self.grant)  # the token's allow-list
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta, method, name = params.get("_meta"), message.get("method"), params.get("name")
        meta = meta if isinstance(meta, dict) else {}
        tool = mcp.tools.get(name) if method == "tools/call" and isinstance(name, str) else None
        repeated = None if is_notification(message) else repeated_headers(message, tool and tool["spec"]["inputSchema"])
        problem = repeated and self.header_mismatch(repeated)  # the spec names no notification headers
        if problem:
            return self.respond(400, error_response(message.get("id"), HEADER_MISMATCH, problem))
        if is_notification(message):
            return self.respond(202, None)  # over HTTP, closing a stream is the cancel: nothing to pass on

        def status(reply):
            code = reply.get("error", {}).get("code")
            if code in (UNSUPPORTED_PROTOCOL_VERSION, INVALID_REQUEST, PARSE_ERROR, MISSING_CLIENT_CAPABILITY):
                return 400
            if code == INVALID_PARAMS and not (CLIENT_CAPABILITIES_KEY in meta and PROTOCOL_VERSION_KEY in meta):
                return 400  # a required _meta field is missing (2026-07-28, basic, "_meta")
            if code == METHOD_NOT_FOUND and (method not in mcp.HANDLERS or method in HANDSHAKE_ONLY):
                return 404  # the method itself is unknown here
            return 200  # a tool's failure, or the lab's unknown tool, is still a 200
        self.serve(mcp, message, status)

    def header_mismatch(self, repeated: dict) -> str | None:
        """What in the headers does not repeat the body (2026-07-28, Streamable HTTP, "Server Validation"), or None."""
        for header, value in repeated.items():
            sent = self.header_values.get(header.lower(), [])
            if len(sent) > 1:
                return f"the {header} header was sent {len(sent)} times"
            try:
                text = header_text(sent[0].strip(" \t")) if sent else None  # whitespace around a value is not part of it
            except ValueError:
                return f"the {header} header is not a valid =?base64?...?= value"
            if not header_matches(text, value):
                return f"the {header} header does not match the body"
        return None

    def serve(self, mcp, message, status, session: Session | None = None):
        """handle() on this connection's thread; what the request sends meanwhile goes out as events, at once
        (resumable events, in a session)."""
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            reply = mcp.handle(message)  # a notification, or the client's response to the server's question
            return self.respond(202 if reply is None else status(reply), reply)
        events_accepted = self.accepts_events
        listen = message.get("method") == "subscriptions/listen"
        if listen and not events_accepted:  # it would be kept, unheard
            return self.respond(406, error_response(message.get("id"), INVALID_REQUEST,
                                                    "subscriptions/listen answers on an event stream: accept text/event-stream"))
        if listen:
            self.streaming = self.server.listen_streams.take(1)
            if not self.streaming:
                return self.respond(503, error_response(message.get("id"), INTERNAL_ERROR,
                                                        f"{MAX_STREAMS} listen streams are open, as many as may be "
                                                        "(MAX_STREAMS): try again later"))
        log = self.server.log if session else None  # a session's streams are resumable
        stream = HttpStream(self, events_accepted, listen, log, session and session.sid)
        self.stream, self.request_id, self.message = stream, message.get("id"), message
        if listen:  # its writes come from whoever changes a list, and may never wait long
            self.connection.settimeout(STREAM_WRITE_S)
            self.server.stream_opened(self, gives_way=True)
        if session:
            with session.lock:
                session.in_flight += 1
        try:
            # mcp_full's server takes the request's stream; the lab's serves the request whole, then answers
            reply = mcp.handle(message, stream) if isinstance(mcp, mcp_full.MCPServer) else mcp.handle(message)
        finally:
            if session:
                with session.lock:
                    session.in_flight -= 1
        if reply is None and listen and stream.started:  # open until the server ends it, the client closes it, or
            # it gives way to calls past MAX_LONG: then the server ends it gracefully, with the listen's response
            # (2026-07-28, "Subscriptions"), and its client may listen again
            ended = self.hold(stream, stream.ended, lambda: stream.closed or self.giving_way)
            if not ended and not stream.closed:
                mcp.end_listening(stream)
                ended, self.close_connection = stream.ended.is_set(), True
            if ended:
                with stream.lock:
                    self.end_events(stream)
            else:  # over HTTP, closing the stream ends the subscription
                mcp.stop_listening(stream)
                self.close_connection = True
            return
        with stream.lock:  # held to the end: a request is stopped (stop) before it, or not at all
            self.end_request(mcp, stream, reply, status)

    def end_request(self, mcp, stream: HttpStream, reply, status):
        """(Holding stream.lock.) The request's response, after the session's queued notifications: one body, or the
        last events of its stream (on whichever connection carries the stream now: a resumed stream's GET)."""
        if stream.stopped:  # it has its one answer, the error: the outbox waits for the session's next request
            self.close_connection = True
            return
        queued = mcp.drain_outbox()  # the session's list_changed, if any
        if stream.gone:
            self.close_connection = True
            return
        if not stream.started:  # nothing was said before the response: one JSON body, in one write
            stream.done.set()
            scope = self.missing_scope(mcp, reply)
            if scope:  # the lattice refused it, and a scope the token lacks grants it: step up (spec 2025-11-25,
                # basic/authorization, "Scope Challenge Handling")
                challenge = self.server.challenge("insufficient_scope", scope, f"the tool needs the scope {scope}")
                return self.respond(403, reply, {"WWW-Authenticate": challenge}, queued=queued)
            return self.respond(202 if reply is None else status(reply), reply, queued=queued)
        for event in queued + ([reply] if reply else []):
            stream.write(event)
        stream.done.set()
        if stream.handler is not self:  # the client went, or resumed the stream on a GET, which ends it
            self.close_connection = True
            return
        self.end_events(stream)

    def hold(self, stream: HttpStream, finished: threading.Event, gone) -> bool:
        """Keep stream open on this connection until finished is set (True) or gone() says the client went (False),
        with a comment every KEEPALIVE_S: clients skip it; proxies see life."""
        quiet_since = time.monotonic()
        while not finished.wait(0.25):
            if gone():
                return False
            if time.monotonic() - quiet_since > KEEPALIVE_S:
                stream.send_comment(b": keep-alive\n\n")
                quiet_since = time.monotonic()
        return True

    def end_events(self, stream: HttpStream):
        """(Holding stream.lock.) End the event stream on this connection, which may then carry another request, at
        its own pace; the stream, if resumable, goes on without a connection, kept for the next GET."""
        if stream.handler is self:
            stream.handler = None
        try:
            self.write_chunk(b"")
            self.connection.settimeout(None)
        except OSError:
            self.close_connection = True

    def stop(self):
        """Stop this long request past the share of MAX_LONG: the busy error is its one answer (the watchdog's)."""
        # Its tool sees ctx.cancelled, as if the client had cancelled it; what the request sends or returns later
        # goes nowhere. Its connection is closed, and its slot is free once its tool returns: at once for a tool
        # that heeds ctx.cancelled; mcp_min's lab cannot be told.
        stream = self.stream
        if stream is None or not stream.lock.acquire(blocking=False):
            return  # no request to stop, or a write on it is under way: the watchdog comes back
        try:
            if stream.done.is_set() or stream.stopped:
                return  # answered already
            carrier, whole = stream.handler, False  # this connection, a GET that resumed the stream, or none
            timeout = carrier.connection.gettimeout() if carrier else None
            error = error_response(self.request_id, INTERNAL_ERROR, (
                f"the server is busy: long requests hold the {MAX_LONG} connections they may "
                f"(MAX_LONG); this request ran past LONG_S ({LONG_S} s) and was stopped: try again later"))
            try:
                if carrier and not stream.gone:
                    carrier.connection.settimeout(0)  # the watchdog waits for no client: what cannot go now is cut
                if carrier is self and not stream.started and not stream.gone:
                    self.respond(503, error, {"Connection": "close"})
                    whole = True
                else:
                    stream.write(error)  # an event after the request's others (kept for replay, in a session)
                    whole = stream.handler is self and not stream.gone  # (write() let go of a failed connection)
                    if whole:
                        self.write_chunk(b"")  # the end of the event stream
            except OSError:
                whole = False
            finally:
                if carrier:
                    with contextlib.suppress(OSError):
                        carrier.connection.settimeout(timeout)
            stream.stopped = True
            stream.done.set()  # a GET carrying the stream ends it
            if carrier is self:  # its thread may serve nothing more on it: the client sees the answer end
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_WR if whole else socket.SHUT_RDWR)
        finally:
            stream.lock.release()

    def session(self, end: bool = False) -> Session | None:
        """The Session that Mcp-Session-Id names (ended, if end); else respond 400 or 404 and return None."""
        sid = self.header("Mcp-Session-Id")
        session = self.server.find(sid, end, self.grant and self.grant.subject)
        if session is None:
            status, reason = (400, "missing Mcp-Session-Id") if sid is None else (404, "unknown or ended session")
            self.respond(status, error_response(None, INVALID_REQUEST, reason))
        return session

    def respond(self, status: int, reply, headers: dict | None = None, queued=()):
        """Send the response whole, in one write: JSON, or an event stream when notifications go first."""
        body, content_type = (encode(reply).encode() if reply else b""), "application/json"
        if queued and self.accepts_events:
            body = b"".join(sse_event(encode(message)) for message in [*queued, reply])
            content_type = "text/event-stream"
        self.send_whole(status, body, content_type, headers)


class Endpoint(HttpServer):
    """The MCP endpoint: Streamable HTTP at MCP_PATH, one EndpointHandler a connection (thread). mcp answers the
    stateless requests, and factory() makes each handshake session's MCP server. Its watchdog also stops the newest
    long POSTs past the share of MAX_LONG connections that long requests and streams may hold."""

    def __init__(self, address: tuple, mcp, allowed_hosts=LOCAL_NAMES, verifier=None, authorization_servers=(),
                 scopes: dict | None = None, resource: str | None = None):
        if scopes is not None and not all(isinstance(tools, (set, frozenset, list, tuple)) for tools in scopes.values()):
            raise TypeError("scopes maps each scope to the tool names it grants, such as {'mcp:add': {'add'}}")
        self.verifier, self.authorization_servers = verifier, list(authorization_servers)
        self.scopes = None if scopes is None else {scope: frozenset(tools) for scope, tools in scopes.items()}
        self.resource_uri = resource  # None: http://host:port/mcp, once the port is known
        self.granted_servers = {}  # 2026-07-28 with a verifier: an allow-list -> the server that answers under it
        if isinstance(mcp, mcp_full.MCPServer):
            self.mcp, self.factory = mcp, mcp.share_catalog  # every session's server shares its catalog
        elif callable(mcp):
            self.mcp, self.factory = mcp(), mcp  # a server of its own serves every stateless request
        else:
            raise TypeError("http_server takes mcp_full's MCPServer, or a function that makes each session's server")
        self.sessions = {}  # Mcp-Session-Id -> its Session: one a client, in the handshake era; the least used first
        self.sessions_lock = threading.Lock()
        self.log = EventLog()  # what the sessions' streams sent, for a client that reconnects
        self.get_streams = Budget(MAX_GET_STREAMS)  # GET streams open
        self.resumed = Budget(MAX_RESUMED)  # GETs resuming a stream open
        self.listen_streams = Budget(MAX_STREAMS)  # listen streams open
        self.parsed = Budget(MAX_PARSED_IN_FLIGHT)  # what the bodies being served hold, parsed
        self.serving = {}  # EndpointHandler -> the moment its POST arrived whole, oldest first (guarded by lock)
        self.open_streams = {}  # EndpointHandler -> whether its stream gives way to calls; oldest first (guarded by lock)
        super().__init__(address, EndpointHandler, MCP_PATH, allowed_hosts)  # (its watchdog starts last)

    @property
    def resource(self) -> str:
        """This server's resource URI (RFC 8707): the audience its tokens must name, and its metadata's resource."""
        host, port = self.server_address[:2]
        return self.resource_uri or f"http://{f'[{host}]' if ':' in host else host}:{port}{MCP_PATH}"

    def metadata(self) -> dict:
        """The Protected Resource Metadata document (RFC 9728, section 2)."""
        scopes = {"scopes_supported": list(self.scopes)} if self.scopes is not None else {}
        return {"resource": self.resource, "authorization_servers": self.authorization_servers,
                **scopes, "bearer_methods_supported": ["header"]}  # never a query string (spec: "Token Requirements")

    def challenge(self, error: str | None = None, scope: str | None = None, description: str | None = None) -> str:
        """A WWW-Authenticate value: Bearer, where the metadata is, and the error and scope if any (RFC 6750, 3)."""
        split = urllib.parse.urlsplit(self.resource)
        fields = {"resource_metadata": f"{split.scheme}://{split.netloc}{METADATA_PATH}",
                  "scope": scope or (" ".join(self.scopes) if self.scopes and error is None else None),
                  "error": error, "error_description": description}
        # Printable ASCII inside the quotes, but no double quote or backslash (RFC 6750, section 3): a verifier's
        # reason can neither end the quoted string nor the header.
        quoted = [f'{name}="' + "".join(c for c in value if " " <= c <= "~" and c not in '"\\') + '"'
                  for name, value in fields.items() if value]
        return "Bearer " + ", ".join(quoted)

    def allow_list(self, grant, allowed) -> set | None:
        """The tools grant allows: its scopes' tools (all of allowed, without a scopes mapping), within allowed."""
        if self.scopes is None:
            return allowed
        tools = set().union(*(self.scopes.get(scope, ()) for scope in grant.scopes))
        return tools if allowed is None else tools & allowed

    def granted(self, grant):
        """2026-07-28: the server that answers under grant's allow-list (one an allow-list, on the shared catalog)."""
        if self.scopes is None:
            return self.mcp  # a token grants what the server allows
        key = frozenset(self.allow_list(grant, self.mcp.allowed_tools))
        with self.sessions_lock:
            mcp = self.granted_servers.get(key)
            if mcp is None:  # a few: each is a subset of the tools the scopes name
                mcp = self.mcp.share_catalog() if isinstance(self.mcp, mcp_full.MCPServer) else self.factory()
                mcp.allowed_tools = set(key)
                self.granted_servers[key] = mcp
        return mcp

    def open_session(self, message: dict, grant=None) -> tuple:
        """Serve initialize with a new session's MCP server, named by an unguessable id: (the HTTP status, its reply,
        the header that names the session, if it opened); with a grant, the session is its subject's, under its
        allow-list."""
        if not self.make_room():
            return 503, error_response(message.get("id"), INTERNAL_ERROR, (
                f"the server holds MAX_SESSIONS ({MAX_SESSIONS}) sessions, each busy with a request or a stream: "
                "try again later"))
        mcp, sid = self.factory(), secrets.token_urlsafe(24)
        session = Session(mcp, sid, self.log, grant and grant.subject)
        if grant is not None:
            mcp.allowed_tools = self.allow_list(grant, session.allowed)
        reply = mcp.handle(message)
        if not (reply and "result" in reply):
            return 200, reply, {}
        if isinstance(mcp, mcp_full.MCPServer):
            mcp.on_send = session.deliver  # what it sends outside a request may take the GET stream
        with self.sessions_lock:
            self.sessions[sid] = session
        return 200, reply, {"Mcp-Session-Id": sid}

    def find(self, sid: str | None, end: bool = False, subject: str | None = None) -> Session | None:
        """The Session sid names, now its last used (ended, if end); None if there is none, or if it is another
        subject's: a session id is no credential (spec 2025-11-25, basic/security_best_practices, "Session Hijacking")."""
        with self.sessions_lock:
            if sid not in self.sessions or self.sessions[sid].subject != subject:
                return None
            session = self.sessions.pop(sid)
            if not end:
                session.used = time.monotonic()
                self.sessions[sid] = session  # to the end: the sessions are kept in the order of their last use
        return session

    def make_room(self) -> bool:
        """Forget the sessions unused longer than SESSION_IDLE_S and, while MAX_SESSIONS are still open, the one
        unused the longest, but never a busy one (Session.busy): its client sees 404 and initializes again (spec
        2025-11-25, basic/transports, "Session Management"), and no client can hold every other out by opening
        sessions, nor end another's work. Whether there is room for one more."""
        now = time.monotonic()
        idle = []
        with self.sessions_lock:
            for sid, session in self.sessions.items():  # the least recently used first
                if now - session.used <= SESSION_IDLE_S and len(self.sessions) - len(idle) < MAX_SESSIONS:
                    break
                if not session.busy:
                    idle.append(sid)
            for sid in idle:
                self.sessions.pop(sid).standing.done.set()
            return len(self.sessions) < MAX_SESSIONS

    def started(self, handler: EndpointHandler):
        """handler's POST came whole: no deadline; served from now on (long, past LONG_S)."""
        with self.lock:
            self.arriving.pop(handler.connection, None)
            self.serving[handler] = time.monotonic()
            self.look_by(self.serving[handler] + WATCH_S)  # from now on it looks every WATCH_S (next_look)

    def stream_opened(self, handler: EndpointHandler, gives_way: bool):
        """handler holds a stream open from now on: a listen stream or a standing GET stream, which gives way to
        calls past MAX_LONG, or a GET carrying a resumed request's stream, which is that request's."""
        with self.lock:
            self.open_streams[handler] = gives_way
            self.look_by(time.monotonic())  # one look now: with no POST served, the share changes only as streams open

    def finished(self, handler: EndpointHandler):
        """handler's request was served, or never came whole."""
        with self.lock:
            self.serving.pop(handler, None)
            self.open_streams.pop(handler, None)

    def next_look(self, now: float) -> float:
        """HttpServer's, and every WATCH_S while a POST is served: a standing stream alone keeps nobody awake."""
        return min(super().next_look(now), now + WATCH_S) if self.serving else super().next_look(now)

    def look(self, now: float):
        """HttpServer's look, then keep the long requests and streams within MAX_LONG: streams give way to calls."""
        super().look(now)
        with self.lock:
            long = [handler for handler, since in self.serving.items()  # oldest first
                    if now - since > LONG_S and not handler.streaming]
            streams = list(self.open_streams.items())  # oldest first
        # On loopback every peer has the same address, so the policy is by kind, not by peer. Calls come first: a
        # call's answer is the work, and a stream that gives way loses nothing (a standing GET stream is resumed
        # from its events kept; a listen stream gets its graceful end). Past the share, the streams that can give
        # way do, the one held longest first; calls (long POSTs, and GETs carrying a resumed call's stream) are
        # stopped only past the share by themselves, the newest first. One stopped but still running (its tool
        # heeds no cancel) holds its connection still, so it counts.
        yielding = [handler for handler, gives_way in streams if gives_way]
        calls = len(long) + len(streams) - len(yielding)
        for handler in yielding[:max(0, len(yielding) + calls - MAX_LONG)]:
            handler.giving_way = True  # its own thread ends it, within 0.25 s: the watchdog waits for no client
        for handler in long[max(0, MAX_LONG - (len(streams) - len(yielding))):]:
            handler.stop()

    def server_close(self):
        if hasattr(self.mcp, "end_listening"):  # mcp_full's: each listen stream gets its response before the end
            for mcp in [self.mcp, *self.granted_servers.values()]:
                mcp.end_listening()
        super().server_close()


def http_server(mcp, host: str = "127.0.0.1", port: int = 0, allowed_hosts=LOCAL_NAMES, verifier=None,
                authorization_servers=(), scopes: dict | None = None, resource: str | None = None) -> Endpoint:
    """A Streamable HTTP server at /mcp. Call serve_forever().

    mcp is mcp_full's MCPServer, whose catalog every session shares: it answers the stateless requests itself,
    and each handshake session is served by an mcp.share_catalog(). Or mcp is a factory, mcp() making each
    session's server afresh, with its own catalog (mcp_min's lab: http_server(make_lab_server)).

    Threads: one a connection (http.server's), which reads a POST, runs MCPServer.handle, and writes the
    events the request sends as they happen, then its response; and the watchdog, which cuts a connection
    whose request is late and stops the newest long POSTs past MAX_LONG.

    With a verifier (mcp_auth's), every request carries a token it verifies, for this server's resource URI
    (resource, or http://host:port/mcp); the Protected Resource Metadata at METADATA_PATH names
    authorization_servers. scopes maps each scope to the tools it grants: a token's scopes make the allow-list
    of its requests (without scopes, a valid token allows what the server allows).
    """
    return Endpoint((host, port), mcp, allowed_hosts, verifier, authorization_servers, scopes, resource)


class Diagnoses(io.TextIOBase):
    """stderr while serving HTTP: each whole line written at once, or dropped if the pipe is full, so that a host that
    never reads stderr costs diagnoses (mcp_min's say, a thread's traceback), never a request thread's wait."""

    def __init__(self, stderr):
        self.fd, self.pending, self.lock = stderr.fileno(), "", threading.Lock()
        stderr.flush()  # what the stderr before it holds goes first
        os.set_blocking(self.fd, False)

    def write(self, text: str) -> int:
        """Keep text; write every line it completes, dropping what the pipe has no room for."""
        with self.lock:
            self.pending += text
            # Up to the last line's end; all of it once it is longer than a pipe holds (a line that never ends).
            cut = len(self.pending) if len(self.pending) > 65536 else self.pending.rfind("\n") + 1
            data = memoryview(self.pending[:cut].encode("utf-8", "replace"))
            self.pending = self.pending[cut:]
            with contextlib.suppress(BlockingIOError):  # the pipe is full: the rest of these lines is dropped
                while data:
                    data = data[os.write(self.fd, data):]
        return len(text)

    def fileno(self) -> int:
        """The file descriptor written to."""
        return self.fd


def serve_http(mcp, host: str = "127.0.0.1", port: int = 8000, verifier=None, authorization_servers=(),
               scopes: dict | None = None, resource: str | None = None):
    """Serve Streamable HTTP at http://host:port/mcp until interrupted or terminated (the rest: as http_server's)."""
    try:
        httpd = http_server(mcp, host, port, verifier=verifier, authorization_servers=authorization_servers,
                            scopes=scopes, resource=resource)
    except OSError as exc:  # the port is taken, say: one line, not a traceback
        raise SystemExit(f"mcp_min: cannot serve http://{host}:{port}{MCP_PATH}: {exc.strerror}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a host's SIGTERM is a clean stop
    print(f"mcp_min: serving http://{host}:{httpd.server_address[1]}{MCP_PATH}", file=sys.stderr, flush=True)
    with contextlib.suppress(AttributeError, OSError, ValueError):  # a stderr with no file descriptor stays as it is
        sys.stderr = Diagnoses(sys.stderr)
    with httpd:
        try:
            httpd.serve_forever(poll_interval=ACCEPT_POLL_S)
        except KeyboardInterrupt:
            pass  # Ctrl-C: stop quietly


# ---- The client: HttpTransport, on kept-alive connections it reads by hand (HttpConnection) ----

class StreamCut(ConnectionError):
    """The server closed the connection before the body ended: an event stream with an id may be resumed."""


class Unauthorized(ConnectionError):
    """The server asks for authorization this client cannot give: none configured, or a step of it failed."""


class DeadlineSocketIO(socket.SocketIO):
    """A client socket's raw reads, each waiting only for what is left of its connection's deadline: a socket
    timeout bounds one recv, so a server sending a byte now and then would stretch it without end."""

    def __init__(self, sock: socket.socket, connection: "HttpConnection"):
        super().__init__(sock, "rb")
        self.sock, self.connection = sock, connection

    def readinto(self, buffer) -> int:
        """socket.SocketIO's, waiting no longer than the connection's deadline allows; TimeoutError past it."""
        left = self.connection.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the response did not come whole in {self.connection.timeout} s")
        self.sock.settimeout(min(left, self.connection.timeout))
        return super().readinto(buffer)


class HttpConnection:
    """One kept-alive HTTP/1.1 connection of a client, written and read by hand (RFC 9112), as the server reads
    its requests: a request leaves in one write; a response is its status, its headers, then its body, read
    whole or line by line as it arrives (an event stream comes in chunks)."""

    def __init__(self, address: tuple, timeout: float, tls: ssl.SSLContext | None = None):
        self.address, self.timeout, self.tls = address, timeout, tls  # tls: the context of an https connection
        host = f"[{address[0]}]" if ":" in address[0] else address[0]  # an IPv6 address is bracketed
        self.host = f"{host}:{address[1]}"  # the Host header of every request
        self.socket: socket.socket | None = None  # opened by the first request, and again once closed
        self.reader: io.BufferedReader | None = None  # the socket's file for reading
        self.status, self.headers = 0, {}  # the response being read: its status; lower-case name -> first value
        self.fields = {}  # and lower-case name -> every value (a WWW-Authenticate may come twice)
        self.left = 0  # bytes of the body (or of its current chunk) not read yet
        self.chunked = self.in_chunk = self.closing = False  # chunked; inside a chunk; Connection: close
        self.lines, self.split = collections.deque(), Lines()  # an event stream's lines read, not taken; its splitter
        self.deadline = float("inf")  # by when the response must have come whole (a listen stream: never)

    def request(self, method: str, path: str, headers: dict, body: bytes = b""):
        """Send a request whole, then read the response's status line and headers; its body is read next."""
        if self.closing or (self.socket and select.select([self.socket], [], [], 0)[0] and not self.still_open()):
            self.close()  # the server said Connection: close, or closed this idle connection (it reads as ready)
        if self.socket is None:
            self.connect()
        self.socket.settimeout(self.timeout)
        self.deadline = time.monotonic() + self.timeout  # the response's status, headers and body, all of it
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}",
                 *(f"{name}: {value}" for name, value in headers.items()), f"Content-Length: {len(body)}"]
        self.socket.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
        status = [b"", b"100"]
        while status[1].startswith(b"1"):  # an interim response (100 Continue), asked for or not: its final one follows
            status = self.reader.readline(MAX_HEADER_LINE + 1).split(b" ", 2)
            if len(status) < 2 or not status[0].startswith(b"HTTP/1.") or not status[1].isdigit():
                raise ConnectionError(f"not an HTTP response: {b' '.join(status)[:80]!r}")  # b"": the server closed
            try:
                fields = read_head(self.reader)
            except ValueError as exc:
                raise ConnectionError(f"a malformed response head: {exc.args[1]}")
        self.status, self.headers = int(status[1]), {name: values[0] for name, values in fields.items()}
        self.fields = fields
        self.chunked, self.in_chunk = "chunked" in self.headers.get("transfer-encoding", "").lower(), False
        self.closing = self.headers.get("connection", "").lower() == "close"
        length = self.headers.get("content-length", "0")
        if not length.isdigit():
            raise ConnectionError(f"Content-Length {length!r} is not a number")
        if int(length) > MAX_MESSAGE_BYTES:
            self.closing = True  # its body is never read: the connection cannot carry another request
            raise ConnectionError(f"the response's body of {length} bytes is over {MAX_MESSAGE_BYTES} bytes "
                                  "(MAX_MESSAGE_BYTES), the largest message")
        self.left = 0 if self.chunked else int(length)
        self.lines, self.split = collections.deque(), Lines(MAX_MESSAGE_BYTES + len("data: \r"))  # with its field name

    def connect(self):
        """Open the connection: TCP, then for https TLS, whose context checks the certificate and the host name."""
        plain = socket.create_connection(self.address, timeout=self.timeout)  # (the handshake's bound too)
        plain.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle delay
        try:  # a failed handshake closes the socket
            self.socket = self.tls.wrap_socket(plain, server_hostname=self.address[0]) if self.tls else plain
        except ssl.SSLCertVerificationError as exc:
            raise ConnectionError(f"TLS: the certificate of {self.host} failed verification: {exc.verify_message}")
        except ssl.SSLError as exc:
            raise ConnectionError(f"TLS: the handshake with {self.host} failed: {exc.strerror or exc}")
        self.reader = io.BufferedReader(DeadlineSocketIO(self.socket, self))

    def still_open(self) -> bool:
        """Whether an idle connection that reads as ready is open still: a plain one is not (the server closed it, or
        sent what nobody asked for); a TLS one is if what came holds no data, as a TLS 1.3 session ticket after the
        handshake (RFC 8446, 4.6.1), which this read takes in, and then wants more."""
        if not isinstance(self.socket, ssl.SSLSocket):
            return False
        self.socket.setblocking(False)  # (request sets the timeout again)
        try:
            self.socket.recv(1)  # b"": the end (close_notify or not); data: what nobody asked for
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return True
        except OSError:
            pass  # reset, or a TLS alert
        return False

    @property
    def is_event_stream(self) -> bool:
        """Whether the response's body is an event stream (text/event-stream), read event by event."""
        return self.headers.get("content-type", "").startswith("text/event-stream")

    def more(self) -> bool:
        """Whether the body holds more: for a chunked body, move on to its next chunk, if any (RFC 9112, 7.1)."""
        if self.left or not self.chunked:
            return self.left > 0
        if self.in_chunk:
            self.reader.readline(3)  # the CRLF after a chunk's data
        line = self.reader.readline(MAX_HEADER_LINE + 1)
        if not line:
            raise StreamCut("the server closed the connection before the body ended")
        size = line.split(b";")[0].strip()  # hex digits, then extensions
        if not size or size.strip(b"0123456789abcdefABCDEF"):
            raise ConnectionError(f"not a chunk size: {size[:20]!r}")
        self.left, self.in_chunk = int(size, 16), True
        if self.left == 0:  # the last chunk: then trailer lines, up to an empty one
            while self.reader.readline(MAX_HEADER_LINE + 1) not in (b"\r\n", b"\n", b""):
                pass
            self.chunked = self.in_chunk = False
        return self.left > 0

    def read(self) -> bytes:
        """The rest of the body; a ConnectionError once it is over MAX_MESSAGE_BYTES, the largest message."""
        pieces, size = [], 0
        while self.more():
            pieces.append(self.take(self.reader.read(min(self.left, 1 << 20))))
            size += len(pieces[-1])
            if size > MAX_MESSAGE_BYTES:
                self.closing = True  # a chunked body has no length to refuse up front: it is cut here
                raise ConnectionError(f"the response's body is over {MAX_MESSAGE_BYTES} bytes (MAX_MESSAGE_BYTES), "
                                      "the largest message")
        return b"".join(pieces)

    def read_line(self) -> bytes | None:
        """The body's next line, its newline left out (None at the body's end): an event stream is read line by line,
        across its chunks; a line over MAX_MESSAGE_BYTES (the largest message, with its field name) is a
        ConnectionError, not memory without end."""
        while not self.lines:
            if not self.more():
                self.lines.extend(self.split.end())
                return self.lines.popleft() if self.lines else None
            self.lines.extend(self.split.feed(self.take(self.reader.read1(min(self.left, 1 << 16)))))
            if self.split.skipping or None in self.lines:
                self.closing = True
                raise ConnectionError(f"a line of the event stream is over {MAX_MESSAGE_BYTES} bytes (MAX_MESSAGE_BYTES), "
                                      "the largest message")
        return self.lines.popleft()

    def take(self, data: bytes) -> bytes:
        """Count data read from the body; the server closing before the body ends is a ConnectionError."""
        if not data:
            raise StreamCut("the server closed the connection before the body ended")
        self.left -= len(data)
        return data

    def close(self):
        """Close the connection; the next request opens a new one."""
        if self.socket is not None:
            self.reader.close()
            self.socket.close()
        self.socket = self.reader = None
        self.closing = False


class NewestKept(queue.Queue):
    """A queue that never blocks its producer: past MAX_KEPT_NOTIFICATIONS it forgets the oldest (a flood keeps the newest)."""

    def _init(self, maxsize: int):
        self.queue = collections.deque(maxlen=MAX_KEPT_NOTIFICATIONS)  # queue.Queue's storage, bounded


def refused(status: int, incoming: dict) -> bool:
    """Whether an HTTP error status came with a JSON-RPC error: the answer to the POST's one request, whatever its id
    (a server that refuses a request before reading it answers id null: JSON-RPC 2.0, section 5)."""
    return status >= 400 and "error" in incoming


class HttpTransport(Transport):
    """The client's side of Streamable HTTP: one POST a message, on one kept-alive connection.

        transport = HttpTransport("http://127.0.0.1:8000/mcp", trace=print_trace)
    It keeps Mcp-Session-Id and MCP-Protocol-Version, and reads JSON or event-stream responses, event
    by event as they arrive: a question from the server is answered with a POST of its own, on a second
    connection, while the first still streams. An event stream that ends before its response is resumed:
    the client waits the retry it was told and reconnects with GET and Last-Event-ID. Once a session is
    initialized it opens the session's standing stream (a GET), if the server offers one, and a thread reads
    it: the server's questions there are answered at once, its notifications kept for drain().

        transport = HttpTransport("https://example.com/mcp", tls=ssl.create_default_context(cafile="ca.pem"))
    An https URL's connections speak TLS: the server's certificate must chain to a trusted authority and name
    the URL's host, as tls (a context of the caller's, for a private authority) or the system's defaults say.
    """

    def __init__(self, url: str, trace=None, timeout: float = 30.0, auth=None, tls: ssl.SSLContext | None = None):
        super().__init__(trace)
        self.url, self.auth = url, auth  # auth: headers(url) and challenge(url, status, header), as OAuthClient's
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"{url!r}: an MCP endpoint's URL starts http:// or https://")
        if tls is not None and parts.scheme != "https":
            raise ValueError(f"{url!r}: a TLS context is for an https:// URL, and this one is plain http")
        https = parts.scheme == "https"
        if https and tls is None:
            tls = ssl.create_default_context()  # the system's authorities, loaded once for all its connections
        self.address, self.tls = (parts.hostname, parts.port or (443 if https else 80)), tls
        self.path, self.timeout = parts.path or "/", timeout
        self.connection = self.new_connection()
        self.side_connection: HttpConnection | None = None  # opened the first time the server asks something mid-stream
        self.listen_connection: HttpConnection | None = None  # the open subscriptions/listen stream's own connection
        self.standing_connection: HttpConnection | None = None  # the session's standing GET stream's, while open
        self.aside = threading.Lock()  # the side connection is shared by the caller's thread and the standing stream's
        self.arrived = NewestKept()  # what the listen and standing streams brought, not handed over yet
        self.session_id = self.protocol_version = None
        self.tool_schemas = {}  # name -> inputSchema, for the tools whose arguments travel in headers too

    def new_connection(self) -> HttpConnection:
        """A new HTTP/1.1 connection to the server (opened on first use)."""
        return HttpConnection(self.address, self.timeout, self.tls)

    def headers_for(self, message: dict) -> dict:
        """The headers of a POST: what 2026-07-28 repeats from the body, or the session's."""
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        name = (message.get("params") or {}).get("name")
        called = message.get("method") == "tools/call" and isinstance(name, str)
        schema = self.tool_schemas.get(name) if called else None
        repeated = repeated_headers(message, schema)
        if repeated is not None:  # stateless: the headers repeat what the body says
            headers |= {header: header_value(header_text_of(value)) for header, value in repeated.items()
                        if value is not None}
        elif self.session_id and message.get("method") != "initialize":  # a new session's initialize names none
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.protocol_version}
        if self.auth is not None:
            headers |= self.auth.headers(self.url)
        return headers

    def send(self, message: dict) -> dict | None:
        """POST one message: 202 means no response; a JSON body or an event stream holds the response."""
        deadline = time.monotonic() + self.timeout
        named = self.headers_for(message).get("Mcp-Session-Id")
        try:
            self.post(self.connection, message)
            if self.connection.status in (401, 403):
                self.authorized(message)
            if self.connection.status == 404 and named and not is_notification(message):
                self.connection.read()
                self.forget_session()
                raise SessionExpired(f"HTTP 404: the server has forgotten session {named} (it ended, or made room)")
            self.session_id = self.connection.headers.get("mcp-session-id") or self.session_id
            if self.connection.status == 202 or is_notification(message):
                self.connection.read()
                if message.get("method") == "notifications/initialized" and self.session_id:
                    self.open_standing_stream()
                return None
            return self.response_to(message, self.connection, deadline)
        except RPCError:
            self.connection.close()  # the rest of a body that cannot be read is not read: start afresh
            raise
        except SessionExpired:
            raise
        except OSError as exc:
            self.connection.close()  # the next POST starts on a fresh connection; closing is the 2026 cancel
            if isinstance(exc, TimeoutError) and self.session_id and not is_notification(message):
                self.post_aside(notification("notifications/cancelled", {"requestId": message["id"],
                                                                          "reason": f"no response in {self.timeout} s"}))
            if isinstance(exc, TimeoutError):
                raise TimeoutError(f"no response to {message['method']} (id {message['id']}) in {self.timeout} s")
            if type(exc) is ConnectionError or isinstance(exc, Unauthorized):  # already says what went wrong
                raise
            raise ConnectionError(f"HTTP: {exc!r}") from exc

    def authorized(self, message: dict):
        """Answer the server's refusals of message, each by asking auth for a token and sending it again, up to
        MAX_AUTHORIZATIONS times (2025-11-25, basic/authorization, "Scope Challenge Handling": a retry limit): a 401,
        and a 403 whose challenge is insufficient_scope. A refusal that cannot be answered is Unauthorized."""
        for tries in range(MAX_AUTHORIZATIONS + 1):
            status = self.connection.status
            challenge = ", ".join(self.connection.fields.get("www-authenticate", []))
            if status != 401 and not (status == 403 and "insufficient_scope" in challenge):
                return
            self.connection.read()
            self.traced("←", {"status": status, "www-authenticate": challenge})  # what the steps that follow answer
            if self.auth is None:
                raise Unauthorized(f"HTTP {status}: the server asks for authorization (WWW-Authenticate: "
                                   f"{challenge or 'none'}), and this client has none: HttpTransport(url, auth=...)")
            if tries == MAX_AUTHORIZATIONS:
                raise Unauthorized(f"HTTP {status}: {message['method']} still refused after {MAX_AUTHORIZATIONS} "
                                   f"authorizations (MAX_AUTHORIZATIONS): {challenge}")
            self.auth.challenge(self.url, status, challenge)
            self.post(self.connection, message)

    def response_to(self, message: dict, connection: HttpConnection, deadline: float) -> dict:
        """The response to message, from the body on connection (resumed, if its event stream ends early); a body
        that ends without it is a ConnectionError: the request gets no response (it was cancelled, say)."""
        cursor = {}
        for incoming in self.resumed(connection, deadline, (StreamCut, ConnectionResetError), cursor=cursor):
            if not isinstance(incoming, dict):
                continue  # not a message at all
            if "method" not in incoming and (same_id(incoming.get("id"), message["id"])
                                             or refused(connection.status, incoming)):
                if cursor["resumes"]:
                    connection.close()  # a resumed stream may stay open after its response
                else:
                    connection.read()  # the rest of the body, so that the connection can carry the next POST
                return self.received_response(message, incoming)
            reply = self.receive(incoming)
            if reply is not None:
                self.post_aside(reply)
        raise ConnectionError(f"HTTP {connection.status}: the body held no response to {message['method']}")

    def resumed(self, connection: HttpConnection, deadline: float, cut: tuple, traced: bool = True, cursor=None):
        """The messages of the body on connection, each as it arrives. An event stream that ends early, having given an
        event id, is resumed (spec 2025-11-25, basic/transports, "Resumability and Redelivery") if its connection was
        cut (an error of cut), or if it ended after a retry field (a server SHOULD send one before it closes the
        connection, not the stream): after the retry, with GET and Last-Event-ID, up to MAX_RESUMES times in a row
        that bring nothing new (a stream that goes on after each end is followed however often it ends). A stream
        that ends with neither is over, and so is one on a connection this transport let go of (close). A GET
        refused 503 (the server is busy) is tried again after the retry, as one more reconnection."""
        cursor = {} if cursor is None else cursor  # the stream's last event id and retry, and how often it was resumed
        cursor["resumes"] = reconnections = 0
        while True:
            stopped, resumed_after = False, cursor.get("id")
            try:
                yield from self.messages(connection, deadline, traced, cursor)
            except cut:
                if "id" not in cursor:
                    raise
                stopped = True
            if "id" not in cursor or not (stopped or "retry" in cursor) or connection not in (
                    self.connection, self.standing_connection):
                return
            connection.close()
            if cursor["id"] != resumed_after:
                reconnections = 0  # the stream went on: only failures in a row count against MAX_RESUMES
            resumed = False
            while not resumed:
                if reconnections == MAX_RESUMES:
                    raise ConnectionError(f"the event stream ended {MAX_RESUMES + 1} times in a row, bringing nothing new")
                reconnections += 1
                self.wait_retry(cursor, deadline)
                resumed = self.resume(connection, cursor["id"], deadline)
            cursor["resumes"] += 1

    def wait_retry(self, cursor: dict, deadline: float):
        """Wait before reconnecting: the retry the stream gave (a client MUST, 2025-11-25), bounded by RETRY_CAP_S."""
        wait = min(cursor.get("retry", RETRY_MS) / 1000, RETRY_CAP_S)
        if time.monotonic() + wait > deadline:
            raise TimeoutError("the stream's retry would outlast the timeout")
        time.sleep(wait)

    def get(self, connection: HttpConnection, last_event_id: str | None = None):
        """GET the session's standing stream, or resume a stream after last_event_id, on connection; the response's
        head read, its body not yet."""
        headers = {"Accept": "text/event-stream"}
        if self.auth is not None:
            headers |= self.auth.headers(self.url)
        if self.session_id:
            headers |= {"Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": self.protocol_version}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        connection.request("GET", self.path, headers)

    def resume(self, connection: HttpConnection, last_event_id: str, deadline: float) -> bool:
        """Reconnect to a stream with GET and Last-Event-ID: its response, carrying what the stream sent since, is read
        on connection from now on (its head within the timeout; its body by deadline). False if the server is busy
        (503): the stream is still there, to resume a moment later."""
        connection.timeout = max(0.01, min(deadline - time.monotonic(), self.timeout))
        try:
            self.get(connection, last_event_id)
        finally:
            connection.timeout = self.timeout
        if connection.status != 200 or not connection.is_event_stream:
            body = connection.read()[:200].decode(errors="replace")
            connection.close()
            if connection.status == 503:
                return False
            raise ConnectionError(f"HTTP {connection.status}: resuming the stream after {last_event_id} failed: {body}")
        connection.deadline = deadline
        return True

    def open_standing_stream(self):
        """GET the session's standing stream (2025-11-25, "Listening for Messages from the Server"): 405 means the
        server offers none. Its head is read here, so that the server has it before the next request."""
        connection = self.new_connection()
        try:
            self.get(connection)
            if connection.status != 200 or not connection.is_event_stream:
                connection.read()
                connection.close()
                return  # 405: not offered; anything else: no stream, and the session works without it
        except OSError:
            connection.close()
            return
        connection.deadline = float("inf")  # it may be quiet as long as the session lasts (each read waits timeout)
        self.standing_connection = connection
        threading.Thread(target=self.read_standing, args=(connection,), daemon=True).start()

    def read_standing(self, connection: HttpConnection):
        """The standing stream's thread: answer each request at once, keep each notification (resumed as a POST's
        stream is, OSError and all); stop when the client closes it."""
        try:
            for incoming in self.resumed(connection, float("inf"), (OSError, ValueError, AttributeError), traced=False):
                if not isinstance(incoming, dict) or "method" not in incoming:
                    continue  # a response belongs on the stream of its request
                if "id" not in incoming:
                    self.arrived.put(incoming)  # handed over (and traced) by drain(), on the caller's thread
                    continue
                reply = self.receive(self.traced("←", incoming))
                if reply is not None:
                    self.post_aside(reply)
        except (OSError, ValueError, AttributeError):
            pass  # closed by us (close), or a resumption failed: the session works without the stream

    def received_response(self, message: dict, reply: dict) -> dict:
        """Learn what a response teaches the transport (the version, the tools' header annotations); return it.

        Only what can travel in a header is learnt: what else the result holds, MCPClient judges.
        """
        result = reply.get("result")
        if message["method"] == "initialize" and isinstance(result, dict):
            version = result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) and re.fullmatch(r"[!-~]+", version) else None
        if message["method"] == "tools/list" and isinstance(result, dict) and isinstance(result.get("tools"), list):
            self.learn_headers(result)
        return reply

    def post(self, connection: HttpConnection, message: dict):
        """Send one POST on connection; its response's status and headers read, its body not yet."""
        connection.request("POST", self.path, self.headers_for(message), to_json(self.traced("→", message), LENIENT).encode())

    def post_aside(self, message: dict):
        """POST a message on the side connection, while the main one is busy streaming (202 expected)."""
        with self.aside:
            self.side_connection = self.side_connection or self.new_connection()
            try:
                self.post(self.side_connection, message)
                self.side_connection.read()
            except OSError:
                self.side_connection.close()

    def messages(self, connection: HttpConnection, deadline: float, traced: bool = True, cursor: dict | None = None):
        """The messages of the response body on connection, each as it arrives: one JSON body, or an event stream's
        events (cursor, if given, keeps the stream's last event id and retry, in milliseconds)."""
        if not connection.is_event_stream:
            body = connection.read()
            try:
                yield self.traced("←", parse(body))  # invalid UTF-8 and deep nesting too: -32700, as a server says
            except RPCError as exc:
                if 200 <= connection.status < 300:
                    raise RPCError(exc.code, f"the response body is not JSON ({exc.message})")
                raise ConnectionError(f"HTTP {connection.status}: {body[:200].decode(errors='replace')}")
            return
        data, size = [], 0  # the event's data lines so far, and their length
        while True:
            if deadline != float("inf"):
                connection.socket.settimeout(max(0.01, deadline - time.monotonic()))  # the whole wait is bounded
            line = connection.read_line()
            if line is None:
                return
            line = line.decode("utf-8", "replace").rstrip("\r")
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")  # one space after the colon is not the value's (WHATWG, SSE)
            if field == "data":
                data.append(value)
                size += len(value)
                if size > MAX_MESSAGE_BYTES:  # an event of many data lines: the same bound
                    raise ConnectionError(f"an event of the stream is over {MAX_MESSAGE_BYTES} bytes (MAX_MESSAGE_BYTES), "
                                          "the largest message")
            elif field == "id" and "\0" not in value and cursor is not None:
                cursor["id"] = value  # the id a reconnection names in Last-Event-ID (an event without data sets it too)
                if not value:
                    del cursor["id"]  # an empty id resets it: there is nothing to name (WHATWG, SSE)
            elif field == "retry" and value.isascii() and value.isdigit() and cursor is not None:
                cursor["retry"] = int(value)
            elif not line and data:
                text, data, size = "\n".join(data), [], 0
                if not text.strip():
                    continue  # an event with empty data (a priming event with only an id and a retry): no message
                try:
                    message = parse(text.encode())
                except RPCError as exc:
                    raise RPCError(exc.code, f"an event of the stream is not JSON ({exc.message}): {text[:80]!r}")
                yield self.traced("←", message) if traced else message

    def listen(self, message: dict) -> dict:
        """Open a subscriptions/listen stream on a connection of its own; its acknowledgement (or error).

        A thread then reads the stream, keeping its notifications for _pump_notifications.
        """
        self.listen_connection = self.new_connection()
        self.post(self.listen_connection, message)
        self.listen_connection.deadline = float("inf")  # the stream lasts as long as it lasts; each read waits timeout
        incoming = self.messages(self.listen_connection, float("inf"), traced=False)
        first = self.traced("←", next(incoming, None))
        if not isinstance(first, dict) or first.get("method") != "notifications/subscriptions/acknowledged":
            return first  # an error response, or nothing MCPClient.listen can take for an acknowledgement
        threading.Thread(target=self.read_listening, args=(incoming,), daemon=True).start()
        return first

    def read_listening(self, incoming):
        """The listen stream's thread: keep each message that arrives for drain()."""
        try:
            for later in incoming:
                if isinstance(later, dict):
                    self.arrived.put(later)  # handed over (and traced) by drain(), on the caller's thread
        except (OSError, ValueError, AttributeError, RPCError):
            pass  # the stream was closed (by us, stop_listening, or by the server), or sent what is not JSON

    def drain(self) -> list:
        """The notifications received so far, those of the listen stream included, handed over once."""
        while not self.arrived.empty():
            self.receive(self.traced("←", self.arrived.get()))
        return super().drain()

    def cancel(self, message: dict, reason: str):
        """Cancel the listen stream: over HTTP, closing the stream is the cancel (2026-07-28)."""
        if self.listen_connection:
            try:
                self.listen_connection.socket.shutdown(socket.SHUT_RDWR)
            except (OSError, AttributeError):
                pass
            self.listen_connection.close()
            self.listen_connection = None

    def learn_headers(self, result: dict):
        """Keep each listed tool's x-mcp-header annotations, and drop a tool whose annotations are invalid.

        An HTTP client must mirror annotated arguments as Mcp-Param-{Name} headers, and must leave out of
        tools/list a tool it cannot mirror (2026-07-28, Streamable HTTP, "Custom Headers").
        """
        valid = []
        for tool in result.get("tools", []):
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                valid.append(tool)  # not a tool: MCPClient says so
                continue
            try:
                if header_paths(tool.get("inputSchema", {})):
                    self.tool_schemas[tool["name"]] = tool["inputSchema"]
                valid.append(tool)
            except ValueError as exc:
                say(f"mcp_min: tool {tool.get('name')!r} left out: {exc}")
        result["tools"] = valid

    def close_standing(self):
        """Close the session's standing stream, if open (its thread sees it closed, and does not reconnect)."""
        standing, self.standing_connection = self.standing_connection, None
        if standing:
            with contextlib.suppress(OSError, AttributeError):
                standing.socket.shutdown(socket.SHUT_RDWR)
            standing.close()

    def forget_session(self):
        """The server has forgotten the session: close its standing stream, and name it no more."""
        self.close_standing()
        self.session_id = None

    def close(self):
        """End the session with DELETE, then close the connections."""
        if self.listen_connection:
            self.cancel({}, "closing")
        self.close_standing()
        if self.session_id:
            try:
                headers = self.auth.headers(self.url) if self.auth is not None else {}
                self.connection.request("DELETE", self.path, {"Mcp-Session-Id": self.session_id, **headers})
                self.connection.read()
            except OSError:
                pass  # the server has gone already
            self.session_id = None
        self.connection.close()
        if self.side_connection:
            self.side_connection.close()
