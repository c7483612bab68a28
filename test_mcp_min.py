"""Tests of course 000's lab, mcp_min.py alone: messages, the server (gate, dispatch, lattice, outbox), the client,
in memory. python -m pytest test_mcp_min.py takes a second.

The exchange table reads like Norvig's lis.py tests: a message in, the exact response out (or None). Its rows
run against the lab and against mcp_full.py's server, which builds on it: a program written against the lab
gets the same answers from the full layer.
"""

import ast
import functools
import json
import pathlib
import re
import subprocess
import sys
import traceback

import pytest

import mcp_min
from mcp_min import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, NOT_INITIALIZED,
                     TOOL_NOT_ALLOWED, UNKNOWN_TOOL, InMemoryTransport, MCPClient, MCPServer, RPCError,
                     error_response, is_notification, notification, request, response)

HERE = pathlib.Path(__file__).resolve().parent
SERVER_INFO = {"name": "course-lab", "version": "0.1.0"}
XY = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
PAINT = {"type": "object", "properties": {"color": {"type": "string", "enum": ["red", "blue"]},
                                          "finish": {"type": ["string", "null"]}, "glossy": {"type": "boolean"}},
         "required": ["color"]}


def layers() -> list:
    """The lab, and the full layer built on it (imported here only, so that the lab's own tests need only the lab)."""
    import mcp_full
    return [mcp_min, mcp_full]


def course_server(layer=mcp_min, calls=None) -> MCPServer:
    """Course 000's lab, written against the lab's API: add, weather, delete_db (not allowed), divide, paint (a richer
    schema), a resource, a prompt."""
    calls = calls if calls is not None else []
    server = layer.MCPServer("course-lab", allowed_tools={"add", "weather", "divide", "subtract", "paint"})
    server.add_tool("add", lambda x, y: x + y, "Add two integers.", XY)
    server.add_tool("weather", lambda city: f"Sunny in {city}", "Tell the weather.",
                    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
    server.add_tool("delete_db", lambda: calls.append("delete_db") or "deleted", "Delete the database.")
    server.add_tool("divide", lambda x, y: x / y, "Divide x by y.",
                    {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                     "required": ["x", "y"]})
    server.add_tool("paint", lambda color, finish=None, glossy=False: f"{color} {finish} {glossy}", "Paint.", PAINT)
    server.add_resource("file:///readme.txt", "hello")
    server.add_resource("logo://png", b"\x89PNG", mime_type="image/png")
    server.add_prompt("summarize_incident", lambda severity: f"Summarize this {severity}-severity incident.",
                      "Summarize an incident.", [{"name": "severity", "required": True}])
    return server


def ready_server(layer=mcp_min, **options) -> MCPServer:
    """A course server whose session has passed the handshake."""
    server = course_server(layer, **options)
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    return server


def subtract(x: int, y: int) -> int:
    """Subtract y from x."""
    return x - y


# ---- the course's worked trace (course 000, steps 1-6), message by message ----

def test_worked_trace_of_course_000_reproduces_message_for_message():
    # Every message of the six steps is compared whole, as it crossed the JSON boundary.
    wire = []
    server = course_server()
    client = MCPClient(InMemoryTransport(server, trace=lambda direction, message: wire.append((direction, message))),
                       name="tiny-client")
    client.initialize(protocol_version="2025-06-18")
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    with pytest.raises(RPCError):
        client.call_tool("delete_db")
    server.add_tool("subtract", subtract, "Subtract y from x.", XY, notify=True)  # step 6
    client._pump_notifications()
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tiny-client", "version": "0.1.0"}}
    assert wire == [
        ("→", request(1, "initialize", init)),
        ("←", response(1, {"protocolVersion": "2025-06-18",
                           "capabilities": {"tools": {"listChanged": True}, "resources": {}, "prompts": {}},
                           "serverInfo": SERVER_INFO})),
        ("→", {"jsonrpc": "2.0", "method": "notifications/initialized"}),  # no id, and nothing comes back
        ("→", request(2, "tools/list")),
        ("←", response(2, {"tools": [server.tools[name]["spec"] for name in ("add", "weather", "delete_db", "divide",
                                                                              "paint")]})),
        ("→", request(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})),
        ("←", response(3, {"content": [{"type": "text", "text": "5"}]})),
        ("→", request(4, "tools/call", {"name": "delete_db", "arguments": {}})),
        ("←", error_response(4, -32600, "tool 'delete_db' not permitted for this session")),
        ("←", notification("notifications/tools/list_changed")),  # drained from the outbox by the pump
        ("→", request(5, "tools/list")),
        ("←", response(5, {"tools": [server.tools[name]["spec"] for name in
                                     ("add", "weather", "delete_db", "divide", "paint", "subtract")]})),
    ]
    assert [tool["name"] for tool in client.tools_cache][-1] == "subtract"


# ---- the exchange table: a message in, the exact response out ----

def error(id, code: int, message: str, data=None) -> dict:
    """An expected error response."""
    return error_response(id, code, message, data)


# (name, session state, message, expected response or None); "CAPABILITIES" stands for the layer's own.
EXCHANGES = [
    # Message shapes (course 000, "Three message shapes"): ids, jsonrpc, params.
    ("ping before the handshake", "new", request(7, "ping"), response(7, {})),
    ("id 0 is a valid id", "ready", request(0, "ping"), response(0, {})),
    ("string ids are echoed", "ready", request("abc", "ping"), response("abc", {})),
    ("id null is a malformed request", "ready", {"jsonrpc": "2.0", "id": None, "method": "ping"},
     error(None, INVALID_REQUEST, "id must be a string or an integer; a notification has no id key at all")),
    ("a boolean id is not an integer", "ready", {"jsonrpc": "2.0", "id": True, "method": "ping"},
     error(None, INVALID_REQUEST, "id must be a string or an integer")),
    ("a float id is refused", "ready", {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
     error(None, INVALID_REQUEST, "id must be a string or an integer")),
    ("jsonrpc missing", "ready", {"id": 1, "method": "ping"}, error(1, INVALID_REQUEST, 'jsonrpc must be "2.0"')),
    ("jsonrpc 1.0", "ready", {"jsonrpc": "1.0", "id": 1, "method": "ping"}, error(1, INVALID_REQUEST, 'jsonrpc must be "2.0"')),
    ("params that are a list", "ready", {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]},
     error(1, INVALID_REQUEST, "params must be an object")),
    ("method that is not a string", "ready", {"jsonrpc": "2.0", "id": 1, "method": 5},
     error(1, INVALID_REQUEST, "method must be a string")),
    ("a batch (a list)", "ready", [request(1, "ping")], error(None, INVALID_REQUEST, "a message must be a JSON object")),
    ("a number", "ready", 42, error(None, INVALID_REQUEST, "a message must be a JSON object")),
    ("a notification is never answered", "ready", notification("notifications/cancelled", {"requestId": 1}), None),
    ("not even a broken one", "ready", {"jsonrpc": "1.0", "method": "notifications/initialized"}, None),
    ("an unknown notification", "ready", notification("notifications/whatever"), None),
    ("a response sent to the server is not answered", "ready", response(9, {}), None),
    ("neither a method nor a result", "ready", {"jsonrpc": "2.0", "id": 1}, error(1, INVALID_REQUEST, "method must be a string")),
    # The handshake gate (course 000, "The stateful handshake and its invariant").
    # The course's text, and in data the step missing: after initialize's response it is not initialize that failed.
    ("tools/list before the handshake", "new", request(2, "tools/list"),
     error(2, NOT_INITIALIZED, "server not initialized", {"missing": "initialize"})),
    ("tools/list between initialize and initialized", "initializing", request(2, "tools/list"),
     error(2, NOT_INITIALIZED, "server not initialized", {"missing": "notifications/initialized"})),
    ("tools/call before the handshake", "new", request(2, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 2}}),
     error(2, NOT_INITIALIZED, "server not initialized", {"missing": "initialize"})),
    ("initialize echoes a supported version", "new", request(1, "initialize", INIT),
     response(1, {"protocolVersion": "2025-06-18", "capabilities": "CAPABILITIES", "serverInfo": SERVER_INFO})),
    ("initialize counter-offers for an unknown version", "new",
     request(1, "initialize", {**INIT, "protocolVersion": "2024-11-05"}),
     response(1, {"protocolVersion": "2025-11-25", "capabilities": "CAPABILITIES", "serverInfo": SERVER_INFO})),
    ("a second initialize", "ready", request(9, "initialize", INIT), error(9, INVALID_REQUEST, "session already initialized")),
    ("initialize without a version", "new", request(1, "initialize", {}),
     error(1, INVALID_PARAMS, "params.protocolVersion must be string")),
    # Dispatch and the tool lattice (course 000, "Dispatch to primitives, and the _call_tool error lattice").
    ("an unknown method", "ready", request(3, "tools/destroy"), error(3, METHOD_NOT_FOUND, "method not found: tools/destroy")),
    ("add", "ready", request(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}),
     response(3, {"content": [{"type": "text", "text": "5"}]})),
    ("a string result is its one text block", "ready", request(3, "tools/call", {"name": "weather", "arguments": {"city": "Oslo"}}),
     response(3, {"content": [{"type": "text", "text": "Sunny in Oslo"}]})),
    ("unknown tool", "ready", request(3, "tools/call", {"name": "nope", "arguments": {}}),
     error(3, UNKNOWN_TOOL, "unknown tool: nope")),
    ("tool not in the allow-list", "ready", request(3, "tools/call", {"name": "delete_db", "arguments": {}}),
     error(3, TOOL_NOT_ALLOWED, "tool 'delete_db' not permitted for this session")),
    ("missing argument", "ready", request(3, "tools/call", {"name": "add", "arguments": {"x": 2}}),
     error(3, INVALID_PARAMS, "missing required argument: y")),
    ("an argument the tool does not take", "ready", request(3, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 2, "z": 3}}),
     error(3, INVALID_PARAMS, "unexpected argument: z (this tool takes x, y)")),
    ("argument of the wrong type", "ready", request(3, "tools/call", {"name": "add", "arguments": {"x": "2", "y": 3}}),
     error(3, INVALID_PARAMS, "argument 'x' must be integer")),
    ("a boolean is not an integer", "ready", request(3, "tools/call", {"name": "add", "arguments": {"x": True, "y": 3}}),
     error(3, INVALID_PARAMS, "argument 'x' must be integer")),
    ("an integer is a number", "ready", request(3, "tools/call", {"name": "divide", "arguments": {"x": 1, "y": 4}}),
     response(3, {"content": [{"type": "text", "text": "0.25"}]})),
    ("a value outside an enum", "ready", request(3, "tools/call", {"name": "paint", "arguments": {"color": "green"}}),
     error(3, INVALID_PARAMS, "argument 'color' must be one of ['red', 'blue']")),
    ("a type that is a list of types", "ready",
     request(3, "tools/call", {"name": "paint", "arguments": {"color": "red", "finish": None, "glossy": True}}),
     response(3, {"content": [{"type": "text", "text": "red None True"}]})),
    ("a value of none of the types", "ready", request(3, "tools/call", {"name": "paint", "arguments": {"color": "red", "finish": 2}}),
     error(3, INVALID_PARAMS, "argument 'finish' must be string or null")),
    ("arguments that are not an object", "ready", request(3, "tools/call", {"name": "add", "arguments": [2, 3]}),
     error(3, INVALID_PARAMS, "params.arguments must be object")),
    ("a tool name that is not a string", "ready", request(3, "tools/call", {"name": ["add"]}),
     error(3, INVALID_PARAMS, "params.name must be string")),
    ("the tool raised: an isError result", "ready", request(3, "tools/call", {"name": "divide", "arguments": {"x": 1, "y": 0}}),
     response(3, {"content": [{"type": "text", "text": "ERROR: division by zero"}], "isError": True})),
    # Resources and prompts (course 000's six methods).
    ("a resource", "ready", request(4, "resources/read", {"uri": "file:///readme.txt"}),
     response(4, {"contents": [{"uri": "file:///readme.txt", "mimeType": "text/plain", "text": "hello"}]})),
    ("a binary resource is a base64 blob", "ready", request(4, "resources/read", {"uri": "logo://png"}),
     response(4, {"contents": [{"uri": "logo://png", "mimeType": "image/png", "blob": "iVBORw=="}]})),
    ("an unknown URI", "ready", request(4, "resources/read", {"uri": "file:///nope"}),
     error(4, INVALID_PARAMS, "unknown resource: file:///nope", {"uri": "file:///nope"})),
    ("a prompt", "ready", request(5, "prompts/get", {"name": "summarize_incident", "arguments": {"severity": "high"}}),
     response(5, {"description": "Summarize an incident.", "messages": [
         {"role": "user", "content": {"type": "text", "text": "Summarize this high-severity incident."}}]})),
    ("a missing prompt variable", "ready", request(5, "prompts/get", {"name": "summarize_incident", "arguments": {}}),
     error(5, INVALID_PARAMS, "missing prompt variable: severity")),
    ("an unknown prompt", "ready", request(5, "prompts/get", {"name": "nope"}), error(5, INVALID_PARAMS, "unknown prompt: nope")),
]


def session(layer, state: str) -> MCPServer:
    """A course server of layer whose session is "new", "initializing" (initialize answered) or "ready"."""
    server = course_server(layer)
    if state in ("initializing", "ready"):
        server.handle(request(1, "initialize", INIT))
    if state == "ready":
        server.handle(notification("notifications/initialized"))
    return server


@pytest.mark.parametrize("name, state, message, expected", EXCHANGES, ids=[row[0] for row in EXCHANGES])
def test_exchange(name, state, message, expected):
    # One message against a session of the lab in the given state: the response is exactly the one in the table.
    expected = json.loads(json.dumps(expected).replace('"CAPABILITIES"', json.dumps(MCPServer.CAPABILITIES)))
    assert session(mcp_min, state).handle(message) == expected


@pytest.mark.parametrize("name, state, message, expected", EXCHANGES, ids=[row[0] for row in EXCHANGES])
def test_course_000_exchange_on_the_full_layer(name, state, message, expected):
    # The same message, the same answer from mcp_full's server: only the capabilities it declares differ.
    full = layers()[1]
    expected = json.loads(json.dumps(expected).replace('"CAPABILITIES"', json.dumps(full.MCPServer.CAPABILITIES)))
    assert session(full, state).handle(message) == expected


def test_the_course_still_pins_minus_32601_for_an_unknown_tool():
    # Course 000 says an unknown tool is -32601; the spec says -32602 (README): the lab keeps the course's choice.
    assert (UNKNOWN_TOOL, TOOL_NOT_ALLOWED, NOT_INITIALIZED) == (-32601, -32600, -32600)


# ---- messages ----

def test_notification_has_no_id_key_at_all():
    # The absence of the key is load-bearing (course 000): never "id": None.
    message = notification("notifications/initialized")
    assert "id" not in message and is_notification(message)
    assert message == {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_a_request_with_id_null_is_not_a_notification():
    # "id": null is a present key, so the predicate says request, and the server refuses it.
    assert not is_notification({"jsonrpc": "2.0", "id": None, "method": "notifications/initialized"})


def test_request_and_error_response_shapes():
    # The helpers build the spec's shapes: params only when given, data only when given.
    assert request(1, "tools/list") == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert notification("notifications/progress", {"progress": 1}) == {
        "jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
    assert error_response(1, -32602, "bad", {"uri": "x"}) == {"jsonrpc": "2.0", "id": 1,
                                                              "error": {"code": -32602, "message": "bad", "data": {"uri": "x"}}}


# ---- the server's behaviour ----

def test_the_not_allowed_tool_never_runs():
    # The allow-list is checked before execution: the side effect never happens.
    calls = []
    server = ready_server(calls=calls)
    assert server.handle(request(3, "tools/call", {"name": "delete_db", "arguments": {}}))["error"]["code"] == -32600
    assert calls == []


def test_a_raising_tool_leaves_the_session_usable(capsys):
    # The tool's exception is a result, its author reads where on stderr, and the next call works.
    server = ready_server()
    assert server.handle(request(3, "tools/call", {"name": "divide", "arguments": {"x": 1, "y": 0}}))["result"]["isError"]
    assert server.handle(request(4, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 2}}))["result"] == {
        "content": [{"type": "text", "text": "3"}]}
    assert capsys.readouterr().err.endswith("ZeroDivisionError: division by zero\n")


def test_a_tool_that_calls_sys_exit_gets_an_is_error_result_and_the_server_lives():
    # SystemExit is not an Exception: caught all the same, since a tool must never end the server.
    server = ready_server()
    server.add_tool("leave", lambda: sys.exit(3), "Exit the process (a student's mistake).")
    server.allowed_tools.add("leave")
    assert server.handle(request(3, "tools/call", {"name": "leave"}))["result"] == {
        "content": [{"type": "text", "text": "ERROR: 3"}], "isError": True}
    assert server.handle(request(4, "ping")) == response(4, {})


def test_an_exception_without_a_message_still_names_what_it_was():
    # ValueError() says nothing: the isError text names its type rather than being empty.
    server = ready_server()

    def shrug():
        raise ValueError()
    server.add_tool("shrug", shrug, "Fail without a word.")
    server.allowed_tools.add("shrug")
    assert server.handle(request(3, "tools/call", {"name": "shrug"}))["result"]["content"] == [
        {"type": "text", "text": "ERROR: ValueError"}]


def test_a_tool_may_answer_with_a_protocol_error_of_its_choosing():
    # An RPCError a tool raises is deliberate (tier 1): an error response with its code, not an isError result.
    server = ready_server()

    def positive(x):
        if x < 0:
            raise RPCError(INVALID_PARAMS, "x must not be negative")
        return x
    server.add_tool("positive", positive, "Echo x, if x >= 0.", {"type": "object", "properties": {"x": {"type": "integer"}}})
    server.allowed_tools.add("positive")
    assert server.handle(request(3, "tools/call", {"name": "positive", "arguments": {"x": -1}})) == error(
        3, INVALID_PARAMS, "x must not be negative")


def test_a_bug_in_a_method_handler_becomes_internal_error_without_traceback():
    # Not a tool: a handler itself raising becomes -32603, and the session goes on.
    server = ready_server()
    server._list_tools = lambda params: {}["missing"]  # this session's handler, broken
    reply = server.handle(request(3, "tools/list"))
    assert reply == error_response(3, INTERNAL_ERROR, "internal error: KeyError('missing')")
    assert "Traceback" not in json.dumps(reply)
    assert server.handle(request(4, "ping")) == response(4, {})


@pytest.mark.parametrize("returned, said", [(None, "nothing (None)"), ("tools", "a str"), ([], "a list")])
def test_a_handler_that_returns_no_result_is_answered_internal_error_naming_its_method(returned, said):
    # A handler that forgot its return (or returned the wrong thing): -32603 says so, rather than a silent wait.
    server = ready_server()
    server._list_tools = lambda params: returned
    assert server.handle(request(3, "tools/list")) == error_response(
        3, INTERNAL_ERROR, f"internal error: TypeError('the handler of tools/list returned {said}: "
                           "it must return its result, a dict')")
    assert server.handle(request(4, "ping")) == response(4, {})


def test_a_resource_or_prompt_that_raises_is_internal_error_and_reported_on_stderr(capsys):
    # Not a tool, so no isError result: -32603, and its author reads where on stderr, as a tool's does.
    server = ready_server()
    server.add_resource("data://broken", lambda: {}["missing"])
    assert server.handle(request(4, "resources/read", {"uri": "data://broken"})) == error_response(
        4, INTERNAL_ERROR, "internal error: KeyError('missing')")
    assert capsys.readouterr().err.startswith("mcp_min: the resource data://broken failed:\n")


def test_a_notification_whose_handling_breaks_still_gets_no_reply():
    # Even an exception while a notification is handled is never answered, and the session goes on.
    server = ready_server()

    def broken(method, params):
        raise RuntimeError("a bug in the notification path")
    server._notice = broken
    assert server.handle(notification("notifications/initialized")) is None
    assert server.handle(request(5, "ping")) == response(5, {})


def test_a_notification_naming_a_method_is_never_served():
    # A message without an id gets no response, and its method never runs: a tool called by notification does not.
    ran = []
    server = ready_server()
    server.add_tool("log", lambda: ran.append("log") or "logged")
    server.allowed_tools.add("log")
    assert server.handle(notification("tools/call", {"name": "log", "arguments": {}})) is None
    assert ran == []


def test_an_internal_error_message_is_cut_at_200_characters():
    # A handler's exception may be long: the -32603 message keeps its first 200 characters.
    server = ready_server()
    server._list_tools = lambda params: {}["x" * 300]
    message = server.handle(request(3, "tools/list"))["error"]["message"]
    assert message == ("internal error: KeyError('" + "x" * 300)[:200]


def test_initialize_keeps_what_the_client_declared():
    # clientInfo (a claim) and capabilities, for the session; a client that declares none has {}.
    server = course_server()
    server.handle(request(1, "initialize", {**INIT, "capabilities": {"elicitation": {}}}))
    assert (server.client_info, server.client_capabilities) == (INIT["clientInfo"], {"elicitation": {}})
    bare = course_server()
    bare.handle(request(1, "initialize", {"protocolVersion": "2025-06-18"}))
    assert (bare.client_info, bare.client_capabilities, MCPServer("x").protocol_version) == (None, {}, None)


def test_add_functions_return_theirs_and_read_names_and_descriptions_from_them():
    # Each add_* returns what it was given; a description left out is the docstring's first line; a name, the URI.
    server = MCPServer("x")

    def status() -> str:
        """The status.

        More than the first line."""
        return "green"

    def greet(name):
        """Greet someone."""
        return f"Hello, {name}"
    assert server.add_tool("subtract", subtract, input_schema=XY) is subtract
    assert server.add_resource("lab://status", status) is status
    assert server.add_prompt("greet", greet, arguments=[{"name": "name", "required": True}]) is greet
    assert server.tools["subtract"]["spec"]["description"] == "Subtract y from x."
    assert server.resources["lab://status"]["spec"] == {"uri": "lab://status", "name": "lab://status",
                                                         "mimeType": "text/plain", "description": "The status."}
    assert server.prompts["greet"]["spec"]["description"] == "Greet someone."


def test_a_resource_or_prompt_may_answer_with_a_protocol_error_of_its_choosing():
    # As a tool may (tier 1): the RPCError its function raises is the error response, with its code.
    def gone():
        raise RPCError(INVALID_PARAMS, "this one is gone", {"uri": "lab://gone"})
    server = ready_server()
    server.add_resource("lab://gone", gone)
    server.add_prompt("gone", gone)
    assert server.handle(request(4, "resources/read", {"uri": "lab://gone"})) == error(
        4, INVALID_PARAMS, "this one is gone", {"uri": "lab://gone"})
    assert server.handle(request(5, "prompts/get", {"name": "gone"})) == error(
        5, INVALID_PARAMS, "this one is gone", {"uri": "lab://gone"})


def test_a_failing_tool_is_reported_on_stderr_from_its_own_code_only(capsys):
    # The author reads the file, line and code of their own function, never a frame of mcp_min.py.
    def divide(x, y):
        return x / y
    line = divide.__code__.co_firstlineno + 1
    server = live_server(("divide", divide, XY))
    call(server, "divide", {"x": 1, "y": 0})
    assert capsys.readouterr().err == (f'mcp_min: the tool divide failed:\n  File "test_mcp_min.py", line {line}, in divide\n'
                                       "    return x / y\nZeroDivisionError: division by zero\n")


def test_a_diagnosis_goes_to_stderr_whole_and_after_what_print_left_there():
    # say() writes on sys.stderr and flushes it, after what print() left in its buffer (here a buffer of the
    # program's own, as a logging setup may give it), and never on stdout, the wire over stdio.
    code = ("import io, sys; sys.path.insert(0, sys.argv[1]); import mcp_min\n"
            "sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, 'w', closefd=False)), write_through=False)\n"
            "print('first,', end=' ', file=sys.stderr); mcp_min.say('then the diagnosis ' + 'x' * 100000)\n"
            "sys.stderr.flush()")
    done = subprocess.run([sys.executable, "-c", code, str(HERE)], capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr) == ("", "first, then the diagnosis " + "x" * 100000 + "\n")


def test_the_version_guard_stops_an_older_python_with_one_line():
    # The guard before the imports, run with a pretended sys: 3.9 ends the program naming itself, 3.10 passes.
    tree = ast.parse((HERE / "mcp_min.py").read_text(encoding="utf-8"))
    guard = next(node for node in tree.body if isinstance(node, ast.If))
    code = compile(ast.Module([guard], []), "mcp_min.py", "exec")

    class Pretended:
        exit = staticmethod(sys.exit)

        def __init__(self, version: tuple):
            self.version_info, self.version = version, ".".join(map(str, version)) + " (main, Jan 1 2024)"
    exec(code, {"sys": Pretended((3, 10, 0))})
    with pytest.raises(SystemExit, match=r"^mcp_min needs Python 3.10 or newer; this is Python 3.9.18$"):
        exec(code, {"sys": Pretended((3, 9, 18))})


def test_initialized_flips_the_gate_only_after_initialize():
    # A bare notifications/initialized does not open a session that never began.
    server = course_server()
    server.handle(notification("notifications/initialized"))
    assert server._initialized is False
    server.handle(request(1, "initialize", INIT))
    assert server._initialized is False
    server.handle(notification("notifications/initialized"))
    assert server._initialized is True


def test_version_negotiation_rules():
    # Echo a supported version; else the newest not newer than asked; else the newest.
    assert [mcp_min.negotiate_version(v) for v in ("2025-06-18", "2025-11-25", "2025-08-01", "2025-03-26",
                                                    "2026-07-28", "9999")] == [
        "2025-06-18", "2025-11-25", "2025-06-18", "2025-11-25", "2025-11-25", "2025-11-25"]


def test_the_outbox_is_empty_before_initialization():
    # Registering with notify=True before the session is live queues nothing: the client has no cache yet.
    server = course_server()
    server.add_tool("subtract", subtract, input_schema=XY, notify=True)
    assert server._outbox == []


def test_registering_after_initialization_queues_a_bare_list_changed():
    # A bare invalidation, no payload; without notify=True, nothing.
    server = ready_server()
    server.add_tool("quiet", lambda: 1)
    server.add_tool("t", lambda: 1, notify=True)
    assert server._outbox == [notification("notifications/tools/list_changed")]


def test_a_list_change_the_capabilities_do_not_promise_is_refused():
    # The lab declares tools.listChanged only (course 000): notify=True for a resource or prompt names the fix.
    server = ready_server()
    with pytest.raises(ValueError, match="promise no resources list changes: add it with notify=False"):
        server.add_resource("a://b", "x", notify=True)
    with pytest.raises(ValueError, match="promise no prompts list changes"):
        server.add_prompt("p", lambda: "x", notify=True)
    assert server._outbox == [] and "a://b" not in server.resources


def test_a_second_tool_of_the_same_name_is_refused_unless_replace():
    # Silently replacing the first would hide a mistake; replace=True says it is meant.
    server = course_server()
    with pytest.raises(ValueError, match="a tool named 'add' is offered already; pass replace=True"):
        server.add_tool("add", lambda x, y: 0, "", XY)
    server.add_tool("add", lambda x, y: 0, "", XY, replace=True)
    assert server.tools["add"]["spec"]["description"] == ""


def test_a_tool_name_the_spec_does_not_allow_is_refused():
    # 1 to 128 letters, digits, "_", "-" or "." (spec 2025-11-25, server/tools).
    for name in ("my tool", "a/b", "", "x" * 129):
        with pytest.raises(ValueError, match="is not a tool name"):
            MCPServer("x").add_tool(name, lambda: 1)


def test_a_result_json_cannot_carry_is_an_is_error_result_naming_what_it_can():
    # A value json.dumps cannot write is the tool's failure, not a broken wire; the text says what JSON carries.
    server = ready_server()
    server.add_tool("odd", lambda: {"when": object()})
    server.add_tool("tags", lambda: {"a"})
    server.add_tool("whole", lambda: {"content": [{"type": "text", "text": "t"}], "_meta": {"at": float("nan")}})
    server.allowed_tools |= {"odd", "tags", "whole"}
    texts = [server.handle(request(3, "tools/call", {"name": name}))["result"]["content"][0]["text"]
             for name in ("odd", "tags", "whole")]
    try:  # the json module's own words for NaN, which Python 3.12 changed
        mcp_min.ENCODER.encode(float("nan"))
    except ValueError as exc:
        nan = str(exc)
    assert texts == ["ERROR: the tool returned what JSON cannot carry (Object of type object is not JSON serializable): "
                     "return a str, a number, true, false, or lists and dicts of them",
                     "ERROR: the tool returned what JSON cannot carry (Object of type set is not JSON serializable): "
                     "return a str, a number, true, false, or lists and dicts of them",
                     f"ERROR: the tool returned what JSON cannot carry ({nan}): return a str, a number, true, false, "
                     "or lists and dicts of them"]
    assert nan.startswith("Out of range float values are not JSON compliant")


def test_a_prompt_may_return_several_messages():
    # Strings become user turns; message dicts (assistant turns, other blocks) pass as they are.
    server = ready_server()
    reply_turn = {"role": "assistant", "content": {"type": "text", "text": "Sure."}}
    server.add_prompt("chat", lambda topic: [f"Explain {topic}.", reply_turn], "", [{"name": "topic", "required": True}])
    result = server.handle(request(5, "prompts/get", {"name": "chat", "arguments": {"topic": "MCP"}}))["result"]
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": "Explain MCP."}}, reply_turn]


def test_an_allow_list_is_a_collection_of_names_not_one_string():
    # allowed_tools="add" would allow "a", "d"... : refused, with the fix.
    with pytest.raises(TypeError, match=r"such as \{'add'\}, not one string"):
        MCPServer("x", allowed_tools="add")


# ---- the client ----

def test_client_ids_count_up_from_one_and_errors_raise():
    # request() returns the result, or raises RPCError with the server's code.
    client = MCPClient(InMemoryTransport(course_server()))
    client.initialize()
    assert client.next_id == 2
    with pytest.raises(RPCError) as caught:
        client.call_tool("nope")
    assert (caught.value.code, caught.value.message) == (UNKNOWN_TOOL, "unknown tool: nope")


def test_client_list_methods_fill_their_caches():
    # list_* return lists of their items, kept as the caches; read_resource and get_prompt return the result.
    client = MCPClient(InMemoryTransport(course_server()))
    client.initialize()
    assert client.list_tools() is client.tools_cache
    assert [r["uri"] for r in client.list_resources()] == ["file:///readme.txt", "logo://png"]
    assert [p["name"] for p in client.list_prompts()] == ["summarize_incident"]
    assert client.read_resource("file:///readme.txt")["contents"][0]["text"] == "hello"
    assert client.get_prompt("summarize_incident", {"severity": "low"})["messages"][0]["role"] == "user"
    assert client.ping() == {}


def test_the_outbox_waits_until_the_client_pumps_then_the_cache_holds_subtract():
    # Course 000 step 6: list_changed waits in _outbox; _pump_notifications drains it and the client re-lists.
    server = course_server()
    client = MCPClient(InMemoryTransport(server))
    client.initialize()
    client.list_tools()
    server.add_tool("subtract", subtract, "Subtract y from x.", XY, notify=True)
    assert server._outbox == [notification("notifications/tools/list_changed")]
    assert "subtract" not in [tool["name"] for tool in client.tools_cache]
    assert client._pump_notifications() == [notification("notifications/tools/list_changed")]
    assert server._outbox == [] and "subtract" in [tool["name"] for tool in client.tools_cache]


def test_a_malformed_response_is_an_internal_error_naming_what_is_wrong():
    # result XOR error (course 000): a response with neither is not taken for a result.
    class Broken:
        def send(self, message):
            return {"jsonrpc": "2.0", "id": message["id"]}
    with pytest.raises(RPCError, match="malformed response to ping: it needs exactly one of result and error"):
        MCPClient(Broken()).ping()


@pytest.mark.parametrize("reply, problem", [
    ([1], "not an object"), ({"id": 1, "result": []}, "result is not an object"),
    ({"id": 1, "error": {"code": "404", "message": "gone"}}, "error is not an object with an integer code and a string message"),
    ({"id": 1, "error": {"code": -1, "message": 404}}, "error is not an object with an integer code and a string message"),
    ({"id": 1, "error": "gone"}, "error is not an object with an integer code and a string message"),
    ({"id": 1, "result": {}}, None), ({"id": 1, "error": {"code": -1, "message": "gone"}}, None)])
def test_what_makes_a_response_unusable_is_named(reply, problem):
    # result XOR error, a result that is an object, an error {code: integer, message: string} (course 000).
    assert mcp_min.malformed(reply) == problem


def test_a_client_starts_knowing_nothing_and_initialize_fills_in_the_server():
    # Before the handshake: no version, no server, no caches; after it, what the server said, and its result returned.
    client = MCPClient(InMemoryTransport(course_server()))
    assert (client.protocol_version, client.server_info, client.server_capabilities, client.tools_cache,
            client.resources_cache, client.prompts_cache) == (None,) * 6
    result = client.initialize()
    assert result["protocolVersion"] == mcp_min.VERSIONS[0] == client.protocol_version == "2025-11-25"
    assert (client.server_info, client.server_capabilities) == (SERVER_INFO, MCPServer.CAPABILITIES)


def test_a_client_hangs_up_on_a_version_it_does_not_speak_and_on_silence():
    # A server that answers 2024-11-05, or nothing at all: the client says so rather than going on.
    class Answering:
        def __init__(self, reply):
            self.reply = reply

        def send(self, message):
            return self.reply if self.reply is None else {**self.reply, "id": message["id"]}
    old = {"jsonrpc": "2.0", "result": {"protocolVersion": "2024-11-05", "capabilities": {}, "serverInfo": SERVER_INFO}}
    with pytest.raises(ConnectionError, match="the server chose version '2024-11-05', which this client lacks"):
        MCPClient(Answering(old)).initialize()
    with pytest.raises(ConnectionError, match="no response to ping"):
        MCPClient(Answering(None)).ping()


def test_call_tool_returns_the_result_and_pumps_what_the_call_queued():
    # Course 000 step 6 through call_tool alone: the tool's list_changed is drained and the cache re-listed at once.
    server = course_server()
    server.add_tool("enable_subtract", lambda: server.add_tool("subtract", subtract, "", XY, notify=True) and "enabled")
    server.allowed_tools.add("enable_subtract")
    client = MCPClient(InMemoryTransport(server))
    client.initialize()
    client.list_tools()
    assert client.call_tool("enable_subtract") == {"content": [{"type": "text", "text": "enabled"}]}
    assert client.tools_cache[-1]["name"] == "subtract" and server._outbox == []
    assert client._pump_notifications() == []


def test_closing_the_client_closes_its_transport():
    # The client owns its transport's end.
    class Closable(InMemoryTransport):
        closed = False

        def close(self):
            self.closed = True
    client = MCPClient(Closable(course_server()))
    client.close()
    assert client.transport.closed


def test_print_trace_prints_one_json_line_cut_to_its_width(capsys):
    # The arrow, the message as JSON; a width cuts the line there, its last character "…".
    mcp_min.print_trace("→", request(1, "ping"))
    mcp_min.print_trace("←", response(1, {"text": "café au lait"}), width=56)
    mcp_min.print_trace("←", response(1, {"text": "café"}), width=57)
    assert capsys.readouterr().out.splitlines() == ['→ {"jsonrpc": "2.0", "id": 1, "method": "ping"}',
                                                    '← {"jsonrpc": "2.0", "id": 1, "result": {"text": "café …',
                                                    '← {"jsonrpc": "2.0", "id": 1, "result": {"text": "café"}}']


def test_in_memory_transport_passes_only_json():
    # The server never sees the caller's own dict: a mutation after sending changes nothing.
    seen = []
    server = ready_server()
    server._ping = lambda params: seen.append(params) or {}
    message = request(9, "ping", {"k": [1]})
    InMemoryTransport(server).send(message)
    message["params"]["k"].append(2)
    assert seen == [{"k": [1]}] and seen[0] is not message["params"]


# ---- the module's promises ----

def test_from_handle_to_the_tool_a_call_passes_five_frames_of_the_lab_at_most():
    # What you read is what runs: handle, _dispatch, _call_tool, then the tool itself.
    stacks = []
    server = ready_server()
    server.add_tool("look", lambda: stacks.append(traceback.extract_stack()) or "seen", "Look at the stack.")
    server.allowed_tools.add("look")
    server.handle(request(3, "tools/call", {"name": "look"}))
    frames = [frame.name for frame in stacks[0] if frame.filename == mcp_min.__file__]
    assert frames == ["handle", "_dispatch", "_call_tool"]


def project_modules() -> list:
    """Every Python file of the project that is not a test: the lab, its layers, the demos, the tools, the corpus."""
    names = [path for path in HERE.glob("*.py") if not path.name.startswith("test_")]
    return names + [path for folder in ("lessons", "tools", "corpus") for path in sorted((HERE / folder).glob("*.py"))]


def imports_of(path: pathlib.Path) -> set:
    """The top-level modules a file imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return imported | {node.module.split(".")[0] for node in ast.walk(tree)
                       if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}


def test_every_module_imports_only_the_standard_library_and_the_project():
    # No dependency to install: the standard library, and the project's own modules.
    ours = {path.stem for path in project_modules()}
    for path in project_modules():
        # Exercise 11-2's check and the bench (tools/) run the official SDK where it is installed.
        optional = {"mcp", "anyio"} if path.name == "checks.py" or path.parent.name == "tools" else set()
        assert imports_of(path) <= set(sys.stdlib_module_names) | ours | optional, path.name


def test_the_lab_names_no_other_module_of_the_project():
    # mcp_min.py is course 000's lab, whole and alone: it imports the standard library only.
    assert imports_of(HERE / "mcp_min.py") <= set(sys.stdlib_module_names)


def test_no_class_is_changed_outside_its_body():
    # What you read is what runs: no setattr on a class, no Class.attr = ... after it, in any module of the project.
    for path in project_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    assert not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                                and target.value.id in classes | {"MCPServer", "MCPClient", "Context"}), (path.name, node.lineno)
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr" and node.args:
                assert not (isinstance(node.args[0], ast.Name) and node.args[0].id[:1].isupper()), (path.name, node.lineno)


def test_each_method_and_function_is_defined_once():
    # What you read is what runs: a second def of a name in one class (or module) silently replaces the first.
    for path in project_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for scope in [tree] + [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]:
            names = [node.name for node in scope.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and not any(isinstance(d, ast.Attribute) and d.attr in ("setter", "deleter") for d in node.decorator_list)]
            assert len(names) == len(set(names)), (path.name, getattr(scope, "name", "module"), sorted(
                name for name in set(names) if names.count(name) > 1))


def test_the_course_names_are_where_the_course_says():
    # A reader of course 000 finds each name it mentions.
    for name in ("handle", "_dispatch", "_call_tool", "add_tool", "_gate"):
        assert callable(getattr(MCPServer, name))
    server = MCPServer("x")
    assert server._outbox == [] and server._initialized is False
    assert callable(MCPClient._pump_notifications) and callable(InMemoryTransport.send)
    assert MCPClient(InMemoryTransport(server)).tools_cache is None
    assert (mcp_min.PARSE_ERROR, mcp_min.INVALID_REQUEST, mcp_min.METHOD_NOT_FOUND, mcp_min.INVALID_PARAMS,
            mcp_min.INTERNAL_ERROR) == (-32700, -32600, -32601, -32602, -32603)


# ---- a student's mistakes name their fix ----

def test_a_notification_sent_as_a_request_names_notify():
    # client.request("notifications/initialized") would wait for a response no server sends.
    client = MCPClient(InMemoryTransport(course_server()))
    with pytest.raises(ValueError, match=r"notifications/initialized is a notification: send it with "
                                         r"notify\('notifications/initialized'\)"):
        client.request("notifications/initialized")


def test_a_tool_added_to_a_live_session_without_notify_says_the_cache_goes_stale(capsys):
    # The client listed its tools already: without notify=True it never hears of the new one, and stderr says so.
    server = ready_server()
    server.add_tool("quiet", lambda: 1, "A tool nobody is told of.")
    assert capsys.readouterr().err == ("mcp_min: 'quiet' was added to a live session's tools without notify=True: the "
                                       "client's cache will not show it until it lists the tools again\n")
    server.add_tool("loud", lambda: 1, "A tool the client hears of.", notify=True)
    assert capsys.readouterr().err == ""


def test_a_handler_a_subclass_adds_to_the_table_is_served():
    # The flat table is read at dispatch time: a subclass's table, written in its body, is the one served.
    class Echoing(MCPServer):
        HANDLERS = MCPServer.HANDLERS | {"echo": "_echo"}

        def _echo(self, params: dict) -> dict:
            return {"echoed": params}
    server = Echoing("echo")
    assert server.handle(request(1, "echo", {"x": 1})) == error(1, NOT_INITIALIZED, "server not initialized",
                                                                {"missing": "initialize"})
    server.handle(request(2, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(3, "echo", {"x": 1})) == response(3, {"echoed": {"x": 1}})


def live_server(*tools) -> MCPServer:
    """A server past the handshake offering the given (name, fn, input_schema) tools, each allowed."""
    server = MCPServer("mistakes")
    for name, fn, schema in tools:
        server.add_tool(name, fn, "", schema)
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    return server


def call(server: MCPServer, name: str, arguments: dict | None = None) -> dict:
    """The response to one tools/call."""
    return server.handle(request(3, "tools/call", {"name": name, "arguments": arguments or {}}))


def text(value: str) -> dict:
    """A text content block."""
    return {"type": "text", "text": value}


def test_a_tool_may_return_a_whole_result_and_keeps_its_is_error():
    # A dict shaped like a result is the result, sent as it is: its isError is never lost in a JSON text.
    disk = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    server = live_server(("check_disk", lambda: disk, None), ("fine", lambda: {"content": []}, None))
    assert call(server, "check_disk") == response(3, disk)
    assert call(server, "fine") == response(3, {"content": []})


@pytest.mark.parametrize("returned", [{"content": "disk full"}, {"isError": True}, {"content": [], "isError": "yes"},
                                      {"content": [{"text": "no type"}]}, {"content": [], "title": "data"}])
def test_a_dict_with_content_or_is_error_that_is_no_result_says_what_a_result_is(returned, capsys):
    # Neither a JSON text that hides isError nor a wrong result on the wire: the isError text shows the shape.
    server = live_server(("odd", lambda: returned, None))
    assert call(server, "odd") == response(3, {"content": [text(
        'ERROR: the tool returned a dict with "content" or "isError", so a tools/call result, but not one: {"content": '
        '[{"type": "text", "text": "..."}], "isError": true or false}; to send data with those keys, return '
        "json.dumps(data)")], "isError": True})
    assert capsys.readouterr().err.startswith("mcp_min: the tool odd failed:\n")


def test_a_tool_that_returns_nothing_is_an_is_error_asking_for_its_return(capsys):
    # A forgotten return is not the text "null": the model reads what went wrong, the author reads it on stderr.
    def add(x, y):
        x + y
    server = live_server(("add", add, XY), ("quiet", lambda: "", None))
    assert call(server, "add", {"x": 2, "y": 3}) == response(3, {"content": [text(
        'ERROR: the tool returned nothing (None): a forgotten return? A tool with nothing to say returns ""')],
        "isError": True})
    assert capsys.readouterr().err.endswith('TypeError: the tool returned nothing (None): a forgotten return? A tool '
                                            'with nothing to say returns ""\n')
    assert call(server, "quiet") == response(3, {"content": [text("")]})


def test_a_resource_is_text_or_bytes_and_a_dict_is_refused_naming_json_dumps():
    # A static dict is refused when it is added; a reader's dict is -32603 naming the fix, never JSON called text/plain.
    server = live_server()
    fix = 'for JSON, return json.dumps(...) and add it with mime_type="application/json"'
    with pytest.raises(TypeError, match=r"a resource is text \(str\) or bytes, not a dict \(config://static\): " + re.escape(fix)):
        server.add_resource("config://static", {"debug": True})
    server.add_resource("config://app", lambda: {"debug": True})
    assert server.handle(request(4, "resources/read", {"uri": "config://app"})) == error_response(
        4, INTERNAL_ERROR, "internal error: TypeError('a resource is text (str) or bytes, not a dict (config://app): "
        f"{fix}')")


def test_an_input_schema_that_is_not_an_object_schema_is_refused_at_registration():
    # The arguments of tools/call are an object: a schema without "type": "object" fails now, not at the first call.
    for schema in ({"properties": XY["properties"]}, {"type": "array"}, ["x", "y"]):
        with pytest.raises(ValueError, match=r'the input_schema of add must be an object schema, \{"type": "object"'):
            MCPServer("x").add_tool("add", lambda x, y: x + y, "", schema)


def test_an_input_schema_naming_what_the_function_does_not_take_is_refused_at_registration():
    # Properties a and b for add(x, y) would fail at every call: the registration names both sides.
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "x": {"type": "integer"}}}
    with pytest.raises(ValueError, match=r"the input_schema of add names a, which its function does not take \(it "
                                         r"takes x, y\): name each property after a parameter"):
        MCPServer("x").add_tool("add", lambda x, y=1: x + y, "", schema)
    MCPServer("x").add_tool("anything", lambda **kwargs: "", "", schema)  # **kwargs takes any name


def test_a_function_that_needs_arguments_and_has_no_input_schema_is_refused():
    # A lambda (or any def) with parameters and no schema would be offered as taking nothing: the lab reads no hints.
    with pytest.raises(ValueError, match=r"add takes x, y, which no input_schema describes: pass input_schema=\{"):
        MCPServer("x").add_tool("add", lambda x, y: x + y)
    MCPServer("x").add_tool("greet", lambda name="world": f"hello {name}")  # a default is no need
    assert MCPServer("x").add_tool("now", lambda: "12:00") is not None


def test_a_wrapped_function_or_a_bound_method_takes_what_its_code_says():
    # functools.wraps: what the wrapped function takes; a bound method: all but self, which is given already.
    def logged(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapper

    class Abacus:
        def add(self, x, y):
            return x + y
    server = live_server(("add", logged(lambda x, y: x + y), XY), ("count", Abacus().add, XY))
    assert call(server, "add", {"x": 1, "y": 2, "z": 3}) == error(3, INVALID_PARAMS, "unexpected argument: z (this tool takes x, y)")
    assert call(server, "count", {"x": 1, "y": 2}) == response(3, {"content": [text("3")]})
    assert call(server, "count", {"x": 1, "y": 2, "self": 3}) == error(3, INVALID_PARAMS,
                                                                       "unexpected argument: self (this tool takes x, y)")


def test_a_tool_without_input_schema_takes_no_argument():
    # The schema the lab writes for it says so ("additionalProperties": false), and an argument is -32602.
    server = live_server(("now", lambda: "12:00", None))
    assert server.tools["now"]["spec"]["inputSchema"] == {"type": "object", "properties": {}, "required": [],
                                                           "additionalProperties": False}
    assert call(server, "now", {"zone": "UTC"}) == error(3, INVALID_PARAMS, "unexpected argument: zone (this tool takes none)")


def test_an_argument_the_schema_shuts_out_is_minus_32602_even_for_kwargs():
    # "additionalProperties": false in the author's own schema is honoured, whatever the function could take.
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": False}
    server = live_server(("echo", lambda **given: json.dumps(given), schema))
    assert call(server, "echo", {"x": 1}) == response(3, {"content": [text('{"x": 1}')]})
    assert call(server, "echo", {"x": 1, "y": 2}) == error(3, INVALID_PARAMS, "unexpected argument: y (this tool takes x)")


def test_an_async_def_is_refused_at_registration_naming_mcp_full():
    # The lab calls its functions plainly (course 000): an async def would return a coroutine nobody awaits.
    async def add(x, y):
        return x + y
    for register in (lambda server: server.add_tool("add", add, "", XY), lambda server: server.add_resource("a://b", add),
                     lambda server: server.add_prompt("add", add)):
        with pytest.raises(TypeError, match=r"add is an async def, which the lab never awaits: write a def, or use "
                                            r"mcp_full's MCPServer, which runs async def (tools|resources|prompts)"):
            register(MCPServer("x"))


def test_course_002s_decorators_asked_of_the_lab_name_add_tool_and_mcp_full():
    # @server.tool() is the full layer's; the lab's answer is still AttributeError, so hasattr() stays honest.
    server = MCPServer("x")
    for name, way in [("tool", "add_tool(name, fn, description, input_schema)"), ("resource", "add_resource(uri, read)"),
                      ("prompt", "add_prompt(name, render, description, arguments)")]:
        with pytest.raises(AttributeError, match=re.escape(f"the lab's MCPServer has no {name}(): register with "
                                                           f"server.{way} (course 000), or use mcp_full's MCPServer")):
            getattr(server, name)
    with pytest.raises(AttributeError, match="'MCPServer' object has no attribute 'on_send'"):
        server.on_send
    assert not hasattr(server, "on_send") and hasattr(server, "tools")


def test_an_rpc_error_code_is_an_integer_and_its_text_shows_code_and_data():
    # "404" would reach no client as a code (malformed: the code must be an integer); the traceback shows all three.
    with pytest.raises(TypeError, match=r"an RPCError's code is an integer, such as INVALID_PARAMS \(-32602\), not '404'"):
        RPCError("404", "not found")
    with pytest.raises(TypeError):
        RPCError(True, "a bool is no code")
    assert str(RPCError(-32602, "bad")) == "-32602 bad"
    assert str(RPCError(-32602, "unknown resource", {"uri": "café://x"})) == '-32602 unknown resource (data: {"uri": "café://x"})'


def test_the_clients_exception_says_which_handshake_step_is_missing():
    # A handshake by hand that forgot notifications/initialized reads as if initialize failed, unless data says.
    client = MCPClient(InMemoryTransport(course_server()))
    with pytest.raises(RPCError) as before:
        client.call_tool("add", {"x": 1, "y": 2})
    client.request("initialize", INIT)
    with pytest.raises(RPCError) as between:
        client.list_tools()
    assert [str(before.value), str(between.value)] == [
        '-32600 server not initialized (data: {"missing": "initialize"})',
        '-32600 server not initialized (data: {"missing": "notifications/initialized"})']


def test_params_that_are_not_a_dict_are_refused_by_the_client_naming_the_shape():
    # MCP passes params by name: a list never leaves the client.
    client = MCPClient(InMemoryTransport(course_server()))
    with pytest.raises(TypeError, match=r"params is a dict, such as \{'name': 'add', 'arguments': \{'x': 2\}\}, not a list"):
        client.request("tools/call", ["add", {"x": 2, "y": 3}])
    assert client.next_id == 1
