"""maintainers/mutate.py breaks the project one promise at a time; each breakage must still find its text."""

import importlib.util
import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def test_every_breakage_of_mutate_py_finds_its_text_once():
    # A breakage whose text has moved would stop the whole run: when a file changes, the list must too.
    spec = importlib.util.spec_from_file_location("mutate", HERE / "mutate.py")
    mutate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutate)
    counts = {(name, promise): (HERE.parent / name).read_text(encoding="utf-8").count(text)
              for name, promise, text, _ in mutate.BREAKAGES}
    assert counts == {key: 1 for key in counts}
