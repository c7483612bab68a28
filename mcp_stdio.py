"""mcp_stdio: the stdio transport, one message a line; stdout carries the wire and nothing else (course 004, section 4).

   9. stdio    parse (the transport edge, where -32700 is raised), serve_stdio, StdioTransport; Lines, the
               one bounded line splitter (the HTTP client reads event streams with it too)

serve_stdio serves any server with mcp_min's seam: handle(message) and drain_outbox(). Where the server has
more (mcp_full's: on_send, stop_waiting, end_listening), it uses that too: a tool's progress reaches the
client while the tool runs, and a question the server asks is answered on the same pipes.

    python server_demo.py                       # a stdio server: a host starts it as a child process
    client = MCPClient(StdioTransport([sys.executable, "server_demo.py"], trace=print_trace))
"""

import collections
import json
import os
import sys
import threading
import time

from mcp_min import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, RPCError, error_response, is_notification, notification
from mcp_full import LENIENT, MAX_MESSAGE_BYTES, SUBSCRIPTION_ID_KEY, Transport, encode, to_json

# ---------------------------------------------------------------------------------------------------
# ---- 9. stdio ----
# One message per line; stdout carries the wire and nothing else. The transport edge: parse() turns
# bytes that are not JSON into PARSE_ERROR (course 000).
# ---------------------------------------------------------------------------------------------------

def reject_constant(name: str):
    """NaN and Infinity are not JSON, though Python's json reads them."""
    raise ValueError(f"{name} is not JSON")


DECODER = json.JSONDecoder(parse_constant=reject_constant)  # made once: json.loads(text, **options) makes one a call
JSON_SPACE = " \t\n\r"  # the whitespace JSON allows around a value (RFC 8259, section 2)


def decode(text: str):
    """DECODER.decode(text): the same value and errors, in one pass where text is one value with no space around it."""
    # decode() runs a regular expression before the value and another after it; a line as peers write it has
    # nothing there, and raw_decode() reads just the value. Anything else goes to decode(), for its own words.
    if not text or text[0] in JSON_SPACE:
        return DECODER.decode(text)
    value, end = DECODER.raw_decode(text)
    if end < len(text) and text[end:].strip(JSON_SPACE):
        return DECODER.decode(text)  # extra data after the value: decode() says where
    return value


def same_id(a, b) -> bool:
    """Whether two ids are the same id: 1 is not "1", nor true, nor 1.0."""
    return type(a) is type(b) and a == b


MAX_DEPTH = 100  # arrays and objects nested deeper are refused: json.loads would recurse that deep
SHORT_MESSAGE = 1024  # bytes: below this, a message is parsed first and its depth measured after
WALKED_STRINGS = 32  # strings leapt over one by one before the rest of a message is taken in bulk
ONE_KIND = bytes.maketrans(b"{}", b"[]")  # depth is all that is measured; json.loads checks the pairs match
NOT_STRUCTURE = bytes(sorted(set(range(256)) - set(b'[]{}"')))  # the bytes that neither nest nor quote


def parse(data: bytes | str):
    """Parse one message from the wire; anything that is not JSON raises PARSE_ERROR (course 000)."""
    try:
        if isinstance(data, bytes):
            wire, text = data, data.decode("utf-8")
        else:
            wire, text = data.encode("utf-8", "surrogatepass"), data
        if len(wire) >= SHORT_MESSAGE and nesting(wire) > MAX_DEPTH:  # checked before json.loads reads megabytes
            raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        message = decode(text)
        # A short message is parsed first (it nests 512 levels at most, which json.loads survives), then
        # measured, if it holds brackets enough: nesting d levels deep takes d openers and d closers.
        if 2 * MAX_DEPTH < len(wire) < SHORT_MESSAGE and wire.count(b"[") + wire.count(b"{") > MAX_DEPTH:
            if wire.count(b"]") + wire.count(b"}") > MAX_DEPTH and depth(message) > MAX_DEPTH:
                raise ValueError(f"nested deeper than {MAX_DEPTH} levels")
        return message
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise RPCError(PARSE_ERROR, f"parse error: {str(exc)[:100]}")


def depth(value) -> int:
    """How deep arrays and objects nest in a parsed value (0 for a string or a number), level by level."""
    level, containers = 0, [value] if isinstance(value, (dict, list)) else []
    while containers:
        level += 1
        items = []
        for container in containers:
            items.extend(container.values() if isinstance(container, dict) else container)
        containers = [item for item in items if isinstance(item, (dict, list))]
    return level


def nesting(wire: bytes) -> int:
    """How deep arrays and objects nest in a long wire, brackets in strings aside; a bound when too few to pass MAX_DEPTH."""
    # A long message may hold too few brackets to nest MAX_DEPTH deep, strings and all: find() leaps from one
    # to the next at memory speed (counting would read every byte) and stops once there are enough.
    openers = 0
    for opener in (b"[", b"{"):
        at = wire.find(opener)
        while at >= 0 and openers <= MAX_DEPTH:
            openers, at = openers + 1, wire.find(opener, at + 1)
    if openers <= MAX_DEPTH:
        return openers
    # Then only the brackets outside strings count. find() leaps over a long string too, so a long message's
    # first strings are stepped over one by one; an escaped quote ends the walk, and if it skipped little
    # (many short strings), the bulk below takes the whole message instead.
    outside, start = [], 0
    for _ in range(WALKED_STRINGS):
        opening = wire.find(b'"', start)
        closing = wire.find(b'"', opening + 1) if opening >= 0 else -1
        if closing < 0 or wire.endswith(b"\\", opening + 1, closing):
            break
        outside.append(wire[start:opening])
        start = closing + 1
    rest = b"".join([*outside, wire[start:]]) if start > len(wire) // 2 else wire
    if b"\\" in rest:  # an escaped backslash escapes nothing; an escaped quote ends no string
        rest = rest.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Keep brackets and quotes; a string without brackets is now "" and goes, then what any other string holds.
    brackets = rest.translate(ONE_KIND, NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in brackets:
        brackets = b"".join(brackets.split(b'"')[::2])
    depth = 0
    while brackets and depth <= MAX_DEPTH:  # each pass peels the innermost pairs: one level
        peeled = brackets.replace(b"[]", b"")
        if len(peeled) == len(brackets):
            break  # brackets that never close: not JSON, which json.loads will say
        brackets, depth = peeled, depth + 1
        if depth == 1 and b"[" * MAX_DEPTH in brackets:  # [[[[... a hundred more levels: settled at once
            return MAX_DEPTH + 1
    return depth + brackets.count(b"[")

SLOW_S = 0.05  # a request still running after this has its own thread, and another thread reads on
WATCH_S = 0.02  # how often the watchdog looks while requests come
IDLE_S = 1  # no request for this long, and the watchdog sleeps until the next one (an idle server wakes no CPU)
MAX_READERS = 32  # reader threads alive at once on one connection, each slow request keeping one; more requests wait


def serve_stdio(server, stdin=None, stdout=None):
    """Serve one client over stdio until end of input, Ctrl-C (KeyboardInterrupt) or SIGTERM (SystemExit(0)).

    One thread at a time reads (it holds the baton), and serves what it read on the spot: most requests
    take microseconds, and a hand-over to another thread would cost more than the request. A request
    still running after SLOW_S keeps its thread, and the watchdog gives the baton to a new reader, so
    that a ping, a cancellation or the client's answer to the server's question is read while the tool
    works (mcp_full.py, section 8); a notification or a response never hands the baton on, so it is handled
    before the next line is read. A lock lets one thread at a time write a line, so lines never interleave. The
    calling thread only waits, so a signal always finds it waiting; the readers read and write the pipes'
    file descriptors directly, so none holds a lock of Python's files that the interpreter's exit waits for.
    """
    out = stdout or claim_stdout()
    lock, baton = threading.Lock(), threading.Lock()
    ended, gone = threading.Event(), threading.Event()  # end of input or the client gone; the client closed our stdout
    reading = {"thread": None, "since": None}  # the reader; since when it serves a request (None: it is reading)
    watching = {"served": 0, "asleep": True}  # requests begun; whether the watchdog sleeps until the next one
    woken = threading.Event()  # set by the request that wakes the watchdog, and at the end
    readers = []  # every reader started, the one holding the baton last

    def write(messages: list):
        with lock:  # the outbox is drained under the lock too: lines leave in the order they were queued
            data = b"".join(encode(message).encode() + b"\n" for message in server.drain_outbox() + messages)
            try:
                write_all(out, data)
            except OSError:  # BrokenPipeError: the client closed our stdout, so no answer can reach it
                gone.set()
                ended.set()

    lines = read_lines(stdin or sys.stdin.buffer, write)

    def read_and_serve():
        """Read and serve messages while this thread holds the baton; at end of input, say so."""
        me = threading.current_thread()
        for message in lines:
            if isinstance(message, dict) and "method" in message and "id" in message:
                with baton:  # a request may run long; a notification or a response is handled before the next line
                    reading["since"] = time.monotonic()
                    watching["served"] += 1
                    if watching["asleep"]:  # only the first request after a quiet spell pays for waking it
                        watching["asleep"] = False
                        woken.set()
            reply = server.handle(message)
            write([reply] if reply is not None else [])  # after the outbox
            with baton:
                if reading["thread"] is not me or gone.is_set():
                    return  # a new reader took over while this request ran (its clock is its own), or nobody reads
                reading["since"] = None
        if hasattr(server, "stop_waiting"):  # mcp_full's: a question waiting for the client gets its error now
            server.stop_waiting("the client closed its side of the connection")
        ended.set()

    def start_reader():
        """A new reader takes the baton (called holding the baton lock, or before any reader runs)."""
        reading["thread"], reading["since"] = threading.Thread(target=read_and_serve, daemon=True), None
        readers.append(reading["thread"])
        reading["thread"].start()

    def watch():
        """Give the baton to a new reader when the request being served has run longer than SLOW_S."""
        # While requests come, it looks every WATCH_S; after IDLE_S without one it sleeps until the next, so that
        # a server left open for hours costs no wake-ups (a wake-up for each request would cost more).
        seen, quiet_since = 0, time.monotonic()
        while not ended.is_set():
            woken.wait()
            if ended.wait(WATCH_S):
                return
            with baton:
                now = time.monotonic()
                slow = reading["since"] is not None and now - reading["since"] > SLOW_S
                if slow and len([thread for thread in readers if thread.is_alive()]) < MAX_READERS:
                    start_reader()
                if reading["since"] is not None or watching["served"] != seen:
                    seen, quiet_since = watching["served"], now
                elif now - quiet_since > IDLE_S:
                    watching["asleep"] = True
                    woken.clear()

    if hasattr(server, "on_send"):  # mcp_full's: a tool's notifications and questions go out as they come
        server.on_send = lambda: write([])
    restore = on_sigterm_exit()
    try:
        start_reader()
        threading.Thread(target=watch, daemon=True).start()
        ended.wait()  # Ctrl-C and SIGTERM interrupt this wait, whatever the readers are doing
        if not gone.is_set():
            for thread in readers:  # each running request still gets its response before the server exits
                thread.join()
        if hasattr(server, "end_listening"):  # mcp_full's: each listen stream gets its response
            server.end_listening()
    finally:
        woken.set()  # the watchdog, asleep, wakes to see the end
        restore()


def on_sigterm_exit():
    """Make SIGTERM raise SystemExit(0) in the main thread, as a host's stop is a clean exit; a function that undoes it."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        return lambda: None  # a signal reaches only the main thread: elsewhere, leave the handlers be
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    return lambda: signal.signal(signal.SIGTERM, previous)


def file_descriptor(file) -> int | None:
    """file's descriptor, or None for a file of Python's own (io.BytesIO and the like)."""
    try:
        return file.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def write_all(out, data: bytes):
    """Write data whole: straight to out's file descriptor when it has one (no buffer, and no lock of Python's)."""
    fd = file_descriptor(out)
    if fd is None:
        out.write(data)
        out.flush()
        return
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def read_lines(stdin, write):
    """Each message read from stdin, one per line; a line that is not one gets its error written here."""
    for line in raw_lines(stdin):
        if line is None:
            write([error_response(None, INVALID_REQUEST, f"message larger than {MAX_MESSAGE_BYTES} bytes")])
        elif line.strip():
            try:
                yield parse(line)
            except RPCError as exc:  # not JSON, so there is no id to respond to
                write([error_response(None, exc.code, exc.message)])


def raw_lines(stdin):
    """stdin's lines, newlines left out, read from its file descriptor when it has one; None for a line too long."""
    fd = file_descriptor(stdin)
    lines = Lines()
    while chunk := os.read(fd, 65536) if fd is not None else stdin.readline(65536):
        yield from lines.feed(chunk)
    yield from lines.end()  # end of input: the server exits with code 0


class Lines:
    """Whole lines out of chunks as they arrive, newlines left out, each bounded: a line over limit (by default
    MAX_MESSAGE_BYTES, the largest message) is dropped whole, up to its newline, and None stands in its place."""

    def __init__(self, limit: int | None = None):
        self.limit = MAX_MESSAGE_BYTES if limit is None else limit
        self.pieces, self.size = [], 0  # the line begun: kept in pieces, so an endless line costs linear time
        self.skipping = False  # inside a line over the limit: nothing of it is kept

    def feed(self, chunk: bytes) -> list:
        """The lines that chunk ends (None for each one over the limit); the rest waits for the next chunk."""
        *complete, rest = chunk.split(b"\n")
        lines = []
        for line in complete:
            if self.skipping or self.size + len(line) > self.limit:
                lines.append(None)  # the line ends here, dropped whole
            else:
                lines.append(b"".join(self.pieces + [line]) if self.pieces else line)
            self.pieces, self.size, self.skipping = [], 0, False
        if rest and not self.skipping:
            self.pieces.append(rest)
            self.size += len(rest)
            if self.size > self.limit:
                self.pieces, self.size, self.skipping = [], 0, True
        return lines

    def end(self) -> list:
        """At the end of the input: its last line, if it has no newline (None if over the limit); nothing waits after."""
        last = [None if self.skipping else b"".join(self.pieces)] if self.skipping or self.pieces else []
        self.pieces, self.size, self.skipping = [], 0, False
        return last


def claim_stdout():
    """Keep the real stdout for the wire, and send fd 1 and sys.stdout to stderr for everything else."""
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "wb", buffering=0)  # written whole by write_all: nothing waits in a buffer
    os.dup2(2, 1)  # a tool's print(), or a child process it starts, now lands on stderr
    sys.stdout = sys.stderr
    return out


class StdioTransport(Transport):
    """A server as a child process: requests to its stdin, responses read from its stdout.

        transport = StdioTransport([sys.executable, "server_demo.py"], trace=print_trace)
    The response is read on the caller's own thread; select() bounds each wait by `timeout` seconds.
    While it waits, whatever else arrives is handled: a notification is kept, a question from the
    server is answered at once.
    """

    def __init__(self, command: list, trace=None, timeout: float = 30.0, env: dict | None = None, stderr=None):
        super().__init__(trace)
        import subprocess
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        os.set_blocking(self.process.stdin.fileno(), False)  # a write waits in select(), with a deadline
        self.timeout = timeout
        self._lines = collections.deque()  # whole lines read but not handled yet
        self._splitter = Lines()  # the server's stdout as lines: a line over MAX_MESSAGE_BYTES is dropped

    def send(self, message: dict) -> dict | None:
        """Write one line; for a request, read until its response arrives."""
        self.write(message)
        if is_notification(message):
            return None
        return self.wait(message, lambda incoming: "method" not in incoming and same_id(incoming.get("id"), message["id"]))

    def listen(self, message: dict) -> dict:
        """Open a subscriptions/listen stream: its acknowledgement (or its error response)."""
        self.write(message)

        def opened(incoming):
            meta = (incoming.get("params") or {}).get("_meta") or {}
            acknowledged = incoming.get("method") == "notifications/subscriptions/acknowledged"
            return (acknowledged and same_id(meta.get(SUBSCRIPTION_ID_KEY), message["id"])) or (
                "error" in incoming and same_id(incoming.get("id"), message["id"]))
        return self.wait(message, opened)

    def cancel(self, message: dict, reason: str):
        """Cancel a request: on stdio, notifications/cancelled is the only way (2026-07-28, "Cancellation")."""
        self.write(notification("notifications/cancelled", {"requestId": message["id"], "reason": reason}))

    def write(self, message: dict):
        """One message as one line on the server's stdin; TimeoutError if the server reads none of it in time."""
        import select
        data = memoryview(to_json(self.traced("→", message), LENIENT).encode() + b"\n")
        deadline = time.monotonic() + self.timeout
        fd = self.process.stdin.fileno()
        while data:
            try:
                data = data[os.write(fd, data[:65536]):]
            except BlockingIOError:  # the pipe is full: wait for the server to read, within the deadline
                if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
                    raise TimeoutError(f"the server read nothing of {message.get('method', 'a response')} in {self.timeout} s")

    def wait(self, message: dict, wanted) -> dict:
        """Read messages until one is wanted; past the deadline, whatever keeps arriving, cancel and raise TimeoutError."""
        deadline = time.monotonic() + self.timeout
        while True:
            if time.monotonic() > deadline:
                self.cancel(message, f"no response in {self.timeout} s")
                raise TimeoutError(f"no response to {message['method']} (id {message['id']}) in {self.timeout} s")
            if not self._lines:
                self._read(deadline)
                continue
            try:
                incoming = decode(self._lines.popleft().decode())  # (bytes would have their encoding guessed)
            except (ValueError, RecursionError):  # UnicodeDecodeError too
                continue  # junk on the server's stdout (a stray print) is not a message
            if not isinstance(incoming, dict):
                continue
            if wanted(self.traced("←", incoming)):
                return incoming
            reply = self.receive(incoming)
            if reply is not None:
                self.write(reply)

    def _read(self, deadline: float):
        """Read what the server wrote, within the deadline, into whole lines (a line too long is dropped)."""
        import select
        fd = self.process.stdout.fileno()
        if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
            return  # nothing yet: wait() looks at the clock
        chunk = os.read(fd, 65536)
        if not chunk:
            raise ConnectionError(f"the server closed its stdout (exit code {self.process.poll()})")
        self._lines.extend(line for line in self._splitter.feed(chunk) if line is not None)  # a line too long: dropped

    def close(self) -> int:
        """Close stdin and wait for the server to exit; if it does not, terminate it, then kill it."""
        self.process.stdin.close()
        import subprocess
        for stop in (None, self.process.terminate, self.process.kill):  # ask, then insist
            if stop:
                stop()
            try:
                self.process.wait(timeout=2)
                break
            except subprocess.TimeoutExpired:
                continue
        self.process.stdout.close()
        return self.process.returncode
