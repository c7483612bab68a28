"""One word per concept: the names an architecture review found drifting from the glossaries (mcp_min's and mcp_full's
docstrings) stay gone. Each slip is a pattern that must match nowhere in the project's modules, beside the word the
glossary gives for what it named (issue 41).
"""

import pathlib
import re

import pytest

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/course/)
MODULES = ["*.py", "lessons/*.py", "tools/*.py", "corpus/*.py", "tests/*.py", "tests/*/*.py"]
ITSELF = pathlib.Path(__file__).resolve()

SLIPS = [  # (what was named, where, a pattern of the slip, the glossary's word)
    ("a lock named for the catalog it guards", "*", r"\b_catalog\b(?!_)", "_catalog_lock"),
    ("the stdio readers counted as workers", "*", r"\bMAX_WORKERS\b", "MAX_READERS"),
    ("a listen stream's kinds of notification shadowing the builtin filter", "*", r"^\s*filter\s*=", "kinds"),
    ("a second verb for a notification arriving", "*", r"\bdef hear\b|\.hear\b", "on_notification"),
    ("a socket named request", "*",
     r"def (process_request|process_request_thread|handle_error|finish_request|shutdown_request)\(self, request\b",
     "connection"),
    ("an event stream named reply", "*", r"\breply\s*=\s*urllib\.request\.urlopen|\b(self|viewer)\.reply\.(read|readline|close)\(", "stream"),
    ("a whole response named answer", "*", r"\banswer\s*=\s*(self\.receive|\w+\.handle)\(", "reply"),
    ("the HTTP endpoint's last write named answer", "mcp_http.py", r"\bdef answer\b|\.answer\(mcp\b", "end_request"),
    ("an exception named for asking", "*", r"except InputRequired as ask\b|\bask: InputRequired", "exc"),
    ("a server named session", "*", r"\bdef session\(self\) -> \"MCPServer\"|\bmcp\.session\b|\b(server|catalog)\.session\(\)",
     "share_catalog"),
    ("an MCP server or a factory named server", "mcp_http.py", r"def (http_server|serve_http)\(server\b", "mcp"),
    ("the lines a relay passed named session", "board.py",
     r"^class Session\b|\bSession\(|: Session\b|\b(self|server|httpd)\.session\b|\bsession = Recording\(", "Recording"),
    ("the board's recording named session, from outside", "*",
     r"\bboard\.Session\b|^from board import .*\bSession\b|\bsession = board\.Recording\(", "board.Recording"),
]


def modules(where: str) -> list:
    """The project's Python files where applies to, this file left out (it spells every slip)."""
    found = [path for pattern in MODULES for path in sorted(HERE.glob(pattern))]
    return [path for path in found if path.resolve() != ITSELF and (where == "*" or path.name == where)]


@pytest.mark.parametrize("what, where, slip, word", SLIPS, ids=[slip[0] for slip in SLIPS])
def test_a_concept_keeps_its_one_word(what, where, slip, word):
    pattern = re.compile(slip, re.MULTILINE)
    found = [f"{path.relative_to(HERE)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)!r}"
             for path in modules(where) for text in [path.read_text(encoding="utf-8")]
             for match in pattern.finditer(text)]
    assert found == [], f"{what}: the glossary's word is {word}"


def test_every_slip_names_files_that_exist():
    # A pattern over no file would pass whatever the code says.
    assert all(modules(where) for _, where, _, _ in SLIPS)
