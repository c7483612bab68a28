"""Student servers that are hostile to the machine grading them, and the class the grading tests and the bench grade:
each hostile server is the naive base of naive_servers.py (or one of its mistakes) with one thing a grader must
bound, and none of them means harm.

    python corpus/hostile_servers.py NAME    # one of them (or of the class's other servers)
    python corpus/hostile_servers.py --list  # each, and what stops it on the card

What stops each, on a card with the class's small bounds (ASSIGNMENT): a bound the card names, or nothing, where the
card judges the server as it is and ends what it left running. make_class() writes the class: two good students,
eleven of naive_servers.py's mistakes, two who left out a tool the assignment names, one who handed in nothing, and
the nine hostile servers.
"""

import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import naive_servers
from naive_servers import Base, CrashesOnHandlerBug, NeverExits

SLEEPER = ["sleep", "1000"]  # a child that does nothing, for a long time


class MemoryWithoutEnd(Base):
    """An index loaded at the start that never finishes loading: 10 MB more every 5 ms, and never a response."""

    def __init__(self):
        super().__init__()
        self.index = []
        while True:
            self.index.append(b"x" * 10_000_000)
            time.sleep(0.005)


class FiftyChildren(Base):
    """A pool of fifty worker processes, started with the server."""

    def __init__(self):
        super().__init__()
        self.workers = [subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL) for _ in range(50)]


class GigabytesOnStdout(Base):
    """A debugging dump at the start that never ends: the same long line on stdout, for ever, and never a response."""

    def __init__(self):
        super().__init__()
        line = b"dump " + b"y" * 65530 + b"\n"
        while True:
            sys.stdout.buffer.write(line)


class GigabytesOnStderr(Base):
    """A log that never stops: the same long line on stderr, for ever, from the start."""

    def __init__(self):
        super().__init__()
        threading.Thread(target=self.log, daemon=True).start()

    def log(self):
        line = b"log " + b"z" * 65530 + b"\n"
        while True:
            sys.stderr.buffer.write(line)


class ChildKeepsStdout(CrashesOnHandlerBug):
    """crashes-on-handler-bug, with a child started at the start that keeps the server's stdout open after the
    server is gone."""

    def __init__(self):
        super().__init__()
        self.child = subprocess.Popen(SLEEPER)  # stdin, stdout and stderr are the server's


class SetsidChild(Base):
    """A background worker that leaves the server's session as a daemon does (fork, setsid, fork), then sleeps."""

    def __init__(self):
        super().__init__()
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp(SLEEPER[0], SLEEPER)
            os._exit(0)
        os.waitpid(child, 0)


class BusyWaits(Base):
    """Polls for work in a busy loop: a tenth of a second of CPU time before each answer."""

    def handle(self, message):
        until = time.process_time() + 0.1
        while time.process_time() < until:
            pass
        return super().handle(message)


class IgnoresSigterm(NeverExits):
    """never-exits (a thread keeps it alive after stdin ends), and SIGTERM ignored too."""

    def __init__(self):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        super().__init__()


class RequestsWithoutEnd(Base):
    """Once it has answered initialize, asks the client for its roots again and again, and reads nothing more."""

    def write(self, message: dict):
        super().write(message)
        if "protocolVersion" in (message.get("result") or {}):
            for n in range(sys.maxsize):
                super().write({"jsonrpc": "2.0", "id": f"roots-{n}", "method": "roots/list"})


HOSTILE = {  # name: (the server, what stops it on the card: the bound it goes over, or None)
    "memory-without-end": (MemoryWithoutEnd, "memory_mb"),
    "fifty-children": (FiftyChildren, "processes"),
    "gigabytes-on-stdout": (GigabytesOnStdout, "stdout_mb"),
    "gigabytes-on-stderr": (GigabytesOnStderr, "stderr_mb"),
    "child-keeps-stdout": (ChildKeepsStdout, None),  # judged as crashes-on-handler-bug; the child ended
    "setsid-child": (SetsidChild, None),  # judged as the base; the daemon ended
    "busy-waits": (BusyWaits, "cpu_seconds"),
    "ignores-sigterm": (IgnoresSigterm, None),  # judged as never-exits; SIGKILL ends it
    "requests-without-end": (RequestsWithoutEnd, "stdout_lines"),
}

class NoDivide(Base):
    """A student who left divide out."""

    def __init__(self):
        super().__init__()
        self.tools.pop("divide")
        self.required.pop("divide")


class NoAllowList(Base):
    """A student who left delete_db out, the tool the allow-list refuses."""

    def __init__(self):
        super().__init__()
        self.tools.pop("delete_db")


LEFT_OUT = {"no-divide": NoDivide, "no-allow-list": NoAllowList}  # the two who left out a tool the assignment names
SERVERS = {"base": Base} | {name: server for name, (server, _) in naive_servers.MISTAKES.items()} | LEFT_OUT | {
    name: server for name, (server, _) in HOSTILE.items()}

# ---- the class ----

ASSIGNMENT = {"level": "000", "flags": naive_servers.FLAGS + ["--timeout", "5"],
              "points": {"no-traceback": 2, "exit-on-eof": 0.5}, "optional": ["allow-list"],
              "bounds": {"memory_mb": 200, "processes": 32, "cpu_seconds": 3, "stdout_mb": 4, "stderr_mb": 4,
                         "wall_seconds": 120}}
BROKEN = ["answers-notifications", "parse-error-ignored", "no-jsonrpc-check", "crashes-on-handler-bug",
          "traceback-on-wire", "no-gate", "capabilities-true", "allow-list-ignored", "stops-after-parse-error",
          "print-on-stdout", "never-exits"]  # naive mistakes of course 000 and stdio
GOOD = {"alice": "base", "bob": "base"}
HERE = pathlib.Path(__file__).resolve().parent  # corpus/


def make_class(folder: pathlib.Path) -> list:
    """The class in folder/submissions, a submission a subfolder holding its server.py (none in "empty"), and its
    assignment in folder/assignment.json; the submissions' names, sorted."""
    names = [*GOOD, *BROKEN, *LEFT_OUT, "empty", *HOSTILE]
    for name in names:
        (folder / "submissions" / name).mkdir(parents=True)
        if name != "empty":
            (folder / "submissions" / name / "server.py").write_text(
                f"import sys\nsys.path.insert(0, {str(HERE)!r})\nimport hostile_servers\n"
                f"hostile_servers.SERVERS[{GOOD.get(name, name)!r}]().main()\n")
    (folder / "assignment.json").write_text(json.dumps(ASSIGNMENT, indent=1))
    return sorted(names)


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        for name, (server, bound) in HOSTILE.items():
            print(f"{name:22} {bound or 'no bound':12} {' '.join(server.__doc__.split())}")
    else:
        SERVERS[sys.argv[1]]().main()
