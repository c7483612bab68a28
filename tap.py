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
import collections
import os
import signal
import sys
import threading
import time

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

    def __init__(self, command: list, log=None, subreaper: bool = False):
        self.command, self.log = command, log or sys.stderr
        self.subreaper = subreaper  # whether the server's orphans are this process's (become_subreaper, in main)
        self.log_lock = threading.Lock()
        self.child = self.start = None

    def run(self) -> int:
        """Start the server, pass its bytes until its stdout ends, and return its exit status (127: not started)."""
        import subprocess
        try:
            self.child = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
                                          start_new_session=os.name == "posix")  # a process group of its own
        except OSError as exc:
            print(f"{self.name}: cannot start {self.command[0]!r}: {exc.strerror}", file=sys.stderr)
            return 127  # as a shell says "command not found"
        self.start = start_of(self.child.pid)
        threading.Thread(target=self.watch_exit, daemon=True).start()
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
            self.stop()
        except BaseException:  # SIGTERM made an exception, or Ctrl-C: the server stops with the tap
            self.stop()
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
        self.stop(polite=True)

    def stop(self, polite: bool = False):
        """Stop the server (stop_server), then end what it left running."""
        stop_server(self.child, polite)
        self.end_leftovers()

    def watch_exit(self):
        """Once the server exits, end what it left running: a child holding its stdout open would hold the tap too."""
        self.child.wait()
        self.end_leftovers()

    def end_leftovers(self):
        """End every process the server started that still runs: all of this tap's descendants when it is a
        subreaper (setsid ones too); otherwise the server's process group, whose id stays taken while one lives."""
        if WATCHING and self.subreaper:
            end(self.leftovers)
        elif os.name == "posix":
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except OSError:
                pass  # the group is empty: nothing was left

    def leftovers(self) -> set:
        """The processes of this tap's tree still running, but the tap itself and the server while it runs."""
        table = processes()
        mine = descent([(os.getpid(), table[os.getpid()].start)], table, children_of(table)) - {os.getpid()}
        server = (self.child.pid, self.start) if self.child.returncode is None else None
        return {pid for pid in mine if table[pid].state != "Z" and (pid, table[pid].start) != server}

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
    wire = Tap(command, log, subreaper=become_subreaper())  # the tap's own process: what the server orphans is its
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: wire.child and threading.Thread(target=wire.stop, daemon=True).start())
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


# ---------------------------------------------------------------------------------------------------
# ---- The server's processes ----
# A server may start processes of its own, and they may outlive it (holding our pipe open) or leave its session
# (setsid). A tap that is a subreaper gets every orphan of theirs as its own child: what it ends is then all its
# descendants. Read from Linux's /proc; elsewhere the server's process group is all there is to end.
# ---------------------------------------------------------------------------------------------------

WATCHING = os.path.isdir("/proc/self/task")  # Linux: the processes are read from /proc
CLOCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc's times are in these ticks
PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096  # /proc's memory is in these pages
PR_SET_CHILD_SUBREAPER = 36  # prctl(2): orphans of this process's descendants become its children, not init's
END_TRIES = 1000  # looks at most while ending processes (about 5 s): a process of another user may not end

Process = collections.namedtuple("Process", "parent state cpu memory start")  # one line of /proc/PID/stat


def processes() -> dict:
    """Every process of the machine, from /proc: pid -> Process (parent pid, state, CPU seconds, resident bytes,
    start in clock ticks since boot)."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()  # the name, in parentheses, may hold anything
            except OSError:
                continue  # it ended meanwhile
            table[int(name)] = Process(int(fields[1]), fields[0].decode(), (int(fields[11]) + int(fields[12])) / CLOCK,
                                       int(fields[21]) * PAGE, int(fields[19]))
    return table


def start_of(pid: int) -> int | None:
    """When a process started, in clock ticks since boot (None: it is gone, or there is no /proc): with its pid, who
    it is (a pid alone may be another process's later)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def children_of(table: dict) -> dict:
    """Each process's children in a table of processes(): pid -> [pid, ...]."""
    children = {}
    for pid, process in table.items():
        children.setdefault(process.parent, []).append(pid)
    return children


def descent(starts: list, table: dict, children: dict) -> set:
    """The processes that are still the ones (pid, start) named, and every descendant of theirs."""
    stack = [pid for pid, start in starts if pid in table and table[pid].start == start]
    seen = set()
    while stack:
        pid = stack.pop()
        if pid not in seen:
            seen.add(pid)
            stack += children.get(pid, [])
    return seen


def become_subreaper() -> bool:
    """Make this process the parent of every orphan its descendants leave (Linux's PR_SET_CHILD_SUBREAPER), so that
    a process that outlives its parent stays in reach; whether Linux agreed."""
    try:
        import ctypes  # only here: a program that uses the tap as a library keeps its process as it is
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def send_signal(pid: int, number: int):
    """Send a signal to one process, if it is still there."""
    try:
        os.kill(pid, number)
    except OSError:
        pass


def end(running) -> None:
    """End the processes running() names, however many they start meanwhile: each stopped first (a stopped process
    starts no other), and once no new one appears, all killed, until running() names none."""
    stopped = set()
    for _ in range(END_TRIES):
        pids = running()
        if not pids:
            return
        if pids - stopped:
            for pid in pids - stopped:
                send_signal(pid, signal.SIGSTOP)
            stopped |= pids
            continue  # look again: a child born before its parent stopped is found now
        for pid in pids:
            send_signal(pid, signal.SIGKILL)
        time.sleep(0.005)


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
