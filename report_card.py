"""The report card: the course's rules checked against any MCP server over stdio, each with its passage and the
bytes that show it.

    python report_card.py [flags] -- <server command> [args...]
    python report_card.py --not-allowed delete_db --raises 'count_lessons {"course": "postgres"}' \\
                          --change-tools enable_subtract -- python server_demo.py
    python report_card.py --help          # every flag, the five outcomes, the exit statuses
    python report_card.py --class submissions/ --config assignment.json --gradebook grades.csv \\
                          -- python {submission}/server.py        # a class, in one command (docs/grading.md)

Put it where a host would start the server, as you would the tap or the board. It starts the server afresh for
each rule, drives it through a short scripted session, and prints one row a rule with its outcome: ✓ it holds;
✗ it does not (with the messages that show it, → sent to the server, ← received); – not applicable (the server
does not offer what the rule is about, as its capabilities show or --not-offered says); ? not tested (the rule
needs what only the server's author knows, and the row names the flag that would tell it); ! could not run (no
session opened, the card's deadline passed, or the server's processes went over a bound). The rules come in the
course's order: course 000's, course 002's, course 004's (the 2026-07-28 revision), then stdio's own, each provoked
on its own, one odd thing at a time, so that no order of checks hides a bug behind another. Where the lab and the
spec choose differently, both verdicts are shown, and --spec judges by the spec: initialize offers its newest
revision (2025-11-25), each row cites the revision the server agreed, and what the spec only recommends (SHOULD) is
information, never a failure.

The exit status is the first of these that applies: 2 a mistake on the command line (or a flag naming a tool the
server does not list); 4 the server could not be run, no session opened, or a rule could not run; 1 a rule fails;
3 none fails, but some were not tested; 0 every rule of the level was tested and holds (or does not apply).

  1. The wire       Wire: one server process and all it starts, watched and bounded; lines in and out, replies
                    matched by id, every read and write with a deadline
  2. A rule's run   Run: fresh processes on demand, requests in the rule's era; Broken, and the three unjudged
  3. The rules      one function a rule, registered with its id, level, claim and passage
  4. The card       the first processes side by side (eras, tools, stdin's end), then every rule, rules side by side
  5. The text       the card as a student reads it, written from the JSON
  6. The board      every rule's session on the wire board's page, the card beside the sequence diagram
  7. A class        each folder a submission, side by side; the formats graders read are grading.py's
  8. The command line

The words are mcp_min's (its module docstring): a message is a request, a notification or a response; a
response holds a result or an error. The codes are the course's, from board.py's table: never the lab's constants,
which a lesson's exercise changes.
"""

import argparse
import collections
import concurrent.futures
import functools
import itertools
import json
import math
import os
import queue
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

try:
    import resource  # POSIX: the rlimits, a backstop
except ImportError:
    resource = None

import board  # the wire board: read_line (the lab's parse), the course's codes, the page
import grading  # the card's verdicts as points, in the formats graders read
from mcp_full import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MAX_MESSAGE_BYTES, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from tap import WATCHING, become_subreaper, children_of, descent, end, processes, send_signal, start_of
from mcp_min import error_response, notification, request

COURSE = board.CODES  # the course's code for each case, written from its text (board.py, section 1)
SCHEMA_VERSION = 1  # the JSON card's: a new version when a field changes its meaning or goes away
DEFAULT_TIMEOUT = 10.0  # seconds a response may take (the first includes the server's start), then the rule fails
RULE_DEADLINE = 3  # a rule's deadline, unless --rule-deadline: this many --timeout (a rule awaits several responses)
CARD_DEADLINE = 30  # the whole card's, unless --deadline: this many --timeout
KILL_GRACE = 1.0  # seconds a server has to end after SIGTERM, before every process of its tree is killed
HANDSHAKE_VERSION = "2025-06-18"  # the version course 000's worked trace offers
SPEC_VERSION = "2025-11-25"  # the newest handshake revision: what --spec offers, to judge by the newest the server speaks
STATELESS_VERSION = "2026-07-28"  # the revision course 004 describes
FUTURE_VERSION = "2099-12-31"  # a version no server speaks: version negotiation must not agree to it
CLIENT = {"name": "report-card", "version": "0.2.0"}
HELLO = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT}  # no client capability
META = {PROTOCOL_VERSION_KEY: STATELESS_VERSION, CLIENT_CAPABILITIES_KEY: {}, CLIENT_INFO_KEY: CLIENT}
NO_SUCH_METHOD = "report_card/no_such_method"
NO_SUCH_TOOL = "report_card_no_such_tool"
NOT_JSON = "this line is not JSON"
WIDTH = 118  # the card's columns: its prose is wrapped, each line of an exchange cut, to fit
INDENT = " " * 6  # what a row says below its first line
SHOWN_WIDTH = WIDTH - len(INDENT) - 2  # a line of an exchange, after its arrow
MAX_LINES = 10_000  # lines a server may write in one rule's session; past them the card stops reading it
MAX_PAGES = 20  # pages of tools/list the card follows to check the flags' tools
LEVELS = {"000": "course 000", "002": "course 002", "004": "course 004", "stdio": "stdio"}
OUTCOMES = {  # each outcome a rule can have: its mark on the text card, and its words
    "pass": ("✓", "holds"),
    "fail": ("✗", "fails"),
    "not_applicable": ("–", "not applicable"),
    "not_tested": ("?", "not tested"),
    "could_not_run": ("!", "could not run"),
}
EXIT_STATUSES = {  # the exit status: what it says; the first that applies, in this order
    2: "a mistake on the command line, or a flag naming a tool the server does not list",
    4: "the server could not be run, no session opened, or a rule could not run",
    1: "a rule fails",
    3: "no rule fails, but some were not tested",
    0: "every rule of the level was tested and holds (or does not apply)",
}


def exit_status(outcomes) -> int:
    """The exit status of a card whose rules had these outcomes (EXIT_STATUSES, after 2: 4, 1, 3, then 0)."""
    for outcome, status in (("could_not_run", 4), ("fail", 1), ("not_tested", 3)):
        if outcome in outcomes:
            return status
    return 0


def id_key(id) -> str:
    """An id as a key: 1, "1", true and 1.0 are four different ids (replies are matched by id, exactly)."""
    return json.dumps(id)


def trim(line: str, focus: str | None = None, width: int = SHOWN_WIDTH) -> str:
    """A line cut to width characters; with focus, the part around it is kept."""
    if len(line) <= width:
        return line
    at = line.find(focus) if focus else -1
    if at < width - 30:
        return line[:width - 1] + "…"
    start = max(at - 20, 0)
    return line[:40] + " … " + line[start:start + width - 44] + "…"


# ---------------------------------------------------------------------------------------------------
# ---- 1. The wire ----
# One server process and every process it starts, followed as one tree (children that called setsid too):
# watched and bounded, not sandboxed (isolation is a container's or a CI job's, docs/grading.md). One watcher
# thread looks at /proc each TICK and counts what each card's processes hold together (memory, processes, CPU
# time); the bytes on stdout and stderr are counted as they are read. A card whose processes go over a bound is
# stopped, and every process of theirs ended. A thread moves the lines of stdout into a bounded inbox;
# everything else (parsing, matching a response to its request by id, answering the server's own requests)
# happens on the rule's thread, while it waits, and every wait and every write ends at its time limit or at the
# deadline, whichever comes first.
# ---------------------------------------------------------------------------------------------------

MB = 1024 * 1024
BOUNDS = {  # each bound on one card's server processes, all of them together: its flag, its words, its unit, its
    # default, what it counts. What the card keeps of a server's lines is no more than they: so many lines and bytes.
    "memory_mb": ("--max-memory", "memory", "MB", 2048, "their resident memory, summed"),
    "processes": ("--max-processes", "processes", "", 64, "how many run at once"),
    "cpu_seconds": ("--max-cpu", "CPU time", "s", 600, "their CPU time, each process's since it started"),
    "stdout_mb": ("--max-stdout", "bytes on stdout", "MB", 16, "what they write on stdout, in all the card's sessions"),
    "stdout_lines": ("--max-lines", "lines on stdout", "", 40_000, "the lines they write on stdout, in all the card's "
                                                                    "sessions"),
    "stderr_mb": ("--max-stderr", "bytes on stderr", "MB", 16, "what they write on stderr, in all the card's sessions"),
}  # the wall time is the card's deadline (--deadline)
TICK = 0.1  # seconds between two looks at the processes, and the longest a write waits between two tries
MARK = "REPORT_CARD_PROCESS"  # in each server's environment, its tree's name: its children inherit it
INBOX_LINES = 1000  # lines read from a server and not yet taken by its rule; past them the reader waits
INBOX_BYTES = 8 * MB  # and bytes (one line of any length gets in when the inbox is empty)
MAX_ANSWERED = 100  # requests from the server the card answers in one session; the rest it leaves unanswered
STDERR_KEPT = 4000  # the last bytes of a server's stderr, kept for its last words
def mark_of(pid: int) -> str | None:
    """The tree a process's environment names (MARK), or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            variables = environ.read(MB).split(b"\0")
    except OSError:
        return None  # ended, or not ours to read
    prefix = MARK.encode() + b"="
    return next((v[len(prefix):].decode("ascii", "replace") for v in variables if v.startswith(prefix)), None)


def backstop(pid: int, limits: dict):
    """rlimits on a server process, as a backstop only: no core file, and a little more CPU time than the whole tree
    may use. Not RLIMIT_NPROC (nothing for root, and it counts the user's every process) nor RLIMIT_AS (Node and Java
    reserve more address space than they use, and would not start)."""
    if resource is None or not hasattr(resource, "prlimit"):
        return
    cpu = math.ceil(limits["cpu_seconds"]) + 2
    for limit, values in ((resource.RLIMIT_CORE, (0, 0)), (resource.RLIMIT_CPU, (cpu, cpu + 1))):
        try:
            resource.prlimit(pid, limit, values)
        except (OSError, ValueError):
            pass  # it ended already, or may not be limited so: the watcher bounds it all the same


class Account:
    """What one card's server processes used, all of them together, against the card's bounds; what the card kept
    of their lines; the first bound they went over (over(breach) is called once, by the thread that saw it)."""

    def __init__(self, bounds: dict | None = None, over=None):
        self.limits = {name: default for name, (_, _, _, default, _) in BOUNDS.items()} | (bounds or {})
        self.over = over
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self.peak = {"memory_mb": 0.0, "processes": 0}
        self.cpu = 0.0  # CPU seconds of every process so far
        self.cpu_ended = 0.0  # of the trees already ended
        self.written = {"stdout_mb": 0, "stdout_lines": 0, "stderr_mb": 0}  # bytes, lines
        self.breach = None
        self.breached_at = None  # when (time.monotonic()'s)
        self.outlived = 0  # processes still running after the server that started them exited: ended
        self.ignores_sigterm = False  # a process SIGTERM did not end in KILL_GRACE: the next are killed at once

    def count(self, stream: str, size: int, name: str, lines: int = 0) -> bool:
        """Count bytes (and lines) a server wrote on "stdout" or "stderr"; False once they are over a bound."""
        with self.lock:
            self.written[f"{stream}_mb"] += size
            self.written["stdout_lines"] += lines
            used = {f"{stream}_mb": self.written[f"{stream}_mb"] / MB, "stdout_lines": self.written["stdout_lines"]}
        for bound, value in used.items():
            if value > self.limits[bound]:
                self.exceeded(bound, value, name)
                return False
        return True

    def measure(self, used: dict, names: dict):
        """What the processes hold now ({"memory_mb", "processes", "cpu_seconds"}, the CPU time of the trees not yet
        ended); names: the rule whose session weighs most on each bound."""
        with self.lock:
            self.peak["memory_mb"] = max(self.peak["memory_mb"], used["memory_mb"])
            self.peak["processes"] = max(self.peak["processes"], used["processes"])
            self.cpu = max(self.cpu, self.cpu_ended + used["cpu_seconds"])
            now = {"processes": used["processes"], "memory_mb": used["memory_mb"], "cpu_seconds": self.cpu}
        for bound, value in now.items():
            if value > self.limits[bound]:
                self.exceeded(bound, value, names[bound])
                return

    def exceeded(self, bound: str, used: float, name: str):
        """A bound passed: the first is kept, and told to over()."""
        with self.lock:
            if self.breach:
                return
            self.breached_at = time.monotonic()
            self.breach = {"bound": bound, "limit": self.limits[bound], "used": round(used, 1),
                           "at": round(self.breached_at - self.started, 1), "rule": name}
            self.breach["text"] = bound_text(self.breach)
        if self.over:
            self.over(self.breach)

    def usage(self) -> dict:
        """What the processes used: peaks of memory and processes, totals of CPU time and output; what was ended."""
        with self.lock:
            return {"memory_mb": round(self.peak["memory_mb"], 1), "processes": self.peak["processes"],
                    "cpu_seconds": round(self.cpu, 1), "stdout_mb": round(self.written["stdout_mb"] / MB, 2),
                    "stdout_lines": self.written["stdout_lines"],
                    "stderr_mb": round(self.written["stderr_mb"] / MB, 2), "outlived": self.outlived,
                    "ignored_sigterm": self.ignores_sigterm}


def bound_text(breach: dict) -> str:
    """A bound passed, in words: which, by how much, when, in which rule's session."""
    where = ("the card's first sessions" if breach["rule"] == START["id"] else
             f"{breach['rule']}'s session" if breach["rule"] else "a session")
    if breach["bound"] not in BOUNDS:  # the wall time: the card's deadline
        return f"the card's deadline ({breach['limit']:g} s, the wall time bound) passed, in {where}"
    _, words, unit, _, _ = BOUNDS[breach["bound"]]
    space = " " if unit else ""
    return (f"the server's processes went over the {words} bound: {breach['used']:g}{space}{unit} of "
            f"{breach['limit']:g}{space}{unit}, {breach['at']:g} s into the card, in {where}")


class Tree:
    """One server process and every process it started, setsid ones too, as the watcher last saw them."""

    def __init__(self, process: subprocess.Popen, mark: str, account: Account, name: str):
        self.process, self.mark, self.account, self.name = process, mark, account, name
        self.start = start_of(process.pid)  # with the pid, who the root is: a pid alone may be another's later
        self.members = {}  # pid -> start, of each process of the tree the watcher found, the root too
        self.cpu = {}  # pid -> its CPU seconds when last seen
        self.cpu_ended = 0.0  # the CPU seconds of the members gone
        self.outlived = set()  # the processes found running after the root exited


class Watcher:
    """Every server process the cards started, each followed as a tree and its card's held to their bounds: one
    thread, a look at /proc each TICK while a tree lives (WATCHER, the one of this process)."""

    def __init__(self):
        self.lock = threading.RLock()  # a look at /proc and the start of a server never interleave
        self.trees = set()
        self.roots = set()  # the pids of the servers started and not yet reaped: subprocess reaps them, never this
        self.marks = {}  # (pid, start) -> the tree its environment names, for each process not found by descent
        self.subreaper = False  # whether the orphans of the servers are this process's children (main() asks it)
        self.names = itertools.count(1)
        self.thread = None

    def spawn(self, command: list, account: Account, name: str, cwd: str | None = None,
              env: dict | None = None) -> Tree:
        """Start a server process in a session and process group of its own, its tree followed from then on."""
        with self.lock:
            mark = f"{os.getpid()}-{next(self.names)}"
            process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       start_new_session=os.name == "posix", cwd=cwd,
                                       env={**(os.environ if env is None else env), MARK: mark})
            tree = Tree(process, mark, account, name)
            self.trees.add(tree)
            self.roots.add(process.pid)
            if WATCHING and self.thread is None:
                self.thread = threading.Thread(target=self.watch, daemon=True)
                self.thread.start()
        backstop(process.pid, account.limits)
        return tree

    def watch(self):
        """The thread: a look each TICK, and what it calls for done outside the lock; it ends with the last tree."""
        while True:
            time.sleep(TICK)
            with self.lock:
                if not self.trees:
                    self.thread = None
                    return
                todo = self.look()
            for action in todo:
                action()

    def find(self, table: dict) -> dict:
        """Each tree's processes now (tree -> pids): by descent from its root and from the members it had, and by
        the MARK in the environment of an orphan started since (its parent gone, it is init's or this process's)."""
        children = children_of(table)
        found = {tree: descent([(tree.process.pid, tree.start), *tree.members.items()], table, children)
                 for tree in self.trees}
        placed = set().union(*found.values())
        by_mark = {tree.mark: tree for tree in self.trees}
        oldest = min((tree.start for tree in self.trees if tree.start is not None), default=0)
        for pid, process in table.items():
            if pid not in placed and process.start >= oldest and process.parent in (1, os.getpid()):
                key = (pid, process.start)
                if key not in self.marks:
                    self.marks[key] = mark_of(pid)  # once a process: most are none of the card's
                if self.marks[key] in by_mark:
                    found[by_mark[self.marks[key]]] |= descent([key], table, children)
        self.marks = {key: mark for key, mark in self.marks.items()
                      if key[0] in table and table[key[0]].start == key[1]}
        return found

    def look(self) -> list:
        """Find every tree's processes, count what each card's hold, reap what is ours to reap; what to do next (a
        bound passed, processes that outlived their server, orphans of no tree)."""
        table = processes()
        found = self.find(table)
        todo, weights = [], {}  # account -> bound -> [(a tree's weight on it, its rule)]
        for tree, pids in found.items():
            tree.members = {pid: table[pid].start for pid in pids}
            for pid in set(tree.cpu) - pids:
                tree.cpu_ended += tree.cpu.pop(pid)
            tree.cpu |= {pid: table[pid].cpu for pid in pids}
            running = [pid for pid in pids if table[pid].state != "Z"]
            weight = {"memory_mb": sum(table[pid].memory for pid in running) / MB, "processes": len(running),
                      "cpu_seconds": tree.cpu_ended + sum(tree.cpu.values())}
            for bound, value in weight.items():
                weights.setdefault(tree.account, {}).setdefault(bound, []).append((value, tree.name))
            if tree.process.pid not in running and set(running) - tree.outlived:
                todo.append(functools.partial(self.kill, tree))  # the server exited: what it left running is ended
            self.reap([pid for pid in pids if table[pid].state == "Z" and table[pid].parent == os.getpid()])
        for account, by_bound in weights.items():
            todo.append(functools.partial(account.measure, {bound: sum(v for v, _ in pairs) for bound, pairs in
                                                            by_bound.items()},
                                          {bound: max(pairs)[1] for bound, pairs in by_bound.items()}))
        if self.subreaper:  # a child of this process that is no server and in no tree: an orphan of one, ended
            placed = set().union(*found.values())
            orphans = [pid for pid, process in table.items() if process.parent == os.getpid() and pid not in placed
                       and pid not in self.roots]
            for pid in orphans:
                send_signal(pid, signal.SIGKILL)
            self.reap(orphans)
        return todo

    def reap(self, pids: list):
        """Collect the exit of orphans that became this process's children (never a server: subprocess reaps it)."""
        for pid in pids:
            if pid not in self.roots:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def kill(self, tree: Tree):
        """End every process of a tree (tap's end: each stopped, then killed, until none is left), then its process
        group while the server is unreaped, the group's id then still its own (without /proc, all there is). Those
        running when the server had exited are counted."""
        exited = None

        def running() -> set:
            """The tree's processes running now, looked for afresh; those that outlived the server counted."""
            nonlocal exited
            if not WATCHING:
                return set()
            with self.lock:
                table = processes()
                pids = self.find(table).get(tree, set())
                alive = {pid for pid in pids if table[pid].state != "Z"}
                tree.members = tree.members | {pid: table[pid].start for pid in pids}  # anew: others read it
                exited = tree.process.pid not in alive if exited is None else exited  # before this ended it
                if exited and alive - tree.outlived:
                    with tree.account.lock:
                        tree.account.outlived += len(alive - tree.outlived)
                    tree.outlived |= alive
                if self.subreaper:
                    self.reap([pid for pid in pids if table[pid].state == "Z" and table[pid].parent == os.getpid()])
            return alive

        end(running)
        with self.lock:
            if os.name == "posix" and tree.process.returncode is None:  # no new process gets a living group's id
                try:
                    os.killpg(tree.process.pid, signal.SIGKILL)
                except OSError:
                    pass

    def forget(self, tree: Tree):
        """A tree whose root is reaped: no longer followed; its CPU time kept on its card's account."""
        with self.lock:
            self.trees.discard(tree)
            self.roots.discard(tree.process.pid)
        with tree.account.lock:
            tree.account.cpu_ended += tree.cpu_ended + sum(tree.cpu.values())


WATCHER = Watcher()


class Inbox:
    """The lines a reader thread took from a server's stdout, until the rule's thread takes them: at most INBOX_LINES
    and INBOX_BYTES; past them the reader waits, and so does the server, its pipe full."""

    def __init__(self):
        self.lines = collections.deque()
        self.size = 0
        self.closed = False
        self.changed = threading.Condition()

    def put(self, line: bytes | None) -> bool:
        """Add a line (None: stdout ended), waiting for room; False once the inbox is closed."""
        with self.changed:
            while self.lines and not self.closed and (len(self.lines) >= INBOX_LINES or self.size >= INBOX_BYTES):
                self.changed.wait()
            if self.closed:
                return False
            self.lines.append(line)
            self.size += len(line or b"")
            self.changed.notify_all()
            return True

    def get(self, timeout: float) -> bytes | None:
        """The next line (None: stdout ended); queue.Empty if none came within timeout seconds."""
        with self.changed:
            if not self.changed.wait_for(lambda: self.lines or self.closed, timeout) or not self.lines:
                raise queue.Empty
            line = self.lines.popleft()
            self.size -= len(line or b"")
            self.changed.notify_all()
            return line

    def close(self):
        """Take no more lines, and drop those waiting: the reader stops."""
        with self.changed:
            self.closed = True
            self.lines.clear()
            self.changed.notify_all()


class Wire:
    """One server process and the lines that crossed: send messages, wait for the response to a request by its id.

        wire = Wire(["python", "server_demo.py"], timeout=10, record=print_line)
        sent = wire.send(request(1, "ping"))
        wire.reply(sent)      # the entry of the response whose id is 1, or None (no response in time, or the end)
    Each line is an entry: {"dir": "→" or "←", "line": text, "json": bool, "message": the value}; record(entry)
    keeps it (and gives it its place on the card's tape, "at"). No wait and no write goes past deadline
    (time.monotonic()'s). The process and all it starts are counted on account (its card's), in name's session.
    """

    def __init__(self, command: list, timeout: float, record, deadline: float = math.inf, deadline_text: str = "",
                 account: Account | None = None, name: str = "", cwd: str | None = None, env: dict | None = None):
        self.timeout, self.record = timeout, record
        self.deadline, self.deadline_text = deadline, deadline_text  # when every wait ends; its words
        self.account = account or Account()
        self.tree = WATCHER.spawn(command, self.account, name, cwd, env)  # OSError: the command cannot start
        self.process = self.tree.process
        os.set_blocking(self.process.stdin.fileno(), False)  # a write waits for room with a deadline, not forever
        self.inbox = Inbox()
        self.stderr_kept = b""  # its last STDERR_KEPT bytes
        self.received, self.sent = [], []
        self.by_id = {}  # id key -> the responses with that id, in order
        self.asked = set()  # id keys of the requests the card sent
        self.said = set()  # each message the card sent, as a key: the same message coming back is an echo, no answer
        self.last_id = 0
        self.ended = False  # the server's stdout reached its end (or the card stopped reading it)
        self.flooded = ""  # why the card stopped reading a server that wrote too much
        self.stuck = False  # a response did not come in time: later waits on this server do not wait again
        self.cut = False  # a wait was ended by the deadline, before its own time limit
        self.stdin_closed = False
        self.not_reading = False  # a write found no room before its deadline: the server stopped reading stdin
        self.hello = {}  # the initialize result, once a session is open in the handshake era
        self.waited = False  # the last wait was cut short, the server being stuck already
        self.answered = 0  # requests of the server's the card answered
        self.readers = [threading.Thread(target=self._read, daemon=True),
                        threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read(self):
        """The reader thread: each line of the server's stdout into the inbox, then None at its end; every byte
        counted on the account, and reading stops at its bound."""
        stream, name = self.process.stdout, self.tree.name
        try:
            while (line := stream.readline(MAX_MESSAGE_BYTES + 1)) and self.account.count("stdout", len(line), name, 1):
                if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                    while rest := stream.readline(MAX_MESSAGE_BYTES):  # the rest of it: counted, not kept
                        if not self.account.count("stdout", len(rest), name) or rest.endswith(b"\n"):
                            break
                    line = b"(a line longer than %d bytes)" % MAX_MESSAGE_BYTES
                if not self.inbox.put(line.removesuffix(b"\n")):
                    break  # the card reads no more of it
        except (OSError, ValueError):
            pass  # the process was ended
        stream.close()  # here, not in close(): a child that holds the pipe open must not hold the card too
        self.inbox.put(None)

    def _read_stderr(self):
        """The stderr thread: its last STDERR_KEPT bytes kept, every byte counted, reading stopped at its bound."""
        stream = self.process.stderr
        try:
            while (chunk := stream.read1(65536)) and self.account.count("stderr", len(chunk), self.tree.name):
                self.stderr_kept = (self.stderr_kept + chunk)[-STDERR_KEPT:]
        except (OSError, ValueError):
            pass
        stream.close()

    # -- lines out --

    def send(self, message) -> dict:
        """Write one message as a line of JSON; its entry."""
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            self.asked.add(id_key(message["id"]))
        return self.send_line(json.dumps(message))

    def send_line(self, text: str) -> dict:
        """Write one line as it is, within the time limit and the deadline; its entry."""
        _, is_json, value = board.read_line(text)
        if is_json:
            self.said.add(json.dumps(value, sort_keys=True))
        entry = self.record({"dir": "→", "line": text, "json": is_json, "message": value if is_json else None})
        self.sent.append(entry)
        if not self.stdin_closed:
            # The server gone, or not reading: what it did before is on the wire all the same.
            self.stdin_closed = not self._write(text.encode("utf-8", "surrogatepass") + b"\n")
        return entry

    def _write(self, data: bytes) -> bool:
        """Write all of data to the server's stdin, waiting for room no longer than the time limit and the deadline;
        whether it was written."""
        limit = min(time.monotonic() + self.timeout, self.deadline)
        try:
            fd = self.process.stdin.fileno()
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(fd, view):]
                except BlockingIOError:  # the pipe is full: the server has not read what came before
                    if time.monotonic() >= limit:
                        self.not_reading = True
                        return False
                    waiting = select.poll()
                    waiting.register(fd, select.POLLOUT)
                    waiting.poll(min(max(limit - time.monotonic(), 0), TICK) * 1000)
        except (OSError, ValueError):
            return False  # the server closed its stdin, or ended
        return True

    def request(self, method: str, params: dict | None = None, id=None) -> dict:
        """Send a request with the next integer id (or the id given); its entry."""
        if id is None:
            self.last_id += 1
            id = self.last_id
        return self.send(request(id, method, params))

    # -- lines in --

    def _take(self, deadline: float) -> bool:
        """Read one line before the deadline (False: time is up, or the server's stdout ended)."""
        if self.ended:
            return False
        try:
            line = self.inbox.get(max(deadline - time.monotonic(), 0))
        except queue.Empty:
            return False
        if line is not None and len(self.received) >= MAX_LINES:
            self.flooded = f"the server wrote more than {MAX_LINES} lines"
        if line is None or self.flooded:
            self.ended = True
            self.inbox.close()  # the reader stops, and the server's pipe fills
            return False
        text, is_json, value = board.read_line(line)
        entry = self.record({"dir": "←", "line": text, "json": is_json, "message": value if is_json else None})
        self.received.append(entry)
        if not is_json or not isinstance(value, dict):
            return True  # not a message: only the stdout rule reads it
        if json.dumps(value, sort_keys=True) in self.said:
            entry["echo"] = True  # the card's own message, written back (cat does): neither answered nor an answer
            return True
        if isinstance(value.get("method"), str) and "id" in value:
            # The server asks the card something: it serves nothing, and says so rather than keep it waiting (so many
            # times: a server that asks without end is not answered without end).
            if self.answered < MAX_ANSWERED:
                self.answered += 1
                self.send(error_response(value["id"], COURSE["method not found"], "the report card serves no requests"))
        elif "id" in value and "method" not in value:
            self.by_id.setdefault(id_key(value["id"]), []).append(entry)
        return True

    def reply(self, sent: dict, timeout: float | None = None) -> dict | None:
        """The response to the request sent (by its id, never by "the next line"), or None."""
        key = id_key(sent["message"]["id"])
        limit = time.monotonic() + (0 if self.stuck else self.timeout if timeout is None else timeout)
        while key not in self.by_id:
            if not self._take(min(limit, self.deadline)):
                self.cut = self.cut or (self.deadline < limit and not self.ended)
                self.stuck, self.waited = True, self.stuck  # a hanging server costs one time limit, not one a wait
                return None
        return self.by_id[key][0]

    def mark(self) -> int:
        """A place in the lines received, to look at what came after it."""
        return len(self.received)

    def responses(self, after: int = 0) -> list:
        """The responses received since the mark."""
        return [e for e in self.received[after:] if answers_an_id(e["message"])]

    def unmatched(self, after: int = 0) -> list:
        """The responses since the mark whose id is the id of no request the card sent."""
        return [e for e in self.responses(after) if id_key(e["message"]["id"]) not in self.asked]

    def notifications(self, after: int = 0) -> list:
        """The messages with a method (notifications, and requests from the server) since the mark."""
        return [e for e in self.received[after:] if isinstance(e["message"], dict)
                and isinstance(e["message"].get("method"), str)]

    # -- the end --

    def silence(self) -> str:
        """Why a response did not come: the time limit, the deadline, a server that stopped reading, or the end of
        the server (its exit status, its last words)."""
        if self.cut and not self.ended:
            return f"{self.deadline_text} passed first"
        if self.not_reading and not self.ended:
            return f"the server stopped reading its stdin: a line the card wrote found no room in {self.timeout:g} s"
        if not self.ended:
            return (f"the server has answered nothing since a response failed to come within {self.timeout:g} s"
                    if self.waited else f"none came within {self.timeout:g} s")
        if self.flooded:
            return f"{self.flooded}, and the card stopped reading"
        status = self.wait_exit(self.timeout)
        said = "the server closed its stdout" if status is None else f"the server exited (status {status})"
        last = self.stderr_tail()
        return said + (f"; its stderr ends: {trim(last, width=100)}" if last else "")

    def why(self) -> str:
        """Why a response did not come, in a word: "deadline", "not_reading", "flooded", "ended" or "timeout"."""
        if self.cut and not self.ended:
            return "deadline"
        if self.not_reading and not self.ended:
            return "not_reading"
        if self.ended:
            return "flooded" if self.flooded else "ended"
        return "timeout"

    def stderr_tail(self) -> str:
        """The last line the server wrote on its stderr (all of it read, once the server has exited)."""
        if self.process.poll() is not None:
            self.readers[1].join(timeout=KILL_GRACE)
        lines = [line for line in self.stderr_kept.decode("utf-8", "replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else ""

    def close_stdin(self):
        """End the server's input, as a host does when it is done (course 004: closing stdin ends a stdio server)."""
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def wait_exit(self, timeout: float) -> int | None:
        """The server's exit status, waiting up to timeout seconds and never past the deadline (None: it still runs)."""
        limit = min(timeout, max(self.deadline - time.monotonic(), 0))
        try:
            return self.process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.cut = self.cut or limit < timeout
            return None

    def close(self):
        """End the server: its input first, then SIGTERM (unless a process of this card's server ignored it before),
        then every process of its tree, whatever became of its first process (children may outlive it, setsid ones
        too)."""
        self.close_stdin()
        if self.process.poll() is None and not self.account.ignores_sigterm:
            self.signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                self.account.ignores_sigterm = True
        WATCHER.kill(self.tree)
        self.process.wait()
        WATCHER.forget(self.tree)
        self.inbox.close()
        for reader in self.readers:
            reader.join(timeout=KILL_GRACE)  # each ends at its pipe's end, which no process holds any more

    def kill(self):
        """End every process of the server's tree at once (its card was stopped); close() then reaps it."""
        WATCHER.kill(self.tree)

    def signal(self, number: int):
        """Send a signal to the server's process group, and to each process of its tree outside it (setsid ones)."""
        try:
            if os.name == "posix":
                os.killpg(self.process.pid, number)
            else:
                self.process.send_signal(number)
        except OSError:
            pass  # the group has ended already
        for pid in list(self.tree.members):
            send_signal(pid, number)


def answers_an_id(message) -> bool:
    """A message that answers an id: it has one, and no method (course 000: told apart by keys, never by a type
    tag), whatever else it holds; looser than the lab's is_response, since response-shape judges the rest."""
    return isinstance(message, dict) and "id" in message and "method" not in message


def error_of(entry: dict | None) -> dict | None:
    """The error a response carries, if it carries one."""
    message = entry and entry["message"]
    error = message.get("error") if isinstance(message, dict) else None
    return error if isinstance(error, dict) else None


def code_of(entry: dict | None):
    """The error code a response carries (None: no error)."""
    error = error_of(entry)
    return error.get("code") if error else None


def result_of(entry: dict | None) -> dict | None:
    """The result a response carries, if it is an object and there is no error beside it."""
    message = entry and entry["message"]
    if not isinstance(message, dict) or error_of(entry):
        return None
    result = message.get("result")
    return result if isinstance(result, dict) else None


def said(entry: dict | None) -> str:
    """What a response says, in a few words: its error's code and message, or what its result is."""
    error = error_of(entry)
    if error:
        text = str(error.get("message", ""))
        return f"error {json.dumps(error.get('code'))} {text[:60]}{'…' if len(text) > 60 else ''}".rstrip()
    result = result_of(entry)
    if result is None:
        return "a response with no result object"
    if result.get("isError") is True:
        return "a result with isError true"
    return "a result"


def strings(value) -> list:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in [key] + strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


# ---------------------------------------------------------------------------------------------------
# ---- 2. A rule's run ----
# A rule's check starts its own server processes, so that no rule can disturb another. It raises Broken
# (what is wrong, and the entries that show it), or one of the three ways a rule goes unjudged (NotApplicable,
# NotTested, CouldNotRun), or returns: the rule holds.
# ---------------------------------------------------------------------------------------------------

class Broken(Exception):
    """The rule does not hold: what happened, the lines (entries, or notes in words) that show it, and why in a
    word for a grading script (reason: {"code": "wrong_answer"} unless said)."""

    def __init__(self, text: str, *shown, reason: dict | None = None):
        super().__init__(text)
        self.text, self.shown = text, [item for item in shown if item is not None]
        self.reason = reason or {"code": "wrong_answer"}


class Advice:
    """What the spec only recommends (SHOULD), or leaves open, and this server does otherwise: information on the
    card, never a failure; its words and the lines that show it."""

    def __init__(self, text: str, *shown):
        self.text, self.shown = text, [item for item in shown if item is not None]


class Unjudged(Exception):
    """The rule was not judged on this server: why, in words and as a reason ({"code": ..., and what it names})."""

    outcome = ""

    def __init__(self, text: str, reason: dict):
        super().__init__(text)
        self.text, self.reason = text, reason


class NotApplicable(Unjudged):
    """The server does not offer what the rule is about: its capabilities, its lists, its era, or --not-offered."""

    outcome = "not_applicable"


class NotTested(Unjudged):
    """The rule needs what only the server's author knows, and no flag said it."""

    outcome = "not_tested"


class CouldNotRun(Unjudged):
    """The rule could not run: no session opened, the command cannot start, or the card's deadline passed."""

    outcome = "could_not_run"


START = {"id": "start", "claim": "the first sessions: the eras the server serves, the tools it lists"}  # not a rule


class Run:
    """One rule's run: fresh server processes, requests in the rule's era, the flags the card was given, and the
    rule's deadline (or the card's, if it comes first)."""

    def __init__(self, card, rule: dict, era: str | None):
        self.card, self.rule, self.era = card, rule, era
        self.wires = []
        self.closed_at = math.inf  # when the rule was done with its processes
        self.first_at = None  # the place on the card's tape where this run's first session begins
        self.sentinel = "server/discover" if era == "stateless" else "ping"  # a request any server answers
        rule_ends = time.monotonic() + card.rule_seconds
        self.deadline = min(rule_ends, card.ends_at)
        self.by_card = card.ends_at <= rule_ends  # the card's deadline is this run's
        self.deadline_text = (f"the card's deadline ({card.card_seconds:g} s)" if self.by_card
                              else f"the rule's deadline ({card.rule_seconds:g} s)")

    def start(self) -> "Wire":
        """A fresh server process (a new session on the board)."""
        if self.card.stopped:
            raise self.card.why_stopped()
        title = f"{self.rule['id']}: {self.rule['claim']}"
        at = self.card.begin(title if not self.wires else f"{title} ({len(self.wires) + 1})", self.rule["id"])
        self.first_at = at if self.first_at is None else self.first_at
        try:
            wire = Wire(self.card.command, self.card.timeout,
                        lambda entry: self.card.record(entry, self.rule["id"], at), self.deadline, self.deadline_text,
                        self.card.account, self.rule["id"], self.card.cwd, self.card.env)
        except OSError as exc:  # the command itself: not found, not executable
            raise CouldNotRun(f"the command cannot be started: {exc.strerror or exc}", {"code": "cannot_start"})
        self.wires.append(wire)
        self.card.track(wire, True)
        return wire

    def open(self) -> "Wire":
        """A fresh process with a session open in this rule's era: initialize and initialized, or nothing (2026)."""
        wire = self.start()
        if self.era == "handshake":
            sent, reply = self.call(wire, "initialize", self.card.hello)
            if result_of(reply) is None:
                raise Broken(f"initialize was answered {said(reply)}, so no session could begin", sent, reply)
            wire.hello = result_of(reply)
            wire.send(notification("notifications/initialized"))
        return wire

    def params(self, params: dict | None) -> dict | None:
        """A request's params in this rule's era: in 2026-07-28 each carries _meta (course 004, section 3)."""
        if self.era != "stateless":
            return params
        return {**(params or {}), "_meta": {**META, **(params or {}).get("_meta", {})}}

    def send(self, wire: Wire, method: str, params: dict | None = None, id=None) -> dict:
        """Send a request in this rule's era without waiting; its entry."""
        return wire.request(method, self.params(params), id)

    def call(self, wire: Wire, method: str, params: dict | None = None, id=None) -> tuple:
        """Send a request and wait for its response: (sent, reply); no response is Broken."""
        mark = wire.mark()
        sent = self.send(wire, method, params, id)
        reply = wire.reply(sent)
        if reply is None:
            strays = [e for e in wire.unmatched(mark) if e["message"]["id"] is not None]
            if strays and not wire.ended:  # the likeliest reason: the id came back changed
                raise Broken(f"no response to {method} with id {id_key(sent['message']['id'])}; a response came "
                             f"with id {id_key(strays[0]['message']['id'])} instead: a response echoes its "
                             "request's id exactly", sent, strays[0], reason={"code": "id_changed"})
            raise Broken(f"no response to {method}: {wire.silence()}", sent,
                         reason={"code": "no_response", "why": wire.why()})
        return sent, reply

    def result(self, wire: Wire, method: str, params: dict | None = None) -> tuple:
        """Send a request that must succeed: (sent, reply, result); an error is Broken."""
        sent, reply = self.call(wire, method, params)
        if result_of(reply) is None:
            raise Broken(f"{method} was answered {said(reply)}", sent, reply)
        return sent, reply, result_of(reply)

    def then(self, wire: Wire, count: int = 2) -> list:
        """count requests, one after the other, each waited for: what the server had to say before them is said.

        A server that works in threads may answer an earlier message late; not later than two answers after it.
        """
        shown = []
        for _ in range(count):
            shown.extend(self.call(wire, self.sentinel))
        return shown

    def bound(self, wire: Wire) -> list:
        """then(), where no response is no failure: the entries that crossed (and why the rest did not)."""
        shown = []
        for _ in range(2):
            sent = self.send(wire, self.sentinel)
            reply = wire.reply(sent)
            shown += [sent, reply or note(wire.silence())]
            if reply is None:
                break
        return shown

    def ask(self, wire: Wire, method: str, params: dict | None = None) -> dict | None:
        """Send a request and wait for its response, where no response is no failure (another rule's to judge): the
        response, or None."""
        return wire.reply(self.send(wire, method, params))

    def capabilities(self, wire: Wire) -> dict:
        """What the server declared: the initialize result's capabilities, or server/discover's (2026-07-28)."""
        if self.era == "handshake":
            value = wire.hello.get("capabilities")
        else:
            value = self.result(wire, "server/discover")[2].get("capabilities")
        return value if isinstance(value, dict) else {}

    def listed(self, wire: Wire, kind: str) -> tuple:
        """(the reply, the items) of <kind>/list: tools, resources or prompts; not a list is Broken."""
        sent, reply, result = self.result(wire, f"{kind}/list")
        items = result.get(kind)
        if not isinstance(items, list):
            raise Broken(f"{kind}/list answered a result without a list under {json.dumps(kind)}", sent, reply)
        return reply, [item for item in items if isinstance(item, dict)]

    def flag(self, name: str) -> tuple:
        """A flag's (tool or method, arguments); absent, not applicable where --not-offered names its feature, else
        not tested (naming the flag that would test it)."""
        value = self.card.flags.get(name)
        if name in self.card.unlisted:  # a tool the assignment names, which this server does not list
            flag, _, _, feature = FLAGS[name]
            if feature in self.card.optional:
                raise NotApplicable(f"{self.card.unlisted[name]}; the assignment leaves {feature} optional",
                                    {"code": "not_offered", "feature": feature})
            raise Broken(self.card.unlisted[name], reason={"code": "not_offered", "flag": flag, "tool": value[0]})
        if value is None:
            flag, takes, tells, feature = FLAGS[name]
            if feature in self.card.not_offered:
                raise NotApplicable(f"--not-offered {feature}: the server has none", {"code": "not_offered",
                                                                                       "feature": feature})
            raise NotTested(f"{flag} {takes} would test it ({tells})", {"code": "needs_flag", "flag": flag})
        return value

    def tape(self) -> list:
        """Every line of the card's other rules' sessions (the tape readers' left out) and of this rule's own, in the
        card's order: the first sessions, then rule by rule, each in the order its lines crossed."""
        with self.card.taping:
            kept = [entry for entry in self.card.tape if entry["rule"] not in TAPE_READERS
                    or entry["rule"] == self.rule["id"]]
        return sorted(kept, key=lambda entry: (ORDER.get(entry["rule"], len(ORDER)), entry["at"]))

    def version(self, wire: Wire) -> str:
        """The version this session speaks: the one initialize agreed, or 2026-07-28."""
        return str(wire.hello.get("protocolVersion")) if self.era == "handshake" else STATELESS_VERSION

    def cut_by_card(self) -> bool:
        """Whether the card's deadline ended a wait of this run (the rule was not judged to its end)."""
        return self.by_card and any(wire.cut for wire in self.wires)

    def cut_by_bound(self) -> bool:
        """Whether a bound stopped the card before this run was done (its processes ended, or no longer read)."""
        passed = self.card.account.breached_at
        return passed is not None and bool(self.wires) and passed <= self.closed_at

    def close(self):
        """End every process this run started."""
        self.closed_at = time.monotonic()
        for wire in self.wires:
            wire.close()
            self.card.track(wire, False)


def note(text: str) -> str:
    """A line of the exchange in words: what did not cross."""
    return f"({text})"


def tool_with_required(run: Run, wire: Wire) -> tuple:
    """(the tool, the reply that listed it): the first listed tool with a required argument, or NotApplicable."""
    reply, tools = run.listed(wire, "tools")
    refused = (run.card.flags.get("not_allowed") or (None,))[0]
    for tool in tools:
        schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
        required = schema.get("required")
        if isinstance(required, list) and required and isinstance(tool.get("name"), str) and tool["name"] != refused:
            return tool, reply
    raise NotApplicable("no listed tool has a required argument", {"code": "none_listed",
                                                                    "what": "a tool with a required argument"})


def listed_tools(run: Run, wire: Wire) -> tuple:
    """(the names of the tools the server lists, every page of them, or None if it lists none; tools/list's first
    result, or None)."""
    names, first, cursor = [], None, None
    for _ in range(MAX_PAGES):
        result = result_of(wire.reply(run.send(wire, "tools/list", {"cursor": cursor} if cursor else None)))
        first = first or result
        if result is None or not isinstance(result.get("tools"), list):
            return None, first
        names += [tool.get("name") for tool in result["tools"] if isinstance(tool, dict)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str):
            break
    return names, first


# ---------------------------------------------------------------------------------------------------
# ---- 3. The rules ----
# In the card's order, each provoked on its own: one odd thing to a request, so that the order in which a
# server checks things cannot hide a bug behind another. Each names the passage it comes from (the course where
# it says so, else the spec), and the spec's passage that decides it under --spec, in the revision the session
# agreed ({rev}). A rule where the lab and the spec choose differently (README, "Where this lab and the spec
# differ") returns what each finds wrong; the card shows both and judges by the one chosen; where the spec only
# recommends (SHOULD), its verdict is information (Advice), never a failure. A rule that reads the tape also
# judges every session of the card's other rules: whatever provoked it, a second response, a notification with an
# id, a traceback or an early message is found. The codes each expects are the course's table (COURSE).
# ---------------------------------------------------------------------------------------------------

RULES = []
SHAPES = 'course 000, "Three message shapes"'
CODES = 'course 000, "The five standard error codes"'
HANDSHAKE = 'course 000, "The stateful handshake"'
LATTICE = 'course 000, "Dispatch to primitives, and the _call_tool error lattice"'
LIST_CHANGED = 'course 000, "listChanged: the one dynamic capability"'
PRIMITIVES = 'course 002, "The Three MCP Primitives"'
LIST_CHANGES = 'course 002, "List-Changed Notifications"'
LIST_CHANGES_PASSAGE = ("notifications/tools/list_changed, notifications/resources/list_changed, and "
                        "notifications/prompts/list_changed, that the server emits once when its catalog changes. "
                        "The client is then expected to re-issue the corresponding list request to refresh its view.")
JSONRPC = "JSON-RPC 2.0, sections 5 and 5.1 (spec {rev}, basic: every message MUST follow JSON-RPC 2.0)"
MUST_REPLY = "When a rpc call is made, the Server MUST reply with a Response, except for in the case of Notifications."
SPEC_TOOLS = 'spec {rev}, server/tools, "Error Handling"'
SPEC_INITIALIZATION = 'spec {rev}, basic/lifecycle, "Initialization"'

FLAGS = {  # what only the server's author knows. name: (the flag, what it takes, what it tells the card, and the
    # feature --not-offered may say the server lacks, where a server may lack it)
    "not_allowed": ("--not-allowed", "TOOL", "a tool that exists but that this session may not call", "allow-list"),
    "raises": ("--raises", "'TOOL {arguments}'", "a call of a tool that raises", None),
    "handler_fails": ("--handler-fails", "'METHOD {params}'",
                      "a request one of the server's handlers fails on: a bug, not a tool's own exception", None),
    "change_tools": ("--change-tools", "'TOOL {arguments}'", "a call that changes the tool list", "tool-list-changes"),
    "change_resources": ("--change-resources", "'TOOL {arguments}'", "a call that changes the resource list",
                         "resource-list-changes"),
    "change_prompts": ("--change-prompts", "'TOOL {arguments}'", "a call that changes the prompt list",
                       "prompt-list-changes"),
}
FEATURES = {feature: name for name, (_, _, _, feature) in FLAGS.items() if feature}  # feature: its flag's name
TOOL_FLAGS = [name for name, (_, takes, _, _) in FLAGS.items() if "TOOL" in takes]  # checked against tools/list
CHANGES = ["change_tools", "change_resources", "change_prompts"]


def rule(id: str, level: str, claim: str, passage: str, quote: str, spec: tuple | None = None,
         eras=("handshake", "stateless"), differs: dict | None = None, tape: bool = False):
    """Register a rule's check under its id: the claim it tests, the passage and the words it comes from.

    spec, for a rule the spec decides as the course does: (its passage, its words). differs, for a rule where the
    lab and the spec choose differently: what each expects, and the spec's claim, passage and words. tape: the rule
    also reads every session of the card's other rules, so it runs after them.
    """
    def register(check):
        RULES.append({"id": id, "level": level, "claim": claim, "passage": passage, "quote": quote, "spec": spec,
                      "eras": eras, "differs": differs, "tape": tape, "check": check})
        return check
    return register


SESSIONLESS = ("handshake", "stateless", None)  # the eras of a rule that runs even when no session opens


def sessions_of(entries: list) -> dict:
    """The lines of each session on a tape (its banner left out), by where the session began, in order."""
    found = {}
    for entry in entries:
        if entry["dir"] != "session":
            found.setdefault(entry["session"], []).append(entry)
    return found


def from_server(entry: dict) -> dict | None:
    """The message of a line the server sent with a method (a notification, or a request of its own), else None."""
    message = entry["message"]
    if entry["dir"] == "←" and not entry.get("echo") and isinstance(message, dict) \
            and isinstance(message.get("method"), str):
        return message
    return None


def is_request(message) -> bool:
    """A request: a method and an id (course 000: told apart by keys)."""
    return isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message


def handshake_of(entries: list) -> dict | None:
    """A session's handshake as its lines show it: the initialize sent, its response, the capabilities declared,
    and where the session went live (the card's notifications/initialized after a result; None if it never did);
    None for a session with no initialize."""
    asked = next((e for e in entries if e["dir"] == "→" and is_request(e["message"])
                  and e["message"]["method"] == "initialize"), None)
    if asked is None:
        return None
    key = id_key(asked["message"]["id"])
    reply = next((e for e in entries if e["dir"] == "←" and not e.get("echo") and answers_an_id(e["message"])
                   and id_key(e["message"]["id"]) == key), None)
    live_at = None
    if result_of(reply) is not None:
        live_at = next((e["at"] for e in entries if e["dir"] == "→" and e["at"] > reply["at"]
                        and isinstance(e["message"], dict) and "id" not in e["message"]
                        and e["message"].get("method") == "notifications/initialized"), None)
    declared = (result_of(reply) or {}).get("capabilities")
    params = asked["message"].get("params")
    client = params.get("capabilities") if isinstance(params, dict) else None
    return {"initialize": asked, "reply": reply, "declared": declared if isinstance(declared, dict) else None,
            "client": client if isinstance(client, dict) else {}, "live_at": live_at}


def whose(entry: dict) -> str:
    """The session a line crossed in, in words: the card's first sessions, or a rule's."""
    return "the card's first sessions" if entry["rule"] == START["id"] else f"{entry['rule']}'s session"


def asked_in(entries: list, id) -> dict | None:
    """The request the card sent with this id in a session, if it sent one."""
    return next((e for e in entries if e["dir"] == "→" and is_request(e["message"])
                 and id_key(e["message"]["id"]) == id_key(id)), None)


def provoke_notifications(run: Run, wire: Wire):
    """Call every tool a flag says changes a list (the server's chance to send its notifications), then two more
    requests; an answer that does not come is other rules' to judge."""
    for name in CHANGES:
        if run.card.flags.get(name):
            tool, arguments = run.card.flags[name]
            run.ask(wire, "tools/call", {"name": tool, "arguments": arguments})
    run.bound(wire)


# ---- course 000: three message shapes ----

@rule("notification-no-response", "000", "a notification gets no response", SHAPES,
      "Notification — a request shape with no id key at all. Fire-and-forget: the receiver must not reply.",
      spec=('spec {rev}, basic, "Notifications"', "The receiver MUST NOT send a response."))
def notification_no_response(run: Run):
    wire = run.open()  # handshake era: notifications/initialized is the first notification
    wire.send(notification("notifications/cancelled", {"requestId": "report-card:never-sent"}))
    run.then(wire)
    strays = wire.unmatched()
    if strays:
        sent = [e for e in wire.sent if isinstance(e["message"], dict) and "id" not in e["message"]]
        raise Broken(f"the server answered a notification ({said(strays[0])})", *sent, strays[0])


@rule("null-id-is-a-request", "000", 'a request with "id": null is answered -32600: it is no notification', SHAPES,
      "A message with id: null is not a notification — null is a present key. ... a strict peer treats it as a "
      "malformed request (id must not be null in a request)",
      spec=('spec {rev}, basic, "Requests"; ' + JSONRPC.split(" (")[0],
            "Unlike base JSON-RPC, the ID MUST NOT be null. ... " + MUST_REPLY + " ... -32600 Invalid Request: The "
            "JSON sent is not a valid Request object."))
def null_id_is_a_request(run: Run):
    wire = run.open()
    run.then(wire, 1)  # the handshake's last word is said before the null id goes out
    mark = wire.mark()
    sent = wire.send(request(None, run.sentinel, run.params(None)))
    after = run.bound(wire)
    answers = [e for e in wire.responses(mark) if e["message"]["id"] is None]
    if not answers:
        raise Broken("no response to it: the server took it for a notification, and answered the requests after "
                     "it", sent, *after)
    if code_of(answers[0]) != COURSE["invalid request"]:
        raise Broken(f"it was answered {said(answers[0])}, not {COURSE['invalid request']} (invalid request)", sent,
                     answers[0])


def shape_problem(message: dict) -> str | None:
    """What is wrong with a response's shape, if anything (course 000: result XOR error; error {code, message})."""
    if message.get("jsonrpc") != "2.0":
        return 'its jsonrpc is not "2.0"'
    if ("result" in message) == ("error" in message):
        return "it carries both result and error" if "result" in message else "it carries neither result nor error"
    error = message.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    if "error" in message and not (isinstance(code, int) and not isinstance(code, bool)
                                   and isinstance(error.get("message"), str)):
        return "its error is not {code: an integer, message: a string}"
    if "result" in message and not isinstance(message["result"], dict):
        return "its result is not an object"
    return None


@rule("response-shape", "000", "every response carries a result or an error, never both, in every session",
      SHAPES, "Response — echoes the id, and carries result XOR error, never both, never neither. error is "
      "{code, message, data?}.",
      spec=('spec {rev}, basic, "Responses"', "Result responses MUST include a result field. ... Error responses MUST "
            "include an error field with a code and message. Error codes MUST be integers."), tape=True)
def response_shape(run: Run):
    wire = run.open()
    for method, id in ((run.sentinel, "report-card:7"), (NO_SUCH_METHOD, None)):  # a string id; an error response
        wire.reply(run.send(wire, method, id=id))  # one that does not come is other rules' to judge
    for entries in sessions_of(run.tape()).values():
        for entry in entries:
            if entry["dir"] == "←" and not entry.get("echo") and answers_an_id(entry["message"]):
                problem = shape_problem(entry["message"])
                if problem:
                    raise Broken(f"a response in {whose(entry)}: {problem}", asked_in(entries, entry["message"]["id"]),
                                 entry)


UNASKED = ("report-card:unasked-1", "report-card:unasked-2")  # ids of responses the card sends to no request


@rule("one-response", "000", "each request gets exactly one response, and a response gets none", SHAPES,
      "Request — carries id (int or string, non-null), method, and optional params. It demands exactly one reply "
      "carrying the same id.",
      spec=("JSON-RPC 2.0, sections 4 and 5 (spec {rev}, basic: every message MUST follow JSON-RPC 2.0)",
            "When a rpc call is made, the Server MUST reply with a Response, except for in the case of "
            "Notifications. ... The Response is expressed as a single JSON Object"), tape=True)
def one_response(run: Run):
    wire = run.open()
    run.then(wire, 1)
    mark = wire.mark()
    sent = [wire.send({"jsonrpc": "2.0", "id": UNASKED[0], "result": {}}),
            wire.send({"jsonrpc": "2.0", "id": UNASKED[1], "error": {"code": COURSE["method not found"],
                                                                    "message": "the report card serves no requests"}})]
    for method in (run.sentinel, "tools/list", NO_SUCH_METHOD):
        run.ask(wire, method)
    run.bound(wire)
    answered = [e for e in wire.responses(mark) if e["message"]["id"] in (None, *UNASKED)]
    if answered:
        raise Broken(f"a response the card sent was answered ({said(answered[0])}): only a request is", *sent,
                     answered[0])
    for entries in sessions_of(run.tape()).values():
        first = {}
        for entry in entries:
            message = entry["message"]
            if entry["dir"] != "←" or entry.get("echo") or not answers_an_id(message) or message["id"] is None:
                continue
            asked = asked_in(entries, message["id"])
            key = id_key(message["id"])
            if asked and key in first:
                raise Broken(f"two responses to one {asked['message']['method']} request (id {key}), in "
                             f"{whose(entry)}", asked, first[key], entry)
            first[key] = entry


@rule("notification-has-no-id", "000", "the server's notifications carry no id, its requests one; each says jsonrpc 2.0",
      SHAPES, "Notification — a request shape with no id key at all. ... give a notification an id and the peer "
      "waits forever for a reply that a well-behaved server will refuse to send",
      spec=('spec {rev}, basic, "Notifications" and "Requests"', "Notifications MUST NOT include an ID. ... Requests "
            "MUST include a string or integer ID. Unlike base JSON-RPC, the ID MUST NOT be null."), tape=True)
def notification_has_no_id(run: Run):
    provoke_notifications(run, run.open())
    for entry in run.tape():
        message = from_server(entry)
        if message is None:
            continue
        kind = "request" if "id" in message else "notification"
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("params", {}), dict):
            raise Broken(f"the server sent a {message['method']} {kind}, in {whose(entry)}, whose "
                         + ('jsonrpc is not "2.0"' if message.get("jsonrpc") != "2.0" else "params are no object"),
                         entry)
        if "id" not in message:
            continue
        if message["method"].startswith("notifications/"):
            raise Broken(f"the server sent {message['method']} with an id ({id_key(message['id'])}), in "
                         f"{whose(entry)}: a request now, which its receiver must answer", entry)
        id = message["id"]
        if not (isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))):
            raise Broken(f"the server sent a {message['method']} request with id {id_key(id)}, in {whose(entry)}: a "
                         "request's id is a string or an integer, never null", entry)


# ---- course 000: the five codes, and where each is raised ----

def reply_to(run: Run, wire: Wire, sent: dict) -> tuple:
    """(the response to an odd message just sent, or None; the requests after it that bound the wait).

    An odd message may have no id to echo: the reply is then the first response since it to no request.
    (Call run.then(wire, 1) before sending it, so that nothing said before it is taken for its answer.)
    """
    after = run.bound(wire)
    message = sent["message"]
    if isinstance(message, dict) and "id" in message and id_key(message["id"]) in wire.by_id:
        return wire.by_id[id_key(message["id"])][0], after
    strays = [e for e in wire.unmatched(0) if e["at"] > sent["at"]]
    return (strays[0] if strays else None), after


@rule("parse-error", "000", "a line that is not JSON is answered -32700, with id null", CODES,
      "-32700 parse error — the bytes were not valid JSON. Raised at the transport edge, before any dispatch, "
      "because there is no id to attach the error to (id is null).",
      spec=(JSONRPC, MUST_REPLY + " ... -32700 Parse error: Invalid JSON was received by the server. ... If there "
            "was an error in detecting the id in the Request object (e.g. Parse error/Invalid Request), it MUST be "
            "Null."))
def parse_error(run: Run):
    wire = run.open()
    run.then(wire, 1)
    sent = wire.send_line(NOT_JSON)
    reply, after = reply_to(run, wire, sent)
    if reply is None:
        raise Broken("no response to it", sent, *after)
    if code_of(reply) != COURSE["parse error"] or reply["message"]["id"] is not None:
        raise Broken(f"it was answered {said(reply)} with id {id_key(reply['message']['id'])}, not "
                     f"{COURSE['parse error']} with id null", sent, reply)


# JSON, and no request, notification or response. The object carries an id, so that it is no notification either
# (course 000's one predicate): its answer may echo that id, or say null.
NOT_MESSAGES = ["[]", "1", '"a string"', '{"jsonrpc": "2.0", "id": "report-card:no-method"}']


@rule("not-a-message", "000", "JSON that is no message is answered -32600 with id null, and the server lives on",
      CODES,
      "-32600 invalid request — well-formed JSON but not a valid request object",
      spec=(JSONRPC, MUST_REPLY + " ... -32600 Invalid Request: The JSON sent is not a valid Request object. ... "
            '--> 1 <-- {"jsonrpc": "2.0", "error": {"code": -32600, "message": "Invalid Request"}, "id": null}'))
def not_a_message(run: Run):
    wire = run.open()
    run.then(wire, 1)
    for line in NOT_MESSAGES:  # one at a time, each answered (and the server alive) before the next
        sent = wire.send_line(line)
        reply, after = reply_to(run, wire, sent)
        if reply is None:
            raise Broken("no response to it", sent, *after)
        echoed = isinstance(sent["message"], dict) and reply["message"]["id"] == sent["message"].get("id")
        if code_of(reply) != COURSE["invalid request"] or not (reply["message"]["id"] is None or echoed):
            raise Broken(f"it was answered {said(reply)} with id {id_key(reply['message']['id'])}, not "
                         f"{COURSE['invalid request']} with id null", sent, reply)
        silence = [item for item in after if isinstance(item, str)]
        if silence:
            raise Broken(f"it was answered, and then nothing more: {silence[0][1:-1]}", sent, reply, *after,
                         reason={"code": "no_response", "why": wire.why()})


@rule("invalid-request", "000", 'a message whose jsonrpc is not "2.0" is answered -32600', CODES,
      '-32600 invalid request — well-formed JSON but not a valid request object; the lab also uses it for ... '
      'a message whose jsonrpc field isn\'t "2.0"',
      spec=(JSONRPC.replace("sections 5", "sections 4, 5"),
            'jsonrpc: A String specifying the version of the JSON-RPC protocol. MUST be exactly "2.0". ... -32600 '
            "Invalid Request: The JSON sent is not a valid Request object."))
def invalid_request(run: Run):
    wire = run.open()
    run.then(wire, 1)
    wire.last_id += 1
    sent = wire.send({"jsonrpc": "1.0", "id": wire.last_id, "method": run.sentinel, **(
        {"params": run.params(None)} if run.era == "stateless" else {})})
    reply, after = reply_to(run, wire, sent)
    if reply is None:
        raise Broken("no response to it", sent, *after)
    if code_of(reply) != COURSE["wrong jsonrpc"]:
        raise Broken(f"it was answered {said(reply)}, not {COURSE['wrong jsonrpc']} (invalid request)", sent, reply)


@rule("method-not-found", "000", "an unknown method is answered -32601", CODES,
      "-32601 method not found — unknown method",
      spec=(JSONRPC, "-32601 Method not found: The method does not exist / is not available."))
def method_not_found(run: Run):
    wire = run.open()
    sent, reply = run.call(wire, NO_SUCH_METHOD)
    if code_of(reply) != COURSE["method not found"]:
        raise Broken(f"{NO_SUCH_METHOD} was answered {said(reply)}, not {COURSE['method not found']}", sent, reply)


@rule("internal-error", "000", "a handler that fails is an error response (-32603), and the session lives on", CODES,
      "-32603 internal error — an unhandled exception inside a handler. Crucially the server converts the exception "
      "into this response instead of propagating it; a handler bug must not take down the session.",
      spec=(JSONRPC, "When a rpc call is made, the Server MUST reply with a Response ... -32603 Internal error: "
            "Internal JSON-RPC error."))
def internal_error(run: Run):
    # Nothing from outside makes a correct handler fail: only the author knows a request that finds a bug.
    method, params = run.flag("handler_fails")
    wire = run.open()
    sent, reply = run.call(wire, method, params)
    if code_of(reply) != COURSE["internal error"]:
        raise Broken(f"{method}, which a handler fails on, was answered {said(reply)}, not {COURSE['internal error']}",
                     sent, reply)
    try:
        run.call(wire, run.sentinel)
    except Broken as exc:
        raise Broken(f"the session did not live on: {exc.text}", sent, reply, *exc.shown, reason=exc.reason)


STACK_TRACES = {  # what a stack trace holds in each language, a line of it at least, and ordinary text does not
    "Python": r'Traceback \(most recent call last\)|^\s*File "[^"\n]+", line \d+',
    "Node": r"^\s*at (?:async )?(?:[^\s()]+(?: \[as [^\]\n]+\])? )?\(?(?:[^\s()]*[/\\][^\s()]*|node:[^\s()]+|"
            r"\[eval\]|[^\s()]+\.[cm]?[jt]sx?):\d+:\d+\)?$",
    "Java": r"^\s*at [\w$.]+(?:/[\w$.]+)?\.[\w$<>]+\((?:[\w$]+\.(?:java|kt|scala|groovy):\d+|Native Method|Unknown "
            r'Source)\)$|^Exception in thread "[^"\n]*" [\w$.]+',
    "Go": r"^goroutine \d+ \[[^\]\n]+\]:$|^\s+\S*/\S+\.go:\d+(?: \+0x[0-9a-f]+)?$",
    ".NET": r"^\s+at [\w.`<>\[\],+]+\([^()\n]*\) in \S[^\n]*:line \d+$|^\s+at (?:[\w`<>\[\]+]+\.){2,}[\w`<>\[\]]+"
            r"\([^()\n]*\)$|--- End of (?:inner exception )?stack trace",
}
STACK_TRACE = re.compile("|".join(f"(?P<{name.strip('.')}>{pattern})" for name, pattern in STACK_TRACES.items()),
                         re.MULTILINE)


def stack_trace(text: str) -> tuple | None:
    """(the language, the words) of a stack trace in a text, if it holds one."""
    found = STACK_TRACE.search(text)
    if not found:
        return None
    language = next(name for name in STACK_TRACES if found.group(name.strip(".")) is not None)
    return language, found.group(0).strip()


def provocations(run: Run, wire: Wire) -> list:
    """Every odd thing no-traceback sends, one a request: (a line, or a method and its params)."""
    bad = [NOT_JSON, *NOT_MESSAGES, json.dumps({"jsonrpc": "1.0", "id": "report-card:1.0", "method": "ping"}),
           (NO_SUCH_METHOD, None), ("tools/call", {"name": NO_SUCH_TOOL, "arguments": {}}),
           ("tools/call", {"name": ["not", "a", "name"], "arguments": {}}), ("tools/call", "not an object")]
    try:
        tool, _ = tool_with_required(run, wire)
        bad += [("tools/call", {"name": tool["name"], "arguments": {}}),
                ("tools/call", {"name": tool["name"], "arguments": "not an object"})]
    except (NotApplicable, Broken):
        pass  # no tool with a required argument (or no list): those two are not sent
    try:
        declared = run.capabilities(wire)
    except Broken:
        declared = {}  # server/discover failed: other rules say so
    bad += [("resources/read", {"uri": ["not", "a", "uri"]})] if "resources" in declared else []
    bad += [("prompts/get", {"name": ["not", "a", "name"]})] if "prompts" in declared else []
    if run.card.flags.get("raises"):
        name, arguments = run.card.flags["raises"]
        bad.append(("tools/call", {"name": name, "arguments": arguments}))
    if run.card.flags.get("handler_fails"):
        bad.append(run.card.flags["handler_fails"])
    return bad


@rule("no-traceback", "000", "no stack trace crosses the wire, of any language, whatever goes wrong", CODES,
      "intended errors carry precise codes, unintended ones degrade to internal-error, and neither escapes as a "
      "Python traceback across the transport boundary.", tape=True,
      differs={"course": "no stack trace in any message", "spec": "no rule for error texts",
               "claim": "no stack trace crosses the wire (information: the spec names no rule for error texts)",
               "passage": 'spec {rev}, server/tools, "Security Considerations"',
               "quote": "Servers MUST: Validate all tool inputs ... Sanitize tool outputs"})
def no_traceback(run: Run):
    wire = run.open()
    for bad in provocations(run, wire):
        if wire.ended:
            wire = run.open()  # the last one ended the server: the next on a fresh one (what it said is on the tape)
        if wire.stuck:
            break  # a server that hangs is waited for once: what it sent so far is judged
        if isinstance(bad, str):
            wire.send_line(bad)
            wire.reply(run.send(wire, run.sentinel))
            continue
        method, params = bad
        wire.last_id += 1
        message = {"jsonrpc": "2.0", "id": wire.last_id, "method": method}
        if params is not None or run.era == "stateless":  # params that are not an object go as they are
            message["params"] = run.params(params) if params is None or isinstance(params, dict) else params
        wire.reply(wire.send(message))
    for entries in sessions_of(run.tape()).values():
        for entry in entries:
            if entry["dir"] != "←" or not entry["json"] or entry.get("echo"):
                continue  # a line that is not JSON is the stdout rule's
            found = next((trace for text in strings(entry["message"]) if (trace := stack_trace(text))), None)
            if found:
                asked = next((e for e in reversed(entries) if e["dir"] == "→" and e["at"] < entry["at"]), None)
                problem = Broken(f"a {found[0]} stack trace on the wire, in {whose(entry)}", asked,
                                 {**entry, "focus": found[1][:30]})
                return {"course": problem, "spec": Advice(problem.text, *problem.shown)}


# ---- course 000: the handshake ----

GATE_SPEC = (SPEC_INITIALIZATION + ": the client MUST begin with initialize, and SHOULD NOT send requests other than "
             "pings before its response; nothing is named for the server to do")


@rule("handshake-gate", "000", "nothing but initialize (and ping) is served before notifications/initialized, which "
      "opens the gate only after initialize", HANDSHAKE, "Every method except initialize itself is gated behind "
      "_initialized, and _initialized only flips true when the notifications/initialized notification arrives. ... a "
      "tools/list sent between step 1 and step 3 returns -32600.", eras=("handshake",),
      differs={"course": "-32600 before initialize, between its response and initialized, and after an initialized "
                         "that came first or followed a refused initialize",
               "spec": "the client's duty: the server answers as it will, and serves once initialized",
               "claim": "after notifications/initialized, requests are served (before, the spec binds the client)",
               "passage": GATE_SPEC,
               "quote": "The client SHOULD NOT send requests other than pings before the server has responded to the "
                        "initialize request."})
def handshake_gate(run: Run):
    problems = []
    wire = run.start()
    sent, reply = run.call(wire, "tools/list")
    gated = COURSE["not initialized"]
    if code_of(reply) != gated:
        problems.append(Broken(f"before initialize, tools/list was answered {said(reply)}, not {gated}", sent, reply))
    init, hello = run.call(wire, "initialize", run.card.hello)
    if result_of(hello) is None:
        raise Broken(f"initialize was answered {said(hello)}", init, hello)
    try:
        sent, reply = run.call(wire, "tools/list")  # between the initialize response and initialized
    except Broken as exc:
        raise Broken(f"between the initialize response and notifications/initialized, {exc.text}", init, hello,
                     *exc.shown, reason=exc.reason)
    if code_of(reply) != gated:
        problems.append(Broken(f"between the initialize response and notifications/initialized, tools/list was "
                               f"answered {said(reply)}, not {gated}", init, hello, sent, reply))
    opened = wire.send(notification("notifications/initialized"))
    sent, reply = run.call(wire, "tools/list")
    if result_of(reply) is None:
        raise Broken(f"after notifications/initialized, tools/list was answered {said(reply)}: the gate never opens",
                     opened, sent, reply)
    early = run.start()  # notifications/initialized before any initialize: the gate stays shut
    opened = early.send(notification("notifications/initialized"))
    sent, reply = run.call(early, "tools/list")
    if code_of(reply) != gated:
        problems.append(Broken(f"after a notifications/initialized that came before initialize, tools/list was "
                               f"answered {said(reply)}, not {gated}: only an initialize that succeeded opens the "
                               "session", note("a fresh process"), opened, sent, reply))
    failed = run.start()  # an initialize refused (its params no object), then initialized: the gate stays shut
    failed.last_id += 1
    init = failed.send({"jsonrpc": "2.0", "id": failed.last_id, "method": "initialize", "params": "not an object"})
    hello = failed.reply(init)
    if error_of(hello) is not None:  # a server that took it for a good initialize has opened a session rightly
        opened = failed.send(notification("notifications/initialized"))
        sent, reply = run.call(failed, "tools/list")
        if code_of(reply) != gated:
            problems.append(Broken(f"after an initialize answered {said(hello)}, then notifications/initialized, "
                                   f"tools/list was answered {said(reply)}, not {gated}: only an initialize that "
                                   "succeeded opens the session", note("a fresh process"), init, hello, opened,
                                   sent, reply))
    return {"course": joined(problems), "spec": None}


def joined(problems: list) -> Broken | None:
    """Several things wrong under one rule, as one: their texts in turn, and their lines (each once)."""
    if not problems:
        return None
    lines = []
    for problem in problems:
        lines += [item for item in problem.shown if all(item is not kept for kept in lines)]
    return Broken("; ".join(problem.text for problem in problems), *lines, reason=problems[0].reason)


def early_message(message: dict) -> bool:
    """Whether the server may send this before the session is live: a ping, or a log message (course 000's
    lifecycle; spec 2025-11-25, basic/lifecycle, "Initialization")."""
    return (message["method"] == "ping" and "id" in message) or message["method"] == "notifications/message"


@rule("quiet-before-initialized", "000", "before notifications/initialized the server sends nothing but ping and log "
      "messages", HANDSHAKE, "3. Client sends notifications/initialized (a notification, no id). Only now is the "
      "session live. ... the server might emit notifications/tools/list_changed to a client that can't handle it.",
      eras=("handshake",), tape=True,
      differs={"course": "nothing but ping and notifications/message before initialized",
               "spec": "the same, as a SHOULD NOT",
               "claim": "before notifications/initialized the server sends nothing but ping and logging (SHOULD NOT)",
               "passage": SPEC_INITIALIZATION,
               "quote": "The server SHOULD NOT send requests other than pings and logging before receiving the "
                        "initialized notification."})
def quiet_before_initialized(run: Run):
    wire = run.start()
    sent, reply = run.call(wire, "initialize", run.card.hello)
    if result_of(reply) is None:
        raise Broken(f"initialize was answered {said(reply)}, so no session could begin", sent, reply)
    run.bound(wire)  # pings, answered before initialized goes out: what the server says after its response is seen
    wire.send(notification("notifications/initialized"))
    run.bound(wire)
    for entries in sessions_of(run.tape()).values():
        shook = handshake_of(entries)
        if shook is None:
            continue  # no initialize: a 2026-07-28 session
        for entry in entries:
            if shook["live_at"] is not None and entry["at"] > shook["live_at"]:
                break
            message = from_server(entry)
            if message is not None and not early_message(message):
                problem = Broken(f"the server sent {message['method']} before notifications/initialized, in "
                                 f"{whose(entry)}: the session is not live yet", shook["initialize"], entry)
                return {"course": problem, "spec": Advice(problem.text, *problem.shown)}


@rule("version-negotiation", "000", "initialize agrees on a version the server speaks, not newer than offered",
      HANDSHAKE + ' (step 2); course 002, "The Initialization Handshake"',
      "The server responds during initialize with the highest protocol version it supports that is not newer than "
      "what the client requested.", eras=("handshake",),
      spec=('spec {rev}, basic/lifecycle, "Version Negotiation"', "If the server supports the requested protocol "
            "version, it MUST respond with the same version. Otherwise, the server MUST respond with another protocol "
            "version it supports."))
def version_negotiation(run: Run):
    hello = run.card.hello
    sent, reply, result = run.result(run.start(), "initialize", {**hello, "protocolVersion": FUTURE_VERSION})
    agreed = result.get("protocolVersion")
    if not isinstance(agreed, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", agreed):
        raise Broken(f"offered {FUTURE_VERSION}, it answered protocolVersion {json.dumps(agreed)}, not a version",
                     sent, {**reply, "focus": "protocolVersion"})
    if agreed >= FUTURE_VERSION:  # dates as strings sort in time order
        raise Broken(f"offered {FUTURE_VERSION}, a version no server speaks, it agreed to {agreed}: a server answers "
                     "with a version it supports", sent, {**reply, "focus": "protocolVersion"})
    again, echo, result = run.result(run.start(), "initialize", {**hello, "protocolVersion": agreed})
    if result.get("protocolVersion") != agreed:
        raise Broken(f"offered {agreed}, the version it chose itself, it answered "
                     f"{json.dumps(result.get('protocolVersion'))}", again, {**echo, "focus": "protocolVersion"})


@rule("server-info", "000", "initialize's result names the server: serverInfo, with its name and version", HANDSHAKE,
      "2. Server replies with its protocolVersion, its capabilities, and serverInfo.", eras=("handshake",),
      spec=(SPEC_INITIALIZATION, "The server MUST respond with its own capabilities and information (the schema's "
            "InitializeResult: serverInfo, an Implementation, its name and version required)"))
def server_info(run: Run):
    sent, reply, result = run.result(run.start(), "initialize", run.card.hello)
    info = result.get("serverInfo")
    if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        raise Broken(f"its serverInfo is {trim(json.dumps(info), width=60)}: an object with a name and a version, "
                     "both strings", sent, {**reply, "focus": "serverInfo" if "serverInfo" in reply["line"] else None})


@rule("capabilities-objects", "000", "each capability the server declares is an object, never true", HANDSHAKE,
      'Server replies with its protocolVersion, its capabilities, and serverInfo. In the lab that\'s {"tools": '
      '{"listChanged": true}, "resources": {}, "prompts": {}}.',
      spec=('spec {rev}, basic/lifecycle, "Capability Negotiation"', "Capability objects can describe "
            "sub-capabilities like: listChanged ... subscribe (the schema's ServerCapabilities: each an object)"))
def capabilities_objects(run: Run):
    asks = [("initialize", run.card.hello)] if run.card.eras["handshake"] or run.era == "handshake" else []
    asks += [("server/discover", None)] if run.card.eras["stateless"] else []
    for method, params in asks:
        wire = run.start()
        sent = wire.request(method, params if method == "initialize" else {"_meta": META})
        reply = wire.reply(sent)
        if reply is None:
            raise Broken(f"{method} got no response: {wire.silence()}", sent,
                         reason={"code": "no_response", "why": wire.why()})
        if result_of(reply) is None:
            raise Broken(f"{method} was answered {said(reply)}", sent, reply)
        capabilities = result_of(reply).get("capabilities")
        if not isinstance(capabilities, dict):
            raise Broken(f"the {method} result's capabilities are {json.dumps(capabilities)}, not an object",
                         sent, {**reply, "focus": '"capabilities"'})
        for name, value in capabilities.items():
            if not isinstance(value, dict):
                raise Broken(f"the {method} result declares {json.dumps(name)}: {json.dumps(value)}, not an object "
                             f'(as {json.dumps(name)}: {{}})', sent, {**reply, "focus": '"capabilities"'})


LIST_CHANGED_KINDS = {f"notifications/{kind}/list_changed": kind for kind in ("tools", "resources", "prompts")}
CLIENT_CAPABILITY = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


def unpromised(message: dict, declared: dict, client: dict) -> str | None:
    """Why the server may not send this message in a session that negotiated these capabilities, or None."""
    method = message["method"]
    if method == "notifications/message" and "logging" not in declared:
        return "the server declared no logging"
    # A capability that is no object (true) is capabilities-objects' to judge, not what it promises.
    kind = LIST_CHANGED_KINDS.get(method)
    promised = declared.get(kind, {}) if kind else None
    if isinstance(promised, dict) and promised.get("listChanged") is not True:
        return f"the server declared no {kind}.listChanged"
    resources = declared.get("resources", {})
    if method == "notifications/resources/updated" and isinstance(resources, dict) and \
            resources.get("subscribe") is not True:
        return "the server declared no resources.subscribe"
    needed = CLIENT_CAPABILITY.get(method)
    if needed and "id" in message and needed not in client:
        return f"the client declared no {needed}"
    return None


@rule("negotiated-capabilities", "000", "the server sends no notification its capabilities did not promise, and asks "
      "nothing the client did not declare", HANDSHAKE, "capabilities are negotiated state. ... the client might call "
      "sampling/createMessage on a server that never declared support, or the server might emit "
      "notifications/tools/list_changed to a client that can't handle it.", eras=("handshake",), tape=True,
      spec=('spec {rev}, basic/lifecycle, "Operation"; server/utilities/logging, "Capabilities"',
            "Both parties MUST: ... Only use capabilities that were successfully negotiated. ... Servers that emit "
            "log message notifications MUST declare the logging capability"))
def negotiated_capabilities(run: Run):
    provoke_notifications(run, run.open())
    for entries in sessions_of(run.tape()).values():
        shook = handshake_of(entries)
        if shook is None or shook["declared"] is None:
            continue  # no capabilities negotiated: nothing to hold the server to
        for entry in entries:
            message = from_server(entry)
            why = message and unpromised(message, shook["declared"], shook["client"])
            if why:
                raise Broken(f"the server sent {message['method']}, in {whose(entry)}, and {why}", shook["reply"],
                             entry)


# ---- course 000: the _call_tool error lattice, in its order ----

@rule("flat-methods", "000", "a declared primitive is served by its flat methods, an undeclared one is not",
      LATTICE, "_dispatch is a flat method-name switch to six handlers: tools/list, tools/call, resources/list, "
      "resources/read, prompts/list, prompts/get. ... Until both sides have exchanged capability objects, neither "
      "knows which methods are legal.",
      spec=('spec {rev}, server/tools, resources and prompts, "Capabilities"', "Servers that support tools MUST "
            "declare the tools capability (resources and prompts alike)"))
def flat_methods(run: Run):
    wire = run.open()
    declared = run.capabilities(wire)
    for kind in ("tools", "resources", "prompts"):
        sent, reply = run.call(wire, f"{kind}/list")
        result = result_of(reply)
        if kind in declared and not (result and isinstance(result.get(kind), list)):
            raise Broken(f"{kind} is declared, but {kind}/list was answered {said(reply)}"
                         + ("" if result is None else f" without a list under {json.dumps(kind)}"), sent, reply)
        if kind not in declared and result is not None:
            raise Broken(f"{kind}/list is served, but the capabilities declare no {kind}: a client never asks for "
                         "what is not declared", sent, reply)


@rule("unknown-tool", "000", "an unknown tool is answered -32601", LATTICE,
      "unknown tool name → -32601 (method-not-found; the tool is not a method the server offers).",
      differs={"course": "-32601", "spec": "an error, -32602 in its example",
               "claim": "an unknown tool is answered with an error, not a result", "passage": SPEC_TOOLS,
               "quote": "Protocol Errors: Standard JSON-RPC errors for issues like: Unknown tools"})
def unknown_tool(run: Run):
    wire = run.open()
    sent, reply = run.call(wire, "tools/call", {"name": NO_SUCH_TOOL, "arguments": {}})
    problems = {"course": None, "spec": None}
    if code_of(reply) != COURSE["unknown tool"]:
        problems["course"] = Broken(f"the unknown tool was answered {said(reply)}, not {COURSE['unknown tool']}", sent,
                                    reply)
    if error_of(reply) is None:
        problems["spec"] = Broken(f"the unknown tool was answered {said(reply)}, not an error: the spec counts an "
                                  "unknown tool among protocol errors", sent, reply)
    elif code_of(reply) != COURSE["invalid params"]:
        problems["spec"] = Advice(f"the unknown tool was answered {said(reply)}, where the spec's example has "
                                  "-32602", sent, reply)
    return problems


@rule("tool-not-allowed", "000", "a tool the session may not call is refused -32600, before its arguments are "
      "checked", LATTICE, "name exists but is not in the per-client allow-list → -32600 (invalid request; you asked "
      "for something you're not permitted to). This is the permission boundary, and it is checked before execution.",
      differs={"course": "-32600, before its arguments are checked", "spec": "refused (an error, or isError)",
               "claim": "a tool the session may not call is refused, not run",
               "passage": 'spec {rev}, server/tools, "Security Considerations" (no allow-list is specified)',
               "quote": "Servers MUST: ... Implement proper access controls"})
def tool_not_allowed(run: Run):
    name, arguments = run.flag("not_allowed")
    wire = run.open()
    # Called without arguments: a tool that takes some is refused for its name before its arguments are looked at.
    sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
    problems = {"course": None, "spec": None}
    if code_of(reply) == COURSE["missing argument"]:
        problems["course"] = Broken(f"{name}, called without its arguments, was answered {said(reply)}: its arguments "
                                    f"were checked before the allow-list, which refuses it {COURSE['tool not allowed']}",
                                    sent, reply)
    elif code_of(reply) != COURSE["tool not allowed"]:
        problems["course"] = Broken(f"{name} was answered {said(reply)}, not {COURSE['tool not allowed']}", sent, reply)
    if error_of(reply) is None and (result_of(reply) or {}).get("isError") is not True:
        problems["spec"] = Broken(f"{name} was answered {said(reply)}, not an error: it ran", sent, reply)
    return problems


@rule("missing-argument", "000", "a call without a required argument is answered -32602", LATTICE,
      "required argument missing → -32602 (invalid params).",
      differs={"course": "-32602",
               "spec": "refused: from 2025-11-25 an isError result, before it -32602 (the other as information)",
               "claim": "a call without a required argument is refused, not run (an isError result from 2025-11-25, "
                        "-32602 before)", "passage": SPEC_TOOLS,
               "quote": "Tool Execution Errors: Reported in tool results with isError: true: ... Input validation "
                        "errors (2025-11-25; 2025-06-18 lists invalid arguments among protocol errors)"})
def missing_argument(run: Run):
    wire = run.open()
    tool, _ = tool_with_required(run, wire)
    sent, reply = run.call(wire, "tools/call", {"name": tool["name"], "arguments": {}})
    without = f"{tool['name']} without {', '.join(map(str, tool['inputSchema']['required']))}"
    problems = {"course": None, "spec": None}
    if code_of(reply) != COURSE["missing argument"]:
        problems["course"] = Broken(f"{without} was answered {said(reply)}, not {COURSE['missing argument']}", sent,
                                    reply)
    revision = run.version(wire)
    refused = (result_of(reply) or {}).get("isError") is True
    if error_of(reply) is None and not refused:
        problems["spec"] = Broken(f"{without} was answered {said(reply)}: it ran, where the spec has a server "
                                  "validate every tool input", sent, reply)
    elif error_of(reply) is not None and code_of(reply) != COURSE["invalid params"]:
        problems["spec"] = Broken(f"{without} was answered {said(reply)}, not -32602 (invalid params)", sent, reply)
    elif revision >= "2025-11-25" and not refused:
        problems["spec"] = Advice(f"{without} was answered {said(reply)}; {revision} makes a missing argument an "
                                  "input validation error, an isError result", sent, reply)
    elif revision < "2025-11-25" and refused:
        problems["spec"] = Advice(f"{without} was answered {said(reply)}; {revision} lists invalid arguments among "
                                  "the protocol errors, -32602", sent, reply)
    return problems


@rule("tool-error-is-result", "000", "a tool that raises gives a result with isError true, not an error", LATTICE,
      'the tool function itself raises → not an error response. It returns {"content": [{"type": "text", "text": '
      '"ERROR: ..."}], "isError": true}.',
      spec=(SPEC_TOOLS, "Tool Execution Errors: Reported in tool results with isError: true: API failures ... "
            "Business logic errors"))
def tool_error_is_result(run: Run):
    name, arguments = run.flag("raises")
    wire = run.open()
    sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
    result = result_of(reply)
    if result is None or result.get("isError") is not True:
        raise Broken(f"{name}, which raises, was answered {said(reply)}, not a result with isError true: the "
                     "model can no longer read what went wrong", sent, reply)
    content = result.get("content")
    if not (isinstance(content, list) and any(isinstance(block, dict) and block.get("type") == "text"
                                              and isinstance(block.get("text"), str) for block in content)):
        raise Broken("the isError result holds no text block saying what went wrong", sent, reply)


GENERIC = set("""a an the of in on at while when during to for with from by is was has had been be this that it
error errors err failed fail fails failure exception raised raise thrown tool tools call calling called execute
executing execution executed run running internal server occurred unexpected unknown something went wrong sorry please
try again later see logs details info message request result""".split())  # words that say that, not why


def says_why(text: str, tool: str) -> bool:
    """Whether a failing tool's text says more than that it failed: a word that is neither generic nor its name."""
    named = set(re.split(r"[^a-z0-9]+", tool.lower()))
    return any(word not in GENERIC and word not in named for word in re.findall(r"[a-z0-9]+", text.lower()))


@rule("tool-error-says-why", "000", "a failing tool's text says why it failed, not only that it did", LATTICE,
      "delivered as tool-call content with isError: true, which the model can read and react to (\"the query failed, "
      "try a narrower filter\") ... hide the reason from the model.",
      differs={"course": "the reason, in the text", "spec": "the same, as what execution errors are for (no MUST)",
               "claim": "a failing tool's text says why (information: the spec says what such texts are for)",
               "passage": SPEC_TOOLS,
               "quote": "Tool Execution Errors contain actionable feedback that language models can use to "
                        "self-correct and retry with adjusted parameters."})
def tool_error_says_why(run: Run):
    name, arguments = run.flag("raises")
    wire = run.open()
    sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
    content = (result_of(reply) or {}).get("content")
    texts = [block["text"] for block in content if isinstance(block, dict) and isinstance(block.get("text"), str)] \
        if isinstance(content, list) else []
    error = error_of(reply) or {}
    texts += [str(error.get("message", "")), *([json.dumps(error["data"])] if "data" in error else [])]
    if not any(says_why(text, name) for text in texts):
        words = " ".join(text for text in texts if text)
        problem = Broken(f"{name}, which raises, said only {json.dumps(trim(words, width=60))}: that it failed, not "
                         "why", sent, reply)
        return {"course": problem, "spec": Advice(problem.text, *problem.shown)}


# ---- course 000: the outbox ----

LIST_CHANGE_SPEC = 'spec {rev}, server/{kind}, "List Changed Notification"'


def list_change(run: Run, kind: str, flag_name: str) -> dict:
    """Call the tool that changes the <kind> list: a bare list_changed before the next response, and a new list."""
    # What the capabilities promise is negotiated-capabilities' to judge, an id on it notification-has-no-id's.
    # Without the flag, a server whose capabilities promise no such change is not applicable. The spec recommends
    # the notification (SHOULD) and says nothing of when it comes: its verdict is information.
    if run.card.flags.get(flag_name) is None:
        promised = run.card.declared.get(kind)
        if not (isinstance(promised, dict) and promised.get("listChanged") is True):
            raise NotApplicable(f"the server declares no {kind}.listChanged", {"code": "not_declared",
                                                                                "capability": f"{kind}.listChanged"})
    name, arguments = run.flag(flag_name)
    wire = run.open()
    lists = ("resources", "resourceTemplates") if kind == "resources" else (kind,)

    def listing() -> tuple:
        """What the lists hold now, comparable."""
        shown, items = [], []
        for key, method in zip(lists, (f"{kind}/list", "resources/templates/list")):
            sent, reply = run.call(wire, method)
            if key == kind or result_of(reply):
                shown.append(reply)
                items.append(json.dumps((result_of(reply) or {}).get(key), sort_keys=True))
        return shown, items

    _, before = listing()
    mark = wire.mark()
    sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
    if result_of(reply) is None or result_of(reply).get("isError") is True:
        raise Broken(f"the call meant to change the {kind} list was answered {said(reply)}", sent, reply)
    after = run.then(wire, 1)  # the next request: the outbox is drained before its response at the latest
    run.bound(wire)  # and more, so that a notification that comes late is told as late, not as missing
    method = f"notifications/{kind}/list_changed"
    told = [e for e in wire.notifications(mark) if e["message"]["method"] == method]
    problem = None
    if not told:
        problem = Broken(f"no {method}, before the response to the next request or after it", sent, reply, *after)
    elif told[0]["at"] > after[1]["at"]:
        problem = Broken(f"{method} came after the response to the next request: the outbox is drained before it",
                         sent, reply, *after, told[0])
    elif (params := told[0]["message"].get("params")) not in (None, {}) and not (
            isinstance(params, dict) and set(params) <= {"_meta"}):
        problem = Broken(f"{method} carries a payload: it is a bare invalidation, and the client lists again", told[0])
    else:
        shown, now = listing()
        if now == before:
            problem = Broken(f"{kind}/list lists after the change what it listed before", sent, reply, *shown)
    return {"course": problem, "spec": problem and Advice(problem.text, *problem.shown)}


def list_change_differs(kind: str) -> dict:
    """What the course and the spec expect of a change to the <kind> list."""
    return {"course": f"a bare {kind} list_changed before the next response, and a new list",
            "spec": "the notification, as a SHOULD; its timing and shape unspecified",
            "claim": f"a change to the {kind} sends notifications/{kind}/list_changed (SHOULD)",
            "passage": LIST_CHANGE_SPEC.replace("{kind}", kind),
            "quote": f"When the list of available {kind} changes, servers that declared the listChanged capability "
                     "SHOULD send a notification"}


@rule("tools-list-changed", "000", "a change to the tools sends a bare notifications/tools/list_changed before the "
      "next response", LIST_CHANGED, "The mechanism: the server declared tools.listChanged: true at "
      'initialize. ... the server appends notification("notifications/tools/list_changed") to an _outbox. '
      "The client, on _pump_notifications, drains that outbox, sees the notification, and re-issues tools/list ... "
      "The notification carries no payload — it is a cache-invalidation signal, not a diff.",
      eras=("handshake",), differs=list_change_differs("tools"))
def tools_list_changed(run: Run):
    return list_change(run, "tools", "change_tools")


@rule("survives-bad-input", "000", "after bad input of every kind, the session still works", CODES,
      "intended errors carry precise codes, unintended ones degrade to internal-error ... a handler bug must not "
      "take down the session.",
      spec=('spec {rev}, basic/utilities/ping, "Behavior Requirements"', "The receiver MUST respond promptly with an "
            "empty response"))
def survives_bad_input(run: Run):
    wire = run.open()
    _, before = run.listed(wire, "tools")
    shown = [wire.send_line(NOT_JSON)]
    wire.last_id += 1
    shown.append(wire.send({"jsonrpc": "1.0", "id": wire.last_id, "method": run.sentinel}))
    calls = [(NO_SUCH_METHOD, None), ("tools/call", {"name": NO_SUCH_TOOL, "arguments": {}})]
    try:
        tool, _ = tool_with_required(run, wire)
        calls.append(("tools/call", {"name": tool["name"], "arguments": {}}))
    except NotApplicable:
        pass
    if run.card.flags.get("raises"):
        name, arguments = run.card.flags["raises"]
        calls.append(("tools/call", {"name": name, "arguments": arguments}))
    try:
        for method, params in calls:
            shown.extend(run.call(wire, method, params))
        shown.extend(run.call(wire, run.sentinel))
        reply, after = run.listed(wire, "tools")
    except Broken as exc:
        raise Broken(f"after bad input, {exc.text}", *[e for e in shown if e["dir"] == "→"][:2], *exc.shown,
                     reason=exc.reason)
    if [tool.get("name") for tool in after] != [tool.get("name") for tool in before]:
        raise Broken("after bad input, tools/list lists other tools", reply)


# ---- course 002: resources by URI, prompts and their variables, list changes ----

@rule("resources-by-uri", "002", "a listed resource is read by its URI; an unknown URI is an error", PRIMITIVES,
      "Resources are addressable, readable data, identified by URIs (file:///docs/policy.pdf, postgres://reports/q3), "
      "fetched via resources/read",
      differs={"course": "an error for an unknown URI", "spec": "an error, as a SHOULD (-32002 in 2025-11-25)",
               "claim": "a listed resource is read by its URI (an unknown URI an error: SHOULD)",
               "passage": 'spec {rev}, server/resources, "Error Handling"',
               "quote": "Servers SHOULD return standard JSON-RPC errors for common failure cases: Resource not found"})
def resources_by_uri(run: Run):
    wire = run.open()
    if "resources" not in run.capabilities(wire):
        raise NotApplicable("the server declares no resources", {"code": "not_declared", "capability": "resources"})
    listing, resources = run.listed(wire, "resources")
    if not resources:
        raise NotApplicable("resources/list lists no resource", {"code": "none_listed", "what": "a resource"})
    uri = resources[0].get("uri")
    if not isinstance(uri, str) or not isinstance(resources[0].get("name"), str):
        raise Broken("a listed resource lacks its uri or its name (strings)", listing)
    sent, reply, result = run.result(wire, "resources/read", {"uri": uri})
    contents = result.get("contents")
    first = contents[0] if isinstance(contents, list) and contents and isinstance(contents[0], dict) else {}
    if first.get("uri") != uri or not isinstance(first.get("text", first.get("blob")), str):
        raise Broken(f"reading {uri} gave no contents with its uri and a text or a blob", sent, reply)
    sent, reply = run.call(wire, "resources/read", {"uri": "report-card://no/such/resource"})
    if error_of(reply) is None:
        problem = Broken(f"an unknown URI was answered {said(reply)}, not an error", sent, reply)
        return {"course": problem, "spec": Advice(problem.text, *problem.shown)}


@rule("prompt-variables", "002", "prompts/get without a required variable is -32602; with it, messages",
      PRIMITIVES + "; " + CODES,
      "Prompts are reusable, parameterized prompt templates the server exposes, fetched via prompts/get ... "
      "-32602 invalid params — ... the lab raises it ... for a missing prompt-template variable.",
      differs={"course": "-32602", "spec": "-32602, as a SHOULD",
               "claim": "prompts/get with its required variables gives messages (without one: -32602, SHOULD)",
               "passage": 'spec {rev}, server/prompts, "Error Handling"',
               "quote": "Servers SHOULD return standard JSON-RPC errors for common failure cases: ... Missing "
                        "required arguments: -32602 (Invalid params)"})
def prompt_variables(run: Run):
    wire = run.open()
    declared = run.capabilities(wire)
    if "prompts" not in declared:
        raise NotApplicable("the server declares no prompts", {"code": "not_declared", "capability": "prompts"})
    _, prompts = run.listed(wire, "prompts")
    for prompt in prompts:
        variables = prompt.get("arguments") if isinstance(prompt.get("arguments"), list) else []
        required = [v["name"] for v in variables if isinstance(v, dict) and v.get("required") is True
                    and isinstance(v.get("name"), str)]
        if required and isinstance(prompt.get("name"), str):
            break
    else:
        raise NotApplicable("no listed prompt has a required variable", {"code": "none_listed",
                                                                          "what": "a prompt with a required variable"})
    sent, reply = run.call(wire, "prompts/get", {"name": prompt["name"], "arguments": {}})
    problem = None
    if code_of(reply) != COURSE["missing prompt variable"]:
        problem = Broken(f"{prompt['name']} without {', '.join(required)} was answered {said(reply)}, not "
                         f"{COURSE['missing prompt variable']}", sent, reply)
    filled = {name: value_for(run, wire, declared, prompt["name"], name) for name in required}
    sent, reply, result = run.result(wire, "prompts/get", {"name": prompt["name"], "arguments": filled})
    messages = result.get("messages")
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m and "content" in m
                                                            for m in messages)):
        raise Broken(f"{prompt['name']} filled in gave no messages, each with a role and a content", sent, reply)
    return {"course": problem, "spec": problem and Advice(problem.text, *problem.shown)}


def value_for(run: Run, wire: Wire, declared: dict, prompt: str, variable: str) -> str:
    """A value for a prompt's variable: the server's first completion where it offers completions, else a word."""
    if "completions" in declared:
        _, reply = run.call(wire, "completion/complete", {"ref": {"type": "ref/prompt", "name": prompt},
                                                         "argument": {"name": variable, "value": ""}})
        completion = (result_of(reply) or {}).get("completion")
        values = completion.get("values") if isinstance(completion, dict) else None
        if isinstance(values, list) and values and isinstance(values[0], str):
            return values[0]
    return "report-card"


@rule("resources-list-changed", "002",
      "a change to the resources sends a bare notifications/resources/list_changed before the next response",
      LIST_CHANGES, LIST_CHANGES_PASSAGE, eras=("handshake",), differs=list_change_differs("resources"))
def resources_list_changed(run: Run):
    return list_change(run, "resources", "change_resources")


@rule("prompts-list-changed", "002",
      "a change to the prompts sends a bare notifications/prompts/list_changed before the next response",
      LIST_CHANGES, LIST_CHANGES_PASSAGE, eras=("handshake",), differs=list_change_differs("prompts"))
def prompts_list_changed(run: Run):
    return list_change(run, "prompts", "change_prompts")


# ---- course 004: the 2026-07-28 revision ----

def stateless_results(run: Run, wire: Wire) -> list:
    """(sent, reply, result) of discover, every declared list, and the raising tool's call if a flag names it."""
    answers = [run.result(wire, "server/discover")]
    declared = answers[0][2].get("capabilities") if isinstance(answers[0][2].get("capabilities"), dict) else {}
    answers += [run.result(wire, f"{kind}/list") for kind in ("tools", "resources", "prompts") if kind in declared]
    if run.card.flags.get("raises"):  # a tool's result too, if it is one (an error response has no resultType)
        name, arguments = run.card.flags["raises"]
        sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
        answers += [(sent, reply, result_of(reply))] if result_of(reply) else []
    return answers


@rule("server-discover", "004", "server/discover answers the versions served and the capabilities",
      "course 004, section 3", "A client can call server/discover first to learn the server's supported versions and "
      "capabilities, but it does not have to.", eras=("stateless",))
def server_discover(run: Run):
    sent, reply, result = run.result(run.start(), "server/discover")
    versions = result.get("supportedVersions")
    if not (isinstance(versions, list) and STATELESS_VERSION in versions and all(isinstance(v, str) for v in versions)):
        raise Broken(f"its supportedVersions are {json.dumps(versions)}, not a list of versions with "
                     f"{STATELESS_VERSION}", sent, {**reply, "focus": "supportedVersions"})
    if not isinstance(result.get("capabilities"), dict):
        raise Broken("its capabilities are not an object", sent, {**reply, "focus": "capabilities"})


@rule("meta", "004", "a request carrying _meta is served without a handshake; each result's _meta names the server",
      "course 004, section 3 and its transcript", "Every request carries its protocol version and the client's "
      "capabilities in params._meta, and a server must not rely on anything an earlier request said.",
      eras=("stateless",))
def meta(run: Run):
    wire = run.start()
    sent, reply = run.call(wire, "tools/list")  # the first request of this process: no handshake before it
    if result_of(reply) is None:
        raise Broken(f"tools/list, its version in _meta and no handshake before it, was answered {said(reply)}",
                     sent, reply)
    for sent, reply, result in [(sent, reply, result_of(reply)), run.result(wire, "server/discover")]:
        info = result.get("_meta", {}).get(SERVER_INFO_KEY) if isinstance(result.get("_meta"), dict) else None
        if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
            raise Broken(f"the {sent['message']['method']} result's _meta holds no {SERVER_INFO_KEY} "
                         "{name, version}", sent, {**reply, "focus": "_meta"})


@rule("result-type", "004", 'every result says its resultType: "complete" or "input_required"', "course 004, section 6",
      "2026-07-28 removed the handshake and sessions, added server/discover, a resultType on every result, and cache "
      "hints (ttlMs, cacheScope) on list results.", eras=("stateless",))
def result_type(run: Run):
    for sent, reply, result in stateless_results(run, run.start()):
        if result.get("resultType") not in ("complete", "input_required"):
            raise Broken(f"the {sent['message']['method']} result's resultType is "
                         f"{json.dumps(result.get('resultType'))}", sent, {**reply, "focus": "resultType"})


@rule("cache-hints", "004", "each list result carries ttlMs and cacheScope", "course 004, section 6",
      "2026-07-28 removed the handshake and sessions, added server/discover, a resultType on every result, and cache "
      "hints (ttlMs, cacheScope) on list results.", eras=("stateless",))
def cache_hints(run: Run):
    for sent, reply, result in stateless_results(run, run.start())[1:]:
        if "/list" not in sent["message"]["method"]:
            continue
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        if not (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0 and scope in ("public", "private")):
            raise Broken(f"the {sent['message']['method']} result's ttlMs is {json.dumps(ttl)} and its cacheScope "
                         f"{json.dumps(scope)}: milliseconds, and \"public\" or \"private\"", sent,
                         {**reply, "focus": "ttlMs" if "ttlMs" in reply["line"] else '"result"'})


@rule("unsupported-version", "004", "a version not served is answered -32022, with the versions served",
      "course 004, section 4", "a version error (-32022) that lists the versions the server does support",
      eras=("stateless",))
def unsupported_version(run: Run):
    wire = run.start()
    listed = (result_of(wire.reply(run.send(wire, "server/discover"))) or {}).get("supportedVersions")
    listed = listed if isinstance(listed, list) else []
    old = next(v for v in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01") if v not in listed)
    sent, reply = run.call(wire, "tools/list", {"_meta": {**META, PROTOCOL_VERSION_KEY: old}})
    data = (error_of(reply) or {}).get("data")
    served = data.get("supported") if isinstance(data, dict) else None
    if code_of(reply) != COURSE["unsupported version"]:
        raise Broken(f"tools/list in version {old} was answered {said(reply)}, not {COURSE['unsupported version']}",
                     sent, reply)
    if not (isinstance(served, list) and STATELESS_VERSION in served and old not in served):
        raise Broken(f"its data.supported is {json.dumps(served)}: the versions served, {STATELESS_VERSION} among "
                     "them", sent, reply)


# ---- stdio ----
# Both run even when no session opens: the stdout rule reads every line of every session, the card's first ones
# too; stdin's end is tried first on a process that gets no message at all (the card's first processes).

@rule("stdout-only-json", "stdio", "nothing but JSON-RPC messages on the server's stdout, in any rule's session",
      'spec 2025-06-18, Transports, "stdio"', "The server MUST NOT write anything to its stdout that is not a valid "
      "MCP message.", eras=SESSIONLESS, tape=True,
      spec=('spec {rev}, basic/transports, "stdio"', "The server MUST NOT write anything to its stdout that is not a "
            "valid MCP message."))
def stdout_only_json(run: Run):
    if run.era is not None:  # one more session of its own, listed and pinged; without a session, the lines read
        wire = run.open()
        run.ask(wire, "tools/list")
        run.bound(wire)
    junk = [e for e in run.tape() if e["dir"] == "←" and not (e["json"] and isinstance(e["message"], dict))]
    if junk:
        sessions = {e["session"] for e in junk}
        first = "the card's first sessions" if junk[0]["rule"] == START["id"] else f"{junk[0]['rule']}'s"
        raise Broken(f"{len(junk)} {'line' if len(junk) == 1 else 'lines'} on stdout that "
                     f"{'is' if len(junk) == 1 else 'are'} not a JSON-RPC message, in {len(sessions)} "
                     f"{'session' if len(sessions) == 1 else 'sessions'}, the first in {first}", *junk[:3],
                     reason={"code": "not_a_message"})


@rule("exit-on-eof", "stdio", "the server exits when its stdin ends", "course 004, section 4",
      "server.stdin.close()  # closing stdin ends a stdio server", eras=SESSIONLESS,
      differs={"course": "it exits", "spec": "the client waits, then SIGTERM, then SIGKILL: no duty named",
               "claim": "the server exits when its stdin ends (information: the spec has the client end it)",
               "passage": 'spec {rev}, basic/lifecycle, "Shutdown"',
               "quote": "the client SHOULD initiate shutdown by: First, closing the input stream to the child process "
                        "(the server) Waiting for the server to exit, or sending SIGTERM"})
def exit_on_eof(run: Run):
    problem = run.card.eof_problem  # a first process, its stdin closed before any message
    if isinstance(problem, CouldNotRun):
        raise problem
    if problem is None and run.era is not None:  # no session opens: that first process was the whole test
        wire = run.open()
        run.bound(wire)
        wire.close_stdin()
        if wire.wait_exit(run.card.timeout) is None:
            problem = Broken(f"still running {run.card.timeout:g} s after its stdin closed, at the end of a session"
                             if not wire.cut else f"still running when {wire.deadline_text} passed, after its stdin "
                             "closed", note("stdin closed"), reason={"code": "no_exit"})
    return {"course": problem, "spec": problem and Advice(problem.text, *problem.shown)}


# ---------------------------------------------------------------------------------------------------
# ---- 4. The card ----
# First, side by side, three fresh processes: one asks initialize (then lists the tools), one server/discover
# (then lists the tools in 2026-07-28), one has its stdin closed before any message (exit-on-eof's first test).
# They find the eras the server serves, and the tools the flags must name. If neither opens a session, they say
# why in one diagnosis, within --timeout, and only stdio's rules are judged. Else each rule on its own
# processes, --jobs of them at a time; then the rules that read the tape, side by side too, each on the sessions of
# the others and its own.
# ---------------------------------------------------------------------------------------------------

ORDER = {START["id"]: -1} | {r["id"]: place for place, r in enumerate(RULES)}  # the first sessions, then the rules
TAPE_READERS = {r["id"] for r in RULES if r["tape"]}  # judged after the others, on every session before them too
EOF_RULE = next(r for r in RULES if r["id"] == "exit-on-eof")
CLUES = {  # why no session opened, the likelier cause first: what to fix
    "bound": "run the server by hand and watch what grows without end: memory, processes, CPU time, output (the "
             "bounds are the card's --max-* flags, or the assignment's file)",
    "card_deadline": "give the card more time (--deadline)",
    "cannot_start": "run the command by hand, from the same folder: it must start, then wait for lines on its stdin",
    "id_type": 'a response echoes its request\'s id exactly, as the same JSON type: 1 is not "1" (course 000, "Three '
               'message shapes")',
    "echo": "answer each request with a response that carries its id and a result or an error: a command that "
            "copies its input back, as cat does, is no server",
    "other_id": 'a response echoes its request\'s id exactly (course 000, "Three message shapes")',
    "not_json": 'stdout is the wire: nothing but JSON-RPC messages, one a line; print() and logs go to stderr (spec '
                '2025-06-18, Transports, "stdio")',
    "not_a_message": 'stdout is the wire: nothing but JSON-RPC messages, one a line; print() and logs go to stderr '
                     '(spec 2025-06-18, Transports, "stdio")',
    "refused": 'answer initialize with a result: the protocolVersion agreed, the capabilities, serverInfo (course '
               '000, "The stateful handshake"); or, in 2026-07-28, server/discover (course 004, section 3)',
    "exited": "run the command by hand: a stdio server keeps reading its stdin until it ends; the last lines of its "
              "stderr say why it stopped",
    "silent": "write each response as one line on stdout and flush it at once (a buffered stdout holds it back), "
              "reading one message a line from stdin (course 004, section 4)",
}


class UsageError(ValueError):
    """A mistake on the command line, or a flag the server cannot honour: said in one line, exit status 2."""


class Card:
    """One server's card: its command, the flags, the eras it serves, every line that crossed, and the rows."""

    def __init__(self, command: list, flags: dict | None = None, timeout: float = DEFAULT_TIMEOUT,
                 standard: str = "course", recording=None, trace=None, not_offered=(),
                 rule_seconds: float | None = None, card_seconds: float | None = None, bounds: dict | None = None,
                 cwd: str | None = None, env: dict | None = None, assigned: bool = False, optional=()):
        self.command, self.flags, self.timeout, self.standard = command, flags or {}, timeout, standard
        # What initialize offers: course 000's version; with --spec the newest, so that the spec judged is the newest
        # revision the server speaks (version negotiation answers it, or the newest older one it has).
        self.hello = {**HELLO, "protocolVersion": SPEC_VERSION if standard == "spec" else HANDSHAKE_VERSION}
        self.not_offered = set(not_offered)  # the features --not-offered says the server lacks
        self.rule_seconds = rule_seconds or RULE_DEADLINE * timeout  # each rule's deadline
        self.card_seconds = card_seconds or CARD_DEADLINE * timeout  # the whole card's
        self.ends_at = math.inf  # the card's deadline, set when it starts to run
        self.recording = recording  # a board.Recording drawing every line, or None
        self.trace = trace  # a file to print each line to as it crosses, or None
        self.tape = []  # every line that crossed and every session begun, in order: the board's records, one for one
        self.taping = threading.Lock()  # rules may run side by side (--jobs); the tape keeps one order
        self.eras = {"handshake": None, "stateless": None}
        self.declared = {}  # the capabilities initialize's result declares (the handshake era)
        self.tools = {"handshake": None, "stateless": None}  # the names of the tools each era lists
        self.diagnosis = None  # why no session opened, when none did
        self.eof_problem = None  # exit-on-eof's first test, when it did not hold
        self.live = set()  # the wires whose processes may be running
        self.stopped = False  # the card is over: no rule starts a process any more
        self.stopped_by = None  # the bound the server's processes went over, which stopped the card
        self.account = Account(bounds, over=self.bounded)  # what the server's processes used, against the bounds
        self.cwd, self.env = cwd, env  # the servers' working directory and environment (None: the card's own)
        self.assigned = assigned  # the flags are an assignment's: a tool the server does not list is its ✗
        self.optional = set(optional)  # the features an assignment leaves optional
        self.unlisted = {}  # with assigned flags, each whose tool the server does not list: flag name -> the words
        self.seconds = 0.0  # how long the card took
        self.rows = []

    def begin(self, title: str, rule_id: str) -> int:
        """A new server process: a new session on the board; its place on the tape."""
        return self.record({"dir": "session", "line": title, "json": False, "message": None}, rule_id)["at"]

    def record(self, entry: dict, rule_id: str, session_at: int | None = None) -> dict:
        """Keep one line that crossed (a Wire's entry): its place on the tape, the rule whose session it is in, and
        where that session began (a session's own entry: its place)."""
        with self.taping:
            at = len(self.tape)
            entry |= {"at": at, "rule": rule_id, "session": at if session_at is None else session_at}
            self.tape.append(entry)
            if self.recording and entry["dir"] == "session":
                self.recording.begin(entry["line"])
            elif self.recording:
                self.recording.record(entry["dir"], entry["line"].encode("utf-8", "surrogatepass"))
            if self.trace:
                print(f"[{rule_id}] # {entry['line']}" if entry["dir"] == "session" else
                      f"[{rule_id}] {entry['dir']} {entry['line']}", file=self.trace, flush=True)
        return entry

    def track(self, wire: Wire, running: bool):
        """Keep count of the processes that may be running, so that stop() can end them."""
        with self.taping:
            if running:
                self.live.add(wire)
            else:
                self.live.discard(wire)

    def stop(self):
        """End every process still running (the card is done, interrupted, failed, or over a bound); no rule starts
        another."""
        self.stopped = True
        with self.taping:
            running = list(self.live)
        for wire in running:
            wire.kill()  # its rule's own close() then reaps it

    def bounded(self, breach: dict):
        """The server's processes went over a bound (the account's breach): the card stops, each of them ended."""
        self.stopped_by = breach
        self.stop()

    def why_stopped(self) -> CouldNotRun:
        """Why no rule runs any more: the bound passed, or the card was stopped (Ctrl-C, or done)."""
        if self.stopped_by:
            return CouldNotRun(self.stopped_by["text"], {"code": "bound", "bound": self.stopped_by["bound"]})
        return CouldNotRun("the card was stopped", {"code": "stopped"})

    def side_by_side(self, tasks: list, jobs: int) -> list:
        """Each task's result, jobs at a time (one after the other for jobs=1); a Ctrl-C ends every process."""
        if jobs == 1:
            return [task() for task in tasks]
        pool = concurrent.futures.ThreadPoolExecutor(jobs)
        try:
            return list(pool.map(lambda task: task(), tasks))
        except BaseException:
            self.stop()  # the tasks still running end at once, and no other starts
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    # -- the first processes --

    def start(self, eof: bool):
        """The first processes, side by side (one after the other on the board, which draws one session at a time):
        the eras, the tools, for exit-on-eof stdin closed at once, and the diagnosis if no session opens."""
        probes = [self.probe_handshake, self.probe_stateless] + ([self.probe_eof] if eof else [])
        clues = self.side_by_side(probes, 1 if self.recording else len(probes))
        if self.stopped_by and not (self.eras["handshake"] or self.eras["stateless"]):
            self.diagnosis = {"code": "bound", "text": self.stopped_by["text"], "fix": CLUES["bound"], "exchange": []}
        elif not (self.eras["handshake"] or self.eras["stateless"]):
            self.diagnosis = diagnose(clues)

    def probe_handshake(self) -> dict | None:
        """initialize on a fresh process: a result opens the handshake era, whose tools are then listed; if it does
        not, what the process said (a clue to why no session opens)."""
        run = Run(self, START, "handshake")
        try:
            wire = run.start()
            sent = wire.request("initialize", self.hello)
            reply = wire.reply(sent)
            result = result_of(reply)
            if result and isinstance(result.get("protocolVersion"), str):
                self.eras["handshake"] = {"version": result["protocolVersion"]}
                self.declared = result["capabilities"] if isinstance(result.get("capabilities"), dict) else {}
                wire.send(notification("notifications/initialized"))
                self.tools["handshake"] = listed_tools(run, wire)[0]
                return None
            self.eras["no_handshake"] = (f"initialize was answered {said(reply)}" if reply else
                                         f"initialize got no response: {wire.silence()}")
            return clue(run, wire, sent, reply)
        except CouldNotRun as exc:
            return {"code": "cannot_start", "text": exc.text, "shown": []}
        finally:
            run.close()

    def probe_stateless(self) -> dict | None:
        """server/discover on a fresh process, then tools/list with _meta: 2026-07-28 is served if discover lists it,
        or the list has a resultType (a server whose discover is broken still serves _meta); a clue if not."""
        run = Run(self, START, "stateless")
        try:
            wire = run.start()
            sent = run.send(wire, "server/discover")
            reply = wire.reply(sent)
            versions = (result_of(reply) or {}).get("supportedVersions")
            names, first = listed_tools(run, wire)
            if (isinstance(versions, list) and STATELESS_VERSION in versions) or "resultType" in (first or {}):
                self.eras["stateless"] = {"versions": versions if isinstance(versions, list) else None}
                self.tools["stateless"] = names
                return None
            self.eras["no_stateless"] = (f"server/discover was answered {said(reply)}" if reply else
                                         f"server/discover got no response: {wire.silence()}")
            return clue(run, wire, sent, reply)
        except CouldNotRun as exc:
            return {"code": "cannot_start", "text": exc.text, "shown": []}
        finally:
            run.close()

    def probe_eof(self) -> None:
        """A fresh process whose stdin is closed before any message: it must exit all the same (exit-on-eof)."""
        run = Run(self, EOF_RULE, None)
        try:
            wire = run.start()
            wire.close_stdin()
            if wire.wait_exit(self.timeout) is None:
                self.eof_problem = (
                    CouldNotRun(f"the card's deadline ({self.card_seconds:g} s) passed while it ran",
                                {"code": "card_deadline"}) if run.cut_by_card() else
                    Broken(f"still running {self.timeout:g} s after its stdin closed, with no message sent",
                           note("stdin closed at once"), reason={"code": "no_exit"}))
        except CouldNotRun:
            pass  # the command cannot start: the other first processes say so
        finally:
            run.close()

    def check_flags(self):
        """Each flag that names a tool names one the server lists (in its first era); a UsageError says which not."""
        names = self.tools["handshake"] if self.eras["handshake"] else self.tools["stateless"]
        if names is None:
            return  # no session, or no list: the rules will say what is wrong
        wrong = {name: f"{FLAGS[name][0]} names {self.flags[name][0]}" for name in TOOL_FLAGS
                 if self.flags.get(name) and self.flags[name][0] not in names}
        listed = ", ".join(map(str, names)) if names else "no tool"
        if wrong and not self.assigned:
            raise UsageError(f"{' and '.join(wrong.values())}, which the server does not list (it lists {listed})")
        self.unlisted = {name: f"{words}, which the server does not list (it lists {listed}): not offered"
                         for name, words in wrong.items()}  # each the ✗ of the rules that need it

    # -- the rules --

    def era_for(self, rule: dict) -> str | None:
        """The era a rule runs in: the handshake where served (course 000's era), else 2026-07-28; None for a rule that
        runs without a session when none opens; or why it is not judged."""
        served = [era for era in ("handshake", "stateless") if self.eras[era]]
        if not served:
            if None in rule["eras"] and self.diagnosis["code"] != "cannot_start":
                return None
            raise CouldNotRun("no session opened", {"code": "no_session", "diagnosis": self.diagnosis["code"]})
        for era in served:
            if era in rule["eras"]:
                return era
        if rule["eras"] == ("stateless",):
            raise NotApplicable(f"the server serves no 2026-07-28: {self.eras.get('no_stateless')}",
                                {"code": "era_not_served", "era": STATELESS_VERSION})
        if rule["check"] in (tools_list_changed, resources_list_changed, prompts_list_changed):
            raise NotApplicable("a 2026-07-28 server tells list changes only on a subscriptions/listen stream",
                                {"code": "listen_stream"})
        raise NotApplicable(f"the server serves no handshake: {self.eras.get('no_handshake')}",
                            {"code": "era_not_served", "era": "handshake"})

    def judge(self, rule: dict) -> dict:
        """Run one rule on its own processes; its row."""
        row = {key: rule[key] for key in ("id", "level", "claim", "passage", "quote")}
        row |= {"outcome": "pass", "reason": None, "text": "", "exchange": [], "at": [], "judged_by": self.standard,
                "differs": None, "session_at": None}
        run = None
        try:
            if self.stopped:
                raise self.why_stopped()
            if time.monotonic() >= self.ends_at:
                raise CouldNotRun(f"the card's deadline ({self.card_seconds:g} s) passed before it began",
                                  {"code": "card_deadline"})
            run = Run(self, rule, self.era_for(rule))
            problems = rule["check"](run)
        except Unjudged as exc:
            return row | {"outcome": exc.outcome, "reason": exc.reason, "text": exc.text,
                          "session_at": run and run.first_at}
        except Broken as exc:
            problems = {"course": exc, "spec": exc}
        except Exception as exc:  # the card's own mistake: said as such, so that the server is not charged with it
            return row | {"outcome": "could_not_run", "reason": {"code": "card_error"},
                          "text": f"the report card failed to judge this rule ({exc!r}): please report it"}
        finally:
            if run:
                run.close()
        row["session_at"] = run.first_at
        problems = problems or {"course": None, "spec": None}
        if run.cut_by_card() and any(isinstance(problem, Broken) for problem in problems.values()):
            return row | {"outcome": "could_not_run", "reason": {"code": "card_deadline"},
                          "text": f"the card's deadline ({self.card_seconds:g} s) passed while it ran"}
        if run.cut_by_bound() and any(isinstance(problem, Broken) for problem in problems.values()):
            # What its ended processes did not say is no verdict.
            stopped = self.why_stopped()
            return row | {"outcome": "could_not_run", "reason": stopped.reason, "text": stopped.text}
        chosen = problems[self.standard]
        revision = self.revision(run.era)
        if rule["differs"]:  # both standards: what each expects, where it says so, its outcome
            spec = rule["differs"]
            sides = {"course": (rule["claim"], rule["passage"], rule["quote"]),
                     "spec": (spec["claim"], spec["passage"].format(rev=revision), spec["quote"])}
            row["differs"] = {standard: {"expects": spec[standard], "claim": sides[standard][0],
                                         "passage": sides[standard][1],
                                         "outcome": "fail" if isinstance(problems[standard], Broken) else "pass",
                                         "text": problems[standard].text if problems[standard] else ""}
                              for standard in ("course", "spec")}
            row["claim"], row["passage"], row["quote"] = sides[self.standard]
        elif self.standard == "spec" and rule["spec"]:  # the same claim, on the spec's word
            row["passage"], row["quote"] = rule["spec"][0].format(rev=revision), rule["spec"][1]
        if chosen:  # a failure, or (by the spec alone) information
            row |= {"text": chosen.text, "exchange": [shown(item) for item in chosen.shown],
                    "at": [item["at"] for item in chosen.shown if isinstance(item, dict) and "at" in item]}
        if isinstance(chosen, Broken):
            row |= {"outcome": "fail", "reason": chosen.reason}
        return row

    def revision(self, era: str | None) -> str:
        """The spec revision a rule's sessions are judged by: the version initialize agreed (the card offered the
        course's, or with --spec the newest), 2026-07-28 in its era, the newest handshake revision without a
        session."""
        if era == "stateless":
            return STATELESS_VERSION
        return str(self.eras["handshake"]["version"]) if self.eras["handshake"] else SPEC_VERSION

    def run(self, levels=("000", "002", "004"), only=None, jobs: int = 1) -> dict:
        """The first processes, the flags checked, then every rule of the levels (stdio's always; only: these rule
        ids) judged, jobs at a time, each on its own processes; the rules that read the tape after the others (each
        judges their sessions too); the report."""
        chosen = [r for r in RULES if (r["level"] in levels or r["level"] == "stdio") and (not only or r["id"] in only)]
        began = self.account.started = time.monotonic()
        self.ends_at = began + self.card_seconds
        try:
            self.start(eof=EOF_RULE in chosen)
            self.check_flags()
            rows = {}
            for readers in (False, True):
                ids = [r["id"] for r in chosen if r["tape"] is readers]
                tasks = [functools.partial(self.judge, r) for r in chosen if r["tape"] is readers]
                rows |= dict(zip(ids, self.side_by_side(tasks, jobs)))
        finally:
            self.stop()
            self.seconds = time.monotonic() - began
        self.rows = [rows[r["id"]] for r in chosen]
        return self.report(levels)

    def report(self, levels) -> dict:
        """The card as JSON (docs/reference.md, "The report card in full", holds its schema)."""
        summary = {}
        for row in self.rows:
            counts = summary.setdefault(row["level"], dict.fromkeys(OUTCOMES, 0))
            counts[row["outcome"]] += 1
        untested = list(dict.fromkeys(row["reason"]["flag"] for row in self.rows if row["outcome"] == "not_tested"))
        return {"schema_version": SCHEMA_VERSION, "command": self.command, "standard": self.standard,
                "spec_revision": self.revision("handshake" if self.eras["handshake"] else
                                               "stateless" if self.eras["stateless"] else None),
                "levels": list(levels), "flags": flags_text(self.flags, self.not_offered),
                "not_offered": sorted(self.not_offered),
                "eras": {"handshake": self.eras["handshake"], "stateless": self.eras["stateless"]},
                "eras_text": eras_text(self.eras), "diagnosis": self.diagnosis,
                "rules": [{key: value for key, value in row.items() if key not in ("at", "session_at")}
                          for row in self.rows],
                "summary": summary, "untested_flags": untested,
                "bounds": self.account.limits | {"wall_seconds": self.card_seconds},
                "used": self.account.usage() | {"wall_seconds": round(self.seconds, 1)},
                "stopped_by": self.bound_passed(),
                "exit_status": exit_status({row["outcome"] for row in self.rows})}

    def bound_passed(self) -> dict | None:
        """The bound that stopped the card: one its server's processes went over, or the wall time (its deadline)."""
        if self.stopped_by:
            return self.stopped_by
        cut = [row["id"] for row in self.rows if (row["reason"] or {}).get("code") == "card_deadline"]
        if not cut:
            return None
        breach = {"bound": "wall_seconds", "limit": self.card_seconds, "used": round(self.seconds, 1),
                  "at": round(self.seconds, 1), "rule": cut[0]}
        return breach | {"text": bound_text(breach)}


def clue(run: Run, wire: Wire, sent: dict, reply: dict | None) -> dict:
    """Why a first process opened no session: a code (CLUES), the words, and the lines that show it."""
    method, asked = sent["message"]["method"], sent["message"]["id"]
    if reply is not None:
        wanted = "a protocolVersion" if method == "initialize" else f"{STATELESS_VERSION} among its supportedVersions"
        words = said(reply) if result_of(reply) is None else f"a result without {wanted}"
        return {"code": "refused", "text": f"{method} was answered {words}", "shown": [sent, reply]}
    found = []
    for entry in wire.received:
        message = entry["message"]
        if not entry["json"]:
            found.append(("not_json", entry, f"the server wrote a line that is not JSON: "
                                             f"{trim(entry['line'], width=60)}"))
        elif not isinstance(message, dict):
            found.append(("not_a_message", entry, f"the server wrote {trim(entry['line'], width=60)}: JSON, but no "
                                                  "JSON-RPC message"))
        elif entry.get("echo"):
            found.append(("echo", entry, f"the server wrote back the {message.get('method')} request it was sent, "
                                         "unanswered"))
        elif answers_an_id(message) and same_but_type(message["id"], asked):
            found.append(("id_type", entry, f"the answer to {method} came with id {id_key(message['id'])}, where the "
                                            f"request's id is {id_key(asked)}: the same number, another JSON type"))
        elif answers_an_id(message):
            found.append(("other_id", entry, f"a response came with id {id_key(message['id'])}, where the request's "
                                             f"id is {id_key(asked)}"))
    if found:
        code, entry, text = min(found, key=lambda item: list(CLUES).index(item[0]))
        ended = wire.ended and not wire.flooded
        return {"code": code, "text": text + (f"; then {wire.silence()}" if ended else ""),
                "shown": [sent, entry] + ([note(wire.silence())] if ended else [])}
    if run.cut_by_card():
        return {"code": "card_deadline", "text": f"the card's deadline ({run.card.card_seconds:g} s) passed before "
                                                 f"{method} was answered", "shown": [sent]}
    return {"code": "exited" if wire.ended else "silent", "text": f"no response to {method}: {wire.silence()}",
            "shown": [sent, note(wire.silence())]}


def same_but_type(a, b) -> bool:
    """Whether two ids are one to a reader and two to JSON-RPC: 1 and "1", 1 and 1.0."""
    if id_key(a) == id_key(b):
        return False
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    return (numbers and a == b) or str(a) == str(b)


def diagnose(clues: list) -> dict:
    """One diagnosis from the first processes' clues: the likeliest cause (CLUES' order), what to fix, its lines."""
    found = [c for c in clues if c]
    best = min(found, key=lambda c: list(CLUES).index(c["code"]))
    same = [c["text"] for c in found if c["code"] == best["code"]]
    return {"code": best["code"], "text": "; ".join(dict.fromkeys(same)) if best["code"] == "refused" else best["text"],
            "fix": CLUES[best["code"]], "exchange": [shown(item) for item in best["shown"]]}


def shown(item) -> dict:
    """One line of an exchange as the card keeps it: its direction and text ("" and a note for what did not cross)."""
    if isinstance(item, str):
        return {"dir": "", "line": item}
    return {"dir": item["dir"], "line": item["line"], **({"focus": item["focus"]} if "focus" in item else {})}


def eras_text(eras: dict) -> str:
    """The eras the server serves, in words."""
    words = []
    if eras["handshake"]:
        words.append(f"the handshake (initialize agreed {eras['handshake']['version']})")
    else:
        words.append(f"no handshake ({eras.get('no_handshake')})")
    if eras["stateless"]:
        versions = eras["stateless"]["versions"]
        words.append("2026-07-28" + (f" (server/discover lists {', '.join(map(str, versions))})" if versions else ""))
    else:
        words.append(f"no 2026-07-28 ({eras.get('no_stateless')})")
    return "; ".join(words)


def flags_text(flags: dict, not_offered=()) -> list:
    """The flags given, as a command line would carry them."""
    given = [f"{FLAGS[name][0]} {call_text(value)}" for name, value in flags.items() if value is not None]
    return given + ([f"--not-offered {','.join(sorted(not_offered))}"] if not_offered else [])


def call_text(value: tuple) -> str:
    """A tool and its arguments as one flag's value."""
    name, arguments = value
    return shlex.quote(name + (f" {json.dumps(arguments)}" if arguments else ""))


# ---------------------------------------------------------------------------------------------------
# ---- 5. The text ----
# Written from the JSON alone, so that the two always agree: each judged rule a row under its level; the rules
# that could not run, one line for each reason; a line a level; the flags that would test what was not; the exit
# status in words.
# ---------------------------------------------------------------------------------------------------

def mark(outcome: str) -> str:
    """An outcome's mark on the card: ✓ ✗ – ? !"""
    return OUTCOMES[outcome][0]


def row_text(row: dict) -> str:
    """What a row says below its passage: what went wrong, why it was not judged (that outcome's words first), or
    where the server does otherwise than the spec only recommends (information)."""
    if row["outcome"] == "fail":
        return row["text"]
    if row["outcome"] == "pass":
        return f"information, not a failure (the spec only recommends this, or leaves it open): {row['text']}"
    return f"{OUTCOMES[row['outcome']][1]}: {row['text']}"


def summary_lines(card: dict) -> list:
    """One line a level: course 000: 15/18 rules hold (2 not tested)."""
    lines = []
    for level, counts in card["summary"].items():
        judged = sum(counts.values()) - counts["not_applicable"]
        others = [f"{counts[outcome]} {OUTCOMES[outcome][1]}" for outcome in ("not_tested", "not_applicable",
                                                                              "could_not_run") if counts[outcome]]
        holds = f"{counts['pass']}/{judged} rules hold" if judged else "no rule applies"
        lines.append(f"{LEVELS[level]}: {holds}" + (f" ({', '.join(others)})" if others else ""))
    return lines


def exchange_lines(items: list) -> list:
    """The lines of an exchange, each cut to fit: → sent, ← received, or a note in words."""
    return [INDENT + (f"{item['dir']} {trim(item['line'], item.get('focus'))}" if item["dir"] else item["line"])
            for item in items]


def text(card: dict) -> str:
    """The card as a student reads it: a row a rule, its passage; on ✗, what happened and the lines that show it."""
    standard = "the course" if card["standard"] == "course" else "the spec"
    lines = [f"report card: {shlex.join(card['command'])}"]  # whole, to copy and paste
    diagnosis = card["diagnosis"]
    if diagnosis:
        lines += wrap(f"no session opened: {diagnosis['text']}") + exchange_lines(diagnosis["exchange"])
        lines += wrap(f"to fix: {diagnosis['fix']}", INDENT)
    else:
        lines += wrap(f"the server serves {card['eras_text']}")
        lines += wrap(f"judged by {standard}" + (f", revision {card['spec_revision']} (initialize offered "
                                                 f"{SPEC_VERSION}, the newest)" if card["standard"] == "spec" else "")
                      + "; where the lab and the spec differ, both verdicts are shown"
                      + (" (--spec judges by the spec)" if card["standard"] == "course" else ""))
    if card["flags"]:
        lines += wrap(f"flags: {' '.join(card['flags'])}")
    level = None
    for row in card["rules"]:
        if row["outcome"] == "could_not_run":
            continue  # below, a line for each reason
        if row["level"] != level:
            level = row["level"]
            lines += ["", LEVELS[level]]
        lines += row_lines(card, row)
    unrun = {}  # why: the rules that could not run for it
    for row in card["rules"]:
        if row["outcome"] == "could_not_run":
            unrun.setdefault(row["text"], []).append(row["id"])
    for why, ids in unrun.items():
        lines += [""] + wrap(f"{mark('could_not_run')} could not run ({why}): {', '.join(ids)}")
    lines += [""] + summary_lines(card)
    if ended_text(card.get("used") or {}):
        lines += wrap(ended_text(card["used"]))
    if card["untested_flags"]:
        takes = {flag: f"{flag} {given}" for flag, given, _, _ in FLAGS.values()}
        lines += wrap("the flags that would test what was not tested: "
                      + ", ".join(takes[flag] for flag in card["untested_flags"]))
    lines.append(f"exit status {card['exit_status']}: {EXIT_STATUSES[card['exit_status']]}")
    return "\n".join(lines) + "\n"


def ended_text(used: dict) -> str:
    """What the card had to end of the server's processes, in words ("" if nothing)."""
    ended = []
    if used.get("outlived"):
        ended.append(f"{used['outlived']} {'process' if used['outlived'] == 1 else 'processes'} the server left "
                     "running after it exited")
    if used.get("ignored_sigterm"):
        ended.append("its processes with SIGKILL, SIGTERM not having ended them")
    return "the card ended " + " and ".join(ended) if ended else ""


def row_lines(card: dict, row: dict) -> list:
    """One row of the card, as the text card prints it: its mark, id and claim, its passage; what happened or why it
    was not judged, and the lines that show it; where the lab and the spec differ, the other's verdict."""
    lines = wrap(f"{mark(row['outcome'])} {row['id']}: {row['claim']}", "  ") + wrap(row["passage"], INDENT)
    if row["outcome"] == "fail" and row["quote"]:
        lines += wrap(row["quote"], INDENT)
    if row["text"]:
        lines += wrap(row_text(row), INDENT)
    lines += exchange_lines(row["exchange"])
    other = "spec" if card["standard"] == "course" else "course"
    side = row["differs"] and row["differs"][other]
    if side and (side["outcome"] != row["outcome"] or side["text"]):  # the other's verdict, where it says more
        lines += wrap(f"the {other}: {side['expects']} ({side['passage']})", INDENT)
        told = side["text"] and row["outcome"] == "pass"  # what the other found, where the row says nothing of it
        lines += wrap(f"by the {other}: {mark(side['outcome'])}" + (
            (f" {side['text']}" if side["outcome"] == "fail" else f" (information: {side['text']})")
            if told else ""), INDENT)
    return lines


def wrap(words: str, indent: str = "") -> list:
    """A paragraph of the card as lines of WIDTH columns at most, the lines after the first indented further."""
    import textwrap  # only when a card is printed
    return textwrap.wrap(words, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False) or [indent]


# ---------------------------------------------------------------------------------------------------
# ---- 6. The board ----
# With --board, every rule's processes are sessions on the wire board's page (board.py), drawn as they run,
# one at a time; when the card is done, it appears beside the diagram, each row linked to the messages that
# decided it.
# ---------------------------------------------------------------------------------------------------

def board_view(card: dict, judged: Card, recording) -> dict:
    """The card as the page draws it: each row with the numbers of the messages that decided it."""
    recording.catch_up()
    with recording.lock:
        events = [e["n"] for e in recording.board.events if e["kind"] not in ("timeout", "end")]
    rows = []
    for row, kept in zip(card["rules"], judged.rows):
        numbers = [events[at] for at in kept["at"] if at < len(events)]
        opened = events[kept["session_at"]] if kept["session_at"] is not None else None
        rows.append({key: row[key] for key in ("id", "level", "claim", "passage", "outcome")}
                    | {"text": row_text(row) if row["text"] else "", "mark": mark(row["outcome"]), "events": numbers,
                       "session": opened, "differs": row["differs"] and {
                           side: f"{row['differs'][side]['expects']}: {mark(row['differs'][side]['outcome'])}"
                           for side in ("course", "spec")}})
    eras = (f"no session opened: {card['diagnosis']['text']}" if card["diagnosis"] else
            f"the server serves {card['eras_text']}")
    return {"rules": rows, "summary": summary_lines(card), "eras": eras, "exit_status": card["exit_status"]}


# ---------------------------------------------------------------------------------------------------
# ---- 7. A class ----
# With --class DIR, each folder of DIR is a submission, and {submission} in the server's command stands for its
# path. Each is one card, its servers started from a scratch working directory with a scrubbed environment,
# --parallel cards side by side (each card's rules --jobs at a time still): a card whose server goes over a bound
# stops alone. What each earns, and the formats graders read, are grading.py's.
# ---------------------------------------------------------------------------------------------------

SUBMISSION = "{submission}"  # in the server's command, a submission's path
CLASS_JOBS = 2  # a class card's rules at a time: the class's parallelism is its cards, twice the machine's cores (a
# card mostly waits for its servers, and two cards a core keep the cores busy)
KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ")  # what a submission's servers see of the environment


def submissions(folder: str) -> list:
    """(name, absolute path) of each submission: each folder in folder, by name; hidden ones are left out."""
    return [(entry.name, os.path.abspath(entry.path)) for entry in sorted(os.scandir(folder), key=lambda e: e.name)
            if entry.is_dir() and not entry.name.startswith(".")]


def scrubbed(scratch: str) -> dict:
    """The environment of a submission's servers: the path, the locale, the time zone; home and temp its scratch
    folder. Nothing else of the grader's (no token, no key) reaches a student's code."""
    kept = {name: os.environ[name] for name in KEPT_VARIABLES if name in os.environ}
    return kept | {"HOME": scratch, "TMPDIR": scratch}


def card_for(asked: dict, command: list, recording=None, **place) -> "Card":
    """A card for a server command, with a command line's flags (options()); place: its cwd, env, and whether its
    flags are an assignment's."""
    return Card(command, asked["flags"], asked["timeout"], asked["standard"], recording,
                sys.stderr if asked["trace"] else None, asked["not_offered"], asked["rule_seconds"],
                asked["card_seconds"], asked["bounds"], optional=asked["optional"], **place)


def graded(card: dict, name: str, path: str, asked: dict) -> dict:
    """One judged card with what the formats read: its score, each row's lines as the text card prints them, the
    text card, its summary."""
    summary = summary_lines(card) + ([card["stopped_by"]["text"]] if card["stopped_by"] else [])
    return {"name": name, "path": path, "card": card, "score": grading.score(card, asked["points"], asked["optional"]),
            "lines": {row["id"]: row_lines(card, row) for row in card["rules"]}, "text": text(card),
            "summary": "\n".join(summary + [f"exit status {card['exit_status']}: "
                                             f"{EXIT_STATUSES[card['exit_status']]}"])}


def judge_class(asked: dict) -> tuple:
    """Every submission of the class graded, --parallel at a time, each in a scratch folder of its own: (the graded, in
    name order; the grader's own figures). Progress goes to stderr, a line a submission as it is done."""
    began = time.monotonic()
    found = submissions(asked["class"])
    cards, lock = set(), threading.Lock()

    def grade(name: str, path: str) -> dict:
        scratch = tempfile.mkdtemp(prefix="report-card-")
        try:
            judged = card_for(asked, [word.replace(SUBMISSION, path) for word in asked["command"]], cwd=scratch,
                              env=scrubbed(scratch), assigned=True)
            with lock:
                cards.add(judged)
            card = judged.run(asked["levels"], asked["only"], asked["jobs"])
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        one = graded(card, name, path, asked)
        with lock:
            cards.discard(judged)
            print(f"report_card: {name}: {grading.number(one['score']['points'])}/{grading.number(one['score']['max'])}"
                  f" points, exit status {card['exit_status']}" + (f", stopped: {card['stopped_by']['text']}"
                                                                    if card["stopped_by"] else ""),
                  file=sys.stderr, flush=True)
        return one

    pool = concurrent.futures.ThreadPoolExecutor(asked["parallel"])
    try:
        done = list(pool.map(lambda found_one: grade(*found_one), found))
    except BaseException:
        with lock:
            for judged in cards:
                judged.stop()  # a Ctrl-C: every card's processes end, and no rule starts another
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done, {"submissions": len(done), "wall_seconds": round(time.monotonic() - began, 1),
                  "peak_memory_mb": peak_memory(), "parallel": asked["parallel"], "jobs": asked["jobs"]}


def peak_memory() -> float | None:
    """This process's own peak resident memory in MB (None where the system does not say)."""
    if resource is None:
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux, bytes on macOS
    return round(peak / (MB if sys.platform == "darwin" else 1024), 1)


def class_text(done: list, grader: dict) -> str:
    """The class as text: each submission's card under its name and points, then a line a submission."""
    lines = []
    for one in done:
        lines += [f"== {one['name']}: {grading.number(one['score']['points'])}/{grading.number(one['score']['max'])} "
                  "points ==", one["text"]]
    width = max([len(one["name"]) for one in done] + [10])
    lines.append(f"the class: {grader['submissions']} submissions in {grader['wall_seconds']:g} s, "
                 f"{grader['parallel']} side by side; the grader's peak memory {grader['peak_memory_mb']} MB")
    for one in done:
        stopped = one["card"]["stopped_by"]
        lines.append(f"  {one['name']:{width}}  {grading.number(one['score']['points']):>5}/"
                     f"{grading.number(one['score']['max'])}  exit status {one['card']['exit_status']}"
                     + (f"  stopped: {BOUNDS[stopped['bound']][1] if stopped['bound'] in BOUNDS else 'wall time'} "
                        f"({stopped['used']:g} of {stopped['limit']:g})" if stopped else ""))
    return "\n".join(lines) + "\n"


def write_outputs(asked: dict, done: list):
    """Write the files the command line asks for: the gradebook, JUnit XML, Gradescope's results.json, and with --cards
    each submission's card as text and as JSON."""
    formats = {"gradebook": grading.gradebook, "junit": grading.junit,
               "gradescope": lambda done: json.dumps(grading.gradescope(done[0]), indent=2, ensure_ascii=False) + "\n"}
    for name, written in formats.items():
        if asked[name]:
            write_file(asked[name], written(done))
    if asked["cards"]:
        os.makedirs(asked["cards"], exist_ok=True)
        for one in done:
            write_file(os.path.join(asked["cards"], one["name"] + ".txt"), one["text"])
            write_file(os.path.join(asked["cards"], one["name"] + ".json"),
                       json.dumps(one["card"], indent=2, ensure_ascii=False) + "\n")


def write_file(path: str, text: str):
    """Write a file whole, in UTF-8, its lines as they are."""
    with open(path, "w", encoding="utf-8", newline="") as file:
        file.write(text)


# ---------------------------------------------------------------------------------------------------
# ---- 8. The command line ----
# argparse's: --help is the usage, a mistake is one line and exit status 2, and the server's command comes
# after "--" (or, where a host ate the "--", after the last flag).
# ---------------------------------------------------------------------------------------------------

EPILOG = f"""outcomes:
  ✓ holds, ✗ fails, – not applicable (the server does not offer it: its capabilities say so, or --not-offered),
  ? not tested (the row names the flag that would test it), ! could not run (no session opened, or a deadline)

exit status, the first that applies:
{chr(10).join(f"  {status}  {words}" for status, words in EXIT_STATUSES.items())}

features --not-offered may name: {", ".join(FEATURES)}

example:
  python report_card.py --not-allowed delete_db --raises 'count_lessons {{"course": "postgres"}}' \\
                        --change-tools enable_subtract -- python server_demo.py"""


class Parser(argparse.ArgumentParser):
    """argparse's parser, whose mistakes are raised as UsageError, to be said in one line (--help is the usage)."""

    def error(self, message: str):
        raise UsageError(message)


def parse_call(text: str) -> tuple:
    """'TOOL {"x": 1}' (or TOOL alone) as (the tool's name, its arguments); a method and its params alike."""
    name, _, rest = text.strip().partition(" ")
    try:
        arguments = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not a name, then one JSON object ({exc})")
    if not name or not isinstance(arguments, dict):
        raise argparse.ArgumentTypeError(f"{text!r} is not a name, then one JSON object")
    return name, arguments


def seconds(text: str) -> float:
    """A number of seconds, more than 0."""
    value = float(text)
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"takes seconds, more than 0, not {text!r}")
    return value


def amount(text: str) -> float:
    """A number, more than 0."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"takes a number, more than 0, not {text!r}")
    return value


def count(text: str) -> int:
    """A whole number, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"takes a whole number, 1 or more, not {text!r}")
    return int(text)


def port(text: str) -> int:
    """A TCP port, or 0 for any free one."""
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"takes a port, 0 to 65535, not {text!r}")
    return int(text)


def level(text: str) -> str:
    """A course's level: 000, 002 or 004."""
    if text not in ("000", "002", "004"):
        raise argparse.ArgumentTypeError(f"is 000, 002 or 004, not {text!r}")
    return text


def rule_ids(text: str) -> set:
    """Rule ids, separated by commas: each a rule of the card."""
    ids = set(filter(None, text.split(",")))
    unknown = ids - {r["id"] for r in RULES}
    if unknown:
        raise argparse.ArgumentTypeError(f"no rule {', '.join(sorted(unknown))}; python report_card.py --rules lists "
                                         "them")
    return ids


def features(text: str) -> set:
    """Features a server may lack, separated by commas."""
    named = set(filter(None, text.split(",")))
    if named - set(FEATURES):
        raise argparse.ArgumentTypeError(f"no feature {', '.join(sorted(named - set(FEATURES)))}; one of "
                                         f"{', '.join(FEATURES)}")
    return named


def cores() -> int:
    """How many cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def parser() -> argparse.ArgumentParser:
    """The command line's flags."""
    parse = Parser(prog="python report_card.py", allow_abbrev=False, epilog=EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter,
                   usage="python report_card.py [flags] -- SERVER COMMAND [ARGS ...]\n"
                         "       python report_card.py --class DIR [flags] -- SERVER COMMAND WITH {submission}\n"
                         "       python report_card.py --rules",
                   description="The report card: the course's rules checked against an MCP server over stdio,\n"
                               "each with its passage and the messages that show it.")
    author = parse.add_argument_group("what only the server's author knows (a rule without its flag is not tested)")
    for name, (flag, takes, tells, _) in FLAGS.items():
        author.add_argument(flag, dest=name, type=parse_call, metavar=takes.strip("'"), help=tells)
    author.add_argument("--not-offered", type=features, default=set(), metavar="FEATURE,...",
                        help="features the server does not have: their rules are not applicable")
    judging = parse.add_argument_group("what is judged")
    judging.add_argument("--level", type=level, default="004", metavar="000|002|004",
                         help="the rules of course 000, up to 002's, or up to 004's (the default); stdio's always")
    judging.add_argument("--only", type=rule_ids, default=set(), metavar="ID,...", help="only these rules")
    judging.add_argument("--spec", action="store_true", help="judge by the spec where the lab and the spec differ")
    judging.add_argument("--rules", action="store_true", help="list every rule: its id, level, claim and passage")
    bounds = parse.add_argument_group("time and processes")
    bounds.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"seconds a response may take ({DEFAULT_TIMEOUT:g})")
    bounds.add_argument("--rule-deadline", type=seconds, metavar="S",
                        help=f"seconds a rule may take ({RULE_DEADLINE} times --timeout)")
    bounds.add_argument("--deadline", type=seconds, metavar="S",
                        help=f"seconds the whole card may take, its wall time bound ({CARD_DEADLINE} times --timeout)")
    for bound, (flag, _, unit, default, counts) in BOUNDS.items():
        bounds.add_argument(flag, dest=bound, type=amount if unit else count,
                            metavar=unit.upper() or "N", help=f"the server's processes, all of them together: "
                                                               f"{counts} ({default:g}{' ' + unit if unit else ''})")
    bounds.add_argument("--jobs", type=count, metavar="N",
                        help=f"rules judged at a time, each on its own processes (this machine's cores: {cores()}; "
                             "1 with --board)")
    shown_as = parse.add_argument_group("how the card is shown")
    shown_as.add_argument("--json", action="store_true", help="the card as JSON")
    shown_as.add_argument("--board", action="store_true",
                          help="every rule's session on the wire board's page as it runs, one at a time; the card "
                               "beside the diagram at the end; the page stays until Enter")
    shown_as.add_argument("--port", type=port, default=0, metavar="N", help="the board's port (0: any free one)")
    shown_as.add_argument("--trace", action="store_true", help="every line on stderr as it crosses, with its rule")
    grades = parse.add_argument_group("an assignment, a class, and the formats graders read (docs/grading.md)")
    grades.add_argument("--config", metavar="FILE", help="the assignment's file (JSON): its level, flags, points per "
                                                         "rule, optional features, bounds")
    grades.add_argument("--class", dest="class_", metavar="DIR",
                        help="grade each folder of DIR, a submission: {submission} in the server's command is its path")
    grades.add_argument("--parallel", type=count, metavar="N",
                        help=f"submissions graded side by side, with --class (twice this machine's cores: "
                             f"{2 * cores()}; each card's rules then {CLASS_JOBS} at a time, unless --jobs)")
    grades.add_argument("--gradebook", metavar="FILE.csv", help="a row a submission, a column a rule: the points")
    grades.add_argument("--junit", metavar="FILE", help="JUnit XML: a testsuite a submission, a testcase a rule")
    grades.add_argument("--gradescope", metavar="FILE", help="Gradescope's results.json, for one submission")
    grades.add_argument("--cards", metavar="DIR",
                        help="with --class, each submission's card in DIR: NAME.txt, NAME.json")
    parse.add_argument("command", nargs=argparse.REMAINDER, help="the server's command and its arguments, after --")
    return parse


CONFIG_KEYS = ("level", "flags", "points", "optional", "bounds")  # the assignment's file (docs/grading.md)


def assignment(path: str) -> dict:
    """An assignment's file (--config), checked: {"words": its level, flags and bounds as command-line words,
    "points", "optional"}; a mistake raises UsageError naming the file."""
    try:
        with open(path, encoding="utf-8") as file:
            given = json.load(file)
    except OSError as exc:
        raise UsageError(f"--config {path}: {exc.strerror or exc}")
    except ValueError as exc:
        raise UsageError(f"--config {path} is not JSON: {exc}")
    if not isinstance(given, dict) or set(given) - set(CONFIG_KEYS):
        raise UsageError(f"--config {path}: an object whose keys are among {', '.join(CONFIG_KEYS)}"
                         + (f", not {', '.join(sorted(set(given) - set(CONFIG_KEYS)))}" if isinstance(given, dict)
                            else ""))
    words = ["--level", str(given["level"])] if "level" in given else []
    flags = given.get("flags", [])
    if not (isinstance(flags, list) and all(isinstance(word, str) for word in flags)) \
            or {"--config", "--class", "--"} & set(flags):
        raise UsageError(f"--config {path}: flags is a list of the card's flags, as words (not --config, --class, --)")
    words += flags
    bounds = given.get("bounds", {})
    flag_of = {bound: flag for bound, (flag, _, _, _, _) in BOUNDS.items()} | {"wall_seconds": "--deadline"}
    if not isinstance(bounds, dict) or set(bounds) - set(flag_of):
        raise UsageError(f"--config {path}: bounds is an object whose keys are among {', '.join(flag_of)}")
    for bound, value in bounds.items():
        words += [flag_of[bound], str(value)]
    try:
        parser().parse_args(words)  # the file's words alone: a mistake among them is the file's
    except UsageError as exc:
        raise UsageError(f"--config {path}: {exc}")
    points, optional = given.get("points", {}), given.get("optional", [])
    ids = {r["id"] for r in RULES}
    numbers = isinstance(points, dict) and all(isinstance(value, (int, float)) and not isinstance(value, bool)
                                               and value >= 0 for value in points.values())
    if not numbers or set(points) - ids:
        raise UsageError(f"--config {path}: points is an object of rule ids and numbers, 0 or more"
                         + (f" (no rule {', '.join(sorted(set(points) - ids))})" if isinstance(points, dict)
                            and set(points) - ids else ""))
    if not (isinstance(optional, list) and all(isinstance(name, str) for name in optional)) \
            or set(optional) - ids - set(grading.FEATURES):
        raise UsageError(f"--config {path}: optional is a list of features ({', '.join(grading.FEATURES)}) or rule "
                         "ids")
    return {"words": words, "points": points, "optional": set(optional)}


def config_path(words: list) -> str | None:
    """The file --config names among a command line's words, if any."""
    pre = Parser(add_help=False, allow_abbrev=False)
    pre.add_argument("--config")
    return pre.parse_known_args(words)[0].config


def options(argv: list) -> dict:
    """What a command line asks for: the server's command, the flags, the switches; a mistake raises UsageError."""
    words, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, None)
    path = config_path(words)
    given = assignment(path) if path else {"words": [], "points": {}, "optional": set()}
    asked = parser().parse_args(given["words"] + words)  # the command line's flags after the file's: they win
    if command is None:
        command = asked.command  # no "--": the command starts at the first word that is no flag
    elif asked.command:
        raise UsageError(f"{asked.command[0]!r} comes before --: the server's command goes after it")
    if not command and not asked.rules:
        raise UsageError("no server command: put it after --")
    if asked.board and asked.jobs not in (None, 1):
        raise UsageError(f"--board draws one session at a time, so it judges one rule at a time: not --jobs "
                         f"{asked.jobs}")
    named = any(SUBMISSION in word for word in command)
    if asked.class_ and not (os.path.isdir(asked.class_) and named):
        raise UsageError(f"--class {asked.class_}: a folder of submissions, and {SUBMISSION} in the server's command "
                         f"for the path of each" if named else f"--class needs {SUBMISSION} in the server's command, "
                                                               "where each submission's path goes")
    if not asked.class_ and (named or asked.parallel or asked.cards):
        raise UsageError(f"{SUBMISSION if named else '--parallel' if asked.parallel else '--cards'} is for a class: "
                         "with --class DIR")
    if asked.class_ and (asked.board or asked.gradescope):
        raise UsageError(f"--class grades many submissions: not {'--board' if asked.board else '--gradescope'}, "
                         "which show one")
    flags = {name: getattr(asked, name) for name in FLAGS}
    if flags["not_allowed"]:
        flags["not_allowed"] = (flags["not_allowed"][0], {})  # a tool's name, called with no arguments
    both = [f"--not-offered {feature} and {FLAGS[FEATURES[feature]][0]}" for feature in sorted(asked.not_offered)
            if flags[FEATURES[feature]]]
    if both:
        raise UsageError(f"{'; '.join(both)}: a feature the server lacks cannot be tested")
    return {"command": command, "flags": flags, "not_offered": asked.not_offered, "timeout": asked.timeout,
            "rule_seconds": asked.rule_deadline, "card_seconds": asked.deadline, "port": asked.port,
            "jobs": 1 if asked.board else asked.jobs or (CLASS_JOBS if asked.class_ else cores()),
            "standard": "spec" if asked.spec else "course",
            "only": asked.only, "json": asked.json, "board": asked.board, "trace": asked.trace, "rules": asked.rules,
            "bounds": {bound: getattr(asked, bound) for bound in BOUNDS if getattr(asked, bound) is not None},
            "config": path, "points": given["points"], "optional": given["optional"] | asked.not_offered,
            "class": asked.class_, "parallel": asked.parallel or 2 * cores(), "gradebook": asked.gradebook,
            "junit": asked.junit, "gradescope": asked.gradescope, "cards": asked.cards,
            "levels": ("000", "002", "004")[:("000", "002", "004").index(asked.level) + 1]}


def judge(argv, recording=None) -> tuple:
    """(the card as JSON, the Card that judged it) for a command line's flags and server (or what options() made of
    them), printing nothing; a flag naming a tool the server does not list raises UsageError."""
    asked = argv if isinstance(argv, dict) else options(argv)
    judged = card_for(asked, asked["command"], recording, assigned=asked["config"] is not None)
    return judged.run(asked["levels"], asked["only"], asked["jobs"]), judged


def main(argv: list | None = None) -> int:
    """The command line (the module's docstring): its exit status (EXIT_STATUSES)."""
    try:
        asked = options(sys.argv[1:] if argv is None else argv)
    except UsageError as exc:
        print(f"report_card: {exc} (python report_card.py --help shows the usage)", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help, printed: argparse ends there
        return exc.code or 0
    if asked["rules"]:
        for r in RULES:
            print(f"{r['id']:26} {LEVELS[r['level']]:10} {r['claim']}\n{'':37} {r['passage']}")
        return 0
    WATCHER.subreaper = become_subreaper()  # this process is the card's own: what its servers orphan comes back to it
    if asked["class"]:
        return main_class(asked)
    recording = httpd = None
    if asked["board"]:
        recording = board.Recording(asked["timeout"], {"command": "report card: " + shlex.join(asked["command"]),
                                                       "fault": None, "fault_text": None})
        httpd = board.serve(recording, asked["port"])
        print(f"report_card: the board is at {board.url_of(httpd)}", file=sys.stderr, flush=True)
    try:
        card, judged = judge(asked, recording)
    except UsageError as exc:
        print(f"report_card: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    sys.stdout.write(json.dumps(card, indent=2, ensure_ascii=False) + "\n" if asked["json"] else text(card))
    sys.stdout.flush()
    write_outputs(asked, [graded(card, shlex.join(asked["command"]), os.getcwd(), asked)])
    if recording:
        recording.card = board_view(card, judged, recording)
        recording.end()
        print(f"report_card: the card is on the board; the page stays at {board.url_of(httpd)} until you press "
              "Enter", file=sys.stderr, flush=True)
        try:
            sys.stdin.readline()
        except KeyboardInterrupt:
            pass
        board.let_viewers_finish(recording)
        httpd.server_close()
    return card["exit_status"]


def main_class(asked: dict) -> int:
    """--class: every submission graded, the class printed (text, or JSON with --json), the files written; 0 once
    every submission has its card (the verdicts are in them), 130 on Ctrl-C."""
    try:
        done, grader = judge_class(asked)
    except KeyboardInterrupt:
        return 130
    if asked["json"]:
        settings = {"class": os.path.abspath(asked["class"]), "command": asked["command"],
                    "levels": list(asked["levels"]), "config": asked["config"],
                    "points": {r["id"]: asked["points"].get(r["id"], 1) for r in RULES},
                    "optional": sorted(asked["optional"])}
        sys.stdout.write(json.dumps(grading.class_json(done, settings, grader), indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(class_text(done, grader))
    sys.stdout.flush()
    write_outputs(asked, done)
    return 0


if __name__ == "__main__":
    sys.exit(main())
