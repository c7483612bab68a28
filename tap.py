"""The wire tap: put it in front of any stdio server's command, and watch every message a host and the server exchange.

    python tap.py [--log FILE] [--] <server command> [args...]

  11. The wire tap    it passes every byte through untouched both ways, and logs each line with its direction
                      (→ host to server, ← server to host) to FILE or stderr, a line before it is passed on, so
                      that a request is always logged before its answer. board.py is the tap with a window.

In a host's configuration the tap's command simply replaces the server's:
    {"command": "/usr/bin/python3", "args": ["/path/to/mcp_min/tap.py", "--log", "/tmp/wire.log", "--",
                                              "/usr/bin/python3", "/path/to/mcp_min/server_demo.py"]}
"""

import codecs
import os
import sys
import threading

# ---------------------------------------------------------------------------------------------------
# ---- 11. The wire tap ----
# It knows nothing of MCP but that stdio carries one message a line: it imports nothing of the project.
# ---------------------------------------------------------------------------------------------------

USAGE = "usage: python tap.py [--log FILE] [--] <server command> [args...]"
GRACE_S = 2.0  # after end of input a server may take this long to exit; then SIGTERM, then SIGKILL
LOG_STEP = 1 << 20  # a line longer than this is logged a piece this long at a time, never copied whole


class Tap:
    """A server run behind the tap: every byte passed through untouched both ways, each line logged before it is
    passed on, so that a request is always logged before its answer. board.py's relay is a Tap that also records
    each line, and may change it (passed, overridden).

    The server stops with the tap: when the host closes our stdin (after GRACE_S), when the host closes our
    stdout, or on SIGTERM or SIGINT. A server killed by signal N reports 128 + N, as a shell does.
    """

    name = "tap"  # how its messages on stderr begin

    def __init__(self, command: list, log=None):
        self.command, self.log = command, log or sys.stderr
        self.log_lock = threading.Lock()
        self.child = None

    def run(self) -> int:
        """Start the server, pass its bytes until its stdout ends, and return its exit status (127: not started)."""
        import subprocess
        try:
            self.child = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            print(f"{self.name}: cannot start {self.command[0]!r}: {exc.strerror}", file=sys.stderr)
            return 127  # as a shell says "command not found"
        if self.log is sys.stderr:  # a pipe the host may never read: a full one costs log lines, never the relay's
            try:
                os.set_blocking(sys.stderr.fileno(), False)
            except (OSError, ValueError):
                pass
        threading.Thread(target=self.upstream, daemon=True).start()
        try:
            self.pump(self.child.stdout.fileno(), 1, "←")
        except OSError:  # the host is gone: nothing more can reach it, and the server must not outlive the tap
            print(f"{self.name}: the host closed its side of the pipe; stopping the server", file=sys.stderr)
            stop_server(self.child)
        except BaseException:  # SIGTERM made an exception, or Ctrl-C: the server stops with the tap
            stop_server(self.child)
            raise
        code = self.child.wait()
        return 128 - code if code < 0 else code  # killed by signal N: 128 + N

    def upstream(self):
        """Host to server; when the host closes, so does the server's stdin, and the server has GRACE_S to go."""
        try:
            self.pump(0, self.child.stdin.fileno(), "→")
        except OSError:
            pass  # the server has exited: its stdin is gone
        self.child.stdin.close()
        stop_server(self.child, polite=True)

    def pump(self, source: int, target: int, arrow: str):
        """Copy bytes as they arrive, handing each read's whole lines to passed before its bytes are passed on."""
        pending = bytearray()  # the line begun and not ended: it grows, never copied whole (a long line is linear)
        while True:
            chunk = os.read(source, 65536)
            if not chunk:
                break
            *ends, rest = chunk.split(b"\n")
            lines = []
            if ends:  # each line as its pieces: the one begun earlier is never joined into a copy of itself
                lines = [[pending, ends[0]], *([end] for end in ends[1:])]
                pending = bytearray()
            pending += rest
            self.passed(target, arrow, lines, chunk)
        if pending:
            self.passed(target, arrow, [[pending]], b"", final=True)  # a last line without its newline

    def passed(self, target: int, arrow: str, lines: list, chunk: bytes, final: bool = False):
        """One read: log its whole lines (each given as its pieces), then pass its bytes on unchanged. final: lines
        holds the last line, which no newline ended, and whose bytes went on already."""
        self.write_log(arrow, lines)
        self.forward(target, chunk)

    def forward(self, target: int, data: bytes):
        """Write all of data to target."""
        unsent = memoryview(data)
        while unsent:
            unsent = unsent[os.write(target, unsent):]

    def write_log(self, arrow: str, lines: list):
        """Log each line (given as its pieces), one message as stdio requires, as it is; invalid UTF-8 as U+FFFD."""
        with self.log_lock:
            try:
                self.log.flush()
                for data in log_bytes(arrow, lines):
                    unsent = memoryview(data)
                    while unsent:  # straight to the file descriptor: a non-blocking one says when nobody reads it
                        unsent = unsent[os.write(self.log.fileno(), unsent):]
            except BlockingIOError:
                pass  # nobody reads the log: these lines are dropped; the bytes between host and server are not


def tap(command: list, log=None) -> int:
    """Run command as a server behind the tap (Tap); its exit status. SIGTERM and SIGINT stop the server."""
    import signal
    wire = Tap(command, log)
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: wire.child and threading.Thread(target=stop_server, args=(wire.child,),
                                                                          daemon=True).start())
    return wire.run()


def log_bytes(arrow: str, lines: list):
    """The log's bytes for lines (each given as its pieces), yielded a step at a time: the usual short lines of a chunk
    together, in one write; a line longer than LOG_STEP decoded and encoded a step at a time, never copied whole."""
    short = []
    for pieces in lines:
        if sum(map(len, pieces)) <= LOG_STEP:
            short.append(f"{arrow} {b''.join(pieces).decode('utf-8', 'replace')}\n")
            continue
        if short:
            yield "".join(short).encode()
            short = []
        decoder = codecs.getincrementaldecoder("utf-8")("replace")  # a character cut between two steps stays whole
        yield f"{arrow} ".encode()
        for piece in pieces:
            for at in range(0, len(piece), LOG_STEP):
                yield decoder.decode(piece[at:at + LOG_STEP]).encode()
        yield decoder.decode(b"", final=True).encode() + b"\n"
    if short:
        yield "".join(short).encode()


def stop_server(child, polite: bool = False):
    """Stop a server child: (politely: first wait GRACE_S for it to exit by itself) SIGTERM, then SIGKILL."""
    import subprocess
    steps = [None, child.terminate, child.kill] if polite else [child.terminate, child.kill]
    for step in steps:
        if step:
            step()
        try:
            child.wait(timeout=GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def main(argv: list | None = None) -> int:
    """The command line: python tap.py [--log FILE] [--] <server command> [args...]."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] in (["--help"], ["-h"]):
        print(USAGE + "\n\nRuns the server command, passes every byte between its stdio and ours unchanged, and logs"
              "\neach line with its direction (→ host to server, ← server to host) to FILE or stderr.")
        return 0
    log_path = args[1] if args[:1] == ["--log"] and len(args) > 1 else None
    command = args[2:] if log_path else args
    command = command[1:] if command[:1] == ["--"] else command  # "--" may be eaten by the host: optional
    if not command or command[0].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    if not log_path:
        return tap(command)
    try:
        log = open(log_path, "a", encoding="utf-8")
    except OSError as exc:
        print(f"tap: cannot write the log {log_path!r}: {exc.strerror}", file=sys.stderr)
        return 2
    with log:
        return tap(command, log)


if __name__ == "__main__":
    sys.exit(main())
