"""Interop with the official TypeScript SDK (@modelcontextprotocol/sdk): its client, the one the MCP Inspector is built
on, against server_demo.py; and mcp_min's client against the SDK's reference server, server-everything.

Skipped unless `node` is on PATH and MCP_TS_SDK names a node_modules folder that holds the SDK (and, for the
second, server-everything). `.ci/run` installs both; by hand:
    npm install --prefix /tmp/ts @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/server-everything@2026.8.31
    MCP_TS_SDK=/tmp/ts/node_modules python -m pytest tests/interop/test_interop_typescript.py
"""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys

import pytest

import mcp_full
import mcp_http

HERE = pathlib.Path(__file__).resolve().parents[2]  # the project's folder (this file is in tests/interop/)
SDK = os.environ.get("MCP_TS_SDK", "")
EVERYTHING = pathlib.Path(SDK) / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
pytestmark = pytest.mark.skipif(
    not shutil.which("node") or not (pathlib.Path(SDK) / "@modelcontextprotocol" / "sdk").is_dir(),
    reason="the TypeScript SDK is not installed (set MCP_TS_SDK to a node_modules folder that holds it)")

# A script for node: connect, make the course's calls, print one JSON object of what came back.
CLIENT = r"""
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
(async () => {
  const [kind, target, python] = process.argv.slice(2);
  const transport = kind === "stdio"
    ? new StdioClientTransport({ command: python, args: [target], stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target));
  const client = new Client({ name: "ts-interop", version: "0.0.1" });
  await client.connect(transport);
  const seen = { server: client.getServerVersion(), capabilities: client.getServerCapabilities() };
  seen.tools = (await client.listTools()).tools.map((tool) => tool.name);
  seen.add = await client.callTool({ name: "add", arguments: { x: 2, y: 3 } });
  seen.raised = await client.callTool({ name: "count_lessons", arguments: { course: "postgres" } });
  try {
    await client.callTool({ name: "delete_db", arguments: {} });
  } catch (error) {
    seen.forbidden = error.code;
  }
  seen.readme = await client.readResource({ uri: "lab://readme" });
  seen.policy = await client.readResource({ uri: "policy://refunds" });
  seen.prompt = await client.getPrompt({ name: "summarize_incident", arguments: { severity: "high" } });
  seen.complete = await client.complete({ ref: { type: "ref/prompt", name: "summarize_incident" },
                                          argument: { name: "severity", value: "h" } });
  seen.ping = await client.ping();
  await client.close();
  console.log(JSON.stringify(seen));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def run_client(tmp_path, kind: str, target: str) -> dict:
    """Run the TypeScript client against target; what it saw, as a dict."""
    script = tmp_path / "client.cjs"
    script.write_text(CLIENT, encoding="utf-8")
    done = subprocess.run(["node", str(script), kind, target, sys.executable], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "NODE_PATH": SDK})
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def check_the_course_calls(seen: dict):
    """What every transport must give the TypeScript client: course 000's answers, and the lattice."""
    assert seen["server"] == {"name": "mcp_min-demo", "version": "0.1.0"}
    assert seen["capabilities"]["tools"] == {"listChanged": True}
    assert seen["tools"][:3] == ["add", "weather", "delete_db"]
    assert seen["add"] == {"content": [{"type": "text", "text": "5"}]}
    assert seen["raised"]["isError"] is True
    assert seen["raised"]["content"][0]["text"] == "ERROR: unknown course 'postgres'; this server knows only 'mcp'"
    assert seen["forbidden"] == -32600
    assert seen["readme"]["contents"][0]["uri"] == "lab://readme"
    assert seen["policy"]["contents"] == [{"uri": "policy://refunds", "mimeType": "text/plain",
                                           "text": "Refunds are granted within 30 days of purchase."}]
    assert seen["prompt"]["messages"][0]["content"]["text"].startswith("Summarize this high-severity incident")
    assert seen["complete"]["completion"]["values"] == ["high"]
    assert seen["ping"] == {}


def test_typescript_client_drives_server_demo_over_stdio(tmp_path):
    # The TypeScript SDK's client launches server_demo.py, as the Inspector and desktop hosts do.
    check_the_course_calls(run_client(tmp_path, "stdio", str(HERE / "server_demo.py")))


def test_typescript_client_drives_server_demo_over_http(tmp_path):
    # The same calls over Streamable HTTP, with the session the handshake opens.
    server = subprocess.Popen([sys.executable, str(HERE / "server_demo.py"), "--http", "--port", "0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        url = server.stderr.readline().split()[-1]  # "mcp_min: serving http://127.0.0.1:PORT/mcp"
        check_the_course_calls(run_client(tmp_path, "http", url))
    finally:
        server.terminate()
        assert server.wait(timeout=10) == 0
        server.stderr.close()


def free_port() -> int:
    """A port no one listens on now (server-everything takes its port from PORT and cannot be asked for any)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        return probe.getsockname()[1]


@pytest.mark.skipif(not EVERYTHING.is_file(), reason="server-everything is not installed beside the SDK")
def test_mcp_min_client_falls_back_to_the_handshake_and_drives_server_everything_over_http():
    # A TypeScript SDK 1.x server answers server/discover HTTP 400 with a -32000 error of id null: connect("auto")
    # takes that as "no 2026-07-28 here" and initializes, as it does over stdio.
    port = free_port()
    server = subprocess.Popen(["node", str(EVERYTHING), "streamableHttp"], env={**os.environ, "PORT": str(port)},
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening on port" in server.stderr.readline()
        sent = []
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=30,
                                                           trace=lambda direction, message: sent.append(message)))
        client.connect("auto")
        assert [message["error"]["code"] for message in sent if "error" in message] == [-32000]
        assert (client.era, [message.get("method") for message in sent if "method" in message]) == (
            "handshake", ["server/discover", "initialize", "notifications/initialized"])
        tools = [tool["name"] for tool in client.list_tools()]
        assert {"echo", "get-sum"} <= set(tools), tools
        assert client.call_tool("echo", {"message": "hi"})["content"] == [{"type": "text", "text": "Echo: hi"}]
        assert client.call_tool("get-sum", {"a": 2, "b": 3})["content"] == [{"type": "text",
                                                                             "text": "The sum of 2 and 3 is 5."}]
        client.transport.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stderr.close()
