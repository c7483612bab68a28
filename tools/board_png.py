"""Redraw docs/board.png, the README's picture of the wire board: python tools/board_png.py (needs chromium).

The lab's client runs course 000's worked trace and a tool that reports progress through `board.py --hold
--fault stray-line`, then closes its side; the board keeps the page up, and headless Chromium takes the shot.
"""

import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent  # the project's folder (this file is in tools/)
sys.path.insert(0, str(ROOT))

from mcp_full import MCPClient, RPCError  # noqa: E402
from mcp_stdio import StdioTransport  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


def main() -> int:
    """Run the session, photograph the page with message #12 selected, stop the board."""
    os.chdir(ROOT)  # relative paths: the page's header shows the command as a student would type it
    command = [sys.executable, "board.py", "--hold", "--log", os.devnull, "--fault", "stray-line", "--",
               "python3", "server_demo.py"]
    transport = StdioTransport(command, stderr=subprocess.PIPE)
    url = transport.process.stderr.readline().decode().split()[1]
    client = MCPClient(transport, name="client_demo", on_progress=lambda p: None, on_log=lambda p: None)
    client.initialize(protocol_version="2025-06-18")
    client.list_tools()
    client.call_tool("add", {"x": 2, "y": 3})
    try:
        client.call_tool("delete_db")
    except RPCError:
        pass  # -32600: not in this session's allow-list, as in course 000's step 5
    client.call_tool("enable_subtract")
    client.call_tool("count_slowly", {"n": 2}, progress=True)
    client.request("resources/subscribe", {"uri": "lab://readme"})
    transport.process.stdin.close()  # the host leaves; --hold keeps the page
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["chromium", *FLAGS, f"--user-data-dir={profile}", "--window-size=1500,940",
                        "--virtual-time-budget=5000", f"--screenshot={ROOT / 'docs' / 'board.png'}", url + "#13"],
                       check=True, capture_output=True, timeout=60)
    transport.process.terminate()
    transport.process.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
