"""The report card: the course's rules checked against any MCP server over stdio, each with its passage and the
bytes that show it.

    python report_card.py [flags] -- <server command> [args...]
    python report_card.py --not-allowed delete_db --raises 'count_lessons {"course": "postgres"}' \\
                          --change-tools enable_subtract -- python server_demo.py
    python report_card.py --help          # every flag, the five outcomes, the exit statuses

Put it where a host would start the server, as you would the tap or the board. It starts the server afresh for
each rule, drives it through a short scripted session, and prints one row a rule with its outcome: ✓ it holds;
✗ it does not (with the messages that show it, → sent to the server, ← received); – not applicable (the server
does not offer what the rule is about, as its capabilities show or --not-offered says); ? not tested (the rule
needs what only the server's author knows, and the row names the flag that would tell it); ! could not run (no
session opened, or the card's deadline passed). The rules come in the course's order: course 000's, course 002's,
course 004's (the 2026-07-28 revision), then stdio's own. Where the lab and the spec choose differently, both
verdicts are shown, and --spec judges by the spec.

The exit status is the first of these that applies: 2 a mistake on the command line (or a flag naming a tool the
server does not list); 4 the server could not be run, no session opened, or a rule could not run; 1 a rule fails;
3 none fails, but some were not tested; 0 every rule of the level was tested and holds (or does not apply).

  1. The wire       Wire: one server process; lines in and out, replies matched by id, every read with a deadline
  2. A rule's run   Run: fresh processes on demand, requests in the rule's era; Broken, and the three unjudged
  3. The rules      one function a rule, registered with its id, level, claim and passage
  4. The card       the first processes side by side (eras, tools, stdin's end), then every rule, rules side by side
  5. The text       the card as a student reads it, written from the JSON
  6. The board      every rule's session on the wire board's page, the card beside the sequence diagram
  7. The command line

The words are mcp_min's (its module docstring): a message is a request, a notification or a response; a
response holds a result or an error. The codes are the course's, from board.py's table: never the lab's constants,
which a lesson's exercise changes.
"""

import argparse
import concurrent.futures
import functools
import json
import math
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

import board  # the wire board: read_line (the lab's parse), the course's codes, the 2026-07-28 _meta keys, the page
from board import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MAX_MESSAGE_BYTES, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from mcp_min import error_response, notification, request

COURSE = board.CODES  # the course's code for each case, written from its text (board.py, section 1)
SCHEMA_VERSION = 1  # the JSON card's: a new version when a field changes its meaning or goes away
DEFAULT_TIMEOUT = 10.0  # seconds a response may take (the first includes the server's start), then the rule fails
RULE_DEADLINE = 3  # a rule's deadline, unless --rule-deadline: this many --timeout (a rule awaits several responses)
CARD_DEADLINE = 30  # the whole card's, unless --deadline: this many --timeout
KILL_GRACE = 1.0  # seconds a server has to end after SIGTERM, before its process group is killed
HANDSHAKE_VERSION = "2025-06-18"  # the version course 000's worked trace offers
STATELESS_VERSION = "2026-07-28"  # the revision course 004 describes
FUTURE_VERSION = "2099-12-31"  # a version no server speaks: version negotiation must not agree to it
CLIENT = {"name": "report-card", "version": "0.2.0"}
HELLO = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT}
META = {PROTOCOL_VERSION_KEY: STATELESS_VERSION, CLIENT_CAPABILITIES_KEY: {}, CLIENT_INFO_KEY: CLIENT}
NO_SUCH_METHOD = "report_card/no_such_method"
NO_SUCH_TOOL = "report_card_no_such_tool"
NOT_JSON = "this line is not JSON"
WIDTH = 118  # the card's columns: its prose is wrapped, each line of an exchange cut, to fit
INDENT = " " * 6  # what a row says below its first line
SHOWN_WIDTH = WIDTH - len(INDENT) - 2  # a line of an exchange, after its arrow
MAX_LINES = 10_000  # lines a server may write in one rule's session; past them the card stops reading it
MAX_PAGES = 20  # pages of tools/list the card follows to check the flags' tools
TRACEBACK = re.compile(r'Traceback \(most recent call last\)|File "[^"]*", line \d+')
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
# One server process, in a process group of its own. A thread only moves the lines of its stdout into a
# queue; everything else (parsing, matching a response to its request by id, answering the server's own
# requests) happens on the rule's thread, while it waits, and every wait ends at its time limit or at the
# deadline, whichever comes first.
# ---------------------------------------------------------------------------------------------------

class Wire:
    """One server process and the lines that crossed: send messages, wait for the response to a request by its id.

        wire = Wire(["python", "server_demo.py"], timeout=10, record=print_line)
        sent = wire.send(request(1, "ping"))
        wire.reply(sent)      # the entry of the response whose id is 1, or None (no response in time, or the end)
    Each line is an entry: {"dir": "→" or "←", "line": text, "json": bool, "message": the value}; record(entry)
    keeps it (and gives it its place on the card's tape, "at"). No wait goes past deadline (time.monotonic()'s).
    """

    def __init__(self, command: list, timeout: float, record, deadline: float = math.inf, deadline_text: str = ""):
        self.timeout, self.record = timeout, record
        self.deadline, self.deadline_text = deadline, deadline_text  # when every wait ends; its words
        self.stderr = tempfile.TemporaryFile()
        try:
            self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                            start_new_session=os.name == "posix")  # its own group, ended as one
        except OSError:
            self.stderr.close()
            raise
        self.lines = queue.Queue()
        self.received, self.sent = [], []
        self.by_id = {}  # id key -> the responses with that id, in order
        self.asked = set()  # id keys of the requests the card sent
        self.said = set()  # each message the card sent, as a key: the same message coming back is an echo, no answer
        self.last_id = 0
        self.ended = False  # the server's stdout reached its end (or the card stopped reading it)
        self.flooded = False  # the server wrote more lines than the card reads
        self.stuck = False  # a response did not come in time: later waits on this server do not wait again
        self.cut = False  # a wait was ended by the deadline, before its own time limit
        self.stdin_closed = False
        self.hello = {}  # the initialize result, once a session is open in the handshake era
        self.waited = False  # the last wait was cut short, the server being stuck already
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        """The reader thread: each line of the server's stdout into the queue, then None at its end."""
        stream = self.process.stdout
        try:
            while line := stream.readline(MAX_MESSAGE_BYTES + 1):
                if len(line) > MAX_MESSAGE_BYTES and not line.endswith(b"\n"):
                    while (rest := stream.readline(MAX_MESSAGE_BYTES)) and not rest.endswith(b"\n"):
                        pass  # the rest of a line longer than any message: not kept
                    line = b"(a line longer than %d bytes)" % MAX_MESSAGE_BYTES
                self.lines.put(line.removesuffix(b"\n"))
        except (OSError, ValueError):
            pass  # the process was ended
        stream.close()  # here, not in close(): a child that holds the pipe open must not hold the card too
        self.lines.put(None)

    # -- lines out --

    def send(self, message) -> dict:
        """Write one message as a line of JSON; its entry."""
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" in message:
            self.asked.add(id_key(message["id"]))
        return self.send_line(json.dumps(message))

    def send_line(self, text: str) -> dict:
        """Write one line as it is; its entry."""
        _, is_json, value = board.read_line(text)
        if is_json:
            self.said.add(json.dumps(value, sort_keys=True))
        entry = self.record({"dir": "→", "line": text, "json": is_json, "message": value if is_json else None})
        self.sent.append(entry)
        try:
            self.process.stdin.write(text.encode("utf-8", "surrogatepass") + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):
            self.stdin_closed = True  # the server is gone; what it did before is on the wire all the same
        return entry

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
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0))
        except queue.Empty:
            return False
        if line is None or len(self.received) >= MAX_LINES:
            self.ended, self.flooded = True, line is not None
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
            # The server asks the card something: it serves nothing, and says so rather than keep it waiting.
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
        return [e for e in self.received[after:] if is_response(e["message"])]

    def unmatched(self, after: int = 0) -> list:
        """The responses since the mark whose id is the id of no request the card sent."""
        return [e for e in self.responses(after) if id_key(e["message"]["id"]) not in self.asked]

    def notifications(self, after: int = 0) -> list:
        """The messages with a method (notifications, and requests from the server) since the mark."""
        return [e for e in self.received[after:] if isinstance(e["message"], dict)
                and isinstance(e["message"].get("method"), str)]

    # -- the end --

    def silence(self) -> str:
        """Why a response did not come: the time limit, the deadline, or the end of the server (its exit status, its
        last words)."""
        if self.cut and not self.ended:
            return f"{self.deadline_text} passed first"
        if not self.ended:
            return (f"the server has answered nothing since a response failed to come within {self.timeout:g} s"
                    if self.waited else f"none came within {self.timeout:g} s")
        if self.flooded:
            return f"the server wrote more than {MAX_LINES} lines, and the card stopped reading"
        status = self.wait_exit(self.timeout)
        said = "the server closed its stdout" if status is None else f"the server exited (status {status})"
        last = self.stderr_tail()
        return said + (f"; its stderr ends: {trim(last, width=100)}" if last else "")

    def why(self) -> str:
        """Why a response did not come, in a word: "deadline", "flooded", "ended" or "timeout"."""
        if self.cut and not self.ended:
            return "deadline"
        if self.ended:
            return "flooded" if self.flooded else "ended"
        return "timeout"

    def stderr_tail(self) -> str:
        """The last line the server wrote on its stderr."""
        self.stderr.seek(0)
        lines = [line for line in self.stderr.read()[-4000:].decode("utf-8", "replace").splitlines() if line.strip()]
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
        """End the server: its input first, then SIGTERM, then its whole process group, whatever became of its first
        process (a server may have started children, and they may outlive it)."""
        self.close_stdin()
        if self.process.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=KILL_GRACE)
            except subprocess.TimeoutExpired:
                pass
        # Linux gives no new process the group's id while a process of the group lives: this reaches only its own.
        self.signal(signal.SIGKILL)
        self.process.wait()
        self.stderr.close()

    def signal(self, number: int):
        """Send a signal to the server's process group (the server alone where there are no groups)."""
        try:
            if os.name == "posix":
                os.killpg(self.process.pid, number)
            else:
                self.process.kill()
        except OSError:
            pass  # the group has ended already


def is_response(message) -> bool:
    """A response: an id, and no method (course 000: told apart by keys, never by a type tag)."""
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
            raise CouldNotRun("the card was stopped", {"code": "stopped"})
        title = f"{self.rule['id']}: {self.rule['claim']}"
        at = self.card.begin(title if not self.wires else f"{title} ({len(self.wires) + 1})", self.rule["id"])
        self.first_at = at if self.first_at is None else self.first_at
        try:
            wire = Wire(self.card.command, self.card.timeout,
                        lambda entry: self.card.record(entry, self.rule["id"], at), self.deadline, self.deadline_text)
        except OSError as exc:  # the command itself: not found, not executable
            raise CouldNotRun(f"the command cannot be started: {exc.strerror or exc}", {"code": "cannot_start"})
        self.wires.append(wire)
        self.card.track(wire, True)
        return wire

    def open(self) -> "Wire":
        """A fresh process with a session open in this rule's era: initialize and initialized, or nothing (2026)."""
        wire = self.start()
        if self.era == "handshake":
            sent, reply = self.call(wire, "initialize", HELLO)
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
        if value is None:
            flag, takes, tells, feature = FLAGS[name]
            if feature in self.card.not_offered:
                raise NotApplicable(f"--not-offered {feature}: the server has none", {"code": "not_offered",
                                                                                       "feature": feature})
            raise NotTested(f"{flag} {takes} would test it ({tells})", {"code": "needs_flag", "flag": flag})
        return value

    def version(self, wire: Wire) -> str:
        """The version this session speaks: the one initialize agreed, or 2026-07-28."""
        return str(wire.hello.get("protocolVersion")) if self.era == "handshake" else STATELESS_VERSION

    def cut_by_card(self) -> bool:
        """Whether the card's deadline ended a wait of this run (the rule was not judged to its end)."""
        return self.by_card and any(wire.cut for wire in self.wires)

    def close(self):
        """End every process this run started."""
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
# In the card's order. Each names the passage it comes from: the course where it says so, else the spec
# revision and section. A rule where the lab and the spec choose differently (README, "Where this lab and
# the spec differ") returns what each finds wrong; the card shows both and judges by the one chosen. The
# codes each expects are the course's table (COURSE), the spec's where the spec chooses otherwise.
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

SPEC_UNKNOWN_TOOL = -32602  # spec 2025-06-18, server/tools, "Error Handling": an unknown tool, in its example

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


def rule(id: str, level: str, claim: str, passage: str, quote: str, eras=("handshake", "stateless"),
         differs: dict | None = None, last: bool = False):
    """Register a rule's check under its id: the claim it tests, the passage and the words it comes from.

    differs, for a rule where the lab and the spec choose differently: what each expects, and the spec's passage.
    """
    def register(check):
        RULES.append({"id": id, "level": level, "claim": claim, "passage": passage, "quote": quote, "eras": eras,
                      "differs": differs, "last": last, "check": check})
        return check
    return register


SESSIONLESS = ("handshake", "stateless", None)  # the eras of a rule that runs even when no session opens

# ---- course 000: three message shapes ----

@rule("notification-no-response", "000", "a notification gets no response", SHAPES,
      "Notification — a request shape with no id key at all. Fire-and-forget: the receiver must not reply.")
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
      "malformed request (id must not be null in a request)")
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


@rule("response-shape", "000", "a response echoes its request's id and carries a result or an error, never both",
      SHAPES, "Response — echoes the id, and carries result XOR error, never both, never neither. error is "
      "{code, message, data?}.")
def response_shape(run: Run):
    wire = run.open()
    for method, id in ((run.sentinel, "report-card:7"), (NO_SUCH_METHOD, None)):  # a string id; an error response
        sent, reply = run.call(wire, method, id=id)
        problem = shape_problem(reply["message"])
        if problem:
            raise Broken(f"the response to {method}: {problem}", sent, reply)


# ---- course 000: the five codes, and where each is raised ----

def answer_to(run: Run, wire: Wire, sent: dict) -> tuple:
    """(the response to an odd message just sent, or None; the requests after it that bound the wait).

    An odd message may have no id to echo: the answer is then the first response since it to no request.
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
      "because there is no id to attach the error to (id is null).")
def parse_error(run: Run):
    wire = run.open()
    run.then(wire, 1)
    sent = wire.send_line(NOT_JSON)
    answer, after = answer_to(run, wire, sent)
    if answer is None:
        raise Broken("no response to it", sent, *after)
    if code_of(answer) != COURSE["parse error"] or answer["message"]["id"] is not None:
        raise Broken(f"it was answered {said(answer)} with id {id_key(answer['message']['id'])}, not "
                     f"{COURSE['parse error']} with id null", sent, answer)


@rule("invalid-request", "000", 'a message whose jsonrpc is not "2.0" is answered -32600', CODES,
      '-32600 invalid request — well-formed JSON but not a valid request object; the lab also uses it for ... '
      'a message whose jsonrpc field isn\'t "2.0"')
def invalid_request(run: Run):
    wire = run.open()
    run.then(wire, 1)
    wire.last_id += 1
    sent = wire.send({"jsonrpc": "1.0", "id": wire.last_id, "method": run.sentinel, **(
        {"params": run.params(None)} if run.era == "stateless" else {})})
    answer, after = answer_to(run, wire, sent)
    if answer is None:
        raise Broken("no response to it", sent, *after)
    if code_of(answer) != COURSE["wrong jsonrpc"]:
        raise Broken(f"it was answered {said(answer)}, not {COURSE['wrong jsonrpc']} (invalid request)", sent, answer)


@rule("method-not-found", "000", "an unknown method is answered -32601", CODES,
      "-32601 method not found — unknown method")
def method_not_found(run: Run):
    wire = run.open()
    sent, reply = run.call(wire, NO_SUCH_METHOD)
    if code_of(reply) != COURSE["method not found"]:
        raise Broken(f"{NO_SUCH_METHOD} was answered {said(reply)}, not {COURSE['method not found']}", sent, reply)


@rule("internal-error", "000", "a handler that fails is an error response (-32603), and the session lives on", CODES,
      "-32603 internal error — an unhandled exception inside a handler. Crucially the server converts the exception "
      "into this response instead of propagating it; a handler bug must not take down the session.")
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


@rule("no-traceback", "000", "no traceback crosses the wire, whatever goes wrong", CODES,
      "intended errors carry precise codes, unintended ones degrade to internal-error, and neither escapes as a "
      "Python traceback across the transport boundary.")
def no_traceback(run: Run):
    wire = run.open()
    probes = [("tools/call", {"name": ["not", "a", "name"], "arguments": "not an object"}), (NO_SUCH_METHOD, None),
              ("tools/call", {"name": NO_SUCH_TOOL, "arguments": {}})]
    if run.card.flags.get("raises"):
        name, arguments = run.card.flags["raises"]
        probes.append(("tools/call", {"name": name, "arguments": arguments}))
    if run.card.flags.get("handler_fails"):
        probes.append(run.card.flags["handler_fails"])
    for method, params in probes:
        if wire.reply(run.send(wire, method, params)) is None:
            break  # the server is gone or stuck: what it sent so far is judged
    else:
        wire.send_line(NOT_JSON)
        for _ in range(2):
            if wire.reply(run.send(wire, run.sentinel)) is None:
                break
    for entry in wire.received:
        texts = strings(entry["message"]) if entry["json"] else [entry["line"]]
        found = next((match for text in texts if (match := TRACEBACK.search(text))), None)
        if found:
            asked = next((e for e in reversed(wire.sent) if e["at"] < entry["at"]), None)
            raise Broken("a Python traceback on the wire", asked, {**entry, "focus": found.group(0)})


# ---- course 000: the handshake ----

GATE_SPEC = ('spec 2025-06-18, Lifecycle, "Initialization": the initialization phase MUST be the first interaction '
             "(no code is named); after the initialize response a client may send requests (it SHOULD NOT before)")


@rule("handshake-gate", "000", "nothing but initialize (and ping) is served before notifications/initialized",
      HANDSHAKE, "Every method except initialize itself is gated behind _initialized, and _initialized only flips "
      "true when the notifications/initialized notification arrives. ... a tools/list sent between step 1 and step "
      "3 returns -32600.", eras=("handshake",),
      differs={"course": "-32600 before initialize, and between its response and initialized",
               "spec": "an error before initialize; between its response and initialized, served",
               "claim": "nothing is served before initialize; after its response, requests are", "passage": GATE_SPEC})
def handshake_gate(run: Run):
    problems = {"course": [], "spec": []}
    wire = run.start()
    sent, reply = run.call(wire, "tools/list")
    gated = COURSE["not initialized"]
    if code_of(reply) != gated:
        problems["course"].append(Broken(f"before initialize, tools/list was answered {said(reply)}, not {gated}",
                                         sent, reply))
    if error_of(reply) is None:
        problems["spec"].append(Broken(f"before initialize, tools/list was answered {said(reply)}, not an error",
                                       sent, reply))
    init, hello = run.call(wire, "initialize", HELLO)
    if result_of(hello) is None:
        raise Broken(f"initialize was answered {said(hello)}", init, hello)
    try:
        sent, reply = run.call(wire, "tools/list")  # between the initialize response and initialized
    except Broken as exc:
        raise Broken(f"between the initialize response and notifications/initialized, {exc.text}", init, hello,
                     *exc.shown, reason=exc.reason)
    between = "between the initialize response and notifications/initialized, tools/list was answered " + said(reply)
    if code_of(reply) != gated:
        problems["course"].append(Broken(f"{between}, not {gated}", init, hello, sent, reply))
    if result_of(reply) is None:
        problems["spec"].append(Broken(between + ": the spec lets a client send it", init, hello, sent, reply))
    opened = wire.send(notification("notifications/initialized"))
    sent, reply = run.call(wire, "tools/list")
    if result_of(reply) is None:
        raise Broken(f"after notifications/initialized, tools/list was answered {said(reply)}: the gate never opens",
                     opened, sent, reply)
    return {standard: joined(found) for standard, found in problems.items()}


def joined(problems: list) -> Broken | None:
    """Several things wrong under one rule, as one: their texts in turn, and their lines (each once)."""
    if not problems:
        return None
    lines = []
    for problem in problems:
        lines += [item for item in problem.shown if all(item is not kept for kept in lines)]
    return Broken("; ".join(problem.text for problem in problems), *lines, reason=problems[0].reason)


@rule("version-negotiation", "000", "initialize agrees on a version the server speaks, not newer than offered",
      HANDSHAKE + ' (step 2); course 002, "The Initialization Handshake"',
      "The server responds during initialize with the highest protocol version it supports that is not newer than "
      "what the client requested.", eras=("handshake",))
def version_negotiation(run: Run):
    sent, reply, result = run.result(run.start(), "initialize", {**HELLO, "protocolVersion": FUTURE_VERSION})
    agreed = result.get("protocolVersion")
    if not isinstance(agreed, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", agreed):
        raise Broken(f"offered {FUTURE_VERSION}, it answered protocolVersion {json.dumps(agreed)}, not a version",
                     sent, {**reply, "focus": "protocolVersion"})
    if agreed >= FUTURE_VERSION:  # dates as strings sort in time order
        raise Broken(f"offered {FUTURE_VERSION}, a version no server speaks, it agreed to {agreed}: a server answers "
                     "with a version it supports", sent, {**reply, "focus": "protocolVersion"})
    again, echo, result = run.result(run.start(), "initialize", {**HELLO, "protocolVersion": agreed})
    if result.get("protocolVersion") != agreed:
        raise Broken(f"offered {agreed}, the version it chose itself, it answered "
                     f"{json.dumps(result.get('protocolVersion'))}", again, {**echo, "focus": "protocolVersion"})


@rule("capabilities-objects", "000", "each capability the server declares is an object, never true", HANDSHAKE,
      'Server replies with its protocolVersion, its capabilities, and serverInfo. In the lab that\'s {"tools": '
      '{"listChanged": true}, "resources": {}, "prompts": {}}.')
def capabilities_objects(run: Run):
    asks = [("initialize", HELLO)] if run.card.eras["handshake"] or run.era == "handshake" else []
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


@rule("flat-methods", "000", "a declared primitive is served by its flat methods, an undeclared one is not",
      LATTICE, "_dispatch is a flat method-name switch to six handlers: tools/list, tools/call, resources/list, "
      "resources/read, prompts/list, prompts/get. ... Until both sides have exchanged capability objects, neither "
      "knows which methods are legal.")
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


# ---- course 000: the _call_tool error lattice, in its order ----

TOOLS_SPEC = 'spec 2025-06-18, server/tools, "Error Handling"'


@rule("unknown-tool", "000", "an unknown tool is answered -32601", LATTICE,
      "unknown tool name → -32601 (method-not-found; the tool is not a method the server offers).",
      differs={"course": "-32601", "spec": "-32602", "claim": "an unknown tool is answered -32602",
               "passage": TOOLS_SPEC + ": an unknown tool is a protocol error, -32602 in its example"})
def unknown_tool(run: Run):
    wire = run.open()
    sent, reply = run.call(wire, "tools/call", {"name": NO_SUCH_TOOL, "arguments": {}})
    problems = {"course": None, "spec": None}
    for standard, code in (("course", COURSE["unknown tool"]), ("spec", SPEC_UNKNOWN_TOOL)):
        if code_of(reply) != code:
            problems[standard] = Broken(f"the unknown tool was answered {said(reply)}, not {code}", sent, reply)
    return problems


@rule("tool-not-allowed", "000", "a tool the session may not call is refused -32600, before it runs", LATTICE,
      "name exists but is not in the per-client allow-list → -32600 (invalid request; you asked for something "
      "you're not permitted to). This is the permission boundary, and it is checked before execution.",
      differs={"course": "-32600", "spec": "an error, of any code",
               "claim": "a tool the session may not call is refused with an error",
               "passage": "spec 2025-06-18, server/tools: an allow-list is not specified"})
def tool_not_allowed(run: Run):
    name, arguments = run.flag("not_allowed")
    wire = run.open()
    sent, reply = run.call(wire, "tools/call", {"name": name, "arguments": arguments})
    problems = {"course": None, "spec": None}
    if code_of(reply) != COURSE["tool not allowed"]:
        problems["course"] = Broken(f"{name} was answered {said(reply)}, not {COURSE['tool not allowed']}", sent, reply)
    if error_of(reply) is None:
        problems["spec"] = Broken(f"{name} was answered {said(reply)}, not an error: it ran", sent, reply)
    return problems


@rule("missing-argument", "000", "a call without a required argument is answered -32602", LATTICE,
      "required argument missing → -32602 (invalid params).",
      differs={"course": "-32602", "spec": "-32602 up to 2025-06-18; from 2025-11-25 an isError result too",
               "claim": "a call without a required argument is answered -32602 (from 2025-11-25: or isError)",
               "passage": TOOLS_SPEC + ": invalid arguments are -32602; spec 2025-11-25 (SEP-1303): input "
                          "validation errors SHOULD be tool execution errors (isError)"})
def missing_argument(run: Run):
    wire = run.open()
    tool, _ = tool_with_required(run, wire)
    sent, reply = run.call(wire, "tools/call", {"name": tool["name"], "arguments": {}})
    required = ", ".join(map(str, tool["inputSchema"]["required"]))
    problems = {"course": None, "spec": None}
    if code_of(reply) != COURSE["missing argument"]:
        problems["course"] = Broken(f"{tool['name']} without {required} was answered {said(reply)}, not "
                                    f"{COURSE['missing argument']}", sent, reply)
    newer = run.version(wire) > "2025-06-18"
    if code_of(reply) != -32602 and not (newer and (result_of(reply) or {}).get("isError") is True):
        expected = "-32602 or an isError result" if newer else "-32602 (in 2025-06-18)"  # the spec's codes
        problems["spec"] = Broken(f"{tool['name']} without {required} was answered {said(reply)}, not {expected}",
                                  sent, reply)
    return problems


@rule("tool-error-is-result", "000", "a tool that raises gives a result with isError true, not an error", LATTICE,
      'the tool function itself raises → not an error response. It returns {"content": [{"type": "text", "text": '
      '"ERROR: ..."}], "isError": true}.')
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


# ---- course 000: the outbox ----

def list_change(run: Run, kind: str, flag_name: str):
    """Call the tool that changes the <kind> list: a bare list_changed before the next response, a new list, and
    <kind>.listChanged declared true (course 000: "the server declared tools.listChanged: true at initialize").
    Without the flag, a server whose capabilities promise no such change is not applicable."""
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
    method = f"notifications/{kind}/list_changed"
    told = [e for e in wire.notifications(mark) if e["message"]["method"] == method and e["at"] < after[1]["at"]]
    if not told:
        raise Broken(f"no {method} before the response to the next request", sent, reply, *after)
    message = told[0]["message"]
    if "id" in message:
        raise Broken(f"{method} was sent with an id: a request now, so its receiver would answer it, and its "
                     "sender wait for the answer", sent, told[0])
    params = message.get("params")
    if params not in (None, {}) and not (isinstance(params, dict) and set(params) <= {"_meta"}):
        raise Broken(f"{method} carries a payload: it is a bare invalidation, and the client lists again", told[0])
    shown, now = listing()
    if now == before:
        raise Broken(f"{kind}/list lists after the change what it listed before", sent, reply, *shown)
    declared = run.capabilities(wire).get(kind)
    if isinstance(declared, dict) and declared.get("listChanged") is not True:  # (true, not an object: another rule)
        raise Broken(f"the capabilities declare {kind}.listChanged {json.dumps(declared.get('listChanged'))}, not "
                     f"true, yet {method} comes: a client that reads them never listens for it", told[0])


@rule("tools-list-changed", "000", "a change to the tools sends a bare notifications/tools/list_changed before the "
      "next response, as declared", LIST_CHANGED, "The mechanism: the server declared tools.listChanged: true at "
      'initialize. ... the server appends notification("notifications/tools/list_changed") to an _outbox. '
      "The client, on _pump_notifications, drains that outbox, sees the notification, and re-issues tools/list ... "
      "The notification carries no payload — it is a cache-invalidation signal, not a diff.",
      eras=("handshake",))
def tools_list_changed(run: Run):
    list_change(run, "tools", "change_tools")


@rule("survives-bad-input", "000", "after bad input of every kind, the session still works", CODES,
      "intended errors carry precise codes, unintended ones degrade to internal-error ... a handler bug must not "
      "take down the session.")
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
      "fetched via resources/read")
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
        raise Broken(f"an unknown URI was answered {said(reply)}, not an error", sent, reply)


@rule("prompt-variables", "002", "prompts/get without a required variable is -32602; with it, messages",
      PRIMITIVES + "; " + CODES,
      "Prompts are reusable, parameterized prompt templates the server exposes, fetched via prompts/get ... "
      "-32602 invalid params — ... the lab raises it ... for a missing prompt-template variable.")
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
    if code_of(reply) != COURSE["missing prompt variable"]:
        raise Broken(f"{prompt['name']} without {', '.join(required)} was answered {said(reply)}, not "
                     f"{COURSE['missing prompt variable']}", sent, reply)
    filled = {name: value_for(run, wire, declared, prompt["name"], name) for name in required}
    sent, reply, result = run.result(wire, "prompts/get", {"name": prompt["name"], "arguments": filled})
    messages = result.get("messages")
    if not (isinstance(messages, list) and messages and all(isinstance(m, dict) and "role" in m and "content" in m
                                                            for m in messages)):
        raise Broken(f"{prompt['name']} filled in gave no messages, each with a role and a content", sent, reply)


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
      "a change to the resources sends a bare notifications/resources/list_changed, as declared",
      LIST_CHANGES, LIST_CHANGES_PASSAGE, eras=("handshake",))
def resources_list_changed(run: Run):
    list_change(run, "resources", "change_resources")


@rule("prompts-list-changed", "002",
      "a change to the prompts sends a bare notifications/prompts/list_changed, as declared",
      LIST_CHANGES, LIST_CHANGES_PASSAGE, eras=("handshake",))
def prompts_list_changed(run: Run):
    list_change(run, "prompts", "change_prompts")


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
      "MCP message.", eras=SESSIONLESS, last=True)
def stdout_only_json(run: Run):
    if run.era is not None:  # one more session of its own, listed and pinged; without a session, the lines read
        wire = run.open()
        run.listed(wire, "tools")
        run.then(wire, 1)
    junk = [e for e in run.card.tape if e.get("dir") == "←" and not (e["json"] and isinstance(e["message"], dict))]
    junk.sort(key=lambda e: (ORDER.get(e["rule"], len(ORDER)), e["at"]))  # in the card's order, whatever ran first
    if junk:
        sessions = {e["session"] for e in junk}
        first = "the card's first sessions" if junk[0]["rule"] == START["id"] else f"{junk[0]['rule']}'s"
        raise Broken(f"{len(junk)} {'line' if len(junk) == 1 else 'lines'} on stdout that "
                     f"{'is' if len(junk) == 1 else 'are'} not a JSON-RPC message, in {len(sessions)} "
                     f"{'session' if len(sessions) == 1 else 'sessions'}, the first in {first}", *junk[:3],
                     reason={"code": "not_a_message"})


@rule("exit-on-eof", "stdio", "the server exits when its stdin ends", "course 004, section 4",
      "server.stdin.close()  # closing stdin ends a stdio server", eras=SESSIONLESS)
def exit_on_eof(run: Run):
    if run.card.eof_problem:  # a first process, its stdin closed before any message
        raise run.card.eof_problem
    if run.era is None:
        return  # no session opens: that first process was the whole test
    wire = run.open()
    run.then(wire, 1)
    wire.close_stdin()
    if wire.wait_exit(run.card.timeout) is None:
        raise Broken(f"still running {run.card.timeout:g} s after its stdin closed, at the end of a session"
                     if not wire.cut else f"still running when {wire.deadline_text} passed, after its stdin closed",
                     note("stdin closed"), reason={"code": "no_exit"})


# ---------------------------------------------------------------------------------------------------
# ---- 4. The card ----
# First, side by side, three fresh processes: one asks initialize (then lists the tools), one server/discover
# (then lists the tools in 2026-07-28), one has its stdin closed before any message (exit-on-eof's first test).
# They find the eras the server serves, and the tools the flags must name. If neither opens a session, they say
# why in one diagnosis, within --timeout, and only stdio's rules are judged. Else each rule on its own
# processes, --jobs of them at a time, the stdout rule last.
# ---------------------------------------------------------------------------------------------------

ORDER = {START["id"]: -1} | {r["id"]: place for place, r in enumerate(RULES)}  # the first sessions, then the rules
EOF_RULE = next(r for r in RULES if r["id"] == "exit-on-eof")
CLUES = {  # why no session opened, the likelier cause first: what to fix
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
                 standard: str = "course", session=None, trace=None, not_offered=(), rule_seconds: float | None = None,
                 card_seconds: float | None = None):
        self.command, self.flags, self.timeout, self.standard = command, flags or {}, timeout, standard
        self.not_offered = set(not_offered)  # the features --not-offered says the server lacks
        self.rule_seconds = rule_seconds or RULE_DEADLINE * timeout  # each rule's deadline
        self.card_seconds = card_seconds or CARD_DEADLINE * timeout  # the whole card's
        self.ends_at = math.inf  # the card's deadline, set when it starts to run
        self.session = session  # a board.Session drawing every line, or None
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
            if self.session and entry["dir"] == "session":
                self.session.begin(entry["line"])
            elif self.session:
                self.session.record(entry["dir"], entry["line"].encode("utf-8", "surrogatepass"))
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
        """End every process still running (the card is done, interrupted, or failed); no rule starts another."""
        self.stopped = True
        with self.taping:
            running = list(self.live)
        for wire in running:
            wire.signal(signal.SIGKILL)  # its rule's own close() then reaps it

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
        clues = self.side_by_side(probes, 1 if self.session else len(probes))
        if not (self.eras["handshake"] or self.eras["stateless"]):
            self.diagnosis = diagnose(clues)

    def probe_handshake(self) -> dict | None:
        """initialize on a fresh process: a result opens the handshake era, whose tools are then listed; if it does
        not, what the process said (a clue to why no session opens)."""
        run = Run(self, START, "handshake")
        try:
            wire = run.start()
            sent = wire.request("initialize", HELLO)
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
        wrong = [f"{FLAGS[name][0]} names {self.flags[name][0]}" for name in TOOL_FLAGS
                 if self.flags.get(name) and self.flags[name][0] not in names]
        if wrong:
            listed = ", ".join(map(str, names)) if names else "no tool"
            raise UsageError(f"{' and '.join(wrong)}, which the server does not list (it lists {listed})")

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
            if self.stopped or time.monotonic() >= self.ends_at:
                raise CouldNotRun("the card was stopped" if self.stopped else
                                  f"the card's deadline ({self.card_seconds:g} s) passed before it began",
                                  {"code": "stopped" if self.stopped else "card_deadline"})
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
        if run.cut_by_card() and any(problems.values()):
            return row | {"outcome": "could_not_run", "reason": {"code": "card_deadline"},
                          "text": f"the card's deadline ({self.card_seconds:g} s) passed while it ran"}
        chosen = problems[self.standard]
        if rule["differs"]:  # both standards: what each expects, where it says so, its outcome
            sides = {"course": (rule["claim"], rule["passage"], rule["quote"]),
                     "spec": (rule["differs"]["claim"], rule["differs"]["passage"], "")}
            row["differs"] = {standard: {"expects": rule["differs"][standard], "claim": sides[standard][0],
                                         "passage": sides[standard][1],
                                         "outcome": "fail" if problems[standard] else "pass",
                                         "text": problems[standard].text if problems[standard] else ""}
                              for standard in ("course", "spec")}
            row["claim"], row["passage"], row["quote"] = sides[self.standard]
        if chosen:
            row |= {"outcome": "fail", "reason": chosen.reason, "text": chosen.text,
                    "exchange": [shown(item) for item in chosen.shown],
                    "at": [item["at"] for item in chosen.shown if isinstance(item, dict) and "at" in item]}
        return row

    def run(self, levels=("000", "002", "004"), only=None, jobs: int = 1) -> dict:
        """The first processes, the flags checked, then every rule of the levels (stdio's always; only: these rule
        ids) judged, jobs at a time, each on its own processes, the stdout rule last (it reads every session before
        it); the report."""
        chosen = [r for r in RULES if (r["level"] in levels or r["level"] == "stdio") and (not only or r["id"] in only)]
        self.ends_at = time.monotonic() + self.card_seconds
        try:
            self.start(eof=EOF_RULE in chosen)
            self.check_flags()
            first = [r for r in chosen if not r["last"]]
            rows = dict(zip([r["id"] for r in first],
                            self.side_by_side([functools.partial(self.judge, r) for r in first], jobs)))
            rows |= {r["id"]: self.judge(r) for r in chosen if r["last"]}
        finally:
            self.stop()
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
                "levels": list(levels), "flags": flags_text(self.flags, self.not_offered),
                "not_offered": sorted(self.not_offered),
                "eras": {"handshake": self.eras["handshake"], "stateless": self.eras["stateless"]},
                "eras_text": eras_text(self.eras), "diagnosis": self.diagnosis,
                "rules": [{key: value for key, value in row.items() if key not in ("at", "session_at")}
                          for row in self.rows],
                "summary": summary, "untested_flags": untested,
                "exit_status": exit_status({row["outcome"] for row in self.rows})}


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
        elif is_response(message) and same_but_type(message["id"], asked):
            found.append(("id_type", entry, f"the answer to {method} came with id {id_key(message['id'])}, where the "
                                            f"request's id is {id_key(asked)}: the same number, another JSON type"))
        elif is_response(message):
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
    """What a row says below its passage: what went wrong, or why it was not judged (that outcome's words first)."""
    if row["outcome"] in ("pass", "fail"):
        return row["text"]
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
        lines += wrap(f"judged by {standard}; where the lab and the spec differ, both verdicts are shown"
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
        lines += wrap(f"{mark(row['outcome'])} {row['id']}: {row['claim']}", "  ") + wrap(row["passage"], INDENT)
        if row["outcome"] == "fail" and row["quote"]:
            lines += wrap(row["quote"], INDENT)
        if row["text"]:
            lines += wrap(row_text(row), INDENT)
        lines += exchange_lines(row["exchange"])
        if row["differs"]:
            other = "spec" if card["standard"] == "course" else "course"
            side = row["differs"][other]
            lines += wrap(f"the {other}: {side['expects']} ({side['passage']})", INDENT)
            lines += wrap(f"by the {other}: {mark(side['outcome'])}" + (
                f" {side['text']}" if side["outcome"] == "fail" and row["outcome"] == "pass" else ""), INDENT)
    unrun = {}  # why: the rules that could not run for it
    for row in card["rules"]:
        if row["outcome"] == "could_not_run":
            unrun.setdefault(row["text"], []).append(row["id"])
    for why, ids in unrun.items():
        lines += [""] + wrap(f"{mark('could_not_run')} could not run ({why}): {', '.join(ids)}")
    lines += [""] + summary_lines(card)
    if card["untested_flags"]:
        takes = {flag: f"{flag} {given}" for flag, given, _, _ in FLAGS.values()}
        lines += wrap("the flags that would test what was not tested: "
                      + ", ".join(takes[flag] for flag in card["untested_flags"]))
    lines.append(f"exit status {card['exit_status']}: {EXIT_STATUSES[card['exit_status']]}")
    return "\n".join(lines) + "\n"


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

def board_view(card: dict, judged: Card, session) -> dict:
    """The card as the page draws it: each row with the numbers of the messages that decided it."""
    session.catch_up()
    with session.lock:
        events = [e["n"] for e in session.board.events if e["kind"] not in ("timeout", "end")]
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
# ---- 7. The command line ----
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
                        help=f"seconds the whole card may take ({CARD_DEADLINE} times --timeout)")
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
    parse.add_argument("command", nargs=argparse.REMAINDER, help="the server's command and its arguments, after --")
    return parse


def options(argv: list) -> dict:
    """What a command line asks for: the server's command, the flags, the switches; a mistake raises UsageError."""
    words, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, None)
    asked = parser().parse_args(words)
    if command is None:
        command = asked.command  # no "--": the command starts at the first word that is no flag
    elif asked.command:
        raise UsageError(f"{asked.command[0]!r} comes before --: the server's command goes after it")
    if not command and not asked.rules:
        raise UsageError("no server command: put it after --")
    if asked.board and asked.jobs not in (None, 1):
        raise UsageError(f"--board draws one session at a time, so it judges one rule at a time: not --jobs "
                         f"{asked.jobs}")
    flags = {name: getattr(asked, name) for name in FLAGS}
    if flags["not_allowed"]:
        flags["not_allowed"] = (flags["not_allowed"][0], {})  # a tool's name, called with no arguments
    both = [f"--not-offered {feature} and {FLAGS[FEATURES[feature]][0]}" for feature in sorted(asked.not_offered)
            if flags[FEATURES[feature]]]
    if both:
        raise UsageError(f"{'; '.join(both)}: a feature the server lacks cannot be tested")
    return {"command": command, "flags": flags, "not_offered": asked.not_offered, "timeout": asked.timeout,
            "rule_seconds": asked.rule_deadline, "card_seconds": asked.deadline, "port": asked.port,
            "jobs": 1 if asked.board else asked.jobs or cores(), "standard": "spec" if asked.spec else "course",
            "only": asked.only, "json": asked.json, "board": asked.board, "trace": asked.trace, "rules": asked.rules,
            "levels": ("000", "002", "004")[:("000", "002", "004").index(asked.level) + 1]}


def judge(argv, session=None) -> tuple:
    """(the card as JSON, the Card that judged it) for a command line's flags and server (or what options() made of
    them), printing nothing; a flag naming a tool the server does not list raises UsageError."""
    asked = argv if isinstance(argv, dict) else options(argv)
    judged = Card(asked["command"], asked["flags"], asked["timeout"], asked["standard"], session,
                  sys.stderr if asked["trace"] else None, asked["not_offered"], asked["rule_seconds"],
                  asked["card_seconds"])
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
    session = httpd = None
    if asked["board"]:
        session = board.Session(asked["timeout"], {"command": "report card: " + shlex.join(asked["command"]),
                                                   "fault": None, "fault_text": None})
        httpd = board.serve(session, asked["port"])
        print(f"report_card: the board is at {board.url_of(httpd)}", file=sys.stderr, flush=True)
    try:
        card, judged = judge(asked, session)
    except UsageError as exc:
        print(f"report_card: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    sys.stdout.write(json.dumps(card, indent=2, ensure_ascii=False) + "\n" if asked["json"] else text(card))
    sys.stdout.flush()
    if session:
        session.card = board_view(card, judged, session)
        session.end()
        print(f"report_card: the card is on the board; the page stays at {board.url_of(httpd)} until you press "
              "Enter", file=sys.stderr, flush=True)
        try:
            sys.stdin.readline()
        except KeyboardInterrupt:
            pass
        board.let_viewers_finish(session)
        httpd.server_close()
    return card["exit_status"]


if __name__ == "__main__":
    sys.exit(main())
