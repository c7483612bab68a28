"""tools/mutate.py breaks the project one promise at a time, and makes the lab's seeded mutants; each breakage
must still find its text, each equivalent mutant name one mutant, and the seeded mutants be the same in every run;
CI's run has its scope, its score lines and thresholds, and a hang's timeout. The scores themselves are measured by
.ci/run (python tools/mutate.py --ci), not here: the mutants take minutes."""

import ast
import collections
import importlib.util
import pathlib
import subprocess
import sys

import pytest

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


def test_ci_scope_is_every_breakage_of_the_lab_then_every_one_of_the_ci_files():
    # --ci's curated parts: the lab's (against its own tests) and those of CI_FILES, each in its list's order.
    lab, beyond = mutate.ci_scope(mutate.BREAKAGES)
    assert [mutate.BREAKAGES[number - 1][0] for number in lab] == ["mcp_min.py"] * len(lab)
    assert lab == [number for number, breakage in enumerate(mutate.BREAKAGES, 1) if breakage[0] == "mcp_min.py"]
    assert beyond == [number for number, breakage in enumerate(mutate.BREAKAGES, 1) if breakage[0] in mutate.CI_FILES]
    assert set(mutate.CI_FILES) <= {name for name, _, _, _ in mutate.BREAKAGES} - {"mcp_min.py"}
    assert mutate.TESTS_OF["mcp_min.py"] == ["test_mcp_min.py"]


def test_ci_verdict_prints_a_score_a_part_and_one_for_all_and_fails_below_any_threshold():
    met = [("curated", 31, 31, 100.0), ("seeded", 90, 100, 90.0)]
    assert mutate.verdict(met) == ([
        "curated: 31 of 31 caught (100.0%; all wanted)",
        "seeded: 90 of 100 caught (90.0%; 90% wanted)",
        "mutation run: 121 of 131 caught (92.4%); every part met its threshold"], True)
    below = [("curated", 30, 31, 100.0), ("seeded", 89, 100, 90.0), ("beyond", 0, 0, 100.0)]
    assert mutate.verdict(below) == ([
        "curated: 30 of 31 caught (96.8%; all wanted) BELOW THRESHOLD",
        "seeded: 89 of 100 caught (89.0%; 90% wanted) BELOW THRESHOLD",
        "beyond: 0 of 0 caught (0.0%; all wanted) BELOW THRESHOLD",
        "mutation run: 119 of 131 caught (90.8%); below threshold: curated; seeded; beyond"], False)


@pytest.mark.skipif(not mutate.tap.WATCHING, reason="what a run leaves is found in Linux's /proc")
def test_a_run_that_hangs_is_stopped_at_its_timeout_and_leaves_nothing_running(tmp_path):
    # A test that never ends, and a process it started in a session of its own: the run is cut at its timeout
    # (mutate counts that as caught), and afterwards neither is left.
    (tmp_path / "test_hang.py").write_text(
        "import pathlib, subprocess, sys, time\n\n"
        "def test_hangs():\n"
        "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True)\n"
        "    pathlib.Path('child.pid').write_text(str(child.pid))\n"
        "    time.sleep(600)\n")
    driver = ("import os, pathlib, sys\n"
              f"sys.path.insert(0, {str(HERE / 'tools')!r})\n"
              "import mutate\n"
              "mutate.tap.become_subreaper()\n"
              f"status, _ = mutate.run_tests(pathlib.Path({str(tmp_path)!r}), ['test_hang.py'], 3)\n"
              f"pid = int(pathlib.Path({str(tmp_path)!r}, 'child.pid').read_text())\n"
              "print(status, os.path.exists(f'/proc/{pid}'))\n")
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.returncode) == ("None False\n", 0), done.stderr[-2000:]
