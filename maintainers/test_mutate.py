"""maintainers/mutate.py breaks mcp_min.py one promise at a time; each breakage must still find its text."""

import importlib.util
import pathlib

HERE = pathlib.Path(__file__).resolve().parent


def test_every_breakage_of_mutate_py_finds_its_text_once():
    # A breakage whose text has moved would stop the whole run: mcp_min.py changed, so the list must too.
    spec = importlib.util.spec_from_file_location("mutate", HERE / "mutate.py")
    mutate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutate)
    source = (HERE.parent / "mcp_min.py").read_text(encoding="utf-8")
    assert {promise: source.count(text) for promise, text, _ in mutate.BREAKAGES} == {
        promise: 1 for promise, _, _ in mutate.BREAKAGES}
