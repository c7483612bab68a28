"""The lessons: every notebook runs, is valid nbformat 4, stores current outputs, and its exercises are solvable."""

import functools
import importlib.util
import json
import pathlib
import re
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in maintainers/)
LESSONS = HERE / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("[0-9]*.ipynb"))
SOLUTIONS = sorted((LESSONS / "solutions").glob("*.py"))
BANNERS = re.findall(r"^# ---- (\d+)\. (.+?) ----$", (HERE / "mcp_min.py").read_text(encoding="utf-8"), re.M)
FIRST_CELL = "import sys, pathlib  # the project's folder (with mcp_min.py): where the notebook runs, or above it"


def load_build():
    """lessons/build.py as a module."""
    spec = importlib.util.spec_from_file_location("lessons_build", LESSONS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = load_build()


@functools.cache
def fresh_run(name: str) -> list:
    """A notebook's outputs from a fresh run (each notebook runs once per test session)."""
    return build.run_notebook(LESSONS / name)


def stdout_of(outputs: list) -> str:
    """Everything the code cells printed, as one string."""
    return "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                   for cell in outputs for o in cell if o.get("name") == "stdout")


def notebook(path) -> dict:
    """A notebook's JSON."""
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def exercise_cells(nb: dict) -> list:
    """The exercise ids of a notebook's exercise cells, in order."""
    return [c["metadata"]["exercise"] for c in nb["cells"] if "exercise" in c.get("metadata", {})]


def test_every_lesson_is_here_and_each_is_in_the_readme_tables():
    # The eleven lessons, no fewer (the glob would let the other tests pass with half of them missing).
    names = [path.name for path in NOTEBOOKS]
    assert [name[:3] for name in names] == [f"{n:02}_" for n in range(1, 12)]
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_short_imports_mcp_min_and_names_its_sections(path):
    # 10-25 cells; the project root on sys.path first; mcp_min imported, never copied; course and module cited.
    nb = notebook(path)
    code = [build.source_of(c) for c in build.code_cells(nb)]
    prose = "\n".join(build.source_of(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    assert 10 <= len(nb["cells"]) <= 25
    assert code[0].startswith(FIRST_CELL)
    assert any(re.search(r"^(import mcp_min|from mcp_min import)", c, re.M) for c in code)
    assert not any(re.search(r"^class (MCPServer|MCPClient)\b", c, re.M) for c in code)
    assert re.search(r"\b00[024]\b", prose), "no course text cited"
    assert any(f"{number}. {title}" in prose for number, title in BANNERS), "no mcp_min.py section cited"


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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_each_exercise_comes_with_a_hint(path):
    # One style in every lesson: a bold "Exercise NN-N: title." paragraph that ends in a hint.
    exercises = exercise_cells(notebook(path))
    prose = [build.source_of(c) for c in notebook(path)["cells"] if c["cell_type"] == "markdown"]
    for exercise in exercises:
        [text] = [p for p in prose if p.startswith(f"**Exercise {exercise}: ")]
        assert "Hint:" in text, exercise


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.name)
def test_solution_solves_its_exercise(path):
    # The solution's whole text replaces the exercise cell, and the check then reports it solved.
    exercise = path.stem
    [lesson] = [nb for nb in NOTEBOOKS if nb.name.startswith(exercise[:2] + "_")]
    assert exercise in exercise_cells(notebook(lesson))
    outputs = build.run_notebook(lesson, replace={exercise: path.read_text(encoding="utf-8")})
    assert f"exercise {exercise}: solved\n" in stdout_of(outputs)


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

