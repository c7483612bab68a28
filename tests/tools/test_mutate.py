"""tools/mutate.py breaks the project one promise at a time, and makes the lab's seeded mutants; each breakage
must still find its text, each equivalent mutant name one mutant, and the seeded mutants be the same in every run.
The score itself is measured by .ci/run (python tools/mutate.py --seeded 100 --at-least 90)."""

import ast
import collections
import importlib.util
import pathlib

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/tools/)


def load_mutate():
    """tools/mutate.py as a module."""
    spec = importlib.util.spec_from_file_location("mutate", HERE / "tools" / "mutate.py")
    mutate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutate)
    return mutate


mutate = load_mutate()
LAB = (HERE / "mcp_min.py").read_text(encoding="utf-8")


def test_every_breakage_of_mutate_py_finds_its_text_once():
    # A breakage whose text has moved would stop the whole run: when a file changes, the list must too.
    counts = {(name, promise): (HERE / name).read_text(encoding="utf-8").count(text)
              for name, promise, text, _ in mutate.BREAKAGES}
    assert counts == {key: 1 for key in counts}


def test_each_equivalent_mutant_names_exactly_one_mutant_of_the_lab():
    # An entry that names none is stale; one that names two could hide a mutant that is not equivalent.
    named = collections.Counter(mutate.described(LAB, m) for m in mutate.seeded_mutants(LAB))
    assert {key: named[key] for key in mutate.EQUIVALENT} == {key: 1 for key in mutate.EQUIVALENT}


def test_each_seeded_mutant_differs_from_the_lab_and_a_sample_of_them_is_python():
    # One change each, every operator at work; the sample .ci/run measures parses (all of them: a second each).
    mutants = mutate.seeded_mutants(LAB)
    assert all(mutate.applied(LAB, mutant) != LAB for mutant in mutants)
    assert set(m.operator for m in mutants) == set(mutate.OPERATORS)
    for mutant in mutate.sample(LAB, 100):
        ast.parse(mutate.applied(LAB, mutant))


def test_the_operators_make_the_mutants_they_name():
    # Each operator's change, on a small function written here.
    source = "def f(a, b):\n    if a and b:\n        a = 41\n    return a or b\n"
    made = {(m.operator, mutate.applied(source, m).splitlines()[m.line - 1].strip()) for m in mutate.seeded_mutants(source)}
    assert made == {("negate", "if not (a and b):"), ("and-or", "if a or b:"), ("pass", "pass"), ("plus-one", "a = 42"),
                    ("return-none", "return None"), ("and-or", "return a and b")}


def test_a_seeded_sample_is_the_same_in_every_run():
    # SEED fixes the sample: a score measured here is measured on the same mutants everywhere.
    assert mutate.sample(LAB, 50) == mutate.sample(LAB, 50)
    assert len(mutate.sample(LAB, 50)) == 50
    assert len(mutate.sample(LAB, None)) == len(mutate.seeded_mutants(LAB)) - len(mutate.EQUIVALENT)
