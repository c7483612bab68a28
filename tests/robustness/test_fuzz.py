"""Fuzzing the two doors a stranger can knock on: MCPServer.handle (through the in-memory transport)
and serve_stdio (through a real pipe to server_demo.py).

Every run sends the same messages (fixed seeds) and a bounded number of them. For each line the test
works out on its own what the lab promises (docs/reference.md, "Limits and bad input"):

  a line that is not a JSON message (invalid JSON or UTF-8, too deep)   one error with "id": null
  a top-level value that is not an object (a batch, a number, ...)      one error with "id": null
  an object whose "id" is not a string or an integer (null, 1.5, ...)  one error with "id": null
  an object with a valid id and a method                               one response with that very id
  an object without an "id" (a notification), or a response to us     nothing at all
  a blank line (stdio only)                                            nothing at all

and then checks the server did exactly that, in order, with every error code one of mcp_full.ERROR_CODES,
and that a plain tools/call still works afterwards.
"""

import collections
import json
import pathlib
import random
import subprocess
import sys

import mcp_full
import mcp_stdio
import server_demo
from mcp_full import (CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, InMemoryTransport, MCPClient, RPCError, notification, request)
from mcp_stdio import MAX_DEPTH, MAX_MESSAGE_BYTES

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/robustness/)
# Every demo tool but count_slowly, which sleeps n/10 s: a fuzzed n of 2**70 would hold the test forever.
FUZZ_ALLOW = ["add", "weather", "delete_db", "enable_subtract", "subtract", "search_docs", "count_lessons"]
WRONG_VALUES = [None, True, False, 0, -1, 1.5, 1e300, 2**70, "", "x", "\u0000", [], [1, "a"], {}, {"k": "v"}]
ID_KINDS = [None, True, False, 1.5, 1e300, 2**70, -2**70, 0, -1, "", "7", "\u2028id", {}, {"id": 1}, [], [1]]
STATELESS_META = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}

# What a line is owed (see the module docstring).
SILENT = ("silent",)
NULL_ID = ("null",)


def valid_messages(id) -> list:
    """One well-formed message of every kind the demo serves, in both eras, with the given id."""
    return [
        request(id, "ping"),
        request(id, "initialize", INIT_PARAMS),
        request(id, "tools/list"),
        request(id, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}),
        request(id, "tools/call", {"name": "weather", "arguments": {"city": "Oslo"}}),
        request(id, "tools/call", {"name": "search_docs", "arguments": {"query": "tool", "k": 2},
                                   "_meta": {"progressToken": "p"}}),
        request(id, "tools/call", {"name": "count_lessons", "arguments": {"course": "mcp"}}),
        request(id, "tools/call", {"name": "count_slowly", "arguments": {"n": 1}}),  # refused: not allowed
        request(id, "tools/call", {"name": "delete_db", "arguments": {}}),
        request(id, "resources/list"),
        request(id, "resources/templates/list"),
        request(id, "resources/read", {"uri": "policy://refunds"}),
        request(id, "prompts/list"),
        request(id, "prompts/get", {"name": "summarize_incident", "arguments": {"severity": "low"}}),
        request(id, "logging/setLevel", {"level": "debug"}),
        request(id, "resources/subscribe", {"uri": "lab://readme"}),
        request(id, "completion/complete", {"ref": {"type": "ref/prompt", "name": "summarize_incident"},
                                             "argument": {"name": "severity", "value": "l"}}),
        request(id, "server/discover", {"_meta": STATELESS_META}),
        request(id, "tools/list", {"_meta": STATELESS_META}),
        request(id, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 1}, "_meta": STATELESS_META}),
        request(id, "tools/call", {"name": "delete_db", "arguments": {}, "requestState": "abc.def",
                                   "inputResponses": {"confirm": {"action": "accept"}}, "_meta": STATELESS_META}),
        notification("notifications/initialized"),
        notification("notifications/cancelled", {"requestId": id, "reason": "fuzz"}),
        notification("notifications/progress", {"progressToken": 1, "progress": 0.5}),
        {"jsonrpc": "2.0", "id": id, "result": {}},  # a response to the server, which asked nothing
    ]


def field_paths(value, path=()):
    """Every key path inside a message: ("params",), ("params", "arguments", "x"), ..."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield path + (key,)
            yield from field_paths(inner, path + (key,))


def replaced(message: dict, path: tuple, value, delete: bool = False) -> dict:
    """A deep copy of message with the field at path set to value (or removed)."""
    copy = json.loads(json.dumps(message))
    holder = copy
    for key in path[:-1]:
        holder = holder[key]
    if delete:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return copy


def dump(message, rng: random.Random | None = None) -> bytes:
    """A message as one line, sometimes with non-ASCII characters left as they are."""
    ascii_only = rng is None or rng.random() < 0.5
    return json.dumps(message, ensure_ascii=ascii_only).encode("utf-8")


def systematic_lines() -> list:
    """Every field of every message set to every wrong JSON type, or removed; every kind of id."""
    lines = []
    for message in valid_messages(1000):
        for path in field_paths(message):
            for value in WRONG_VALUES:
                lines.append(dump(replaced(message, path, value)))
            lines.append(dump(replaced(message, path, None, delete=True)))
    for id in ID_KINDS:
        lines.extend(dump(message) for message in valid_messages(id))
    return lines


def random_bytes(rng: random.Random, size: int) -> bytes:
    """Random bytes, newlines taken out (one line is one message)."""
    return bytes(rng.randrange(256) for _ in range(size)).replace(b"\n", b" ")


def mutated(rng: random.Random, line: bytes) -> bytes:
    """A valid line broken one way: truncated, bytes flipped, inserted, removed or repeated."""
    kind = rng.randrange(6)
    at = rng.randrange(len(line) + 1)
    if kind == 0:
        return line[:at]
    if kind == 1:
        return line[:at] + random_bytes(rng, 1) + line[at + 1:]
    if kind == 2:
        return line[:at] + random_bytes(rng, rng.randrange(1, 8)) + line[at:]
    if kind == 3:
        return line[:at] + line[at + rng.randrange(1, 10):]
    if kind == 4:
        return line[:at] + line[at:at + 20] * rng.randrange(2, 5) + line[at:]
    poison = rng.choice([b"\x00", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xc0\xaf", b"\xef\xbb\xbf", b"\r", b"\t"])
    return line[:at] + poison + line[at:]


def random_value(rng: random.Random, depth: int = 0):
    """A random JSON value, small and shallow."""
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind < 5:
        return rng.choice(WRONG_VALUES[:11])
    if kind == 5:
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0xD7FF)]))
                       for _ in range(rng.randrange(12)))
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}": random_value(rng, depth + 1) for i in range(rng.randrange(4))}


def random_lines(rng: random.Random, count: int) -> list:
    """count lines mixing every kind of damage, drawn from rng."""
    lines = []
    for n in range(count):
        id = rng.choice([n, str(n), rng.choice(ID_KINDS)])
        message = rng.choice(valid_messages(id))
        roll = rng.random()
        if roll < 0.10:
            lines.append(random_bytes(rng, rng.randrange(0, 200)))
        elif roll < 0.45:
            lines.append(mutated(rng, dump(message, rng)))
        elif roll < 0.65:
            path = rng.choice(list(field_paths(message)))
            lines.append(dump(replaced(message, path, random_value(rng)), rng))
        elif roll < 0.72:
            method = rng.choice(["", " ", "tools", "tools/", "TOOLS/LIST", "tools/list ", "rpc.discover",
                                 "notifications/initialized", "initialize\u0000", "\u00e9t\u00e9/list",
                                 "".join(chr(rng.randrange(33, 127)) for _ in range(rng.randrange(1, 30)))])
            lines.append(dump({**message, "method": method}, rng))
        elif roll < 0.78:
            batch = [rng.choice(valid_messages(rng.randrange(10**6))) for _ in range(rng.randrange(4))]
            lines.append(dump(rng.choice([batch, [], [1, 2], ["x"], 7, "text", None, True]), rng))
        elif roll < 0.84:
            extra = {f"x{rng.randrange(99)}": random_value(rng) for _ in range(rng.randrange(1, 4))}
            lines.append(dump({**message, **extra}, rng))
        elif roll < 0.88:
            lines.append(b"\xef\xbb\xbf" + dump(message))  # a byte-order mark ahead of the message
        elif roll < 0.92:
            text = dump(message)
            lines.append(text[:-1] + b"\x00}" if rng.random() < 0.5 else b"\x00" + text)  # NUL bytes
        elif roll < 0.96:
            text = dump(message)
            at = rng.randrange(len(text))
            lines.append(text[:at] + rng.choice([b"\x80", b"\xff\xfe", b"\xf4\x90\x80\x80"]) + text[at:])
        else:
            lines.append(dump(message, rng))  # intact: the session must keep working between the damage
    return lines


def monster_lines() -> list:
    """Lines built to hurt: nesting 100 000 deep, at and past MAX_DEPTH, and strings of a megabyte."""
    deep = 100_000
    call = '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"weather","arguments":{"city":%s}}}'
    nested_at = lambda depth: ("[" * depth + "]" * depth)  # noqa: E731
    megabyte = "\u00e9" * (1 << 19)
    return [
        ("[" * deep + "]" * deep).encode(),
        ('{"a":' * deep + "1" + "}" * deep).encode(),
        ("[{" * (deep // 2)).encode(),  # unclosed
        (call % (901, "[" * deep + "]" * deep)).encode(),
        (call % (902, '{"a":' * deep + "0" + "}" * deep)).encode(),
        (call % (903, nested_at(MAX_DEPTH - 3))).encode(),  # exactly MAX_DEPTH deep in all: parsed
        (call % (904, nested_at(MAX_DEPTH - 2))).encode(),  # one level past it: refused
        (call % (905, json.dumps("[" * deep))).encode(),  # brackets inside a string are not nesting
        json.dumps(request(906, "tools/call", {"name": "weather", "arguments": {"city": megabyte}}),
                   ensure_ascii=False).encode(),
        json.dumps(request(907, "x" * (1 << 20))).encode(),  # a megabyte-long unknown method
        json.dumps(request("k" * (1 << 20), "ping")).encode(),  # a megabyte-long id, echoed whole
        b'{"jsonrpc":"2.0","id":908,"method":"ping","params":{"n":' + b"9" * 5000 + b"}}",  # int too long
        b'{"jsonrpc":"2.0","id":909,"method":"ping","params":{"n":NaN}}',
        b'{"jsonrpc":"2.0","id":910,"method":"ping","params":{"n":1e400}}',  # infinity, yet valid JSON
    ]


def corpus(seed: int, count: int) -> list:
    """The systematic lines, the monsters, and count random ones, shuffled by seed."""
    rng = random.Random(seed)
    lines = systematic_lines() + monster_lines() + random_lines(rng, count)
    rng.shuffle(lines)
    return lines


# -- the oracle: what each line is owed, worked out without mcp_min --

def reject_constant(name):
    """NaN and Infinity are not JSON."""
    raise ValueError(name)


def depth(value) -> int:
    """How deep arrays and objects nest: [] is 1, [[]] is 2, a scalar 0."""
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    return 0


def owed(line: bytes):
    """SILENT, NULL_ID, or ("id", the id as JSON): what the lab promises for this line."""
    if not line.strip():
        return SILENT  # serve_stdio skips blank lines
    if len(line) > MAX_MESSAGE_BYTES:
        return NULL_ID
    try:
        message = json.loads(line.decode("utf-8"), parse_constant=reject_constant)
    except (ValueError, RecursionError):
        return NULL_ID
    if depth(message) > MAX_DEPTH or not isinstance(message, dict):
        return NULL_ID
    if "id" not in message or ("method" not in message and ("result" in message or "error" in message)):
        return SILENT  # a notification, or a response to the server
    id = message["id"]
    if isinstance(id, str) or type(id) is int:
        return ("id", json.dumps(id))
    return NULL_ID


def got(reply: dict):
    """The same shape for what the server sent back."""
    return NULL_ID if reply["id"] is None else ("id", json.dumps(reply["id"]))


def assert_well_formed(reply: dict):
    """A response: jsonrpc 2.0, an id, exactly one of result (an object) or error (a module code)."""
    assert reply["jsonrpc"] == "2.0"
    assert "id" in reply
    assert ("result" in reply) != ("error" in reply), reply
    if "result" in reply:
        assert isinstance(reply["result"], dict)
    else:
        assert reply["error"]["code"] in mcp_full.ERROR_CODES, reply["error"]
        assert isinstance(reply["error"]["message"], str)
        if reply["id"] is None:
            assert reply["error"]["code"] in (mcp_full.PARSE_ERROR, mcp_full.INVALID_REQUEST), reply["error"]


ADD_RESULT = {"content": [{"type": "text", "text": "5"}]}


# -- the tests --

def fuzz_in_memory(lines: list, initialize: bool):
    """Feed lines through parse() and InMemoryTransport.send; check each against the oracle."""
    server = server_demo.make_server(allow=FUZZ_ALLOW)
    transport = InMemoryTransport(server)
    client = MCPClient(transport)
    if initialize:
        client.initialize()
    for line in lines:
        expected = owed(line)
        if not line.strip():
            continue  # a transport never hands a blank line to handle
        try:
            message = mcp_stdio.parse(line)
        except RPCError as exc:  # the transport edge answers these, with id null
            assert (expected, exc.code) == (NULL_ID, mcp_full.PARSE_ERROR), line[:200]
            continue
        reply = transport.send(message)  # nothing may raise out of handle, nor out of the transport
        if expected == SILENT:
            assert reply is None, (line[:200], reply)
        else:
            assert reply is not None, line[:200]
            assert_well_formed(reply)
            assert got(reply) == expected, line[:200]
        transport.drain()
    if server._initialized:
        client.era = "handshake"  # the fuzzed lines opened the session themselves
    else:
        client.initialize()
    assert client.call_tool("add", {"x": 2, "y": 3}) == ADD_RESULT


def test_fuzzed_messages_through_memory_get_exactly_the_answers_owed_after_a_handshake():
    # 7 000 random lines plus ~2 000 systematic ones, on an initialized session.
    fuzz_in_memory(corpus(seed=1, count=7000), initialize=True)


def test_fuzzed_messages_through_memory_get_exactly_the_answers_owed_before_any_handshake():
    # The same kinds of damage against a session that has not been initialized (the gate's side).
    fuzz_in_memory(corpus(seed=2, count=3000), initialize=False)


def test_fuzzed_lines_over_stdio_get_one_answer_each_and_the_server_lives():
    # Every line's answer, by id; notifications in the stream are skipped; a final marker tools/call must
    # come back with 2 + 3, and the server must exit 0 at end of input. The lines are sent at once and a
    # tools/call runs on a worker while the server reads on, so answers match by id, not by order.
    lines = corpus(seed=3, count=6000)
    lines.append(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * MAX_MESSAGE_BYTES + b'"}}')
    opening = [dump(request("init", "initialize", INIT_PARAMS)), dump(notification("notifications/initialized"))]
    marker = dump(request("marker", "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}))
    wire = b"".join(line + b"\n" for line in opening + lines + [marker])
    done = subprocess.run([sys.executable, str(HERE / "server_demo.py"), "--allow", ",".join(FUZZ_ALLOW)],
                          input=wire, capture_output=True, timeout=120, cwd=HERE)
    assert done.returncode == 0, done.stderr[-2000:]
    replies = []
    for raw in done.stdout.split(b"\n")[:-1]:
        message = json.loads(raw)  # every line on stdout is a JSON message: the stream stayed intact
        assert isinstance(message, dict)
        if "method" in message:
            assert "id" not in message  # the server's notifications (list_changed, log lines)
            continue
        assert_well_formed(message)
        replies.append(message)
    assert done.stdout.endswith(b"\n")
    owed_each = [owed(line) for line in lines]
    expected = [("id", '"init"')] + [answer for answer in owed_each if answer != SILENT] + [("id", '"marker"')]
    # A well-formed notifications/cancelled may reach a request with its id while it runs: that request
    # then gets no answer (2026-07-28, "Cancellation"), so those ids may come back fewer times, never more.
    cancelled = {("id", json.dumps(id)) for id in cancelled_ids(lines)}
    answered = collections.Counter(got(reply) for reply in replies)
    owed_counts = collections.Counter(expected)
    assert {key: n for key, n in answered.items() if key not in cancelled} == {
        key: n for key, n in owed_counts.items() if key not in cancelled}
    assert all(answered[key] <= owed_counts[key] for key in cancelled)
    assert [reply["result"] for reply in replies if reply["id"] == "marker"] == [ADD_RESULT]


def cancelled_ids(lines: list) -> list:
    """The request ids named by the well-formed notifications/cancelled among lines."""
    ids = []
    for line in lines:
        try:
            message = json.loads(line.decode("utf-8"), parse_constant=reject_constant)
        except (ValueError, RecursionError):
            continue
        if (isinstance(message, dict) and message.get("jsonrpc") == "2.0" and "id" not in message
                and message.get("method") == "notifications/cancelled" and isinstance(message.get("params"), dict)):
            ids.append(message["params"].get("requestId"))
    return [id for id in ids if isinstance(id, str) or type(id) is int]
