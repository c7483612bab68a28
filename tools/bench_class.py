"""How much sooner a class is graded side by side than one submission after another, on this machine.

    python tools/bench_class.py               # three rounds, a few minutes
    python tools/bench_class.py --rounds 1    # one
    python tools/bench_class.py --parallel 2  # side by side, two submissions at a time

The class is the grading tests' (hostile_servers.make_class: 25 submissions, good, broken and hostile, judged at
level 000 with small bounds). A round grades it three ways, in turns, the order rotated between rounds:
  side by side         one command, --class (its --parallel: twice the machine's cores, unless said)
  one after another    one command, --class with --parallel 1
  a command each       one command a submission, one after the other (a shell loop's way)
A class's card judges its rules two at a time (--class's --jobs); a card alone, the machine's cores at a time. A cell is the median of the rounds
with their range; a ratio is taken round by round, then its median. The goal: side by side in at most 0.65 of the time
of one after another.
"""

import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the project's folder (this file is in tools/)
sys.path.insert(0, os.path.join(HERE, "corpus"))

import hostile_servers  # noqa: E402

CARD = [sys.executable, os.path.join(HERE, "report_card.py")]
SERVER = [sys.executable, "{submission}/server.py"]
GOAL = 0.65  # side by side, at most this much of one after another


def grade_class(folder: str, parallel: int | None) -> tuple:
    """(seconds, the class JSON) of one command grading the whole class, parallel submissions at a time (None: the
    card's own choice)."""
    began = time.perf_counter()
    done = subprocess.run(CARD + ["--class", os.path.join(folder, "submissions"), "--config",
                                  os.path.join(folder, "assignment.json"), "--json",
                                  *(["--parallel", str(parallel)] if parallel else []), "--", *SERVER],
                          capture_output=True, text=True, timeout=1800, cwd=HERE)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"bench_class: the class command exited {done.returncode}: {done.stderr[-2000:]}")
    return seconds, json.loads(done.stdout)


def grade_each(folder: str, names: list) -> float:
    """Seconds to grade the class one command a submission, one after the other."""
    began = time.perf_counter()
    for name in names:
        path = os.path.join(folder, "submissions", name)
        subprocess.run(CARD + ["--config", os.path.join(folder, "assignment.json"), "--json", "--",
                               *[word.replace("{submission}", path) for word in SERVER]],
                       capture_output=True, timeout=1800, cwd=HERE)
    return time.perf_counter() - began


def cell(values: list) -> str:
    """A median and its range."""
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three ways (3)")
    parser.add_argument("--parallel", type=int, help="submissions side by side (the card's default: twice the "
                                                      "machine's cores)")
    asked = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-class-")
    names = hostile_servers.make_class(pathlib.Path(folder))
    ways = {"side by side": lambda: grade_class(folder, asked.parallel),
            "one after another": lambda: grade_class(folder, 1),
            "a command each": lambda: (grade_each(folder, names), None)}
    seconds = {way: [] for way in ways}
    peaks, parallel = [], None
    for round in range(asked.rounds):
        order = list(ways)[round % 3:] + list(ways)[:round % 3]
        for way in order:
            took, graded = ways[way]()
            seconds[way].append(took)
            if graded:
                peaks.append(graded["grader"]["peak_memory_mb"])
                parallel = graded["grader"]["parallel"] if way == "side by side" else parallel
            print(f"round {round + 1}: {way}: {took:.1f} s", file=sys.stderr, flush=True)
    shutil.rmtree(folder)
    ratios = [side / alone for side, alone in zip(seconds["side by side"], seconds["one after another"])]
    each = [side / alone for side, alone in zip(seconds["side by side"], seconds["a command each"])]
    print(f"the class: {len(names)} submissions; {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f} at the "
          f"end; side by side --parallel {parallel}; {asked.rounds} rounds")
    print("| way | seconds, median (range) |\n|---|---|")
    for way, values in seconds.items():
        print(f"| {way} | {cell(values)} |")
    print(f"side by side / one after another: {statistics.median(ratios):.2f} (rounds: "
          f"{', '.join(f'{r:.2f}' for r in ratios)}); goal {GOAL}: "
          f"{'met' if statistics.median(ratios) <= GOAL else 'not met'}")
    print(f"side by side / a command each: {statistics.median(each):.2f}")
    print(f"the grader's peak memory: {max(peaks):.1f} MB (of all its runs)")


if __name__ == "__main__":
    main()
