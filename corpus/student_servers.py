"""MCP servers written the way students write them, each in its own order of checks, and each with mistakes of a
line or two: with naive_servers.py, the report card's corpus (tests/grading/test_report_card.py grades every one).

    python corpus/student_servers.py BASE [MISTAKE]  # a base's server, or the base with one mistake made
    python corpus/student_servers.py --list          # every base and mistake, and the rule each breaks

A base is a whole server in corpus/students/, as a student might hand it in, keeping every rule of course 000
it can be tested on; each checks in an order of its own (BASES says which), so that a rule provoked one way on one
base is provoked on others where another check comes first. A mistake is one or two exact text replacements in
its base's file, as tools/mutate.py breaks the project: what the student wrote instead. The driver makes the
replacements and runs the result: Python in this process (the file's own name in its tracebacks), JavaScript with
node -e. The standard library only.
"""

import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent / "students"

BASES = {  # name: (its file, its order of checks, the flags that test every rule on it)
    "one-function": ("one_function.py", "tools/call checks the arguments before the name",
                     ["--not-allowed", "delete_db", "--raises", 'divide {"x": 1, "y": 0}',
                      "--handler-fails", 'tools/call {"name": []}', "--change-tools", "enable_subtract"]),
    "table": ("table.py", "each method's handler is looked up before the gate",
              ["--not-allowed", "delete_db", "--raises", 'divide {"x": 1, "y": 0}',
               "--handler-fails", 'resources/read {"uri": []}', "--change-tools", "enable_subtract",
               "--change-resources", "add_note"]),
    "registry": ("registry.py", "tools/call checks the allow-list after the arguments",
                 ["--not-allowed", "drop_tables", "--raises", 'divide {"x": 1, "y": 0}',
                  "--handler-fails", 'prompts/get {"name": "summarize", "arguments": ["text"]}',
                  "--change-tools", "learn_subtract", "--change-prompts", "add_greeting"]),
    "node": ("server.js", "the gate inside the switch, after the method's case is found",
             ["--not-allowed", "delete_db", "--raises", 'divide {"x": 1, "y": 0}',
              "--handler-fails", 'tools/call {"name": "add", "arguments": null}', "--change-tools", "enable_subtract"]),
}

MISTAKES = {  # base: {mistake: (the rule of the card it breaks, [(the text in the base, what the student wrote)])}
    "one-function": {
        "null-id-is-notification": ("null-id-is-a-request", [
            ('    if "id" not in message:  # a notification', '    if message.get("id") is None:  # a notification')]),
        "result-and-error": ("response-shape", [
            ('    return {"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}',
             '    return {"jsonrpc": "2.0", "id": id, "result": None, "error": {"code": code, "message": message}}')]),
        "parse-error-skipped": ("parse-error", [
            ('        print(json.dumps(error(None, -32700, "parse error")), flush=True)\n        continue',
             "        continue")]),
        "no-jsonrpc-check": ("invalid-request", [
            ('    if message.get("jsonrpc") != "2.0":\n        return error(id, -32600, \'jsonrpc must be "2.0"\')\n',
             "")]),
        "traceback-on-wire": ("no-traceback", [
            ("import json\n", "import json\nimport traceback\n"),
            ('        return error(id, -32603, f"internal error: {exc}")',
             "        return error(id, -32603, traceback.format_exc())")]),
        "gate-opens-at-initialize": ("handshake-gate", [
            ('            session["version"] = asked if asked in VERSIONS else VERSIONS[0]\n',
             '            session["version"] = asked if asked in VERSIONS else VERSIONS[0]\n'
             '            session["live"] = True\n')]),
        "version-echo": ("version-negotiation", [
            ('session["version"] = asked if asked in VERSIONS else VERSIONS[0]', 'session["version"] = asked')]),
        "unknown-tool-as-invalid-params": ("unknown-tool", [
            ('return error(id, -32601, f"unknown tool: {name}")', 'return error(id, -32602, f"unknown tool: {name}")')]),
        "no-allow-list": ("tool-not-allowed", [
            ('    if name not in ALLOWED:\n        return error(id, -32600, f"tool {name} is not allowed in this '
             'session")\n', "")]),
        "arguments-unchecked": ("missing-argument", [
            ('    for key in TOOLS[name]["required"]:\n        if key not in arguments:\n            return error(id, '
             '-32602, f"missing argument: {key}")\n', "")]),
        "forgets-to-notify": ("tools-list-changed", [
            ('    pending.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})\n', "")]),
        "print-debugging": ("stdout-only-json", [
            ('    name = params.get("name")\n', '    name = params.get("name")\n    print("calling", name)\n')]),
    },
    "table": {
        "answers-notifications": ("notification-no-response", [
            ('            state["ready"] = True\n        return None',
             '            state["ready"] = True\n        return {"jsonrpc": "2.0", "id": None, "result": {}}')]),
        "unknown-method-invalid-request": ("method-not-found", [
            ('raise RpcError(-32601, f"no such method: {method}")', 'raise RpcError(-32600, f"no such method: {method}")')]),
        "no-catch-all": ("internal-error", [
            ('    except Exception as exc:\n        return error(id, -32603, f"{type(exc).__name__}: {exc}")\n', "")]),
        "initialized-before-initialize": ("handshake-gate", [
            ('if message["method"] == "notifications/initialized" and state["protocol"]:',
             'if message["method"] == "notifications/initialized":')]),
        "capabilities-true": ("capabilities-objects", [
            ('"resources": {"listChanged": True}}', '"resources": True}')]),
        "list-changed-undeclared": ("negotiated-capabilities", [
            ('"capabilities": {"tools": {"listChanged": True},', '"capabilities": {"tools": {},')]),
        "tool-error-as-internal-error": ("tool-error-is-result", [
            ('    try:\n        text = str(function(**arguments))\n    except Exception as exc:\n        return {"content": '
             '[{"type": "text", "text": f"{name} failed: {exc}"}], "isError": True}\n',
             "    text = str(function(**arguments))\n")]),
        "read-without-uri": ("resources-by-uri", [
            ('    return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": notes[uri]}]}',
             '    return {"contents": [{"mimeType": "text/plain", "text": notes[uri]}]}')]),
    },
    "registry": {
        "forbidden-tool-takes-an-argument": ("tool-not-allowed", [
            ("@tool(allowed=False)\ndef drop_tables():", '@tool("table", allowed=False)\ndef drop_tables(table):')]),
        "answers-responses": ("one-response", [
            ('        if "method" not in message:\n            return None  # a response to a request of ours: we never '
             'send any', '        if "method" not in message:\n            return {"jsonrpc": "2.0", "id": '
             'message.get("id"), "error": {"code": -32600, "message": "no method"}}')]),
        "stops-after-parse-error": ("survives-bad-input", [
            ('"message": "parse error"}})\n                continue', '"message": "parse error"}})\n'
             "                return")]),
        "says-only-that-it-failed": ("tool-error-says-why", [
            ('f"{name} raised {type(exc).__name__}: {exc}"', '"the tool failed"')]),
        "traceback-in-the-result": ("no-traceback", [
            ("import json\n", "import json\nimport traceback\n"),
            ('f"{name} raised {type(exc).__name__}: {exc}"', "traceback.format_exc()")]),
        "server-info-without-version": ("server-info", [
            ('"serverInfo": {"name": "registry", "version": "2.1"}', '"serverInfo": {"name": "registry"}')]),
        "prompt-variables-unchecked": ("prompt-variables", [
            ("        if missing:\n            raise Refusal(-32602, f\"missing {', '.join(missing)}\")\n", "")]),
    },
    "node": {
        "answers-notifications": ("notification-no-response", [
            ('if (message.method === "notifications/initialized" && session.version) session.live = true;\n    '
             "return null;", 'if (message.method === "notifications/initialized" && session.version) session.live = '
             "true;\n    return { jsonrpc: \"2.0\", id: null, result: {} };")]),
        "null-id-is-notification": ("null-id-is-a-request", [
            ('  if (!("id" in message)) {', "  if (message.id == null) {")]),
        "ping-result-undefined": ("response-shape", [
            ('    case "ping":\n      return {};', '    case "ping":\n      return undefined;')]),
        "list-changed-with-id": ("notification-has-no-id", [
            ('queue.push({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });',
             'queue.push({ jsonrpc: "2.0", id: 0, method: "notifications/tools/list_changed" });')]),
        "stack-on-wire": ("no-traceback", [
            ("return fail(id, -32603, `internal error: ${error.message}`);", "return fail(id, -32603, error.stack);")]),
        "version-echo": ("version-negotiation", [
            ("session.version = VERSIONS.includes(params.protocolVersion) ? params.protocolVersion : VERSIONS[0];",
             "session.version = params.protocolVersion;")]),
        "unknown-tool-is-error-result": ("unknown-tool", [
            ("throw new RpcError(-32601, `unknown tool: ${name}`);",
             "return { content: [{ type: \"text\", text: `unknown tool: ${name}` }], isError: true };")]),
        "console-log-debugging": ("stdout-only-json", [
            ("  const name = params.name;\n", '  const name = params.name;\n  console.log("calling", name);\n')]),
        "keeps-a-heartbeat": ("exit-on-eof", [
            ('const lines = readline.createInterface({ input: process.stdin });',
             "setInterval(() => {}, 1000); // a heartbeat, for later\n"
             "const lines = readline.createInterface({ input: process.stdin });")]),
    },
}


def source(base: str, mistake: str | None = None) -> str:
    """A base's source, with a mistake's replacements made (each of whose texts occurs in it exactly once)."""
    text = (HERE / BASES[base][0]).read_text(encoding="utf-8")
    for old, new in (MISTAKES[base][mistake][1] if mistake else []):
        if text.count(old) != 1:
            raise ValueError(f"{base} {mistake}: {old!r} occurs {text.count(old)} times in {BASES[base][0]}")
        text = text.replace(old, new)
    return text


def command(base: str, mistake: str | None = None) -> list:
    """The command that runs a base's server, or a mistake's."""
    return [sys.executable, str(pathlib.Path(__file__).resolve()), base] + ([mistake] if mistake else [])


def run(base: str, mistake: str | None = None):
    """Run a base's server (or a mistake's) on this process's stdin and stdout."""
    path = HERE / BASES[base][0]
    code = source(base, mistake)
    if path.suffix == ".js":
        os.execvp("node", ["node", "-e", code])  # the server replaces this process: its stdin, its stdout
    exec(compile(code, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        for base, (file, order, _) in BASES.items():
            print(f"{base} ({file}): {order}")
            for mistake, (rule, _) in MISTAKES[base].items():
                print(f"  {mistake:34} breaks {rule}")
    else:
        run(*sys.argv[1:3])
