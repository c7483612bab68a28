"""Draw a recorded trace as a Mermaid sequenceDiagram, which GitHub and JupyterLab render.

    rec = Recording()                                 # a trace hook: prints each message and keeps it
    client = MCPClient(InMemoryTransport(server, trace=rec))
    ...
    rec                                               # in a notebook: the diagram
    python diagram.py --readme                        # redraw README.md's diagram from a real run
    python diagram.py --check                         # exit 1 if README.md's diagram is stale
    python diagram.py --sizes                         # each module's lines of code
"""

import json
import pathlib
import re
import sys

from mcp_min import UNKNOWN_TOOL, print_trace  # the lab alone: course 000's lessons draw with it

HERE = pathlib.Path(__file__).resolve().parent
README = HERE / "README.md"
UNSAFE = re.compile(r"[^A-Za-z0-9 _./:,'()\[\]=+-]+")  # Mermaid reads ; # and newlines as syntax
MAX_ERROR_TEXT = 36  # an error's message is cut to this many characters in its arrow's label


class Recording:
    """A trace hook: rec(direction, message) keeps the message and, if echo, prints it like print_trace.

    direction is "→" (client to server) or "←" (server to client); a str message is a raw line that is
    not JSON, printed as it is. width, if given, cuts each printed line (with "…").
    """

    def __init__(self, echo: bool = True, width: int | None = None):
        self.echo, self.width = echo, width
        self.messages = []  # (direction, message) in the order they crossed

    def __call__(self, direction: str, message):
        self.messages.append((direction, message))
        if self.echo and isinstance(message, str):
            print(direction, message, flush=True)
        elif self.echo:
            print_trace(direction, message, self.width)

    def __repr__(self) -> str:
        return f"Recording({len(self.messages)} messages)"

    def clear(self):
        """Forget the messages recorded so far."""
        self.messages.clear()

    def mermaid(self) -> str:
        """The recorded messages as a sequenceDiagram: one arrow a message, notifications dashed."""
        lines = ["sequenceDiagram", "    participant Client", "    participant Server"]
        for direction, message in self.messages:
            ends = "Client", "Server"
            if direction != "→":
                ends = "Server", "Client"
            arrow = "--)" if is_notification_shape(message) else "->>"
            lines.append(f"    {ends[0]}{arrow}{ends[1]}: {label(message)}")
        return "\n".join(lines)

    def _repr_markdown_(self) -> str:
        return "```mermaid\n" + self.mermaid() + "\n```"


def is_notification_shape(message) -> bool:
    """A message with a method and no "id" key."""
    return isinstance(message, dict) and "method" in message and "id" not in message


def label(message) -> str:
    """An arrow's text: a request's method and [id], a notification's method, a response's result or error."""
    if isinstance(message, str):
        return "not JSON"
    if isinstance(message, list):
        return f"batch of {len(message)}"
    if not isinstance(message, dict):
        return safe(f"not an object: {json.dumps(message)}")
    tag = f" [{json.dumps(message['id'])}]" if "id" in message else ""
    if "method" in message:
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        name = params.get("name") if message["method"] in ("tools/call", "prompts/get") else None
        text = str(message["method"]) + (f" {name}" if isinstance(name, str) else "")
        if isinstance(params.get("inputResponses"), dict):
            text += " answering " + " ".join(params["inputResponses"])  # a retry after input_required
        return safe(text) + tag
    if isinstance(message.get("error"), dict):
        error = message["error"]
        text = str(error.get("message", ""))
        if len(text) > MAX_ERROR_TEXT:
            cut = text[:MAX_ERROR_TEXT].rsplit(" ", 1)[0]  # at a word, unless that loses half
            text = (cut if len(cut) > MAX_ERROR_TEXT // 2 else text[:MAX_ERROR_TEXT]) + "..."
        return safe(f"{error.get('code')} {text}") + tag
    result = message.get("result")
    if isinstance(result, dict) and result.get("isError"):
        return "result isError" + tag
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        asked = result.get("inputRequests") if isinstance(result.get("inputRequests"), dict) else {}
        return safe(f"input_required {' '.join(asked)}") + tag  # the keys of the questions asked
    return "result" + tag


def safe(text: str) -> str:
    """text with every character Mermaid might read as syntax replaced by a space."""
    return " ".join(UNSAFE.sub(" ", text).split())


def worked_trace() -> Recording:
    """Course 000's worked trace (steps 1-6), recorded from a real in-memory run of server_demo."""
    from mcp_full import InMemoryTransport, MCPClient
    from mcp_min import RPCError
    from server_demo import make_server
    rec = Recording(echo=False)
    client = MCPClient(InMemoryTransport(make_server(), trace=rec), name="client_demo")
    client.initialize(protocol_version="2025-06-18")  # steps 1-2
    client.list_tools()  # step 3
    client.call_tool("add", {"x": 2, "y": 3})  # step 4
    try:
        client.call_tool("delete_db")  # step 5: not in this session's allow-list
    except RPCError:
        pass  # the error response is the point; it is in the recording
    client.call_tool("enable_subtract")  # step 6: list_changed, then the client lists again
    return rec


def diagram_block() -> str:
    """What belongs between README.md's diagram markers."""
    return ("Course 000's worked trace, drawn from a real run of `server_demo.py` "
            "(`python diagram.py --readme` redraws it; a test checks it is current):\n\n"
            f"{worked_trace()._repr_markdown_()}")


def transcript_block() -> str:
    """The start of client_demo.py's stored transcript (part 1, steps 1-6), each line cut to fit."""
    lines = (HERE / "docs" / "transcripts" / "client_demo_stdio.txt").read_text(encoding="utf-8").splitlines()
    shown = [line if len(line) <= TRANSCRIPT_WIDTH else line[:TRANSCRIPT_WIDTH - 1] + "…"
             for line in lines[:lines.index(f"# lattice: an unknown tool is {UNKNOWN_TOOL}")]]
    return "```\n" + "\n".join(shown).rstrip() + "\n```"


MODULES = ["mcp_min.py", "mcp_full.py", "mcp_stdio.py", "mcp_http.py", "tap.py", "board.py", "mcp_auth.py",
           "mcp_oauth.py"]  # the lab, then its layers


def sizes(path: pathlib.Path) -> tuple:
    """(lines of code, lines in all) of a file: code is not blank, not a comment and not a docstring."""
    import ast
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    docs = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docs |= set(range(body[0].lineno, body[0].end_lineno + 1))
    code = [number for number, line in enumerate(lines, 1)
            if line.strip() and not line.strip().startswith("#") and number not in docs]
    return len(code), len(lines)


def sizes_table() -> str:
    """Each module's lines of code, and lines in all."""
    rows = [f"{name:14} {code:5,} lines of code, {whole:5,} in all" for name in MODULES
            for code, whole in [sizes(HERE / name)]]
    return "\n".join(rows)


TRANSCRIPT_WIDTH = 150  # README lines are cut here; docs/transcripts/ holds them as the demo prints them
BLOCKS = {"diagram": diagram_block, "transcript": transcript_block}  # <!-- NAME:start --> ... <!-- NAME:end -->


def current_block(text: str, name: str) -> str:
    """The README's text between the markers of block name."""
    start = text.index(f"<!-- {name}:start -->") + len(f"<!-- {name}:start -->")
    return text[start:text.index(f"<!-- {name}:end -->")]


def main(argv: list | None = None) -> int:
    """--readme rewrites README.md's generated blocks; --check exits 1 if one is stale."""
    args = sys.argv[1:] if argv is None else argv
    text = README.read_text(encoding="utf-8")
    stale = [name for name, make in BLOCKS.items() if current_block(text, name) != f"\n{make()}\n"]
    if args == ["--readme"]:
        for name, make in BLOCKS.items():
            text = text.replace(f"<!-- {name}:start -->{current_block(text, name)}", f"<!-- {name}:start -->\n{make()}\n")
        README.write_text(text, encoding="utf-8")
        return 0
    if args == ["--sizes"]:
        print(sizes_table())
        return 0
    if args == ["--check"]:
        for name in stale:
            print(f"README.md's {name} block is stale: run python diagram.py --readme", file=sys.stderr)
        return 1 if stale else 0
    print("usage: python diagram.py --readme | --check | --sizes", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
