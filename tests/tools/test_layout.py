"""The tests' layout holds: the lab's own tests at the root, the rest a folder a subject, and no test module importing
another (what tests share is in tests/'s shared modules), issue 41."""

import ast
import pathlib

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/tools/)
SUBJECTS = {"protocol", "transports", "robustness", "interop", "board", "grading", "course", "tools"}


def modules_of_tests() -> list:
    """Every test module of the project."""
    return sorted(HERE.glob("test_*.py")) + sorted((HERE / "tests").glob("**/test_*.py"))


def imported(path: pathlib.Path) -> set:
    """The top-level names of the modules a file imports."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_imports_another():
    tests = {path.stem for path in modules_of_tests()}
    assert {path.name: sorted(imported(path) & tests) for path in modules_of_tests() if imported(path) & tests} == {}


def test_the_lab_s_tests_are_alone_at_the_root_and_the_rest_each_in_its_subject_s_folder():
    assert [path.name for path in HERE.glob("test_*.py")] == ["test_mcp_min.py"]
    assert {path.parent.name for path in (HERE / "tests").glob("**/test_*.py")} == SUBJECTS
    assert list((HERE / "tests").glob("test_*.py")) == []  # tests/ itself holds only what the tests share
