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


def tap(command: list, log=None) -> int:
    """Run command as a server, pass every byte through untouched both ways, and log each line; its exit status.

    The server stops with the tap: when the host closes our stdin (after GRACE_S), when the host closes our
    stdout, or on SIGTERM or SIGINT. A server killed by signal N reports 128 + N, as a shell does.
    """
    import signal, subprocess
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    except OSError as exc:
        print(f"tap: cannot start {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127  # as a shell says "command not found"
    log, log_lock = log or sys.stderr, threading.Lock()
    if log is sys.stderr:  # a pipe the host may never read: a full one costs log lines, never the relay's progress
        try:
            os.set_blocking(sys.stderr.fileno(), False)
        except (OSError, ValueError):
            pass

    def pump(source: int, target: int, arrow: str):
        """Copy bytes as they arrive, logging each whole line before the bytes that end it are passed on."""
        pending = bytearray()  # the line begun and not ended: it grows, never copied whole (a long line is linear)
        while True:
            chunk = os.read(source, 65536)
            if not chunk:
                break
            *ends, rest = chunk.split(b"\n")
            if ends:  # each line as its pieces: the one begun earlier is never joined into a copy of itself
                write_log(arrow, [[pending, ends[0]], *([end] for end in ends[1:])])  # logged before its response
                pending = bytearray()
            pending += rest
            unsent = memoryview(chunk)
            while unsent:  # then the bytes, unchanged
                unsent = unsent[os.write(target, unsent):]
        write_log(arrow, [[pending]] if pending else [])  # a last line without its newline

    def write_log(arrow: str, lines: list):
        """Log each line (given as its pieces), one message as stdio requires, as it is; invalid UTF-8 as U+FFFD."""
        with log_lock:
            try:
                log.flush()
                for data in log_bytes(arrow, lines):
                    unsent = memoryview(data)
                    while unsent:  # straight to the file descriptor: a non-blocking one says when nobody reads it
                        unsent = unsent[os.write(log.fileno(), unsent):]
            except BlockingIOError:
                pass  # nobody reads the log: these lines are dropped; the bytes between host and server are not

    def upstream():
        """Host to server; when the host closes, so does the server's stdin, and the server has GRACE_S to go."""
        try:
            pump(0, child.stdin.fileno(), "→")
        except OSError:
            pass  # the server has exited: its stdin is gone
        child.stdin.close()
        stop_server(child, polite=True)

    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: threading.Thread(target=stop_server, args=(child,), daemon=True).start())
    threading.Thread(target=upstream, daemon=True).start()
    try:
        pump(child.stdout.fileno(), 1, "←")
    except BrokenPipeError:
        print("tap: the host closed its side of the pipe; stopping the server", file=sys.stderr)
        stop_server(child)
    code = child.wait()
    return 128 - code if code < 0 else code  # killed by signal N: 128 + N


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
