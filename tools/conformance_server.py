"""The server the official conformance suite's server scenarios drive: mcp_full's MCPServer offering the fixtures
the scenarios name (test_simple_text, test://static-text, test_simple_prompt...), over Streamable HTTP. Each
fixture is an ordinary tool, resource or prompt: what the suite checks is the protocol around them.

    python tools/conformance_server.py 8931     # serves http://127.0.0.1:8931/mcp
    npx @modelcontextprotocol/conformance server --url http://127.0.0.1:8931/mcp --spec-version 2026-07-28
"""

import base64
import itertools
import pathlib
import sys
from typing import Literal

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # the project's folder: mcp_full, mcp_http

import mcp_http  # noqa: E402
from mcp_full import Context, MCPServer  # noqa: E402

# A 1x1 PNG and a 44-byte silent WAV, base64: the smallest pictures and sounds the scenarios can check.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA="
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
OK = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}

server = MCPServer("mcp_min-conformance", "0.1.0")


# ---- tools ----

@server.tool()
def test_simple_text() -> str:
    """Tests simple text content response."""
    return "This is a simple text response for testing."


@server.tool()
def test_image_content() -> dict:
    """Tests image content response."""
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


@server.tool()
def test_audio_content() -> dict:
    """Tests audio content response."""
    return {"type": "audio", "data": WAV, "mimeType": "audio/wav"}


@server.tool()
def test_embedded_resource() -> dict:
    """Tests embedded resource content response."""
    return {"type": "resource", "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain",
                                             "text": "This is an embedded resource content."}}


@server.tool()
def test_multiple_content_types() -> list:
    """Tests response with multiple content types (text, image, resource)."""
    return [{"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                                              "text": '{"test": "data", "value": 123}'}}]


@server.tool()
def test_tool_with_logging(ctx: Context) -> str:
    """Tests tool that emits log messages during execution."""
    for line in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.log("info", line)
    return "Tool with logging executed successfully"


@server.tool()
def test_tool_with_progress(ctx: Context) -> str:
    """Tests tool that reports progress notifications."""
    for step in (0, 50, 100):
        ctx.progress(step, 100, f"Completed step {step} of 100")
    return str(ctx.progress_token)


@server.tool()
def test_error_handling() -> str:
    """Tests error response handling."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool(headers={"region": "Region"})
def test_custom_headers(region: str, query: str = "") -> str:
    """Echoes its region, which travels in the Mcp-Param-Region header too (2026-07-28)."""
    return f"region {region}"


@server.tool(requires=("sampling",))
def test_missing_capability() -> str:
    """Runs only for a client that declared sampling (else -32021)."""
    return "Success"


@server.tool()
def test_logging_tool(ctx: Context) -> str:
    """Logs a line, which only a request that asked for a log level hears."""
    ctx.log("info", "Diagnostic trace logging activated")
    return "Logging evaluated"


@server.tool()
def test_streaming_elicitation(ctx: Context) -> str:
    """Reports progress on the request's own stream, and asks nothing there."""
    ctx.progress(50, 100)
    return "Streaming complete"


@server.tool()
def greet(name: str) -> str:
    """Greets name: the plain tool the tasks extension's scenarios call beside their task tools."""
    return f"Hello, {name}!"


# ---- changing a list while a subscriptions/listen stream is open (2026-07-28, "Subscriptions") ----
# Each call offers one tool (or prompt) anew, its description counting the changes: the list a client cached
# really differs, so list_changed is no false alarm, and the list stays one entry longer however often it runs.

TOOL_CHANGES, PROMPT_CHANGES = itertools.count(1), itertools.count(1)


@server.tool()
def test_trigger_tool_change() -> str:
    """Changes the tool list: a listen stream that asked for tool changes hears tools/list_changed."""
    change = next(TOOL_CHANGES)
    server.add_tool("test_changed_tool", lambda: "changed",
                    f"Offered anew by test_trigger_tool_change (change {change})", notify=True, replace=True)
    return f"tool list changed ({change})"


@server.tool()
def test_trigger_prompt_change() -> str:
    """Changes the prompt list: a listen stream that asked for prompt changes hears prompts/list_changed."""
    change = next(PROMPT_CHANGES)
    server.add_prompt("test_changed_prompt", lambda: "changed",
                      f"Offered anew by test_trigger_prompt_change (change {change})", notify=True, replace=True)
    return f"prompt list changed ({change})"


ADDRESS = {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}
RICH_SCHEMA = {  # JSON Schema 2020-12's keywords, which a server must pass on as written (SEP-1613, SEP-2106)
    "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "$defs": {"address": ADDRESS},
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
                   "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"},
                   "email": {"type": "string"}},
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]}, "else": {"required": ["email"]}, "additionalProperties": False}
server.add_tool("json_schema_2020_12_tool", lambda **contact: "ok", "Tool with JSON Schema 2020-12 features",
                RICH_SCHEMA)


# ---- asking the client (2026-07-28: input_required rounds; 2025: requests of the server's own) ----

@server.tool()
def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name."""
    return f"Hello, {ctx.elicit('user_name', 'What is your name?', NAME)['content']['name']}!"


@server.tool()
def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    return f"Sampling result: {ctx.sample('sample_request', 'What is the capital of France?', 100)['content']['text']}"


@server.tool()
def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client's roots."""
    return f"Found {len(ctx.roots('roots_request'))} root(s)"


@server.tool()
def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation: the retry carries the signed requestState back."""
    return f"state-ok: {ctx.elicit('confirm', 'Please confirm', OK)['content']['ok']}"


@server.tool()
def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks the user, the model and the roots in one round."""
    answers = ctx.ask({"user_name": {"method": "elicitation/create",
                                     "params": {"message": "What is your name?", "requestedSchema": NAME}},
                       "greeting": {"method": "sampling/createMessage",
                                    "params": {"messages": [{"role": "user", "content": {"type": "text",
                                                                                         "text": "Generate a greeting"}}],
                                               "maxTokens": 50}},
                       "client_roots": {"method": "roots/list", "params": {}}})
    return (f"Name: {answers['user_name']['content']['name']}; Greeting: {answers['greeting']['content']['text']}; "
            f"Roots: {len(answers['client_roots']['roots'])}")


@server.tool()
def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks a name, then, in a second round, a colour."""
    name = ctx.elicit("step1", "Step 1: What is your name?", NAME)["content"]["name"]
    colour = ctx.elicit("step2", "Step 2: What is your favorite color?",
                        {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]})
    return f"Multi-round complete for {name} who likes {colour['content']['color']}"


@server.tool()
def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks for a confirmation; a requestState changed on the way is -32602."""
    ctx.elicit("confirm", "Please confirm", OK)
    return "integrity-ok: state verified"


@server.tool()
def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only through the capabilities the client declared."""
    questions = {}
    if "elicitation" in ctx.client_capabilities:
        questions["elicit_input"] = {"method": "elicitation/create", "params": {"message": "Elicitation input",
                                     "requestedSchema": {"type": "object", "properties": {"value": {"type": "string"}},
                                                         "required": ["value"]}}}
    if "sampling" in ctx.client_capabilities:
        questions["sample_input"] = {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Sample request"}}], "maxTokens": 50}}
    if not questions:
        return "No supported capabilities declared"
    return f"capabilities-ok: received {','.join(ctx.ask(questions))}"


@server.tool()
def test_reconnection(ctx: Context) -> str:
    """Closes the stream's connection mid-call: the client reconnects with Last-Event-ID and gets the answer."""
    ctx.close_stream()  # (spec 2025-11-25, basic/transports, "Resumability and Redelivery")
    return ("Reconnection test completed successfully. If you received this, the client properly reconnected after "
            "stream closure.")


@server.tool()
def test_sampling(prompt: str, ctx: Context) -> str:
    """Tests server-initiated sampling (LLM completion request)."""
    return f"LLM response: {ctx.sample('answer', prompt, 100)['content']['text']}"


@server.tool()
def test_elicitation(message: str, ctx: Context) -> str:
    """Tests server-initiated elicitation (user input request)."""
    schema = {"type": "object", "properties": {"response": {"type": "string", "description": "User's response"}},
              "required": ["response"]}
    answer = ctx.elicit("response", message, schema)
    return f"User response: action={answer['action']}, content={answer.get('content', {})}"


DEFAULTS = {"type": "object", "required": [], "properties": {  # SEP-1034: a default for each kind of field
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "description": "Verification status", "default": True}}}
TITLED = [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
          {"const": "value3", "title": "Third Option"}]
ENUMS = {"type": "object", "required": [], "properties": {  # SEP-1330: each way to offer choices
    "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": TITLED},
    "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
                      "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
                    "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
                                        {"const": "value3", "title": "Third Choice"}]}}}}


@server.tool()
def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Tests elicitation with default values per SEP-1034."""
    answer = ctx.elicit("form", "Please review and update the form fields with defaults", DEFAULTS)
    return f"Elicitation completed: action={answer['action']}, content={answer.get('content', {})}"


@server.tool()
def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Tests elicitation with enum schema improvements per SEP-1330."""
    answer = ctx.elicit("form", "Please select options from the enum fields", ENUMS)
    return f"Elicitation completed: action={answer['action']}, content={answer.get('content', {})}"


# ---- resources ----

@server.resource("test://static-text", name="Static Text Resource")
def static_text() -> str:
    """A static text resource for testing."""
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="Static Binary Resource", mime_type="image/png")
def static_binary() -> bytes:
    """A static binary resource (image) for testing."""
    return base64.b64decode(PNG)


@server.resource("test://template/{id}/data", name="Resource Template", mime_type="application/json")
def template_data(id: str) -> str:
    """A resource template with parameter substitution."""
    return f'{{"id": "{id}", "templateTest": true, "data": "Data for ID: {id}"}}'


@server.resource("test://watched-resource", name="Watched Resource")
def watched() -> str:
    """A resource a client may subscribe to."""
    return "Watched resource content"


# ---- prompts ----

@server.prompt()
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt()
def test_prompt_with_arguments(arg1: Literal["test", "testing", "tested"], arg2: str) -> str:
    """A prompt with required arguments (arg1 completes from its choices)."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt()
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    """A prompt with an embedded resource."""
    return [{"role": "user", "content": {"type": "resource", "resource": {"uri": resourceUri, "mimeType": "text/plain",
                                                                         "text": "Embedded resource content for testing."}}},
            "Please process the embedded resource above."]


@server.prompt()
def test_prompt_with_image() -> list:
    """A prompt with image content."""
    return [{"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            "Please analyze the image above."]


@server.prompt()
def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for context first."""
    schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    return f"Prompt with context: {ctx.elicit('user_context', 'What context should the prompt use?', schema)['content']['context']}"


if __name__ == "__main__":
    mcp_http.serve_http(server, port=int(sys.argv[1]) if sys.argv[1:] else 8931)
