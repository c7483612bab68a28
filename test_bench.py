"""bench.py --quick runs and prints every row it promises (no timing is asserted here: bench.py measures)."""

import importlib.util
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
OUR_ROWS = ["memory: mcp_min", "memory: floor", "stdio: mcp_min (line driver)", "stdio: floor (line driver)",
            "stdio: mcp_min (MCPClient)", "http: mcp_min (server in a thread)",
            "start: python -c pass (floor)", "start: server_demo.py"]
SDK_ROWS = ["memory: SDK (in-memory streams, mode=legacy)", "memory: SDK (direct dispatch, mode=auto)",
            "stdio: SDK client -> SDK server", "start: SDK server"]


def test_bench_quick_prints_each_row_with_a_number_and_the_ratios():
    # Every row ends in a positive figure; the SDK's rows appear exactly when mcp is importable.
    done = subprocess.run([sys.executable, str(HERE / "bench.py"), "--quick"], capture_output=True, text=True,
                          timeout=180, cwd=HERE)
    assert done.returncode == 0, done.stderr[-2000:]
    figures = {}
    for line in done.stdout.splitlines():
        match = re.fullmatch(r"(\S.*?)\s{2,}([\d,]+) (calls/s|ms)", line)
        if match:
            figures[match.group(1)] = int(match.group(2).replace(",", ""))
    with_sdk = importlib.util.find_spec("mcp") is not None
    assert sorted(figures) == sorted(OUR_ROWS + (SDK_ROWS if with_sdk else []))
    assert all(value > 0 for name, value in figures.items() if not name.startswith("start:"))
    assert "in-memory: mcp_min / floor" in done.stdout
    assert "start: server_demo.py / python -c pass" in done.stdout
    assert ("stdio: mcp_min (MCPClient) / SDK" in done.stdout) == with_sdk
