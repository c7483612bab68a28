"""Student servers that are hostile to the machine grading them, for the class tests: each is the naive base of
naive_servers.py (or one of its mistakes) with one thing a grader must bound, and none of them means harm.

    python maintainers/hostile_servers.py NAME       # one of them
    python maintainers/hostile_servers.py --list     # each, and what stops it on the card

What stops each, on a card with small bounds (maintainers/test_class.py): a bound the card names, or nothing,
where the card judges the server as it is and ends what it left running.
"""

import os
import signal
import subprocess
import sys
import threading
import time

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
    """A debugging dump left in: the same long line on stdout, for ever, from the start."""

    def __init__(self):
        super().__init__()
        threading.Thread(target=self.dump, daemon=True).start()

    def dump(self):
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
    """Background workers that leave the server's session (fork, setsid, fork: daemons) and spin, one a core; the
    server waits 50 ms for them before each answer."""

    def __init__(self):
        super().__init__()
        for _ in range(os.cpu_count() or 1):
            subprocess.Popen([sys.executable, "-c", "import os\n"
                              "if os.fork() == 0:\n"
                              "    os.setsid()\n"
                              "    if os.fork() == 0:\n"
                              "        while True: pass\n"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()

    def handle(self, message):
        time.sleep(0.05)
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
    "setsid-child": (SetsidChild, "cpu_seconds"),
    "ignores-sigterm": (IgnoresSigterm, None),  # judged as never-exits; SIGKILL ends it
    "requests-without-end": (RequestsWithoutEnd, "stdout_lines"),
}

if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        for name, (server, bound) in HOSTILE.items():
            print(f"{name:22} {bound or 'no bound':12} {server.__doc__}")
    else:
        HOSTILE[sys.argv[1]][0]().main()
