"""Grading (issue 38): the card's server processes watched and bounded, its own memory bounded; a class graded in one
command; the assignment's file; the scores and the formats graders read.

The servers are the naive ones (maintainers/naive_servers.py) and the hostile ones (maintainers/hostile_servers.py),
each run as a student's submission. No test waits on a clock: each waits for a line, an exit, or a process's end,
with a deadline far beyond what an honest run takes; processes are looked for in /proc.
"""

import json
import os
import pathlib
import subprocess
import sys
import time

import pytest

import hostile_servers
import naive_servers
import report_card
from report_card import Wire

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in maintainers/)
PYTHON = sys.executable
NAIVE = [PYTHON, str(HERE / "maintainers" / "naive_servers.py")]
HOSTILE = [PYTHON, str(HERE / "maintainers" / "hostile_servers.py")]
CARD = [PYTHON, str(HERE / "report_card.py")]
LINUX = pathlib.Path("/proc/self/stat").exists()
BOUND = 600  # seconds: a bound on a bug, never reached by an honest run however slow the machine


def tape() -> list:
    """A tape for a Wire outside a card: each entry kept, numbered."""
    kept = []

    def record(entry: dict) -> dict:
        kept.append(entry)
        return entry | {"at": len(kept) - 1}
    return record


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def until(condition, what: str):
    """Poll condition() until it holds, or fail after BOUND seconds."""
    deadline = time.monotonic() + BOUND
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.01)


def marked(prefix: str) -> list:
    """The pids of the running processes whose environment names a card's tree starting with prefix."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and alive(int(name)):
            try:
                environ = pathlib.Path(f"/proc/{name}/environ").read_bytes()
            except OSError:
                continue
            if f"{report_card.MARK}={prefix}".encode() in environ:
                found.append(int(name))
    return found


# ---------------------------------------------------------------------------------------------------
# The wire: every process of a server's tree followed and ended; the card's own inbox and writes bounded
# ---------------------------------------------------------------------------------------------------

DAEMON = r"""
import os, subprocess, sys
# A child in a session of its own (setsid), and one in the server's own group, both holding its stdout; then the
# server exits at once.
for session in (True, False):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], start_new_session=session)
    print(child.pid, file=sys.stderr, flush=True)
"""


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_children_that_hold_stdout_after_the_server_exits_are_ended_and_the_card_does_not_wait_for_them():
    # The card sees the server exit (not its stdout's end, which the children hold), and ends them, setsid or not.
    wire = Wire([PYTHON, "-c", DAEMON], timeout=BOUND, record=tape())
    try:
        assert (wire.reply(wire.request("ping")), wire.silence()) == (None, "the server exited (status 0); its stderr "
                                                                            f"ends: {wire.stderr_tail()}")
        children = [int(pid) for pid in wire.stderr_kept.split()]
    finally:
        wire.close()
    assert (len(children), [pid for pid in children if alive(pid)], wire.account.outlived) == (2, [], 2)


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_a_flood_waits_in_the_inbox_and_the_card_reads_no_more_than_it_has_room_for():
    # A server writing 1 MB lines for ever while the rule's thread takes none: the reader stops at the inbox's bound.
    flood = "import sys\nline = b'x' * 1_000_000 + b'\\n'\nwhile True: sys.stdout.buffer.write(line)"
    wire = Wire([PYTHON, "-c", flood], timeout=BOUND, record=tape())
    try:
        until(lambda: wire.inbox.size >= report_card.INBOX_BYTES, "the inbox to fill")
        read = wire.account.written["stdout_mb"]
        assert read <= report_card.INBOX_BYTES + 2 * 1_000_001
        assert wire.inbox.size <= report_card.INBOX_BYTES + 1_000_000
    finally:
        wire.close()


def test_a_server_that_reads_nothing_does_not_hold_the_cards_writes():
    # Its stdin's pipe full, a write waits the time limit and no more: the server has stopped reading, and says so.
    wire = Wire([PYTHON, "-c", "import time; time.sleep(1000)"], timeout=0.5, record=tape())
    try:
        wire.send_line("x" * 1_000_000)
        sent = wire.request("ping")
        assert (wire.not_reading, wire.stdin_closed, wire.reply(sent), wire.silence(), wire.why()) == (
            True, True, None, "the server stopped reading its stdin: a line the card wrote found no room in 0.5 s",
            "not_reading")
    finally:
        wire.close()


ASKS = r"""
import json, sys
sys.stdin.readline()
for n in range(500):
    print(json.dumps({"jsonrpc": "2.0", "id": n, "method": "roots/list"}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}), flush=True)
sys.stdin.read()
"""


def test_the_card_answers_a_servers_requests_so_many_times_a_session_and_no_more():
    # 500 requests before the response: the first MAX_ANSWERED are answered -32601, the rest left unanswered.
    wire = Wire([PYTHON, "-c", ASKS], timeout=BOUND, record=tape())
    try:
        assert wire.reply(wire.request("ping"))["message"] == {"jsonrpc": "2.0", "id": 1, "result": {}}
        answers = [entry["message"]["id"] for entry in wire.sent if "error" in entry["message"]]
    finally:
        wire.close()
    assert answers == list(range(report_card.MAX_ANSWERED))


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_rlimits_are_a_backstop_no_core_file_and_a_little_more_cpu_than_the_whole_tree_may_use():
    wire = Wire([PYTHON, "-c", "import sys; sys.stdin.read()"], timeout=BOUND, record=tape(),
                account=report_card.Account({"cpu_seconds": 30}))
    try:
        limits = pathlib.Path(f"/proc/{wire.process.pid}/limits").read_text().splitlines()
    finally:
        wire.close()
    assert [line.split()[-3:] for line in limits if line.startswith(("Max cpu time", "Max core file size"))] == [
        ["32", "33", "seconds"], ["0", "0", "bytes"]]
