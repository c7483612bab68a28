"""How fast mcp_min is, beside its floors and the official SDK, all measured in one run on one machine.

    python tools/bench.py             # the tables, in about six minutes
    python tools/bench.py --quick     # the same rows in seconds: fewer and shorter rounds
    python tools/bench.py --markdown  # measure, then rewrite docs/performance.md ("How fast")
    python tools/bench.py --check     # exit 1 if docs/performance.md's tables and the bench's rows differ
    python tools/bench.py --parse     # parse() against json.loads on the messages that stress its depth guard

A row's contenders (mcp_min, its floor, the SDK) take turns: each round runs every one of them once, the order
rotated between rounds. A cell is the median of the rounds with their range beside it, and a ratio is taken
round by round, so that the machine's swings (it is shared) fall on both sides of it alike. The official
SDK's rows and columns appear where `mcp` can be imported (pip install mcp==2.3.0); the bench itself needs
only the standard library. Before the HTTP rows are timed, every HTTP listener is checked for TCP_NODELAY on the
connections it accepts (Linux); rows with one that lacks it are refused, and the bench exits 1.
"""

import argparse
import contextlib
import ctypes
import errno
import gc
import json
import os
import pathlib
import platform
import re
import selectors
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in tools/)
sys.path.insert(0, str(HERE))

import mcp_full  # noqa: E402
import mcp_min  # noqa: E402
import mcp_http  # noqa: E402
import mcp_stdio  # noqa: E402
import server_demo  # noqa: E402
README = HERE / "docs" / "performance.md"  # the "How fast" page
MODULES = ["mcp_min.py", "mcp_full.py", "mcp_stdio.py", "mcp_http.py"]  # what a server of the project imports
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
ADD = {"name": "add", "arguments": {"x": 2, "y": 3}}
ADD_RESULT = {"content": [{"type": "text", "text": "5"}]}

# The rows, fixed: --check compares them with docs/performance.md's tables, and the test with what a run prints.
ROUND_TRIPS = [  # (row, what is serialized, what is crossed)
    ("in memory", "JSON text each way", "nothing: one process"),
    ("in memory, no JSON", "nothing: Python objects", "nothing: one process"),
    ("stdio, bare line driver", "JSON lines", "a pipe each way to a child process"),
    ("stdio, each side's own client", "JSON lines", "a pipe each way to a child process"),
    ("HTTP, bare driver", "JSON bodies", "a kept-alive TCP connection to a child process"),
    ("HTTP, each side's own client", "JSON bodies", "a kept-alive TCP connection to a child process"),
]
CATALOG_SIZES = [10, 100, 1_000, 10_000]  # tools/list, in memory
ARGUMENT_SIZES = [100, 10_000, 1_000_000, 3_900_000]  # tools/call echo, stdio: bytes of the string argument
CLIENT_COUNTS = [1, 4, 16, 64]  # tools/call add over HTTP, one connection each
ERAS = ["2025-11-25", "2026-07-28"]  # the handshake era (a session each) and the stateless one, over HTTP
STATELESS_ERA = "2026-07-28"  # no handshake: each request carries its version and its client in _meta
BEST = ["sdk", "sdk, uvloop"]  # the SDK at its best: JSON responses, add a coroutine function; uvloop where installed
SDK_CONFIGURATIONS = {  # contender: the configuration of the SDK's server over HTTP (sdk_server.py http NAME)
    "sdk": "fast",  # JSON responses, add a coroutine function: the SDK column of the tables
    "sdk as documented": "documented",  # what server.run("streamable-http") serves: event streams, add a function
    "sdk, uvloop": "uvloop",  # fast, on uvloop's event loop with httptools' parser: only where both are installed
}
STARTUP = [  # (row, what it imports, whether it has a no-cache column)
    ("python -c pass", "nothing", False),
    ("json-only server (floor)", "json", False),
    ("the lab alone", "mcp_min, mcp_stdio, mcp_full", True),
    ("server_demo.py", "mcp_min, mcp_full, mcp_stdio, typing", True),  # mcp_http only with --http
    ("official SDK server", "mcp, pydantic, anyio", False),
]
SDK_ONLY_ROWS = {"official SDK server"}
IDLE = [  # (row, server_demo.py's flags): a server launched and left alone, its wake-ups counted
    ("server_demo.py over stdio, idle", []),
    ("server_demo.py --http, idle", ["--http", "--port", "0"]),
]
IDLE_WINDOW_S = 5  # the wake-ups of an idle server are counted over this long (--quick: a fifth, scaled up)
SETTLE_S = 1  # after its launch (and, over HTTP, its "serving" line), before the count begins
SESSION_CATALOGS = [10, 10_000]  # tools in the catalog whose HTTP sessions are weighed
GOALS = [  # (row, the contender compared, what to, the goal): the last table, each checked against this run
    ("in memory", "lab", "floor", 0.7),  # the lab alone near the least a round trip as JSON text costs
    ("in memory", "mcp_min", "lab", 0.85),  # the full layer costs little where it takes no part
    ("stdio, bare line driver", "mcp_min", "lab", 0.85),
    ("stdio, each side's own client", "mcp_min", "floor", 0.6),
    ("HTTP, bare driver", "mcp_min", "floor", 0.9),
    ("HTTP, each side's own client", "mcp_min", "floor", 0.75),
    ("tools/list, 10,000 tools", "mcp_min", "floor", 0.85),
    ("memory a session, 10,000 tools", "", "memory a session, 10 tools", -1.1),
    ("the lab alone", "warm start-up", "floor", -1.1),
    ("server_demo.py", "warm start-up", "floor", -1.3),
    *((row, "wake-ups", f"in {IDLE_WINDOW_S} s", -14) for row, _ in IDLE),  # fewer than 15
]  # a goal below 0 is a ceiling (the ratio must be at most its size), above 0 a floor (at least)


def catalog_row(size: int) -> str:
    """The scaling table's row for a tools/list of size tools."""
    return f"tools/list, {size:,} tools"


def argument_row(size: int) -> str:
    """The scaling table's row for a tools/call echo of a size-byte string."""
    return f"tools/call echo, {size_text(size)} argument"


def clients_row(count: int) -> str:
    """The scaling table's row for count HTTP clients at once."""
    return f"HTTP, {count} client{'s' if count > 1 else ''} at once"


def size_text(size: int) -> str:
    """100 B, 10 kB, 3.9 MB: three significant figures at most."""
    for unit, scale in (("MB", 1_000_000), ("kB", 1_000)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"


def era_row(era: str, count: int) -> str:
    """The eras table's row for count HTTP clients at once in era."""
    return f"{era}, {count} client{'s' if count > 1 else ''}"


def http_rows() -> list:
    """The rows measured over HTTP, each refused as a whole if a listener lacks TCP_NODELAY."""
    return [row for row, _, _ in ROUND_TRIPS if row.startswith("HTTP")] + [clients_row(n) for n in CLIENT_COUNTS]


def rows(with_sdk: bool = True) -> list:
    """Every row label the bench prints, table by table."""
    labels = [row for row, _, _ in ROUND_TRIPS]
    labels += [catalog_row(n) for n in CATALOG_SIZES] + [argument_row(n) for n in ARGUMENT_SIZES]
    labels += [clients_row(n) for n in CLIENT_COUNTS]
    labels += http_rows() if with_sdk else []
    labels += [era_row(era, count) for era in ERAS for count in CLIENT_COUNTS] if with_sdk else []
    labels += [row for row, _, _ in STARTUP if with_sdk or row not in SDK_ONLY_ROWS]
    labels += [row for row, _ in IDLE]
    labels += [row for row, _, _, _ in GOALS]
    return labels


# ---- measuring: rounds in turn ----

def rate(call, seconds: float) -> float:
    """Calls per second: call(i) in growing batches until seconds have passed (at least once)."""
    batch, done = 1, 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds or done == 0:
        for i in range(done, done + batch):
            call(i)
        done += batch
        batch = min(batch * 2, 256)  # few clock reads, yet a slow contender stops near the deadline
    return done / elapsed


def take_turns(contenders: dict, rounds: int, warm_up: bool = True) -> dict:
    """Run every contender once a round, in turn, the order rotated by one each round; each one's values.
    A first round, untimed, warms each one up (caches, a child's first pages) unless not warm_up."""
    names = list(contenders)
    values = {name: [] for name in names}
    for name in names if warm_up else []:
        contenders[name]()
    gc.collect()
    gc.freeze()  # what was built before (10,000 tools, the SDK's models) would slow each full collection
    try:
        for r in range(rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                values[name].append(contenders[name]())
    finally:
        gc.unfreeze()
    return values


def spread(values: list) -> str:
    """The median, then the range of the rounds: 1,234 (1,200-1,260)."""
    return f"{figure(statistics.median(values))} ({figure(min(values))}-{figure(max(values))})"


def figure(value: float) -> str:
    """A number with three significant digits or more: 12,345, 123, 12.3, 1.23."""
    for floor, text in ((100, "{:,.0f}"), (10, "{:.1f}")):
        if value >= floor:
            return text.format(value)
    return f"{value:.2f}"


def ratios(tops: list, bottoms: list) -> list:
    """top / bottom, round by round."""
    return [top / bottom for top, bottom in zip(tops, bottoms)]


# ---- the children: servers and floors, driven bare ----

# mcp_min alone over stdio: add, and echo for the argument sizes; start-up launches it too.
MCP_MIN_SERVER = """from mcp_full import MCPServer
from mcp_stdio import serve_stdio

server = MCPServer("mcp_min-bench")


@server.tool()
def add(x: int, y: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return x + y


@server.tool()
def echo(text: str) -> str:
    \"\"\"Return text as it came.\"\"\"
    return text


serve_stdio(server)
"""
# The official SDK's server doing the same work. log_level WARNING: no log line per request, as in mcp_min;
# structured_output=False: the result is the same text block mcp_min sends, not that and a copy. Over HTTP it
# runs in one of SDK_CONFIGURATIONS, named by its second argument.
SDK_SERVER = """import sys
from mcp.server import MCPServer

server = MCPServer("sdk-bench", log_level="WARNING")
configuration = sys.argv[2] if sys.argv[1:2] == ["http"] else "stdio"


def add(x: int, y: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return x + y


async def add_on_the_loop(x: int, y: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return x + y


@server.tool(structured_output=False)
def echo(text: str) -> str:
    \"\"\"Return text as it came.\"\"\"
    return text


# The SDK calls a plain function in a worker thread, a coroutine function on its event loop.
server.tool(name="add", structured_output=False)(add if configuration in ("stdio", "documented") else add_on_the_loop)

if __name__ == "__main__" and configuration == "stdio":
    server.run()
elif __name__ == "__main__":  # what server.run("streamable-http", ...) does, on a listener of its own
    import socket, anyio, uvicorn
    # Protocol 6, as uvicorn's own bind makes it: asyncio sets TCP_NODELAY only on the connections of a
    # listener whose protocol is TCP, and socket.socket()'s 0 left Nagle on (each body 40 ms behind its head).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))  # the OS picks a free port, named on stdout: none is probed, then reused
    print(listener.getsockname()[1], flush=True)
    app = server.streamable_http_app(json_response=configuration != "documented")
    # h11 and asyncio's own loop are what pip install mcp brings; httptools and uvloop are installed apart.
    # uvicorn closes a connection idle 5 s; one idles while the other contenders take their turns, which on a
    # loaded machine took longer. The timer is set after each response whatever its length: no call pays for it.
    config = uvicorn.Config(app, log_level="warning", http="httptools" if configuration == "uvloop" else "h11",
                            timeout_keep_alive=60)
    anyio.run(uvicorn.Server(config).serve, [listener], backend_options={"use_uvloop": configuration == "uvloop"})
"""
# The stdio floor: parse each line and write it back re-encoded, nothing else.
STDIO_FLOOR = """import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(json.dumps(json.loads(line)).encode() + b"\\n")
    out.flush()
"""
# The HTTP floor: the stdlib's http.server parses and re-encodes each POST's body, and writes the response,
# headers and body together, in one write (two writes cost a second system call, or a 40 ms Nagle delay).
HTTP_SERVER = """

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # TCP_NODELAY, which the bench checks on every listener it measures

    def do_POST(self):
        body = answer(self.rfile.read(int(self.headers["Content-Length"])))
        head = b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body)
        self.wfile.write(head + body)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.request_queue_size = 128  # 64 clients connect at once: the default 5 drops some
httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
httpd.daemon_threads = True
print(httpd.server_address[1], flush=True)
httpd.serve_forever()
"""
HTTP_FLOOR = """import http.server, json, sys


def answer(data):
    return json.dumps(json.loads(data)).encode()
""" + HTTP_SERVER
# The lab alone (mcp_min.py) over stdio and over HTTP: course 000's own server, with add registered as the
# lab registers a tool (its JSON Schema written out), served by the project's transports. Beside the full
# layer's server_demo.py, it shows what the full layer costs a request that uses none of it.
XY_SCHEMA = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
LAB_SERVER = """import sys
from mcp_min import MCPServer


def lab_server():
    server = MCPServer("lab-bench")
    server.add_tool("add", lambda x, y: x + y, "Add two integers.", %r)
    server.add_tool("echo", lambda text: text, "Return text as it came.",
                    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    return server


if __name__ == "__main__" and sys.argv[1:] == ["http"]:
    from mcp_http import http_server
    httpd = http_server(lab_server, port=0)  # a factory: each session its own lab server
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()
elif __name__ == "__main__":
    from mcp_stdio import serve_stdio
    serve_stdio(lab_server())
""" % (XY_SCHEMA,)

# The start-up floor: import json, answer each request line with an empty result.
JSON_ONLY_SERVER = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" in message:
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}), flush=True)
"""


def wire_line(message: dict) -> bytes:
    """A message as one stdio line."""
    return json.dumps(message).encode() + b"\n"


class LineDriver:
    """Drive any stdio server the same bare way: write one line, read one line back, parse nothing."""

    def __init__(self, command: list, handshake: bool = True):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.stdin, self.stdout = self.process.stdin.fileno(), self.process.stdout.fileno()
        self.rest = b""
        if handshake:
            self.exchange(wire_line(mcp_full.request(0, "initialize", INIT_PARAMS)))
            self.write(wire_line(mcp_full.notification("notifications/initialized")))

    def write(self, data: bytes):
        """Write all of data to the server's stdin."""
        view = memoryview(data)
        while view:
            view = view[os.write(self.stdin, view):]

    def exchange(self, line: bytes) -> bytes:
        """Send a prebuilt line; return the next line that comes back, unparsed."""
        self.write(line)
        data = bytearray(self.rest)  # a bytearray grows in place: a 4 MB line is not copied once a chunk
        while b"\n" not in data:
            chunk = os.read(self.stdout, 65536)  # not more: a 1 MiB buffer is an mmap and a munmap a call
            if not chunk:
                raise ConnectionError("the server closed its stdout")
            data += chunk
        reply, _, self.rest = bytes(data).partition(b"\n")
        return reply

    def close(self):
        """Close the server's input and wait for it to exit."""
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


class HttpDriver:
    """Drive any HTTP server the same bare way, on one kept-alive socket: a prebuilt POST out, the answer back."""

    def __init__(self, port: int, handshake: bool = True, stateless: bool = False):
        self.port, self.stateless = port, stateless  # stateless: 2026-07-28, each request carrying its version
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.rest = b""
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if handshake:  # the handshake era: a session of its own, named by Mcp-Session-Id
            _, headers, _ = self.exchange(self.post(mcp_full.request(0, "initialize", INIT_PARAMS)))
            self.headers |= {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            self.exchange(self.post(mcp_full.notification("notifications/initialized")))

    def post(self, message: dict) -> bytes:
        """A whole POST of message, headers and body, to send again and again."""
        headers = self.headers
        if self.stateless:  # 2026-07-28: the version and the client in _meta, the method and name in headers too
            meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                    "io.modelcontextprotocol/clientInfo": INIT_PARAMS["clientInfo"]}
            message = {**message, "params": {**message.get("params", {}), "_meta": meta}}
            headers = {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": message["method"]}
            if message["method"] == "tools/call":
                headers["Mcp-Name"] = message["params"]["name"]
        body = json.dumps(message).encode()
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n{head}Content-Length: {len(body)}\r\n\r\n"
                .encode() + body)

    def exchange(self, request: bytes):
        """Send a prebuilt request; return the status, the headers (lower-case names) and the body."""
        self.socket.sendall(request)
        while (reply := self.response()) is None:
            self.rest += self.receive()
        return reply

    def response(self):
        """The first whole response among the bytes received, taken off them; None while it is partial."""
        head, found, data = self.rest.partition(b"\r\n\r\n")
        if not found:
            return None
        lines = head.decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        if headers.get("transfer-encoding") == "chunked":  # the SDK's event streams, as documented
            body = dechunked(data)
            if body is None:
                return None
            body, self.rest = body
        else:
            length = int(headers.get("content-length", 0))
            if len(data) < length:
                return None
            body, self.rest = data[:length], data[length:]
        return int(lines[0].split()[1]), headers, body

    def receive(self) -> bytes:
        """The next bytes from the socket."""
        chunk = self.socket.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk

    def close(self):
        """Close the socket."""
        self.socket.close()


def dechunked(data: bytes) -> tuple | None:
    """(the body, the bytes after it) of a chunked body at data's start (RFC 9112, section 7.1); None while partial."""
    body, at = bytearray(), 0
    while (end := data.find(b"\r\n", at)) >= 0:
        size = int(data[at:end].split(b";")[0], 16)
        start = end + 2
        if len(data) < start + size + 2:
            return None
        if size == 0:  # the last chunk, then the blank line that ends the body (no trailer fields)
            return bytes(body), data[start + 2:]
        body += data[start:start + size]
        at = start + size + 2
    return None


def message_of(headers: dict, body: bytes) -> dict:
    """The JSON-RPC message of a response: its JSON body, or the data of the one event of its event stream."""
    if headers.get("content-type", "").startswith("text/event-stream"):
        lines = body.decode().splitlines()
        return json.loads("\n".join(line[5:].strip() for line in lines if line.startswith("data:")))
    return json.loads(body)


@contextlib.contextmanager
def on_cpu(cpu: int | None):
    """Inside, this thread, and every thread and child process it starts, runs on cpu alone (where the OS
    lets a process choose: Linux); on leaving, this thread gets its CPUs back."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def wait_for_port(port: int, process: subprocess.Popen):
    """Return once something accepts connections on port; fail if process exits first."""
    for _ in range(600):
        if process.poll() is not None:
            raise ConnectionError(f"{process.args} exited with code {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def http_child(command: list, port_from_output: str | None = None) -> tuple:
    """Start an HTTP server child; (process, port). The port is read from its first line on stdout or stderr."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stream = process.stderr if port_from_output == "stderr" else process.stdout
    port = int(re.search(r"(\d+)(/mcp)?\s*$", stream.readline()).group(1))
    wait_for_port(port, process)
    return process, port


class Refused(Exception):
    """Rows the bench will not report: a contender's figure would be its listener's, not its own."""


# pidfd_getfd's number, the same on every Linux architecture (alpha aside) since it came, in Linux 5.6.
PIDFD_GETFD = 438


def nodelay_problem(name: str, process: subprocess.Popen, port: int) -> str | None:
    """None if the server child's end of a connection from the bench has TCP_NODELAY set; else what is wrong.
    Without it, a server that writes a response's head and body apart (uvicorn does) sends the body only when
    the head's ACK comes back, which Linux delays 40 ms: 25 calls a second, the listener's figure, not the server's."""
    driver = HttpDriver(port, handshake=name != "floor")
    try:
        driver.exchange(driver.post(mcp_full.request(1, "tools/call", ADD)))  # accepted and served: its options are set
        try:
            end = server_end(process.pid, driver.socket)
        except OSError as error:
            return f"TCP_NODELAY could not be read on {name}'s end of a connection ({error})"
        with end:
            nodelay = end.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        driver.close()
    return None if nodelay else f"{name}'s listener leaves TCP_NODELAY off on the connections it accepts"


def server_end(pid: int, client: socket.socket) -> socket.socket:
    """A copy, in this process, of the socket at process pid's end of client's connection (Linux's pidfd_getfd)."""
    if not hasattr(os, "pidfd_open") or not os.path.isdir(f"/proc/{pid}/fd"):
        raise OSError(errno.ENOSYS, "reading another process's socket needs Linux 5.6 or later")
    syscall = ctypes.CDLL(None, use_errno=True).syscall
    pidfd = os.pidfd_open(pid)
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except FileNotFoundError:  # closed since it was listed
                continue
            if not link.startswith("socket:"):
                continue
            copy = syscall(PIDFD_GETFD, pidfd, int(fd), 0)
            if copy < 0:
                raise OSError(ctypes.get_errno(), f"pidfd_getfd: {os.strerror(ctypes.get_errno())}")
            # With no default timeout set, a socket object made on the copy leaves the descriptor's blocking
            # mode, which the child shares, as the child set it.
            end = socket.socket(fileno=copy)
            if end.family == client.family and (end.getsockname(), peer(end)) == (client.getpeername(), client.getsockname()):
                return end
            end.close()
    finally:
        os.close(pidfd)
    raise OSError(errno.ENOENT, f"no socket of process {pid} is the other end of the bench's connection")


def peer(end: socket.socket):
    """The address end is connected to; None for a listener, which has none."""
    try:
        return end.getpeername()
    except OSError:
        return None


def stop(process: subprocess.Popen):
    """Terminate a child we started, wait for it, and close its pipes."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe:
            pipe.close()


# ---- the official SDK, on an event loop of its own ----

def sdk_available() -> bool:
    """Whether the official SDK can be imported here."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False
    return True


class Sdk:
    """The official SDK's clients, run on an event loop in a thread (anyio's blocking portal), so that they
    take turns with mcp_min's contenders: one call into the loop a round."""

    def __init__(self):
        import anyio.from_thread
        self.stack = contextlib.ExitStack()
        self.portal = self.stack.enter_context(anyio.from_thread.start_blocking_portal())

    def client(self, target, mode: str = "legacy", within: contextlib.ExitStack | None = None):
        """An open mcp.Client for target (mode "legacy": the handshake, as mcp_min's rows use), no result cache;
        closed with within, or else with this object."""
        from mcp import Client
        opened = self.portal.wrap_async_context_manager(Client(target, mode=mode, cache=None))
        return (within or self.stack).enter_context(opened)

    def rate(self, call, seconds: float) -> float:
        """Calls per second of the coroutine function call(i), run on the loop for seconds (at least once)."""
        async def measure():
            done, start = 0, time.perf_counter()
            while (elapsed := time.perf_counter() - start) < seconds or done == 0:
                await call(done)
                done += 1
            return done / elapsed
        return self.portal.call(measure)

    def run(self, call, *args):
        """One call of a coroutine function on the loop."""
        return self.portal.call(call, *args)

    def close(self):
        """Close every client, then the loop."""
        self.stack.close()


def sdk_server(tools: int = 0):
    """The SDK's server in this process: add and echo; or, given tools, that many copies of add instead."""
    from mcp.server import MCPServer
    server = MCPServer("sdk-bench", log_level="WARNING")

    @server.tool(structured_output=False)
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    @server.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return text as it came."""
        return text

    if tools:  # registering 10,000 tools one by one takes the SDK seconds; only listing them is timed
        manager = server._tool_manager
        template = manager.get_tool("add")
        manager._tools = {f"tool_{i}": template.model_copy(update={"name": f"tool_{i}"}) for i in range(tools)}
    return server


def sdk_json_memory(server):
    """The SDK's in-memory streams with each message dumped to JSON text and validated back, as its stdio
    transport does: the same work as mcp_min's InMemoryTransport, which its own in-memory paths skip."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    @contextlib.asynccontextmanager
    async def transport():
        client_out, server_in_relay = anyio.create_memory_object_stream(16)
        server_in, server_in_read = anyio.create_memory_object_stream(16)
        server_out, client_in_relay = anyio.create_memory_object_stream(16)
        client_in, client_in_read = anyio.create_memory_object_stream(16)

        async def relay(source, sink):
            async with source, sink:
                async for item in source:
                    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await sink.send(SessionMessage(jsonrpc_message_adapter.validate_json(text, by_name=False)))

        lowlevel = server._lowlevel_server
        async with anyio.create_task_group() as group:
            group.start_soon(relay, server_in_relay, server_in)
            group.start_soon(relay, client_in_relay, client_in)
            group.start_soon(lambda: lowlevel.run(server_in_read, server_out, lowlevel.create_initialization_options()))
            try:
                yield client_in_read, client_out
            finally:
                group.cancel_scope.cancel()

    return transport()


# ---- table 1: round trips ----

def round_trip_rows(rounds: int, seconds: float, tmp: pathlib.Path, sdk: Sdk | None) -> dict:
    """Each path's contenders, in turn: {row: {"mcp_min"|"floor"|"sdk"|"bare": [calls/s a round]}}."""
    results = {}
    encoder, decoder = json.JSONEncoder(), json.JSONDecoder()
    request = mcp_full.request(1, "tools/call", ADD)
    response = mcp_full.response(1, ADD_RESULT)

    def json_floor(i):  # the four json calls of one round trip: what crossing as JSON text costs at least
        decoder.decode(encoder.encode(request))
        decoder.decode(encoder.encode(response))

    def add(i):
        return {"name": "add", "arguments": {"x": 2, "y": i}}

    lab = {}
    exec(LAB_SERVER, lab)  # the lab's own server, in this process, driven by the lab's own client
    lab_memory = mcp_min.MCPClient(mcp_min.InMemoryTransport(lab["lab_server"]()))
    lab_memory.initialize()
    memory = mcp_full.MCPClient(mcp_full.InMemoryTransport(server_demo.make_server()))
    memory.initialize()
    assert lab_memory.call_tool(**add(3)) == memory.call_tool(**add(3)) == {"content": [{"type": "text", "text": "5"}]}
    direct = mcp_full.MCPClient(DictTransport(server_demo.make_server()))
    direct.initialize()
    contenders = {"mcp_min": lambda: rate(lambda i: memory.call_tool(**add(i)), seconds),
                  "floor": lambda: rate(json_floor, seconds), "lab": lambda: rate(lambda i: lab_memory.call_tool(**add(i)), seconds)}
    if sdk:
        sdk_memory = sdk.client(sdk_json_memory(sdk_server()))
        contenders["sdk"] = lambda: sdk.rate(lambda i: sdk_memory.call_tool(**add(i)), seconds)
    results["in memory"] = take_turns(contenders, rounds)
    contenders = {"mcp_min": lambda: rate(lambda i: direct.call_tool(**add(i)), seconds)}
    if sdk:
        sdk_direct = sdk.client(sdk_server(), mode="auto")  # the SDK's direct dispatch: no streams, no JSON
        contenders["sdk"] = lambda: sdk.rate(lambda i: sdk_direct.call_tool(**add(i)), seconds)
    results["in memory, no JSON"] = take_turns(contenders, rounds)

    demo = [sys.executable, str(HERE / "server_demo.py")]
    line = wire_line(request)
    drivers = {"mcp_min": LineDriver(demo), "floor": LineDriver([sys.executable, str(tmp / "stdio_floor.py")], False),
               "lab": LineDriver([sys.executable, str(tmp / "lab_server.py")])}
    if sdk:
        drivers["sdk"] = LineDriver([sys.executable, str(tmp / "sdk_server.py")])
    own = mcp_full.MCPClient(mcp_stdio.StdioTransport(demo))
    lab_own = mcp_min.MCPClient(mcp_stdio.StdioTransport([sys.executable, str(tmp / "lab_server.py")]))
    try:
        for name, driver in drivers.items():
            assert_adds(name, json.loads(driver.exchange(line)), request)
        results["stdio, bare line driver"] = take_turns(
            {name: lambda driver=driver: rate(lambda i: driver.exchange(line), seconds) for name, driver in drivers.items()},
            rounds)
        own.initialize()
        lab_own.initialize()
        contenders = {"mcp_min": lambda: rate(lambda i: own.call_tool(**add(i)), seconds),
                      "floor": lambda: rate(lambda i: drivers["floor"].exchange(line), seconds),
                      "lab": lambda: rate(lambda i: lab_own.call_tool(**add(i)), seconds)}
        if sdk:
            from mcp.client.stdio import StdioServerParameters
            sdk_stdio = sdk.client(StdioServerParameters(command=sys.executable, args=[str(tmp / "sdk_server.py")]))
            contenders["sdk"] = lambda: sdk.rate(lambda i: sdk_stdio.call_tool(**add(i)), seconds)
        results["stdio, each side's own client"] = take_turns(contenders, rounds)
    finally:
        own.close()
        lab_own.close()
        for driver in drivers.values():
            driver.close()

    http = [row for row, _, _ in ROUND_TRIPS if row.startswith("HTTP")]
    try:
        results |= http_round_trips(rounds, seconds, tmp, sdk)
    except Refused as refusal:
        results |= refused(http, refusal)
    return results


def http_round_trips(rounds: int, seconds: float, tmp: pathlib.Path, sdk: Sdk | None) -> dict:
    """The two HTTP paths' contenders, in turn, each SDK configuration among them; Refused before any is timed if
    a listener leaves TCP_NODELAY off."""
    results = {}
    request = mcp_full.request(1, "tools/call", ADD)

    def add(i):
        return {"name": "add", "arguments": {"x": 2, "y": i}}

    sdk_contenders = sdk_http_contenders() if sdk else []
    with http_servers(tmp, sdk_contenders, lab=True) as ports, contextlib.ExitStack() as clients:  # clients close first
        drivers = {name: HttpDriver(port, handshake=name != "floor") for name, port in ports.items()}
        posts = {name: driver.post(request) for name, driver in drivers.items()}
        for name, driver in drivers.items():
            _, headers, body = driver.exchange(posts[name])
            assert_adds(name, message_of(headers, body), request)
        results["HTTP, bare driver"] = take_turns(
            {name: lambda name=name: rate(lambda i: drivers[name].exchange(posts[name]), seconds) for name in drivers},
            rounds)
        own = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{ports['mcp_min']}/mcp"))
        own.initialize()
        lab_own = mcp_min.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{ports['lab']}/mcp"))
        lab_own.initialize()
        contenders = {"mcp_min": lambda: rate(lambda i: own.call_tool(**add(i)), seconds),
                      "floor": lambda: rate(lambda i: drivers["floor"].exchange(posts["floor"]), seconds),
                      "lab": lambda: rate(lambda i: lab_own.call_tool(**add(i)), seconds)}
        for name in sdk_contenders:
            sdk_http = sdk.client(f"http://127.0.0.1:{ports[name]}/mcp", within=clients)
            contenders[name] = lambda sdk_http=sdk_http: sdk.rate(lambda i: sdk_http.call_tool(**add(i)), seconds)
        results["HTTP, each side's own client"] = take_turns(contenders, rounds)
        own.close()
        lab_own.close()
        for driver in drivers.values():
            driver.close()
    return results


def assert_adds(name: str, reply: dict, request: dict):
    """A server's answer to tools/call add is 5; the floor's is the request itself."""
    if name == "floor":
        assert reply == request, reply
    else:
        assert reply["result"]["content"] == ADD_RESULT["content"], (name, reply)


class DictTransport(mcp_full.Transport):
    """MCPClient straight to server.handle, the dict itself, no JSON: the counterpart of the SDK's direct dispatch."""

    def __init__(self, server: mcp_full.MCPServer):
        super().__init__()
        self.server = server

    def send(self, message: dict) -> dict | None:
        """server.handle(message), and the notifications it queued."""
        reply = self.server.handle(message)
        self.notifications.extend(self.server.drain_outbox())
        return reply

    def close(self):
        """Nothing to release."""


def sdk_http_contenders() -> list:
    """The SDK's servers over HTTP to measure: fast and as documented; fast with uvloop and httptools where installed."""
    import importlib.util
    installed = all(importlib.util.find_spec(name) for name in ("uvloop", "httptools"))
    return [name for name, configuration in SDK_CONFIGURATIONS.items() if configuration != "uvloop" or installed]


@contextlib.contextmanager
def http_servers(tmp: pathlib.Path, sdk_contenders: list, lab: bool = False, floor: bool = True):
    """server_demo.py --http, the HTTP floor if floor, the lab if lab, and the SDK's server in each configuration of
    sdk_contenders, each a child: {name: port}. Refused if a listener leaves TCP_NODELAY off."""
    commands = {"mcp_min": ([sys.executable, str(HERE / "server_demo.py"), "--http", "--port", "0"], "stderr")}
    if floor:
        commands["floor"] = ([sys.executable, str(tmp / "http_floor.py")], None)
    if lab:
        commands["lab"] = ([sys.executable, str(tmp / "lab_server.py"), "http"], None)
    for name in sdk_contenders:
        commands[name] = ([sys.executable, str(tmp / "sdk_server.py"), "http", SDK_CONFIGURATIONS[name]], None)
    children = {}
    try:
        for name, (command, stream) in commands.items():
            children[name] = http_child(command, stream)
        problems = [problem for name, (process, port) in children.items()
                    if (problem := nodelay_problem(name, process, port))]
        if problems:
            raise Refused("; ".join(problems))
        yield {name: port for name, (_, port) in children.items()}
    finally:
        for process, _ in children.values():
            stop(process)


def refused(rows: list, refusal: Refused) -> dict:
    """Each of rows as refused, said on stderr too: {row: why}."""
    print(f"bench.py: not reporting {', '.join(rows)}: {refusal}", file=sys.stderr, flush=True)
    return {row: f"refused: {refusal}" for row in rows}


# ---- table 2: scaling ----

def scaling_rows(rounds: int, seconds: float, tmp: pathlib.Path, sdk: Sdk | None) -> dict:
    """The catalog's size, the argument's size, and the number of HTTP clients at once."""
    results = {}
    encoder, decoder = json.JSONEncoder(), json.JSONDecoder()
    for size in CATALOG_SIZES:  # in memory, JSON each way
        server = mcp_full.MCPServer("catalog", page_size=size)  # one page: the floor, too, moves the whole list at once
        for i in range(size):
            server.add_tool(f"tool_{i}", lambda x, y: x + y, "Add two integers.",
                            {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                             "required": ["x", "y"]})
        client = mcp_full.MCPClient(mcp_full.InMemoryTransport(server))
        client.initialize()
        request = mcp_full.request(1, "tools/list")
        response = mcp_full.response(1, server.handle(request)["result"])
        assert len(client.list_tools(refresh=True)) == size

        def floor(i, request=request, response=response):
            decoder.decode(encoder.encode(request))
            decoder.decode(encoder.encode(response))

        contenders = {"mcp_min": lambda client=client: rate(lambda i: client.list_tools(refresh=True), seconds),
                      "floor": lambda floor=floor: rate(floor, seconds)}
        if sdk:
            sdk_client = sdk.client(sdk_json_memory(sdk_server(tools=size)))
            assert len(sdk.run(sdk_client.list_tools).tools) == size
            contenders["sdk"] = lambda sdk_client=sdk_client: sdk.rate(lambda i: sdk_client.list_tools(), seconds)
        results[catalog_row(size)] = take_turns(contenders, rounds)

    drivers = {"mcp_min": LineDriver([sys.executable, str(tmp / "mcp_min_server.py")]),
               "floor": LineDriver([sys.executable, str(tmp / "stdio_floor.py")], False)}
    if sdk:
        drivers["sdk"] = LineDriver([sys.executable, str(tmp / "sdk_server.py")])
    try:
        for size in ARGUMENT_SIZES:  # stdio, the bare line driver: the servers' own work only
            text = ("0123456789abcdef" * (size // 16 + 1))[:size]
            line = wire_line(mcp_full.request(1, "tools/call", {"name": "echo", "arguments": {"text": text}}))
            for name, driver in drivers.items():
                reply = json.loads(driver.exchange(line))
                echoed = reply["params"]["arguments"] if name == "floor" else reply["result"]["content"][0]
                assert echoed["text"] == text, name
            results[argument_row(size)] = take_turns(
                {name: lambda driver=driver, line=line: rate(lambda i: driver.exchange(line), seconds)
                 for name, driver in drivers.items()}, rounds)
    finally:
        for driver in drivers.values():
            driver.close()

    try:
        results |= clients_rows(rounds, seconds, tmp, sdk_http_contenders() if sdk else [])
    except Refused as refusal:
        results |= refused([clients_row(count) for count in CLIENT_COUNTS], refusal)
    if sdk:
        best = [name for name in BEST if name in sdk_http_contenders()]
        try:
            results |= era_rows(rounds, seconds, tmp, best)
        except Refused as refusal:
            results |= refused([era_row(era, count) for era in ERAS for count in CLIENT_COUNTS], refusal)
    return results


def era_rows(rounds: int, seconds: float, tmp: pathlib.Path, best: list) -> dict:
    """mcp_min beside the SDK at its best over HTTP, in each era, with each count of clients at once: {row: {name:
    [calls/s a round], name + " latencies": [seconds a call, every round's]}}; Refused as clients_rows."""
    results = {}
    with http_servers(tmp, best, floor=False) as ports:
        for era in ERAS:
            for count in CLIENT_COUNTS:
                stateless = era == STATELESS_ERA
                clients = {name: [HttpDriver(port, handshake=not stateless, stateless=stateless) for _ in range(count)]
                           for name, port in ports.items()}
                latencies = {name: [] for name in clients}
                row = results[era_row(era, count)] = take_turns(
                    {name: lambda name=name: together(clients[name], seconds, latencies[name]) for name in clients},
                    rounds)
                for name in clients:
                    row[name + " latencies"] = latencies[name]  # the untimed first round's too
                for group in clients.values():
                    for driver in group:
                        driver.close()
    return results


def clients_rows(rounds: int, seconds: float, tmp: pathlib.Path, sdk_contenders: list) -> dict:
    """Calls per second over HTTP with each count of clients at once; Refused before any is timed if a listener
    leaves TCP_NODELAY off."""
    results = {}
    with http_servers(tmp, sdk_contenders) as ports:
        for count in CLIENT_COUNTS:  # each client its own connection and session, all at once
            clients = {name: [HttpDriver(port, handshake=name != "floor") for _ in range(count)]
                       for name, port in ports.items()}
            results[clients_row(count)] = take_turns(
                {name: lambda group=group: together(group, seconds) for name, group in clients.items()}, rounds)
            for group in clients.values():
                for driver in group:
                    driver.close()
    return results


def together(drivers: list, seconds: float, latencies: list | None = None) -> float:
    """Calls per second of all drivers at once, each with one tools/call add in flight; each call's seconds, from
    its request sent to its response read, added to latencies. One thread serves them all through a selector: 64
    threads would spend the bench's own share of the cores taking turns at the GIL."""
    latencies = [] if latencies is None else latencies
    posts = {driver.socket: (driver, driver.post(mcp_full.request(1, "tools/call", ADD))) for driver in drivers}
    sent = {}
    selector = selectors.DefaultSelector()
    for sock, (driver, post) in posts.items():
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
    done, in_flight = 0, len(drivers)
    start = time.perf_counter()
    deadline = start + seconds
    for sock, (_, post) in posts.items():
        sent[sock] = time.perf_counter()
        sock.sendall(post)
    while in_flight:  # after the deadline, only the answers still owed are read
        for key, _ in selector.select(timeout=60):
            driver, post = posts[key.fileobj]
            driver.rest += driver.receive()
            while driver.response() is not None:
                done += 1
                now = time.perf_counter()
                latencies.append(now - sent[key.fileobj])
                if now < deadline:
                    sent[key.fileobj] = now
                    key.fileobj.sendall(post)
                else:
                    in_flight -= 1
    elapsed = time.perf_counter() - start
    selector.close()
    for sock in posts:
        sock.settimeout(60)
    return done / elapsed


# ---- table 4: start-up (table 3 is made of the HTTP rows of tables 1 and 2) ----

def startup_rows(rounds: int, tmp: pathlib.Path, with_sdk: bool) -> dict:
    """Launch to the answer to ping, in seconds: {row: {"cold"|"warm": [a launch a round]}}."""
    warm_env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    cold_env = {**warm_env, "PYTHONDONTWRITEBYTECODE": "1"}
    cold, warm = tmp / "cold", tmp / "warm"  # the same files; only warm/ may keep a __pycache__
    for folder in (cold, warm):
        folder.mkdir()
        for name in (*MODULES, "server_demo.py"):
            shutil.copy(HERE / name, folder / name)
        shutil.copy(tmp / "lab_server.py", folder / "lab_server.py")
    python = sys.executable
    contenders = {("python -c pass", "warm"): lambda: launch_time([python, "-c", "pass"], warm_env, False),
                  ("json-only server (floor)", "warm"): lambda: launch_time([python, str(tmp / "json_only.py")], warm_env)}
    for row, script in (("the lab alone", "lab_server.py"), ("server_demo.py", "server_demo.py")):
        contenders[(row, "cold")] = lambda script=script: launch_time([python, str(cold / script)], cold_env)
        contenders[(row, "warm")] = lambda script=script: launch_time([python, str(warm / script)], warm_env)
    if with_sdk:
        contenders[("official SDK server", "warm")] = lambda: launch_time([python, str(tmp / "sdk_server.py")], warm_env)
    timed = take_turns(contenders, rounds)  # the untimed first round fills warm/'s .pyc cache
    assert not list(cold.glob("__pycache__")), "the no-cache folder grew a .pyc cache"
    results = {}
    for (row, cache), values in timed.items():
        results.setdefault(row, {})[cache] = values
    return results


def launch_time(command: list, env: dict, answers: bool = True) -> float:
    """Seconds from launching a stdio server to its answer to ping after initialize (or to exiting, if not answers)."""
    start = time.perf_counter()
    if not answers:
        subprocess.run(command, check=True, env=env)
        return time.perf_counter() - start
    lines = [mcp_full.request(1, "initialize", INIT_PARAMS), mcp_full.notification("notifications/initialized"),
             mcp_full.request(2, "ping")]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               bufsize=0, env=env)
    process.stdin.write(b"".join(wire_line(message) for message in lines))
    buffer = b""
    while not re.search(rb'"id": ?2\b', buffer):
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            raise ConnectionError(f"{command} exited before answering ping")
        buffer += chunk
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()
    return elapsed


# ---- table 5: an idle server's wake-ups ----

def idle_rows(rounds: int, window: float) -> dict:
    """The context switches of an idle server_demo.py in IDLE_WINDOW_S, from window seconds counted SETTLE_S after
    its launch: {row: [a launch a round]}."""
    results = {row: [] for row, _ in IDLE}
    for _ in range(rounds):
        for row, flags in IDLE:
            command = [sys.executable, str(HERE / "server_demo.py"), *flags]
            if flags:
                process, _ = http_child(command, "stderr")
            else:  # stdin open and silent: a host that has not spoken yet
                process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                           stderr=subprocess.DEVNULL)
            try:
                time.sleep(SETTLE_S)
                before = switches(process.pid)
                time.sleep(window)
                results[row].append((switches(process.pid) - before) * IDLE_WINDOW_S / window)
            finally:
                if process.stdin:
                    process.stdin.close()
                stop(process)
    return results


def switches(pid: int) -> int:
    """The context switches, voluntary and not, of every thread of process pid so far (Linux's /proc): a thread
    that sleeps until a timer wakes it counts one each time."""
    total = 0
    for status in pathlib.Path(f"/proc/{pid}/task").glob("*/status"):
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            for line in status.read_text().splitlines():
                if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")):
                    total += int(line.split()[1])
    return total


def idle_table(results: dict) -> list:
    """Table 5 as Markdown lines: each idle server's wake-ups."""
    lines = [table_row(["idle, launched and left alone", f"wake-ups in {IDLE_WINDOW_S} s"]), table_row(["---", "---:"])]
    return lines + [table_row([row, spread(results[row])]) for row, _ in IDLE]


# ---- the report ----

def round_trip_table(results: dict, with_sdk: bool) -> list:
    """Table 1 as Markdown lines."""
    head = ["path", "serialized", "crossed", "mcp_min, calls/s", "floor, calls/s"]
    head += ["official SDK, calls/s"] if with_sdk else []
    head += ["mcp_min ÷ floor"] + (["mcp_min ÷ SDK"] if with_sdk else []) + ["the lab, calls/s", "mcp_min ÷ the lab"]
    lines = [table_row(head), table_row(["---"] * 3 + ["---:"] * (len(head) - 3))]
    for row, serialized, crossed in ROUND_TRIPS:
        if isinstance(results[row], str):
            lines.append(table_row([row, serialized, crossed, results[row]]))
            continue
        lab = results[row].get("lab")
        beside = [spread(lab), spread(ratios(results[row]["mcp_min"], lab))] if lab else ["", ""]
        lines.append(table_row([row, serialized, crossed] + cells(results[row], with_sdk) + beside))
    return lines


def scaling_table(results: dict, with_sdk: bool) -> list:
    """Table 2 as Markdown lines: the same columns, and a note where the SDK outruns the floor."""
    head = ["scale", "mcp_min, calls/s", "floor, calls/s"] + (["official SDK, calls/s"] if with_sdk else [])
    head += ["mcp_min ÷ floor"] + (["mcp_min ÷ SDK"] if with_sdk else []) + ["note"]
    lines = [table_row(head), table_row(["---"] + ["---:"] * (len(head) - 2) + ["---"])]
    for size in CATALOG_SIZES:
        row = catalog_row(size)
        per_tool = {name: figure(1e6 / statistics.median(results[row][name]) / size) for name in ("mcp_min", "floor")}
        note = f"µs a tool: mcp_min {per_tool['mcp_min']}, floor {per_tool['floor']}"
        lines.append(table_row([row] + cells(results[row], with_sdk) + [note]))
    for size in ARGUMENT_SIZES:
        row = argument_row(size)
        note = ""
        if with_sdk and statistics.median(results[row]["sdk"]) > statistics.median(results[row]["floor"]):
            note = "the SDK outruns the floor itself: pydantic-core, native code, reads and writes big JSON faster than json"
        lines.append(table_row([row] + cells(results[row], with_sdk) + [note]))
    for count in CLIENT_COUNTS:
        row = clients_row(count)
        measured = not isinstance(results[row], str)
        lines.append(table_row([row] + (cells(results[row], with_sdk) + [""] if measured else [results[row]])))
    return lines


SDK_HTTP_COLUMNS = {"sdk as documented": "SDK as documented", "sdk": "SDK fast", "sdk, uvloop": "SDK fast, uvloop"}


def sdk_http_table(results: dict) -> list:
    """Table 3 as Markdown lines: mcp_min over HTTP beside the SDK's server in each configuration measured."""
    measured = [name for name in SDK_HTTP_COLUMNS if name in sdk_http_contenders()]
    head = ["over HTTP", "mcp_min, calls/s"]
    for name in measured:
        head += [f"{SDK_HTTP_COLUMNS[name]}, calls/s", f"mcp_min ÷ {SDK_HTTP_COLUMNS[name]}"]
    lines = [table_row(head), table_row(["---"] + ["---:"] * (len(head) - 1))]
    for row in http_rows():
        if isinstance(results[row], str):
            lines.append(table_row([row, results[row]]))
            continue
        mine = results[row]["mcp_min"]
        figures = [spread(mine)]
        for name in measured:
            figures += [spread(results[row][name]), spread(ratios(mine, results[row][name]))]
        lines.append(table_row([row] + figures))
    return lines


def era_table(results: dict) -> list:
    """Table 3b as Markdown lines: mcp_min beside the SDK at its best in both eras, rates, ratios, p50 and p99."""
    best = [name for name in BEST if name in sdk_http_contenders()]
    head = ["over HTTP, era and clients", "mcp_min, calls/s"]
    for name in best:
        head += [f"{SDK_HTTP_COLUMNS[name]}, calls/s", f"mcp_min ÷ {SDK_HTTP_COLUMNS[name]}"]
    head += ["p50 / p99, mcp_min, ms"] + [f"p50 / p99, {SDK_HTTP_COLUMNS[name]}, ms" for name in best]
    lines = [table_row(head), table_row(["---"] + ["---:"] * (len(head) - 1))]
    for era in ERAS:
        for count in CLIENT_COUNTS:
            row = era_row(era, count)
            if isinstance(results[row], str):
                lines.append(table_row([row, results[row]]))
                continue
            mine = results[row]["mcp_min"]
            figures = [spread(mine)]
            for name in best:
                figures += [spread(results[row][name]), spread(ratios(mine, results[row][name]))]
            figures += [percentiles(results[row][name + " latencies"]) for name in ["mcp_min", *best]]
            lines.append(table_row([row] + figures))
    return lines


def percentiles(seconds: list) -> str:
    """The median and the 99th percentile of calls' seconds, in milliseconds: 1.23 / 4.56."""
    cuts = statistics.quantiles(seconds, n=100) if len(seconds) > 1 else seconds * 99
    return f"{figure(cuts[49] * 1000)} / {figure(cuts[98] * 1000)}"


def cells(values: dict, with_sdk: bool) -> list:
    """A row's rates and ratios: mcp_min, floor, SDK, then mcp_min ÷ floor and mcp_min ÷ SDK."""
    mine, floor, sdk = values["mcp_min"], values.get("floor"), values.get("sdk")
    row = [spread(mine), spread(floor) if floor else "none"] + ([spread(sdk)] if with_sdk else [])
    row.append(spread(ratios(mine, floor)) if floor else "")
    if with_sdk:
        row.append(spread(ratios(mine, sdk)))
    return row


def session_bytes(tools: int) -> float:
    """Bytes a handshake session over HTTP holds, opened as http_server opens one: server.share_catalog(), initialized."""
    import tracemalloc
    server = mcp_full.MCPServer("weighed")
    for i in range(tools):
        server.add_tool(f"tool_{i}", lambda x, y: x + y, "Add two integers.",
                        {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                         "required": ["x", "y"]})
    sessions = []
    gc.collect()  # garbage left from building the catalog is not the sessions': collected on both sides of the count
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(20):
        other = server.share_catalog()  # a server on the shared catalog, for another client: what a session costs
        other.handle(mcp_full.request(1, "initialize", INIT_PARAMS))
        other.handle(mcp_full.notification("notifications/initialized"))
        sessions.append(other)
    gc.collect()  # (before this, a session weighed 1,200-1,360 bytes or 1,459, as a collection had run or not)
    held = (tracemalloc.get_traced_memory()[0] - before) / len(sessions)
    tracemalloc.stop()
    return held


def goals_table(results: dict) -> list:
    """Table 5 as Markdown lines: each goal, this run's ratio (median and range), and whether its median meets it."""
    lines = [table_row(["goal", "compared", "wanted", "this run", "met"]), table_row(["---", "---", "---:", "---:", "---"])]
    floor_start = results["json-only server (floor)"]["warm"]
    weighed = [session_bytes(SESSION_CATALOGS[1]) / session_bytes(SESSION_CATALOGS[0]) for _ in range(3)]
    names = {"mcp_min": "mcp_min", "lab": "the lab", "floor": "floor"}
    for row, top, bottom, goal in GOALS:
        wanted = f"{'≥' if goal > 0 else '≤'} {abs(goal)}"
        if isinstance(results.get(row), str):
            lines.append(table_row([row, f"{names[top]} ÷ {names[bottom]}", wanted, results[row], "not measured"]))
            continue
        if row.startswith("memory"):
            values, compared = weighed, f"÷ {bottom}"
        elif row in [name for name, _, _ in STARTUP]:
            values, compared = ratios(results[row]["warm"], floor_start), "warm start-up ÷ floor"
        elif row in [name for name, _ in IDLE]:
            values, compared = results[row], f"{top} {bottom}"
        else:
            values, compared = ratios(results[row][top], results[row][bottom]), f"{names[top]} ÷ {names[bottom]}"
        median = statistics.median(values)
        met = median >= goal if goal > 0 else median <= -goal
        lines.append(table_row([row, compared, wanted, spread(values), "yes" if met else "no"]))
    return lines


def startup_table(results: dict, with_sdk: bool) -> list:
    """Table 4 as Markdown lines: milliseconds, and each warm launch ÷ the floor's, round by round."""
    lines = [table_row(["launch, then the answer to ping", "imports", "no .pyc cache, ms", "warm .pyc cache, ms",
                        "warm ÷ floor"]), table_row(["---", "---", "---:", "---:", "---:"])]
    floor = results["json-only server (floor)"]["warm"]
    for row, imports, has_cold in STARTUP:
        if row in SDK_ONLY_ROWS and not with_sdk:
            continue
        times = results[row]
        cold = spread([t * 1000 for t in times["cold"]]) if has_cold else "-"
        lines.append(table_row([row, imports, cold, spread([t * 1000 for t in times["warm"]]),
                                spread(ratios(times["warm"], floor))]))
    return lines


def table_row(cells: list) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def report(results: dict, args, with_sdk: bool) -> str:
    """The "How fast" section of docs/performance.md: what was measured, how, the three tables, and what each row means."""
    sdk_version = sdk_package_version() if with_sdk else None
    machine = (f"Python {platform.python_version()} on {platform.system()} {platform.machine()}, "
               f"{os.cpu_count()} cores")
    lines = [
        "`tools/call` round trips per second, and the time from launch to a first answer, for `mcp_min` beside its "
        "floors (the least any server must spend on the same path, measured in the same run) and"
        + (f" the official SDK {sdk_version} doing the same work." if with_sdk else
           " (where it is installed) the official SDK doing the same work."),
        f"One run of `python tools/bench.py{' --markdown' * args.markdown}{' --quick' * args.quick}` ({machine}): after an "
        f"untimed first round, each round runs every contender of a row once, in turn, the order rotated between "
        f"rounds; the bench and every server it starts share one CPU, so that a round trip costs its work and not "
        f"a wake-up on another CPU, which comes and goes with the scheduler. A cell is the median of "
        f"{args.rounds} rounds of {args.seconds} s (start-up: {args.launches} launches) and, in brackets, the "
        "slowest and the fastest round. A ratio is taken round by round, then its median and range: these "
        "machines are shared and noisy, so the ratios are the result, not the rates. *mcp_min ÷ floor* and "
        "*mcp_min ÷ SDK* divide rates (above 1, mcp_min is the faster); at start-up, *warm ÷ floor* divides "
        "times (above 1, the slower). `python tools/bench.py --quick` gives the same rows in seconds; without the SDK "
        "installed, its columns and rows are left out.",
        "",
        "### Round trips: `tools/call add`",
        "",
        *round_trip_table(results, with_sdk),
        "",
        "- *mcp_min* is the project's full layer: `server_demo.py`'s server (`mcp_full.py`) and, as the client, "
        "`mcp_full`'s `MCPClient`.",
        "- *in memory*: `MCPClient` over `InMemoryTransport` (each message `json.dumps`'d and `json.loads`'d). "
        "Floor: the four `json` calls of one round trip, with a prebuilt encoder and decoder. SDK: `Client` over "
        "its in-memory streams with each message dumped to JSON text and validated back, as its stdio transport "
        "does (its own in-memory paths pass Python objects).",
        "- *in memory, no JSON*: nothing is serialized. mcp_min: `MCPClient` handing the dict straight to "
        "`server.handle`; SDK: `Client(server, mode=\"auto\")`, its direct dispatch. No floor.",
        "- *stdio, bare line driver*: the bench writes one prebuilt line to the server's stdin and reads one line "
        "back, parsing nothing, so only the server's work is timed. mcp_min: `server_demo.py`; SDK: its "
        "`MCPServer` with the same tool; floor: a child that only does `json.dumps(json.loads(line))`.",
        "- *stdio, each side's own client*: mcp_min's `MCPClient` over `StdioTransport`; the SDK's `Client` over "
        "stdio to its server; the floor as above.",
        "- *HTTP, bare driver*: one kept-alive connection; the bench sends a prebuilt POST on a raw socket and reads "
        "the response. mcp_min: `server_demo.py --http`; SDK: its server over Streamable HTTP, configured for speed "
        "(*SDK fast*" + (", below" if with_sdk else "") + "); floor: a stdlib `http.server` child that parses and re-encodes each body "
        "and writes headers and body in one write. The floor reads each request's headers with `http.server`'s own "
        "reader, built on the `email` package; mcp_min reads them itself (docs/reference.md, \"Limits and bad input\").",
        "- *HTTP, each side's own client*: mcp_min's `HttpTransport`; the SDK's `Client` over Streamable HTTP; the "
        "floor as above.",
        "- The SDK's servers run with `log_level=\"WARNING\"` (no log line per request, as in mcp_min) and "
        "`structured_output=False` (the same one text block in the result). Their `add` is a plain function, which "
        "the SDK calls in a worker thread, except in the SDK column over HTTP (*SDK fast*): a coroutine function.",
        "- Every HTTP listener (mcp_min's, the lab's, the floor's" + (", each of the SDK's" if with_sdk else "") + ") is "
        "checked before its rows are timed: the server's end of a connection from the bench must have `TCP_NODELAY` "
        "set, read in the server's process (a copy of its socket, by Linux's `pidfd_getfd`). With Nagle's algorithm "
        "on, a server that writes a response's head and body apart, as uvicorn does, sends the body only once the "
        "head is acknowledged, and Linux delays that acknowledgement 40 ms: 25 calls a second, the listener's "
        "figure, not the server's. The bench refuses such rows rather than print them.",
        "",
        "### Scaling",
        "",
        *scaling_table(results, with_sdk),
        "",
        "- *tools/list*: in memory, as in the first row above; the catalog is that many copies of `add`. A rate "
        "that falls as the catalog grows, at a steady cost a tool, is linear.",
        "- *tools/call echo*: stdio with the bare line driver, the string argument sent back in the result; the "
        "servers are mcp_min alone and the SDK's, the floor as above (it parses and re-encodes the whole line).",
        "- *HTTP, N clients*: N connections at once, each with its own session and one `tools/call add` in flight, "
        "driven by one thread of the bench through a selector; the servers as in *HTTP, bare driver*. The bench "
        "and the server share one CPU: a rate is their work together.",
        "",
        *(sdk_http_section(results) if with_sdk else []),
        "### Start-up",
        "",
        *startup_table(results, with_sdk),
        "",
        "- Each launch sends `initialize`, `notifications/initialized` and `ping` and stops the clock at the answer "
        "to `ping`. The floor imports only `json` and answers each line; `python -c pass` only starts and exits.",
        "- *the lab alone* is `mcp_min.py`'s own server over `mcp_stdio.py` (which builds on `mcp_full.py`), from a "
        "ten-line script. *No .pyc cache*: `PYTHONDONTWRITEBYTECODE=1` in a folder without `__pycache__`, so the "
        "modules are compiled at every launch, as on a machine that sets it; *warm*: the cache written by an "
        "untimed launch first. The SDK's server is timed warm (pip compiles its packages when it installs them).",
        "",
        "### Idle",
        "",
        *idle_table(results),
        "",
        f"- `server_demo.py` launched, left alone {SETTLE_S} s, then its context switches counted over "
        f"{IDLE_WINDOW_S} s{' (here 1 s, scaled to 5)' * args.quick}, summed over its threads (Linux's "
        "`/proc/PID/task/*/status`, voluntary and not): a thread that sleeps until a timer wakes it counts one each "
        "time. Over stdio its stdin is open and silent, a host that has not spoken yet; over HTTP no client "
        f"connects. One launch a round, {args.idle_rounds} rounds.",
        "",
        "`python tools/bench.py --parse` compares `parse()`, with its depth guard, against `json.loads` on the messages "
        "that stress the guard.",
        "",
        "### Goals",
        "",
        *goals_table(results),
        "",
        "- Each goal is met or not by the median of this run's ratios, from the tables above; *memory a session* "
        "weighs, with `tracemalloc` and three times, 20 handshake sessions opened as `http_server` opens them (`server.share_catalog()`, then the "
        f"handshake) on catalogs of {SESSION_CATALOGS[0]:,} and {SESSION_CATALOGS[1]:,} tools: the sessions share "
        "their server's catalog, so a session weighs the same whatever its size.",
        "- *the lab*: course 000's lab alone, `mcp_min.py`'s own server and client with `add` registered as the lab "
        "registers a tool, timed as a fourth contender of the same rounds: in memory, its `MCPClient` over its "
        "`InMemoryTransport`; over stdio and HTTP, its server behind the project's transports (a factory of lab "
        "servers for `http_server`), driven bare or by its own client. *mcp_min ÷ the lab* is what the full layer "
        "(`mcp_full.py`, with `server_demo.py`'s catalog) costs a request that uses none of its machinery.",
    ]
    return "\n".join(line if line.startswith(("|", "#")) else prose(line) for line in lines)


def sdk_http_section(results: dict) -> list:
    """Table 3 and what its columns mean, as Markdown lines."""
    uvloop = "sdk, uvloop" in sdk_http_contenders()
    return [
        "### Over HTTP: the official SDK as documented and configured for speed",
        "",
        *sdk_http_table(results),
        "",
        "- *SDK as documented*: the SDK's server as `server.run(\"streamable-http\")` serves it: each response an "
        "event stream (`text/event-stream`, one event), and `add` a plain function, which the SDK calls in a worker "
        "thread. *SDK fast*: `json_response=True`, each response a JSON body, and `add` a coroutine function "
        "(`async def`), run on the event loop; the SDK columns of the tables above are this one. Both on uvicorn "
        "with its `h11` parser and asyncio's own event loop, what `pip install mcp` brings. Its keep-alive timeout is "
        "60 s, not 5, so that a connection waiting for its turn is not closed.",
        "- *SDK fast, uvloop*: the same on uvloop's event loop, with uvicorn's `httptools` parser: two packages "
        "installed apart (`pip install uvloop httptools`), measured where both are." if uvloop else
        "- Where `uvloop` and `httptools` are installed, a third SDK column has *SDK fast* on uvloop's event loop, "
        "with uvicorn's `httptools` parser.",
        "- The rows are the HTTP rows of the tables above, from the same rounds: the handshake era, each client "
        "`initialize`d, with a session of its own named by `Mcp-Session-Id`.",
        "",
        "### Over HTTP, both eras: mcp_min beside the SDK at its best",
        "",
        *era_table(results),
        "",
        "- *The SDK at its best*: the official SDK's server, stock, as *SDK fast* above (`json_response=True`, `add` a "
        "coroutine function, on uvicorn)" + (", and the same on uvloop's event loop with `httptools`' parser"
        if uvloop else "") + ". N clients at once, driven as in *HTTP, N clients at once*: in 2025-11-25 each "
        "`initialize`d with a session of its own; in 2026-07-28 each request stands alone, its version and client in "
        "`_meta` and its method and tool name repeated in headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).",
        "- *p50 / p99*: of every call of every round (the untimed first one too), from its request sent to its "
        "response read, in milliseconds: with N clients at once, a call waits for the N - 1 others ahead of it.",
        "",
    ]


def prose(text: str) -> str:
    """A paragraph or a bullet wrapped as the rest of docs/performance.md is."""
    return textwrap.fill(text, width=115, subsequent_indent="  " if text.startswith("- ") else "",
                         break_long_words=False, break_on_hyphens=False)


def sdk_package_version() -> str:
    """The installed official SDK's version."""
    from importlib.metadata import version
    return version("mcp")


# ---- docs/performance.md: the section between the markers ----

START, END = "<!-- howfast:start -->", "<!-- howfast:end -->"


def readme_section(text: str) -> str:
    """docs/performance.md's text between the "How fast" markers."""
    return text[text.index(START) + len(START):text.index(END)]


def table_rows(section: str) -> list:
    """The first cell of every table row in section, header and rule rows aside."""
    labels = []
    for line in section.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            labels.append(line[2:].split(" | ")[0])
    return [label for label in labels if label not in HEADERS]


HEADERS = {"path", "scale", "over HTTP", "over HTTP, era and clients", "launch, then the answer to ping",
           "idle, launched and left alone", "case", "goal"}


def check_readme() -> list:
    """What differs between docs/performance.md's tables and the bench's rows (as generated with the SDK); [] if nothing."""
    found, wanted = table_rows(readme_section(README.read_text(encoding="utf-8"))), rows(with_sdk=True)
    problems = ([f"docs/performance.md lacks the row {row!r}" for row in wanted if row not in found]
                + [f"docs/performance.md has a row the bench does not make: {row!r}" for row in found if row not in wanted])
    if not problems and found != wanted:  # a row appears in more than one table: a whole table can be missing
        problems.append("docs/performance.md's tables have the bench's rows, but not table by table as it makes them")
    return problems


def write_readme(section: str):
    """Put section between docs/performance.md's "How fast" markers."""
    text = README.read_text(encoding="utf-8")
    README.write_text(text.replace(readme_section(text), f"\n{section}\n"), encoding="utf-8")


# ---- parse(): its depth guard against json.loads ----

def parse_cases() -> list:
    """(case, bytes): the messages that stress parse()'s nesting guard, and a plain short one."""
    def call(arguments):
        return json.dumps(mcp_full.request(1, "tools/call", {"name": "echo", "arguments": arguments})).encode()
    code = json.dumps([{"id": i, "name": f"n{i}", "tags": ["a", "b"]} for i in range(55_000)])
    return [
        ("a short tools/call (add)", json.dumps(mcp_full.request(1, "tools/call", ADD)).encode()),
        ("a 3.9 MB string argument, no brackets", call({"text": "x" * 3_900_000})),
        ("100,000 small objects", call({"items": [{"id": i, "name": f"n{i}"} for i in range(100_000)]})),
        ("a 3.9 MB string full of brackets", call({"text": "[{]}" * 975_000})),
        ("300,000 short strings, each holding brackets", call({"items": ["[x]"] * 300_000})),
        ("a short message, a string of 500 brackets", call({"text": "[" * 500})),
        ("JSON text inside a string (escaped quotes), 3 MB", call({"text": code})),
    ]


def parse_table(rounds: int, seconds: float) -> list:
    """parse() ÷ json.loads on each case, as Markdown lines: time multiples, round by round."""
    lines = [table_row(["case", "size", "json.loads, calls/s", "parse, calls/s", "parse time ÷ json.loads time"]),
             table_row(["---", "---:", "---:", "---:", "---:"])]
    for case, data in parse_cases():
        # json.loads here is the same prebuilt decoder that parse() uses, on the same text: only the guard differs.
        values = take_turns({"json": lambda data=data: rate(lambda i: mcp_stdio.DECODER.decode(data.decode("utf-8")), seconds),
                             "parse": lambda data=data: rate(lambda i: mcp_stdio.parse(data), seconds)}, rounds)
        lines.append(table_row([case, size_text(len(data)), spread(values["json"]), spread(values["parse"]),
                                spread(ratios(values["json"], values["parse"]))]))
    return lines


def main(argv=None) -> int:
    """Measure and print the tables; or --check docs/performance.md's rows; or --parse."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="seconds, not minutes: fewer and shorter rounds")
    parser.add_argument("--no-sdk", action="store_true", help="leave out the official SDK even where it is installed")
    parser.add_argument("--markdown", action="store_true", help="also rewrite docs/performance.md's How fast section")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/performance.md's tables and the bench's rows differ")
    parser.add_argument("--parse", action="store_true", help="parse() against json.loads")
    args = parser.parse_args(argv)
    if args.check:
        problems = check_readme()
        print("\n".join(problems) or "docs/performance.md's How fast tables have every row the bench makes, and no other")
        return 1 if problems else 0
    args.rounds, args.seconds, args.launches = (3, 0.05, 2) if args.quick else (7, 0.4, 11)
    args.idle_rounds = 1 if args.quick else 3
    if args.parse and "MALLOC_MMAP_THRESHOLD_" not in os.environ:
        # glibc maps each block of megabytes afresh, or not, depending on what was freed before: a 4 MB
        # json.loads then ran at 200/s or at 640/s, whichever contender ran last. Fixed, it is the CPU's work.
        fixed = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(64 << 20), "MALLOC_TRIM_THRESHOLD_": str(256 << 20)}
        return subprocess.run([sys.executable, __file__, *(argv if argv is not None else sys.argv[1:])], env=fixed).returncode
    if args.parse:
        print("\n".join(parse_table(args.rounds, args.seconds)))
        return 0
    with_sdk = sdk_available() and not args.no_sdk
    print(f"# bench.py: Python {platform.python_version()}; the official SDK "
          f"{'included' if with_sdk else 'left out: ' + ('--no-sdk' if args.no_sdk else 'mcp is not importable')}",
          flush=True)
    with tempfile.TemporaryDirectory() as folder:
        tmp = pathlib.Path(folder)
        for name, text in (("mcp_min_server.py", MCP_MIN_SERVER), ("sdk_server.py", SDK_SERVER),
                           ("stdio_floor.py", STDIO_FLOOR), ("http_floor.py", HTTP_FLOOR),
                           ("json_only.py", JSON_ONLY_SERVER), ("lab_server.py", LAB_SERVER)):
            (tmp / name).write_text(text)
        for module in MODULES:  # beside the servers that import them
            shutil.copy(HERE / module, tmp / module)
        # One CPU for the bench and every child it starts: a round trip through a pipe or a socket then costs
        # its work, not a wake-up on another CPU, which comes and goes with the scheduler and the machine's
        # other tenants (it doubled the range of a round).
        with on_cpu(min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None):
            sdk = Sdk() if with_sdk else None
            try:
                results = round_trip_rows(args.rounds, args.seconds, tmp, sdk)
                results |= scaling_rows(args.rounds, args.seconds, tmp, sdk)
            finally:
                if sdk:
                    sdk.close()
            results |= startup_rows(args.launches, tmp, with_sdk)
        results |= idle_rows(args.idle_rounds, IDLE_WINDOW_S / 5 if args.quick else IDLE_WINDOW_S)
    section = report(results, args, with_sdk)
    print(section)
    if any(isinstance(values, str) for values in results.values()):  # refused rows: nothing to publish
        print(f"bench.py: rows were refused{'; docs/performance.md is left as it was' * args.markdown}", file=sys.stderr)
        return 1
    if args.markdown:
        write_readme(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
