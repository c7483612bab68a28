"""Every test asserts something: a test that only runs code passes whatever the code answers (issue 41)."""

import ast
import pathlib

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/tools/)
SHARED = ("harness", "sample_servers", "browser", "cards", "notebooks")  # the tests' shared modules, in tests/
CHECKS = ("raises", "fail", "warns")  # pytest.raises, pytest.fail, pytest.warns


def called(node: ast.AST) -> set:
    """The functions node calls by their own name, or as pytest's or a shared module's attribute."""
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            names.add(call.func.id)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) \
                and call.func.value.id in ("pytest", *SHARED):
            names.add(call.func.attr)
    return names


def checks(node: ast.AST, asserting: set) -> bool:
    """Whether node holds an assert, or calls pytest's checks or a helper that asserts."""
    return any(isinstance(inner, ast.Assert) for inner in ast.walk(node)) or bool(called(node) & {*CHECKS, *asserting})


def silent_tests(sources: dict) -> list:
    """The tests in sources (a file's name -> its text) that assert nothing, as "file:line name"."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    helpers = [node for tree in trees.values() for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("test")]
    asserting = set()
    while True:  # a helper asserts if it asserts itself, or calls one that does
        more = {helper.name for helper in helpers if helper.name not in asserting and checks(helper, asserting)}
        if not more:
            break
        asserting |= more
    return [f"{name}:{node.lineno} {node.name}" for name, tree in trees.items() for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")
            and not checks(node, asserting)]


def test_every_test_of_the_project_asserts_or_calls_a_helper_that_does():
    files = [HERE / "test_mcp_min.py", *sorted((HERE / "tests").rglob("*.py"))]
    assert silent_tests({str(path.relative_to(HERE)): path.read_text(encoding="utf-8") for path in files}) == []


def test_a_test_that_only_runs_code_is_found_and_one_that_checks_through_a_helper_is_not():
    source = ("def answer():\n    return 42\n\n"
              "def check(value):\n    assert value == 42\n\n"
              "def checked(value):\n    check(value)\n\n"
              "def test_runs():\n    answer()\n\n"
              "def test_asserts():\n    assert answer() == 42\n\n"
              "def test_through_helpers():\n    checked(answer())\n\n"
              "def test_raises():\n    with pytest.raises(ZeroDivisionError):\n        1 / 0\n")
    assert silent_tests({"example.py": source}) == ["example.py:10 test_runs"]
