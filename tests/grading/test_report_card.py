"""The report card (issues 30, 36, 37): each rule against servers that keep it and servers that break it; the lab's
own servers; the official SDKs' servers; servers that never open a session; the five outcomes and the exit
statuses; the command line; the card as text, as JSON and on the board, in a real browser.

Every card drives a real server command over real pipes. The corpus: corpus/naive_servers.py holds a naive
base that keeps every rule and one mistake a rule; corpus/student_servers.py four more bases, written as
students write (three in Python, each checking in another order, one in Node), with mistakes of a line or two. Each
mistake breaks exactly its own rule; the cards of all of them run side by side (a few cards at a time, each card's
rules side by side too). No test waits on a clock: each wait is for a line, with a deadline. The lab's
servers are judged by the course, whatever the lab's constants say: where a lesson's exercise changed one, the rule
it decides fails, and the tests expect so (LAB_CHOICES).
"""

import concurrent.futures
import functools
import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

import board
import mcp_min
import naive_servers
import report_card
import student_servers
from lab_server import FLAGS as LAB_FLAGS
from report_card import Wire
from harness import TIMEOUT, stderr_line
from browser import Browser, CHROMEDRIVER, CHROMIUM
from cards import outcomes_in_text, tape

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/grading/)
PYTHON = sys.executable
NAIVE = [PYTHON, str(HERE / "corpus" / "naive_servers.py")]
CARD = [PYTHON, str(HERE / "report_card.py")]
DEMO = [PYTHON, str(HERE / "server_demo.py")]
DEMO_FLAGS = ["--not-allowed", "delete_db", "--raises", 'count_lessons {"course": "postgres"}',
              "--change-tools", "enable_subtract"]
TINY = [PYTHON, str(HERE / "lessons" / "tiny_mcp.py")]
TINY_FLAGS = ["--raises", 'count_lessons {"course": "postgres"}', "--handler-fails", 'tools/call {"name": []}',
              "--not-offered", "allow-list"]
LAB = [PYTHON, str(HERE / "corpus" / "lab_server.py")]
NODE = shutil.which("node")
NEEDS_NODE = pytest.mark.skipif(not NODE, reason="node is not installed: the corpus's Node base cannot run")
CARD_TIMEOUT = 600  # seconds a whole card may take in a test: a bound on a bug, never reached by a slow machine

RULE_IDS = ["notification-no-response", "null-id-is-a-request", "response-shape", "one-response",
            "notification-has-no-id", "parse-error", "not-a-message", "invalid-request", "method-not-found",
            "internal-error", "no-traceback", "handshake-gate", "quiet-before-initialized", "version-negotiation",
            "server-info", "capabilities-objects", "negotiated-capabilities", "flat-methods", "unknown-tool",
            "tool-not-allowed", "missing-argument", "tool-error-is-result", "tool-error-says-why", "tools-list-changed",
            "survives-bad-input",
            "resources-by-uri", "prompt-variables", "resources-list-changed", "prompts-list-changed",
            "server-discover", "meta", "result-type", "cache-hints", "unsupported-version",
            "stdout-only-json", "exit-on-eof"]
LATTICE = 'course 000, "Dispatch to primitives, and the _call_tool error lattice"'
PASSAGES = {  # the passage each rule comes from, as the card prints it
    "notification-no-response": 'course 000, "Three message shapes"',
    "null-id-is-a-request": 'course 000, "Three message shapes"',
    "response-shape": 'course 000, "Three message shapes"',
    "one-response": 'course 000, "Three message shapes"',
    "notification-has-no-id": 'course 000, "Three message shapes"',
    "parse-error": 'course 000, "The five standard error codes"',
    "not-a-message": 'course 000, "The five standard error codes"',
    "invalid-request": 'course 000, "The five standard error codes"',
    "method-not-found": 'course 000, "The five standard error codes"',
    "internal-error": 'course 000, "The five standard error codes"',
    "no-traceback": 'course 000, "The five standard error codes"',
    "handshake-gate": 'course 000, "The stateful handshake"',
    "quiet-before-initialized": 'course 000, "The stateful handshake"',
    "version-negotiation": 'course 000, "The stateful handshake" (step 2); course 002, "The Initialization Handshake"',
    "server-info": 'course 000, "The stateful handshake"',
    "capabilities-objects": 'course 000, "The stateful handshake"',
    "negotiated-capabilities": 'course 000, "The stateful handshake"',
    "flat-methods": LATTICE, "unknown-tool": LATTICE, "tool-not-allowed": LATTICE, "missing-argument": LATTICE,
    "tool-error-is-result": LATTICE, "tool-error-says-why": LATTICE,
    "tools-list-changed": 'course 000, "listChanged: the one dynamic capability"',
    "survives-bad-input": 'course 000, "The five standard error codes"',
    "resources-by-uri": 'course 002, "The Three MCP Primitives"',
    "prompt-variables": 'course 002, "The Three MCP Primitives"; course 000, "The five standard error codes"',
    "resources-list-changed": 'course 002, "List-Changed Notifications"',
    "prompts-list-changed": 'course 002, "List-Changed Notifications"',
    "server-discover": "course 004, section 3",
    "meta": "course 004, section 3 and its transcript",
    "result-type": "course 004, section 6",
    "cache-hints": "course 004, section 6",
    "unsupported-version": "course 004, section 4",
    "stdout-only-json": 'spec 2025-06-18, Transports, "stdio"',
    "exit-on-eof": "course 004, section 4",
}


LAB_CHOICES = {  # a rule decided by a code the lab chooses: (mcp_min's constant, the case in the course's table)
    "unknown-tool": ("UNKNOWN_TOOL", "unknown tool"),
    "tool-not-allowed": ("TOOL_NOT_ALLOWED", "tool not allowed"),
    "handshake-gate": ("NOT_INITIALIZED", "not initialized"),
}


def card_of(command: list, *flags: str) -> dict:
    """The card (as JSON) of a server command, judged in this process with the flags given."""
    return report_card.judge([*flags, "--", *command])[0]


def outcomes(card: dict) -> dict:
    """Each rule's outcome, by its id."""
    return {row["id"]: row["outcome"] for row in card["rules"]}


def as_the_lab_chooses(expected: dict) -> dict:
    """The outcomes expected of a server built on the lab, where a rule the lab decides with a constant of its own
    holds only while that constant is the course's code: a lesson's exercise may change it, the course does not."""
    changed = {rule for rule, (constant, case) in LAB_CHOICES.items()
               if getattr(mcp_min, constant) != board.CODES[case]}
    return {rule: "fail" if rule in changed and outcome == "pass" else outcome for rule, outcome in expected.items()}


def run_card(*args: str) -> subprocess.CompletedProcess:
    """python report_card.py with these arguments, to its end."""
    return subprocess.run(CARD + list(args), capture_output=True, text=True, timeout=CARD_TIMEOUT, cwd=HERE)


def corpus() -> dict:
    """Every mistake of the corpus: (its base, its name) -> (its command, the flags that test every rule, its rule)."""
    found = {("naive", name): (NAIVE + [name], naive_servers.FLAGS_OF.get(name, naive_servers.FLAGS), rule)
             for name, (_, rule) in naive_servers.MISTAKES.items()}
    for base, mistakes in student_servers.MISTAKES.items():
        found |= {(base, name): (student_servers.command(base, name), student_servers.BASES[base][2], rule)
                  for name, (rule, _) in mistakes.items()}
    return found


@functools.cache
def cards_of_mistakes(bases: tuple) -> dict:
    """The card of every mistake of these bases, with the flags that test every rule: a few cards at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        cards = {key: pool.submit(card_of, command, *flags) for key, (command, flags, _) in corpus().items()
                 if key[0] in bases}
        return {key: future.result() for key, future in cards.items()}


def caught(bases: tuple) -> tuple:
    """(what each mistake of these bases broke: its ✗ rows' rules and passages, the rules not judged; what was
    expected of it: its own rule's ✗ alone, and what its base leaves unjudged)."""
    found = {key: ([(row["id"], row["passage"]) for row in card["rules"] if row["outcome"] == "fail"],
                   [row["id"] for row in card["rules"] if row["outcome"] not in ("pass", "fail")], card["exit_status"])
             for key, card in cards_of_mistakes(bases).items()}
    expected = {key: ([(rule, PASSAGES[rule])], UNJUDGED[key[0]], 1) for key, (_, _, rule) in corpus().items()
                if key[0] in bases}
    return found, expected


UNJUDGED = {  # what each base does not offer, so that its rules do not apply (the student bases serve no 2026-07-28)
    "naive": [],
    "one-function": ["resources-by-uri", "prompt-variables", "resources-list-changed", "prompts-list-changed",
                     "server-discover", "meta", "result-type", "cache-hints", "unsupported-version"],
    "table": ["prompt-variables", "prompts-list-changed", "server-discover", "meta", "result-type", "cache-hints",
              "unsupported-version"],
    "registry": ["resources-by-uri", "resources-list-changed", "server-discover", "meta", "result-type", "cache-hints",
                 "unsupported-version"],
}
UNJUDGED["node"] = UNJUDGED["one-function"]
PYTHON_BASES = ("one-function", "table", "registry")


# ---------------------------------------------------------------------------------------------------
# The naive servers: the base keeps every rule; each mistake breaks exactly its own
# ---------------------------------------------------------------------------------------------------

def test_the_rules_come_in_the_courses_order_under_fixed_ids():
    # A grading script relies on these ids; course 000 first, then 002, 004, stdio.
    assert [rule["id"] for rule in report_card.RULES] == RULE_IDS
    assert [rule["level"] for rule in report_card.RULES] == ["000"] * 25 + ["002"] * 4 + ["004"] * 5 + ["stdio"] * 2
    assert {rule["id"]: rule["passage"] for rule in report_card.RULES} == PASSAGES


def test_the_naive_base_keeps_every_rule():
    # The base, with every flag: nothing broken, nothing left unjudged.
    card = card_of(NAIVE, *naive_servers.FLAGS)
    assert outcomes(card) == {id: "pass" for id in RULE_IDS}
    assert report_card.summary_lines(card) == ["course 000: 25/25 rules hold", "course 002: 4/4 rules hold",
                                               "course 004: 5/5 rules hold", "stdio: 2/2 rules hold"]
    assert card["exit_status"] == 0


def test_each_naive_mistake_breaks_exactly_its_own_rule_with_its_passage():
    # One ✗ a mistake, on its rule, citing its passage, exit status 1; nothing else judged differently from the base.
    found, expected = caught(("naive",))
    expected["naive", "undeclared-prompts"] = ([("flat-methods", PASSAGES["flat-methods"])],
                                               ["prompt-variables", "prompts-list-changed"], 1)
    assert found == expected


def test_each_student_mistake_breaks_exactly_its_own_rule_whatever_its_bases_order_of_checks():
    # Three bases, each checking in another order (the arguments before the name, the method's handler before the
    # gate, the allow-list after the arguments): each rule is provoked on its own, so no order hides a mistake.
    found, expected = caught(PYTHON_BASES)
    assert found == expected


@NEEDS_NODE
def test_each_mistake_of_the_node_base_breaks_exactly_its_own_rule():
    # A server in another language: its stack trace, its console.log, its timer that keeps the process alive.
    found, expected = caught(("node",))
    assert found == expected


def test_the_corpus_breaks_every_rule_of_the_card_each_mistake_in_a_line_or_two():
    # At least 45 mistakes; every rule broken by one at least; each student mistake's text found once in its base.
    rules = [rule for (_, _, rule) in corpus().values()]
    assert (len(rules) >= 45, set(RULE_IDS) - set(rules)) == (True, set())
    assert [base for base in student_servers.BASES] == [*PYTHON_BASES, "node"]
    for base, mistakes in student_servers.MISTAKES.items():
        for name, (_, replacements) in mistakes.items():
            assert student_servers.source(base, name) != student_servers.source(base), (base, name)
            assert 1 <= len(replacements) <= 2, (base, name)


STACK_TRACES = [  # (a text that crosses the wire, the language of the stack trace in it, or None: ordinary text)
    ('Traceback (most recent call last):\n  File "server.py", line 12, in handle\nKeyError: 1', "Python"),
    ('  File "/srv/app/server.py", line 40, in call_tool', "Python"),
    ("TypeError: Cannot read properties of undefined\n    at handle (/srv/server.js:41:7)\n    at Interface.<anonymous> "
     "(node:readline:1:2)", "Node"),
    ("Error: boom\n    at callTool ([eval]:56:15)", "Node"),
    ("Error: boom\n    at async Promise.all (index 0)\n    at C:\\srv\\server.mjs:3:9", "Node"),
    ('Exception in thread "main" java.lang.NullPointerException', "Java"),
    ("java.lang.IllegalStateException: closed\n\tat com.example.Server.handle(Server.java:42)", "Java"),
    ("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.handle()", "Go"),
    ("main.handle(...)\n\t/home/me/server.go:17 +0x1d", "Go"),
    ("System.NullReferenceException: Object reference not set to an instance of an object.\n   at "
     "Server.Handler.Handle(String line) in C:\\src\\Server.cs:line 42", ".NET"),
    ("System.Exception: boom\n   at Server.Program.Main(String[] args)", ".NET"),
    ("ERROR: division by zero", None),
    ("Meet at 10:30:45 in room 4", None),
    ("File notes.txt, line 3 is empty", None),
    ("look at Math.max(a, b), at line 3", None),
    ("goroutines are cheap; see main.go:12 for one", None),
    ("at https://example.com:8080 the page says hi", None),
    ("The Traceback module prints what went wrong", None),
    ("2 validation errors for addArguments\nx\n  Field required [type=missing, input_value={}, input_type=dict]\n    "
     "For further information visit https://errors.pydantic.dev/2.14/v/missing", None),
    ("MCP error -32602: Tool report_card_no_such_tool not found", None),
]


def test_a_stack_trace_of_each_language_is_found_and_ordinary_text_is_not():
    # Python, Node, Java, Go and .NET, whole or a line of one; sentences that only look like them are text.
    assert [(report_card.stack_trace(text) or (None,))[0] for text, _ in STACK_TRACES] == [
        language for _, language in STACK_TRACES]


def test_what_the_card_says_of_a_hang_a_crash_and_a_stray_print():
    # A server that hangs on one rule fails it after the time limit and gets the rest of its card; a crash is
    # told by its exit status and last words; a stray print() is charged to the stdout rule alone.
    cards = {name: card for (_, name), card in cards_of_mistakes(("naive",)).items()}
    row = {name: next(row for row in cards[name]["rules"] if row["outcome"] == "fail")
           for name in ("holds-requests-until-initialized", "crashes-on-handler-bug", "print-on-stdout")}
    assert {name: (found["text"], [item["line"] for item in found["exchange"]]) for name, found in row.items()} == {
        "holds-requests-until-initialized": (
            "between the initialize response and notifications/initialized, no response to tools/list: none came "
            "within 10 s",
            [json.dumps(report_card.request(2, "initialize", report_card.HELLO)),
             row["holds-requests-until-initialized"]["exchange"][1]["line"],
             json.dumps(report_card.request(3, "tools/list"))]),
        "crashes-on-handler-bug": (
            "no response to tools/call: the server exited (status 1); its stderr ends: TypeError: unhashable type: "
            "'list'",
            ['{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": []}}']),
        "print-on-stdout": (
            "14 lines on stdout that are not a JSON-RPC message, in 12 sessions, the first in internal-error's",
            ["calling []", "calling report_card_no_such_tool", "calling delete_db"]),
    }
    assert [row[name]["reason"] for name in row] == [{"code": "no_response", "why": "timeout"},
                                                     {"code": "no_response", "why": "ended"},
                                                     {"code": "not_a_message"}]


# ---------------------------------------------------------------------------------------------------
# The lab's servers: every rule that applies holds
# ---------------------------------------------------------------------------------------------------

def test_the_demo_server_keeps_every_rule_it_is_tested_on():
    # server_demo.py: all ✓ but what nothing from outside can provoke: no handler of its fails (internal-error),
    # and no tool of its changes the resources or the prompts, which it declares may change.
    card = card_of(DEMO, *DEMO_FLAGS)
    untested = {"internal-error", "resources-list-changed", "prompts-list-changed"}
    assert outcomes(card) == as_the_lab_chooses({id: "not_tested" if id in untested else "pass" for id in RULE_IDS})
    assert card["untested_flags"] == ["--handler-fails", "--change-resources", "--change-prompts"]
    assert card["eras_text"] == ("the handshake (initialize agreed 2025-06-18); 2026-07-28 (server/discover lists "
                                 "2026-07-28, 2025-11-25, 2025-06-18)")


def test_tiny_mcp_keeps_every_rule_that_applies():
    # Course 004's hand-written server speaks only 2026-07-28: the handshake's rules and the list changes do not
    # apply; it has no allow-list, and says so with --not-offered.
    card = card_of(TINY, *TINY_FLAGS)
    no_handshake = "the server serves no handshake: initialize was answered error -32022 Unsupported protocol version"
    listen = "a 2026-07-28 server tells list changes only on a subscriptions/listen stream"
    handshake_rules = ["handshake-gate", "quiet-before-initialized", "version-negotiation", "server-info",
                       "negotiated-capabilities"]
    assert {row["id"]: (row["outcome"], row["text"]) for row in card["rules"] if row["outcome"] != "pass"} == {
        **{rule: ("not_applicable", no_handshake) for rule in handshake_rules},
        "tool-not-allowed": ("not_applicable", "--not-offered allow-list: the server has none"),
        "tools-list-changed": ("not_applicable", listen), "resources-list-changed": ("not_applicable", listen),
        "prompts-list-changed": ("not_applicable", listen),
        "resources-by-uri": ("not_applicable", "the server declares no resources"),
        "prompt-variables": ("not_applicable", "the server declares no prompts"),
    }
    assert {row["id"]: row["reason"] for row in card["rules"] if row["outcome"] not in ("pass", "fail")} == {
        **{rule: {"code": "era_not_served", "era": "handshake"} for rule in handshake_rules},
        "tool-not-allowed": {"code": "not_offered", "feature": "allow-list"},
        "tools-list-changed": {"code": "listen_stream"}, "resources-list-changed": {"code": "listen_stream"},
        "prompts-list-changed": {"code": "listen_stream"},
        "resources-by-uri": {"code": "not_declared", "capability": "resources"},
        "prompt-variables": {"code": "not_declared", "capability": "prompts"},
    }
    assert card["exit_status"] == 0


def test_the_lab_server_keeps_every_rule_of_course_000():
    # An mcp_min.MCPServer with course 000's add_tool registrations, on stdio: 25 of 25, and the exit status says so.
    done = run_card("--level", "000", *LAB_FLAGS, "--", *LAB)
    broken = [rule for rule, outcome in as_the_lab_chooses(dict.fromkeys(LAB_CHOICES, "pass")).items()
              if outcome == "fail"]
    assert (done.returncode, done.stdout.splitlines()[-4:]) == (
        1 if broken else 0, ["", f"course 000: {25 - len(broken)}/25 rules hold", "stdio: 2/2 rules hold",
                             "exit status 1: a rule fails" if broken else
                             "exit status 0: every rule of the level was tested and holds (or does not apply)"]), \
        done.stdout


AUTHOR = ["--handler-fails", "--not-allowed", "--raises", "--change-tools"]  # what a tools server's author tells
GOOD = {  # a server that keeps every rule: (its command, the flags that test every rule, the level, the flags that
    # would test what is not tested without them)
    "naive": (NAIVE, naive_servers.FLAGS, "004", AUTHOR + ["--change-resources", "--change-prompts"]),
    "lab": (LAB, LAB_FLAGS, "000", AUTHOR),
    "one-function": (student_servers.command("one-function"), student_servers.BASES["one-function"][2], "004", AUTHOR),
    "table": (student_servers.command("table"), student_servers.BASES["table"][2], "004",
              AUTHOR + ["--change-resources"]),
    "registry": (student_servers.command("registry"), student_servers.BASES["registry"][2], "004",
                 AUTHOR + ["--change-prompts"]),
    "node": (student_servers.command("node"), student_servers.BASES["node"][2], "004", AUTHOR),
}


@pytest.mark.parametrize("name", [pytest.param(name, marks=NEEDS_NODE if name == "node" else ()) for name in GOOD])
def test_each_good_server_exits_0_with_the_flags_that_test_every_rule_and_3_without_naming_them(name):
    # Without its flags, a good server is not failed: it is not tested, and the card names each flag that would test.
    command, flags, level, untested = GOOD[name]
    found = [(card["exit_status"], card["untested_flags"]) for card in (
        card_of(command, "--level", level, *flags), card_of(command, "--level", level))]
    if name == "lab" and "fail" in as_the_lab_chooses(dict.fromkeys(LAB_CHOICES, "pass")).values():
        assert found == [(1, []), (1, untested)]  # a lesson changed the lab's codes
    else:
        assert found == [(0, []), (3, untested)]


# ---------------------------------------------------------------------------------------------------
# A server not written here: the official Python SDK's
# ---------------------------------------------------------------------------------------------------

SDK_SERVER = '''
"""A small server written with the official SDK (mcp 2.3.0), as its documentation shows."""
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-side", version="2.3.0")


@server.tool()
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@server.tool()
def explode(reason: str) -> str:
    """Always raises."""
    raise ValueError(reason)


def subtract(x: int, y: int) -> int:
    """Subtract y from x."""
    return x - y


@server.tool()
async def enable_subtract(ctx: Context) -> str:
    """Offer subtract from now on, and say so."""
    server.add_tool(subtract)
    await ctx.session.send_tool_list_changed()
    return "subtract is now available"


@server.resource("info://static", mime_type="text/plain")
def static_info() -> str:
    return "static text"


@server.resource("info://broken", mime_type="text/plain")
def broken_info() -> str:
    raise OSError("the disk is gone")


@server.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    server.run()
'''


SDK_FLAGS = ["--raises", 'explode {"reason": "the disk is full"}', "--handler-fails",
             'resources/read {"uri": "info://broken"}', "--change-tools", "enable_subtract", "--not-offered",
             "allow-list"]  # no allow-list in either SDK
SILENT = {  # what both SDKs' servers answer with silence: JSON-RPC 2.0 has every request answered, -32700 or -32600
    "null-id-is-a-request": "no response to it: the server took it for a notification, and answered the requests "
                            "after it",
    "parse-error": "no response to it", "not-a-message": "no response to it", "invalid-request": "no response to it"}


def cards_in_both_standards(command: list, *flags: str) -> dict:
    """A server's cards by the course and by the spec (--spec), side by side; processes that take a second to start
    get three rules at a time, and time enough on a loaded machine."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        cards = {standard: pool.submit(card_of, command, *extra, *flags, "--jobs", "3", "--timeout", "30")
                 for standard, extra in (("course", []), ("spec", ["--spec"]))}
        return {standard: future.result() for standard, future in cards.items()}


def verdicts(card: dict) -> dict:
    """Each rule that does not simply hold: its outcome, and what the row says (a failure, or information)."""
    return {row["id"]: (row["outcome"], row["text"]) for row in card["rules"] if row["outcome"] != "pass" or row["text"]}


def both_verdicts(card: dict) -> dict:
    """The course's and the spec's outcome of each rule where they differ in what they expect."""
    return {row["id"]: (row["differs"]["course"]["outcome"], row["differs"]["spec"]["outcome"])
            for row in card["rules"] if row["differs"]}


def test_the_python_sdks_server_by_the_course_and_by_the_spec(tmp_path):
    # The SDK's MCPServer (mcp 2.3.0): silent on bad input (both standards: JSON-RPC 2.0 answers each request); a
    # list_changed its capabilities deny (both: only negotiated capabilities are used); isError for an unknown tool
    # (both: the spec counts it among protocol errors); by the course alone: its gate, -32602 for a missing argument,
    # a failing tool's reason hidden, code 0 for a missing prompt variable; by the spec those last two are
    # information. Every verdict of both cards.
    pytest.importorskip("mcp.server.mcpserver", reason="the official SDK (mcp==2.3.0) is not installed")
    (tmp_path / "sdk_server.py").write_text(SDK_SERVER, encoding="utf-8")
    cards = cards_in_both_standards([PYTHON, str(tmp_path / "sdk_server.py")], *SDK_FLAGS)
    undeclared = {"resources-list-changed": ("not_applicable", "the server declares no resources.listChanged"),
                  "prompts-list-changed": ("not_applicable", "the server declares no prompts.listChanged"),
                  "tool-not-allowed": ("not_applicable", "--not-offered allow-list: the server has none")}
    list_changed = ("fail", "the server sent notifications/tools/list_changed, in negotiated-capabilities's session, "
                            "and the server declared no tools.listChanged")
    hidden = 'explode, which raises, said only "Error executing tool explode": that it failed, not why'
    code_0 = "review without code was answered error 0 Missing required arguments: {'code'}, not -32602"
    assert verdicts(cards["course"]) == {
        **{rule: ("fail", text) for rule, text in SILENT.items()}, **undeclared,
        "handshake-gate": ("fail", "before initialize, tools/list was answered error -32602 Invalid request "
                                   "parameters, not -32600; between the initialize response and notifications/"
                                   "initialized, tools/list was answered a result, not -32600; after a notifications/"
                                   "initialized that came before initialize, tools/list was answered a result, not "
                                   "-32600: only an initialize that succeeded opens the session"),
        "negotiated-capabilities": list_changed,
        "unknown-tool": ("fail", "the unknown tool was answered a result with isError true, not -32601"),
        "missing-argument": ("fail", "add without x, y was answered a result with isError true, not -32602"),
        "tool-error-says-why": ("fail", hidden), "prompt-variables": ("fail", code_0)}
    assert verdicts(cards["spec"]) == {
        **{rule: ("fail", text) for rule, text in SILENT.items()}, **undeclared,
        "negotiated-capabilities": list_changed,
        "unknown-tool": ("fail", "the unknown tool was answered a result with isError true, not an error: the spec "
                                 "counts an unknown tool among protocol errors"),
        "tool-error-says-why": ("pass", hidden), "prompt-variables": ("pass", code_0)}
    assert both_verdicts(cards["course"]) == both_verdicts(cards["spec"]) == {
        "no-traceback": ("pass", "pass"), "handshake-gate": ("fail", "pass"), "quiet-before-initialized": ("pass", "pass"),
        "unknown-tool": ("fail", "fail"), "missing-argument": ("fail", "pass"), "tool-error-says-why": ("fail", "pass"),
        "tools-list-changed": ("pass", "pass"), "resources-by-uri": ("pass", "pass"), "prompt-variables": ("fail", "pass"),
        "exit-on-eof": ("pass", "pass")}
    assert [(card["spec_revision"], card["exit_status"], card["untested_flags"]) for card in cards.values()] == [
        ("2025-06-18", 1, []), ("2025-11-25", 1, [])]


TS_SDK = os.environ.get("MCP_TS_SDK", "")
TS_SERVER = r"""
// A small server written with the official TypeScript SDK (1.32), as its README shows.
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const { z } = require("zod");

const server = new McpServer({ name: "ts-side", version: "1.32.2" });
const text = (words) => ({ content: [{ type: "text", text: words }] });
server.registerTool("add", { description: "Add two numbers.", inputSchema: { x: z.number(), y: z.number() } },
  async ({ x, y }) => text(String(x + y)));
server.registerTool("explode", { description: "Always throws.", inputSchema: { reason: z.string() } },
  async ({ reason }) => { throw new Error(reason); });
server.registerTool("enable_subtract", { description: "Offer subtract from now on." }, async () => {
  server.registerTool("subtract", { description: "Subtract y from x.", inputSchema: { x: z.number(), y: z.number() } },
    async ({ x, y }) => text(String(x - y)));
  return text("subtract is now available");
});
server.registerTool("add_note", { description: "Offer one more resource." }, async () => {
  server.registerResource("note", "info://note", { mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, text: "a note" }] }));
  return text("info://note is now available");
});
server.registerTool("add_greeting", { description: "Offer one more prompt." }, async () => {
  server.registerPrompt("greet", { description: "Greet someone.", argsSchema: { name: z.string() } },
    ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Greet ${name}.` } }] }));
  return text("greet is now available");
});
server.registerResource("static", "info://static", { mimeType: "text/plain" },
  async (uri) => ({ contents: [{ uri: uri.href, text: "static text" }] }));
server.registerResource("broken", "info://broken", { mimeType: "text/plain" },
  async () => { throw new Error("the disk is gone"); });
server.registerPrompt("review", { description: "Review code.", argsSchema: { code: z.string() } },
  ({ code }) => ({ messages: [{ role: "user", content: { type: "text", text: `Please review: ${code}` } }] }));
server.connect(new StdioServerTransport());
"""


@pytest.mark.skipif(not NODE or not (pathlib.Path(TS_SDK) / "@modelcontextprotocol" / "sdk").is_dir(),
                    reason="the TypeScript SDK is not installed (set MCP_TS_SDK to a node_modules folder that holds it)")
def test_the_typescript_sdks_server_by_the_course_and_by_the_spec(tmp_path, monkeypatch):
    # The SDK's McpServer (1.32): silent on bad input, isError for an unknown tool (both standards, as the Python
    # SDK's); its gate and its isError for a missing argument by the course alone. Its list changes, prompts and
    # failing handler as the course asks. It serves no 2026-07-28. Every verdict of both cards.
    (tmp_path / "ts_server.cjs").write_text(TS_SERVER, encoding="utf-8")
    monkeypatch.setenv("NODE_PATH", TS_SDK)  # the server's processes find the SDK and zod there
    cards = cards_in_both_standards(["node", str(tmp_path / "ts_server.cjs")], *SDK_FLAGS, "--change-resources",
                                    "add_note", "--change-prompts", "add_greeting")
    no_2026 = "the server serves no 2026-07-28: server/discover was answered error -32601 Method not found"
    unjudged = {"tool-not-allowed": ("not_applicable", "--not-offered allow-list: the server has none"),
                **{rule: ("not_applicable", no_2026) for rule in RULE_IDS[29:34]}}
    assert verdicts(cards["course"]) == {
        **{rule: ("fail", text) for rule, text in SILENT.items()}, **unjudged,
        "handshake-gate": ("fail", "before initialize, tools/list was answered a result, not -32600; between the "
                                   "initialize response and notifications/initialized, tools/list was answered a "
                                   "result, not -32600; after a notifications/initialized that came before initialize, "
                                   "tools/list was answered a result, not -32600: only an initialize that succeeded "
                                   "opens the session"),
        "unknown-tool": ("fail", "the unknown tool was answered a result with isError true, not -32601"),
        "missing-argument": ("fail", "add without x, y was answered a result with isError true, not -32602")}
    assert verdicts(cards["spec"]) == {
        **{rule: ("fail", text) for rule, text in SILENT.items()}, **unjudged,
        "unknown-tool": ("fail", "the unknown tool was answered a result with isError true, not an error: the spec "
                                 "counts an unknown tool among protocol errors")}
    assert both_verdicts(cards["course"]) == both_verdicts(cards["spec"]) == {
        **{rule: ("pass", "pass") for rule in ("no-traceback", "quiet-before-initialized", "tool-error-says-why",
                                               "tools-list-changed", "resources-by-uri", "prompt-variables",
                                               "resources-list-changed", "prompts-list-changed", "exit-on-eof")},
        "handshake-gate": ("fail", "pass"), "unknown-tool": ("fail", "fail"), "missing-argument": ("fail", "pass")}
    assert [(card["spec_revision"], card["exit_status"], card["untested_flags"]) for card in cards.values()] == [
        ("2025-06-18", 1, []), ("2025-11-25", 1, [])]


# ---------------------------------------------------------------------------------------------------
# The card as text, as JSON, and its exit status
# ---------------------------------------------------------------------------------------------------

def test_the_card_of_a_server_that_answers_notifications_reads_whole():
    # What a student who has read course 000 reads: a row a rule, its passage, and the bytes of the one ✗.
    command = NAIVE + ["answers-notifications"]
    done = run_card("--level", "000", *naive_servers.FLAGS, "--", *command)
    assert done.returncode == 1
    assert done.stdout == EXPECTED_CARD.replace("COMMAND", shlex.join(command))


EXPECTED_CARD = """\
report card: COMMAND
the server serves the handshake (initialize agreed 2025-06-18); 2026-07-28 (server/discover lists 2026-07-28,
  2025-11-25, 2025-06-18)
judged by the course; where the lab and the spec differ, both verdicts are shown (--spec judges by the spec)
flags: --not-allowed delete_db --raises 'divide {"x": 1, "y": 0}' --handler-fails 'tools/call {"name": []}'
  --change-tools enable_subtract --change-resources add_note --change-prompts add_greeting

course 000
  ✗ notification-no-response: a notification gets no response
      course 000, "Three message shapes"
      Notification — a request shape with no id key at all. Fire-and-forget: the receiver must not reply.
      the server answered a notification (a result)
      → {"jsonrpc": "2.0", "method": "notifications/initialized"}
      → {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "report-card:never-sent"}}
      ← {"jsonrpc": "2.0", "id": null, "result": {}}
  ✓ null-id-is-a-request: a request with "id": null is answered -32600: it is no notification
      course 000, "Three message shapes"
  ✓ response-shape: every response carries a result or an error, never both, in every session
      course 000, "Three message shapes"
  ✓ one-response: each request gets exactly one response, and a response gets none
      course 000, "Three message shapes"
  ✓ notification-has-no-id: the server's notifications carry no id, its requests one; each says jsonrpc 2.0
      course 000, "Three message shapes"
  ✓ parse-error: a line that is not JSON is answered -32700, with id null
      course 000, "The five standard error codes"
  ✓ not-a-message: JSON that is no message is answered -32600 with id null, and the server lives on
      course 000, "The five standard error codes"
  ✓ invalid-request: a message whose jsonrpc is not "2.0" is answered -32600
      course 000, "The five standard error codes"
  ✓ method-not-found: an unknown method is answered -32601
      course 000, "The five standard error codes"
  ✓ internal-error: a handler that fails is an error response (-32603), and the session lives on
      course 000, "The five standard error codes"
  ✓ no-traceback: no stack trace crosses the wire, of any language, whatever goes wrong
      course 000, "The five standard error codes"
  ✓ handshake-gate: nothing but initialize (and ping) is served before notifications/initialized, which opens the gate
    only after initialize
      course 000, "The stateful handshake"
  ✓ quiet-before-initialized: before notifications/initialized the server sends nothing but ping and log messages
      course 000, "The stateful handshake"
  ✓ version-negotiation: initialize agrees on a version the server speaks, not newer than offered
      course 000, "The stateful handshake" (step 2); course 002, "The Initialization Handshake"
  ✓ server-info: initialize's result names the server: serverInfo, with its name and version
      course 000, "The stateful handshake"
  ✓ capabilities-objects: each capability the server declares is an object, never true
      course 000, "The stateful handshake"
  ✓ negotiated-capabilities: the server sends no notification its capabilities did not promise, and asks nothing the
    client did not declare
      course 000, "The stateful handshake"
  ✓ flat-methods: a declared primitive is served by its flat methods, an undeclared one is not
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ unknown-tool: an unknown tool is answered -32601
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
      the spec: an error, -32602 in its example (spec 2025-06-18, server/tools, "Error Handling")
      by the spec: ✓ (information: the unknown tool was answered error -32601 unknown tool: report_card_no_such_tool,
        where the spec's example has -32602)
  ✓ tool-not-allowed: a tool the session may not call is refused -32600, before its arguments are checked
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ missing-argument: a call without a required argument is answered -32602
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ tool-error-is-result: a tool that raises gives a result with isError true, not an error
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ tool-error-says-why: a failing tool's text says why it failed, not only that it did
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ tools-list-changed: a change to the tools sends a bare notifications/tools/list_changed before the next response
      course 000, "listChanged: the one dynamic capability"
  ✓ survives-bad-input: after bad input of every kind, the session still works
      course 000, "The five standard error codes"

stdio
  ✓ stdout-only-json: nothing but JSON-RPC messages on the server's stdout, in any rule's session
      spec 2025-06-18, Transports, "stdio"
  ✓ exit-on-eof: the server exits when its stdin ends
      course 004, section 4

course 000: 24/25 rules hold
stdio: 2/2 rules hold
exit status 1: a rule fails
"""


def test_the_json_card_keeps_its_shape():
    # --json: the same card for a grading script, its schema versioned; the failing row whole.
    done = run_card("--json", "--only", "notification-no-response,unknown-tool", "--", *NAIVE,
                    "answers-notifications")
    card = json.loads(done.stdout)
    assert (done.returncode, list(card)) == (1, ["schema_version", "command", "standard", "spec_revision", "levels",
                                                 "flags", "not_offered", "eras", "eras_text", "diagnosis", "rules",
                                                 "summary", "untested_flags", "bounds", "used", "stopped_by",
                                                 "exit_status"])
    assert [card[key] for key in ("schema_version", "command", "standard", "spec_revision", "levels", "flags",
                                  "not_offered", "diagnosis", "untested_flags", "exit_status")] == [
        1, NAIVE + ["answers-notifications"], "course", "2025-06-18", ["000", "002", "004"], [], [], None, [], 1]
    assert card["eras"] == {"handshake": {"version": "2025-06-18"},
                            "stateless": {"versions": ["2026-07-28", "2025-11-25", "2025-06-18"]}}
    assert card["rules"][0] == {
        "id": "notification-no-response", "level": "000", "claim": "a notification gets no response",
        "passage": 'course 000, "Three message shapes"',
        "quote": "Notification — a request shape with no id key at all. Fire-and-forget: the receiver must not "
                 "reply.",
        "outcome": "fail", "reason": {"code": "wrong_answer"}, "text": "the server answered a notification (a result)",
        "exchange": [{"dir": "→", "line": '{"jsonrpc": "2.0", "method": "notifications/initialized"}'},
                     {"dir": "→", "line": '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": '
                                          '{"requestId": "report-card:never-sent"}}'},
                     {"dir": "←", "line": '{"jsonrpc": "2.0", "id": null, "result": {}}'}],
        "judged_by": "course", "differs": None}
    assert card["rules"][1]["differs"] == {
        "course": {"expects": "-32601", "claim": "an unknown tool is answered -32601", "passage": LATTICE,
                   "outcome": "pass", "text": ""},
        "spec": {"expects": "an error, -32602 in its example",
                 "claim": "an unknown tool is answered with an error, not a result",
                 "passage": 'spec 2025-06-18, server/tools, "Error Handling"', "outcome": "pass",
                 "text": "the unknown tool was answered error -32601 unknown tool: report_card_no_such_tool, where the "
                         "spec's example has -32602"}}
    assert card["summary"] == {"000": {"pass": 1, "fail": 1, "not_applicable": 0, "not_tested": 0,
                                       "could_not_run": 0}}


def test_spec_offers_the_newest_revision_and_judges_by_the_one_agreed():
    # --spec offers 2025-11-25; the base agrees, and is judged by it: no failure, and where the course's choice is one
    # the spec only allows (an unknown tool's -32601, a missing argument's -32602 where 2025-11-25 prefers isError),
    # information. Every row cites the spec, in the revision agreed.
    card = card_of(NAIVE, "--spec", *naive_servers.FLAGS)
    assert (card["spec_revision"], card["eras"]["handshake"], card["exit_status"]) == (
        "2025-11-25", {"version": "2025-11-25"}, 0)
    assert [(row["id"], row["passage"], row["text"]) for row in card["rules"] if row["text"]] == [
        ("unknown-tool", 'spec 2025-11-25, server/tools, "Error Handling"',
         "the unknown tool was answered error -32601 unknown tool: report_card_no_such_tool, where the spec's example "
         "has -32602"),
        ("missing-argument", 'spec 2025-11-25, server/tools, "Error Handling"',
         "add without x, y was answered error -32602 missing argument: x; 2025-11-25 makes a missing argument an input "
         "validation error, an isError result")]
    assert all(row["judged_by"] == "spec" for row in card["rules"])
    assert [row["passage"] for row in card["rules"] if row["level"] == "000"][:3] == [
        'spec 2025-11-25, basic, "Notifications"', 'spec 2025-11-25, basic, "Requests"; JSON-RPC 2.0, sections 5 and 5.1',
        'spec 2025-11-25, basic, "Responses"']


OLDER = r"""
import sys
sys.path.insert(0, sys.argv[1])
import naive_servers


class Older(naive_servers.Base):
    # Speaks 2025-06-18 at newest, and refuses a call without a required argument with an isError result.

    def negotiate(self, requested):
        return "2025-06-18"

    def call_tool(self, params):
        arguments = params.get("arguments") or {}
        missing = [key for key in self.required.get(params.get("name"), []) if key not in arguments]
        if missing:
            return {"content": [{"type": "text", "text": f"missing argument: {missing[0]}"}], "isError": True}
        return super().call_tool(params)


Older().main()
"""


def test_spec_judges_a_server_by_the_newest_revision_it_speaks():
    # Offered 2025-11-25, a server that speaks 2025-06-18 at newest answers that: it is judged, and cited, by
    # 2025-06-18, whose text lists invalid arguments among protocol errors (-32602): its isError is information.
    card = card_of([PYTHON, "-c", OLDER, str(HERE / "corpus")], "--spec", "--only",
                   "version-negotiation,missing-argument")
    assert (card["spec_revision"], [(row["id"], row["outcome"], row["passage"], row["text"]) for row in card["rules"]]) \
        == ("2025-06-18", [
            ("version-negotiation", "pass", 'spec 2025-06-18, basic/lifecycle, "Version Negotiation"', ""),
            ("missing-argument", "pass", 'spec 2025-06-18, server/tools, "Error Handling"',
             "add without x, y was answered a result with isError true; 2025-06-18 lists invalid arguments among the "
             "protocol errors, -32602")])


def test_by_the_spec_a_should_is_information_never_a_failure():
    # A server that answers a missing argument with isError is refused as 2025-11-25 asks; one that sends a
    # list_changed before the session is live breaks what the spec only recommends: information, exit status 0.
    card = card_of(NAIVE + ["list-changed-on-initialize"], "--spec", *naive_servers.FLAGS)
    row = next(row for row in card["rules"] if row["id"] == "quiet-before-initialized")
    assert (row["outcome"], row["text"], row["differs"]["course"]["outcome"], card["exit_status"]) == (
        "pass", "the server sent notifications/tools/list_changed before notifications/initialized, in the card's "
                "first sessions: the session is not live yet", "fail", 0)
    assert report_card.row_text(row).startswith("information, not a failure (the spec only recommends this, or "
                                                 "leaves it open): ")


def test_without_its_flag_a_rule_is_not_tested_and_names_the_flag():
    # What only the server's author knows comes from a flag; without it the rule is not tested (not passed), and
    # its row names the flag; the card's exit status is 3.
    card = card_of(NAIVE)
    assert {row["id"]: (row["text"], row["reason"]) for row in card["rules"] if row["outcome"] == "not_tested"} == {
        "internal-error": ("--handler-fails 'METHOD {params}' would test it (a request one of the server's handlers "
                           "fails on: a bug, not a tool's own exception)",
                           {"code": "needs_flag", "flag": "--handler-fails"}),
        "tool-not-allowed": ("--not-allowed TOOL would test it (a tool that exists but that this session may not "
                             "call)", {"code": "needs_flag", "flag": "--not-allowed"}),
        "tool-error-is-result": ("--raises 'TOOL {arguments}' would test it (a call of a tool that raises)",
                                 {"code": "needs_flag", "flag": "--raises"}),
        "tool-error-says-why": ("--raises 'TOOL {arguments}' would test it (a call of a tool that raises)",
                                {"code": "needs_flag", "flag": "--raises"}),
        "tools-list-changed": ("--change-tools 'TOOL {arguments}' would test it (a call that changes the tool list)",
                               {"code": "needs_flag", "flag": "--change-tools"}),
        "resources-list-changed": ("--change-resources 'TOOL {arguments}' would test it (a call that changes the "
                                   "resource list)", {"code": "needs_flag", "flag": "--change-resources"}),
        "prompts-list-changed": ("--change-prompts 'TOOL {arguments}' would test it (a call that changes the prompt "
                                 "list)", {"code": "needs_flag", "flag": "--change-prompts"}),
    }
    assert card["exit_status"] == 3


def test_a_feature_the_server_lacks_is_not_applicable_as_its_capabilities_or_not_offered_say():
    # --not-offered says what only the author knows is absent; a capability that promises no list change says so
    # itself, and then the card needs no flag.
    card = card_of(NAIVE, "--not-offered", "allow-list,tool-list-changes", "--only",
                   "tool-not-allowed,tools-list-changed,resources-list-changed")
    assert {row["id"]: (row["outcome"], row["text"]) for row in card["rules"]} == {
        "tool-not-allowed": ("not_applicable", "--not-offered allow-list: the server has none"),
        "tools-list-changed": ("not_applicable", "--not-offered tool-list-changes: the server has none"),
        "resources-list-changed": ("not_tested", "--change-resources 'TOOL {arguments}' would test it (a call that "
                                                 "changes the resource list)")}
    card = card_of(NAIVE + ["undeclared-prompts"], "--only", "prompts-list-changed")
    assert [(row["outcome"], row["text"], row["reason"]) for row in card["rules"]] == [
        ("not_applicable", "the server declares no prompts.listChanged",
         {"code": "not_declared", "capability": "prompts.listChanged"})]


def test_the_exit_status_says_whether_every_rule_of_the_level_was_tested_and_holds():
    # A 2026-07-28 mistake fails level 004 (the default); at level 002 nothing fails, but without flags some rules
    # are not tested (3); a rule chosen with --only decides alone.
    server = ["--", *NAIVE, "no-cache-hints"]
    assert [run_card(*args, *server).returncode for args in (
        [], ["--level", "002"], ["--only", "cache-hints"], ["--only", "parse-error"])] == [1, 3, 1, 0]


EXIT_TABLE = [  # (the outcomes of a card's rules, its exit status): could not run, then a failure, then untested
    ({"pass"}, 0),
    ({"pass", "not_applicable"}, 0),
    ({"pass", "not_tested"}, 3),
    ({"pass", "fail", "not_tested"}, 1),
    ({"pass", "fail", "could_not_run"}, 4),
    ({"not_tested", "could_not_run"}, 4),
    (set(), 0),
]


def test_the_exit_statuses_take_precedence_in_their_documented_order():
    # 4 before 1 before 3 before 0 (2 is the command line's, before any rule runs).
    assert [report_card.exit_status(found) for found, _ in EXIT_TABLE] == [status for _, status in EXIT_TABLE]
    assert list(report_card.EXIT_STATUSES) == [2, 4, 1, 3, 0]


# ---------------------------------------------------------------------------------------------------
# No session: one diagnosis, within one time limit; stdio's rules keep their verdicts
# ---------------------------------------------------------------------------------------------------

ID_AS_STRING = r"""
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}
    print(json.dumps({"jsonrpc": "2.0", "id": str(message["id"]), "result": result}), flush=True)
"""
NO_SESSION = [  # (the server, its time limit, the diagnosis's code and words, what stdio's rules say)
    (["cat"], "5", "echo", "the server wrote back the initialize request it was sent, unanswered",
     {"stdout-only-json": "pass", "exit-on-eof": "pass"}),
    ([PYTHON, "-c", "print(1)"], "5", "not_a_message",
     "the server wrote 1: JSON, but no JSON-RPC message; then the server exited (status 0)",
     {"stdout-only-json": "fail", "exit-on-eof": "pass"}),
    (["sleep", "1000"], "2", "silent", "no response to initialize: none came within 2 s",
     {"stdout-only-json": "pass", "exit-on-eof": "fail"}),
    ([PYTHON, "-c", ID_AS_STRING], "5", "id_type",
     'the answer to initialize came with id "1", where the request\'s id is 1: the same number, another JSON type',
     {"stdout-only-json": "pass", "exit-on-eof": "pass"}),
    ([PYTHON, "-c", "import nosuchmodule"], "5", "exited",
     "no response to initialize: the server exited (status 1); its stderr ends: ModuleNotFoundError: No module named "
     "'nosuchmodule'", {"stdout-only-json": "pass", "exit-on-eof": "pass"}),
]


def test_a_server_that_opens_no_session_gets_one_diagnosis_in_three_processes():
    # Three first processes, side by side, each waiting one time limit at most: then one diagnosis, stdio's rules
    # judged without a session, every other rule "could not run", and exit status 4.
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(NO_SESSION)) as pool:
        judged = list(pool.map(lambda row: report_card.judge(["--timeout", row[1], "--", *row[0]]), NO_SESSION))
    found = [((card["diagnosis"]["code"], card["diagnosis"]["text"]),
              {row["id"]: row["outcome"] for row in card["rules"] if row["level"] == "stdio"},
              {row["outcome"] for row in card["rules"] if row["level"] != "stdio"}, card["exit_status"],
              sum(entry["dir"] == "session" for entry in kept.tape)) for card, kept in judged]
    assert found == [((code, words), stdio, {"could_not_run"}, 4, 3) for _, _, code, words, stdio in NO_SESSION]
    assert {row["reason"]["diagnosis"] for card, _ in judged for row in card["rules"]
            if row["outcome"] == "could_not_run"} == {code for _, _, code, _, _ in NO_SESSION}


def test_the_card_of_a_server_that_echoes_reads_whole():
    # cat as the server: the card's own lines come back; it takes none of them for an answer.
    done = run_card("--timeout", "5", "--", "cat")
    assert done.returncode == 4
    assert done.stdout == ECHO_CARD


ECHO_CARD = """\
report card: cat
no session opened: the server wrote back the initialize request it was sent, unanswered
      → {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities…
      ← {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities…
      to fix: answer each request with a response that carries its id and a result or an error: a command that copies
        its input back, as cat does, is no server

stdio
  ✓ stdout-only-json: nothing but JSON-RPC messages on the server's stdout, in any rule's session
      spec 2025-06-18, Transports, "stdio"
  ✓ exit-on-eof: the server exits when its stdin ends
      course 004, section 4

! could not run (no session opened): notification-no-response, null-id-is-a-request, response-shape, one-response,
  notification-has-no-id, parse-error, not-a-message, invalid-request, method-not-found, internal-error, no-traceback,
  handshake-gate, quiet-before-initialized, version-negotiation, server-info, capabilities-objects,
  negotiated-capabilities, flat-methods, unknown-tool, tool-not-allowed, missing-argument, tool-error-is-result,
  tool-error-says-why, tools-list-changed, survives-bad-input, resources-by-uri, prompt-variables,
  resources-list-changed, prompts-list-changed, server-discover, meta, result-type, cache-hints, unsupported-version

course 000: 0/25 rules hold (25 could not run)
course 002: 0/4 rules hold (4 could not run)
course 004: 0/5 rules hold (5 could not run)
stdio: 2/2 rules hold
exit status 4: the server could not be run, no session opened, or a rule could not run
"""


def test_a_command_that_cannot_start_could_not_run_and_says_why():
    # Not a mistake on the card's command line: the server could not be run (4), every rule with it.
    done = run_card("--json", "--", "report-card-no-such-command")
    card = json.loads(done.stdout)
    assert (done.returncode, card["diagnosis"]["code"], card["diagnosis"]["text"]) == (
        4, "cannot_start", "the command cannot be started: No such file or directory")
    assert {row["outcome"] for row in card["rules"]} == {"could_not_run"}


# ---------------------------------------------------------------------------------------------------
# Bounded: deadlines for a rule and for the card; no process left behind
# ---------------------------------------------------------------------------------------------------

def test_a_rule_ends_at_its_deadline_and_the_card_at_its_own():
    # A server that holds a request: the rule's deadline ends the wait (a failure, said so) before --timeout does;
    # the card's deadline ends the card (the rule cut short could not run, nor could the rules after it).
    holds = NAIVE + ["holds-requests-until-initialized"]
    card = card_of(holds, "--timeout", "600", "--rule-deadline", "8", "--only", "handshake-gate")
    assert [(row["outcome"], row["reason"], row["text"]) for row in card["rules"]] == [
        ("fail", {"code": "no_response", "why": "deadline"},
         "between the initialize response and notifications/initialized, no response to tools/list: the rule's "
         "deadline (8 s) passed first")]
    card = card_of(holds, "--timeout", "600", "--deadline", "8", "--jobs", "1", "--only",
                   "parse-error,handshake-gate,survives-bad-input")
    assert [(row["outcome"], row["reason"]) for row in card["rules"]] == [
        ("pass", None), ("could_not_run", {"code": "card_deadline"}), ("could_not_run", {"code": "card_deadline"})]
    assert card["exit_status"] == 4


LEAVES_A_CHILD = r"""
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # only the process group's SIGKILL ends it
child = subprocess.Popen(["sleep", "1000"])
with open(sys.argv[1], "a") as pids:
    pids.write(f"{child.pid}\n")
sys.stdin.read()  # never answers; at the end of its input it goes on, its child too
time.sleep(1000)
"""


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, ended and not yet reaped by its new parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists() or os.name != "posix",
                    reason="process groups and /proc are Linux's")
def test_no_process_is_left_behind_not_even_a_child_that_ignores_sigterm(tmp_path):
    # Each server process starts a child and ignores SIGTERM: its whole group is killed, children and all.
    pids = tmp_path / "pids"
    card = card_of([PYTHON, "-c", LEAVES_A_CHILD, str(pids)], "--timeout", "5")
    started = [int(pid) for pid in pids.read_text().split()]
    assert (card["exit_status"], len(started), [pid for pid in started if alive(pid)]) == (4, 3, [])


# ---------------------------------------------------------------------------------------------------
# The course's codes are the card's own
# ---------------------------------------------------------------------------------------------------

def test_the_card_judges_by_the_courses_codes_whatever_the_labs_constants_say():
    # A lesson's exercise turns the lab's unknown-tool code into the spec's: the card still expects the course's.
    patched = ("import sys, mcp_min; mcp_min.UNKNOWN_TOOL = mcp_min.TOOL_NOT_ALLOWED = mcp_min.NOT_INITIALIZED = "
               "-32602; import report_card; sys.exit(report_card.main(sys.argv[1:]))")
    done = subprocess.run([PYTHON, "-c", patched, "--only", "unknown-tool,tool-not-allowed,handshake-gate",
                           *naive_servers.FLAGS, "--", *NAIVE], capture_output=True, text=True, cwd=HERE,
                          timeout=CARD_TIMEOUT)
    assert (done.returncode, done.stdout.splitlines()[-2]) == (0, "course 000: 3/3 rules hold"), done.stdout


def test_the_board_and_the_card_read_one_table_of_codes():
    # The board's codes are the table's, each once; the card's rules read the same table.
    assert board.COURSE_CODES == (-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022)
    assert report_card.COURSE is board.CODES


# ---------------------------------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------------------------------

USAGE_TABLE = [  # (the arguments, the exit status, the first line on stderr)
    ([], 2, "report_card: no server command: put it after -- (python report_card.py --help shows the usage)"),
    (["--level", "003", "--", "x"], 2, "report_card: argument --level: is 000, 002 or 004, not '003' (python "
                                       "report_card.py --help shows the usage)"),
    (["--bogus", "--", "x"], 2, "report_card: unrecognized arguments: --bogus (python report_card.py --help shows the "
                                "usage)"),
    (["--timeout", "soon", "--", "x"], 2, "report_card: argument --timeout: invalid seconds value: 'soon' (python "
                                          "report_card.py --help shows the usage)"),
    (["--jobs", "0", "--", "x"], 2, "report_card: argument --jobs: takes a whole number, 1 or more, not '0' (python "
                                    "report_card.py --help shows the usage)"),
    (["--board", "--jobs", "2", "--", "x"], 2, "report_card: --board draws one session at a time, so it judges one "
                                               "rule at a time: not --jobs 2 (python report_card.py --help shows the "
                                               "usage)"),
    (["--only", "nosuch", "--", "x"], 2, "report_card: argument --only: no rule nosuch; python report_card.py --rules "
                                         "lists them (python report_card.py --help shows the usage)"),
    (["--raises", "boom {", "--", "x"], 2, "report_card: argument --raises: 'boom {' is not a name, then one JSON "
                                           "object (Expecting property name enclosed in double quotes: line 1 column "
                                           "2 (char 1)) (python report_card.py --help shows the usage)"),
    (["--not-offered", "wings", "--", "x"], 2, "report_card: argument --not-offered: no feature wings; one of "
                                               "allow-list, tool-list-changes, resource-list-changes, "
                                               "prompt-list-changes (python report_card.py --help shows the usage)"),
    (["--not-offered", "allow-list", "--not-allowed", "x", "--", "x"], 2,
     "report_card: --not-offered allow-list and --not-allowed: a feature the server lacks cannot be tested (python "
     "report_card.py --help shows the usage)"),
    (["x", "--", "y"], 2, "report_card: 'x' comes before --: the server's command goes after it (python "
                          "report_card.py --help shows the usage)"),
]


def test_a_mistake_on_the_command_line_says_what_it_is_in_one_line():
    # Each mistake: exit status 2 and one line naming it, before any server starts.
    done = [run_card(*args) for args, _, _ in USAGE_TABLE]
    assert [(run.returncode, run.stderr.splitlines()) for run in done] == [(code, [line]) for _, code, line in
                                                                           USAGE_TABLE]


def test_help_prints_the_usage_the_outcomes_and_the_exit_statuses():
    # -h and --help: the usage on stdout, exit status 0; no server is started (-h after -- would be the server's).
    done = [run_card(flag) for flag in ("-h", "--help")]
    assert [run.returncode for run in done] == [0, 0]
    assert done[0].stdout == done[1].stdout
    printed = done[0].stdout
    assert printed.startswith("usage: python report_card.py [flags] -- SERVER COMMAND [ARGS ...]\n")
    assert [line for line in printed.splitlines() if line.startswith("  ") and line[2:3].isdigit()] == [
        f"  {status}  {words}" for status, words in report_card.EXIT_STATUSES.items()]


def test_a_flag_naming_a_tool_the_server_does_not_list_is_a_mistake_said_in_one_line():
    # Checked against tools/list before any rule runs: the tool, and what the server lists instead.
    done = run_card("--raises", 'divde {"x": 1}', "--change-tools", "enable_subtract", "--", *NAIVE)
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (2, "", [
        "report_card: --raises names divde, which the server does not list (it lists add, divide, delete_db, "
        "enable_subtract, add_note, add_greeting)"])


def test_rules_lists_every_rule_with_its_passage():
    # --rules: an id a line, with its level and claim, then its passage.
    printed = run_card("--rules").stdout.splitlines()
    assert [line.split()[0] for line in printed[0::2]] == RULE_IDS
    assert [line.strip() for line in printed[1::2]] == [PASSAGES[id] for id in RULE_IDS]


# ---------------------------------------------------------------------------------------------------
# The text card and the JSON agree, rule by rule
# ---------------------------------------------------------------------------------------------------


def test_the_text_card_and_the_json_agree_rule_by_rule():
    # Every outcome, from cards that have each: a failure, untested rules, rules that do not apply, no session.
    cards = [card_of(NAIVE + ["no-cache-hints"]), card_of(TINY), card_of(["sleep", "1000"], "--timeout", "2")]
    assert [outcomes_in_text(report_card.text(card)) for card in cards] == [outcomes(card) for card in cards]
    assert set().union(*(outcomes(card).values() for card in cards)) == set(report_card.OUTCOMES)


# ---------------------------------------------------------------------------------------------------
# The wire: replies matched by id, every read with a deadline
# ---------------------------------------------------------------------------------------------------

SHUFFLER = r"""
import json, sys
print("a stray line")
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}))
first, second = json.loads(sys.stdin.readline()), json.loads(sys.stdin.readline())
for message, id in ((second, second["id"]), (first, str(first["id"])), (first, first["id"])):
    print(json.dumps({"jsonrpc": "2.0", "id": id, "result": {"method": message["method"]}}), flush=True)
sys.stdin.read()
"""


def test_a_reply_is_matched_by_its_id_never_by_the_next_line():
    # Answers out of order, a stray line, a notification and a look-alike id ("1" for 1) come first.
    wire = Wire([PYTHON, "-c", SHUFFLER], timeout=TIMEOUT, record=tape())
    try:
        first, second = wire.request("tools/list"), wire.request("ping")
        assert wire.reply(first)["message"] == {"jsonrpc": "2.0", "id": 1, "result": {"method": "tools/list"}}
        assert wire.reply(second)["message"] == {"jsonrpc": "2.0", "id": 2, "result": {"method": "ping"}}
        assert [entry["line"] for entry in wire.received[:2]] == [
            "a stray line", '{"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", '
                            '"data": "hi"}}']
        assert [entry["message"]["id"] for entry in wire.unmatched()] == ["1"]
    finally:
        wire.close()


def test_a_server_that_never_answers_costs_the_time_limit_once_and_no_more():
    # The first wait ends at its deadline; a later one on the same server does not wait again; the process is ended.
    wire = Wire([PYTHON, "-c", "import sys; sys.stdin.read()"], timeout=0.5, record=tape())
    try:
        assert (wire.reply(wire.request("ping")), wire.silence()) == (None, "none came within 0.5 s")
        assert (wire.reply(wire.request("ping")), wire.silence()) == (
            None, "the server has answered nothing since a response failed to come within 0.5 s")
    finally:
        wire.close()
    assert wire.process.returncode is not None


def test_a_server_that_exits_is_told_by_its_status_and_its_last_words():
    # No response, and why: the exit status and the last line of stderr.
    wire = Wire([PYTHON, "-c", "import sys; sys.stderr.write('one\\nboom\\n'); sys.exit(3)"], timeout=TIMEOUT,
                record=tape())
    try:
        assert (wire.reply(wire.request("ping")), wire.silence()) == (None, "the server exited (status 3); its "
                                                                            "stderr ends: boom")
    finally:
        wire.close()


def test_a_server_that_floods_its_stdout_is_read_no_further_than_the_limit():
    # A server writing lines forever: the card reads so many and stops, rather than keep them all.
    flood = "import sys\nwhile True: sys.stdout.write('{}\\n')"
    wire = Wire([PYTHON, "-c", flood], timeout=TIMEOUT, record=tape())
    try:
        assert (wire.reply(wire.request("ping")), len(wire.received), wire.silence()) == (
            None, report_card.MAX_LINES, f"the server wrote more than {report_card.MAX_LINES} lines, and the card "
                                         "stopped reading")
    finally:
        wire.close()


# ---------------------------------------------------------------------------------------------------
# The card on the board's page
# ---------------------------------------------------------------------------------------------------

def card_line(process: subprocess.Popen, silence: str) -> str:
    """The next line on process's stderr within CARD_TIMEOUT: it may come only after a whole card has run."""
    return stderr_line(process, silence, bound=CARD_TIMEOUT)


def until(condition, what: str):
    """Poll condition() until it holds, or fail after CARD_TIMEOUT (a page on a loaded machine may be slow)."""
    deadline = time.monotonic() + CARD_TIMEOUT
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.05)


class CardOnBoard:
    """report_card.py --board on a server: its page's address, and the card it printed once done."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(CARD + ["--board", *args], cwd=HERE, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = card_line(self.process, "report_card printed no address")
        assert first.startswith("report_card: the board is at http://127.0.0.1:"), first
        self.url = first.split()[-1]

    def wait_done(self) -> str:
        """The line that says the card is on the board (every rule has run)."""
        return card_line(self.process, "report_card did not finish its card")

    def recording(self) -> dict:
        """GET /recording: the events, the state and the card."""
        with urllib.request.urlopen(self.url + "recording", timeout=TIMEOUT) as reply:
            return json.loads(reply.read())

    def close(self) -> tuple:
        """Press Enter; (the exit status, the card printed)."""
        try:
            self.process.stdin.write(b"\n")
            self.process.stdin.flush()
            return self.process.wait(timeout=CARD_TIMEOUT), self.process.stdout.read().decode()
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                stream.close()


BOARD_ARGS = ["--only", "notification-no-response,parse-error,unknown-tool", "--", *NAIVE, "answers-notifications"]


def test_the_board_serves_the_card_each_row_linked_to_the_messages_that_decided_it():
    # /recording holds the card: each ✗ row's numbers are the events of its exchange, each row's session its banner.
    board = CardOnBoard(*BOARD_ARGS)
    try:
        assert board.wait_done().startswith("report_card: the card is on the board; the page stays at")
        seen = board.recording()
    finally:
        code, printed = board.close()
    events = {event["n"]: event for event in seen["events"]}
    card = report_card.judge(BOARD_ARGS)[0]
    assert [(row["id"], row["mark"], [events[n]["line"] for n in row["events"]], events[row["session"]]["label"])
            for row in seen["card"]["rules"]] == [
        (row["id"], report_card.mark(row["outcome"]), [item["line"] for item in row["exchange"]],
         f"{row['id']}: {row['claim']}") for row in card["rules"]]
    assert (seen["card"]["summary"], code, printed) == (["course 000: 2/3 rules hold"], 1, report_card.text(card))


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="headless Chromium and chromedriver are not installed "
                    "(Debian: apt-get install chromium chromium-driver)")
def test_the_card_beside_the_diagram_in_a_real_browser():
    # The page shows the card once every rule has run; a click on the ✗ row marks its messages and opens the first.
    board = CardOnBoard(*BOARD_ARGS)
    try:
        with Browser() as browser:
            browser.open(board.url)
            board.wait_done()
            rows = "return [...document.querySelectorAll('#card li')].map(li => li.textContent)"
            until(lambda: len(browser.run(rows)) == 3, "the card's three rows on the page")
            seen = board.recording()
            assert browser.run("return document.getElementById('card').hidden") is False
            assert browser.run(rows) == [
                "✗notification-no-response: a notification gets no response "
                "course 000, \"Three message shapes\"the server answered a notification (a result)"
                + "".join(f"#{n}" for n in seen["card"]["rules"][0]["events"]),
                "✓parse-error: a line that is not JSON is answered -32700, with id null "
                "course 000, \"The five standard error codes\"",
                "✓unknown-tool: an unknown tool is answered -32601 "
                f"{LATTICE}course: -32601: ✓ · spec: an error, -32602 in its example: ✓"]
            summary = "return document.getElementById('card-summary').textContent"
            assert browser.run(summary) == "course 000: 2/3 rules hold"
            browser.run("document.querySelector('#card li[data-rule=\"notification-no-response\"]').click()")
            decided = seen["card"]["rules"][0]["events"]
            assert browser.run("return [...document.querySelectorAll('.row.decides')].map(r => Number(r.dataset.n))") \
                == decided
            assert browser.run("return document.querySelector('.row.selected').dataset.n") == str(decided[0])
            assert browser.run("return document.querySelector('#detail pre').textContent") == json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/initialized"}, indent=2)
            browser.run("document.querySelector('#card li[data-rule=\"notification-no-response\"] a:last-of-type')"
                        ".click()")
            assert browser.run("return document.querySelector('#detail pre').textContent") == json.dumps(
                {"jsonrpc": "2.0", "id": None, "result": {}}, indent=2)
    finally:
        board.close()
