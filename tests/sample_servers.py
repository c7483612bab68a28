"""The small servers several tests build, in this process or behind a pipe, and the _meta their requests carry.

A child process serves one over stdio with `import sample_servers; mcp_stdio.serve_stdio(sample_servers.notes_server())`
(tests/ on its sys.path).
"""

import os
import subprocess
import sys
import threading
from typing import Literal

from mcp_full import Context, MCPServer, notification, request
from mcp_stdio import MAX_MESSAGE_BYTES

HOLD_S = 10  # seconds: the most a held tool waits to be released (holding_server)
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
ASK_META = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}, "roots": {}}}
ELICIT_META = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def course_server(calls=None) -> MCPServer:
    """The course 000 lab: add, weather, delete_db (not allowed), a raising tool, a resource and a prompt."""
    calls = calls if calls is not None else []
    server = MCPServer("course-lab", allowed_tools={"add", "weather", "divide", "subtract", "pick"})

    @server.tool()
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    @server.tool()
    def weather(city: str) -> str:
        """Tell the weather."""
        return f"Sunny in {city}"

    @server.tool()
    def delete_db() -> str:
        """Delete the database."""
        calls.append("delete_db")
        return "deleted"

    @server.tool()
    def divide(x: float, y: float) -> float:
        """Divide x by y."""
        return x / y

    @server.tool()
    def pick(color: Literal["red", "blue"]) -> str:
        """Pick a color."""
        return color

    server.add_resource("file:///readme.txt", "hello")
    server.add_resource("logo://png", b"\x89PNG", mime_type="image/png")

    @server.resource("policy://{doc_id}")
    def policy(doc_id: str) -> str:
        """A policy."""
        return {"refunds": "30 days"}[doc_id]

    @server.prompt()
    def summarize_incident(severity: str) -> str:
        """Summarize an incident."""
        return f"Summarize this {severity}-severity incident."

    return server


def subtract(x: int, y: int) -> int:
    """Subtract y from x."""
    return x - y


def ready_server(**kwargs) -> MCPServer:
    """A course server whose session has passed the handshake."""
    server = course_server(**kwargs)
    server.handle(request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "0"}}))
    server.handle(notification("notifications/initialized"))
    return server


def confirming_server() -> MCPServer:
    """A server whose delete_db asks the user to confirm."""
    server = MCPServer("course-lab", state_key=b"test")

    @server.tool()
    def delete_db(ctx: Context) -> str:
        """Delete the database."""
        answer = ctx.elicit("confirm", "Sure?", {"type": "object"})
        return "deleted" if answer.get("action") == "accept" else "kept"
    return server


def asking_server(calls: list) -> MCPServer:
    """Tools, a prompt and a resource that ask their client: in rounds, several at once, every kind."""
    server = MCPServer("asking", state_key=b"test")
    form = {"type": "object", "properties": {"value": {"type": "string"}}}

    @server.tool()
    def two_rounds(ctx: Context) -> str:
        """Ask a, then b."""
        calls.append("ran")
        a = ctx.elicit("a", "First?", form)["content"]["value"]
        b = ctx.elicit("b", "Second?", form)["content"]["value"]
        return a + b

    @server.tool()
    def all_at_once(ctx: Context) -> str:
        """Ask three questions in one round."""
        answers = ctx.ask({"name": {"method": "elicitation/create", "params": {"message": "Name?", "requestedSchema": form}},
                           "poem": {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
                           "roots": {"method": "roots/list", "params": {}}})
        return f"{answers['name']['content']['value']}|{answers['poem']['content']['text']}|{len(answers['roots']['roots'])}"

    @server.tool()
    def haiku(topic: str, ctx: Context) -> str:
        """Borrow the client's model."""
        return ctx.sample("haiku", f"A haiku about {topic}", max_tokens=40)["content"]["text"]

    @server.tool()
    def folders(ctx: Context) -> list:
        """The client's roots."""
        return [root["uri"] for root in ctx.roots()]

    @server.tool(requires=("sampling",))
    def needs_sampling() -> str:
        """Cannot run without sampling."""
        calls.append("needs_sampling ran")
        return "ran"

    @server.prompt()
    def greeting(ctx: Context) -> str:
        """Greet the user by name."""
        return "Hello, " + ctx.elicit("who", "Your name?", form)["content"]["value"]

    @server.resource("secret://vault")
    def vault(ctx: Context) -> str:
        """A resource behind a password."""
        answer = ctx.elicit("password", "Password?", form)
        return "gold" if answer["content"]["value"] == "open sesame" else "nothing"

    return server


def accepted(value: str) -> dict:
    """An elicitation result that accepts with one value."""
    return {"action": "accept", "content": {"value": value}}


def first_state(server: MCPServer, arguments=None, name: str = "two_rounds") -> str:
    """The requestState of a first round."""
    params = {"name": name, "arguments": arguments or {}, "_meta": ASK_META}
    return server.handle(request(1, "tools/call", params))["result"]["requestState"]


def retry(server: MCPServer, state, name: str = "two_rounds", arguments=None) -> dict:
    """A retry carrying state and an answer to a."""
    params = {"name": name, "arguments": arguments or {}, "_meta": ASK_META, "requestState": state,
              "inputResponses": {"a": accepted("x"), "name": accepted("x")}}
    return server.handle(request(2, "tools/call", params))


NAME_SCHEMA = {"type": "object", "properties": {"value": {"type": "string"}}}


def cutting_server() -> MCPServer:
    """A server whose tools ask the client mid-call, or close their stream's connection mid-call and go on: one
    answers, one asks first."""
    server = MCPServer("cutting")

    @server.tool()
    def ask(ctx: Context) -> str:
        """Ask the client's name, then greet it."""
        return "hello " + ctx.elicit("name", "Name?", NAME_SCHEMA)["content"]["value"]

    @server.tool()
    def cut_short(ctx: Context) -> str:
        """Report progress, close the stream's connection, report again, answer."""
        ctx.progress(1)
        ctx.close_stream()
        ctx.progress(2)
        return "whole"

    @server.tool()
    def cut_then_ask(ctx: Context) -> str:
        """Close the stream's connection before any event, then ask the client's name."""
        ctx.close_stream()
        return "hello " + ctx.elicit("name", "Name?", NAME_SCHEMA)["content"]["value"]
    return server


def holding_server(released: threading.Event) -> MCPServer:
    """A server whose tool hold reports its first step, then waits until the test sets released; add answers at once."""
    server = MCPServer("holding")

    @server.tool()
    def add(x: int, y: int) -> int:
        """Add two integers."""
        return x + y

    @server.tool()
    def hold(ctx: Context) -> str:
        """Report progress 1, wait until released, report progress 2."""
        ctx.progress(1, total=2)
        if not released.wait(HOLD_S):
            return "never released"
        ctx.progress(2, total=2)
        return "released"
    return server


def notes_server() -> MCPServer:
    """A server whose notes a tool rewrites: the source of notifications/resources/updated."""
    server = MCPServer("notes")
    notes = {"today": "nothing yet", "tomorrow": "nothing yet"}
    for day in notes:
        server.add_resource(f"note://{day}", lambda day=day: notes[day], name=day)

    @server.tool()
    def edit_note(day: str, text: str) -> str:
        """Rewrite a note and tell its subscribers (MCPServer.resource_updated)."""
        notes[day] = text
        server.resource_updated(f"note://{day}")
        return "saved"

    @server.tool()
    def replace_note(day: str, text: str) -> str:
        """Register the note again with new text; its subscribers should hear of that too."""
        server.add_resource(f"note://{day}", text, name=day, replace=True)
        return "replaced"

    return server


class Unserialisable:
    """Something json.dumps cannot write."""


def misbehaving_server(record=None) -> MCPServer:
    """A server whose tools break every rule a tool can break, and one that behaves."""
    server = MCPServer("misbehaving")

    @server.tool()
    def raises() -> str:
        """Raise an exception."""
        raise RuntimeError("the tool broke")

    @server.tool()
    def returns_object() -> dict:
        """Return a dict holding something JSON cannot carry."""
        return {"when": Unserialisable()}

    @server.tool()
    def returns_nan() -> float:
        """Return NaN, which Python writes but JSON forbids."""
        return float("nan")

    @server.tool()
    def returns_circular() -> list:
        """Return a list that contains itself."""
        loop = []
        loop.append(loop)
        return loop

    @server.tool()
    def returns_bad_block() -> list:
        """Return a content block whose text is bytes."""
        return [{"type": "text", "text": b"bytes are not text"}]

    @server.tool()
    def prints() -> str:
        """print() to stdout, which over stdio is the wire."""
        print("stray print from a tool")
        return "printed"

    @server.tool()
    def writes_fd1() -> str:
        """Write straight to file descriptor 1, past sys.stdout."""
        os.write(1, b"raw bytes on fd 1\n")
        return "wrote"

    @server.tool()
    def runs_child() -> str:
        """Start a child process that inherits stdout and writes to it."""
        subprocess.run([sys.executable, "-c", "print('child on stdout')"], check=True, timeout=30)
        return "child ran"

    @server.tool()
    def huge() -> str:
        """Return more text than one message may carry."""
        return "x" * (MAX_MESSAGE_BYTES + 1)

    @server.tool()
    def large() -> str:
        """Return a megabyte of text: big, but within the limit."""
        return "y" * 1_000_000

    @server.tool()
    def echo(text: str) -> str:
        """Behave."""
        return text

    return server


def guarded_server(record) -> MCPServer:
    """A session allowed one tool of two; record(name) runs whenever a tool body runs."""
    server = MCPServer("guarded", allowed_tools={"allowed_tool"})

    @server.tool()
    def allowed_tool() -> str:
        """May run."""
        record("allowed_tool")
        return "allowed ran"

    @server.tool()
    def forbidden(path: str) -> str:
        """Must never run for this session."""
        record("forbidden")
        return "forbidden ran"

    return server
