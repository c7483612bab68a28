"""How fast mcp_min is: tools/call round trips per second and start-up time, beside the floors (the least
any implementation must spend) and the official SDK, all measured in one run on one machine.

    python bench.py              # about a minute and a half
    python bench.py --quick      # a few seconds: fewer and shorter rounds
    /tmp/sdkvenv/bin/python bench.py   # where `mcp` is importable, the official SDK's rows too

Rates swing by 10% from run to run, so contenders that are compared take turns over several short
rounds, and each row is the median of its rounds. Standard library only; the SDK rows are optional.
"""

import argparse
import json
import os
import pathlib
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import mcp_min
import server_demo

HERE = pathlib.Path(__file__).resolve().parent
DEMO = [sys.executable, str(HERE / "server_demo.py")]
ADD = {"name": "add", "arguments": {"x": 2, "y": 3}}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
# The cheapest stdio server there is: parse each line and write it back, nothing else.
ECHO_SERVER = """import json, sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    out.write(json.dumps(json.loads(line)).encode() + b"\\n")
    out.flush()
"""
# The official SDK's server doing the same work: one add tool.
SDK_SERVER = """from mcp.server import MCPServer

server = MCPServer("sdk-bench")


@server.tool()
def add(x: int, y: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return x + y


if __name__ == "__main__":
    server.run()
"""


def rate(round_trip, seconds: float) -> float:
    """Round trips per second: call round_trip(i) in batches until seconds have passed."""
    batch, done = 1, 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for i in range(done, done + batch):
            round_trip(i)
        done += batch
        batch = min(batch * 2, 256)  # few clock reads, yet a slow contender stops near the deadline
    return done / elapsed


def take_turns(contenders: dict, rounds: int, seconds: float) -> dict:
    """Run each contender for seconds, in turn, rounds times; the median rate of each."""
    rates = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, round_trip in contenders.items():
            rates[name].append(rate(round_trip, seconds))
    return {name: statistics.median(values) for name, values in rates.items()}


class LineDriver:
    """Drive any stdio server the same bare way: write one line, read one line back."""

    def __init__(self, command: list):
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self.stdin = self.process.stdin.fileno()
        self.stdout = self.process.stdout.fileno()
        self.buffer = b""

    def exchange(self, message: dict) -> dict:
        """Send message as a line; return the next line that comes back, parsed."""
        os.write(self.stdin, json.dumps(message).encode() + b"\n")
        while b"\n" not in self.buffer:
            chunk = os.read(self.stdout, 65536)
            if not chunk:
                raise ConnectionError("the server closed its stdout")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def close(self):
        """Close the server's input and wait for it to exit."""
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


def in_memory_rows(rounds: int, seconds: float) -> dict:
    """mcp_min's client and server in one process, against the four json calls a round trip needs."""
    client = mcp_min.MCPClient(mcp_min.InMemoryTransport(server_demo.make_server()))
    client.initialize()
    request = mcp_min.request(1, "tools/call", ADD)
    response = client.transport.send(request)
    assert response["result"] == {"content": [{"type": "text", "text": "5"}]}, response

    def floor(i):
        json.loads(json.dumps(request))
        json.loads(json.dumps(response))

    return take_turns({"memory: mcp_min": lambda i: client.call_tool("add", {"x": 2, "y": i}),
                       "memory: floor": floor}, rounds, seconds)


def stdio_rows(rounds: int, seconds: float) -> dict:
    """server_demo.py and the echo floor, driven line by line the same way; then mcp_min's own client."""
    with tempfile.TemporaryDirectory() as tmp:
        echo_path = pathlib.Path(tmp) / "echo_server.py"
        echo_path.write_text(ECHO_SERVER)
        ours, echo = LineDriver(DEMO), LineDriver([sys.executable, str(echo_path)])
        client = mcp_min.MCPClient(mcp_min.StdioTransport(DEMO))
        try:
            ours.exchange(mcp_min.request(0, "initialize", INIT_PARAMS))
            os.write(ours.stdin, json.dumps(mcp_min.notification("notifications/initialized")).encode() + b"\n")
            client.initialize()
            first = ours.exchange(mcp_min.request(1, "tools/call", ADD))
            assert first["result"] == {"content": [{"type": "text", "text": "5"}]}, first
            return take_turns({
                "stdio: mcp_min (line driver)": lambda i: ours.exchange(mcp_min.request(i, "tools/call", ADD)),
                "stdio: floor (line driver)": lambda i: echo.exchange(mcp_min.request(i, "tools/call", ADD)),
                "stdio: mcp_min (MCPClient)": lambda i: client.call_tool("add", {"x": 2, "y": i}),
            }, rounds, seconds)
        finally:
            ours.close()
            echo.close()
            client.close()


def http_rows(rounds: int, seconds: float) -> dict:
    """HttpTransport to http_server in a thread, one kept-alive connection."""
    httpd = mcp_min.http_server(lambda: server_demo.make_server(), port=0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    client = mcp_min.MCPClient(mcp_min.HttpTransport(f"http://127.0.0.1:{httpd.server_address[1]}/mcp"))
    try:
        client.initialize()
        return take_turns({"http: mcp_min (server in a thread)": lambda i: client.call_tool("add", {"x": 2, "y": i})},
                          rounds, seconds)
    finally:
        client.close()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def sdk_rows(rounds: int, seconds: float, sdk_script: pathlib.Path) -> dict:
    """The official SDK's client against its own server: in process (both ways it offers), and over stdio."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.server import MCPServer

    server = MCPServer("sdk-bench")

    @server.tool()
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    async def async_rate(client, seconds):
        done, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            await client.call_tool("add", {"x": 2, "y": done})
            done += 1
        return done / elapsed

    async def measure(target, mode):
        async with Client(target, mode=mode) as client:
            result = await client.call_tool("add", {"x": 2, "y": 3})
            assert result.content[0].text == "5", result
            return statistics.median([await async_rate(client, seconds) for _ in range(rounds)])

    stdio_target = StdioServerParameters(command=sys.executable, args=[str(sdk_script)])
    return {
        "memory: SDK (in-memory streams, mode=legacy)": anyio.run(measure, server, "legacy"),
        "memory: SDK (direct dispatch, mode=auto)": anyio.run(measure, server, "auto"),
        "stdio: SDK client -> SDK server": anyio.run(measure, stdio_target, "legacy"),
    }


def first_answer_time(command: list) -> float:
    """Seconds from launching a stdio server to its answer to ping (after initialize)."""
    lines = [mcp_min.request(1, "initialize", INIT_PARAMS), mcp_min.notification("notifications/initialized"),
             mcp_min.request(2, "ping")]
    wire = b"".join(json.dumps(message).encode() + b"\n" for message in lines)
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               bufsize=0, env=STARTUP_ENV)
    process.stdin.write(wire)
    buffer = b""
    while b'"id": 2' not in buffer and b'"id":2' not in buffer:
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            raise ConnectionError(f"{command} exited before answering ping")
        buffer += chunk
    elapsed = time.perf_counter() - start
    process.stdin.close()
    process.wait(timeout=10)
    process.stdout.close()
    return elapsed


def bare_python_time() -> float:
    """Seconds to launch `python -c pass` and see it exit: the floor of any Python server's start."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=STARTUP_ENV)
    return time.perf_counter() - start


# Start-up is timed as on a student's machine: Python caches compiled modules (.pyc). Where the environment
# forbids that (PYTHONDONTWRITEBYTECODE, set on some machines), each launch would compile mcp_min.py again,
# about 30 ms; so the children run without it, and one untimed round fills the cache first.
STARTUP_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def startup_rows(runs: int, sdk_script: pathlib.Path | None) -> dict:
    """Median start-to-first-answer times, the contenders taking turns."""
    contenders = {"start: python -c pass (floor)": bare_python_time,
                  "start: server_demo.py": lambda: first_answer_time(DEMO)}
    if sdk_script:
        contenders["start: SDK server"] = lambda: first_answer_time([sys.executable, str(sdk_script)])
    times = {name: [] for name in contenders}
    for measure in contenders.values():
        measure()  # untimed: fills the .pyc cache
    for _ in range(runs):
        for name, measure in contenders.items():
            times[name].append(measure())
    return {name: statistics.median(values) for name, values in times.items()}


def sdk_available() -> bool:
    """Whether the official SDK can be imported here."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        return False
    return True


def ratio(rows: dict, top: str, bottom: str):
    """rows[top] / rows[bottom], or None when either row is missing."""
    return rows[top] / rows[bottom] if top in rows and bottom in rows else None


GOALS = [  # (label, numerator, denominator, goal, True when higher is better)
    ("in-memory: mcp_min / floor", "memory: mcp_min", "memory: floor", 0.5, True),
    ("stdio: mcp_min / floor, both by the line driver", "stdio: mcp_min (line driver)", "stdio: floor (line driver)",
     0.7, True),
    ("stdio: mcp_min's MCPClient / floor", "stdio: mcp_min (MCPClient)", "stdio: floor (line driver)", 0.7, True),
    ("in-memory: mcp_min / SDK (in-memory streams)", "memory: mcp_min", "memory: SDK (in-memory streams, mode=legacy)",
     10, True),
    ("in-memory: mcp_min / SDK (direct dispatch)", "memory: mcp_min", "memory: SDK (direct dispatch, mode=auto)",
     10, True),
    ("stdio: mcp_min (MCPClient) / SDK", "stdio: mcp_min (MCPClient)", "stdio: SDK client -> SDK server", 10, True),
    ("start: server_demo.py / python -c pass", "start: server_demo.py", "start: python -c pass (floor)", 1.3, False),
    ("start: server_demo.py / SDK server", "start: server_demo.py", "start: SDK server", None, False),
]


def report(rows: dict, args, markdown: bool) -> str:
    """The rows and the ratios, as plain text or as a Markdown table."""
    lines = []
    if markdown:
        lines += ["| measured | value |", "|---|---:|"]
        lines += [f"| {name} | {format_value(name, value)} |" for name, value in rows.items()]
        lines += ["", "| ratio | value | goal | met |", "|---|---:|---|---|"]
    else:
        lines += [f"{name:<52} {format_value(name, value):>16}" for name, value in rows.items()]
        lines += ["", f"{'ratio':<52} {'value':>8}   goal"]
    for label, top, bottom, goal, higher in GOALS:
        value = ratio(rows, top, bottom)
        if value is None:
            continue
        target = "" if goal is None else (f">= {goal}" if higher else f"<= {goal}")
        met = "" if goal is None else ("yes" if (value >= goal if higher else value <= goal) else "NO")
        if markdown:
            lines.append(f"| {label} | {value:.2f} | {target} | {met} |")
        else:
            lines.append(f"{label:<52} {value:>8.2f}   {target} {met}".rstrip())
    return "\n".join(lines)


def format_value(name: str, value: float) -> str:
    """A rate as calls per second, a start time in milliseconds."""
    return f"{value * 1000:,.0f} ms" if name.startswith("start:") else f"{value:,.0f} calls/s"


def main(argv=None) -> int:
    """Measure everything, print the rows and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds: fewer, shorter rounds")
    parser.add_argument("--no-sdk", action="store_true", help="skip the official SDK's rows")
    parser.add_argument("--markdown", action="store_true", help="print the results as Markdown tables")
    args = parser.parse_args(argv)
    rounds, seconds, runs = (3, 0.1, 1) if args.quick else (7, 0.6, 11)
    use_sdk = sdk_available() and not args.no_sdk
    print(f"# bench.py{' --quick' if args.quick else ''}: Python {platform.python_version()} on "
          f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores; medians of {rounds} rounds of "
          f"{seconds} s (start: {runs} launches); the SDK rows {'included' if use_sdk else 'skipped: mcp not importable' if not sdk_available() else 'skipped (--no-sdk)'}",
          flush=True)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        sdk_script = None
        if use_sdk:
            sdk_script = pathlib.Path(tmp) / "sdk_server.py"
            sdk_script.write_text(SDK_SERVER)
        rows.update(in_memory_rows(rounds, seconds))
        rows.update(stdio_rows(rounds, seconds))
        rows.update(http_rows(rounds, seconds))
        if use_sdk:
            rows.update(sdk_rows(rounds, seconds, sdk_script))
        rows.update(startup_rows(runs, sdk_script))
    print(report(rows, args, args.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
