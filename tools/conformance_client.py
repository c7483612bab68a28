"""Drive mcp_min's client through the official conformance suite's client scenarios: what a user of the client
would do with each scenario's server, and nothing of the protocol (that is the client's own work).

    npx @modelcontextprotocol/conformance client --scenario tools_call \
        --command "python tools/conformance_client.py"

The suite runs this with the scenario server's URL as the last argument, the scenario's name in
MCP_CONFORMANCE_SCENARIO, its wire version in MCP_CONFORMANCE_PROTOCOL_VERSION and, for some, the calls to make
in MCP_CONFORMANCE_CONTEXT ({"toolCalls": [{name, arguments}]}; for the authorization scenarios, the client id,
secret and issuer a user would have been given). Its OAuth client is configured as a user's would be: the client id
and secret if given, the address of its client metadata document, and an authorize callback that stands for the
browser (the suite's authorization servers approve by themselves: the callback follows the redirect). With --trace,
the wire goes to stderr, OAuth's steps included, every secret redacted. The standard library only, and mcp_min.
"""

import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # the project's folder: mcp_full, mcp_http

import mcp_full  # noqa: E402
import mcp_http  # noqa: E402
import mcp_oauth  # noqa: E402

SAMPLES = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "object": {}, "array": []}
FOCAL_TOOL, ECHO_TOOL = "json_schema_2020_12_tool", "json_schema_echo"  # json-schema-2020-12-preservation's
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # where this client's document would be
REDIRECT_URI = "http://127.0.0.1:33418/callback"


def sample(schema: dict):
    """A value a user might give for schema: its default, its first choice, or one of its type."""
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "string")
    return SAMPLES.get(kind[0] if isinstance(kind, list) else kind, "x")


def arguments_for(schema: dict) -> dict:
    """Arguments for a tool: a sample value for each required property."""
    properties = schema.get("properties", {})
    return {name: sample(properties.get(name, {})) for name in schema.get("required", [])}


def accept(question: dict) -> dict:
    """The user accepts the form as offered: each field at its default, or a sample of its type (SEP-1034)."""
    properties = question["params"].get("requestedSchema", {}).get("properties", {})
    return {"action": "accept", "content": {name: sample(field) for name, field in properties.items()}}


def answer_sampling(question: dict) -> dict:
    """The model's answer to a sampling request."""
    return {"role": "assistant", "model": "conformance", "content": {"type": "text", "text": "ok"}, "stopReason": "endTurn"}


def trace_to_stderr(direction: str, message: dict):
    """The trace hook of --trace: each message (or OAuth step) as one line on stderr."""
    print(f"{direction} {json.dumps(message)}", file=sys.stderr, flush=True)


def drive(url: str, scenario: str, version: str | None, context: dict, trace=None):
    """Connect in the era of version, then do what the scenario's server is there to see."""
    auth = mcp_oauth.OAuthClient(lambda address: mcp_oauth.fetch_redirect(address, REDIRECT_URI),
                                 client_id=context.get("client_id"), client_secret=context.get("client_secret"),
                                 issuer=context.get("issuer"), private_key_pem=context.get("private_key_pem"),
                                 client_metadata_url=CLIENT_METADATA_URL,
                                 redirect_uri=REDIRECT_URI, client_name="mcp_min-conformance", trace=trace)
    transport = mcp_http.HttpTransport(url, trace=trace, timeout=20, auth=auth)
    client = mcp_full.MCPClient(transport, name="mcp_min-conformance",
                                on_elicit=accept, on_sample=answer_sampling,
                                on_roots=lambda question: {"roots": [{"uri": "file:///tmp", "name": "tmp"}]})
    try:
        if version in mcp_full.STATELESS_VERSIONS or version is None:
            client.connect("auto")  # server/discover; the handshake if the server is older
        else:
            client.initialize(version)
        tools = {tool["name"]: tool for tool in client.list_tools()}
        if scenario in ("initialize", "json-schema-ref-no-deref", "request-metadata"):
            return  # they watch the connection and the listing
        if scenario == "json-schema-2020-12-preservation":
            client.call_tool(ECHO_TOOL, {"schema": tools[FOCAL_TOOL]["inputSchema"]})
            return
        if scenario == "http-standard-headers":
            for resource in client.list_resources()[:1]:
                client.read_resource(resource["uri"])
            for prompt in client.list_prompts()[:1]:
                client.get_prompt(prompt["name"], {a["name"]: "x" for a in prompt.get("arguments", []) if a.get("required")})
        calls = context.get("toolCalls") or [{"name": name, "arguments": arguments_for(tool.get("inputSchema", {}))}
                                             for name, tool in tools.items()]
        for call in calls:
            client.call_tool(call["name"], call["arguments"])
    finally:
        client.close()


if __name__ == "__main__":
    drive(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION"),
          json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}"), trace_to_stderr if "--trace" in sys.argv else None)
