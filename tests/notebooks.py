"""The lesson notebooks as the tests read and run them: their cells, their exercises, and lessons/build.py."""

import importlib.util
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in tests/)
LESSONS = HERE / "lessons"
NOTEBOOKS = sorted(LESSONS.glob("[0-9]*.ipynb"))


def load_build():
    """lessons/build.py as a module."""
    spec = importlib.util.spec_from_file_location("lessons_build", LESSONS / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build = load_build()


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
