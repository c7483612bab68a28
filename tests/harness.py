"""What the tests share to run a server and reach it: the project's folder, one deadline for every wait, raw pipes
and raw HTTP, an HTTP endpoint in a thread, and a client on each transport.

Every wait is bounded (TIMEOUT), every socket is on 127.0.0.1, every child process is ended.
"""

import contextlib
import http.client
import json
import os
import pathlib
import re
import select
import socket
import subprocess
import sys
import threading
import time
import types

import mcp_full
import mcp_http
import mcp_stdio
import server_demo
from mcp_full import notification, request, response
from sample_servers import META, asking_server, notes_server

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in tests/)
PYTHON = sys.executable
DEMO = [PYTHON, str(HERE / "server_demo.py")]
TAP = [PYTHON, str(HERE / "tap.py")]
TIMEOUT = 10  # seconds: the most any single wait of a test may take
KINDS = ["memory", "stdio", "http"]


def text_result(text: str) -> dict:
    """A tools/call result holding one text block."""
    return {"content": [{"type": "text", "text": text}]}


def initialize_request(id: int = 1, name: str = "mcp_min") -> dict:
    """The initialize request MCPClient sends for 2025-06-18."""
    return request(id, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": name, "version": "0.1.0"}})


# ---- raw pipes ----

def line(message) -> bytes:
    """One message as the wire carries it over stdio: compact JSON and a newline."""
    return json.dumps(message).encode() + b"\n"


def pong(id: int) -> dict:
    """The answer to ping(id)."""
    return response(id, {})


class LinePipe:
    """A child process spoken to in raw lines: every read has a deadline."""

    def __init__(self, command: list | None = None, stderr=None, files: tuple = ()):
        """A child running command; or, given files (its stdin, its stdout), a server served in this process."""
        if files:
            self.process = types.SimpleNamespace(stdin=files[0], stdout=files[1])
        else:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, cwd=HERE)
        self.buffer = b""

    def write(self, data: bytes):
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def read_line(self) -> bytes:
        """The next whole line the child wrote (newline included), or TimeoutError."""
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.buffer:
            remaining = deadline - time.monotonic()
            fd = self.process.stdout.fileno()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError(f"no line within {TIMEOUT} s; so far {self.buffer!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError(f"the child closed its stdout; so far {self.buffer!r}")
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(b"\n")
        return head + b"\n"

    def close(self) -> int:
        """Close stdin and wait for the exit code; kill the child if it outstays TIMEOUT."""
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=TIMEOUT)
        finally:
            self.process.kill()  # a no-op once it has exited
            self.process.wait()
            self.process.stdout.close()


def wait_until(condition, what: str, seconds: float = TIMEOUT):
    """Poll condition() until it is true, or fail after seconds (TIMEOUT)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.01)


def stderr_line(process: subprocess.Popen, silence: str, stream: str = "stderr", bound: float = TIMEOUT) -> str:
    """The next line on process's stderr (or its stdout) within bound seconds, read a byte at a time from its file descriptor.

    readline() on the buffered pipe may read the lines after this one too, and keep them where select()
    cannot see them: the wait for the next line would then time out with that line already read.
    """
    fd, line, deadline = getattr(process, stream).fileno(), b"", time.monotonic() + bound
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            raise TimeoutError(f"{silence}; so far {line!r}")
        byte = os.read(fd, 1)
        if not byte:
            raise EOFError(f"{silence}: the process closed its stderr; so far {line!r}")
        line += byte
    return line.decode()


# ---- HTTP: an endpoint in a thread, requests on a kept-alive connection ----

@contextlib.contextmanager
def http_endpoint(factory=server_demo.make_server):
    """mcp_http.http_server on a free loopback port, served in a thread; yields the port, then shuts down."""
    httpd = mcp_http.http_server(factory, port=0)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=TIMEOUT)


def connection(port: int) -> http.client.HTTPConnection:
    """A kept-alive HTTP/1.1 connection to the loopback server."""
    return http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)


def exchange(conn: http.client.HTTPConnection, message=None, headers: dict | None = None, verb: str = "POST",
             path: str = "/mcp", body: bytes | None = None):
    """One HTTP request on conn: (status, response headers, body bytes)."""
    if message is not None:
        body = json.dumps(message).encode()
    conn.request(verb, path, body, {"Content-Type": "application/json",
                                    "Accept": "application/json, text/event-stream", **(headers or {})})
    reply = conn.getresponse()
    return reply.status, reply.headers, reply.read()


def open_session(conn: http.client.HTTPConnection) -> str:
    """initialize then notifications/initialized over raw HTTP; the Mcp-Session-Id."""
    status, headers, body = exchange(conn, initialize_request(name="raw-http"))
    assert (status, json.loads(body)["result"]["protocolVersion"]) == (200, "2025-06-18")
    session = headers["Mcp-Session-Id"]
    status, _, body = exchange(conn, notification("notifications/initialized"), {"Mcp-Session-Id": session})
    assert (status, body) == (202, b"")
    return session


def event_stream(body: bytes) -> list:
    """The messages of a text/event-stream body, read independently of mcp_min.sse_messages."""
    messages = []
    for event in body.decode().split("\n\n"):
        data = [text[len("data: "):] for text in event.split("\n") if text.startswith("data: ")]
        if data:
            messages.append(json.loads("\n".join(data)))
    return messages


def stateless(id: int, method: str, params: dict | None = None, meta: dict | None = None):
    """A 2026-07-28 request and the headers that agree with it: (message, headers)."""
    message = request(id, method, {**(params or {}), "_meta": META if meta is None else meta})
    headers = {"MCP-Protocol-Version": message["params"]["_meta"].get("io.modelcontextprotocol/protocolVersion", ""),
               "Mcp-Method": method}
    if method in ("tools/call", "prompts/get"):
        headers["Mcp-Name"] = message["params"]["name"]
    return message, headers


# ---- a client on each transport ----

SERVED = f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(HERE / 'tests')!r}]; import mcp_stdio, sample_servers; "
SERVERS = {  # name: (what makes one in this process, the command that serves one over stdio)
    "demo": (server_demo.make_server, DEMO),
    "notes": (notes_server, [PYTHON, "-c", SERVED + "mcp_stdio.serve_stdio(sample_servers.notes_server())"]),
    "asking": (lambda: asking_server([]), [PYTHON, "-c", SERVED + "mcp_stdio.serve_stdio(sample_servers.asking_server([]))"]),
}


@contextlib.contextmanager
def connected(kind: str, server: str = "demo", **client_options):
    """An MCPClient on a fresh server over the named transport, and the (direction, message) list its trace fills."""
    wire = []

    def trace(direction, message):
        wire.append((direction, message))

    factory, command = SERVERS[server]
    if kind == "memory":
        yield mcp_full.MCPClient(mcp_full.InMemoryTransport(factory(), trace=trace), **client_options), wire
    elif kind == "stdio":
        transport = mcp_stdio.StdioTransport(command, timeout=TIMEOUT)
        # A ping, left off the trace, first: the child is up and reading before the test begins, so that the
        # probe connect() sends (a third of TIMEOUT) times the server's answer, not its start (a second or two
        # for a server that imports pytest, on a loaded machine).
        assert transport.send(request(0, "ping")) == response(0, {})
        transport.trace = trace
        try:
            yield mcp_full.MCPClient(transport, **client_options), wire
        finally:
            exit_code = transport.close()
        assert exit_code == 0  # reached only when the test itself passed
    else:
        with http_endpoint(factory) as port:
            transport = mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", trace=trace, timeout=TIMEOUT)
            try:
                yield mcp_full.MCPClient(transport, **client_options), wire
            finally:
                transport.close()


# ---- raw HTTP: bytes on a fresh connection, a server that answers from a script ----

def raw(port: int, data: bytes, read: bool = True) -> bytes:
    """Send raw bytes on a fresh connection; what the server sends back before it closes (or TIMEOUT)."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
        conn.sendall(data)
        received = b""
        while read:
            chunk = conn.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


@contextlib.contextmanager
def scripted_http(*answers: bytes):
    """A server that answers each request (head and body read) with the next of answers, written in pieces of 7
    bytes; it closes the connection after an answer that says Connection: close, and after the last: yields
    (port, the connections opened)."""
    listener = socket.create_server(("127.0.0.1", 0))
    opened = []

    def serve():
        pending = list(answers)
        while pending:
            conn, _ = listener.accept()
            opened.append(conn)
            reader = conn.makefile("rb")
            while pending:
                head = b"".join(iter(lambda: reader.readline(), b"\r\n"))
                reader.read(int(re.search(rb"Content-Length: (\d+)", head).group(1)))
                answer = pending.pop(0)
                try:
                    for at in range(0, len(answer), 7):  # lines and chunks arrive cut anywhere
                        conn.sendall(answer[at:at + 7])
                except (ConnectionResetError, BrokenPipeError):
                    break  # the client gave up on this answer (a line over its limit, say): the next connection
                if b"Connection: close" in answer:
                    break
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], opened
    finally:
        thread.join(TIMEOUT)
        listener.close()


def chunked(data: bytes, sizes=(1, 2, 5, 11, 3)) -> bytes:
    """data as a chunked body: chunks of the given sizes in turn (one with an extension), then trailers."""
    out, at, turn = b"", 0, 0
    while at < len(data):
        size = sizes[turn % len(sizes)]
        extension = b";note=1" if turn == 1 else b""
        out += b"%x%s\r\n%s\r\n" % (len(data[at:at + size]), extension, data[at:at + size])
        at, turn = at + size, turn + 1
    return out + b"0\r\nX-Checksum: none\r\n\r\n"

