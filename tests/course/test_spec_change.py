"""The README's promise: the spec's code for an unknown tool is one line away. Applied in a copy of the project, the
change breaks the test that pins the course's code and the stored outputs, nothing else, and after
python tools/regenerate.py only the pinning test still fails.

It runs the whole suite twice over, so it runs only when MCP_MIN_SPEC_CHANGE_TEST is set (.ci/run sets it).
"""

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/course/)
CHANGE = ("UNKNOWN_TOOL = METHOD_NOT_FOUND", "UNKNOWN_TOOL = INVALID_PARAMS")  # in mcp_min.py, section 1
PINS = "test_mcp_min.py::test_the_course_still_pins_minus_32601_for_an_unknown_tool"
STORED = ("tests/course/test_lessons.py::test_stored_outputs_are_current[",  # what regenerate.py makes again
          "tests/course/test_lessons.py::test_readme_diagram_is_current",
          "tests/transports/test_transports.py::test_demo_transcript_matches_the_stored_one[")
HEAVY = ("MCP_MIN_SPEC_CHANGE_TEST", "MCP_MIN_PIP_TEST")  # not again inside the copy's run


def failed(copy: pathlib.Path, *tests: str) -> set:
    """The ids of the tests that fail (or error) in the copy."""
    env = {key: value for key, value in os.environ.items() if key not in HEAVY}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *tests], cwd=copy,
                          capture_output=True, text=True, timeout=3600, env=env)
    return {line.split(" ", 1)[1].split(" - ")[0] for line in done.stdout.splitlines()
            if line.startswith(("FAILED ", "ERROR "))}


def imported_from_the_lab(path: pathlib.Path) -> set:
    """The names a module imports from mcp_min."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module == "mcp_min"
            for alias in node.names}


@pytest.mark.skipif(not os.environ.get("MCP_MIN_SPEC_CHANGE_TEST"), reason="runs the suite twice: MCP_MIN_SPEC_CHANGE_TEST=1")
def test_the_spec_code_for_an_unknown_tool_is_one_line_that_breaks_only_the_pin_and_the_stored_outputs(tmp_path):
    # The line changed in a copy; the whole suite there; then the stored outputs made again, and the failures rerun.
    copy = tmp_path / "project"
    shutil.copytree(HERE, copy, ignore=shutil.ignore_patterns(".git", ".ci", "__pycache__", "*.pyc", ".pytest_cache"))
    lab = copy / "mcp_min.py"
    source = lab.read_text(encoding="utf-8")
    assert source.count(CHANGE[0]) == 1
    lab.write_text(source.replace(*CHANGE), encoding="utf-8")
    broken = failed(copy, "test_mcp_min.py", "tests")
    assert PINS in broken
    unexpected = sorted(test for test in broken - {PINS} if not test.startswith(STORED))
    assert not unexpected, "the change broke more than the pin and the stored outputs:\n" + "\n".join(unexpected) + (
        "\n(report_card.py imports UNKNOWN_TOOL from mcp_min: its course verdicts follow the lab's constant, not "
        "course 000's text)" if "UNKNOWN_TOOL" in imported_from_the_lab(HERE / "report_card.py") else "")
    subprocess.run([sys.executable, "tools/regenerate.py"], cwd=copy, check=True, capture_output=True, timeout=1200)
    assert failed(copy, *sorted({test.split("[")[0] for test in broken})) == {PINS}
