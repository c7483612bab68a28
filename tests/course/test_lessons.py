"""The lessons: every notebook runs, is valid nbformat 4, stores current outputs, and its exercises are solvable.

Course 000's lessons (LAB) open mcp_min.py alone (and diagram.py, which draws with it), and their naive versions
fail the way the course says.
"""

import functools
import importlib
import importlib.util
import inspect
import json
import pathlib
import re
import subprocess
import sys
import threading

import pytest

from notebooks import LESSONS, NOTEBOOKS, build, exercise_cells, notebook, stdout_of

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/course/)
SOLUTIONS = sorted((LESSONS / "solutions").glob("*.py"))
SECTIONED = ["mcp_min.py", "mcp_full.py", "mcp_stdio.py", "mcp_http.py", "tap.py", "mcp_auth.py",
             "mcp_oauth.py"]  # the numbered sections, 1-13
BANNERS = {(number, title): name for name in SECTIONED for number, title in
           re.findall(r"^# ---- (\d+)\. (.+?) ----$", (HERE / name).read_text(encoding="utf-8"), re.M)}
PROJECT = ["mcp_min", "mcp_full", "mcp_stdio", "mcp_http", "tap", "board", "report_card", "diagram", "server_demo", "client_demo",
           "mcp_auth", "mcp_oauth"]
FIRST_CELL = "import sys, pathlib  # the project's folder (with mcp_min.py): where the notebook runs, or above it"
LAB = ["01", "02", "03", "04", "07"]  # course 000's seams: these lessons open mcp_min.py alone (07 until its last part)
DRAWN_WITH_THE_LAB = {"mcp_min", "diagram"}  # what a lab lesson imports: the lab, and the drawing of its sessions
BEYOND = "## Beyond course 000"  # the heading of a lab lesson's last part, where it moves on to mcp_full.py


@functools.cache
def fresh_run(name: str) -> list:
    """A notebook's outputs from a fresh run (each notebook runs once per test session)."""
    return build.run_notebook(LESSONS / name)


def test_every_lesson_is_here_and_each_is_in_the_readme_tables():
    # The twelve lessons, no fewer (the glob would let the other tests pass with half of them missing).
    names = [path.name for path in NOTEBOOKS]
    assert [name[:3] for name in names] == [f"{n:02}_" for n in range(1, 13)]
    for readme in (HERE / "README.md", LESSONS / "README.md"):
        assert re.findall(r"\[(\d\d_\w+\.ipynb)\]", readme.read_text(encoding="utf-8")) == names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path):
    # Any exception in any cell fails the run (build.CellError names the cell).
    assert len(fresh_run(path.name)) == len(build.code_cells(notebook(path)))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_valid_nbformat_4(path):
    # The keys Jupyter, VS Code and GitHub's viewer need, on the notebook and on every cell.
    nb = notebook(path)
    assert nb["nbformat"] == 4 and isinstance(nb["nbformat_minor"], int)
    assert {"name", "display_name"} <= set(nb["metadata"]["kernelspec"])
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code", "raw")
        assert isinstance(cell["source"], (str, list)) and isinstance(cell["metadata"], dict)
        if nb["nbformat_minor"] >= 5:
            assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", cell["id"])
        if cell["cell_type"] == "code":
            assert isinstance(cell["outputs"], list) and "execution_count" in cell
    ids = [cell["id"] for cell in nb["cells"] if "id" in cell]
    assert len(ids) == len(set(ids))


def prose_of(nb: dict) -> str:
    """A notebook's markdown, as one string."""
    return "\n".join(build.source_of(c) for c in nb["cells"] if c["cell_type"] == "markdown")


def lab_part(nb: dict) -> list:
    """A lab lesson's cells before its BEYOND heading (all of them, if it has none)."""
    cells = nb["cells"]
    marks = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and build.source_of(c).startswith(BEYOND)]
    return cells[:marks[0]] if marks else cells


def project_imports(code: str) -> set:
    """The project's modules a cell's code imports."""
    found = set()
    for line in code.splitlines():
        match = re.match(r"\s*(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", line)
        if match:
            names = [match.group(1)] if match.group(1) else [n.strip().split(" ")[0] for n in match.group(2).split(",")]
            found |= {name.split(".")[0] for name in names if name.split(".")[0] in PROJECT}
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_short_imports_the_project_and_names_its_sections(path):
    # 10-25 cells; the project root on sys.path first; the project imported, never copied; course and module cited.
    nb = notebook(path)
    code = [build.source_of(c) for c in build.code_cells(nb)]
    prose = prose_of(nb)
    assert 10 <= len(nb["cells"]) <= 25
    assert code[0].startswith(FIRST_CELL)
    imported = set().union(*(project_imports(c) for c in code))
    assert imported & {"mcp_min", "mcp_full", "board"}, "the notebook imports nothing of the project"
    assert not any(re.search(r"^class (MCPServer|MCPClient)\b", c, re.M) for c in code)
    assert re.search(r"\b00[024]\b", prose), "no course text cited"
    cited = re.findall(r"section `(\d+)\. ([^`]+)`", prose)
    assert cited, "no module section cited"
    for number, title in cited:
        assert (number, title) in BANNERS, f"section `{number}. {title}` is no module's banner"
    for name, number, title in re.findall(r"`(\w+\.py)`, section `(\d+)\. ([^`]+)`", prose):
        assert BANNERS[number, title] == name, f"section {number} is in {BANNERS[number, title]}, not {name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_lab_lesson_imports_mcp_min_alone_and_the_others_the_full_layer(path):
    # Course 000's lessons import mcp_min, and diagram.py to draw, and nothing else of the project until a "Beyond
    # course 000" part; the others import the full layer (or the board), never the lab's module alone.
    nb = notebook(path)
    if path.name[:2] in LAB:
        part = lab_part(nb)
        code = [build.source_of(c) for c in part if c["cell_type"] == "code"]
        assert len(code) >= 5
        assert [project_imports(c) for c in code][0] == DRAWN_WITH_THE_LAB
        assert set().union(*(project_imports(c) for c in code)) == DRAWN_WITH_THE_LAB
        rest = [build.source_of(c) for c in nb["cells"][len(part):] if c["cell_type"] == "code"]
        assert not rest or "mcp_full" in project_imports(rest[0]), "the last part starts by importing mcp_full"
    else:
        assert BEYOND not in prose_of(nb)
        code = [build.source_of(c) for c in build.code_cells(nb)]
        assert project_imports(code[0]) & {"mcp_full", "board"}


LOADED = ("import sys, pathlib\n"
          "print(sorted(name for name, module in sys.modules.items() if getattr(module, '__file__', None)"
          " and pathlib.Path(module.__file__).resolve().parent in (ROOT, ROOT / 'lessons')))")


@pytest.mark.parametrize("number", LAB)
def test_a_lab_lesson_runs_on_mcp_min_alone_its_checks_and_solutions_too(number, tmp_path):
    # The lab part, each exercise in it solved and checked, loads no module of the project but mcp_min (and
    # lessons/checks.py, and diagram.py, which draws with mcp_min alone): not mcp_full, server_demo.py or a check's.
    [path] = [nb for nb in NOTEBOOKS if nb.name.startswith(number + "_")]
    nb = notebook(path)
    part = {**nb, "cells": lab_part(nb)}
    (tmp_path / path.name).write_text(json.dumps(part), encoding="utf-8")
    exercises = exercise_cells(part)
    solved = {exercise: (LESSONS / "solutions" / f"{exercise}.py").read_text(encoding="utf-8") for exercise in exercises}
    outputs = build.run_notebook(tmp_path / path.name, replace=solved, afterwards=(LOADED,))
    printed = stdout_of(outputs)
    for exercise in exercises:
        assert f"exercise {exercise}: solved" in printed
    loaded = eval(stdout_of(outputs[-1:]))
    assert "mcp_min" in loaded and set(loaded) <= DRAWN_WITH_THE_LAB | {"lessons.checks"}, loaded


def cited_modules() -> list:
    """The project's modules whose names a lesson may cite."""
    return [importlib.import_module(name) for name in ("mcp_min", "mcp_full", "mcp_stdio", "mcp_http", "tap", "board",
                                                              "mcp_auth", "mcp_oauth")]


def parameters(cls: type) -> dict:
    """The parameters a class is called with (none known for a built-in's subclass, such as an exception)."""
    try:
        return inspect.signature(cls).parameters
    except ValueError:
        return {}


def defined(name: str, modules: list) -> bool:
    """Whether name (a function, class, constant, method, attribute or a class's parameter; "Class.attr" too) is defined in a module."""
    first, _, rest = name.partition(".")
    holders = [getattr(m, first) for m in modules if hasattr(m, first)]
    if not holders and not rest:
        classes = [v for m in modules for v in vars(m).values() if isinstance(v, type)]
        assigned = re.compile(rf"self\.{re.escape(first)}\b[^=\n]*=")  # an attribute an instance gets in __init__
        return any(hasattr(c, first) or first in parameters(c) for c in classes) or any(
            assigned.search(pathlib.Path(m.__file__).read_text(encoding="utf-8")) for m in modules)
    return bool(holders) and (not rest or any(hasattr(h, rest) for h in holders))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_name_a_lessons_module_line_cites_is_in_the_code(path):
    # The "- Module:" line names functions, classes and methods: each one exists (a rename leaves none stale).
    first = build.source_of(notebook(path)["cells"][0])
    line = first[first.index("- Module:"):]
    names = re.findall(r"`@?(?:server\.)?([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)(?:\([^`]*\))?`", line)
    names = [name for name in names if not name.endswith("py") and name not in ("mcp_min", "mcp_full")]
    assert names
    modules = cited_modules()
    missing = [name for name in names if not defined(name, modules)]
    assert not missing, f"{path.name} cites names the code does not have: {missing}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_stored_outputs_are_current(path):
    # What the notebook shows is what the code prints now, counted 1..n (python lessons/build.py).
    nb = notebook(path)
    for count, (cell, outputs) in enumerate(zip(build.code_cells(nb), fresh_run(path.name)), 1):
        assert cell["execution_count"] == count, f"{path.name}: run python lessons/build.py"
        assert build.plain(cell["outputs"]) == build.plain(outputs), f"{path.name}: run python lessons/build.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_exercise_has_a_check_and_a_solution_and_starts_unsolved(path):
    # One or two exercises; a check cell follows each; the stub is not a solution.
    nb = notebook(path)
    exercises = exercise_cells(nb)
    assert 1 <= len(exercises) <= 2
    printed = stdout_of(fresh_run(path.name))
    cells = build.code_cells(nb)
    for exercise in exercises:
        assert re.fullmatch(path.name[:2] + r"-[12]", exercise)
        index = next(i for i, c in enumerate(cells) if c["metadata"].get("exercise") == exercise)
        assert "exercise" in cells[index]["metadata"].get("tags", [])
        assert build.source_of(cells[index + 1]) == f'from lessons.checks import check\ncheck("{exercise}", globals())'
        assert (LESSONS / "solutions" / f"{exercise}.py").exists()
        assert f"exercise {exercise}: not solved yet (" in printed
        assert f"exercise {exercise}: solved" not in printed
        assert [o for o in fresh_run(path.name)[index + 1] if o.get("name") == "stderr"] == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_exercise_comes_with_a_hint(path):
    # One style in every lesson: a bold "Exercise NN-N: title." paragraph that ends in a hint.
    exercises = exercise_cells(notebook(path))
    prose = [build.source_of(c) for c in notebook(path)["cells"] if c["cell_type"] == "markdown"]
    for exercise in exercises:
        [text] = [p for p in prose if p.startswith(f"**Exercise {exercise}: ")]
        assert "Hint:" in text, exercise


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_lesson_ends_with_a_self_check(path):
    # The last cell asks the questions a student should now be able to answer: at least three, numbered.
    last = build.source_of(notebook(path)["cells"][-1])
    assert last.startswith("**Self-check.** (1) ") and "(3) " in last


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_solves_its_exercise(path):
    # The solution's whole text replaces the exercise cell, and the check then reports it solved.
    exercise = path.stem
    [lesson] = [nb for nb in NOTEBOOKS if nb.name.startswith(exercise[:2] + "_")]
    assert exercise in exercise_cells(notebook(lesson))
    outputs = build.run_notebook(lesson, replace={exercise: path.read_text(encoding="utf-8")})
    cells = build.code_cells(notebook(lesson))
    index = next(i for i, c in enumerate(cells) if c["metadata"].get("exercise") == exercise)
    check_cell = outputs[index + 1]  # its check: "solved" last, and no traceback or report on stderr before it
    assert stdout_of([check_cell]).endswith(f"exercise {exercise}: solved\n")
    assert [o for o in check_cell if o.get("name") == "stderr"] == []


# ---- the naive versions fail as course 000 says ----

# lesson: (a code cell's marker, what its fresh output must show, a probe run after the notebook, what the probe prints)
NAIVE = {
    "02_errors.ipynb": (  # "no try at all": the serving loop dies of the resource's own bug, "total: " + 42
        "def naive_serve", """the loop crashed: TypeError('can only concatenate str (not "int") to str')""",
        "import traceback\nprint(type(crash).__name__, crash, traceback.extract_tb(crash.__traceback__)[-1].name)",
        'TypeError can only concatenate str (not "int") to str report\n'),
    "04_tools.ipynb": (  # "a tool exception escaping": the division by zero itself reaches handle, as -32603
        "class NaiveServer", """"message": "internal error: ZeroDivisionError('division by zero')\"""",
        "import traceback\n"
        "try:\n"
        "    make_server(NaiveServer)._call_tool({'name': 'divide', 'arguments': {'a': 1, 'b': 0}})\n"
        "except Exception as escaped:\n"
        "    print(type(escaped).__name__, escaped, traceback.extract_tb(escaped.__traceback__)[-1].name)",
        "ZeroDivisionError division by zero divide\n"),
}


@pytest.mark.parametrize("name", NAIVE)
def test_a_naive_version_fails_of_the_bug_the_course_names(name):
    # The exception is the one the text describes (type, message, and the function it came from), not a
    # mismatch with the lab's API; and the notebook, run now, prints it.
    marker, shown, probe, probed = NAIVE[name]
    cells = build.code_cells(notebook(LESSONS / name))
    [index] = [i for i, c in enumerate(cells) if marker in build.source_of(c)]
    outputs = build.run_notebook(LESSONS / name, afterwards=(probe,))
    assert shown in stdout_of([outputs[index]])
    assert stdout_of(outputs[-1:]) == probed


# ---- naive answers end with a message, never a hang, whatever the other exercises changed ----

def check_line(outputs: list, exercise: str) -> str:
    """The line an exercise's check printed in a run's outputs."""
    return next(line for line in stdout_of(outputs).splitlines() if line.startswith(f"exercise {exercise}: "))


# exercise: (an answer the text invites, the check's line for it)
NAIVE_ANSWERS = {
    "02-1": ("def call_with_retry(client, method, params=None, attempts=3):\n"
             "    while True:  # naive: retries whatever fails, forever\n"
             "        try:\n"
             "            return client.request(method, params)\n"
             "        except Exception:\n"
             "            continue\n",
             "exercise 02-1: not solved yet (tools/delete : more than 20 requests for attempts=3; stop once attempts "
             "tries are spent)"),
    "03-1": ("class SpecGateServer(mcp_min.MCPServer):\n"
             "    def handle(self, message):  # naive: the gate opened by hand, in the entry point\n"
             "        if message.get('method') == 'initialize':\n"
             "            self._initialized = True\n"
             "        return super().handle(message)\n",
             "exercise 03-1: not solved yet (SpecGateServer overrides handle: leave handle alone, and extend the "
             "method that answers initialize)"),
    "09-1": ("import re\n\n\n"
             "def pick_date(ctx: Context) -> str:\n"
             "    while True:  # naive: the same key in every round\n"
             "        answer = ctx.elicit('date', 'Which day (YYYY-MM-DD)?', {'type': 'object'})\n"
             "        if answer.get('action') != 'accept':\n"
             "            return 'Nothing booked.'\n"
             "        if re.fullmatch(r'\\d{4}-\\d{2}-\\d{2}', answer['content']['date']):\n"
             "            return 'Booked ' + answer['content']['date']\n",
             "exercise 09-1: not solved yet (after 'tomorrow', '24/12', '2026-12-24' the tool said \"ERROR: the question "
             "'date' was asked already while serving this request, and gets the same answer: to ask again, use a new "
             "key, such as 'date-2'\")"),
}


@pytest.mark.parametrize("exercise", NAIVE_ANSWERS)
def test_a_naive_answer_ends_with_a_message_that_names_the_fix(exercise):
    # A loop that would never end, or a method the text says to leave alone: the check says so, and returns.
    answer, said = NAIVE_ANSWERS[exercise]
    [lesson] = [nb for nb in NOTEBOOKS if nb.name.startswith(exercise[:2] + "_")]
    assert check_line(build.run_notebook(lesson, replace={exercise: answer}), exercise) == said


def test_exercise_04_2_is_checked_the_same_whether_04_1_was_solved_or_not():
    # 04-1 changes spec_lab, a copy of the lab: mcp_min, on which 04-2 builds, keeps the course's codes.
    naive = ("class SelfCorrectingServer(mcp_min.MCPServer):\n"
             "    def _call_tool(self, params):\n"
             "        try:\n"
             "            return super()._call_tool(params)\n"
             "        except mcp_min.RPCError as exc:\n"
             "            if exc.code != mcp_min.INVALID_PARAMS or 'name' not in params:\n"
             "                raise\n"
             "            return {'content': [{'type': 'text', 'text': exc.message}], 'isError': True}\n")
    solved = (LESSONS / "solutions" / "04-1.py").read_text(encoding="utf-8")
    lesson = LESSONS / "04_tools.ipynb"
    alone = check_line(build.run_notebook(lesson, replace={"04-2": naive}), "04-2")
    after = check_line(build.run_notebook(lesson, replace={"04-1": solved, "04-2": naive}), "04-2")
    assert alone == after and alone.startswith("exercise 04-2: not solved yet (")


def gate_opens_at_the_initialize_response(send) -> list:
    """What a server answered, through send, to: initialize, tools/list before initialized, initialized, tools/list."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    replies = [send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}),
               send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
               send({"jsonrpc": "2.0", "method": "notifications/initialized"}),
               send({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})]
    return [None if reply is None else sorted(set(reply) & {"result", "error"}) for reply in replies]


def spec_gate_server(layer: str):
    """Solution 03-1's class, on the lab's MCPServer or on the full layer's (the lesson names its base mcp_min.MCPServer)."""
    namespace = {"mcp_min": importlib.import_module(layer)}
    exec((LESSONS / "solutions" / "03-1.py").read_text(encoding="utf-8"), namespace)
    return namespace["SpecGateServer"]


@pytest.mark.parametrize("layer", ["mcp_min", "mcp_full"])
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
def test_the_spec_gate_solution_serves_on_every_transport(layer, transport, tmp_path):
    # Solution 03-1 leaves handle alone, so it serves in memory, over stdio and over HTTP (which hands the full
    # layer's handle a stream), on either layer: tools/list works between the initialize response and initialized.
    import mcp_min
    SpecGateServer = spec_gate_server(layer)
    if transport == "memory":
        replies = gate_opens_at_the_initialize_response(mcp_min.InMemoryTransport(SpecGateServer("gate")).send)
    elif transport == "stdio":
        import mcp_stdio
        script = tmp_path / "gate.py"
        script.write_text(f"import sys\nsys.path.insert(0, {str(HERE)!r})\nimport {layer} as mcp_min\nimport mcp_stdio\n"
                          + (LESSONS / "solutions" / "03-1.py").read_text(encoding="utf-8")
                          + "\nmcp_stdio.serve_stdio(SpecGateServer('gate'))\n", encoding="utf-8")
        child = mcp_stdio.StdioTransport([sys.executable, str(script)], timeout=30)
        try:
            replies = gate_opens_at_the_initialize_response(child.send)
        finally:
            assert child.close() == 0
    else:
        import mcp_http
        httpd = mcp_http.http_server(SpecGateServer("gate") if layer == "mcp_full" else lambda: SpecGateServer("gate"))
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        try:
            client = mcp_http.HttpTransport(f"http://127.0.0.1:{httpd.server_address[1]}/mcp", timeout=30)
            replies = gate_opens_at_the_initialize_response(client.send)
            client.close()
        finally:
            httpd.shutdown()
            httpd.server_close()
    assert replies == [["result"], ["result"], None, ["result"]]


def test_the_sdk_check_says_when_it_compares_with_a_recorded_answer(monkeypatch, capsys):
    # Without the official SDK, exercise 11-2's check cannot watch it: it says that it compares the predictions
    # with what mcp 2.3.0 was seen to do, and a wrong prediction is still wrong.
    import importlib.metadata
    from lessons import checks

    def absent(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", absent)
    ns = {"DEMO": [], "ROOT": HERE, "PREDICTION": dict(checks.SEEN_WITH_MCP_2_3_0)}
    checks.check("11-2", ns)
    said = capsys.readouterr().out.splitlines()
    assert said[-1] == "exercise 11-2: solved"
    assert "not installed here" in said[0] and "mcp 2.3.0 was seen to do" in said[0]
    checks.check("11-2", {**ns, "PREDICTION": {"tool-error": "returns", "stray-line": "returns"}})
    assert capsys.readouterr().out.splitlines()[-1] == "exercise 11-2: not solved yet (under --fault tool-error the SDK's call_tool raises)"


def test_lessons_readme_lists_every_lesson():
    # One line a lesson, naming its notebook.
    text = (LESSONS / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        assert len([line for line in text.splitlines() if path.name in line]) == 1, path.name


def test_readme_diagram_is_current():
    # README.md's Mermaid block is drawn from a real run of the demo (python diagram.py --readme).
    result = subprocess.run([sys.executable, str(HERE / "diagram.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_recording_draws_each_shape():
    # Requests and responses are solid arrows, notifications dashed; labels carry no Mermaid syntax.
    from diagram import Recording
    rec = Recording(echo=False)
    rec("→", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}})
    rec("←", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    rec("←", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "a; b # c\nd"}})
    rec("←", {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": True}})
    assert rec.mermaid().splitlines()[3:] == [
        "    Client->>Server: tools/call add [1]",
        "    Server--)Client: notifications/tools/list_changed",
        "    Server->>Client: -32600 a b c d [1]",
        "    Server->>Client: result isError [1]",
    ]
    assert rec._repr_markdown_().startswith("```mermaid\nsequenceDiagram\n")
    rec.clear()
    assert rec.messages == []


# ---- in a real Jupyter kernel, where students run them ----

def jupyter_kernel(tmp_path, monkeypatch) -> str:
    """The name of a kernel that runs this Python (with or without the official SDK, as this Python has it); skip
    where nbclient or ipykernel is absent (pytest alone runs every other test; .ci/run installs them)."""
    try:
        import ipykernel  # noqa: F401 (the kernel)
        import nbclient  # noqa: F401 (what runs the notebook in it)
    except ImportError:
        pytest.skip("no real kernel here: python -m pip install nbclient ipykernel")
    spec = tmp_path / "kernels" / "lab-python"  # this very Python, whatever `python` on PATH is
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "this Python", "language": "python"}), encoding="utf-8")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return "lab-python"


def kernel_stdout(cell) -> str:
    """What a cell run by nbclient printed."""
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_notebook_and_its_solutions_run_in_a_real_kernel(path, tmp_path, monkeypatch):
    # As a student runs it: Run All in a kernel (whose own event loop runs in the cells' thread), each exercise's
    # check saying "not solved yet"; then each exercise's solution run in a cell after the rest, and its check
    # again, in the same kernel: each solved, in order, whatever the earlier exercises changed.
    kernel = jupyter_kernel(tmp_path, monkeypatch)  # (or skip)
    import nbclient
    import nbformat
    nb = nbformat.read(str(path), as_version=4)
    exercises = exercise_cells(notebook(path))
    for exercise in exercises:
        nb.cells += [nbformat.v4.new_code_cell((LESSONS / "solutions" / f"{exercise}.py").read_text(encoding="utf-8")),
                     nbformat.v4.new_code_cell(f'from lessons.checks import check\ncheck("{exercise}", globals())')]
    nbclient.NotebookClient(nb, timeout=300, kernel_name=kernel, resources={"metadata": {"path": str(LESSONS)}}).execute()
    said = [kernel_stdout(cell) for cell in nb.cells if cell.cell_type == "code" and "check(" in cell.source]
    assert [line.splitlines()[-1].split(": ")[0] for line in said] == [f"exercise {e}" for e in exercises * 2]
    assert all("not solved yet (" in line for line in said[:len(exercises)]), said
    assert [line.splitlines()[-1] for line in said[len(exercises):]] == [f"exercise {e}: solved" for e in exercises]
