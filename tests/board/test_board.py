"""The wire board (issue 16): the model on recorded sessions, every flagged rule, the faults, the relay,
the viewers, and the page in a real browser.

The model (board.Board) is fed recorded sessions with explicit times, so every comparison is a plain ==.
The relay runs as `python board.py` on real pipes; to see what the server itself received and sent, the
server behind the board is the demo behind mcp_min's tap, whose log is the server's side of the wire.
The browser test drives headless Chromium through chromedriver's W3C WebDriver HTTP API with urllib, and
skips where Chromium or chromedriver is absent (Debian: apt-get install chromium chromium-driver).

Every wait is bounded (TIMEOUT), every socket is on 127.0.0.1, every child process is ended.
"""

import contextlib
import json
import os
import pathlib
import socket
import subprocess
import sys
import tracemalloc
import urllib.error
import urllib.request

import pytest

import board
from board import Board, Fault, Recording
from mcp_full import (CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, InMemoryTransport, MCPClient, RPCError, error_response,
                      notification, request, response)
from server_demo import make_server
from harness import LinePipe, stderr_line, wait_until
from browser import Browser, CHROMEDRIVER, CHROMIUM

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/board/)
PYTHON = sys.executable
DEMO = [PYTHON, str(HERE / "server_demo.py")]
TAP = [PYTHON, str(HERE / "tap.py")]
BOARD = [PYTHON, str(HERE / "board.py")]
TIMEOUT = 10  # seconds: the most any single wait in this file may take
STATE_KEY = b"test-board"  # a fixed requestState key, so recorded sessions repeat exactly

# ---------------------------------------------------------------------------------------------------
# Recorded sessions: the lab's own client against the demo, in memory, each message as it crossed
# ---------------------------------------------------------------------------------------------------

SERVER_INFO = {"name": "mcp_min-demo", "version": "0.1.0"}
CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "host", "version": "1"}}
HANDSHAKE = [("→", request(1, "initialize", HELLO)),
             ("←", response(1, {"protocolVersion": "2025-06-18", "capabilities": CAPABILITIES,
                                "serverInfo": SERVER_INFO})),
             ("→", notification("notifications/initialized"))]
STATELESS_META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}


def recorded(run, confirm: bool = False, **server_options) -> list:
    """Run run(client) against the demo in memory; every (direction, line) that crossed, in order.

    With confirm, the client declares elicitation and accepts whatever the server asks.
    """
    pairs = []
    transport = InMemoryTransport(make_server(state_key=STATE_KEY, **server_options),
                                  trace=lambda direction, message: pairs.append((direction, json.dumps(message))))
    on_elicit = (lambda asked: {"action": "accept", "content": {"confirm": True}}) if confirm else None
    run(MCPClient(transport, name="client_demo", on_elicit=on_elicit))
    return pairs


def worked_trace(client: MCPClient):
    """Course 000's six steps."""
    client.initialize(protocol_version="2025-06-18")
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    with pytest.raises(RPCError):
        client.call_tool("delete_db")
    client.call_tool("enable_subtract")


def fed(pairs: list, step: float = 0.01, timeout: float = 10.0) -> Board:
    """A Board fed each (direction, message or line) in turn, step seconds apart."""
    model = Board(timeout)
    for index, (direction, message) in enumerate(pairs):
        line = message if isinstance(message, (str, bytes)) else json.dumps(message)
        model.feed(direction, line, t=index * step)
    return model


def rows(model: Board) -> list:
    """Each event as (n, direction, kind, label, the rules it broke): what the diagram draws."""
    return [(e["n"], e["dir"], e["kind"], e["label"], [f["rule"] for f in e["flags"]]) for e in model.events]


def broken(model: Board) -> list:
    """Every flag as (n, rule)."""
    return [(e["n"], f["rule"]) for e in model.events for f in e["flags"]]


# ---------------------------------------------------------------------------------------------------
# The model on recorded sessions
# ---------------------------------------------------------------------------------------------------

def test_worked_trace_draws_six_steps_and_ends_live_with_a_fresh_tools_cache():
    # Course 000's worked trace: every message drawn, nothing flagged, the gate open, the re-list seen.
    model = fed(recorded(worked_trace))
    assert rows(model) == [
        (1, "→", "request", "initialize [1]", []),
        (2, "←", "result", "result [1]", []),
        (3, "→", "notification", "notifications/initialized", []),
        (4, "→", "request", "tools/list [2]", []),
        (5, "←", "result", "result [2]", []),
        (6, "→", "request", "tools/call add [3]", []),
        (7, "←", "result", "result [3]", []),
        (8, "→", "request", "tools/call delete_db [4]", []),
        (9, "←", "error", "error -32600 tool 'delete_db' not permitted for this… [4]", []),
        (10, "→", "request", "tools/call enable_subtract [5]", []),
        (11, "←", "notification", "notifications/tools/list_changed", []),
        (12, "←", "result", "result [5]", []),
        (13, "→", "request", "tools/list [6]", []),
        (14, "←", "result", "result [6]", []),
    ]
    assert [(e["n"], e.get("answers"), e.get("waited")) for e in model.events if e["dir"] == "←"] == [
        (2, 1, 0.01), (5, 4, 0.01), (7, 6, 0.01), (9, 8, 0.01), (11, None, None), (12, 10, 0.02), (14, 13, 0.01)]
    assert model.state(now=1.0) == {
        "era": "handshake", "version": "2025-06-18", "offered": "2025-06-18", "supported": None,
        "gate": {"initialize": 1, "answered": 2, "initialized": 3},
        "host": {"info": {"name": "client_demo", "version": "0.1.0"}, "capabilities": {}},
        "server": {"info": SERVER_INFO, "capabilities": CAPABILITIES},
        "pending": [], "lists": {"tools": {"listed": 14, "changed": 11, "relisted": 13}},
        "subscriptions": [], "listens": [], "request_states": [], "flags": 0, "ended": None,
    }


def test_state_text_reads_the_handshake_session():
    # What the page's state panel and the board's end-of-session summary say, line by line.
    assert board.state_text(fed(recorded(worked_trace)).state()).splitlines() == [
        "era: handshake, version 2025-06-18 (initialize offered 2025-06-18)",
        "handshake gate: initialize sent #1; answered #2; notifications/initialized sent #3: the session is live",
        "host: client_demo 0.1.0; capabilities {}",
        "server: mcp_min-demo 0.1.0; capabilities " + json.dumps(CAPABILITIES),
        "waiting for a response: none",
        "list caches: tools: listed #14, changed #11, re-listed #13",
        "resource subscriptions: none",
        "listen streams: none",
        "requestStates in flight: none",
    ]


def test_stateless_session_has_no_gate_and_reads_capabilities_from_meta_and_discover():
    # Course 004: server/discover, then self-contained requests; the gate never applies.
    def run(client):
        client.connect()
        client.list_tools()
        client.call_tool("add", {"x": 2, "y": 3})
    model = fed(recorded(run))
    assert rows(model) == [
        (1, "→", "request", "server/discover [1]", []),
        (2, "←", "result", "result [1]", []),
        (3, "→", "request", "tools/list [2]", []),
        (4, "←", "result", "result [2]", []),
        (5, "→", "request", "tools/call add [3]", []),
        (6, "←", "result", "result [3]", []),
    ]
    state = model.state()
    assert (state["era"], state["version"], state["supported"]) == ("stateless", "2026-07-28",
                                                                    ["2026-07-28", "2025-11-25", "2025-06-18"])
    assert state["host"] == {"info": {"name": "client_demo", "version": "0.1.0"}, "capabilities": {}}
    assert state["server"] == {"info": SERVER_INFO, "capabilities": CAPABILITIES}
    assert state["gate"] == {"initialize": None, "answered": None, "initialized": None}
    assert board.state_text(state).splitlines()[0] == (
        "era: stateless, version 2026-07-28: no handshake, each request carries it in _meta")
    assert "handshake gate" not in board.state_text(state)


def test_input_required_round_and_its_retry_are_one_group():
    # The delete_db confirmation (2026-07-28): the answer and the retry carry the first request's number.
    def run(client):
        client.connect()
        client.call_tool("delete_db")
    pairs = recorded(run, confirm=True, allow=["delete_db"])
    model = fed(pairs[:4])
    state_sent = json.loads(pairs[3][1])["result"]["requestState"]
    assert model.state()["request_states"] == [{"group": 3, "round": 1, "n": 4, "method": "tools/call",
                                                "name": "delete_db", "asks": ["confirm"], "state": state_sent}]
    model = fed(pairs)
    assert [(e["n"], e["label"], e.get("answers"), e.get("group"), e.get("round")) for e in model.events[2:]] == [
        (3, "tools/call delete_db [2]", None, None, None),  # the page joins it to the group through answers
        (4, "input_required [2]", 3, 3, 1),
        (5, "tools/call delete_db [3]", None, 3, 2),
        (6, "result [3]", 5, 3, 2),
    ]
    assert model.state()["request_states"] == []
    assert broken(model) == []


def test_list_change_stays_stale_until_the_client_lists_again():
    # list_changed is an invalidation (course 000): the cache is stale until the next tools/list.
    changed = HANDSHAKE + [("→", request(2, "tools/list")), ("←", response(2, {"tools": []})),
                           ("←", notification("notifications/tools/list_changed"))]
    assert fed(changed).state()["lists"] == {"tools": {"listed": 5, "changed": 6, "relisted": None}}
    assert "tools: listed #5, changed #6, not re-listed: stale" in board.state_text(fed(changed).state())
    relisted = changed + [("→", request(3, "tools/list")), ("←", response(3, {"tools": []}))]
    assert fed(relisted).state()["lists"] == {"tools": {"listed": 8, "changed": 6, "relisted": 7}}


def test_subscriptions_open_on_their_result_and_close_on_unsubscribe():
    # resources/subscribe counts once the server accepted it; resources/updated marks it.
    uri = {"uri": "lab://readme"}
    pairs = HANDSHAKE + [("→", request(2, "resources/subscribe", uri)), ("←", response(2, {})),
                         ("←", notification("notifications/resources/updated", uri))]
    assert fed(pairs).state()["subscriptions"] == [{"uri": "lab://readme", "n": 5, "updated": 6}]
    pairs += [("→", request(3, "resources/unsubscribe", uri)), ("←", response(3, {}))]
    assert fed(pairs).state()["subscriptions"] == []


def test_listen_stream_is_open_until_cancelled_and_never_counts_as_late():
    # subscriptions/listen (2026-07-28) stays open by design: acknowledged, then ended by a cancel.
    listen = request("listen-1", "subscriptions/listen",
                     {"_meta": STATELESS_META, "notifications": {"toolsListChanged": True}})
    acknowledged = notification("notifications/subscriptions/acknowledged", {
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}, "notifications": {"toolsListChanged": True}})
    model = Board(timeout=1.0)
    model.feed("→", json.dumps(listen), t=0.0)
    model.feed("←", json.dumps(acknowledged), t=0.1)
    model.tick(60.0)
    assert model.state()["listens"] == [{"id": "listen-1", "n": 1, "acknowledged": 2,
                                         "filter": {"toolsListChanged": True}}]
    model.feed("→", json.dumps(notification("notifications/cancelled", {"requestId": "listen-1"})), t=61.0)
    model.end(62.0)
    assert (model.state()["listens"], broken(model)) == ([], [])


# ---------------------------------------------------------------------------------------------------
# Every rule the board flags: (what happened, the lines, the flags expected as (n, rule))
# ---------------------------------------------------------------------------------------------------

RULE_TABLE = [
    ("a notification with an id is a request, flagged once",
     HANDSHAKE[:2] + [("→", {"jsonrpc": "2.0", "id": 2, "method": "notifications/initialized"}),
                      ("←", error_response(2, -32600, "server not initialized"))],
     [(3, "notification-id")]),
    ("a request between initialize and initialized",
     HANDSHAKE[:2] + [("→", request(2, "tools/list")), ("←", error_response(2, -32600, "server not initialized"))],
     [(3, "before-initialized")]),
    ("a skipped handshake", [("→", request(1, "tools/list"))], [(1, "before-initialized")]),
    ("ping may come before the handshake", [("→", request(1, "ping")), ("←", response(1, {}))], []),
    ("the server asks before initialized", HANDSHAKE[:2] + [("←", request(1, "roots/list"))],
     [(3, "before-initialized")]),
    ("a response to no request", HANDSHAKE + [("←", response(9, {}))], [(4, "no-request")]),
    ("a response to a request already answered",
     HANDSHAKE + [("→", request(2, "ping")), ("←", response(2, {})), ("←", response(2, {}))],
     [(6, "answered-twice")]),
    ("an id used again in a session",
     HANDSHAKE + [("→", request(2, "ping")), ("←", response(2, {})),
                  ("→", request(2, "ping")), ("←", response(2, {}))],
     [(6, "reused-id")]),
    ("ids in both directions are separate", HANDSHAKE + [("←", request(1, "ping")), ("→", response(1, {}))], []),
    ("stateless: an id may be reused once answered",
     [("→", request(1, "tools/list", {"_meta": STATELESS_META})), ("←", response(1, {})),
      ("→", request(1, "tools/list", {"_meta": STATELESS_META})), ("←", response(1, {}))], []),
    ("stateless: never two unanswered requests with one id",
     [("→", request(1, "tools/list", {"_meta": STATELESS_META})),
      ("→", request(1, "tools/list", {"_meta": STATELESS_META}))],
     [(2, "reused-id")]),
    ("not JSON on the server's stdout", HANDSHAKE + [("←", "print() from a tool")], [(4, "not-json")]),
    ("not JSON on the server's stdin", [("→", "hello")], [(1, "not-json")]),
    ("invalid UTF-8 is not JSON", [("←", b'{"jsonrpc": "2.0", "id": 1, "result": {"t": "\xff"}}')],
     [(1, "not-json")]),
    ("a batch is not a message (batches left in 2025-06-18)", [("→", [request(1, "ping")])], [(1, "not-a-message")]),
    ("jsonrpc missing", [("→", {"id": 1, "method": "ping"})], [(1, "not-a-message")]),
    ("a null id is no request id", [("→", {"jsonrpc": "2.0", "id": None, "method": "ping"})], [(1, "not-a-message")]),
    ("result and error together", [("←", {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {}})],
     [(1, "not-a-message")]),
    ("an error code outside the course's table",
     HANDSHAKE + [("→", request(2, "resources/read", {"uri": "x"})), ("←", error_response(2, -32002, "not found"))],
     [(5, "unknown-code")]),
    ("every code in the table passes",
     HANDSHAKE + [step for i, code in enumerate(board.COURSE_CODES, 2)
                  for step in (("→", request(i, "ping")), ("←", error_response(i, code, "x")))], []),
    ("a parse error answers with a null id: no request to match",
     [("→", "junk"), ("←", error_response(None, -32700, "parse error"))], [(1, "not-json")]),
    ("a response to a cancelled request is expected, not flagged",
     HANDSHAKE + [("→", request(2, "tools/call", {"name": "slow"})),
                  ("→", notification("notifications/cancelled", {"requestId": 2})),
                  ("←", response(2, {"content": []}))], []),
]


@pytest.mark.parametrize("pairs, expected", [row[1:] for row in RULE_TABLE], ids=[row[0] for row in RULE_TABLE])
def test_each_rule_is_flagged_on_the_message_that_broke_it(pairs, expected):
    # The flags land on the message that broke the rule, and nowhere else.
    assert broken(fed(pairs)) == expected


def test_every_flag_cites_the_course_or_the_spec():
    # A flag tells the class where the rule is written: a course text or a spec revision.
    for name, (title, passage) in board.RULES.items():
        assert passage.startswith(("course 000", "course 004", "spec 20")), name
        assert title, name


def test_a_request_left_waiting_is_flagged_at_its_deadline_and_at_the_end():
    # The timeout flag is placed where it fell due, before later lines, however late the board reads them.
    model = Board(timeout=10)
    for t, pair in enumerate(HANDSHAKE):
        model.feed(pair[0], json.dumps(pair[1]), t=t / 100)
    model.feed("→", json.dumps(request(2, "tools/call", {"name": "slow"})), t=1.0)
    model.feed("→", json.dumps(request(3, "ping")), t=12.0)
    model.feed("←", json.dumps(response(3, {})), t=12.1)
    model.end(20.0)
    assert [(e["n"], e["t"], e["kind"], e["label"]) for e in model.events[3:]] == [
        (4, 1.0, "request", "tools/call slow [2]"),
        (5, 11.0, "timeout", "10 s, and tools/call slow [2] is still waiting"),
        (6, 12.0, "request", "ping [3]"),
        (7, 12.1, "result", "result [3]"),
        (8, 20.0, "end", "the session ended"),
    ]
    assert model.flags() == [
        '#5: no response to tools/call slow [2] (#4) within 10 s (course 000, "Three message shapes": '
        "a request demands exactly one reply)",
        '#8: tools/call slow [2] (#4) never got a response (course 000, "Three message shapes": '
        "a request demands exactly one reply)",
    ]
    assert model.state(now=20.0)["pending"] == [{"n": 4, "dir": "→", "label": "tools/call slow [2]", "late": True,
                                                 "age": 19.0}]


def test_a_late_response_is_marked_late_and_not_flagged_again():
    # Flagged once at its deadline; the answer that finally comes is a response to a waiting request.
    model = Board(timeout=1)
    model.feed("→", json.dumps(request(1, "ping")), t=0.0)
    model.feed("←", json.dumps(response(1, {})), t=3.0)
    assert rows(model) == [(1, "→", "request", "ping [1]", []),
                           (2, "→", "timeout", "1 s, and ping [1] is still waiting", ["no-response"]),
                           (3, "←", "result", "result [1] (late)", [])]


def test_a_new_session_on_one_board_ends_the_last_and_forgets_its_state():
    # client_demo.py --board runs three sessions on one page: each starts from a clean state.
    model = fed(HANDSHAKE + [("→", request(2, "tools/call", {"name": "slow"}))])
    model.begin("part 2", t=1.0)
    model.feed("→", json.dumps(request(1, "ping")), t=1.1)
    assert rows(model)[4:] == [(5, "", "end", "the session ended", ["never-answered"]),
                               (6, "", "session", "part 2", []),
                               (7, "→", "request", "ping [1]", [])]  # id 1 again, but in a new session
    assert (model.state()["era"], model.state()["gate"], model.state()["flags"]) == (
        None, {"initialize": None, "answered": None, "initialized": None}, 0)


def test_the_recording_reads_nothing_until_somebody_looks():
    # Recording a line is an append: no parsing, no model, until a viewer (or the end) asks.
    recording = Recording()
    for direction, message in HANDSHAKE:
        recording.record(direction, json.dumps(message).encode())
    assert (recording.fed, recording.board.events) == (0, [])
    events, state, ended = recording.view(0)
    assert ([e["label"] for e in events], state["gate"], ended) == (
        ["initialize [1]", "result [1]", "notifications/initialized"],
        {"initialize": 1, "answered": 2, "initialized": 3}, False)


def test_reading_late_gives_the_same_events_as_reading_each_line_at_once():
    # The events depend on the recorded times only, not on when a viewer came.
    pairs = recorded(worked_trace)
    now = [0.0]  # both recordings read one clock, which moves only between lines: each line has one time in both
    eager, lazy = Recording(clock=lambda: now[0]), Recording(clock=lambda: now[0])
    for direction, line in pairs:
        now[0] += 0.01
        eager.record(direction, line.encode())
        lazy.record(direction, line.encode())
        eager.catch_up()
    lazy.catch_up()
    assert lazy.board.events == eager.board.events


def test_an_oversized_line_is_kept_cut_and_shown_as_such():
    # A line longer than the lab reads is recorded cut (with its size), never parsed whole.
    recording = Recording()
    big = b'{"jsonrpc": "2.0", "id": 1, "result": {"x": "' + b"a" * board.MAX_MESSAGE_BYTES + b'"}}'
    recording.record("←", big)
    [event] = recording.view(0)[0]
    assert (event["kind"], event["label"], len(event["line"])) == (
        "oversized", f"a line of {len(big)} bytes, not read", board.SHOWN_CHARS)


def test_initialized_without_initialize_opens_no_gate():
    # The lab's server ignores notifications/initialized before initialize; so does the board.
    model = fed([("→", notification("notifications/initialized")), ("→", request(1, "tools/list"))])
    assert (broken(model), model.state()["gate"]) == ([(2, "before-initialized")],
                                                       {"initialize": None, "answered": None, "initialized": None})


ODD_VALUES = [None, True, 0, -1.5, "", "x", [], [1, "a"], {}, {"k": {"deep": []}}]
RICH_SESSION = HANDSHAKE + [
    ("→", request(2, "resources/subscribe", {"uri": "lab://a"})), ("←", response(2, {})),
    ("←", notification("notifications/resources/updated", {"uri": "lab://a"})),
    ("→", request(3, "resources/unsubscribe", {"uri": "lab://a"})), ("←", response(3, {})),
    ("←", notification("notifications/tools/list_changed")), ("→", request(4, "tools/list")),
    ("←", response(4, {"tools": []})), ("→", request(5, "tools/call", {"name": "t", "arguments": {}})),
    ("→", notification("notifications/cancelled", {"requestId": 5})),
    ("→", request(6, "server/discover", {"_meta": STATELESS_META})),
    ("←", response(6, {"supportedVersions": ["2026-07-28"], "capabilities": {}, "_meta": {}})),
    ("→", request(7, "tools/call", {"name": "d", "arguments": {}, "_meta": STATELESS_META})),
    ("←", response(7, {"resultType": "input_required", "inputRequests": {"k": {}}, "requestState": "s"})),
    ("→", request(8, "tools/call", {"name": "d", "inputResponses": {"k": {}}, "requestState": "s",
                                    "_meta": STATELESS_META})),
    ("←", response(8, {"content": [], "isError": True})),
    ("→", request("l", "subscriptions/listen", {"_meta": STATELESS_META, "notifications": {}})),
    ("←", notification("notifications/subscriptions/acknowledged",
                       {"_meta": {"io.modelcontextprotocol/subscriptionId": "l"}})),
    ("←", error_response(9, -32601, "m")),
]


def key_paths(value, prefix=()) -> list:
    """Every path of keys into nested objects, three deep at most."""
    if not isinstance(value, dict) or len(prefix) == 3:
        return []
    return [path for key in value for path in [prefix + (key,)] + key_paths(value[key], prefix + (key,))]


def replaced(message: dict, path: tuple, value) -> dict:
    """A copy of message with the field at path set to value."""
    copy = json.loads(json.dumps(message))
    inner = copy
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    return copy


def test_no_field_of_any_type_can_break_the_board():
    # Bad input never wedges the board: each field of each message of a rich session, replaced in turn by a
    # value of every JSON type, is read, described and summed up without an exception.
    sessions = 0
    for index, (direction, message) in enumerate(RICH_SESSION):
        for path in key_paths(message):
            for value in ODD_VALUES:
                pairs = RICH_SESSION[:index] + [(direction, replaced(message, path, value))] + RICH_SESSION[index + 1:]
                model = fed(pairs)
                model.end(1.0)
                board.state_text(model.state())
                board.describe(model.state(now=2.0), ages=True)
                model.flags()
                sessions += 1
    assert sessions == sum(len(key_paths(m)) for _, m in RICH_SESSION) * len(ODD_VALUES)


def test_every_fault_takes_odd_messages_in_its_stride():
    # The relay's fault never raises either, whatever a peer sends: a line it leaves without a note passes as it
    # came, and each fault still strikes somewhere in the session, with its own note.
    struck = set()
    for name in board.FAULTS:
        fault = Fault(name)
        for direction, message in RICH_SESSION:
            for path in key_paths(message):
                for value in ODD_VALUES:
                    line = json.dumps(replaced(message, path, value)).encode()
                    for sent, note, action in fault.change(direction, line):
                        assert type(sent) is bytes and action in ("pass", "delay", "drop"), (name, line)
                        if note is None:
                            assert (sent, action) == (line, "pass"), (name, line)
                        else:
                            struck.add((name, note["fault"]))
    assert struck == {(name, name) for name in board.FAULTS}


# ---------------------------------------------------------------------------------------------------
# Faults: each changes exactly what it names
# ---------------------------------------------------------------------------------------------------

def line(message) -> bytes:
    """One message as stdio carries it: compact JSON and a newline."""
    return json.dumps(message).encode() + b"\n"


HOST_SCRIPT = [
    request(1, "initialize", HELLO),
    notification("notifications/initialized"),
    request(2, "tools/list"),
    request(3, "tools/call", {"name": "count_lessons", "arguments": {"course": "postgres"}}),  # isError
    request(4, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}),
    request(5, "ping"),
]


def run_lines(command: list, data: bytes) -> subprocess.CompletedProcess:
    """Feed data to command's stdin, close it, and collect everything, within TIMEOUT."""
    return subprocess.run(command, input=data, capture_output=True, timeout=TIMEOUT, cwd=HERE)


def server_answered(log: pathlib.Path, id) -> bool:
    """Whether the tap's log shows the server's answer to the request id."""
    for text in (log.read_text(encoding="utf-8").splitlines() if log.exists() else []):
        try:
            message = json.loads(text[2:]) if text.startswith("← ") else None
        except ValueError:
            continue  # not JSON, or a line still being written
        if isinstance(message, dict) and "method" not in message and message.get("id") == id:
            return True
    return False


def through_board(tmp_path, *board_options) -> tuple:
    """HOST_SCRIPT through the board in front of the tapped demo: what the server got and sent, what the host got.

    Each request goes once the server has answered the one before (the inner tap logs an answer before it passes
    it on, and the board may drop it): requests sent at once may be answered in any order.
    """
    inner = tmp_path / "server_side.log"
    command = BOARD + ["--log", os.devnull, *board_options, "--"] + TAP + ["--log", str(inner), "--"] + DEMO
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=HERE)
    try:
        for message in HOST_SCRIPT:
            process.stdin.write(line(message))
            process.stdin.flush()
            if "id" in message:
                wait_until(lambda: server_answered(inner, message["id"]), f"the server's answer to {message['method']}")
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()  # a no-op once it has exited
        process.wait()
    assert process.returncode == 0, stderr
    logged = inner.read_text(encoding="utf-8").splitlines()
    got = [text[2:].encode() for text in logged if text.startswith("→ ")]
    sent = [text[2:].encode() for text in logged if text.startswith("← ")]
    return got, sent, stdout.splitlines()


HOST_LINES = [line(m).rstrip(b"\n") for m in HOST_SCRIPT]


def test_without_a_fault_both_sides_see_each_others_lines_unchanged(tmp_path):
    got, sent, received = through_board(tmp_path)
    assert (got, received) == (HOST_LINES, sent)


def test_fault_initialized_id_adds_the_id_and_changes_nothing_else(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "initialized-id")
    assert got[:1] + got[2:] == HOST_LINES[:1] + HOST_LINES[2:]
    assert json.loads(got[1]) == {**HOST_SCRIPT[1], "id": "board:initialized"}
    assert received == sent  # the server's -32600 answers travel back untouched


def test_fault_drop_initialized_drops_that_line_only(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "drop-initialized")
    assert (got, received) == (HOST_LINES[:1] + HOST_LINES[2:], sent)


def test_fault_tool_error_turns_the_is_error_result_into_minus_32603(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "tool-error")
    failed = [i for i, text in enumerate(sent) if b'"isError": true' in text]
    assert len(failed) == 1
    assert received[:failed[0]] + received[failed[0] + 1:] == sent[:failed[0]] + sent[failed[0] + 1:]
    assert json.loads(received[failed[0]]) == error_response(
        3, -32603, "internal error: ERROR: unknown course 'postgres'; this server knows only 'mcp'")
    assert got == HOST_LINES


def test_fault_stray_line_writes_one_line_before_the_first_call_s_response(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "stray-line")
    assert received == sent[:1] + [board.STRAY_LINE] + sent[1:]  # sent[1] answers tools/list, the first call
    assert got == HOST_LINES


def test_fault_drop_response_drops_the_first_call_s_response_only(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "drop-response")
    assert json.loads(sent[1])["id"] == 2
    assert (got, received) == (HOST_LINES, sent[:1] + sent[2:])


def test_fault_delay_response_delivers_the_same_lines_that_one_later(tmp_path):
    got, sent, received = through_board(tmp_path, "--fault", "delay-response", "--delay", "0.5")
    held = sent[1]
    assert (got, sorted(received)) == (HOST_LINES, sorted(sent))
    assert [text for text in received if text != held] == [text for text in sent if text != held]
    assert received.index(held) >= 1  # never earlier than it was sent


def test_fault_list_names_each_fault_and_its_passage():
    done = run_lines(BOARD + ["--fault", "list"], b"")
    printed = done.stdout.decode().splitlines()
    assert done.returncode == 0
    assert [text.split()[0] for text in printed[0::2]] == list(board.FAULTS)
    assert all(text.strip().startswith("demonstrates course 00") for text in printed[1::2])


def test_an_unknown_fault_or_no_command_is_a_usage_error():
    unknown = run_lines(BOARD + ["--fault", "gremlins", "--"] + DEMO, b"")
    bare = run_lines(BOARD + ["--port", "0"], b"")
    assert (unknown.returncode, unknown.stdout) == (2, b"")
    assert unknown.stderr.decode().startswith("board: unknown fault 'gremlins'; python board.py --fault list\nusage:")
    assert (bare.returncode, bare.stderr.decode().splitlines()[0]) == (2, board.USAGE.splitlines()[0])


def test_fault_leaves_lines_it_does_not_name_as_they_were():
    # change() passes anything it does not name untouched, not even re-encoded.
    for name in board.FAULTS:
        fault = Fault(name)
        for text in (b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}', b"not json", b'[1, 2]', b'{"id": 3}'):
            assert fault.change("→", text) == [(text, None, "pass")], (name, text)


# ---------------------------------------------------------------------------------------------------
# The relay on real pipes, and the viewers over HTTP
# ---------------------------------------------------------------------------------------------------

class BoardProcess(LinePipe):
    """board.py with a host written in raw lines: every read has a deadline (LinePipe's, and stderr's too)."""

    def __init__(self, *options: str, server: list = DEMO):
        self.process = subprocess.Popen(BOARD + ["--log", os.devnull, *options, "--"] + server, cwd=HERE,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = self.read_stderr_line()
        assert first.startswith("board: http://127.0.0.1:") and first.endswith("/\n"), first
        self.url = first.split()[1]
        self.buffer = b""

    def read_stderr_line(self) -> str:
        """The next line on the board's stderr, within TIMEOUT."""
        return stderr_line(self.process, "the board printed no line on stderr")

    def send(self, message, answers: int = 1) -> list:
        """Write one line (a dict is encoded); read the answers it brings."""
        self.process.stdin.write(line(message) if isinstance(message, (dict, list)) else message)
        self.process.stdin.flush()
        return [self.read_line() for _ in range(answers)]

    def read_line(self) -> bytes:
        """The next whole line on the board's stdout, within TIMEOUT, without its newline."""
        return super().read_line().removesuffix(b"\n")

    def get(self, path: str) -> dict:
        """GET a JSON document from the board."""
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=TIMEOUT) as reply:
            return json.loads(reply.read())

    def close(self) -> tuple:
        """Close the host's side; (exit code, everything left on stderr)."""
        self.process.stdin.close()
        try:
            code = self.process.wait(timeout=TIMEOUT)
            return code, self.process.stderr.read().decode()
        finally:
            self.process.kill()
            self.process.wait()
            self.process.stdout.close()
            self.process.stderr.close()


@contextlib.contextmanager
def running_board(*options: str, server: list = DEMO):
    """A BoardProcess, always ended."""
    process = BoardProcess(*options, server=server)
    try:
        yield process
    finally:
        if process.process.poll() is None:
            process.close()


class Viewer:
    """One page's event stream (GET /events), read as (event name, data) pairs within TIMEOUT."""

    def __init__(self, url: str):
        self.stream = urllib.request.urlopen(url + "events", timeout=TIMEOUT)
        self.seen = []

    def until(self, condition) -> list:
        """Read events until condition(events so far) holds."""
        name = None
        while not condition(self.seen):
            text = self.stream.readline().decode()
            if not text:
                raise EOFError(f"the stream ended; so far {self.seen}")
            if text.startswith("event: "):
                name = text[7:].strip()
            elif text.startswith("data: "):
                self.seen.append((name, json.loads(text[6:])))
        return self.seen

    def wire(self) -> list:
        """The wire events read so far."""
        return [data for name, data in self.seen if name == "wire"]

    def close(self):
        self.stream.close()


def has_wire(count: int):
    """A condition: at least count wire events have arrived."""
    return lambda seen: len([1 for name, _ in seen if name == "wire"]) >= count


def test_board_prints_its_url_and_an_end_of_session_summary():
    # stderr: the page's address first; at the end the flags, then the state each side was left in.
    with running_board("--fault", "initialized-id") as process:
        process.send(HOST_SCRIPT[0])
        process.send(HOST_SCRIPT[1], answers=1)  # the id the board added draws an answer (-32600)
        process.send(HOST_SCRIPT[2])
        code, rest = process.close()
    assert code == 0
    assert rest.splitlines() == [
        "board: the session ended: 7 events, 2 rules broken",
        'board: fault #3 → notifications/initialized ["board:initialized"]: the board gave this notification an id, '
        '"board:initialized"',
        'board: ! #3 → notifications/initialized ["board:initialized"]: a notification sent with an id: a request '
        "now, so its sender waits for a reply that a well-behaved peer refuses to send "
        '(course 000, "Three message shapes"; the naive failures at its end)',
        "board: ! #5 → tools/list [2]: tools/list before notifications/initialized: the gate answers -32600 "
        '(only initialize and ping may pass) (course 000, "The stateful handshake")',
        "board: era: handshake, version 2025-06-18 (initialize offered 2025-06-18)",
        "board: handshake gate: initialize sent #1; answered #2; notifications/initialized not sent: every request "
        "but ping gets -32600",
        "board: host: host 1; capabilities {}",
        "board: server: mcp_min-demo 0.1.0; capabilities " + json.dumps(CAPABILITIES),
        "board: waiting for a response: none",
        "board: list caches: none",
        "board: resource subscriptions: none",
        "board: listen streams: none",
        "board: requestStates in flight: none",
    ]


def test_relay_passes_every_byte_unchanged_both_ways(tmp_path):
    # Junk, invalid UTF-8, a blank line, CRLF, a line past the lab's limit, no final newline: all as they were.
    odd = (b"not json\n\xff\xfe\n\n" + line(request(1, "ping")).replace(b"\n", b"\r\n")
           + b'{"big": "' + b"x" * (board.MAX_MESSAGE_BYTES + 10) + b'"}\n' + b'{"last": "no newline"}')
    upstream, downstream = tmp_path / "upstream.bin", tmp_path / "downstream.bin"
    downstream.write_bytes(odd)
    copy_in = f"import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, open({str(upstream)!r}, 'wb'))"
    write_out = f"import sys; sys.stdout.buffer.write(open({str(downstream)!r}, 'rb').read())"
    into_server = run_lines(BOARD + ["--log", os.devnull, "--", PYTHON, "-c", copy_in], odd)
    to_host = run_lines(BOARD + ["--log", os.devnull, "--", PYTHON, "-c", write_out], b"")
    assert (into_server.returncode, upstream.read_bytes()) == (0, odd)
    assert (to_host.returncode, to_host.stdout) == (0, odd)


def test_board_logs_as_the_tap_does(tmp_path):
    # The same log, line for line, as `python tap.py --log` for the same exchange.
    data = b"".join(line(m) for m in HOST_SCRIPT[:3]) + b"not json\n"
    run_lines(TAP + ["--log", str(tmp_path / "tap.log"), "--"] + DEMO, data)
    run_lines(BOARD + ["--log", str(tmp_path / "board.log"), "--"] + DEMO, data)
    tapped = sorted((tmp_path / "tap.log").read_text(encoding="utf-8").splitlines())
    assert sorted((tmp_path / "board.log").read_text(encoding="utf-8").splitlines()) == tapped
    assert len(tapped) == 7  # four lines sent; two answers and a parse error back


def test_several_viewers_see_the_same_events_live():
    # Two pages open at once: each gets the session so far, then each message as it crosses.
    with running_board() as process:
        process.send(HOST_SCRIPT[0])
        first, second = Viewer(process.url), Viewer(process.url)
        try:
            first.until(has_wire(2))
            second.until(has_wire(2))
            process.send(HOST_SCRIPT[1], answers=0)
            process.send(HOST_SCRIPT[2])
            first.until(has_wire(5))
            second.until(has_wire(5))
            assert [e["label"] for e in first.wire()] == [
                "initialize [1]", "result [1]", "notifications/initialized", "tools/list [2]", "result [2]"]
            assert second.wire() == first.wire()
            assert first.seen[0] == ("hello", {"command": " ".join(DEMO), "fault": None, "fault_text": None,
                                               "timeout": 10.0})
        finally:
            first.close()
            second.close()


def test_a_viewer_leaving_mid_stream_does_not_disturb_the_relay_and_a_reload_replays_everything():
    # Closing a page drops its stream only; opening it again rebuilds the whole session from #1.
    with running_board() as process:
        process.send(HOST_SCRIPT[0])
        leaving = Viewer(process.url)
        leaving.until(has_wire(2))
        leaving.close()
        process.send(HOST_SCRIPT[1], answers=0)
        for id in range(2, 40):
            assert process.send(request(id, "ping")) == [line(response(id, {})).rstrip(b"\n")]
        reloaded = Viewer(process.url)
        try:
            reloaded.until(has_wire(3 + 38 * 2))
            assert reloaded.seen[0][0] == "hello"
            assert reloaded.wire() == process.get("/recording")["events"]
            assert [e["n"] for e in reloaded.wire()] == list(range(1, 3 + 38 * 2 + 1))
        finally:
            reloaded.close()


def test_the_stream_ends_with_the_session():
    # When the server exits, every open page hears "end" after the last events, and its stream closes.
    with running_board() as process:
        viewer = Viewer(process.url)
        try:
            viewer.until(lambda seen: seen and seen[0][0] == "hello")
            process.send(request(1, "ping"))
            code, _ = process.close()
            names = [name for name, _ in viewer.until(lambda seen: seen[-1][0] == "end")]
            assert code == 0
            assert [e["kind"] for e in viewer.wire()] == ["request", "result", "end"]
            assert viewer.stream.read() == b"\n"  # the blank line that ends the last event, then nothing
            assert names[-2:] == ["state", "end"]
        finally:
            viewer.close()


def test_the_board_answers_only_local_names_and_its_own_paths():
    # A foreign Host (a DNS-rebinding page) gets 403; an unknown path 404.
    with running_board() as process:
        port = process.url.rsplit(":", 1)[1].rstrip("/")
        foreign = urllib.request.Request(process.url, headers={"Host": f"evil.example:{port}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(foreign, timeout=TIMEOUT)
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(process.url + "nothing", timeout=TIMEOUT)
        with urllib.request.urlopen(process.url, timeout=TIMEOUT) as page:
            html = page.read().decode()
        assert (refused.value.code, missing.value.code) == (403, 404)
        assert html.startswith("<!doctype html>")
        assert "<script src" not in html and "<link" not in html and "http" not in html.split("<script>")[1]


def test_client_demo_board_serves_every_session_of_the_demo(tmp_path):
    # client_demo.py --board: one in-process board, fed by the client's trace hook, three sessions on one page.
    demo = subprocess.Popen([PYTHON, "client_demo.py", "--board", "--transport", "memory"], cwd=HERE,
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        url = stderr_line(demo, "client_demo printed no URL").split()[1]
        line = ""
        while not line.startswith("board:"):  # the server's own stderr comes first (a tool's failure, reported)
            line = stderr_line(demo, "client_demo did not finish its sessions")
        assert line == f"board: the demo is over; the page stays at {url} until you press Enter\n"
        with urllib.request.urlopen(url + "recording", timeout=TIMEOUT) as reply:
            seen = json.loads(reply.read())
        demo.stdin.write(b"\n")
        demo.stdin.flush()
        assert demo.wait(timeout=TIMEOUT) == 0
    finally:
        demo.kill()
        demo.wait()
        demo.stdin.close()
        demo.stderr.close()
    sessions = [e["label"] for e in seen["events"] if e["kind"] == "session"]
    assert sessions == ["part 1: the handshake era (course 000), over memory",
                        "part 2: the stateless era (course 004), over memory",
                        "part 2: delete_db, confirmed (handshake era), over memory",
                        "part 2: delete_db, confirmed (stateless era), over memory"]
    assert [e for e in seen["events"] if e["flags"]] == []  # the lab's own client breaks no rule
    assert seen["ended"] is True


# ---------------------------------------------------------------------------------------------------
# The page in a real browser: headless Chromium through chromedriver (W3C WebDriver over HTTP)
# ---------------------------------------------------------------------------------------------------


DRAWN = ("return [...document.querySelectorAll('.row')].map(r => [Number(r.dataset.n), r.className, "
         "r.querySelector('.label, .banner').textContent, "
         "[...r.querySelectorAll('.notes span')].map(s => s.textContent)])")
STATE_PANEL = "return [...document.querySelectorAll('#state dt, #state dd')].map(e => [e.tagName, e.textContent])"


@pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER), reason="headless Chromium and chromedriver are not installed "
                    "(Debian: apt-get install chromium chromium-driver)")
def test_the_page_draws_the_session_live_in_a_real_browser():
    # The page is open before the session starts; each message appears as it crosses, drawn by its kind,
    # the flagged one marked, the state panel as the model says, and a click shows a message's JSON.
    with running_board("--fault", "stray-line") as process:
        with Browser() as browser:
            browser.open(process.url)
            browser.wait_for(lambda: browser.run("return document.getElementById('status').textContent") == "live",
                             "the page to connect")
            assert browser.run(DRAWN) == []
            process.send(request(1, "initialize", HELLO))
            process.send(notification("notifications/initialized"), answers=0)
            process.send(request(2, "tools/call", {"name": "enable_subtract", "arguments": {}}), answers=3)
            process.send(request(3, "tools/list"))
            browser.wait_for(lambda: len(browser.run(DRAWN)) == 9, "nine rows")
            assert browser.run(DRAWN) == [
                [1, "row k-request up", "initialize [1]", []],
                [2, "row k-result down", "result [1]", []],
                [3, "row k-notification up", "notifications/initialized", []],
                [4, "row k-request up", "tools/call enable_subtract [2]", []],
                [5, "row k-notification down", "notifications/tools/list_changed", []],
                [6, "row k-junk down flagged", "not JSON: " + board.STRAY_LINE.decode(), ["⚑ not JSON", "fault"]],
                [7, "row k-result down", "result [2]", []],
                [8, "row k-request up", "tools/list [3]", []],
                [9, "row k-result down", "result [3]", []],
            ]
            state = process.get("/recording")["state"]
            browser.wait_for(lambda: browser.run(STATE_PANEL) == [
                [tag, text] for term, items in board.describe(state, ages=True)
                for tag, text in [("DT", term)] + [("DD", item) for item in items]], "the state panel")
            assert ["DD", "tools: not listed, changed #5, re-listed #8"] not in browser.run(STATE_PANEL)
            assert ["DD", "tools: listed #9, changed #5, re-listed #8"] in browser.run(STATE_PANEL)
            browser.run("document.querySelector('.row[data-n=\"5\"]').click()")
            assert browser.run("return document.querySelector('#detail pre').textContent") == json.dumps(
                notification("notifications/tools/list_changed"), indent=2)
            assert browser.run("return [...document.querySelectorAll('#broken li')].map(li => li.textContent)") == [
                f"#6 not JSON: {board.STRAY_LINE.decode()}: a line that is not JSON on the server's stdout "
                + board.RULES["not-json"][1]]
            process.close()
            browser.wait_for(lambda: browser.run("return document.getElementById('status').textContent")
                             == "the session ended", "the end of the session")
            assert browser.run(DRAWN)[-1] == [10, "row k-end down", "the session ended", []]


# ---- the page's connections: bounded by count, each writing in bounded pieces (issue 42, row 8) ----

@contextlib.contextmanager
def served(recording: Recording):
    """board.serve for recording on a free port; yields the port, then shuts down."""
    httpd = board.serve(recording, 0)
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def unread(port: int, path: str, until: bytes) -> socket.socket:
    """A GET of path whose answer is read up to until, then no more (the connection is left open)."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    received = b""
    while until not in received:
        chunk = conn.recv(4096)
        assert chunk, received
        received += chunk
    return conn


def test_page_connections_that_never_read_hold_a_bounded_number_of_bytes():
    # Row 8: each page connection built its whole answer, the backlog, for one write (20 clients that never read,
    # +700 MB). Now each writes PAGE_PIECE at a time: 8 on /recording and 8 on /events held 201 MB, now 2.8 MB.
    recording = Recording()
    recording.record_lines("→", [json.dumps(request(i, "ping", {"pad": "x" * 100_000})).encode() for i in range(50)])
    recording.catch_up()
    with served(recording) as port:
        conns = []
        tracemalloc.start()
        try:
            for path, until in [("/recording", b'"line"')] * 8 + [("/events", b"event: wire")] * 8:
                conns.append(unread(port, path, until))  # its first piece went out: what it holds is built
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
            for conn in conns:
                conn.close()
    assert peak < 16 * 1024 * 1024, peak  # before: 201 MB


def test_page_connections_are_bounded_by_count_and_one_more_is_told_503():
    with served(Recording()) as port:
        conns = [unread(port, "/events", b"event: hello") for _ in range(board.MAX_PAGE_CONNECTIONS)]
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as extra:
                extra.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                assert extra.recv(4096).startswith(b"HTTP/1.0 503 Service Unavailable\r\n")
        finally:
            for conn in conns:
                conn.close()
        wait_until(lambda: raw_get(port).startswith(b"HTTP/1.0 200 "), "a slot free again")


def raw_get(port: int) -> bytes:
    """The first bytes of the answer to GET / on a new connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        return conn.recv(4096)
