"""Tests of mcp_min's core: messages, the server (gate, dispatch, lattice, outbox), the client, in memory.

The exchange table reads like Norvig's lis.py tests: a message in, the exact response out (or None).
"""

import json
from typing import Literal

import pytest

import mcp_full
import mcp_stdio
from mcp_full import (INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION, Context, InMemoryTransport, MCPClient, MCPServer, RPCError, error_response, notification, request, response)
from sample_servers import (ASK_META, ELICIT_META, INIT, META, accepted, asking_server, confirming_server,
                            course_server, first_state, ready_server, retry, subtract)

CAPABILITIES = {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}
SERVER_INFO = {"name": "course-lab", "version": "0.1.0"}
STATELESS = {"_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}


def query(region: str, limit: int = 10) -> int:
    """A tool whose region may travel in a header."""
    return 1


# ---- the course's worked trace (course 000, steps 1-6), message by message ----

def test_worked_trace_of_course_000_reproduces_message_for_message():
    # Every message of the six steps is compared whole, as it crossed the JSON boundary.
    wire = []
    client = MCPClient(InMemoryTransport(course_server(), trace=lambda d, m: wire.append((d, m))),
                       name="tiny-client")
    client.initialize(protocol_version="2025-06-18")
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    with pytest.raises(RPCError):
        client.call_tool("delete_db")
    client.transport.server.add_tool("subtract", subtract, notify=True,
                                     input_schema={"type": "object", "properties": {}, "required": ["x", "y"]})
    client._pump_notifications()
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "tiny-client", "version": "0.1.0"}}
    assert wire[0] == ("→", request(1, "initialize", init))
    assert wire[1] == ("←", response(1, {"protocolVersion": "2025-06-18", "capabilities": CAPABILITIES,
                                         "serverInfo": SERVER_INFO}))
    assert wire[2] == ("→", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert wire[3] == ("→", request(2, "tools/list"))
    assert [tool["name"] for tool in wire[4][1]["result"]["tools"]] == ["add", "weather", "delete_db", "divide", "pick"]
    assert wire[5] == ("→", request(3, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}))
    assert wire[6] == ("←", response(3, {"content": [{"type": "text", "text": "5"}]}))
    assert wire[7] == ("→", request(4, "tools/call", {"name": "delete_db", "arguments": {}}))
    assert wire[8] == ("←", error_response(4, -32600, "tool 'delete_db' not permitted for this session"))
    assert wire[9] == ("←", notification("notifications/tools/list_changed"))
    assert wire[10] == ("→", request(5, "tools/list"))
    assert [tool["name"] for tool in client.tools_cache][-1] == "subtract"
    assert len(wire) == 12


def test_the_tool_list_of_step_3_has_derived_schemas():
    # tools/list shows the schemas derived from type hints, with the docstrings' first lines.
    tools = ready_server().handle(request(2, "tools/list"))["result"]["tools"]
    assert tools[0] == {"name": "add", "description": "Add two integers.", "inputSchema": {
        "type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}}


# ---- the exchange table: a message in, the exact response out ----

NOT_INITIALIZED = (INVALID_REQUEST, "server not initialized")


def error(id, code_and_message, data=None):
    """An expected error response."""
    return error_response(id, *code_and_message, data)


# (name, session state, message, expected response or None)
EXCHANGES = [  # the full layer's own rows; course 000's run on both layers in test_mcp_min.py
    # The handshake gate holds the small methods too.
    ("logging/setLevel is gated too", "initializing", request(2, "logging/setLevel", {"level": "info"}),
     error(2, NOT_INITIALIZED, {"missing": "notifications/initialized"})),
    # The lattice reads a schema derived from type hints: a Literal is an enum.
    ("an enum value outside the choices", "ready", request(3, "tools/call", {"name": "pick", "arguments": {"color": "green"}}),
     error(3, (INVALID_PARAMS, "argument 'color' must be one of ['red', 'blue']"))),
    # URI templates.
    ("a templated resource", "ready", request(4, "resources/read", {"uri": "policy://refunds"}),
     response(4, {"contents": [{"uri": "policy://refunds", "mimeType": "text/plain", "text": "30 days"}]})),
    ("a template value its function does not know", "ready", request(4, "resources/read", {"uri": "policy://travel"}),
     error(4, (INVALID_PARAMS, "unknown resource: policy://travel"), {"uri": "policy://travel"})),
    ("resource templates", "ready", request(4, "resources/templates/list"),
     response(4, {"resourceTemplates": [{"uriTemplate": "policy://{doc_id}", "name": "policy", "mimeType": "text/plain",
                                         "description": "A policy."}]})),
    # The stateless era (course 004).
    ("a stateless request skips the gate", "new", request(6, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 1},
                                                                           "_meta": META}),
     response(6, {"content": [{"type": "text", "text": "2"}], "resultType": "complete", "isError": False, **STATELESS})),
    ("an old version in _meta", "new", request(6, "tools/list", {"_meta": {**META, "io.modelcontextprotocol/protocolVersion": "2025-06-18"}}),
     error(6, (UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version"),
           {"supported": ["2026-07-28", "2025-11-25", "2025-06-18"], "requested": "2025-06-18"})),
    ("_meta without clientCapabilities", "new",
     request(6, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
     error(6, (INVALID_PARAMS, "_meta must carry io.modelcontextprotocol/clientCapabilities"))),
    ("ping is gone in the stateless era", "ready", request(6, "ping", {"_meta": META}),
     error(6, (METHOD_NOT_FOUND, "method not found: ping"))),
    ("completion is served in the stateless era", "new",
     request(6, "completion/complete", {"ref": {"type": "ref/prompt", "name": "summarize_incident"},
                                         "argument": {"name": "severity", "value": ""}, "_meta": META}),
     response(6, {"completion": {"values": [], "total": 0, "hasMore": False}, "resultType": "complete", **STATELESS})),
    ("server/discover without _meta", "new", request(6, "server/discover"),
     error(6, (INVALID_PARAMS, "_meta must carry io.modelcontextprotocol/protocolVersion"))),
    ("server/discover whose _meta is not an object", "new", request(6, "server/discover", {"_meta": [1]}),
     error(6, (INVALID_PARAMS, "params._meta must be object"))),
    ("a log level that is not one", "new", request(6, "tools/list", {"_meta": {**META, "io.modelcontextprotocol/logLevel": "loud"}}),
     error(6, (INVALID_PARAMS, "unknown log level 'loud'; one of ['debug', 'info', 'notice', 'warning', 'error', "
                               "'critical', 'alert', 'emergency']"))),
]


@pytest.mark.parametrize("name, state, message, expected", EXCHANGES, ids=[row[0] for row in EXCHANGES])
def test_exchange(name, state, message, expected):
    # One message against a session in the given state: the response is exactly the one in the table.
    server = course_server()
    if state in ("initializing", "ready"):
        server.handle(request(1, "initialize", INIT))
    if state == "ready":
        server.handle(notification("notifications/initialized"))
    assert server.handle(message) == expected


# ---- messages ----


def test_parse_refuses_what_is_not_json():
    # parse() is the transport edge: every kind of non-JSON raises PARSE_ERROR.
    for data in (b"{", b"\xff\xfe", b"[" * 1000 + b"]" * 1000, b'{"x": NaN}', "{'single': 1}"):
        with pytest.raises(RPCError) as caught:
            mcp_stdio.parse(data)
        assert caught.value.code == PARSE_ERROR


def test_parse_counts_brackets_inside_strings_as_text():
    # A string full of brackets is not nesting.
    assert mcp_stdio.parse(json.dumps({"text": "[" * 500})) == {"text": "[" * 500}


# ---- the server's behaviour ----

def test_the_not_allowed_tool_never_runs():
    # The allow-list is checked before execution: the side effect never happens.
    calls = []
    server = ready_server(calls=calls)
    assert server.handle(request(3, "tools/call", {"name": "delete_db", "arguments": {}}))["error"]["code"] == -32600
    assert server.handle(request(4, "tools/call", {"name": "delete_db", "arguments": {}, "_meta": META}))["error"]["code"] == -32600
    assert calls == []


def test_a_raising_tool_leaves_the_session_usable():
    # The tool's exception is a result, and the next call works.
    server = ready_server()
    assert server.handle(request(3, "tools/call", {"name": "divide", "arguments": {"x": 1, "y": 0}}))["result"]["isError"]
    assert server.handle(request(4, "tools/call", {"name": "add", "arguments": {"x": 1, "y": 2}}))["result"] == {
        "content": [{"type": "text", "text": "3"}]}


def test_progress_that_goes_backwards_is_the_tools_error():
    # notifications/progress must increase (spec 2025-11-25, basic/utilities/progress): 2 after 3 is refused.
    server = ready_server()

    def regress(ctx: Context) -> str:
        """Report progress 3, then 2."""
        ctx.progress(3)
        ctx.progress(2)
        return "done"
    server.add_tool("regress", regress)
    server.allowed_tools.add("regress")
    reply = server.handle(request(3, "tools/call", {"name": "regress", "_meta": {"progressToken": "t"}}))
    assert reply["result"] == {"content": [{"type": "text", "text": "ERROR: progress must increase: 2 after 3"}],
                               "isError": True}
    assert server.drain_outbox() == [notification("notifications/progress", {"progressToken": "t", "progress": 3})]


def test_registering_after_initialization_queues_a_bare_list_changed():
    # Tools, resources and prompts each queue their own invalidation, with no payload.
    server = ready_server()
    server.add_tool("t", lambda: 1, notify=True)
    server.add_resource("a://b", "x", notify=True)
    server.add_prompt("p", lambda: "x", notify=True)
    server.add_tool("quiet", lambda: 1)
    assert server._outbox == [notification("notifications/tools/list_changed"),
                              notification("notifications/resources/list_changed"),
                              notification("notifications/prompts/list_changed")]


def test_schema_is_derived_from_the_signature():
    # Type hints, defaults, Optional, list[X] and Literal become JSON Schema; a Context parameter is left out.
    def tool(name: str, count: int, ratio: float = 0.5, flag: bool = False, tags: list[str] | None = None,
             extra: dict | None = None, mode: Literal["a", "b"] = "a", ctx: Context = None):
        """Do things."""
    schema, context, choices = mcp_full.signature_schema(tool)
    assert schema == {"type": "object", "required": ["name", "count"], "properties": {
        "name": {"type": "string"}, "count": {"type": "integer"}, "ratio": {"type": "number", "default": 0.5},
        "flag": {"type": "boolean", "default": False},
        "tags": {"type": ["array", "null"], "items": {"type": "string"}},
        "extra": {"type": ["object", "null"]}, "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}}}
    assert context == "ctx" and choices == {"mode": ["a", "b"]}


def test_a_dict_return_is_also_structured_content():
    # A dict goes out as JSON text and as structuredContent.
    assert MCPServer("results").tool_result({"a": 1}) == {"content": [{"type": "text", "text": '{"a": 1}'}], "structuredContent": {"a": 1}}


def test_content_blocks_are_sent_as_they_are():
    # A tool returns pictures, sound and files by returning content blocks.
    image = {"type": "image", "data": "iVBORw==", "mimeType": "image/png"}
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a"}
    assert MCPServer("results").tool_result([image, link]) == {"content": [image, link]}
    assert MCPServer("results").tool_result(image) == {"content": [image]}


def test_a_result_json_cannot_carry_is_an_is_error_result():
    # A non-serialisable return value is the tool's failure, not a broken wire.
    server = ready_server()
    server.add_tool("odd", lambda: {"when": object()}, input_schema={"type": "object"})
    server.allowed_tools.add("odd")
    result = server.handle(request(3, "tools/call", {"name": "odd"}))["result"]
    assert result["isError"] is True and result["content"][0]["text"].startswith(
        "ERROR: the tool returned what JSON cannot carry (Object of type object")


def test_a_whole_result_a_tool_returns_is_the_result_without_structured_content():
    # mcp_min's rule reaches the full layer: the result-shaped dict is sent as it is, its isError kept.
    disk = {"content": [{"type": "text", "text": "disk full"}], "isError": True}
    assert MCPServer("results").tool_result(disk) == disk


def test_none_is_no_content_when_the_hint_allows_none_and_an_is_error_without_a_hint():
    # "-> None" (or "-> str | None") says the tool has nothing to say; no hint at all leaves a forgotten return possible: mcp_min's isError.
    server = MCPServer("nothing")

    @server.tool()
    def reset() -> None:
        """Reset, and say nothing."""

    @server.tool()
    def find(key: str) -> str | None:
        """Find a key's value, or nothing."""

    @server.tool()
    def unhinted():
        """Forget the return, without a hint."""
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(2, "tools/call", {"name": "reset"}))["result"] == {"content": []}
    assert server.handle(request(2, "tools/call", {"name": "find", "arguments": {"key": "k"}}))["result"] == {"content": []}
    assert server.handle(request(3, "tools/call", {"name": "unhinted"}))["result"] == {"content": [{"type": "text", "text":
        'ERROR: the tool returned nothing (None): a forgotten return? A tool with nothing to say returns ""'}],
        "isError": True}


def test_an_argument_a_context_tool_does_not_take_is_minus_32602():
    # mcp_min reads what the wrapped function takes: ctx is the server's, and "z" nobody's.
    server = MCPServer("ctx")

    @server.tool()
    def count(n: int, ctx: Context) -> str:
        """Count to n."""
        return str(n)
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(2, "tools/call", {"name": "count", "arguments": {"n": 2, "z": 1}})) == error_response(
        2, INVALID_PARAMS, "unexpected argument: z (this tool takes n)")
    assert server.handle(request(3, "tools/call", {"name": "count", "arguments": {"n": 2}}))["result"]["content"] == [
        {"type": "text", "text": "2"}]


def test_a_static_resource_that_is_neither_text_nor_bytes_is_refused_when_added():
    # As in mcp_min: a dict is not served as JSON labelled text/plain.
    with pytest.raises(TypeError, match=r"a resource is text \(str\) or bytes, not a dict \(config://app\)"):
        MCPServer("x").add_resource("config://app", {"debug": True})


def test_server_discover_answers_without_a_handshake():
    # server/discover is never gated and carries the stateless era's fields.
    server = course_server()
    result = server.handle(request(1, "server/discover", {"_meta": META}))["result"]
    assert result == {"supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18"],
                      "capabilities": {"tools": {"listChanged": True}, "resources": {"listChanged": True, "subscribe": True},
                                       "prompts": {"listChanged": True}, "logging": {}, "completions": {}},
                      "resultType": "complete",
                      "ttlMs": 60000, "cacheScope": "private", **STATELESS}


def test_stateless_list_results_carry_cache_hints():
    # The list results and resources/read carry ttlMs and cacheScope; tools/call does not.
    server = course_server()
    for method, params in (("tools/list", {}), ("resources/list", {}), ("resources/templates/list", {}),
                           ("prompts/list", {}), ("resources/read", {"uri": "file:///readme.txt"})):
        result = server.handle(request(1, method, {**params, "_meta": META}))["result"]
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (60000, "private", "complete")


# ---- input_required (the stateless era's multi round-trip requests) ----


def test_input_required_round_trip_with_a_signed_state():
    # The first call asks; the retry with the state and the answer completes.
    server = confirming_server()
    first = server.handle(request(1, "tools/call", {"name": "delete_db", "_meta": ELICIT_META}))["result"]
    assert first["resultType"] == "input_required"
    assert first["inputRequests"] == {"confirm": {"method": "elicitation/create", "params": {
        "message": "Sure?", "requestedSchema": {"type": "object"}}}}
    retry = {"name": "delete_db", "_meta": ELICIT_META, "requestState": first["requestState"],
             "inputResponses": {"confirm": {"action": "accept"}}}
    assert server.handle(request(2, "tools/call", retry))["result"]["content"] == [{"type": "text", "text": "deleted"}]


def test_a_tampered_or_replayed_request_state_is_refused():
    # requestState is attacker-controlled: a changed byte or a second use is -32602.
    server = confirming_server()
    state = server.handle(request(1, "tools/call", {"name": "delete_db", "_meta": ELICIT_META}))["result"]["requestState"]
    answers = {"confirm": {"action": "accept"}}
    tampered = {"name": "delete_db", "_meta": ELICIT_META, "requestState": "x" + state, "inputResponses": answers}
    assert server.handle(request(2, "tools/call", tampered))["error"] == {
        "code": INVALID_PARAMS, "message": "requestState is not one this server signed"}
    good = {**tampered, "requestState": state}
    assert server.handle(request(3, "tools/call", good))["result"]["content"][0]["text"] == "deleted"
    assert server.handle(request(4, "tools/call", good))["error"]["code"] == INVALID_PARAMS


def test_input_responses_without_a_state_are_used():
    # Without a requestState, this round's answers are the client's input like its arguments (2026-07-28).
    server = confirming_server()
    direct = {"name": "delete_db", "_meta": ELICIT_META, "inputResponses": {"confirm": {"action": "accept"}}}
    assert server.handle(request(1, "tools/call", direct))["result"]["content"] == [{"type": "text", "text": "deleted"}]


def test_a_handshake_client_without_the_capability_is_refused_with_32021(monkeypatch):
    # The server may not ask what the client did not declare: -32021 names the missing capability. No client is
    # behind handle() here: a server that asked anyway would wait for an answer, so its wait is cut to a second.
    monkeypatch.setattr(mcp_full, "ASK_TIMEOUT_S", 1)
    server = confirming_server()
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(2, "tools/call", {"name": "delete_db"}))["error"] == {
        "code": MISSING_CLIENT_CAPABILITY, "message": "the client did not declare elicitation",
        "data": {"requiredCapabilities": {"elicitation": {}}}}


def test_a_two_round_tool_finishes_when_each_retry_carries_only_its_round():
    # Round 1 asks a; the retry answers a only and is asked b; the retry answers b only: a's answer rode in the state.
    calls = []
    server = asking_server(calls)
    first = server.handle(request(1, "tools/call", {"name": "two_rounds", "_meta": ASK_META}))["result"]
    assert list(first["inputRequests"]) == ["a"]
    second = server.handle(request(2, "tools/call", {"name": "two_rounds", "_meta": ASK_META, "requestState": first["requestState"],
                                                     "inputResponses": {"a": accepted("x")}}))["result"]
    assert (second["resultType"], list(second["inputRequests"])) == ("input_required", ["b"])
    third = server.handle(request(3, "tools/call", {"name": "two_rounds", "_meta": ASK_META, "requestState": second["requestState"],
                                                    "inputResponses": {"b": accepted("y")}}))["result"]
    assert third["content"] == [{"type": "text", "text": "xy"}] and calls == ["ran", "ran", "ran"]


def test_several_questions_travel_in_one_round_and_the_client_answers_them_together():
    # ctx.ask puts elicitation, sampling and roots questions at once; MCPClient answers all in one retry.
    wire = []
    client = MCPClient(InMemoryTransport(asking_server([]), trace=lambda d, m: wire.append(m)),
                       on_elicit=lambda q: accepted("Ada"),
                       on_sample=lambda q: {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"},
                       on_roots=lambda q: {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})
    client.connect()
    assert client.call_tool("all_at_once")["content"] == [{"type": "text", "text": "Ada|hi|2"}]
    calls = [m for m in wire if m.get("method") == "tools/call"]
    assert [sorted(m["params"].get("inputResponses", {})) for m in calls] == [[], ["name", "poem", "roots"]]


def test_sampling_and_roots_questions_reach_their_callbacks():
    # ctx.sample asks sampling/createMessage, ctx.roots asks roots/list; each callback gets the question whole.
    asked = []
    client = MCPClient(InMemoryTransport(asking_server([])),
                       on_sample=lambda q: asked.append(q) or {"role": "assistant", "model": "m",
                                                                "content": {"type": "text", "text": "Old pond"}},
                       on_roots=lambda q: asked.append(q) or {"roots": [{"uri": "file:///work", "name": "work"}]})
    client.connect()
    assert client.call_tool("haiku", {"topic": "frogs"})["content"] == [{"type": "text", "text": "Old pond"}]
    assert client.call_tool("folders")["content"] == [{"type": "text", "text": '["file:///work"]'}]
    assert asked[0] == {"method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "A haiku about frogs"}}], "maxTokens": 40}}
    assert asked[1] == {"method": "roots/list", "params": {}}


def test_a_prompt_and_a_resource_can_ask_too():
    # prompts/get and resources/read answer input_required like tools/call (2026-07-28 allows these three).
    client = MCPClient(InMemoryTransport(asking_server([])), on_elicit=lambda q: accepted("open sesame"))
    client.connect()
    assert client.get_prompt("greeting")["messages"][0]["content"]["text"] == "Hello, open sesame"
    assert client.read_resource("secret://vault")["contents"][0]["text"] == "gold"


def test_asking_a_client_that_lacks_the_capability_is_32021_with_its_data():
    # The stateless era refuses too, naming the capability in data.requiredCapabilities; nothing is asked.
    server = asking_server([])
    for name, capability in (("haiku", "sampling"), ("folders", "roots"), ("two_rounds", "elicitation")):
        reply = server.handle(request(1, "tools/call", {"name": name, "arguments": {"topic": "t"} if name == "haiku" else {},
                                                         "_meta": META}))
        assert reply["error"] == {"code": MISSING_CLIENT_CAPABILITY, "message": f"the client did not declare {capability}",
                                  "data": {"requiredCapabilities": {capability: {}}}}


def test_a_tool_that_requires_a_capability_up_front_never_runs_without_it():
    # requires=("sampling",) is checked before the tool runs.
    calls = []
    server = asking_server(calls)
    reply = server.handle(request(1, "tools/call", {"name": "needs_sampling", "_meta": META}))
    assert reply["error"]["code"] == MISSING_CLIENT_CAPABILITY and calls == []
    assert server.handle(request(2, "tools/call", {"name": "needs_sampling", "_meta": ASK_META}))["result"]["content"] == [
        {"type": "text", "text": "ran"}]


@pytest.mark.parametrize("change, message", [
    (lambda state: "x" + state, "requestState is not one this server signed"),
    (lambda state: state[:-1] + "é", "requestState is not one this server signed"),
    (lambda state: 42, "requestState is not one this server signed"),
    (lambda state: "", "requestState is not one this server signed"),
])
def test_a_forged_request_state_is_refused(change, message):
    # requestState is attacker-controlled: any change to it is -32602 (a non-ASCII signature too).
    server = asking_server([])
    assert retry(server, change(first_state(server)))["error"] == {"code": INVALID_PARAMS, "message": message}


def test_a_request_state_is_spent_once():
    # The genuine state works once; the same state again is refused.
    server = asking_server([])
    state = first_state(server)
    assert retry(server, state)["result"]["resultType"] == "input_required"
    assert retry(server, state)["error"] == {"code": INVALID_PARAMS, "message": "requestState was used already"}


def test_a_request_state_is_spent_once_across_the_servers_of_one_catalog():
    # share_catalog's servers sign with one key (a session's state, an HTTP allow-list's): one record spends them.
    server = asking_server([])
    state = first_state(server)
    assert retry(server.share_catalog(), state)["result"]["resultType"] == "input_required"
    assert retry(server, state)["error"] == {"code": INVALID_PARAMS, "message": "requestState was used already"}
    assert retry(server.share_catalog(), state)["error"]["message"] == "requestState was used already"


def test_a_request_state_is_bound_to_its_method_tool_and_arguments():
    # A state minted for one call is refused on another tool, other arguments or another method.
    server = asking_server([])
    state = first_state(server, {"topic": "frogs"}, name="haiku")
    assert retry(server, state, name="two_rounds")["error"]["message"] == "requestState belongs to another request"
    assert retry(server, state, name="haiku", arguments={"topic": "toads"})["error"]["message"] == (
        "requestState belongs to another request")
    reply = server.handle(request(3, "prompts/get", {"name": "greeting", "_meta": ASK_META, "requestState": state}))
    assert reply["error"]["message"] == "requestState belongs to another request"


def test_an_expired_request_state_is_refused(monkeypatch):
    # The expiry is inside the signed payload: a state minted with no time to live is refused.
    server = asking_server([])
    monkeypatch.setattr(mcp_full, "STATE_TTL_S", -1)
    assert retry(server, first_state(server))["error"] == {"code": INVALID_PARAMS, "message": "requestState has expired"}


def test_two_servers_mint_different_states_for_the_same_call():
    # A random nonce: a fresh server with the same key never mints a state the first one already minted.
    assert first_state(asking_server([])) != first_state(asking_server([]))


def test_input_responses_that_are_not_objects_are_invalid_params():
    # inputResponses is an object of result objects.
    server = asking_server([])
    for responses, message in (([1], "params.inputResponses must be object"), ({"a": 1}, "inputResponses.a must be an object")):
        reply = server.handle(request(1, "tools/call", {"name": "two_rounds", "_meta": ASK_META, "inputResponses": responses}))
        assert reply["error"] == {"code": INVALID_PARAMS, "message": message}


def test_a_missing_answer_is_asked_again_not_an_error():
    # A retry that leaves a question unanswered gets a new input_required for it (2026-07-28 SHOULD).
    server = asking_server([])
    state = first_state(server)
    again = server.handle(request(2, "tools/call", {"name": "two_rounds", "_meta": ASK_META, "requestState": state}))
    assert list(again["result"]["inputRequests"]) == ["a"]


# ---- pages: every */list, in both eras ----

def paged_server() -> MCPServer:
    """Five tools, five prompts, five resources and five templates, two to a page."""
    server = MCPServer("paged", page_size=2)
    for i in range(5):
        server.add_tool(f"t{i}", lambda: i)
        server.add_prompt(f"p{i}", lambda: "x")
        server.add_resource(f"r://{i}", "x")
        server.add_resource(f"r://{i}/{{name}}", lambda name: name)
    return server


@pytest.mark.parametrize("method, key", [("tools/list", "tools"), ("prompts/list", "prompts"),
                                         ("resources/list", "resources"), ("resources/templates/list", "resourceTemplates")])
def test_every_list_serves_pages_with_next_cursor(method, key):
    # Two a page: a cursor leads on, the last page has no nextCursor, and a cursor from elsewhere is -32602.
    server = paged_server()
    server.handle(request(0, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    pages, cursor = [], None
    while True:
        result = server.handle(request(1, method, {"cursor": cursor} if cursor else None))["result"]
        pages.append(len(result[key]))
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert pages == [2, 2, 1]
    assert server.handle(request(2, method, {"cursor": "bogus"}))["error"] == {
        "code": INVALID_PARAMS, "message": "unknown cursor: 'bogus'"}
    other = mcp_full.page_cursor("elsewhere", 2)
    assert server.handle(request(3, method, {"cursor": other}))["error"]["code"] == INVALID_PARAMS


def test_the_client_follows_next_cursor_to_the_end():
    # list_tools and friends return every item, page after page, in both eras.
    for era in ("handshake", "stateless"):
        client = MCPClient(InMemoryTransport(paged_server()))
        client.connect(mode="handshake" if era == "handshake" else "auto")
        assert [tool["name"] for tool in client.list_tools()] == ["t0", "t1", "t2", "t3", "t4"]
        assert len(client.list_prompts()) == len(client.list_resources()) == len(client.list_resource_templates()) == 5


def test_a_server_that_repeats_a_cursor_does_not_trap_the_client():
    # A broken server whose nextCursor never changes: the client stops with an error.
    server = paged_server()
    server._list_tools = lambda params: {"tools": [], "nextCursor": "again"}
    client = MCPClient(InMemoryTransport(server))
    client.initialize()
    with pytest.raises(RPCError) as caught:
        client.list_tools()
    assert caught.value.message == "tools/list sent the cursor 'again' again, or too many pages"


def test_a_header_name_must_be_a_token_on_a_plain_argument():
    # x-mcp-header: a token (no spaces or colons), and only for a string, integer or boolean argument.
    server = MCPServer("h")
    server.add_tool("query", query, headers={"region": "Region"})
    assert server.tools["query"]["spec"]["inputSchema"]["properties"]["region"] == {"type": "string", "x-mcp-header": "Region"}
    with pytest.raises(ValueError):
        server.add_tool("bad", query, headers={"region": "Re gion"})
    with pytest.raises(ValueError):
        server.add_tool("bad", lambda ratio: 1, headers={"ratio": "Ratio"},
                        input_schema={"type": "object", "properties": {"ratio": {"type": "number"}}})


# ---- the client ----

def test_client_list_methods_follow_templates_too():
    # The full client adds resources/templates/list, and a template reads like a resource (the lab's own lists:
    # test_mcp_min.py's test_client_list_methods_fill_their_caches).
    client = MCPClient(InMemoryTransport(course_server()))
    client.initialize()
    assert [t["uriTemplate"] for t in client.list_resource_templates()] == ["policy://{doc_id}"]
    assert client.read_resource("policy://refunds")["contents"][0]["text"] == "30 days"
    assert client.list_resources() is client.resources_cache  # the lab's list, through the full layer's paging


def test_the_cache_holds_subtract_after_pumping_notifications():
    # Course 000 step 6: the invalidation makes the client re-list.
    client = MCPClient(InMemoryTransport(course_server()))
    client.initialize()
    client.list_tools()
    client.transport.server.add_tool("subtract", subtract, notify=True)
    assert "subtract" not in [t["name"] for t in client.tools_cache]
    client._pump_notifications()
    assert "subtract" in [t["name"] for t in client.tools_cache]


def test_connect_goes_stateless_when_discover_lists_2026():
    # auto mode: server/discover first, and no initialize follows.
    wire = []
    client = MCPClient(InMemoryTransport(course_server(), trace=lambda d, m: wire.append(m)))
    client.connect()
    assert client.era == "stateless" and [m.get("method") for m in wire if "method" in m] == ["server/discover"]
    assert client.call_tool("add", {"x": 1, "y": 2})["content"] == [{"type": "text", "text": "3"}]


def test_connect_falls_back_to_the_handshake_on_an_error():
    # A server that knows no server/discover answers -32601; the client initializes at once.
    server = course_server()
    server.HANDLERS = {method: name for method, name in server.HANDLERS.items() if method != "server/discover"}
    client = MCPClient(InMemoryTransport(server))
    client.connect()
    assert client.era == "handshake" and server._initialized


def test_a_fresh_stateless_cache_is_not_fetched_again():
    # ttlMs says how long tools_cache may be reused; refresh=True ignores it.
    wire = []
    client = MCPClient(InMemoryTransport(course_server(), trace=lambda d, m: wire.append(m)))
    client.connect()
    client.list_tools()
    client.list_tools()
    client.list_tools(refresh=True)
    assert [m.get("method") for m in wire].count("tools/list") == 2


def test_call_tool_answers_input_required_through_on_elicit():
    # The client asks on_elicit, retries with a new id, and returns the final result.
    asked = []
    client = MCPClient(InMemoryTransport(confirming_server()),
                       on_elicit=lambda question: asked.append(question) or {"action": "accept"})
    client.connect()
    assert client.call_tool("delete_db")["content"] == [{"type": "text", "text": "deleted"}]
    assert asked[0]["method"] == "elicitation/create"


# ---- a student's mistakes name their fix, at registration where they can ----

MISTAKES = [  # (what the student wrote, as a function of a server, the exception, the words of its message)
    ("a template variable its function does not take", lambda s: s.add_resource("notes://{name}", lambda nme: nme),
     ValueError, "the URI template 'notes://{name}' has the variables ['name'], but <lambda> takes ['nme']: "
                 "name each parameter after a variable"),
    ("an unclosed brace", lambda s: s.add_resource("notes://{name", lambda name: name),
     ValueError, "'notes://{name' is not a URI template: each variable is {name} or {+name}, braces closed"),
    ("a lambda as a tool, with no schema", lambda s: s.add_tool("add", lambda x, y: x + y),
     TypeError, "<lambda>'s parameter 'x' needs a type hint, a lambda cannot carry hints: write a def, or pass "
                "input_schema={...}: the hint says what JSON the client must send"),
]


@pytest.mark.parametrize("name, mistake, kind, message", MISTAKES, ids=[row[0] for row in MISTAKES])
def test_a_mistake_at_registration_names_its_fix(name, mistake, kind, message):
    # Caught when the server is built, not at the first request, in words that say what to change.
    with pytest.raises(kind) as caught:
        mistake(MCPServer("mistakes"))
    assert str(caught.value) == message


def test_a_path_read_through_a_one_segment_variable_hints_at_plus():
    # {path} matches one segment; a URI with a "/" there is unknown, and the error says {+path} would take it.
    server = MCPServer("files")
    server.add_resource("files://{path}", lambda path: path)
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(2, "resources/read", {"uri": "files://a/b"}))["error"]["message"] == (
        "unknown resource: files://a/b (in files://{path}, a {name} is one path segment; a variable that holds a path "
        "is written {+name})")


def test_a_tool_that_forgets_its_return_says_so_as_its_error(capsys):
    # "-> str" and no return: not the text "null", but an isError result that names the likely mistake.
    server = MCPServer("forgetful")

    @server.tool()
    def greet(name: str) -> str:
        """Greet, but forget to return."""
        f"hello {name}"
    server.handle(request(1, "initialize", INIT))
    server.handle(notification("notifications/initialized"))
    assert server.handle(request(2, "tools/call", {"name": "greet", "arguments": {"name": "Ada"}}))["result"] == {
        "content": [{"type": "text", "text": "ERROR: the tool returned nothing (None), though its hint says it "
                                             "returns str: a forgotten return?"}], "isError": True}
    assert "a forgotten return?" in capsys.readouterr().err
