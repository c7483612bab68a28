"""The lessons' exercise checks: each says why a solution is not right yet, or that it is solved.

A notebook's check cell is two lines, and may run as often as you like, in any order:
    from lessons.checks import check
    check("05-1", globals())
The check reads what it needs from the notebook (your solution, and what the lesson set up), builds every
server and client it uses afresh, and never changes anything the notebook holds. What those servers write on
stderr (a tool's failure, reported for its author) is not shown: the check's one line says what matters.

The checks of course 000's lessons (01-04, and lesson 07's lab part) use mcp_min alone, as those lessons do;
the others import the layer their lesson teaches (mcp_full.py, board.py) when they run.
"""

import contextlib
import io
import json
import os
import pathlib
import sys
import time
import urllib.parse

import mcp_min

# What the official SDK's client (mcp 2.3.0) was seen to do in exercise 11-2, for a machine without the SDK.
SEEN_WITH_MCP_2_3_0 = {"tool-error": "raises", "stray-line": "returns"}


def check(exercise: str, ns: dict):
    """Print whether exercise is solved, or why not yet, for the notebook whose globals are ns."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # the servers' reports of the failures the check provokes
            problem = globals()["exercise_" + exercise.replace("-", "_")](ns)
    except Exception as exc:  # a solution that raises is not solved yet: say how it raised
        problem = f"{type(exc).__name__}: {exc}"
    print(f"exercise {exercise}: " + (f"not solved yet ({problem})" if problem else "solved"))


def sent_by_client(messages: list) -> int:
    """How many of the traced (direction, message) pairs the client sent."""
    return len([message for direction, message in messages if direction == "→"])


class TooMany(BaseException):
    """Raised into a solution that sends far more requests than it should: a loop that would never end.

    A BaseException, as KeyboardInterrupt is, so that a solution's own `except Exception` cannot swallow it.
    """


def copy_of_the_lab(name: str):
    """mcp_min.py loaded afresh as a module of its own, whatever the notebook changed in mcp_min."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, pathlib.Path(mcp_min.__file__))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

# ---- course 000's lessons: mcp_min alone ----


def exercise_01_1(ns: dict):
    """01-1: why shape() is not right yet, or None."""
    shape = ns["shape"]
    cases = [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "id": 0, "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "id": "a7", "method": "ping"}, "request"),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, "notification"),
        ({"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"}, "invalid"),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, "invalid"),
        ({"jsonrpc": "2.0", "id": 0, "result": {}}, "response"),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}, "response"),
        ({"jsonrpc": "2.0", "id": 2, "result": {}, "error": {"code": -32603, "message": "both"}}, "invalid"),
        ({"jsonrpc": "2.0", "id": 2}, "invalid"),
    ]
    for message, want in cases:
        try:
            said = shape(message)
        except Exception as exc:
            said = f"an exception: {exc!r}"
        if said != want:
            return f"{json.dumps(message)} is {want}, shape() said {said}"
    return None


def exercise_02_1(ns: dict):
    """02-1: why call_with_retry is not right yet, or None."""
    call_with_retry, report = ns["call_with_retry"], ns["report"]
    failures = {"left": 2}

    def flaky():
        """Fails twice, then works."""
        failures["left"] -= 1
        if failures["left"] >= 0:
            raise OSError("the disk blinked")
        return "ok"

    server = mcp_min.MCPServer("retry")
    server.add_resource("lab://flaky", flaky)
    server.add_resource("lab://broken", report)
    sent = []

    def trace(direction: str, message: dict):
        sent.append((direction, message))
        if sent_by_client(sent) > 20:  # far more than attempts=3: a retry that never stops
            raise TooMany()
    client = mcp_min.MCPClient(mcp_min.InMemoryTransport(server, trace=trace))
    client.initialize()
    cases = [("resources/read", {"uri": "lab://flaky"}, None, 3),
             ("tools/delete", None, mcp_min.METHOD_NOT_FOUND, 1),
             ("resources/read", {"uri": "lab://broken"}, mcp_min.INTERNAL_ERROR, 3)]
    for method, params, code, tries in cases:
        sent.clear()
        try:
            call_with_retry(client, method, params, attempts=3)
            raised = None
        except mcp_min.RPCError as exc:
            raised = exc.code
        except TooMany:
            return f"{method} {params or ''}: more than 20 requests for attempts=3; stop once attempts tries are spent"
        except Exception as exc:
            return f"{method} raised {exc!r}"
        made = sent_by_client(sent)
        if raised != code or made != tries:
            got, want = raised or "a result", code or "a result"
            return f"{method} {params or ''}: {made} request(s), then {got}; want {tries}, then {want}"
    return None


def exercise_03_1(ns: dict):
    """03-1: why SpecGateServer is not right yet, or None."""
    SpecGateServer, hello = ns["SpecGateServer"], ns["hello"]
    for cls in SpecGateServer.__mro__[:SpecGateServer.__mro__.index(mcp_min.MCPServer)]:
        if "handle" in vars(cls):  # a transport calls handle with arguments of its own (mcp_full's stream)
            return f"{cls.__name__} overrides handle: leave handle alone, and extend the method that answers initialize"
    steps = [(mcp_min.request(1, "tools/list"), "error", "tools/list before initialize"),
             (mcp_min.request(2, "initialize", {**hello, "protocolVersion": 7}), "error", "a failed initialize"),
             (mcp_min.request(3, "tools/list"), "error", "tools/list after a failed initialize"),
             (mcp_min.request(4, "initialize", hello), "result", "initialize"),
             (mcp_min.request(5, "tools/list"), "result", "tools/list between the initialize response and initialized"),
             (mcp_min.notification("notifications/initialized"), None, "notifications/initialized"),
             (mcp_min.request(6, "tools/list"), "result", "tools/list on a live session"),
             (mcp_min.request(7, "initialize", hello), "error", "a second initialize")]
    server = SpecGateServer("lesson-3")
    for message, want, what in steps:
        reply = server.handle(message)
        got = None if reply is None else ("result" if "result" in reply else "error")
        if got != want:
            return f"{what} got {got or 'no answer'}, want {want or 'no answer'}"
    return None


def exercise_03_2(ns: dict):
    """03-2: why connect is not right yet, or None."""
    connect, make_server = ns["connect"], ns["make_server"]
    for speaks, want in [(["2024-11-05"], False), (["2025-06-18"], True), (["2024-11-05", "2025-11-25"], True)]:
        server = make_server()
        try:
            got = connect(mcp_min.InMemoryTransport(server), speaks)
        except Exception as exc:
            return f"connect raised {exc!r}"
        if got != want or server._initialized != want:
            return f"speaking {speaks}: connect returned {got}, the session is live: {server._initialized}; want {want}"
    return None


def exercise_04_1(ns: dict):
    """04-1: why spec_lab's codes are not the spec's yet, or None."""
    make_server, spec_lab = ns["make_server"], ns["spec_lab"]
    if mcp_min.UNKNOWN_TOOL != copy_of_the_lab("the_lab_as_written").UNKNOWN_TOOL:
        return ("mcp_min.UNKNOWN_TOOL was changed too: change spec_lab's alone (restart the kernel to undo the "
                "other), so that the rest of the lesson keeps the course's codes")

    def code_for(name: str):
        """The error code a fresh spec_lab session answers a call of this tool with, or None for a result."""
        server = make_server(spec_lab.MCPServer)
        spec_lab.MCPClient(spec_lab.InMemoryTransport(server)).initialize()
        reply = server.handle(mcp_min.request(9, "tools/call", {"name": name, "arguments": {}}))
        return reply.get("error", {}).get("code")

    unknown, refused = code_for("drop_tables"), code_for("delete_db")
    if unknown != -32602:
        return f"an unknown tool still gets {unknown}"
    if refused != -32600:
        return f"a tool not allowed now gets {refused}; leave that row alone"
    return None


def exercise_04_2(ns: dict):
    """04-2: why SelfCorrectingServer is not right yet, or None."""
    SelfCorrectingServer, make_server = ns["SelfCorrectingServer"], ns["make_server"]
    server = make_server(SelfCorrectingServer)
    mcp_min.MCPClient(mcp_min.InMemoryTransport(server)).initialize()
    cases = [({"name": "add", "arguments": {"x": 2}}, "isError", "a missing argument"),
             ({"name": "add", "arguments": {"x": "two", "y": 3}}, "isError", "an argument of the wrong type"),
             ({"name": "add", "arguments": {"x": 2, "y": 3}}, "result", "a good call"),
             ({"name": "divide", "arguments": {"a": 1, "b": 0}}, "isError", "a tool that raised"),
             ({"name": "drop_tables", "arguments": {}}, "error", "an unknown tool"),
             ({"name": "delete_db", "arguments": {}}, "error", "a tool not allowed"),
             ({"arguments": {"x": 2, "y": 3}}, "error", "a request without a name"),
             ({"name": "add", "arguments": [2, 3]}, "error", "arguments that are not an object")]
    for id, (params, want, what) in enumerate(cases, 2):
        reply = server.handle(mcp_min.request(id, "tools/call", params))
        got = "error" if "error" in reply else ("isError" if reply["result"].get("isError") else "result")
        if got != want:
            return f"{what} got {got}, want {want}"
    return None

# ---- the lessons on the full layer: mcp_full, and board ----


def exercise_05_1(ns: dict):
    """05-1: why read_note is not right yet, or None."""
    from mcp_full import InMemoryTransport, MCPClient, MCPServer
    from mcp_min import INVALID_PARAMS, RPCError
    read_note, root = ns["read_note"], ns["root"]
    fresh = MCPServer("check")
    fresh.add_resource("notes://{+name}", read_note)
    checker = MCPClient(InMemoryTransport(fresh))
    checker.initialize()
    if checker.read_resource("notes://hello.txt")["contents"][0].get("text") != "hello from the notes folder":
        return "notes://hello.txt does not read back"
    outside = urllib.parse.quote(str(root / "secret.txt"), safe="")
    tries = {"..%2Fsecret.txt": "..%2Fsecret.txt", "an absolute path": outside, "missing.txt": "missing.txt"}
    for label, name in tries.items():
        try:
            checker.read_resource("notes://" + name)
            return f"{label} was served"
        except RPCError as exc:
            if exc.code != INVALID_PARAMS:
                return f"{label} gave {exc.code}, not -32602 (raise KeyError)"
    return None


def exercise_05_2(ns: dict):
    """05-2: why page() is not right yet, or None."""
    from mcp_full import InMemoryTransport, MCPClient
    from mcp_min import INVALID_PARAMS, RPCError
    paged = ns["PagedServer"]("paged")
    uris = [f"lab://doc{n}" for n in range(5)]
    for uri in uris:
        paged.add_resource(uri, "text")
    walker = MCPClient(InMemoryTransport(paged))
    walker.initialize()
    seen, cursor, pages = [], None, 0
    while pages < 10:
        result = walker.request("resources/list", {} if cursor is None else {"cursor": cursor})
        pages += 1
        if len(result["resources"]) > 2:
            return f"a page held {len(result['resources'])} resources, not at most 2"
        seen += [r["uri"] for r in result["resources"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    if seen != uris:
        return f"walking the pages gave {len(seen)} resources, not the 5 in order"
    try:
        walker.request("resources/list", {"cursor": "not-a-cursor"})
        return "an invalid cursor was accepted"
    except RPCError as exc:
        if exc.code != INVALID_PARAMS:
            return f"an invalid cursor gave {exc.code}, not -32602"
    return None


def exercise_06_1(ns: dict):
    """06-1: why split_lines is not right yet, or None."""
    split_lines = ns["split_lines"]
    stream = (b'{"id": 1}\n\nnot json\n{"text": "caf\xc3\xa9"}\n{"id": 3}\n{"id": 4')
    for size in (1, 2, 3, 7, len(stream)):
        buffer, got = b"", []
        for start in range(0, len(stream), size):
            messages, buffer = split_lines(buffer, stream[start:start + size])
            got += messages
        if got != [{"id": 1}, {"text": "café"}, {"id": 3}]:
            return f"in chunks of {size} bytes the messages were {got}"
        if buffer != b'{"id": 4':
            return f"in chunks of {size} bytes the rest was {buffer!r}, not the unfinished last line"
    return None


def exercise_07_1(ns: dict):
    """07-1: why ResourceCache is not right yet, or None."""
    from mcp_full import InMemoryTransport, MCPClient, MCPServer
    from mcp_min import notification
    ResourceCache = ns["ResourceCache"]
    watched = MCPServer("watched")
    watched.add_resource("lab://status", "all green", name="status")
    watched.add_resource("lab://motd", "hello", name="motd")
    reads = []
    reader = MCPClient(InMemoryTransport(watched, trace=lambda d, m: reads.append(m["params"]["uri"])
                                         if m.get("method") == "resources/read" else None))
    reader.initialize()
    cache = ResourceCache(reader)
    if [cache.read(uri) for uri in ("lab://status", "lab://motd", "lab://status")] != ["all green", "hello", "all green"]:
        return "read() does not return each resource's text"
    if reads != ["lab://status", "lab://motd"]:
        return f"three reads of two resources sent resources/read for {reads}, not once each"
    others = [notification("notifications/tools/list_changed"),  # none of these names a resource the cache holds
              notification("notifications/resources/list_changed"),
              notification("notifications/resources/updated", {"uri": "lab://elsewhere"}),
              notification("notifications/message", {"level": "info", "data": "lab://motd"})]
    for note in others:
        cache.on_notification(note)
    reads.clear()
    cache.read("lab://status"), cache.read("lab://motd")
    if reads:
        return f"notifications that name neither resource made the cache read {reads} again"
    watched.add_resource("lab://status", "one disk is full", name="status", replace=True)  # subscribers are told
    for note in reader._pump_notifications():
        cache.on_notification(note)
    reads.clear()
    if cache.read("lab://status") != "one disk is full":
        return "after notifications/resources/updated the cache still holds the old text"
    if cache.read("lab://motd") != "hello" or reads != ["lab://status"]:
        return f"after lab://status changed, the reads sent resources/read for {reads}, not for lab://status alone"
    return None


def exercise_08_1(ns: dict):
    """08-1: why SharedCache is not right yet, or None."""
    from mcp_full import InMemoryTransport, MCPClient
    SharedCache, make_server = ns["SharedCache"], ns["make_server"]
    fetches = []

    def fetcher(scope, ttl_ms):
        def fetch():
            fetches.append(scope)
            return {"tools": [], "resultType": "complete", "ttlMs": ttl_ms, "cacheScope": scope}
        return fetch

    cache = SharedCache()
    for user in ["alice", "bob", "alice"]:
        cache.get(user, "public list", fetcher("public", 60_000))
    if len(fetches) != 1:
        return f"a public result was fetched {len(fetches)} times for three users, not once"
    fetches.clear()
    for user in ["alice", "bob", "alice"]:
        cache.get(user, "private list", fetcher("private", 60_000))
    if len(fetches) != 2:
        return f"a private result was fetched {len(fetches)} times for alice, bob, alice: not twice"
    fetches.clear()
    cache.get("alice", "stale list", fetcher("public", 0))
    cache.get("alice", "stale list", fetcher("public", 0))
    if len(fetches) != 2:
        return "a result with ttlMs 0 was reused"
    fetches.clear()
    cache.get("alice", "short list", fetcher("public", 50))
    time.sleep(0.08)
    cache.get("alice", "short list", fetcher("public", 50))
    if len(fetches) != 2:
        return "a result was reused after its ttlMs had passed"
    real = MCPClient(InMemoryTransport(make_server(state_key=b"lesson")))
    real.connect()
    for user in ["alice", "bob"]:
        cache.get(user, "demo tools/list", lambda: real.request("tools/list"))
    if real.next_id != 4:  # discover, then one tools/list for each user: the demo's lists are private
        return "the demo server's private tools/list was shared between users"
    return None


def exercise_09_1(ns: dict):
    """09-1: why pick_date is not right yet, or None."""
    from mcp_full import InMemoryTransport, MCPClient, MCPServer
    pick_date = ns["pick_date"]
    clinic = MCPServer("clinic")
    clinic.add_tool("pick_date", pick_date)
    said = iter(["tomorrow", "24/12", "2026-12-24"])
    patient = MCPClient(InMemoryTransport(clinic),
                        on_elicit=lambda question: {"action": "accept", "content": {"date": next(said)}})
    patient.connect()
    text = patient.call_tool("pick_date")["content"][0]["text"]
    if text != "Booked 2026-12-24":
        return f"after 'tomorrow', '24/12', '2026-12-24' the tool said {text!r}"
    shy = MCPClient(InMemoryTransport(clinic), on_elicit=lambda question: {"action": "decline"})
    shy.connect()
    text = shy.call_tool("pick_date")["content"][0]["text"]
    if text != "Nothing booked.":
        return f"a declined question gave {text!r}"
    return None


def exercise_10_1(ns: dict):
    """10-1: why route is not right yet, or None."""
    from mcp_min import notification
    SUBSCRIPTION, route = ns["SUBSCRIPTION"], ns["route"]

    def tagged(method, sid, **params):
        return notification(method, {**params, "_meta": {SUBSCRIPTION: sid}})

    cases = [(tagged("notifications/tools/list_changed", 7), "tools"),
             (tagged("notifications/prompts/list_changed", 7), "prompts"),
             (tagged("notifications/resources/list_changed", 7), "resources"),
             (tagged("notifications/resources/updated", 7, uri="note://today"), "note://today"),
             (tagged("notifications/tools/list_changed", 8), None),
             (tagged("notifications/tools/list_changed", "7"), None),
             (notification("notifications/tools/list_changed"), None),
             (notification("notifications/progress", {"progressToken": 7, "progress": 1}), None),
             (notification("notifications/message", {"level": "info", "data": "x"}), None),
             (tagged("notifications/subscriptions/acknowledged", 7, notifications={}), None)]
    for note, want in cases:
        got = route(note, 7)
        if got != want:
            return f"route({json.dumps(note)}, 7) gave {got!r}, not {want!r}"
    return None


def exercise_11_1(ns: dict):
    """11-1: why LINES is not right yet, or None."""
    import board
    LINES = ns["LINES"]
    if not LINES:
        return "LINES is empty"
    model = board.Board()
    for t, (direction, message) in enumerate(LINES):
        model.feed(direction, json.dumps(message), t=t / 10)
    model.end(len(LINES) / 10)
    rules = [flag["rule"] for event in model.events for flag in event["flags"]]
    if rules != ["reused-id"]:
        return f"the board flagged {rules}, not just ['reused-id']"
    return None


def exercise_11_2(ns: dict):
    """11-2: why PREDICTION is not right yet, or None."""
    DEMO, PREDICTION, ROOT = ns["DEMO"], ns["PREDICTION"], ns["ROOT"]

    def watch_sdk(fault: str) -> str:
        """The official client calls count_lessons through the board under fault; print the wire; "returns" or "raises"."""
        import tempfile
        import anyio
        from mcp import Client, MCPError, StdioServerParameters
        from mcp.client.stdio import stdio_client
        log = pathlib.Path(tempfile.mkdtemp()) / "wire.log"
        params = StdioServerParameters(command=sys.executable, args=[str(ROOT / "board.py"), "--log", str(log),
                                                                     "--fault", fault, "--", *DEMO])

        async def session():
            with open(os.devnull, "w") as quiet, anyio.fail_after(20):  # the child's stderr: the board's and the SDK's notes
                async with Client(stdio_client(params, errlog=quiet), mode="legacy", read_timeout_seconds=5) as client:
                    try:
                        await client.call_tool("count_lessons", {"course": "postgres"})
                        return "returns"
                    except MCPError:
                        return "raises"

        import concurrent.futures  # a notebook's kernel runs an event loop in its own thread: anyio.run needs another
        with concurrent.futures.ThreadPoolExecutor(1) as other:
            outcome = other.submit(anyio.run, session).result()
        print(f"--fault {fault}: the SDK's call_tool {outcome}; the wire:")
        print("\n".join("  " + line[:140] for line in log.read_text(encoding="utf-8").splitlines()))
        return outcome

    if set(PREDICTION.values()) - {"returns", "raises"}:
        return "set each prediction to 'returns' or 'raises'"
    try:
        import importlib.metadata
        sdk = int(importlib.metadata.version("mcp").split(".")[0]) >= 2
    except importlib.metadata.PackageNotFoundError:
        sdk = False
    if sdk:
        seen = {fault: watch_sdk(fault) for fault in PREDICTION}
    else:
        print("(the official SDK, mcp 2 or newer, is not installed here: your predictions are compared with what"
              " mcp 2.3.0 was seen to do, recorded in lessons/checks.py as SEEN_WITH_MCP_2_3_0)")
        seen = SEEN_WITH_MCP_2_3_0
    for fault, predicted in PREDICTION.items():
        if predicted != seen[fault]:
            return f"under --fault {fault} the SDK's call_tool {seen[fault]}"
    return None


def exercise_12_1(ns: dict):
    """12-1: why minted_for is not right yet, or None."""
    minted_for = ns["minted_for"]
    here = "http://127.0.0.1:8000/mcp"
    cases = [({"aud": here}, True), ({"aud": ["http://127.0.0.1:9/mcp", here]}, True), ({}, False),
             ({"aud": "http://127.0.0.1:9/mcp"}, False), ({"aud": here + "-admin"}, False), ({"aud": [here + "/x"]}, False),
             ({"aud": "http://127.0.0.1:8000"}, False), ({"aud": None}, False)]
    for claims, expected in cases:
        if minted_for(claims, here) is not expected:
            verdict = "may" if expected else "may not"
            return f"a token whose claims are {claims} {verdict} be used at {here}"
    return None
