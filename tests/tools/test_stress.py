"""tools/stress.py: it repeats chosen tests, counts each failure, and names the fix for a mistaken argument."""

import re
import subprocess
import sys

from harness import HERE, TIMEOUT

STRESS = [sys.executable, str(HERE / "tools" / "stress.py"), "--load", "0"]
TESTS = '''
import pytest

def test_holds():
    assert 1 + 1 == 2

@pytest.mark.parametrize("kind", ["odd", "even"])
def test_breaks(kind):
    assert kind == "even"
'''


def test_each_failure_is_counted_by_its_name_once_a_round(tmp_path):
    (tmp_path / "test_sample.py").write_text(TESTS, encoding="utf-8")
    done = subprocess.run(STRESS + ["-n", "3", str(tmp_path / "test_sample.py")], capture_output=True, text=True,
                          timeout=TIMEOUT * 6)
    # One line a failing test, its rounds' marks taken out of its name, each failure counted; then the total.
    counted = re.findall(r"^ +(\d+) x \S*/(test_sample\.py::\S+)$", done.stdout, re.M)
    assert (done.returncode, counted, done.stdout.splitlines()[-1]) == (
        1, [("3", "test_sample.py::test_breaks[odd]")], "failures: 3")


def test_a_node_id_with_parameters_is_refused_with_the_k_that_chooses_it():
    done = subprocess.run(STRESS + ["-n", "2", "tests/course/test_lessons.py::test_stored_outputs_are_current[11.ipynb]"],
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith("choose it with -k, as in tests/course/test_lessons.py::test_stored_outputs_are_current "
                                "-k '11.ipynb'\n")
