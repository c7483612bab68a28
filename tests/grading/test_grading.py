"""Grading (issue 38): the card's server processes watched and bounded, its own memory bounded; a class graded in one
command; the assignment's file; the scores and the formats graders read.

The servers are the naive ones (corpus/naive_servers.py) and the hostile ones (corpus/hostile_servers.py),
each run as a student's submission. No test waits on a clock: each waits for a line, an exit, or a process's end,
with a deadline far beyond what an honest run takes; processes are looked for in /proc.
"""

import concurrent.futures
import csv
import io
import json
import os
import pathlib
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import pytest

import grading
import hostile_servers
import naive_servers
import report_card
from report_card import Wire
from cards import outcomes_in_text, tape

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/grading/)
PYTHON = sys.executable
NAIVE = [PYTHON, str(HERE / "corpus" / "naive_servers.py")]
HOSTILE = [PYTHON, str(HERE / "corpus" / "hostile_servers.py")]
CARD = [PYTHON, str(HERE / "report_card.py")]
LINUX = pathlib.Path("/proc/self/stat").exists()
BOUND = 600  # seconds: a bound on a bug, never reached by an honest run however slow the machine


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def until(condition, what: str):
    """Poll condition() until it holds, or fail after BOUND seconds."""
    deadline = time.monotonic() + BOUND
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what}")
        time.sleep(0.01)


def marked(prefix: str) -> list:
    """The pids of the running processes whose environment names a card's tree starting with prefix."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and alive(int(name)):
            try:
                environ = pathlib.Path(f"/proc/{name}/environ").read_bytes()
            except OSError:
                continue
            if f"{report_card.MARK}={prefix}".encode() in environ:
                found.append(int(name))
    return found


# ---------------------------------------------------------------------------------------------------
# The wire: every process of a server's tree followed and ended; the card's own inbox and writes bounded
# ---------------------------------------------------------------------------------------------------

DAEMON = r"""
import os, subprocess, sys
# A child in a session of its own (setsid), and one in the server's own group, both holding its stdout; then the
# server exits at once.
for session in (True, False):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], start_new_session=session)
    print(child.pid, file=sys.stderr, flush=True)
"""


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_children_that_hold_stdout_after_the_server_exits_are_ended_and_the_card_does_not_wait_for_them():
    # The card sees the server exit (not its stdout's end, which the children hold), and ends them, setsid or not.
    wire = Wire([PYTHON, "-c", DAEMON], timeout=BOUND, record=tape())
    try:
        assert (wire.reply(wire.request("ping")), wire.silence()) == (None, "the server exited (status 0); its stderr "
                                                                            f"ends: {wire.stderr_tail()}")
        children = [int(pid) for pid in wire.stderr_kept.split()]
    finally:
        wire.close()
    assert (len(children), [pid for pid in children if alive(pid)], wire.account.outlived) == (2, [], 2)


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_a_flood_waits_in_the_inbox_and_the_card_reads_no_more_than_it_has_room_for():
    # A server writing 1 MB lines for ever while the rule's thread takes none: the reader stops at the inbox's bound.
    flood = "import sys\nline = b'x' * 1_000_000 + b'\\n'\nwhile True: sys.stdout.buffer.write(line)"
    wire = Wire([PYTHON, "-c", flood], timeout=BOUND, record=tape())
    try:
        until(lambda: wire.inbox.size >= report_card.INBOX_BYTES, "the inbox to fill")
        read = wire.account.written["stdout_mb"]
        assert read <= report_card.INBOX_BYTES + 2 * 1_000_001
        assert wire.inbox.size <= report_card.INBOX_BYTES + 1_000_000
    finally:
        wire.close()


def test_a_server_that_reads_nothing_does_not_hold_the_cards_writes():
    # Its stdin's pipe full, a write waits the time limit and no more: the server has stopped reading, and says so.
    wire = Wire([PYTHON, "-c", "import time; time.sleep(1000)"], timeout=0.5, record=tape())
    try:
        wire.send_line("x" * 1_000_000)
        sent = wire.request("ping")
        assert (wire.not_reading, wire.stdin_closed, wire.reply(sent), wire.silence(), wire.why()) == (
            True, True, None, "the server stopped reading its stdin: a line the card wrote found no room in 0.5 s",
            "not_reading")
    finally:
        wire.close()


ASKS = r"""
import json, sys
sys.stdin.readline()
for n in range(500):
    print(json.dumps({"jsonrpc": "2.0", "id": n, "method": "roots/list"}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}), flush=True)
sys.stdin.read()
"""


def test_the_card_answers_a_servers_requests_so_many_times_a_session_and_no_more():
    # 500 requests before the response: the first MAX_ANSWERED are answered -32601, the rest left unanswered.
    wire = Wire([PYTHON, "-c", ASKS], timeout=BOUND, record=tape())
    try:
        assert wire.reply(wire.request("ping"))["message"] == {"jsonrpc": "2.0", "id": 1, "result": {}}
        answers = [entry["message"]["id"] for entry in wire.sent if "error" in entry["message"]]
    finally:
        wire.close()
    assert answers == list(range(report_card.MAX_ANSWERED))


@pytest.mark.skipif(not LINUX, reason="the processes are read from /proc, Linux's")
def test_rlimits_are_a_backstop_no_core_file_and_a_little_more_cpu_than_the_whole_tree_may_use():
    wire = Wire([PYTHON, "-c", "import sys; sys.stdin.read()"], timeout=BOUND, record=tape(),
                account=report_card.Account({"cpu_seconds": 30}))
    try:
        limits = pathlib.Path(f"/proc/{wire.process.pid}/limits").read_text().splitlines()
    finally:
        wire.close()
    assert [line.split()[-3:] for line in limits if line.startswith(("Max cpu time", "Max core file size"))] == [
        ["32", "33", "seconds"], ["0", "0", "bytes"]]


# ---------------------------------------------------------------------------------------------------
# A class in one command: good, broken and hostile submissions, each with the verdict it should get
# ---------------------------------------------------------------------------------------------------

ASSIGNMENT = hostile_servers.ASSIGNMENT
LEVEL_000 = [r["id"] for r in report_card.RULES if r["level"] in ("000", "stdio")]


def expected(name: str) -> dict:
    """What a submission's card should hold: its outcomes by rule (pass unless said), its exit status, its bound."""
    outcomes = dict.fromkeys(LEVEL_000, "pass")
    if name in naive_servers.MISTAKES:
        return {"outcomes": outcomes | {naive_servers.MISTAKES[name][1]: "fail"}, "exit": 1, "bound": None}
    if name == "no-divide":  # divide is the tool of --raises, which these rules call
        return {"outcomes": outcomes | {"tool-error-is-result": "fail", "tool-error-says-why": "fail"}, "exit": 1,
                "bound": None}
    if name == "no-allow-list":
        return {"outcomes": outcomes | {"tool-not-allowed": "not_applicable"}, "exit": 0, "bound": None}
    if name == "empty":  # no session: the stdio rules alone are judged
        outcomes = dict.fromkeys(LEVEL_000, "could_not_run") | {"stdout-only-json": "pass", "exit-on-eof": "pass"}
        return {"outcomes": outcomes, "exit": 4, "bound": None}
    if name == "child-keeps-stdout":
        return {"outcomes": outcomes | {"internal-error": "fail"}, "exit": 1, "bound": None}
    if name == "ignores-sigterm":
        return {"outcomes": outcomes | {"exit-on-eof": "fail"}, "exit": 1, "bound": None}
    if name == "setsid-child":
        return {"outcomes": outcomes, "exit": 0, "bound": None}
    if name in hostile_servers.HOSTILE:  # what ran before the bound was passed keeps its verdict; the rest could not
        return {"outcomes": None, "exit": 4, "bound": hostile_servers.HOSTILE[name][1]}
    return {"outcomes": outcomes, "exit": 0, "bound": None}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory) -> dict:
    """The test class graded in one command (--json, --gradebook, --junit): what it printed and wrote, and the
    processes it left."""
    folder = tmp_path_factory.mktemp("class")
    names = hostile_servers.make_class(folder)
    command = CARD + ["--class", str(folder / "submissions"), "--config", str(folder / "assignment.json"), "--json",
                      "--gradebook", str(folder / "grades.csv"), "--junit", str(folder / "report.xml"), "--cards",
                      str(folder / "cards"), "--", PYTHON, "{submission}/server.py"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HERE)
    out, err = process.communicate(timeout=BOUND)
    left = marked(f"{process.pid}-") if LINUX else []
    return {"names": names, "returncode": process.returncode, "class": json.loads(out), "stderr": err,
            "gradebook": (folder / "grades.csv").read_text(), "junit": (folder / "report.xml").read_text(),
            "texts": {name: (folder / "cards" / f"{name}.txt").read_text() for name in names}, "left": left}


def test_a_class_of_25_is_graded_in_one_command_each_submission_with_the_verdict_it_should_get(graded_class):
    # Each card as expected: the broken ones their own rule's ✗, the one without a tool the flags name its ✗ (not a
    # usage error), the one without the optional allow-list not applicable, the hostile ones stopped by their bound.
    found = {one["name"]: one["card"] for one in graded_class["class"]["submissions"]}
    assert (graded_class["returncode"], list(found)) == (0, graded_class["names"])
    assert len(found) == 25
    for name, card in found.items():
        want = expected(name)
        if want["outcomes"] is None:  # requests without end fail the rules they drowned before the bound
            assert {row["outcome"] for row in card["rules"] if (row["reason"] or {}).get("why") != "flooded"} <= {
                "pass", "could_not_run"}, name
        else:
            assert {row["id"]: row["outcome"] for row in card["rules"]} == want["outcomes"], name
        assert (card["exit_status"], (card["stopped_by"] or {}).get("bound")) == (want["exit"], want["bound"]), name


def test_the_hostile_submissions_get_a_card_that_names_the_bound_and_nothing_of_theirs_is_left(graded_class):
    # Each stopped by its bound, the rules it did not finish "could not run" with the bound's words; what the card
    # had to end is said; no process of the class runs once the command is done.
    found = {one["name"]: one["card"] for one in graded_class["class"]["submissions"]}
    for name, (_, bound) in hostile_servers.HOSTILE.items():
        card = found[name]
        if bound:
            unrun = {row["text"] for row in card["rules"] if row["outcome"] == "could_not_run"}
            assert unrun == {card["stopped_by"]["text"]}, name
            assert card["stopped_by"]["text"].startswith("the server's processes went over the "
                                                         f"{report_card.BOUNDS[bound][1]} bound: "), name
    assert found["child-keeps-stdout"]["used"]["outlived"] > 0
    assert found["setsid-child"]["used"]["outlived"] > 0
    assert found["ignores-sigterm"]["used"]["ignored_sigterm"] is True
    assert [row["text"] for row in found["child-keeps-stdout"]["rules"] if row["outcome"] == "fail"] == [
        "no response to tools/call: the server exited (status 1); its stderr ends: TypeError: unhashable type: 'list'"]
    assert graded_class["left"] == []


def test_the_grader_keeps_its_own_memory_under_200_mb(graded_class):
    # The class JSON's own figures: the grading process's peak resident memory (getrusage), while its submissions
    # flooded, grew and forked.
    grader = graded_class["class"]["grader"]
    assert (grader["submissions"], grader["peak_memory_mb"] < 200) == (25, True), grader


def test_the_class_json_holds_its_documented_fields(graded_class):
    found = graded_class["class"]
    assert list(found) == ["schema_version", "class", "command", "levels", "config", "points", "optional",
                           "submissions", "grader"]
    assert (found["schema_version"], found["levels"], found["optional"], found["points"]["no-traceback"]) == (
        1, ["000"], ["allow-list"], 2)
    assert {tuple(one) for one in found["submissions"]} == {
        ("name", "path", "points", "max", "exit_status", "stopped_by", "score", "card")}
    assert list(found["grader"]) == ["submissions", "wall_seconds", "peak_memory_mb", "parallel", "jobs"]


# ---------------------------------------------------------------------------------------------------
# The score, and the formats graders read: each agrees with the text cards, rule by rule
# ---------------------------------------------------------------------------------------------------

SCORED = [  # (a row's outcome and reason, whether its feature is optional): how it counts, the points of 2 it earns
    ({"outcome": "pass", "reason": None}, False, "passed", 2),
    ({"outcome": "fail", "reason": {"code": "wrong_answer"}}, False, "failure", 0),
    ({"outcome": "not_tested", "reason": {"code": "needs_flag", "flag": "--raises"}}, False, "failure", 0),
    ({"outcome": "could_not_run", "reason": {"code": "no_session", "diagnosis": "silent"}}, False, "error", 0),
    ({"outcome": "not_applicable", "reason": {"code": "not_declared", "capability": "resources"}}, True, "skipped", 2),
    ({"outcome": "not_applicable", "reason": {"code": "not_declared", "capability": "resources"}}, False, "failure", 0),
    ({"outcome": "not_applicable", "reason": {"code": "not_offered", "feature": "allow-list"}}, True, "skipped", 2),
    ({"outcome": "not_applicable", "reason": {"code": "none_listed", "what": "a tool with a required argument"}}, True,
     "skipped", 2),
    ({"outcome": "not_applicable", "reason": {"code": "era_not_served", "era": "2026-07-28"}}, True, "skipped", 2),
]
FEATURE = {"resources": "resources", "allow-list": "allow-list", "a tool with a required argument":
           "required-arguments", "2026-07-28": "2026-07-28"}


def test_each_outcome_scores_as_docs_grading_md_says():
    # ✓ earns the points; ✗, not tested and could not run nothing; not applicable the points only where optional.
    found = []
    for row, optional, _, _ in SCORED:
        named = next(iter((row["reason"] or {}).values())) if row["outcome"] == "not_applicable" else None
        feature = FEATURE.get(next(reversed((row["reason"] or {}).values()), None)) if named else None
        card = {"rules": [{"id": "some-rule", **row}]}
        rule = grading.score(card, {"some-rule": 2}, {feature} if optional else set())["rules"][0]
        found.append((row, optional, rule["kind"], rule["points"]))
    assert found == SCORED


def gradebook_rows(printed: str) -> dict:
    """The gradebook's rows by submission: each column's cell."""
    return {row["submission"]: row for row in csv.DictReader(io.StringIO(printed))}


def junit_kinds(printed: str) -> dict:
    """JUnit XML's verdicts: suite name -> rule id -> "passed" or the testcase's element (failure, error, skipped)."""
    found = {}
    for suite in ElementTree.fromstring(printed).iter("testsuite"):
        found[suite.get("name")] = {case.get("name").split(":")[0]: (case[0].tag if len(case) else "passed")
                                    for case in suite.iter("testcase")}
    return found


def points_of(outcome: str, rule: str) -> float:
    """What a rule earns in the test class by its outcome on the text card (the assignment's points, allow-list
    optional, which only no-allow-list leaves out)."""
    worth = ASSIGNMENT["points"].get(rule, 1)
    return worth if outcome in ("pass", "not_applicable") else 0


KIND_OF = {"pass": "passed", "fail": "failure", "not_tested": "failure", "could_not_run": "error",
           "not_applicable": "skipped"}


def test_the_gradebook_and_the_junit_file_agree_with_the_text_cards_rule_by_rule(graded_class):
    # The text card each submission's folder got (--cards), its marks read as a student reads them: the gradebook's
    # cell is that rule's points, the JUnit testcase that outcome's element; a ✗ row's JUnit text is the card's.
    rows, kinds = gradebook_rows(graded_class["gradebook"]), junit_kinds(graded_class["junit"])
    for name, printed in graded_class["texts"].items():
        marks = outcomes_in_text(printed)
        assert sorted(marks) == sorted(LEVEL_000), name
        assert {rule: float(rows[name][rule]) for rule in marks} == {
            rule: points_of(outcome, rule) for rule, outcome in marks.items()}, name
        assert float(rows[name]["points"]) == sum(points_of(outcome, rule) for rule, outcome in marks.items())
        assert kinds[name] == {rule: KIND_OF[outcome] for rule, outcome in marks.items()}, name
    for suite in ElementTree.fromstring(graded_class["junit"]).iter("testsuite"):
        for failure in suite.iter("failure"):
            assert failure.text in graded_class["texts"][suite.get("name")]


def test_the_gradebook_has_a_row_a_submission_a_column_a_rule_and_the_total(graded_class):
    printed = graded_class["gradebook"]
    assert printed.splitlines()[0].split(",") == ["submission", *LEVEL_000, "points", "max", "exit status",
                                                  "stopped by"]
    rows = gradebook_rows(printed)
    assert list(rows) == graded_class["names"]
    worth = grading.number(sum(ASSIGNMENT["points"].get(rule, 1) for rule in LEVEL_000))
    assert {name: (row["max"], row["exit status"], row["stopped by"]) for name, row in rows.items()} == {
        name: (worth, str(expected(name)["exit"]), expected(name)["bound"] or "") for name in rows}


def test_the_junit_file_holds_junits_documented_fields(graded_class):
    # <testsuites> with the totals; a <testsuite> a submission (name, tests, failures, errors, skipped, time, its
    # points as a property); a <testcase> a rule (name, classname); <failure>, <error>, <skipped> with message, type.
    root = ElementTree.fromstring(graded_class["junit"])
    suites = list(root)
    assert (root.tag, [suite.get("name") for suite in suites]) == ("testsuites", graded_class["names"])
    for key in ("tests", "failures", "errors", "skipped"):
        assert int(root.get(key)) == sum(int(suite.get(key)) for suite in suites)
    for suite in suites:
        cases = list(suite.iter("testcase"))
        counted = [case[0].tag for case in cases if len(case)]
        assert [int(suite.get(key)) for key in ("tests", "failures", "errors", "skipped")] == [
            len(cases), counted.count("failure"), counted.count("error"), counted.count("skipped")]
        assert float(suite.get("time")) >= 0
        assert [p.get("name") for p in suite.iter("property")] == ["points", "exit status", "stopped by"]
        for case in cases:
            assert (case.get("classname") in ("course 000", "stdio"), set(case.attrib)) == (True, {"name", "classname"})
            for verdict in case:
                assert (set(verdict.attrib), verdict.get("type") in report_card.OUTCOMES) == ({"message", "type"}, True)


GRADESCOPE_FIELDS = {"score", "execution_time", "output", "stdout_visibility", "tests"}
TEST_FIELDS = {"name", "number", "score", "max_score", "status", "output", "tags", "visibility"}


def test_gradescope_results_agree_with_the_text_card_rule_by_rule_and_hold_its_documented_fields(tmp_path):
    # One submission a run, as Gradescope grades: the same assignment's file; results.json's tests, one a rule, each
    # passed with its points or failed with none, as the text card printed on stdout says; its output that row's
    # lines; the score their sum. The same run's JUnit file says the same.
    hostile_servers.make_class(tmp_path)
    names = ["alice", "no-gate", "no-divide", "no-allow-list", "fifty-children"]

    def grade(name: str) -> tuple:
        done = subprocess.run(CARD + ["--config", str(tmp_path / "assignment.json"), "--gradescope",
                                      str(tmp_path / f"{name}.json"), "--junit", str(tmp_path / f"{name}.xml"), "--",
                                      PYTHON, str(tmp_path / "submissions" / name / "server.py")],
                              capture_output=True, text=True, timeout=BOUND, cwd=HERE)
        return done, json.loads((tmp_path / f"{name}.json").read_text()), (tmp_path / f"{name}.xml").read_text()

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        results = dict(zip(names, pool.map(grade, names)))
    for name, (done, results_json, junit_xml) in results.items():
        marks = outcomes_in_text(done.stdout)
        assert (done.returncode, set(results_json), sorted(marks)) == (expected(name)["exit"], GRADESCOPE_FIELDS,
                                                                       sorted(LEVEL_000)), name
        tests = results_json["tests"]
        assert [(test["name"].split(":")[0], test["status"], test["score"], test["max_score"]) for test in tests] == [
            (rule, "passed" if points_of(marks[rule], rule) else "failed", points_of(marks[rule], rule),
             ASSIGNMENT["points"].get(rule, 1)) for rule in LEVEL_000], name
        assert all(set(test) == TEST_FIELDS and test["visibility"] == "visible" and test["output"] in done.stdout
                   for test in tests if marks[test["name"].split(":")[0]] != "could_not_run"), name
        assert results_json["score"] == sum(test["score"] for test in tests)
        assert list(junit_kinds(junit_xml).values()) == [{rule: KIND_OF[outcome] for rule, outcome in marks.items()}]


# ---------------------------------------------------------------------------------------------------
# The assignment's file, and the command line of a class
# ---------------------------------------------------------------------------------------------------

def usage(*argv: str) -> str:
    """The one line a usage error prints (exit status 2)."""
    done = subprocess.run(CARD + list(argv), capture_output=True, text=True, timeout=BOUND, cwd=HERE)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    return done.stderr.strip()


def test_a_mistake_in_the_assignments_file_is_a_usage_error_naming_the_file(tmp_path):
    config = tmp_path / "a.json"
    config.write_text(json.dumps({"level": "001", "points": {"no-such-rule": 1}}))
    assert usage("--config", str(config), "--", "cat") == (
        f"report_card: --config {config}: argument --level: is 000, 002 or 004, not '001' (python report_card.py "
        "--help shows the usage)")
    config.write_text(json.dumps({"points": {"no-such-rule": 1}}))
    assert usage("--config", str(config), "--", "cat") == (
        f"report_card: --config {config}: points is an object of rule ids and numbers, 0 or more (no rule "
        "no-such-rule) (python report_card.py --help shows the usage)")
    config.write_text(json.dumps({"bound": {}}))
    assert usage("--config", str(config), "--", "cat") == (
        f"report_card: --config {config}: an object whose keys are among level, flags, points, optional, bounds, "
        "not bound (python report_card.py --help shows the usage)")


def test_a_class_needs_its_folder_and_submission_in_the_command(tmp_path):
    assert usage("--class", str(tmp_path), "--", PYTHON, "server.py") == (
        "report_card: --class needs {submission} in the server's command, where each submission's path goes (python "
        "report_card.py --help shows the usage)")
    assert usage("--", PYTHON, "{submission}/server.py") == (
        "report_card: {submission} is for a class: with --class DIR (python report_card.py --help shows the usage)")
    assert usage("--class", str(tmp_path), "--gradescope", "r.json", "--", PYTHON, "{submission}/server.py") == (
        "report_card: --class grades many submissions: not --gradescope, which show one (python report_card.py "
        "--help shows the usage)")


def test_the_command_lines_flags_win_over_the_files(tmp_path):
    config = tmp_path / "a.json"
    config.write_text(json.dumps({"level": "000", "flags": ["--timeout", "7"], "bounds": {"memory_mb": 100}}))
    asked = report_card.options(["--config", str(config), "--timeout", "9", "--", "cat"])
    assert (asked["levels"], asked["timeout"], asked["bounds"]) == (("000",), 9.0, {"memory_mb": 100.0})


# ---------------------------------------------------------------------------------------------------
# docs/grading.md: its assignment is the tests', its CI jobs run the card as the suite does
# ---------------------------------------------------------------------------------------------------

GRADING = (HERE / "docs" / "grading.md").read_text(encoding="utf-8")
COURSE_MODULES = ["mcp_min", "mcp_full", "mcp_stdio", "mcp_http", "tap", "board", "report_card", "grading"]


def fenced(heading: str, language: str) -> str:
    """The first block fenced as language under a heading of docs/grading.md."""
    section = GRADING[GRADING.index(f"\n{heading}\n"):]
    start = section.index(f"```{language}\n") + len(f"```{language}\n")
    return section[start:section.index("```", start)]


def card_commands(block: str) -> list:
    """The command lines of a CI block that run the card: continuation lines joined, without YAML's "- " or "run: "."""
    joined = block.replace("\\\n", " ")
    return [" ".join(line.strip().removeprefix("- ").removeprefix("run: ").split()) for line in joined.splitlines()
            if "report_card.py" in line]


def student_repository(folder: pathlib.Path, server: str) -> pathlib.Path:
    """A student's repository as a CI job sees it: server.py (one of the class's servers), grading/assignment.json
    (the page's), and the course's copy of this project checked out beside it, in course/."""
    folder.mkdir()
    (folder / "server.py").write_text(f"import sys\nsys.path.insert(0, {str(HERE / 'corpus')!r})\n"
                                      f"import hostile_servers\nhostile_servers.SERVERS[{server!r}]().main()\n")
    (folder / "grading").mkdir()
    (folder / "grading" / "assignment.json").write_text(fenced("## The assignment's file", "json"))
    (folder / "course").symlink_to(HERE)
    return folder


def python_on_path(folder: pathlib.Path) -> dict:
    """An environment whose python and python3 are this Python (a CI job's setup-python, or its image's)."""
    folder.mkdir()
    for name in ("python", "python3"):
        (folder / name).symlink_to(PYTHON)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_the_assignment_file_on_the_page_is_the_one_the_tests_grade():
    assert json.loads(fenced("## The assignment's file", "json")) == hostile_servers.ASSIGNMENT


def test_the_github_and_gitlab_jobs_on_the_page_run_the_card_as_the_suite_runs_it(tmp_path):
    # The same card command in both jobs, run here as it stands on two students' repositories: the good one exits 0,
    # its JUnit report all passed; the broken one exits 1, its report failing handshake-gate alone.
    github, gitlab = card_commands(fenced("### GitHub Actions", "yaml")), card_commands(fenced("### GitLab", "yaml"))
    assert github == gitlab == ["python course/report_card.py --config grading/assignment.json --junit report.xml -- "
                                "python server.py"]
    env = python_on_path(tmp_path / "bin")
    for server, status in (("base", 0), ("no-gate", 1)):
        repository = student_repository(tmp_path / server, server)
        done = subprocess.run(github[0], shell=True, cwd=repository, env=env, capture_output=True, text=True,
                              timeout=BOUND)
        failing = {rule for rule, kind in junit_kinds((repository / "report.xml").read_text())["python server.py"]
                   .items() if kind != "passed"}
        assert (done.returncode, failing) == (status, {"handshake-gate"} if status else set()), done.stderr


def test_gradescopes_run_autograder_on_the_page_writes_its_results(tmp_path):
    # The script as it stands, /autograder made a folder here: the source the project's modules and the page's
    # assignment, the submission a broken server; results.json fails its rule alone.
    script = fenced("### Gradescope", "bash").replace("/autograder", str(tmp_path / "autograder"))
    source, submission = tmp_path / "autograder" / "source", tmp_path / "autograder" / "submission"
    source.mkdir(parents=True)
    (tmp_path / "autograder" / "results").mkdir()
    for module in COURSE_MODULES:
        (source / f"{module}.py").symlink_to(HERE / f"{module}.py")
    (source / "assignment.json").write_text(fenced("## The assignment's file", "json"))
    submission.mkdir()
    (submission / "server.py").write_text(student_repository(tmp_path / "repository", "no-gate").joinpath(
        "server.py").read_text())
    done = subprocess.run(["bash", "-c", script], env=python_on_path(tmp_path / "bin"), capture_output=True,
                          text=True, timeout=BOUND)
    results = json.loads((tmp_path / "autograder" / "results" / "results.json").read_text())
    worth = sum(ASSIGNMENT["points"].get(rule, 1) for rule in LEVEL_000)
    assert (done.returncode, [test["name"].split(":")[0] for test in results["tests"] if test["status"] == "failed"],
            results["score"]) == (1, ["handshake-gate"], worth - 1), done.stderr


def test_the_wall_time_bound_is_the_cards_deadline_and_is_named_when_it_passes():
    # A server that holds every request after initialize: the card's deadline ends the rule it cuts, and the card
    # names the wall time as the bound that stopped it.
    card = report_card.judge(["--timeout", "600", "--deadline", "3", "--only", "handshake-gate", "--", *NAIVE,
                              "holds-requests-until-initialized"])[0]
    assert ([row["reason"] for row in card["rules"]], card["stopped_by"]) == (
        [{"code": "card_deadline"}], {"bound": "wall_seconds", "limit": 3.0, "used": card["used"]["wall_seconds"],
                                      "at": card["used"]["wall_seconds"], "rule": "handshake-gate",
                                      "text": "the card's deadline (3 s, the wall time bound) passed, in "
                                              "handshake-gate's session"})
