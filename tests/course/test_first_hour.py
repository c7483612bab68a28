"""A student's first hour: the course's own code runs against the lab, mistakes explain themselves, the lessons
never trip, and a server of one's own runs from any folder.

The course's code blocks below are copied from the course texts as they stand (course 004, section 4; course
002, "The Initialization Handshake" and "The Three MCP Primitives"); only an import line may change.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

import mcp_full
import mcp_http
import mcp_stdio
from mcp_full import Context, InMemoryTransport, MCPClient, MCPServer
from harness import DEMO, TIMEOUT, http_endpoint
from notebooks import LESSONS, NOTEBOOKS, build, exercise_cells, notebook, stdout_of

MODULES = ["mcp_min", "mcp_full", "mcp_stdio", "mcp_http", "mcp_auth", "mcp_oauth", "tap", "board", "report_card",
           "grading"]  # pyproject.toml's py-modules

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/course/)

# Course 004, section 4: "This example launches it as a subprocess, as a host would, and exchanges raw JSON
# lines with it." Verbatim.
COURSE_004_CLIENT = '''import json
import subprocess
import sys

server = subprocess.Popen([sys.executable, "tiny_mcp.py"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}

def send(rid, method, **params):
    request = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": META}}
    server.stdin.write(json.dumps(request) + "\\n")           # one message per line
    server.stdin.flush()
    return json.loads(server.stdout.readline())

r = send(1, "server/discover")["result"]
print("discover  →", r["supportedVersions"], list(r["capabilities"]), r["_meta"])

r = send(2, "tools/list")["result"]
print("tools     →", [t["name"] for t in r["tools"]], f"(cache {r['ttlMs'] // 1000}s, {r['cacheScope']})")
print("            schema of search_docs:", json.dumps(r["tools"][0]["inputSchema"]["properties"]))

r = send(3, "tools/call", name="search_docs", arguments={"query": "deadlock retry", "k": 2})["result"]
print("call      →", "isError", r["isError"], [hit["url"] for hit in r["structuredContent"]])

r = send(4, "tools/call", name="count_lessons", arguments={"course": "postgres"})["result"]
print("bad arg   →", "isError", r["isError"], r["content"][0]["text"][:62], "…")

print("no tool   →", send(5, "tools/call", name="drop_tables", arguments={})["error"])

old = {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"_meta": {
    "io.modelcontextprotocol/protocolVersion": "2025-06-18", "io.modelcontextprotocol/clientCapabilities": {}}}}
server.stdin.write(json.dumps(old) + "\\n"); server.stdin.flush()
print("old version →", json.loads(server.stdout.readline())["error"])

server.stdin.close()                                          # closing stdin ends a stdio server
print("server exited with code", server.wait(timeout=10))
'''

# Course 002, "The Initialization Handshake": the server's construction. The SDK's import line becomes the lab's.
COURSE_002_SERVER = '''from mcp_full import MCPServer as FastMCP  # course 002: from mcp.server.fastmcp import FastMCP

mcp = FastMCP(
    name="policy-docs-server",
    version="1.0.0",
)
# FastMCP negotiates protocolVersion and advertises capabilities
# automatically based on what you register below (tools, resources, prompts).
'''

# Course 002, "The Three MCP Primitives": its decorators, async def tool and resource included. Verbatim.
COURSE_002_PRIMITIVES = '''@mcp.resource("policy://{doc_id}")
async def get_policy_doc(doc_id: str) -> str:
    """Resources are fetched by URI, not "called" like tools."""
    return await fetch_policy_text(doc_id)

@mcp.tool()
async def search_policies(query: str, top_k: int = 5) -> list[dict]:
    """Tools perform an action, here, a semantic search, and return structured results."""
    return await semantic_search(query, top_k)

@mcp.prompt()
def summarize_incident(severity: str) -> str:
    """Prompts are reusable templates the client can request and fill in."""
    return f"Summarize this {severity}-severity incident in three sentences, focusing on root cause and remediation."
'''

# What the course leaves to the reader: the two coroutines its tool and resource await.
COURSE_002_HELPERS = '''
async def fetch_policy_text(doc_id):
    return {"refunds": "Refunds within 30 days."}[doc_id]


async def semantic_search(query, top_k):
    return [{"doc_id": "refunds", "score": 0.9}][:top_k]
'''


# ---- the course's own code runs against the lab ----

def test_course_004s_client_runs_verbatim_against_tiny_mcp():
    # The code of course 004, section 4, launches lessons/tiny_mcp.py and prints what the course describes.
    done = subprocess.run([sys.executable, "-c", COURSE_004_CLIENT], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=LESSONS)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stderr
    assert lines[0] == ("discover  → ['2026-07-28'] ['tools'] {'io.modelcontextprotocol/serverInfo': "
                        "{'name': 'tiny-docs', 'version': '0.1.0'}}")
    assert lines[1] == "tools     → ['search_docs', 'count_lessons'] (cache 300s, public)"
    assert lines[2] == ('            schema of search_docs: {"query": {"type": "string"}, '
                        '"k": {"type": "integer", "default": 3}}')
    assert re.fullmatch(r"call      → isError False \['[0-9a-z_]+\.ipynb#cell-\d+', '[0-9a-z_]+\.ipynb#cell-\d+'\]", lines[3])
    assert lines[4] == "bad arg   → isError True ERROR: unknown course 'postgres': this site has only the cours …"
    assert lines[5] == "no tool   → {'code': -32601, 'message': 'unknown tool: drop_tables'}"
    assert lines[6] == ("old version → {'code': -32022, 'message': 'Unsupported protocol version', "
                        "'data': {'supported': ['2026-07-28'], 'requested': '2025-06-18'}}")
    assert lines[7:] == ["server exited with code 0"]


def test_course_002s_server_and_decorators_run_on_the_lab_async_def_included():
    # Course 002's FastMCP construction (import swapped) and its three decorated functions, as they stand.
    namespace = {}
    exec(COURSE_002_SERVER + COURSE_002_HELPERS + COURSE_002_PRIMITIVES, namespace)
    client = MCPClient(InMemoryTransport(namespace["mcp"]))
    client.connect()
    [tool] = client.list_tools()
    assert tool["inputSchema"] == {"type": "object", "required": ["query"], "properties": {
        "query": {"type": "string"}, "top_k": {"type": "integer", "default": 5}}}
    assert json.loads(client.call_tool("search_policies", {"query": "refunds"})["content"][0]["text"]) == [
        {"doc_id": "refunds", "score": 0.9}]
    assert client.read_resource("policy://refunds")["contents"][0]["text"] == "Refunds within 30 days."
    assert client.get_prompt("summarize_incident", {"severity": "high"})["messages"][0]["content"]["text"] == (
        "Summarize this high-severity incident in three sentences, focusing on root cause and remediation.")
    assert client.server_info == {"name": "policy-docs-server", "version": "1.0.0"}


def test_an_async_tool_runs_where_an_event_loop_is_already_running():
    # As in a notebook, whose thread runs an event loop: the coroutine runs to its end beside it.
    import asyncio
    server = MCPServer("async")

    @server.tool()
    async def double(x: int) -> int:
        """Twice x, after a pause."""
        await asyncio.sleep(0)
        return 2 * x

    async def in_a_loop():
        client = MCPClient(InMemoryTransport(server))
        client.initialize()
        return client.call_tool("double", {"x": 21})
    assert asyncio.run(in_a_loop())["content"] == [{"type": "text", "text": "42"}]


# ---- mistakes that explain themselves ----

def registering(code: str) -> str:
    """What registering the tools in code raises: its type and message ("" if nothing)."""
    server = MCPServer("mistakes")
    try:
        exec(code, {"server": server, "Context": Context})
    except Exception as exc:  # noqa: BLE001 - the point is what it says
        return f"{type(exc).__name__}: {exc}"
    return ""


@pytest.mark.parametrize("mistake, code, said", [
    ("a parameter without a type hint", "@server.tool()\ndef add(x, y: int) -> int:\n    return x + y",
     "TypeError: add's parameter 'x' needs a type hint, such as x: int or x: str (or pass input_schema={...}): the hint says what JSON the client must send"),
    ("a tool name with a space", "server.add_tool('my tool', lambda: 1)",
     "ValueError: 'my tool' is not a tool name: 1 to 128 letters, digits, '_', '-' or '.' (spec 2025-11-25)"),
    ("two tools under one name", "@server.tool()\ndef add(x: int) -> int:\n    return x\n"
                                 "@server.tool(name='add')\ndef plus(x: int) -> int:\n    return x",
     "ValueError: a tool named 'add' is offered already; pass replace=True to replace it"),
    ("two prompts under one name", "server.add_prompt('p', lambda: 'a')\nserver.add_prompt('p', lambda: 'b')",
     "ValueError: a prompt named 'p' is offered already; pass replace=True to replace it"),
    ("two resources at one URI", "server.add_resource('a://b', 'x')\nserver.add_resource('a://b', 'y')",
     "ValueError: a resource named 'a://b' is offered already; pass replace=True to replace it"),
    ("@server.resource without its URI", "@server.resource\ndef readme() -> str:\n    return 'x'",
     "TypeError: a resource needs its URI first, as in @server.resource(\"notes://{name}\"), not <function readme>"),
])
def test_a_registration_mistake_is_refused_with_the_reason(mistake, code, said):
    # At registration, not at call time, and never silently.
    got = registering(code)
    assert (mistake, re.sub(r" at 0x[0-9a-f]+", "", got)) == (mistake, said)


def test_the_decorators_work_without_parentheses_too():
    # @server.tool and @server.prompt register the function below them, as @server.tool() does.
    server = MCPServer("bare")

    @server.tool
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    @server.prompt
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}"

    client = MCPClient(InMemoryTransport(server))
    client.initialize()
    assert callable(add) and client.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"] == "5"
    assert client.get_prompt("greet", {"name": "Ada"})["messages"][0]["content"]["text"] == "Hello, Ada"


def test_a_dict_with_a_stray_type_key_is_data_not_a_content_block():
    # {"type": "user", ...} is what the tool found, not an image: it goes out as text and structuredContent.
    found = {"type": "user", "name": "ada"}
    assert MCPServer("results").tool_result(found) == {"content": [{"type": "text", "text": json.dumps(found)}],
                                          "structuredContent": found}


BUGGY = """import sys
sys.path.insert(0, {root!r})
from mcp_full import MCPServer
from mcp_stdio import serve_stdio

server = MCPServer("buggy")


@server.tool()
def average(numbers: list) -> float:
    \"\"\"The average of some numbers.\"\"\"
    return sum(numbers) / len(numbers)


serve_stdio(server)
"""


def test_a_tools_own_bug_names_its_line_on_stderr_and_never_on_stdout(tmp_path):
    # The client reads the isError text; the server's author reads where it happened, on stderr.
    script = tmp_path / "buggy.py"
    script.write_text(BUGGY.format(root=str(HERE)), encoding="utf-8")
    meta = {mcp_full.PROTOCOL_VERSION_KEY: "2026-07-28", mcp_full.CLIENT_CAPABILITIES_KEY: {}}
    call = mcp_full.request(1, "tools/call", {"name": "average", "arguments": {"numbers": []}, "_meta": meta})
    done = subprocess.run([sys.executable, str(script)], input=json.dumps(call).encode() + b"\n",
                          capture_output=True, timeout=TIMEOUT)
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["result"]["content"] == [{"type": "text", "text": "ERROR: division by zero"}]
    assert done.stderr.decode().splitlines() == [
        "mcp_min: the tool average failed:", '  File "buggy.py", line 12, in average',
        "    return sum(numbers) / len(numbers)", "ZeroDivisionError: division by zero"]


@pytest.mark.parametrize("kind", ["memory", "stdio", "http"])
def test_a_client_used_before_it_connects_says_so_on_every_transport(kind):
    # The same clear error, before anything is sent, whatever the transport.
    if kind == "http":
        with http_endpoint() as port:
            client = MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp"))
            with pytest.raises(RuntimeError) as early:
                client.call_tool("add", {"x": 1, "y": 2})
    else:
        transport = (InMemoryTransport(MCPServer("x")) if kind == "memory" else mcp_stdio.StdioTransport(DEMO))
        client = MCPClient(transport)
        with pytest.raises(RuntimeError) as early:
            client.call_tool("add", {"x": 1, "y": 2})
        transport.close()
    assert str(early.value) == "connect first: client.connect() (or client.initialize()) before tools/call"


class Silent(mcp_full.Transport):
    """A transport to a server that never answers: it notes how long each request was given."""

    def __init__(self):
        super().__init__()
        self.timeout, self.given = 9.0, []

    def send(self, message):
        self.given.append((message["method"], self.timeout))
        raise TimeoutError(f"no response to {message['method']} (id {message['id']}) in {self.timeout} s")


def test_connect_to_a_silent_server_waits_one_timeout_in_all_and_says_what_it_waited_for():
    # A third for server/discover, the rest for initialize: silence costs the timeout once, not twice.
    transport = Silent()
    with pytest.raises(TimeoutError) as silent:
        MCPClient(transport).connect()
    assert transport.given == [("server/discover", 3.0), ("initialize", 6.0)]
    assert str(silent.value) == "no response to initialize (id 2) in 6.0 s"
    assert transport.timeout == 9.0


def test_server_demo_in_a_terminal_says_what_it_is():
    # Run by hand (stdin a terminal), it says on stderr that it speaks JSON-RPC on stdin, and how to try it.
    import pty
    leader, follower = pty.openpty()
    process = subprocess.Popen(DEMO, stdin=follower, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=HERE)
    os.close(follower)
    try:
        first = process.stderr.readline().decode()
    finally:
        os.close(leader)
        process.kill()
        process.wait()
        process.stdout.close()
        process.stderr.close()
    assert first == "server_demo: an MCP server; it speaks JSON-RPC, one message a line, on stdin and stdout.\n"


DEMO_DEFAULTS = {"--allow": None, "--http": False, "--port": "8000", "--state-key": None}


@pytest.mark.parametrize("argv, given", [
    ([], DEMO_DEFAULTS),
    (["--http", "--port", "0"], {**DEMO_DEFAULTS, "--http": True, "--port": "0"}),
    (["--port", "8001", "--allow", "add,weather"], {**DEMO_DEFAULTS, "--port": "8001", "--allow": "add,weather"}),
    (["--state-key", "k", "--http"], {**DEMO_DEFAULTS, "--state-key": "k", "--http": True}),
])
def test_server_demo_reads_its_four_flags(argv, given):
    import server_demo
    assert server_demo.options(argv) == given


@pytest.mark.parametrize("argv, said", [
    (["--htp"], "server_demo: --htp is not an option here, or it lacks its value"),
    (["--port"], "server_demo: --port is not an option here, or it lacks its value"),
    (["--port=8001"], "server_demo: --port=8001 is not an option here, or it lacks its value"),
    (["--port", "eighty"], "server_demo: --port takes a number, not 'eighty'"),
])
def test_server_demo_refuses_a_mistaken_flag_in_one_line_and_status_2(argv, said):
    done = subprocess.run([*DEMO, *argv], capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == said + "; python server_demo.py --help lists the flags\n"


def test_server_demo_help_prints_its_usage_and_exits_0():
    done = subprocess.run([*DEMO, "--help"], capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)
    assert (done.returncode, done.stderr) == (0, "")
    assert "usage: python server_demo.py [--allow TOOL,...] [--http [--port PORT]] [--state-key KEY]" in done.stdout
    assert "--state-key KEY" in done.stdout


OLD_PYTHONS = sorted(pathlib.Path("/root/.pyenv/versions").glob("3.[6-9].*/bin/python"))


@pytest.mark.skipif(not OLD_PYTHONS, reason="no Python older than 3.10 on this machine")
@pytest.mark.parametrize("python", OLD_PYTHONS, ids=lambda path: path.parent.parent.name)
def test_a_python_older_than_3_10_gets_one_clear_line(python):
    # The README's minimum is 3.10: an older Python says so, not a TypeError from deep inside.
    done = subprocess.run([str(python), "client_demo.py"], capture_output=True, text=True, timeout=TIMEOUT, cwd=HERE)
    version = python.parent.parent.name
    assert (done.returncode, done.stderr) == (1, f"mcp_min needs Python 3.10 or newer; this is Python {version}\n")


# ---- lessons that never trip ----

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_lesson_runs_from_the_projects_folder_too(path):
    # A kernel started at the project's root (not in lessons/) runs every notebook all the same.
    outputs = build.run_notebook(path, cwd=HERE)
    assert len(outputs) == len(build.code_cells(notebook(path)))


@pytest.mark.parametrize("path", [nb for nb in NOTEBOOKS if exercise_cells(notebook(nb))], ids=lambda p: p.name)
def test_the_classroom_order_solves_every_exercise_every_time(path):
    # Run All first, then each exercise's solution and its check, in order, each twice: always "solved".
    nb = notebook(path)
    cells = build.code_cells(nb)
    afterwards, expected = [], []
    for exercise in exercise_cells(nb):
        index = next(i for i, cell in enumerate(cells) if cell["metadata"].get("exercise") == exercise)
        solution = (LESSONS / "solutions" / f"{exercise}.py").read_text(encoding="utf-8")
        afterwards += [solution, build.source_of(cells[index + 1])] * 2
        expected += [f"exercise {exercise}: solved\n"] * 2
    outputs = build.run_notebook(path, afterwards=tuple(afterwards))[len(cells):]
    checks = [stdout_of([output]).splitlines(keepends=True)[-1] for output in outputs[1::2]]
    assert checks == expected


# ---- your own server, anywhere ----

def readme_block(title: str) -> str:
    """The first python block after a heading of docs/hosts.md (where the README sends a reader with tools of their own)."""
    text = (HERE / "docs" / "hosts.md").read_text(encoding="utf-8")
    section = text[text.index(f"## {title}"):]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_readmes_own_server_runs_verbatim_from_another_folder(tmp_path):
    # Saved as the README says, in a folder of one's own, it serves over stdio (mcp_min found as installed).
    script = tmp_path / "my_server.py"
    script.write_text(readme_block("Serving your own tools"), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(HERE)}  # what pip install -e . gives
    client = MCPClient(mcp_stdio.StdioTransport([sys.executable, str(script)], env=env, timeout=TIMEOUT))
    client.ping()  # the server is up and reading: connect()'s probe (a third of TIMEOUT) times its answer alone
    client.connect()
    assert [tool["name"] for tool in client.list_tools()] == ["add", "count"]
    assert client.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"] == "5"
    assert client.read_resource("policy://refunds")["contents"][0]["text"] == "30 days"
    assert client.transport.close() == 0


@pytest.mark.skipif(os.environ.get("MCP_MIN_PIP_TEST") != "1", reason="installs into a new venv: set MCP_MIN_PIP_TEST=1 (.ci/run does)")
@pytest.mark.parametrize("editable", [True, False], ids=["pip install -e .", "pip install ."])
def test_pip_install_makes_mcp_min_importable_from_any_folder(tmp_path, editable):
    # A venv of its own, the project installed into it, then imported from an unrelated folder. pip builds in
    # the folder it installs from (build/, mcp_min.egg-info/): a copy of the project's packaging, not the clone.
    project = tmp_path / "project"
    project.mkdir()
    for name in ("pyproject.toml", *(module + ".py" for module in MODULES)):
        (project / name).write_bytes((HERE / name).read_bytes())
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run(pip + (["-e", str(project)] if editable else [str(project)]), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", f"import {', '.join(MODULES)}; print(mcp_full.MCPServer.__name__)"],
                           capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert probe.stdout == "MCPServer\n"
