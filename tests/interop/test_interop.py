"""Interop: mcp_min against the official MCP Python SDK (mcp==2.3.0), in both directions.

1. The SDK's client drives server_demo.py over stdio, in each of its connect modes.
2. The SDK's client drives server_demo.py over Streamable HTTP (stateless and handshake eras).
3. mcp_min's client drives a server written with the SDK's MCPServer, over stdio and over HTTP.
4. Version negotiation: what server_demo answers to each version offered in initialize.
5. A stateless input_required round trip, answered by the SDK's elicitation callback.

Two tests pin the Mcp-Name header's =?base64?...?= form (2026-07-28), in both directions: a value that
is not plain printable ASCII travels base64-wrapped, and each side unwraps it before comparing.

The whole module skips where `mcp` (v2) is not importable: `.ci/run` installs it into a virtual
environment of its own; a plain local run (standard library plus pytest) skips these tests.
Nothing here can hang: every SDK exchange runs under anyio.fail_after with read_timeout_seconds,
and mcp_min's own transports carry their own timeouts.
"""

import contextlib
import importlib.metadata
import json
import pathlib
import re
import select
import subprocess
import sys
import time

import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (pip install mcp==2.3.0) is not installed")
if int(importlib.metadata.version("mcp").split(".")[0]) < 2:
    pytest.skip("these tests need the official MCP SDK v2 (mcp==2.3.0)", allow_module_level=True)

import anyio  # noqa: E402  (the SDK depends on it, so it is here whenever mcp is)
import mcp.client.session as sdk_session  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.types import ElicitResult  # noqa: E402

import mcp_full  # noqa: E402
import mcp_http  # noqa: E402
import mcp_stdio  # noqa: E402
from harness import wait_until

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/interop/)
SERVER_DEMO = str(HERE / "server_demo.py")
TAP = str(HERE / "tap.py")

SDK_DEADLINE = 20  # seconds for one whole SDK client session; the auto probe alone may wait 10 s
SDK_START_S = 20  # seconds an SDK server may take to start serving: about one at rest, over ten on a crowded machine
READ_TIMEOUT = 5  # seconds the SDK client waits for any one answer

# What server_demo.py answers to the calls every scenario makes.
DEMO_TOOLS = ["add", "weather", "delete_db", "enable_subtract", "search_docs", "count_lessons", "count_slowly"]
COUNT_LESSONS_ERROR = "ERROR: unknown course 'postgres'; this server knows only 'mcp'"
README_TEXT = "mcp_min's demo server: try tools/list, then tools/call add."
REFUNDS_TEXT = "Refunds are granted within 30 days of purchase."
INCIDENT_PROMPT = ("Summarize this high-severity incident in three sentences, "
                   "focusing on root cause and remediation.")
DEMO_CALLS = ["tools/list", "tools/call", "tools/call", "resources/read", "resources/read", "prompts/get"]
MODERN = "2026-07-28"


# ---- helpers ----

def tapped_demo(log: pathlib.Path, *demo_args: str) -> StdioServerParameters:
    """server_demo.py behind mcp_min's wire tap, which logs every line to log as `→ {json}` / `← {json}`."""
    return StdioServerParameters(command=sys.executable, cwd=str(HERE),
                                 args=[TAP, "--log", str(log), "--", sys.executable, SERVER_DEMO,
                                       *demo_args])


def read_tap(log: pathlib.Path) -> tuple[list, list]:
    """The tap's log as (messages the client sent, messages the server sent), each in its own order.

    The tap forwards bytes first and logs afterwards, from one thread per direction, so only the
    order within a direction is meaningful, not the interleaving of the two.
    """
    sent, received = [], []
    for line in log.read_text(encoding="utf-8").splitlines():
        arrow, _, text = line.partition(" ")
        (sent if arrow == "→" else received).append(json.loads(text))
    return sent, received


async def exercise_demo(client: Client) -> dict:
    """The calls every official-client scenario makes against server_demo, and what came back."""
    tools = await client.list_tools()
    added = await client.call_tool("add", {"x": 2, "y": 3})
    failed = await client.call_tool("count_lessons", {"course": "postgres"})
    readme = await client.read_resource("lab://readme")
    refunds = await client.read_resource("policy://refunds")
    prompt = await client.get_prompt("summarize_incident", {"severity": "high"})
    return {"tools": [tool.name for tool in tools.tools], "added": added, "failed": failed, "readme": readme,
            "refunds": refunds, "prompt": prompt, "protocol_version": client.protocol_version,
            "server_info": client.server_info}


def check_demo_answers(seen: dict):
    """Every scenario must read exactly these answers, whatever the era or the transport."""
    assert seen["tools"] == DEMO_TOOLS
    assert [(block.type, block.text) for block in seen["added"].content] == [("text", "5")]
    assert seen["added"].is_error is False
    assert [(block.type, block.text) for block in seen["failed"].content] == [("text", COUNT_LESSONS_ERROR)]
    assert seen["failed"].is_error is True
    assert [(str(c.uri), c.mime_type, c.text) for c in seen["readme"].contents] == [
        ("lab://readme", "text/plain", README_TEXT)]
    assert [(str(c.uri), c.mime_type, c.text) for c in seen["refunds"].contents] == [
        ("policy://refunds", "text/plain", REFUNDS_TEXT)]
    assert [(m.role, m.content.type, m.content.text) for m in seen["prompt"].messages] == [
        ("user", "text", INCIDENT_PROMPT)]


def run_sdk_over_stdio(log: pathlib.Path, mode: str, *demo_args: str, **client_options) -> dict:
    """Launch server_demo (tapped) with the official client in mode, make the demo's calls, return them."""
    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(tapped_demo(log, *demo_args), mode=mode, read_timeout_seconds=READ_TIMEOUT,
                              **client_options) as client:
                return await exercise_demo(client)
    return anyio.run(scenario)


@pytest.fixture(scope="module")
def demo_http_url():
    """server_demo.py --http on a port the OS picks; its URL once it accepts connections."""
    with served_demo_over_http() as url:
        yield url


@contextlib.contextmanager
def served_demo_over_http(*demo_args: str):
    """server_demo.py --http (with demo_args) on a port the OS picks; yields its URL, then stops it."""
    process = subprocess.Popen([sys.executable, SERVER_DEMO, "--http", "--port", "0", *demo_args], cwd=str(HERE),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # The server names its port on stderr ("mcp_min: serving http://127.0.0.1:PORT/mcp"): no race for it.
        deadline = time.monotonic() + 10
        announced = b""
        while b"\n" not in announced:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([process.stderr], [], [], remaining)[0]:
                pytest.fail(f"server_demo --http did not announce its port within 10 s: {announced!r}")
            chunk = process.stderr.read1(4096)
            if not chunk:
                pytest.fail(f"server_demo --http exited ({process.wait()}): {announced!r}")
            announced += chunk
        yield re.search(rb"http://127\.0\.0\.1:\d+/mcp", announced).group().decode()
    finally:
        stop(process)
        process.stderr.close()


def stop(process: subprocess.Popen):
    """Terminate a server child, and kill it if it does not exit within 5 s."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_sdk_over_http(url: str, mode: str) -> tuple[dict, list]:
    """The official client against url in mode; the demo's calls and every HTTP exchange (via httpx hooks)."""
    import httpx2  # the SDK's HTTP library; its event hooks let the test see headers and statuses

    exchanges = []

    async def on_request(request):
        body = json.loads(request.content) if request.content else {}
        exchanges.append({"verb": request.method, "method": body.get("method"),
                          "session": request.headers.get("mcp-session-id"),
                          "version": request.headers.get("mcp-protocol-version")})

    async def on_response(response):
        exchanges.append({"verb": response.request.method, "status": response.status_code,
                          "issued": response.headers.get("mcp-session-id")})

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with httpx2.AsyncClient(timeout=10, event_hooks={"request": [on_request],
                                                                   "response": [on_response]}) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
                    return await exercise_demo(client)
    return anyio.run(scenario), exchanges


SDK_SERVER = '''
"""A small server written with the official SDK, for mcp_min's client to drive."""
import contextlib
import sys

from mcp.server import MCPServer

SERVING = "sdk-side: serving"  # on stderr once the SDK is imported and serves: a client may start its clock


@contextlib.asynccontextmanager
async def announce(server):
    print(SERVING, file=sys.stderr, flush=True)
    yield {}


server = MCPServer("sdk-side", version="2.3.0-interop", lifespan=announce)


@server.tool()
def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


@server.tool()
def explode(reason: str) -> str:
    """Always raises."""
    raise ValueError(reason)


@server.resource("info://static", mime_type="text/plain")
def static_info() -> str:
    return "static text"


@server.resource("greet://{name}", mime_type="text/plain")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@server.prompt()
def review(code: str) -> str:
    """Review code."""
    return f"Please review: {code}"


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["--http"]:  # Streamable HTTP at http://127.0.0.1:PORT/mcp
        server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
'''


SDK_RESUMABLE_SERVER = '''
"""An SDK server with an event store, whose tool closes its stream's connection mid-call and goes on."""
import sys

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.streamable_http import EventMessage, EventStore


class MemoryStore(EventStore):
    """Every event, in order, as (event id, stream id, message); event ids count from 1."""

    def __init__(self):
        self.events = []

    async def store_event(self, stream_id, message):
        self.events.append((str(len(self.events) + 1), stream_id, message))
        return self.events[-1][0]

    async def replay_events_after(self, last_event_id, send_callback):
        streams = [stream for event_id, stream, _ in self.events if event_id == last_event_id]
        if not streams:
            return None
        for event_id, stream, message in self.events[int(last_event_id):]:
            if stream == streams[0] and message is not None:
                await send_callback(EventMessage(message, event_id))
        return streams[0]


server = MCPServer("sdk-resumable", version="2.3.0-interop")


@server.tool()
async def cut_short(ctx: Context) -> str:
    """Report progress, close the stream's connection, report again, answer."""
    await ctx.report_progress(1, 2)
    await ctx.close_sse_stream()
    await ctx.report_progress(2, 2)
    return "whole"


if __name__ == "__main__":
    server.run(transport="streamable-http", host="127.0.0.1", port=int(sys.argv[1]), event_store=MemoryStore(),
               retry_interval=200)
'''


@contextlib.contextmanager
def served_sdk(folder: pathlib.Path, script: str, *args: str):
    """An SDK server script over Streamable HTTP on a port the OS picks; its URL once uvicorn says it listens."""
    (folder / "sdk_server.py").write_text(script, encoding="utf-8")
    log = folder / "stderr.log"
    with open(log, "wb") as stderr:  # port 0: the OS picks a free port, and uvicorn names it (no race for one)
        process = subprocess.Popen([sys.executable, str(folder / "sdk_server.py"), *args, "0"],
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        def listening():
            if process.poll() is not None:
                pytest.fail(f"the SDK server exited ({process.returncode}): {log.read_text()}")
            return re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text(encoding="utf-8"))
        wait_until(listening, "uvicorn to say where it listens", SDK_START_S)
        yield listening().group(1) + "/mcp"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def sdk_http_url(tmp_path_factory):
    """The SDK server above over Streamable HTTP; its URL."""
    with served_sdk(tmp_path_factory.mktemp("sdk_http"), SDK_SERVER, "--http") as url:
        yield url


# ---- 1. the official client drives server_demo over stdio ----

@pytest.mark.parametrize("mode", ["auto", "legacy", MODERN])
def test_official_client_calls_server_demo_over_stdio_in_each_mode(mode, tmp_path):
    # The SDK client, in each connect mode, lists, calls, reads and gets a prompt from server_demo over stdio.
    log = tmp_path / "wire.log"
    seen = run_sdk_over_stdio(log, mode)
    check_demo_answers(seen)
    sent, received = read_tap(log)
    requests = [m for m in sent if "id" in m]
    methods = [m["method"] for m in sent]
    if mode == "legacy":
        assert methods == ["initialize", "notifications/initialized", *DEMO_CALLS]
        assert seen["protocol_version"] == "2025-11-25"
        assert all("resultType" not in m["result"] for m in received)
    else:
        # auto: server_demo answers server/discover, so the SDK goes stateless and never sends initialize.
        # 2026-07-28: the pin adopts the modern era with no probe at all.
        assert methods == (["server/discover"] if mode == "auto" else []) + DEMO_CALLS
        assert seen["protocol_version"] == MODERN
        assert all(m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == MODERN for m in requests)
        assert all(m["result"]["resultType"] == "complete" for m in received)
    # The pin mode has no discover result, so the SDK knows no serverInfo there.
    expected_info = None if mode == MODERN else ("mcp_min-demo", "0.1.0")
    info = seen["server_info"]
    assert (info and (info.name, info.version)) == expected_info
    assert sorted(m["id"] for m in received) == sorted(m["id"] for m in requests)  # one answer each
    assert all("error" not in m for m in received)


# ---- 2. the official client drives server_demo over Streamable HTTP ----

def test_official_client_calls_server_demo_over_http_statelessly_in_auto_mode(demo_http_url):
    # In auto mode over HTTP the SDK client probes server/discover, stays stateless, and needs no session.
    seen, exchanges = run_sdk_over_http(demo_http_url, "auto")
    check_demo_answers(seen)
    assert seen["protocol_version"] == MODERN
    requests = [e for e in exchanges if "method" in e]
    assert [e["method"] for e in requests] == ["server/discover", *DEMO_CALLS]
    assert {(e["verb"], e["version"], e["session"]) for e in requests} == {("POST", MODERN, None)}
    assert {(e["verb"], e["status"], e["issued"]) for e in exchanges if "status" in e} == {("POST", 200, None)}


def test_official_client_calls_server_demo_over_http_with_a_session_in_legacy_mode(demo_http_url):
    # In legacy mode over HTTP the SDK client initializes, echoes Mcp-Session-Id on later messages, and DELETEs it.
    seen, exchanges = run_sdk_over_http(demo_http_url, "legacy")
    check_demo_answers(seen)
    assert seen["protocol_version"] == "2025-11-25"
    posts = [e for e in exchanges if "method" in e and e["verb"] == "POST"]
    assert [e["method"] for e in posts] == ["initialize", "notifications/initialized", *DEMO_CALLS]
    issued = [e["issued"] for e in exchanges if e.get("issued")]
    assert len(issued) == 1 and len(issued[0]) >= 16  # only the initialize response names the session
    session = issued[0]
    assert (posts[0]["session"], posts[0]["version"]) == (None, None)
    assert {(e["session"], e["version"]) for e in posts[1:]} == {(session, "2025-11-25")}
    # The SDK opens the session's standing GET stream (server_demo offers it) and ends the session with DELETE on close.
    statuses = [(e["verb"], e["status"]) for e in exchanges if "status" in e]
    assert statuses.count(("POST", 202)) == 1  # notifications/initialized
    assert statuses.count(("POST", 200)) == 1 + len(DEMO_CALLS)
    assert set(statuses) - {("POST", 200), ("POST", 202)} == {("GET", 200), ("DELETE", 200)}
    deletes = [e for e in exchanges if e["verb"] == "DELETE" and "method" in e]
    assert [(e["session"], e["version"]) for e in deletes] == [(session, "2025-11-25")]
    assert ("DELETE", 200) in statuses


def test_official_client_reads_a_non_ascii_uri_over_http_with_a_base64_mcp_name(demo_http_url):
    # A non-ASCII URI travels in Mcp-Name as =?base64?...?=; the server must decode it and answer as over stdio.
    import base64
    import httpx2
    from mcp import MCPError

    uri = "policy://café"
    names = []

    async def on_request(request):
        names.append(request.headers.get("mcp-name"))

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with httpx2.AsyncClient(timeout=10, event_hooks={"request": [on_request]}) as http:
                async with Client(streamable_http_client(demo_http_url, http_client=http), mode="auto",
                                  read_timeout_seconds=READ_TIMEOUT) as client:
                    with pytest.raises(MCPError) as caught:
                        await client.read_resource(uri)
                    return caught.value
    error = anyio.run(scenario)
    assert names[-1] == "=?base64?" + base64.b64encode(uri.encode()).decode() + "?="
    # server_demo knows no such policy: over stdio this is -32602 with data {"uri": ...}, never a header mismatch.
    assert (error.code, error.data) == (mcp_full.INVALID_PARAMS, {"uri": uri}), (error.code, error.message)


# ---- 3. mcp_min's client drives a server written with the SDK ----

@pytest.mark.parametrize("mode, era, version", [("auto", "stateless", MODERN), ("handshake", "handshake", "2025-11-25")])
def test_mcp_min_client_calls_sdk_server_over_stdio_in_each_mode(mode, era, version, tmp_path):
    # mcp_min's client connects to an SDK MCPServer (auto: stateless via discover; handshake: no probe) and uses it all.
    script = tmp_path / "sdk_server.py"
    script.write_text(SDK_SERVER, encoding="utf-8")
    log = tmp_path / "sdk_server.stderr"
    with open(log, "wb") as stderr:  # the SDK logs a traceback for explode
        client = mcp_full.MCPClient(mcp_stdio.StdioTransport([sys.executable, str(script)], timeout=10,
                                                          stderr=stderr))
        try:
            # The SDK imports for a second or more (several on a loaded machine): connect()'s probe, a third of
            # the 10 s, starts once the server says it serves, so that it times the answer, not the imports.
            wait_until(lambda: "sdk-side: serving" in log.read_text(encoding="utf-8"), "the SDK server to serve",
                       SDK_START_S)
            client.connect(mode=mode)
            tools = client.list_tools()
            added = client.call_tool("add", {"x": 2, "y": 3})
            exploded = client.call_tool("explode", {"reason": "kaboom"})
            resources = client.list_resources()
            templates = client.list_resource_templates()
            static = client.read_resource("info://static")
            greeting = client.read_resource("greet://ada")
            prompts = client.list_prompts()
            prompt = client.get_prompt("review", {"code": "x = 1"})
        finally:
            client.close()
    assert (client.era, client.protocol_version) == (era, version)
    assert client.server_info == {"name": "sdk-side", "version": "2.3.0-interop"}
    assert [t["name"] for t in tools] == ["add", "explode"]
    assert tools[0]["inputSchema"]["type"] == "object"
    assert (added["content"], added["structuredContent"], added["isError"]) == (
        [{"type": "text", "text": "5"}], {"result": 5}, False)
    # The SDK hides the exception's detail: the text names the tool, not "kaboom".
    assert (exploded["content"], exploded["isError"]) == ([{"type": "text", "text": "Error executing tool explode"}],
                                                          True)
    assert [r["uri"] for r in resources] == ["info://static"]
    assert [t["uriTemplate"] for t in templates] == ["greet://{name}"]
    assert static["contents"] == [{"uri": "info://static", "mimeType": "text/plain", "text": "static text"}]
    assert greeting["contents"] == [{"uri": "greet://ada", "mimeType": "text/plain", "text": "Hello, ada!"}]
    assert [(p["name"], p["arguments"]) for p in prompts] == [("review", [{"name": "code", "required": True}])]
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "Please review: x = 1"}}]
    results = [added, exploded, static, greeting, prompt]
    if era == "stateless":
        # 2026-07-28: every result says resultType, and the cacheable ones carry ttlMs and cacheScope.
        assert [r["resultType"] for r in results] == ["complete"] * len(results)
        assert [(r["ttlMs"], r["cacheScope"]) for r in (static, greeting)] == [(0, "private")] * 2
    else:
        assert [r for r in results if "resultType" in r] == []


@pytest.mark.parametrize("mode, era, version", [("auto", "stateless", MODERN), ("handshake", "handshake", "2025-11-25")])
def test_mcp_min_client_calls_sdk_server_over_http_in_each_mode(mode, era, version, sdk_http_url):
    # mcp_min's HttpTransport talks to the SDK's Streamable HTTP server (JSON or event-stream answers) in both eras.
    client = mcp_full.MCPClient(mcp_http.HttpTransport(sdk_http_url, timeout=10))
    try:
        client.connect(mode=mode)
        tools = client.list_tools()
        added = client.call_tool("add", {"x": 2, "y": 3})
        exploded = client.call_tool("explode", {"reason": "kaboom"})
        greeting = client.read_resource("greet://ada")
        prompt = client.get_prompt("review", {"code": "x = 1"})
    finally:
        client.close()
    assert (client.era, client.protocol_version) == (era, version)
    assert client.server_info == {"name": "sdk-side", "version": "2.3.0-interop"}
    assert [t["name"] for t in tools] == ["add", "explode"]
    assert (added["content"], added["structuredContent"]) == ([{"type": "text", "text": "5"}], {"result": 5})
    assert (exploded["content"], exploded["isError"]) == ([{"type": "text", "text": "Error executing tool explode"}],
                                                          True)
    assert greeting["contents"] == [{"uri": "greet://ada", "mimeType": "text/plain", "text": "Hello, ada!"}]
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "Please review: x = 1"}}]
    if era == "stateless":
        assert [r["resultType"] for r in (added, exploded, greeting, prompt)] == ["complete"] * 4


def test_mcp_min_client_resumes_a_stream_the_sdk_server_closes_mid_call(tmp_path):
    # The SDK's tool calls ctx.close_sse_stream() after progress 1: mcp_min's client waits the retry (200 ms), GETs
    # with Last-Event-ID, and the SDK's event store replays progress 2 and the answer (spec 2025-11-25, basic/transports,
    # "Resumability and Redelivery").
    progress = []
    with served_sdk(tmp_path, SDK_RESUMABLE_SERVER) as url:
        client = mcp_full.MCPClient(mcp_http.HttpTransport(url, timeout=10),
                                    on_progress=lambda params: progress.append(params["progress"]))
        try:
            client.connect(mode="handshake")
            result = client.call_tool("cut_short", progress=True)
        finally:
            client.close()
    assert (client.protocol_version, result["content"], progress) == ("2025-11-25", [{"type": "text", "text": "whole"}],
                                                                      [1, 2])


def test_mcp_min_client_reads_uris_that_need_a_base64_mcp_name_from_sdk_server(sdk_http_url):
    # A URI with edge whitespace or non-Latin-1 text must reach the SDK server intact in the Mcp-Name header.
    read = {}
    for uri in ("greet://ada ", "greet://世界"):
        client = mcp_full.MCPClient(mcp_http.HttpTransport(sdk_http_url, timeout=10))  # one each: a failure
        try:  # can leave the client's HTTP connection unusable
            client.connect(mode="auto")
            read[uri] = client.read_resource(uri)["contents"][0]["text"]
        except Exception as exc:  # noqa: BLE001  (the assertion below shows what went wrong)
            read[uri] = f"{type(exc).__name__}: {exc}"
        finally:
            client.close()
    assert read == {"greet://ada ": "Hello, ada !", "greet://世界": "Hello, 世界!"}


# ---- 4. version negotiation ----

# Offered in initialize -> server_demo's answer: a supported version is echoed; else the newest supported
# one not newer than the offer; else the newest supported (handshake versions: 2025-06-18, 2025-11-25).
NEGOTIATION = [("2025-06-18", "2025-06-18"), ("2025-11-25", "2025-11-25"), ("2025-03-26", "2025-11-25"),
               ("2026-07-28", "2025-11-25"), ("2099-01-01", "2025-11-25")]


@pytest.mark.parametrize("offered, answered", NEGOTIATION)
def test_server_demo_negotiates_each_offered_version_over_raw_stdio(offered, answered):
    # A hand-built initialize line over stdio gets the version mcp_min's negotiation rule picks.
    transport = mcp_stdio.StdioTransport([sys.executable, SERVER_DEMO], timeout=10)
    try:
        reply = transport.send(mcp_full.request(1, "initialize", {
            "protocolVersion": offered, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}))
        transport.send(mcp_full.notification("notifications/initialized"))
        pong = transport.send(mcp_full.request(2, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}}))
    finally:
        exit_code = transport.close()
    assert exit_code == 0  # server_demo exits cleanly on end of input
    assert (reply["jsonrpc"], reply["id"], sorted(reply["result"])) == (
        "2.0", 1, ["capabilities", "instructions", "protocolVersion", "serverInfo"])
    assert reply["result"]["protocolVersion"] == answered
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "5"}]}}


@pytest.mark.parametrize("offered, answered", NEGOTIATION)
def test_official_client_accepts_server_demo_answer_to_each_offered_version(offered, answered, tmp_path,
                                                                             monkeypatch):
    # The SDK client in legacy mode, made to offer each version, accepts server_demo's answer and works on it.
    # The SDK has no knob for the offer; FINDINGS.md 4: the session module reads this global at initialize.
    monkeypatch.setattr(sdk_session, "LATEST_HANDSHAKE_VERSION", offered)
    log = tmp_path / "wire.log"

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(tapped_demo(log), mode="legacy", read_timeout_seconds=READ_TIMEOUT) as client:
                added = await client.call_tool("add", {"x": 2, "y": 3})
                return client.protocol_version, client.session.initialize_result.protocol_version, added
    negotiated, in_result, added = anyio.run(scenario)
    sent, received = read_tap(log)
    assert sent[0]["method"] == "initialize" and sent[0]["params"]["protocolVersion"] == offered
    assert received[0]["id"] == 1 and received[0]["result"]["protocolVersion"] == answered
    assert (negotiated, in_result) == (answered, answered)
    assert [(block.type, block.text) for block in added.content] == [("text", "5")]


# ---- 5. input_required, answered by the SDK's elicitation callback ----

@pytest.mark.parametrize("action, content, outcome", [
    ("accept", {"confirm": True}, "Database deleted (pretend)."),
    ("decline", None, "Nothing deleted: the user said no."),
])
def test_official_client_answers_delete_db_confirmation_through_its_elicitation_callback(action, content, outcome,
                                                                                        tmp_path):
    # server_demo's delete_db answers input_required; the SDK asks its callback and retries with the answer.
    log = tmp_path / "wire.log"
    asked = []

    async def elicit(context, params):
        asked.append((params.message, params.requested_schema))
        return ElicitResult(action=action, content=content)

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(tapped_demo(log, "--allow", "add,delete_db"), mode="auto",
                              read_timeout_seconds=READ_TIMEOUT, elicitation_callback=elicit) as client:
                return client.protocol_version, await client.call_tool("delete_db", {})
    version, result = anyio.run(scenario)
    assert version == MODERN
    assert ([(b.type, b.text) for b in result.content], result.is_error) == ([("text", outcome)], False)
    assert asked == [("Really delete the database?", {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                                      "required": ["confirm"]})]
    sent, received = read_tap(log)
    calls = [m for m in sent if m["method"] == "tools/call"]
    answers = {m["id"]: m["result"] for m in received}
    # The SDK declares elicitation in _meta, since mcp_min asks only clients that declared it.
    assert calls[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "elicitation": {"form": {}, "url": {}}}
    first = answers[calls[0]["id"]]
    assert (first["resultType"], list(first["inputRequests"])) == ("input_required", ["confirm"])
    assert first["inputRequests"]["confirm"]["method"] == "elicitation/create"
    # The retry: a new id, the exact requestState, and the callback's answer under the server's key.
    assert len(calls) == 2 and calls[1]["id"] != calls[0]["id"]
    assert calls[1]["params"]["requestState"] == first["requestState"]
    expected_answer = {"action": action, **({"content": content} if content is not None else {})}
    assert calls[1]["params"]["inputResponses"] == {"confirm": expected_answer}
    assert answers[calls[1]["id"]]["resultType"] == "complete"


@pytest.mark.parametrize("action, content, outcome", [
    ("accept", {"confirm": True}, "Database deleted (pretend)."),
    ("decline", None, "Nothing deleted: the user said no."),
])
def test_official_legacy_client_answers_delete_db_through_a_server_request(action, content, outcome, tmp_path):
    # In the handshake era the same delete_db sends a real elicitation/create request mid-call; the SDK's
    # callback answers it, the server routes the response back to the waiting tool, and the call completes.
    log = tmp_path / "wire.log"
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return ElicitResult(action=action, content=content)

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(tapped_demo(log, "--allow", "add,delete_db"), mode="legacy",
                              read_timeout_seconds=READ_TIMEOUT, elicitation_callback=elicit) as client:
                return await client.call_tool("delete_db", {})
    result = anyio.run(scenario)
    assert ([(b.type, b.text) for b in result.content], result.is_error) == ([("text", outcome)], False)
    assert asked == ["Really delete the database?"]
    sent, received = read_tap(log)
    [question] = [m for m in received if m.get("method") == "elicitation/create"]
    assert question["params"]["message"] == "Really delete the database?" and "id" in question
    [reply] = [m for m in sent if "method" not in m]
    expected_answer = {"action": action, **({"content": content} if content is not None else {})}
    assert (reply["id"], reply["result"]) == (question["id"], expected_answer)
    assert [m["method"] for m in sent if "method" in m][:3] == ["initialize", "notifications/initialized", "tools/call"]


# ---- 6. Several rounds and several questions, answered by the SDK's callbacks (2026-07-28) ----

ASKING_SERVER = '''
import sys
sys.path.insert(0, {root!r})
from mcp_full import Context, MCPServer
from mcp_stdio import serve_stdio

server = MCPServer("asking")
FORM = {{"type": "object", "properties": {{"value": {{"type": "string"}}}}, "required": ["value"]}}


@server.tool()
def two_rounds(ctx: Context) -> str:
    """Ask a, then b."""
    a = ctx.elicit("a", "First?", FORM)["content"]["value"]
    b = ctx.elicit("b", "Second, after " + a + "?", FORM)["content"]["value"]
    return a + b


@server.tool()
def all_at_once(ctx: Context) -> str:
    """Ask the user, the model and the roots in one round."""
    answers = ctx.ask({{"name": {{"method": "elicitation/create", "params": {{"message": "Name?", "requestedSchema": FORM}}}},
                       "poem": {{"method": "sampling/createMessage",
                                 "params": {{"messages": [{{"role": "user", "content": {{"type": "text", "text": "hi"}}}}],
                                             "maxTokens": 5}}}},
                       "roots": {{"method": "roots/list", "params": {{}}}}}})
    return "|".join([answers["name"]["content"]["value"], answers["poem"]["content"]["text"],
                     answers["roots"]["roots"][0]["uri"]])


serve_stdio(server)
'''


def test_official_client_finishes_a_two_round_call_and_a_three_question_round(tmp_path):
    # The SDK (mode 2026-07-28) sends only each round's answers; the signed state carries the earlier ones.
    from mcp.types import CreateMessageResult, ListRootsResult, Root, TextContent
    script = tmp_path / "asking.py"
    script.write_text(ASKING_SERVER.format(root=str(HERE)), encoding="utf-8")
    log = tmp_path / "wire.log"
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return ElicitResult(action="accept", content={"value": {"First?": "x", "Name?": "Ada"}.get(params.message, "y")})

    async def sample(context, params):
        asked.append("sampling")
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text="poem"), model="m")

    async def roots(context):
        asked.append("roots")
        return ListRootsResult(roots=[Root(uri="file:///work")])

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            server = StdioServerParameters(command=sys.executable, cwd=str(HERE),
                                           args=[TAP, "--log", str(log), sys.executable, str(script)])
            async with Client(server, mode=MODERN, read_timeout_seconds=READ_TIMEOUT, elicitation_callback=elicit,
                              sampling_callback=sample, list_roots_callback=roots) as client:
                return await client.call_tool("two_rounds", {}), await client.call_tool("all_at_once", {})
    two, three = anyio.run(scenario)
    assert [(b.type, b.text) for b in two.content] == [("text", "xy")]
    assert [(b.type, b.text) for b in three.content] == [("text", "Ada|poem|file:///work")]
    assert asked[:2] == ["First?", "Second, after x?"] and sorted(asked[2:]) == ["Name?", "roots", "sampling"]
    sent, _ = read_tap(log)
    rounds = [sorted(m["params"].get("inputResponses") or {}) for m in sent if m["params"].get("name") == "two_rounds"]
    assert rounds == [[], ["a"], ["b"]]  # each retry carries only its own round's answers
    rounds = [sorted(m["params"].get("inputResponses") or {}) for m in sent if m["params"].get("name") == "all_at_once"]
    assert rounds == [[], ["name", "poem", "roots"]]


# ---- 7. subscriptions/listen, heard by the SDK's client (2026-07-28) ----

def test_official_client_listen_sees_subtract_appear_after_enable_subtract(tmp_path):
    # The SDK's listen() gets the acknowledgement, then a tools list change when enable_subtract adds a
    # tool; it lists again and finds subtract. Then it ends the stream (notifications/cancelled on stdio).
    log = tmp_path / "wire.log"

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(tapped_demo(log), mode=MODERN, read_timeout_seconds=READ_TIMEOUT) as client:
                async with client.listen(tools_list_changed=True, prompts_list_changed=True) as subscription:
                    honoured = subscription.honored
                    await client.call_tool("enable_subtract", {})
                    event = await subscription.__anext__()
                    tools = await client.list_tools()
                return honoured, event, [tool.name for tool in tools.tools]
    honoured, event, names = anyio.run(scenario)
    assert honoured.tools_list_changed is True and honoured.prompts_list_changed is True
    assert "subtract" in names and "tools" in type(event).__name__.lower()
    sent, received = read_tap(log)
    [listen] = [m for m in sent if m.get("method") == "subscriptions/listen"]
    tagged = [m for m in received if m.get("method") == "notifications/tools/list_changed"]
    assert tagged == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                       "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]}}}]


# ---- 8. Both directions over HTTP, with the SDK's client ----

def test_official_legacy_client_answers_a_server_request_over_http():
    # The elicitation/create request travels on the tools/call POST's event stream; the SDK POSTs its answer.
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return ElicitResult(action="accept", content={"confirm": True})

    async def scenario(url):
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(streamable_http_client(url), mode="legacy", read_timeout_seconds=READ_TIMEOUT,
                              elicitation_callback=elicit) as client:
                return await client.call_tool("delete_db", {})
    with served_demo_over_http("--allow", "add,delete_db") as url:
        result = anyio.run(scenario, url)
    assert [(b.type, b.text) for b in result.content] == [("text", "Database deleted (pretend).")]
    assert asked == ["Really delete the database?"]


def test_official_client_listens_over_http_and_sees_subtract_appear():
    # The listen stream is a POST whose event stream stays open; the change arrives on it, tagged.
    async def scenario(url):
        with anyio.fail_after(SDK_DEADLINE):
            async with Client(streamable_http_client(url), mode=MODERN, read_timeout_seconds=READ_TIMEOUT) as client:
                async with client.listen(tools_list_changed=True) as subscription:
                    await client.call_tool("enable_subtract", {})
                    await subscription.__anext__()
                    return [tool.name for tool in (await client.list_tools()).tools]
    with served_demo_over_http() as url:
        assert "subtract" in anyio.run(scenario, url)


# ---- 4. the official client drives the lab alone ----

LAB_SERVER = """import sys
sys.path.insert(0, {root!r})
from mcp_min import MCPServer
from mcp_stdio import serve_stdio

XY = {{"type": "object", "properties": {{"x": {{"type": "integer"}}, "y": {{"type": "integer"}}}}, "required": ["x", "y"]}}
server = MCPServer("course-lab", allowed_tools={{"add"}})  # course 000's lab: delete_db exists, not allowed
server.add_tool("add", lambda x, y: x + y, "Add two integers.", XY)
server.add_tool("delete_db", lambda: "deleted", "Delete the database.")
server.add_resource("file:///readme.txt", "hello")
server.add_prompt("summarize_incident", lambda severity: "Summarize this " + severity + "-severity incident.",
                  "Summarize an incident.", [{{"name": "severity", "required": True}}])
serve_stdio(server)
"""


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_official_client_drives_the_lab_alone_over_stdio(mode, tmp_path):
    # mcp_min.py's own server behind mcp_stdio.py: the SDK's handshake works, course 000's lattice answers. In auto
    # mode the probe (server/discover) meets the lab's gate (-32600), so the SDK initializes at once.
    script = tmp_path / "lab_server.py"
    script.write_text(LAB_SERVER.format(root=str(HERE)), encoding="utf-8")
    log = tmp_path / "wire.log"

    async def scenario():
        with anyio.fail_after(SDK_DEADLINE):
            params = StdioServerParameters(command=sys.executable, args=[TAP, "--log", str(log), "--", sys.executable,
                                                                         str(script)])
            async with Client(params, mode=mode, read_timeout_seconds=READ_TIMEOUT) as client:
                tools = await client.list_tools()
                added = await client.call_tool("add", {"x": 2, "y": 3})
                with pytest.raises(sdk_session.MCPError) as refused:
                    await client.call_tool("delete_db", {})
                readme = await client.read_resource("file:///readme.txt")
                prompt = await client.get_prompt("summarize_incident", {"severity": "high"})
                return tools, added, refused.value, readme, prompt, client.protocol_version
    tools, added, refused, readme, prompt, version = anyio.run(scenario)
    assert [tool.name for tool in tools.tools] == ["add", "delete_db"]
    assert ([(block.type, block.text) for block in added.content], added.is_error) == ([("text", "5")], False)
    assert (refused.error.code, refused.error.message) == (-32600, "tool 'delete_db' not permitted for this session")
    assert [c.text for c in readme.contents] == ["hello"]
    assert prompt.messages[0].content.text == "Summarize this high-severity incident."
    sent, received = read_tap(log)
    opening = (["server/discover"] if mode == "auto" else []) + ["initialize", "notifications/initialized"]
    assert [m["method"] for m in sent][:len(opening)] == opening
    initialized = [m["result"] for m in received if "protocolVersion" in m.get("result", {})]
    assert [result["protocolVersion"] for result in initialized] == ["2025-11-25"]  # the handshake's, on the wire
    assert version == "2025-11-25"
