"""The report card (issue 30): each rule against servers that keep it and servers that break it; the lab's own
servers; the official SDK's server; the card as text, as JSON and on the board, in a real browser.

Every card drives a real server command over real pipes. maintainers/naive_servers.py holds a naive base that keeps
every rule and one mistake a rule; the cards of all the mistakes run side by side (a few cards at a time, each
card's rules one after the other, as always). No test waits on a clock: each wait is for a line, with a deadline.
"""

import concurrent.futures
import functools
import json
import os
import pathlib
import shlex
import subprocess
import sys
import time
import urllib.request

import pytest

import naive_servers
import report_card
from lab_server import FLAGS as LAB_FLAGS
from report_card import Wire
from test_board import CHROMEDRIVER, CHROMIUM, TIMEOUT, Browser
from test_board import stderr_line as board_stderr_line

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in maintainers/)
PYTHON = sys.executable
NAIVE = [PYTHON, str(HERE / "maintainers" / "naive_servers.py")]
CARD = [PYTHON, str(HERE / "report_card.py")]
DEMO = [PYTHON, str(HERE / "server_demo.py")]
DEMO_FLAGS = ["--not-allowed", "delete_db", "--raises", 'count_lessons {"course": "postgres"}',
              "--change-tools", "enable_subtract"]
TINY = [PYTHON, str(HERE / "lessons" / "tiny_mcp.py")]
CARD_TIMEOUT = 600  # seconds a whole card may take in a test: a bound on a bug, never reached by a slow machine

RULE_IDS = ["notification-no-response", "null-id-is-a-request", "response-shape", "parse-error", "invalid-request",
            "method-not-found", "internal-error", "no-traceback", "handshake-gate", "version-negotiation",
            "capabilities-objects", "flat-methods", "unknown-tool", "tool-not-allowed", "missing-argument",
            "tool-error-is-result", "tools-list-changed", "survives-bad-input",
            "resources-by-uri", "prompt-variables", "resources-list-changed", "prompts-list-changed",
            "server-discover", "meta", "result-type", "cache-hints", "unsupported-version",
            "stdout-only-json", "exit-on-eof"]
LATTICE = 'course 000, "Dispatch to primitives, and the _call_tool error lattice"'
PASSAGES = {  # the passage each rule comes from, as the card prints it
    "notification-no-response": 'course 000, "Three message shapes"',
    "null-id-is-a-request": 'course 000, "Three message shapes"',
    "response-shape": 'course 000, "Three message shapes"',
    "parse-error": 'course 000, "The five standard error codes"',
    "invalid-request": 'course 000, "The five standard error codes"',
    "method-not-found": 'course 000, "The five standard error codes"',
    "internal-error": 'course 000, "The five standard error codes"',
    "no-traceback": 'course 000, "The five standard error codes"',
    "handshake-gate": 'course 000, "The stateful handshake"',
    "version-negotiation": 'course 000, "The stateful handshake" (step 2); course 002, "The Initialization Handshake"',
    "capabilities-objects": 'course 000, "The stateful handshake"',
    "flat-methods": LATTICE, "unknown-tool": LATTICE, "tool-not-allowed": LATTICE, "missing-argument": LATTICE,
    "tool-error-is-result": LATTICE,
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


def card_of(command: list, *flags: str) -> dict:
    """The card (as JSON) of a server command, judged in this process with the flags given."""
    return report_card.judge([*flags, "--", *command])[0]


def verdicts(card: dict) -> dict:
    """Each rule's verdict, by its id."""
    return {row["id"]: row["verdict"] for row in card["rules"]}


def run_card(*args: str) -> subprocess.CompletedProcess:
    """python report_card.py with these arguments, to its end."""
    return subprocess.run(CARD + list(args), capture_output=True, text=True, timeout=CARD_TIMEOUT, cwd=HERE)


@functools.cache
def cards_of_mistakes() -> dict:
    """The card of every naive mistake, with every flag: a few cards at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=6) as pool:
        cards = {name: pool.submit(card_of, NAIVE + [name], *naive_servers.FLAGS) for name in naive_servers.MISTAKES}
        return {name: future.result() for name, future in cards.items()}


# ---------------------------------------------------------------------------------------------------
# The naive servers: the base keeps every rule; each mistake breaks exactly its own
# ---------------------------------------------------------------------------------------------------

def test_the_rules_come_in_the_courses_order_under_fixed_ids():
    # A grading script relies on these ids; course 000 first, then 002, 004, stdio.
    assert [rule["id"] for rule in report_card.RULES] == RULE_IDS
    assert [rule["level"] for rule in report_card.RULES] == ["000"] * 18 + ["002"] * 4 + ["004"] * 5 + ["stdio"] * 2
    assert {rule["id"]: rule["passage"] for rule in report_card.RULES} == PASSAGES


def test_the_naive_base_keeps_every_rule():
    # The base, with every flag: nothing broken, nothing left unjudged.
    card = card_of(NAIVE, *naive_servers.FLAGS)
    assert verdicts(card) == {id: "pass" for id in RULE_IDS}
    assert report_card.summary_lines(card) == ["course 000: 18/18 rules hold", "course 002: 4/4 rules hold",
                                               "course 004: 5/5 rules hold", "stdio: 2/2 rules hold"]


def test_each_naive_mistake_breaks_exactly_its_own_rule_with_its_passage():
    # One ✗ a mistake, on its rule, citing its passage; nothing else judged differently from the base.
    found = {name: ([(row["id"], row["passage"]) for row in card["rules"] if row["verdict"] == "fail"],
                    [row["id"] for row in card["rules"] if row["verdict"] == "n/a"])
             for name, card in cards_of_mistakes().items()}
    expected = {name: ([(rule, PASSAGES[rule])], []) for name, (_, rule) in naive_servers.MISTAKES.items()}
    expected["undeclared-prompts"] = ([("flat-methods", PASSAGES["flat-methods"])], ["prompt-variables"])
    assert found == expected


def test_what_the_card_says_of_a_hang_a_crash_and_a_stray_print():
    # A server that hangs on one rule fails it after the time limit and gets the rest of its card; a crash is
    # told by its exit status and last words; a stray print() is charged to the stdout rule alone.
    cards = cards_of_mistakes()
    row = {name: next(row for row in cards[name]["rules"] if row["verdict"] == "fail")
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
            ['{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": ["not", "a", "name"], '
             '"arguments": "not an object"}}']),
        "print-on-stdout": (
            "16 lines on stdout that are not a JSON-RPC message, in the sessions of 12 rules, the first in "
            "internal-error's",
            ["calling ['not', 'a', 'name']", "calling ['not', 'a', 'name']", "calling report_card_no_such_tool"]),
    }


# ---------------------------------------------------------------------------------------------------
# The lab's servers: every rule that applies holds
# ---------------------------------------------------------------------------------------------------

def test_the_demo_server_keeps_every_rule_that_applies():
    # server_demo.py: all ✓; only the resource and prompt list changes, which it has no way to trigger, are n/a.
    card = card_of(DEMO, *DEMO_FLAGS)
    assert verdicts(card) == {id: "n/a" if id in ("resources-list-changed", "prompts-list-changed") else "pass"
                              for id in RULE_IDS}
    assert card["eras_text"] == ("the handshake (initialize agreed 2025-06-18); 2026-07-28 (server/discover lists "
                                 "2026-07-28, 2025-11-25, 2025-06-18)")


def test_tiny_mcp_keeps_every_rule_that_applies():
    # Course 004's hand-written server speaks only 2026-07-28: the handshake's rules and the list changes are n/a.
    card = card_of(TINY, "--raises", 'count_lessons {"course": "postgres"}')
    no_handshake = "not applicable: the server serves no handshake: initialize was answered error -32022 " \
                   "Unsupported protocol version"
    listen = "not applicable: a 2026-07-28 server tells list changes only on a subscriptions/listen stream"
    assert {row["id"]: row["text"] for row in card["rules"] if row["verdict"] != "pass"} == {
        "handshake-gate": no_handshake, "version-negotiation": no_handshake,
        "tool-not-allowed": "not applicable: needs --not-allowed TOOL: a tool that exists but that this session may "
                            "not call",
        "tools-list-changed": listen, "resources-list-changed": listen, "prompts-list-changed": listen,
        "resources-by-uri": "not applicable: the server declares no resources",
        "prompt-variables": "not applicable: the server declares no prompts",
    }


def test_the_lab_server_keeps_every_rule_of_course_000():
    # An mcp_min.MCPServer with course 000's add_tool registrations, on stdio: 18 of 18, and the exit status says so.
    done = run_card("--level", "000", *LAB_FLAGS, "--", PYTHON, str(HERE / "maintainers" / "lab_server.py"))
    assert (done.returncode, done.stdout.splitlines()[-3:]) == (
        0, ["", "course 000: 18/18 rules hold", "stdio: 2/2 rules hold"]), done.stdout


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


@server.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    server.run()
'''


def test_the_sdk_servers_card_shows_where_it_and_the_course_differ(tmp_path):
    # The SDK's server: silent on bad input, isError where the course has codes, prompts answered with code 0;
    # by the spec it keeps the gate, but not -32602 for an unknown tool or a missing argument.
    pytest.importorskip("mcp.server.mcpserver", reason="the official SDK (mcp==2.3.0) is not installed")
    (tmp_path / "sdk_server.py").write_text(SDK_SERVER, encoding="utf-8")
    # Its processes take a second each to start: three rules at a time, and time enough on a loaded machine.
    card = card_of([PYTHON, str(tmp_path / "sdk_server.py")], "--raises", 'explode {"reason": "boom"}',
                   "--change-tools", "enable_subtract", "--jobs", "3", "--timeout", "30")
    broken = {"null-id-is-a-request", "parse-error", "invalid-request", "handshake-gate", "unknown-tool",
              "missing-argument", "tools-list-changed", "prompt-variables"}
    unjudged = {"tool-not-allowed", "resources-list-changed", "prompts-list-changed"}
    assert verdicts(card) == {id: "fail" if id in broken else "n/a" if id in unjudged else "pass" for id in RULE_IDS}
    assert {row["id"]: (row["differs"]["course"]["verdict"], row["differs"]["spec"]["verdict"])
            for row in card["rules"] if row["differs"] and row["verdict"] != "n/a"} == {
        "handshake-gate": ("fail", "pass"), "unknown-tool": ("fail", "fail"), "missing-argument": ("fail", "fail")}
    assert {row["id"]: row["text"] for row in card["rules"] if row["id"] in (
            "handshake-gate", "unknown-tool", "prompt-variables", "tools-list-changed")} == {
        "handshake-gate": "before initialize, tools/list was answered error -32602 Invalid request parameters, not "
                          "-32600; between the initialize response and notifications/initialized, tools/list was "
                          "answered a result, not -32600",
        "unknown-tool": "the unknown tool was answered a result with isError true, not -32601",
        "prompt-variables": "review without code was answered error 0 Missing required arguments: {'code'}, not -32602",
        "tools-list-changed": "the capabilities declare tools.listChanged false, not true, yet "
                              "notifications/tools/list_changed comes: a client that reads them never listens for it",
    }
    assert report_card.summary_lines(card) == ["course 000: 10/17 rules hold (1 not applicable)",
                                               "course 002: 1/2 rules hold (2 not applicable)",
                                               "course 004: 5/5 rules hold", "stdio: 2/2 rules hold"]


# ---------------------------------------------------------------------------------------------------
# The card as text, as JSON, and its exit status
# ---------------------------------------------------------------------------------------------------

def test_the_card_of_a_server_that_answers_notifications_reads_whole():
    # What a student who has read course 000 reads: a row a rule, its passage, and the bytes of the one ✗.
    command = NAIVE + ["answers-notifications"]
    done = run_card(*naive_servers.FLAGS, "--", *command)
    assert done.returncode == 1
    assert done.stdout == EXPECTED_CARD.replace("COMMAND", shlex.join(command))


EXPECTED_CARD = """\
report card: COMMAND
the server serves the handshake (initialize agreed 2025-06-18); 2026-07-28 (server/discover lists 2026-07-28,
  2025-11-25, 2025-06-18)
judged by the course; where the lab and the spec differ, both verdicts are shown (--spec judges by the spec)
flags: --not-allowed delete_db --raises 'divide {"x": 1, "y": 0}' --change-tools enable_subtract --change-resources
  add_note --change-prompts add_greeting

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
  ✓ response-shape: a response echoes its request's id and carries a result or an error, never both
      course 000, "Three message shapes"
  ✓ parse-error: a line that is not JSON is answered -32700, with id null
      course 000, "The five standard error codes"
  ✓ invalid-request: a message whose jsonrpc is not "2.0" is answered -32600
      course 000, "The five standard error codes"
  ✓ method-not-found: an unknown method is answered -32601
      course 000, "The five standard error codes"
  ✓ internal-error: a handler that fails is an error response (-32603), and the session lives on
      course 000, "The five standard error codes"
  ✓ no-traceback: no traceback crosses the wire, whatever goes wrong
      course 000, "The five standard error codes"
  ✓ handshake-gate: nothing but initialize (and ping) is served before notifications/initialized
      course 000, "The stateful handshake"
      the spec: an error before initialize; between its response and initialized, served (spec 2025-06-18, Lifecycle,
        "Initialization": the initialization phase MUST be the first interaction (no code is named); after the
        initialize response a client may send requests (it SHOULD NOT before))
      by the spec: ✗ between the initialize response and notifications/initialized, tools/list was answered error
        -32600 server not initialized: the spec lets a client send it
  ✓ version-negotiation: initialize agrees on a version the server speaks, not newer than offered
      course 000, "The stateful handshake" (step 2); course 002, "The Initialization Handshake"
  ✓ capabilities-objects: each capability the server declares is an object, never true
      course 000, "The stateful handshake"
  ✓ flat-methods: a declared primitive is served by its flat methods, an undeclared one is not
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ unknown-tool: an unknown tool is answered -32601
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
      the spec: -32602 (spec 2025-06-18, server/tools, "Error Handling": an unknown tool is a protocol error, -32602
        in its example)
      by the spec: ✗ the unknown tool was answered error -32601 unknown tool: report_card_no_such_tool, not -32602
  ✓ tool-not-allowed: a tool the session may not call is refused -32600, before it runs
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
      the spec: an error, of any code (spec 2025-06-18, server/tools: an allow-list is not specified)
      by the spec: ✓
  ✓ missing-argument: a call without a required argument is answered -32602
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
      the spec: -32602 up to 2025-06-18; from 2025-11-25 an isError result too (spec 2025-06-18, server/tools, "Error
        Handling": invalid arguments are -32602; spec 2025-11-25 (SEP-1303): input validation errors SHOULD be tool
        execution errors (isError))
      by the spec: ✓
  ✓ tool-error-is-result: a tool that raises gives a result with isError true, not an error
      course 000, "Dispatch to primitives, and the _call_tool error lattice"
  ✓ tools-list-changed: a change to the tools sends a bare notifications/tools/list_changed before the next response,
    as declared
      course 000, "listChanged: the one dynamic capability"
  ✓ survives-bad-input: after bad input of every kind, the session still works
      course 000, "The five standard error codes"

course 002
  ✓ resources-by-uri: a listed resource is read by its URI; an unknown URI is an error
      course 002, "The Three MCP Primitives"
  ✓ prompt-variables: prompts/get without a required variable is -32602; with it, messages
      course 002, "The Three MCP Primitives"; course 000, "The five standard error codes"
  ✓ resources-list-changed: a change to the resources sends a bare notifications/resources/list_changed, as declared
      course 002, "List-Changed Notifications"
  ✓ prompts-list-changed: a change to the prompts sends a bare notifications/prompts/list_changed, as declared
      course 002, "List-Changed Notifications"

course 004
  ✓ server-discover: server/discover answers the versions served and the capabilities
      course 004, section 3
  ✓ meta: a request carrying _meta is served without a handshake; each result's _meta names the server
      course 004, section 3 and its transcript
  ✓ result-type: every result says its resultType: "complete" or "input_required"
      course 004, section 6
  ✓ cache-hints: each list result carries ttlMs and cacheScope
      course 004, section 6
  ✓ unsupported-version: a version not served is answered -32022, with the versions served
      course 004, section 4

stdio
  ✓ stdout-only-json: nothing but JSON-RPC messages on the server's stdout, in any rule's session
      spec 2025-06-18, Transports, "stdio"
  ✓ exit-on-eof: the server exits when its stdin ends
      course 004, section 4

course 000: 17/18 rules hold
course 002: 4/4 rules hold
course 004: 5/5 rules hold
stdio: 2/2 rules hold
"""


def test_the_json_card_keeps_its_shape():
    # --json: the same card for a grading script; the failing row whole.
    done = run_card("--json", "--only", "notification-no-response,unknown-tool", "--", *NAIVE,
                    "answers-notifications")
    card = json.loads(done.stdout)
    assert (done.returncode, list(card)) == (1, ["command", "standard", "levels", "eras", "eras_text", "flags",
                                                 "rules", "summary", "holds"])
    assert (card["command"], card["standard"], card["levels"], card["flags"], card["holds"]) == (
        NAIVE + ["answers-notifications"], "course", ["000", "002", "004"], [], False)
    assert card["eras"] == {"handshake": {"version": "2025-06-18"},
                            "stateless": {"versions": ["2026-07-28", "2025-11-25", "2025-06-18"]}}
    assert card["rules"][0] == {
        "id": "notification-no-response", "level": "000", "claim": "a notification gets no response",
        "passage": 'course 000, "Three message shapes"',
        "quote": "Notification — a request shape with no id key at all. Fire-and-forget: the receiver must not "
                 "reply.",
        "verdict": "fail", "text": "the server answered a notification (a result)",
        "exchange": [{"dir": "→", "line": '{"jsonrpc": "2.0", "method": "notifications/initialized"}'},
                     {"dir": "→", "line": '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": '
                                          '{"requestId": "report-card:never-sent"}}'},
                     {"dir": "←", "line": '{"jsonrpc": "2.0", "id": null, "result": {}}'}],
        "judged_by": "course", "differs": None}
    assert card["rules"][1]["differs"] == {
        "course": {"expects": "-32601", "claim": "an unknown tool is answered -32601", "passage": LATTICE,
                   "verdict": "pass", "text": ""},
        "spec": {"expects": "-32602", "claim": "an unknown tool is answered -32602",
                 "passage": 'spec 2025-06-18, server/tools, "Error Handling": an unknown tool is a protocol error, '
                            "-32602 in its example",
                 "verdict": "fail", "text": "the unknown tool was answered error -32601 unknown tool: "
                                            "report_card_no_such_tool, not -32602"}}
    assert card["summary"] == {"000": {"hold": 1, "rules": 2, "not_applicable": 0}}


def test_spec_judges_where_the_lab_and_the_spec_differ_by_the_spec():
    # The base keeps the course; by the spec, its gate and its unknown-tool code are wrong, and say where.
    card = card_of(NAIVE, "--spec", *naive_servers.FLAGS)
    assert [(row["id"], row["claim"], row["passage"]) for row in card["rules"] if row["verdict"] == "fail"] == [
        ("handshake-gate", "nothing is served before initialize; after its response, requests are",
         report_card.GATE_SPEC),
        ("unknown-tool", "an unknown tool is answered -32602",
         'spec 2025-06-18, server/tools, "Error Handling": an unknown tool is a protocol error, -32602 in its example')]
    assert all(row["judged_by"] == "spec" for row in card["rules"])


def test_without_its_flag_a_rule_is_not_applicable_and_says_which_flag():
    # What only the server's author knows comes from a flag; without it the rule is n/a, and names it.
    card = card_of(NAIVE)
    assert {row["id"]: row["text"] for row in card["rules"] if row["verdict"] == "n/a"} == {
        "tool-not-allowed": "not applicable: needs --not-allowed TOOL: a tool that exists but that this session may "
                            "not call",
        "tool-error-is-result": "not applicable: needs --raises 'TOOL {arguments}': a call of a tool that raises",
        "tools-list-changed": "not applicable: needs --change-tools 'TOOL {arguments}': a call that changes the tool "
                              "list",
        "resources-list-changed": "not applicable: needs --change-resources 'TOOL {arguments}': a call that changes "
                                  "the resource list",
        "prompts-list-changed": "not applicable: needs --change-prompts 'TOOL {arguments}': a call that changes the "
                                "prompt list",
    }
    assert card["holds"] is True


def test_the_exit_status_says_whether_every_rule_of_the_level_holds():
    # A 2026-07-28 mistake fails level 004 (the default) and not level 002; a rule chosen with --only decides alone.
    server = ["--", *NAIVE, "no-cache-hints"]
    assert [run_card(*args, *server).returncode for args in (
        [], ["--level", "002"], ["--only", "cache-hints"], ["--only", "parse-error"])] == [1, 0, 1, 0]


USAGE_TABLE = [  # (the arguments, the exit status, the first line on stderr)
    ([], 2, "report_card: no server command"),
    (["--level", "003", "--", "x"], 2, "report_card: --level is 000, 002 or 004, not '003'"),
    (["--board", "--jobs", "2", "--", "x"], 2, "report_card: --jobs takes how many rules run at a time (1 with "
                                                "--board, which draws one session at a time), not '2'"),
    (["--only", "nosuch", "--", "x"], 2, "report_card: no rule nosuch; python report_card.py --rules lists them"),
    (["--raises", "boom {", "--", "x"], 2, "report_card: --raises takes 'TOOL {arguments}', not 'boom {' (Expecting "
                                           "property name enclosed in double quotes: line 1 column 2 (char 1))"),
    (["--", "report-card-no-such-command"], 2, "report_card: cannot start 'report-card-no-such-command': No such file "
                                               "or directory"),
]


def test_a_mistake_on_the_command_line_says_what_it_is():
    # Each mistake: exit status 2 and one line saying what is wrong.
    done = [run_card(*args) for args, _, _ in USAGE_TABLE]
    assert [(run.returncode, run.stderr.splitlines()[0]) for run in done] == [(code, line) for _, code, line in
                                                                              USAGE_TABLE]


def test_rules_lists_every_rule_with_its_passage():
    # --rules: an id a line, with its level and claim, then its passage.
    printed = run_card("--rules").stdout.splitlines()
    assert [line.split()[0] for line in printed[0::2]] == RULE_IDS
    assert [line.strip() for line in printed[1::2]] == [PASSAGES[id] for id in RULE_IDS]


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


def tape() -> list:
    """A tape for a Wire outside a card: each entry kept, numbered."""
    kept = []

    def record(entry: dict) -> dict:
        kept.append(entry)
        return entry | {"at": len(kept) - 1}
    return record


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

def stderr_line(process: subprocess.Popen, silence: str) -> str:
    """The next line on process's stderr within CARD_TIMEOUT: it may come only after a whole card has run."""
    return board_stderr_line(process, silence, bound=CARD_TIMEOUT)


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
        first = stderr_line(self.process, "report_card printed no address")
        assert first.startswith("report_card: the board is at http://127.0.0.1:"), first
        self.url = first.split()[-1]

    def wait_done(self) -> str:
        """The line that says the card is on the board (every rule has run)."""
        return stderr_line(self.process, "report_card did not finish its card")

    def session(self) -> dict:
        """GET /session: the events, the state and the card."""
        with urllib.request.urlopen(self.url + "session", timeout=TIMEOUT) as reply:
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
    # /session holds the card: each ✗ row's numbers are the events of its exchange, each row's session its banner.
    board = CardOnBoard(*BOARD_ARGS)
    try:
        assert board.wait_done().startswith("report_card: the card is on the board; the page stays at")
        seen = board.session()
    finally:
        code, printed = board.close()
    events = {event["n"]: event for event in seen["events"]}
    card = report_card.judge(BOARD_ARGS)[0]
    assert [(row["id"], row["mark"], [events[n]["line"] for n in row["events"]], events[row["session"]]["label"])
            for row in seen["card"]["rules"]] == [
        (row["id"], report_card.MARKS[row["verdict"]], [item["line"] for item in row["exchange"]],
         f"{row['id']}: {row['claim']}") for row in card["rules"]]
    assert (seen["card"]["summary"], code, printed) == (["course 000: 2/3 rules hold"], 1, report_card.text(card))


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="headless Chromium and chromedriver are not installed "
                    "(Debian: apt-get install chromium chromium-driver)")
def test_the_card_beside_the_diagram_in_a_real_browser():
    # The page shows the card once every rule has run; a click on the ✗ row marks its messages and opens the first.
    board = CardOnBoard(*BOARD_ARGS)
    browser = Browser()
    try:
        browser.open(board.url)
        board.wait_done()
        rows = "return [...document.querySelectorAll('#card li')].map(li => li.textContent)"
        until(lambda: len(browser.run(rows)) == 3, "the card's three rows on the page")
        seen = board.session()
        assert browser.run("return document.getElementById('card').hidden") is False
        assert browser.run(rows) == [
            "✗notification-no-response: a notification gets no response "
            f"course 000, \"Three message shapes\"the server answered a notification (a result)"
            + "".join(f"#{n}" for n in seen["card"]["rules"][0]["events"]),
            "✓parse-error: a line that is not JSON is answered -32700, with id null "
            "course 000, \"The five standard error codes\"",
            "✓unknown-tool: an unknown tool is answered -32601 "
            f"{LATTICE}course: -32601: ✓ · spec: -32602: ✗"]
        assert browser.run("return document.getElementById('card-summary').textContent") == "course 000: 2/3 rules hold"
        browser.run("document.querySelector('#card li[data-rule=\"notification-no-response\"]').click()")
        decided = seen["card"]["rules"][0]["events"]
        assert browser.run("return [...document.querySelectorAll('.row.decides')].map(r => Number(r.dataset.n))") \
            == decided
        assert browser.run("return document.querySelector('.row.selected').dataset.n") == str(decided[0])
        assert browser.run("return document.querySelector('#detail pre').textContent") == json.dumps(
            {"jsonrpc": "2.0", "method": "notifications/initialized"}, indent=2)
        browser.run(f"document.querySelector('#card li[data-rule=\"notification-no-response\"] a:last-of-type')"
                    ".click()")
        assert browser.run("return document.querySelector('#detail pre').textContent") == json.dumps(
            {"jsonrpc": "2.0", "id": None, "result": {}}, indent=2)
    finally:
        browser.close()
        board.close()
