"""What the wire board costs a session while nobody watches: board.py beside the tap (tap.py), in one run.

    python tools/bench_board.py          # about half a minute
    python tools/bench_board.py --quick  # a few seconds, rougher

Two measures, each the median of alternating rounds, each relay a fresh process logging to /dev/null:
  round trips  a host sends a ping and waits for its answer, again and again (what a session does);
               the server is a minimal responder, so the relay's own cost is as visible as it can be
  bulk         many lines in flight at once, echoed back by `cat`: the relay's throughput in MB/s
The board is also measured with one page open (a viewer reading the event stream), for comparison.
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the project's folder (this file is in tools/)
TAP = [sys.executable, os.path.join(HERE, "tap.py"), "--log", os.devnull, "--"]
BOARD = [sys.executable, os.path.join(HERE, "board.py"), "--log", os.devnull, "--"]
RESPONDER = [sys.executable, "-c", "import json, sys\n"
             "for line in sys.stdin.buffer:\n"
             "    answer = {'jsonrpc': '2.0', 'id': json.loads(line)['id'], 'result': {}}\n"
             "    sys.stdout.write(json.dumps(answer) + '\\n')\n"
             "    sys.stdout.flush()\n"]
CAT = ["cat"]


def start(relay: list, server: list, watch: bool = False):
    """A relay in front of server; with watch, one viewer reads the board's event stream meanwhile."""
    process = subprocess.Popen(relay + server, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE if relay is BOARD else subprocess.DEVNULL, bufsize=0)
    if relay is BOARD:
        url = process.stderr.readline().decode().split()[1]
        threading.Thread(target=drain, args=(process.stderr,), daemon=True).start()
        if watch:
            stream = urllib.request.urlopen(url + "events", timeout=30)
            threading.Thread(target=drain, args=(stream,), daemon=True).start()
    return process


def drain(stream):
    """Read a stream to its end, keeping nothing."""
    while stream.read(65536):
        pass


def stop(process):
    """Close the host's side and wait."""
    process.stdin.close()
    process.wait(timeout=30)
    process.stdout.close()


def round_trips(relay: list, seconds: float, watch: bool = False) -> float:
    """Pings answered per second through relay, one at a time."""
    process = start(relay, RESPONDER, watch)
    reader = process.stdout
    count, buffer = 0, b""
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        process.stdin.write(b'{"jsonrpc": "2.0", "id": %d, "method": "ping"}\n' % count)
        while b"\n" not in buffer:
            buffer += os.read(reader.fileno(), 65536)
        buffer = buffer.partition(b"\n")[2]
        count += 1
    rate = count / (time.perf_counter() - began)
    stop(process)
    return rate


def bulk(relay: list, megabytes: float, watch: bool = False) -> float:
    """MB per second of lines echoed through relay with many in flight."""
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": "x" * 150}}).encode() + b"\n"
    lines = int(megabytes * 1e6 / len(line))
    process = start(relay, CAT, watch)

    def write():
        for _ in range(lines // 100):
            process.stdin.write(line * 100)
        process.stdin.close()

    began = time.perf_counter()
    threading.Thread(target=write, daemon=True).start()
    received = 0
    while chunk := os.read(process.stdout.fileno(), 1 << 20):
        received += len(chunk)
    elapsed = time.perf_counter() - began
    process.wait(timeout=30)
    process.stdout.close()
    return received / 1e6 / elapsed


def median_of(measure, relays: dict, rounds: int) -> dict:
    """Each relay measured rounds times, the relays alternating, so that drifts hit all alike; the medians."""
    results = {name: [] for name in relays}
    for _ in range(rounds):
        for name, (relay, watch) in relays.items():
            results[name].append(measure(relay, watch))
    return {name: statistics.median(values) for name, values in results.items()}


def main(argv: list | None = None) -> int:
    """Measure and print the table."""
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    rounds, seconds, megabytes = (3, 0.5, 5) if quick else (7, 1.5, 20)
    relays = {"tap": (TAP, False), "board": (BOARD, False), "board, one page open": (BOARD, True)}
    trips = median_of(lambda relay, watch: round_trips(relay, seconds, watch), relays, rounds)
    flow = median_of(lambda relay, watch: bulk(relay, megabytes, watch), relays, rounds)
    print(f"median of {rounds} alternating rounds; Python {sys.version.split()[0]}, {os.cpu_count()} cores\n")
    print("| relay | round trips/s | board / tap | bulk MB/s | board / tap |")
    print("|---|---:|---:|---:|---:|")
    for name in relays:
        print(f"| {name} | {trips[name]:,.0f} | {trips[name] / trips['tap']:.2f} | {flow[name]:,.1f} | "
              f"{flow[name] / flow['tap']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
