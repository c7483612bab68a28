"""Run the lesson notebooks top to bottom and store their outputs: the standard library only.

    python lessons/build.py            # re-execute every notebook, rewrite outputs and counts 1..n
    python lessons/build.py --check    # exit 1, naming each notebook whose stored outputs are stale
    python lessons/build.py lessons/01_messages.ipynb   # only the notebooks named (also with --check)
"""

import ast
import contextlib
import io
import json
import os
import pathlib
import pprint
import sys
import traceback

LESSONS = pathlib.Path(__file__).resolve().parent
ROOT = LESSONS.parent


class CellError(Exception):
    """A code cell raised: the notebook, the cell and the traceback."""


def notebooks() -> list:
    """Every lesson notebook, in lesson order."""
    return sorted(LESSONS.glob("[0-9]*.ipynb"))


def source_of(cell: dict) -> str:
    """A cell's source as one string (nbformat allows a string or a list of lines)."""
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def lines(text: str) -> list:
    """text as nbformat stores it: a list of lines, each keeping its newline."""
    return text.splitlines(keepends=True)


def code_cells(notebook: dict) -> list:
    """The notebook's code cells, in order."""
    return [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]


def run_cell(source: str, namespace: dict, name: str, count: int) -> list:
    """Run one cell; its outputs: stdout and stderr streams, then the last expression's value."""
    tree = ast.parse(source, name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)  # a trailing ";" hides the value, as in Jupyter
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        exec(compile(tree, name, "exec"), namespace)
        value = eval(compile(last, name, "eval"), namespace) if last else None
    outputs = [{"name": stream, "output_type": "stream", "text": lines(text.getvalue())}
               for stream, text in (("stdout", out), ("stderr", err)) if text.getvalue()]
    if value is not None:
        data = {"text/plain": lines(pprint.pformat(value, sort_dicts=False))}
        if hasattr(value, "_repr_markdown_"):
            data["text/markdown"] = lines(value._repr_markdown_())
        outputs.append({"data": data, "execution_count": count, "metadata": {}, "output_type": "execute_result"})
    return outputs


def run_notebook(path, replace: dict | None = None, cwd=LESSONS, afterwards: tuple = ()) -> list:
    """Run a notebook's code cells in order in a fresh namespace, in cwd; each cell's outputs.

    replace maps an exercise id ("01-1") to the source that takes that exercise cell's place; the sources in
    afterwards then run in the same namespace, as a student runs cells again after Run All.
    """
    path = pathlib.Path(path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    namespace = {"__name__": "__main__"}
    saved_cwd, saved_path = os.getcwd(), list(sys.path)
    saved_modules = project_modules()  # each notebook imports mcp_min afresh, so no patch leaks out
    for name in saved_modules:
        del sys.modules[name]
    results = []
    try:
        os.chdir(cwd)
        sources = [source_of(cell) for cell in code_cells(notebook)]
        for index, cell in enumerate(code_cells(notebook)):
            exercise = cell.get("metadata", {}).get("exercise")
            if replace and exercise in replace:
                sources[index] = replace[exercise]
        for count, source in enumerate([*sources, *afterwards], 1):
            try:
                results.append(run_cell(source, namespace, f"<{path.name} cell {count}>", count))
            except Exception as exc:
                raise CellError(f"{path.name}, code cell {count}:\n{traceback.format_exc()}") from exc
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        for name in project_modules():
            del sys.modules[name]
        sys.modules.update(saved_modules)
    return results


def project_modules() -> dict:
    """The loaded modules whose files live in this project (mcp_min, server_demo, diagram, ...)."""
    found = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and pathlib.Path(file).resolve().parent in (ROOT, LESSONS) and name != __name__:
            found[name] = module
    return found


def plain(outputs: list) -> list:
    """Outputs with every text joined into one string, so a list of lines equals the same string."""
    def join(value):
        return "".join(value) if isinstance(value, list) else value
    result = []
    for output in outputs:
        output = dict(output)
        if "text" in output:
            output["text"] = join(output["text"])
        if "data" in output:
            output["data"] = {kind: join(value) for kind, value in output["data"].items()}
        result.append(output)
    return result


def stale(path) -> bool:
    """Whether the notebook's stored outputs or execution counts differ from a fresh run."""
    notebook = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    fresh = run_notebook(path)
    for count, (cell, outputs) in enumerate(zip(code_cells(notebook), fresh), 1):
        if cell.get("execution_count") != count or plain(cell.get("outputs", [])) != plain(outputs):
            return True
    return False


def build(path):
    """Re-execute the notebook and store its outputs, execution counts 1..n and any missing cell ids."""
    path = pathlib.Path(path)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    fresh = run_notebook(path)
    for count, (cell, outputs) in enumerate(zip(code_cells(notebook), fresh), 1):
        cell["execution_count"] = count
        cell["outputs"] = outputs
    for index, cell in enumerate(notebook["cells"]):
        if notebook.get("nbformat_minor", 0) >= 5 and "id" not in cell:
            cell["id"] = f"{path.stem[:2]}-{index:02d}"  # nbformat 4.5 wants an id on every cell
    path.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list | None = None) -> int:
    """Build the notebooks named (default: all), or with --check name the stale ones and exit 1."""
    args = sys.argv[1:] if argv is None else argv
    check = "--check" in args
    paths = [pathlib.Path(arg).resolve() for arg in args if arg != "--check"] or notebooks()
    if check:
        names = [path.name for path in paths if stale(path)]
        for name in names:
            print(f"stale: lessons/{name} (run python lessons/build.py)", file=sys.stderr)
        return 1 if names else 0
    for path in paths:
        build(path)
        print(f"built lessons/{path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
