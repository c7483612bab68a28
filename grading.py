"""The report card's verdicts as grades: each rule's points, and the formats the graders schools run read.

    python report_card.py --config assignment.json --junit report.xml --gradescope results.json -- python server.py
    python report_card.py --class submissions/ --config assignment.json --gradebook grades.csv \\
                          --junit report.xml --json -- python {submission}/server.py > class.json

report_card.py judges; this module reads what it judged (the JSON card, docs/reference.md, "The report card in
full", and each row's lines as the text card prints them) and writes it out. It imports nothing of the project:
every format is written from the card alone, so that they all agree with it, rule by rule.

  1. The score     each rule's points by its outcome, the same in every format (docs/grading.md holds the table)
  2. The formats   the gradebook (CSV), JUnit XML, Gradescope's results.json, the class as JSON
"""

import csv
import io
import re
import xml.etree.ElementTree as ElementTree

SCHEMA_VERSION = 1  # the class JSON's: a new version when a field changes its meaning or goes away
LEVELS = {"000": "course 000", "002": "course 002", "004": "course 004", "stdio": "stdio"}

# ---------------------------------------------------------------------------------------------------
# ---- 1. The score ----
# ✓ earns the rule's points; ✗, "not tested" and "could not run" earn nothing and are failures; "not
# applicable" earns the points only where the assignment leaves the feature optional (else it is a failure: the
# assignment asks for what the server does not offer). A rule's points are 1 unless the assignment says.
# ---------------------------------------------------------------------------------------------------

FEATURES = {  # each feature an assignment may leave optional: what it is
    "allow-list": "a tool that exists but a session may not call (tool-not-allowed)",
    "tool-list-changes": "a tool list that changes (tools-list-changed)",
    "resource-list-changes": "a resource list that changes (resources-list-changed)",
    "prompt-list-changes": "a prompt list that changes (prompts-list-changed)",
    "resources": "resources (resources-by-uri, and their list's changes)",
    "prompts": "prompts (prompt-variables, and their list's changes)",
    "required-arguments": "a tool with a required argument (missing-argument)",
    "handshake": "the handshake era (course 000's and 002's rules in it)",
    "2026-07-28": "the 2026-07-28 revision (course 004's rules)",
}
CAPABILITIES = {"resources": "resources", "prompts": "prompts", "tools.listChanged": "tool-list-changes",
                "resources.listChanged": "resource-list-changes", "prompts.listChanged": "prompt-list-changes"}
LISTED = {"a resource": "resources", "a prompt with a required variable": "prompts",
          "a tool with a required argument": "required-arguments"}
KINDS = {  # how each outcome counts: passed (its points), skipped (its points: optional), failure, error (no points)
    "pass": "passed", "fail": "failure", "not_tested": "failure", "could_not_run": "error",
}


def feature_of(row: dict) -> str | None:
    """The feature a "not applicable" row is about, read from its reason (None: none of FEATURES)."""
    reason = row.get("reason") or {}
    code = reason.get("code")
    if code == "not_offered":
        return reason.get("feature")
    if code == "not_declared":
        return CAPABILITIES.get(reason.get("capability"))
    if code == "none_listed":
        return LISTED.get(reason.get("what"))
    if code == "era_not_served":
        return reason.get("era")
    if code == "listen_stream":
        return "handshake"  # list changes come over stdio in the handshake era only
    return None


def kind(row: dict, optional) -> str:
    """How a row counts: "passed", "skipped" (not applicable, and optional), "failure" or "error"."""
    if row["outcome"] == "not_applicable":
        return "skipped" if row["id"] in optional or feature_of(row) in optional else "failure"
    return KINDS[row["outcome"]]


def score(card: dict, points: dict, optional) -> dict:
    """A card's score: each rule's points earned of its points, how it counts, and the totals."""
    rules = []
    for row in card["rules"]:
        worth = points.get(row["id"], 1)
        counts = kind(row, optional)
        rules.append({"id": row["id"], "outcome": row["outcome"], "kind": counts, "max": worth,
                      "points": worth if counts in ("passed", "skipped") else 0})
    return {"points": sum(rule["points"] for rule in rules), "max": sum(rule["max"] for rule in rules),
            "rules": rules}


def number(value: float) -> str:
    """Points as a gradebook shows them: 2, not 2.0; 1.5 as it is."""
    return f"{value:g}"


# ---------------------------------------------------------------------------------------------------
# ---- 2. The formats ----
# Each takes the graded submissions: {"name", "card" (the JSON card), "score", "lines" (each rule's lines as
# the text card prints them, by rule id), "text" (the text card)}.
# ---------------------------------------------------------------------------------------------------

def gradebook(graded: list) -> str:
    """A CSV spreadsheet: a row per submission, a column per rule (the points earned), the total and its maximum, the
    card's exit status and the bound that stopped it."""
    ids = list(dict.fromkeys(rule["id"] for one in graded for rule in one["score"]["rules"]))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["submission", *ids, "points", "max", "exit status", "stopped by"])
    for one in graded:
        earned = {rule["id"]: number(rule["points"]) for rule in one["score"]["rules"]}
        stopped = one["card"].get("stopped_by")
        writer.writerow([cell(one["name"]), *[earned.get(id, "") for id in ids], number(one["score"]["points"]),
                         number(one["score"]["max"]), one["card"]["exit_status"], stopped["bound"] if stopped else ""])
    return out.getvalue()


def cell(text: str) -> str:
    """A name as a spreadsheet cell: one that would start a formula is quoted (=, +, -, @)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")  # characters XML 1.0 cannot hold


def xml_text(text: str) -> str:
    """Text XML can hold: each character it cannot (a control character from a server's line) as U+FFFD."""
    return NOT_XML.sub("\ufffd", text)


def junit(graded: list) -> str:
    """JUnit XML: a testsuite per submission, a testcase per rule (its id and claim); <failure> for ✗, not tested
    and a required feature not applicable, <error> for could not run, <skipped> for an optional feature, each with
    the row's text as its message and the row's lines as the text card prints them."""
    suites = ElementTree.Element("testsuites", name="report card")
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for one in graded:
        card, rules = one["card"], {rule["id"]: rule for rule in one["score"]["rules"]}
        counts = {"tests": len(card["rules"]), "failures": 0, "errors": 0, "skipped": 0}
        suite = ElementTree.SubElement(suites, "testsuite", name=xml_text(one["name"]),
                                       time=f"{(card.get('used') or {}).get('wall_seconds', 0):g}")
        properties = ElementTree.SubElement(suite, "properties")
        for name, value in (("points", f"{number(one['score']['points'])}/{number(one['score']['max'])}"),
                            ("exit status", str(card["exit_status"])),
                            ("stopped by", (card.get("stopped_by") or {}).get("text", ""))):
            ElementTree.SubElement(properties, "property", name=name, value=xml_text(value))
        for row in card["rules"]:
            case = ElementTree.SubElement(suite, "testcase", name=xml_text(f"{row['id']}: {row['claim']}"),
                                          classname=LEVELS.get(row["level"], row["level"]))
            counted = rules[row["id"]]["kind"]
            if counted != "passed":
                counts[{"failure": "failures", "error": "errors", "skipped": "skipped"}[counted]] += 1
                element = ElementTree.SubElement(case, counted, message=xml_text(row["text"]), type=row["outcome"])
                element.text = xml_text("\n".join(one["lines"][row["id"]]))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    ElementTree.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(suites, encoding="unicode") + "\n"


def gradescope(one: dict) -> dict:
    """Gradescope's results.json for one submission: the score, the card's summary as the output, a test per rule
    (its score of max_score, passed or failed, its lines as the text card prints them)."""
    card = one["card"]
    tests = [{"name": f"{row['id']}: {row['claim']}", "number": str(place), "score": rule["points"],
              "max_score": rule["max"], "status": "passed" if rule["kind"] in ("passed", "skipped") else "failed",
              "output": "\n".join(one["lines"][row["id"]]), "tags": [LEVELS.get(row["level"], row["level"])],
              "visibility": "visible"}
             for place, (row, rule) in enumerate(zip(card["rules"], one["score"]["rules"]), 1)]
    return {"score": one["score"]["points"], "execution_time": round((card.get("used") or {}).get("wall_seconds", 0)),
            "output": one["summary"], "stdout_visibility": "hidden", "tests": tests}


def class_json(graded: list, settings: dict, grader: dict) -> dict:
    """The class as JSON: how it was graded (settings), each submission's score and card, and the grader's own
    figures (its wall time and peak memory)."""
    return {"schema_version": SCHEMA_VERSION, **settings,
            "submissions": [{"name": one["name"], "path": one["path"], "points": one["score"]["points"],
                             "max": one["score"]["max"], "exit_status": one["card"]["exit_status"],
                             "stopped_by": one["card"].get("stopped_by"), "score": one["score"], "card": one["card"]}
                            for one in graded],
            "grader": grader}
