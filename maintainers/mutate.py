"""Break mcp_min.py on purpose, one promise at a time, and check that the tests notice (standard library only).

    python maintainers/mutate.py            # every breakage; prints each and the score
    python maintainers/mutate.py 3 7        # only breakages 3 and 7 (their numbers in the list below)

Each breakage is one exact text replacement in a copy of the project, in a folder of its own; the tests then
run there (stopping at the first failure). A breakage the tests do not notice survives: the promise it
breaks is not pinned by any test. The score is how many were caught out of how many.
"""

import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ["test_mcp_min.py", "maintainers/test_duplex.py", "maintainers/test_hostile.py", "maintainers/test_transports.py",
         "maintainers/test_first_hour.py", "maintainers/test_hardening.py"]

# (the promise, the text in mcp_min.py, what it becomes)
BREAKAGES = [
    ("a tool's sys.exit() is caught",
     "except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server",
     "except Exception as exc:"),
    ("progress must grow",
     "if self.last_progress is not None and progress <= self.last_progress:",
     "if False:"),
    ("a requestState is bound to its tool and arguments",
     'if [payload["method"], payload["name"], payload["arguments"]] != [method, name, arguments]:',
     'if payload["method"] != method:'),
    ("a requestState is bound to its arguments",
     'if [payload["method"], payload["name"], payload["arguments"]] != [method, name, arguments]:',
     'if [payload["method"], payload["name"]] != [method, name]:'),
    ("silence to server/discover falls back to initialize",
     "            return self.initialize()  # an older server that ignores what it does not know",
     "            raise"),
    ("an exception with an empty message still says what it was",
     'text_content(f"ERROR: {str(exc) or type(exc).__name__}")',
     'text_content(f"ERROR: {exc}")'),
    ("the server unwraps a base64 Mcp-Name",
     'return base64.b64decode(value[9:-2], validate=True).decode("utf-8")',
     "return value"),
    ("the handshake gate holds until notifications/initialized",
     'if not self._initialized and method not in ("initialize", "ping"):',
     'if not self.protocol_version and method not in ("initialize", "ping"):'),
    ("a notification never gets a response",
     "        if is_notification(message) or ctx.later or ctx.cancelled:",
     "        if ctx.later or ctx.cancelled:"),
    ("the allow-list is checked before the tool runs",
     "if self.allowed_tools is not None and name not in self.allowed_tools:",
     "if False:"),
    ("a missing argument is -32602",
     '            raise RPCError(INVALID_PARAMS, f"missing required argument: {name}")',
     "            pass"),
    ("id null is a malformed request",
     '    return isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))',
     '    return id is None or isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))'),
    ("list_changed waits in the outbox",
     '                server.queue(notification(f"notifications/{listed}/list_changed"))',
     "                pass"),
    ("a requestState is spent once",
     '    if payload["nonce"] in self._states_spent:',
     "    if False:"),
    ("a requestState expires",
     '    if payload["expires"] < now:',
     "    if False:"),
    ("a cancelled request gets no response",
     "        if is_notification(message) or ctx.later or ctx.cancelled:",
     "        if is_notification(message) or ctx.later:"),
    ("the listen acknowledgement comes first",
     '    ctx.send(notification("notifications/subscriptions/acknowledged",',
     '    (lambda message: None)(notification("notifications/subscriptions/acknowledged",'),
    ("an unknown cursor is -32602",
     '        if listed == key and offset.isdecimal() and offset.isascii():',
     '        if offset.isdecimal() and offset.isascii():'),
    ("a header that does not repeat the body is -32020",
     '                if not header_matches(text, value):',
     "                if False:"),
    ("a body framed two ways is refused",
     '            if "transfer-encoding" in self.header_values or len(lengths) > 1:',
     "            if False:"),
    ("a header line that could be read two ways is refused",
     '        if not colon or not name or name != name.strip() or "\\r" in value[:-2]:',
     "        if not colon:"),
    ("a request's head is bounded",
     "        if len(line) > MAX_HEADER_LINE or lines > MAX_HEADERS:",
     "        if False:"),
    ("the client reads an event stream across its chunks",
     "            self.reader.readline(3)  # the CRLF after a chunk's data",
     "            pass"),
    ("the client does not reuse a connection the server closed while it was idle",
     "        if self.closing or (self.socket and select.select([self.socket], [], [], 0)[0]):",
     "        if self.closing:"),
    ("a template variable carries no decoded /",
     '        if "/" in value and name not in spanning:',
     "        if False:"),
    ("a response id must be the request's own id, not one that only looks like it",
     "    return type(a) is type(b) and a == b",
     "    return a == b"),
    ("a client refuses to ask what it cannot answer",
     "            return error_response(message.get(\"id\"), METHOD_NOT_FOUND, f\"this client answers no {message['method']}\")",
     "            return response(message.get(\"id\"), {})"),
    ("a question for a capability the client lacks is -32021",
     "    if missing:\n        raise RPCError(MISSING_CLIENT_CAPABILITY",
     "    if False:\n        raise RPCError(MISSING_CLIENT_CAPABILITY"),
    ("the stdio timeout holds whatever keeps arriving",
     "            if time.monotonic() > deadline:\n                self.cancel(message",
     "            if False:\n                self.cancel(message"),
    ("the tap stops its server when stopped",
     "        stop_server(child, polite=True)",
     "        pass"),
    ("a method of the other era is not found: initialize in 2026-07-28",
     "    if method in other_era:",
     "    if False:"),
    ("section 6's gate still sends a handshake request through section 2's",
     "    return handshake_gate(self, message, method, params, ctx)",
     "    return self._dispatch(method, params, ctx)"),
    ("a function that asks an unanswered question ends the round with input_required",
     "        return self._input_required(ask, *ctx.binding, ctx.answers)",
     "        raise RuntimeError(ask.questions)"),
    ("a request that ended is no longer found by notifications/cancelled",
     "            if self._running.get(ctx.id) is ctx:\n                del self._running[ctx.id]",
     "            pass"),
    ("a tool that asks for a Context gets it",
     "    if entry.get(\"context\"):\n        arguments = {**arguments, entry[\"context\"]: ctx}",
     "    if False:\n        arguments = {**arguments, entry[\"context\"]: ctx}"),
    ("a tool name must be one the spec allows",
     '        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", str(name)):',
     "        if False:"),
]


def survives(number: int, promise: str, text: str, broken: str) -> bool:
    """Apply one breakage in a copy of the project; whether every test still passes."""
    with tempfile.TemporaryDirectory() as folder:
        copy = pathlib.Path(folder) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".ci", "__pycache__", "*.pyc", ".pytest_cache"))
        module = copy / "mcp_min.py"
        source = module.read_text(encoding="utf-8")
        if source.count(text) < 1:
            raise SystemExit(f"breakage {number} ({promise}): its text is no longer in mcp_min.py; update the list")
        module.write_text(source.replace(text, broken, 1), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *TESTS],
                              cwd=copy, capture_output=True, text=True, timeout=1800)
        return done.returncode == 0


def main(argv: list) -> int:
    """Run the breakages asked for (all by default); print each verdict and the score."""
    chosen = [int(arg) for arg in argv] or range(1, len(BREAKAGES) + 1)
    survivors = []
    for number in chosen:
        promise, text, broken = BREAKAGES[number - 1]
        alive = survives(number, promise, text, broken)
        print(f"{number:2}. {'SURVIVED' if alive else 'caught  '}  {promise}", flush=True)
        if alive:
            survivors.append(number)
    print(f"caught {len(chosen) - len(survivors)} of {len(chosen)}" + (f"; survivors: {survivors}" if survivors else ""))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
