"""Run tests many times on a loaded machine, and count the failures: how a maintainer shows a change is not flaky.

    python tools/stress.py                           # the whole suite 10 times, one busy loop a core
    python tools/stress.py -n 3 --python python3.10  # the whole suite 3 times on another Python
    python tools/stress.py -n 200 tests/protocol/test_duplex.py -k stdio   # chosen tests, 200 times each
    python tools/stress.py --load 0 -n 5 test_mcp_min.py                    # no load
    python tools/stress.py -n 200 tests/course/test_lessons.py -k "stored_outputs and 11_wire"  # one parameter set

With no test named, each round is a run of the whole suite (`python -m pytest`, a process of its own). With
tests named (paths, node ids, -k, as pytest takes them), one run of pytest runs each chosen test n times in a
row, each time afresh (a module's functools caches are emptied before each repeat, so a notebook runs again).
Meanwhile one busy loop a core (or --load K of them) keeps the machine loaded. At the end: each failing test
with how many times it failed, and a count. The exit status is 0 only if nothing failed.

The standard library only; it runs pytest, which must be installed where --python points.
"""

import collections
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPEAT = "MCP_MIN_STRESS_REPEAT"  # set for a pytest run that loads this file as its plugin (-p stress)
ROUND = "stress_round"  # the parameter each repeated test gets; its id ends the test's name: [...-7of200]


# ---- the plugin: pytest loads this module with -p stress, and each chosen test runs n times ----

def pytest_generate_tests(metafunc):
    """Give every test one more parameter, the round, so that pytest collects it n times."""
    count = int(os.environ.get(REPEAT, "1"))
    if count > 1:
        metafunc.fixturenames.append(ROUND)
        metafunc.parametrize(ROUND, range(1, count + 1), ids=lambda n: f"{n}of{count}")


def pytest_runtest_setup(item):
    """Before a repeat, empty the caches of the test's module: each round is a fresh run."""
    if getattr(item, "callspec", None) is None or item.callspec.params.get(ROUND, 1) == 1:
        return
    for value in vars(item.module).values():
        if callable(getattr(value, "cache_clear", None)):
            value.cache_clear()


# ---- the command ----

def busy_loops(count: int) -> list:
    """count processes that each keep a core busy until killed."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def failures(output: str) -> list:
    """The node ids of the failed and errored tests in pytest's short summary (-rfE), a round's mark left out."""
    names = re.findall(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    return [without_round(name) for name in names]


def without_round(name: str) -> str:
    """A test's node id without the round's mark, wherever pytest put it among the parameters: test[2of9-odd]."""
    test, bracket, parameters = name.partition("[")
    kept = [part for part in parameters.rstrip("]").split("-") if not re.fullmatch(r"\d+of\d+", part)]
    return f"{test}[{'-'.join(kept)}]" if bracket and kept else test


def run(python: str, args: list, repeat: int) -> tuple:
    """One run of pytest: (its exit code, the failures it reported, what it printed last)."""
    env = dict(os.environ, **{REPEAT: str(repeat)})
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "tools"), env.get("PYTHONPATH", "")])
    command = [python, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"]
    command += ["-p", "stress"] if repeat > 1 else []
    with tempfile.TemporaryFile("w+", encoding="utf-8") as output:  # a file, not a pipe: nothing can fill up
        code = subprocess.call(command + args, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        output.seek(0)
        text = output.read()
    return code, failures(text), text.strip().splitlines()[-1:] or [""]


def main(argv: list) -> int:
    """Parse the options, load the machine, run, count; 0 if nothing failed."""
    rounds, load, python, args = 10, os.cpu_count() or 1, sys.executable, []
    words = list(argv)
    while words:
        word = words.pop(0)
        if word in ("-h", "--help"):
            print(__doc__)
            return 0
        if word in ("-n", "--load", "--python") and words:
            value = words.pop(0)
            if word == "--python":
                python = value
            elif not value.isdigit():
                print(f"stress: {word} takes a number, not {value!r}", file=sys.stderr)
                return 2
            elif word == "-n":
                rounds = int(value)
            else:
                load = int(value)
        elif "[" in word and rounds > 1:
            # Each repeat adds the round to the test's parameters, so "name[p]" no longer names a collected test.
            name, _, parameter = word.partition("[")
            print(f"stress: {word} names one parameter set, which the repeats rename: choose it with -k, as in "
                  f"{name} -k {parameter.rstrip(']')!r}", file=sys.stderr)
            return 2
        else:
            args.append(word)
    counted, started = collections.Counter(), time.monotonic()
    loops = busy_loops(load)
    try:
        runs = [(args, rounds)] if args else [([], 1)] * rounds  # chosen tests: n rounds in one run
        for number, (chosen, repeat) in enumerate(runs, 1):
            code, failed, last = run(python, chosen, repeat)
            counted.update(failed)
            if code not in (0, 5) and not failed:  # 5: nothing collected; otherwise a crash pytest did not itemize
                counted[f"pytest exited {code}: {last[0]}"] += 1
            print(f"run {number} of {len(runs)}: {last[0]}", flush=True)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    print(f"\n{'whole suite' if not args else ' '.join(args)}: {rounds} rounds, {load} busy loops, "
          f"{python}, {time.monotonic() - started:.0f} s")
    for name, times in counted.most_common():
        print(f"  {times:4} x {name}")
    print(f"failures: {sum(counted.values())}")
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
