"""Break the project on purpose and check that the tests notice (standard library only).

    python tools/mutate.py                             # every breakage; prints each and the score
    python tools/mutate.py 3 7                         # only breakages 3 and 7 (their numbers in the list below)
    python tools/mutate.py mcp_http.py                 # only the breakages of one file
    python tools/mutate.py --seeded                    # every seeded mutant of the lab, the lab's tests against each
    python tools/mutate.py --seeded 100 --at-least 90  # 100 of them drawn with SEED; exit 1 below 90% killed
    python tools/mutate.py --ci                        # what CI runs, in about two minutes: see run_ci below

A breakage is one promise, broken by hand: one exact text replacement in one file of a copy of the project, in a
folder of its own; the tests then run there (stopping at the first failure): for a breakage of the lab
(mcp_min.py), the lab's own tests alone; for Streamable HTTP (mcp_http.py), the tests that drive it; for the other
files, the suite. A breakage the tests do not notice survives: the promise it breaks is not pinned by any test.
The score is how many were caught out of how many.

A seeded mutant is made by rule, not by hand: one site of mcp_min.py changed by one of OPERATORS, every site
of every operator enumerated from the module's syntax tree, and a sample drawn with the fixed SEED. Only the
lab's own tests (test_mcp_min.py) run against it: what the lab promises, they must notice alone. A mutant that
no test could notice (it changes nothing the lab does) is listed in EQUIVALENT with the reason, and left out.

CI's run (--ci) is three parts, each with its score line and threshold, then one line for all; it exits 1 if any part
is below its threshold: every curated breakage of the lab against the lab's tests alone (all must be caught), 100
seeded mutants (90% killed at least), and every curated breakage of the files in CI_FILES against the suite (all
caught). It takes about two minutes on two cores. The other files' breakages do not fit CI's three minutes beside it:
mcp_full.py's take the suite about seven minutes, mcp_http.py's about twelve, and tap.py's one, half a minute, took
the run past three minutes on a loaded machine.

Tests that outlive their timeout (LAB_TIMEOUT, SUITE_TIMEOUT) are stopped and count as caught: a hang has noticed.
The tests run in a session of their own, and this process is a subreaper (Linux): whatever they leave running,
however it was started, is ended after each run.
"""

import ast
import collections
import contextlib
import functools
import os
import pathlib
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import tap  # noqa: E402  the project's own: how the tap ends what a server leaves running, it ends what tests leave
LAB_TESTS = ["test_mcp_min.py"]  # the lab's own tests: what course 000 promises, they must catch alone
TESTS = ["test_mcp_min.py", "tests/protocol/test_full.py", "tests/protocol/test_duplex.py",
         "tests/robustness/test_hostile.py", "tests/transports/test_transports.py", "tests/course/test_first_hour.py",
         "tests/robustness/test_hardening.py"]
HTTP_TESTS = ["tests/transports/test_transports.py", "tests/robustness/test_peers.py", "tests/robustness/test_hostile.py",
              "tests/transports/test_client.py", "tests/protocol/test_duplex.py", "tests/robustness/test_hardening.py",
              "tests/transports/test_auth.py"]
AUTH_TESTS = ["tests/transports/test_auth.py"]  # the resource server's checks, on loopback
TESTS_OF = {"mcp_min.py": LAB_TESTS, "mcp_http.py": HTTP_TESTS, "mcp_auth.py": AUTH_TESTS}  # any other file's: TESTS
# A run of tests that outlives its timeout is stopped, with all it started, and counts as caught: a test that never
# ends has noticed. Each is many times what the tests take when nothing hangs (the lab's: a second or two).
LAB_TIMEOUT = 60
SUITE_TIMEOUT = 900

# (the file, the promise, the text in the file, what it becomes). The lab's breakages come first: only the lab's
# own tests (LAB_TESTS) run against them, for course 000's promises are the lab's to keep.
BREAKAGES = [
    ("mcp_min.py", "a notification never gets a response",
     "        if is_notification(message):\n            return None  # tier 3",
     "        if False:\n            return None  # tier 3"),
    ("mcp_min.py", "id null is a malformed request",
     "    return isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))",
     "    return id is None or isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))"),
    ("mcp_min.py", 'jsonrpc must be "2.0"',
     "        if message.get(\"jsonrpc\") != JSONRPC:",
     "        if False:"),
    ("mcp_min.py", "params must be an object",
     "        if not isinstance(params, dict):\n            raise RPCError(INVALID_REQUEST",
     "        if False:\n            raise RPCError(INVALID_REQUEST"),
    ("mcp_min.py", "a response is never answered",
     "        if is_response(message):\n            return None",
     "        if False:\n            return None"),
    ("mcp_min.py", "the handshake gate holds until notifications/initialized",
     'if not self._initialized and method not in ("initialize", "ping"):',
     'if not self.protocol_version and method not in ("initialize", "ping"):'),
    ("mcp_min.py", "ping is allowed before the handshake",
     'if not self._initialized and method not in ("initialize", "ping"):',
     'if not self._initialized and method != "initialize":'),
    ("mcp_min.py", "notifications/initialized opens only a session that began",
     'if method == "notifications/initialized" and self.protocol_version:',
     'if method == "notifications/initialized":'),
    ("mcp_min.py", "a second initialize is refused",
     "        if self._initialized:\n            raise RPCError(INVALID_REQUEST, \"session already initialized\")",
     "        if False:\n            raise RPCError(INVALID_REQUEST, \"session already initialized\")"),
    ("mcp_min.py", "version negotiation counter-offers the newest version not newer than asked",
     "    return older[0] if older else VERSIONS[0]",
     "    return requested"),
    ("mcp_min.py", "an unknown method is -32601",
     "        if name is None:\n            raise RPCError(METHOD_NOT_FOUND",
     "        if name is None:\n            raise RPCError(INVALID_REQUEST"),
    ("mcp_min.py", "an unknown tool is the course's -32601",
     'raise RPCError(UNKNOWN_TOOL, f"unknown tool: {name}")',
     'raise RPCError(INVALID_PARAMS, f"unknown tool: {name}")'),
    ("mcp_min.py", "the allow-list is checked before the tool runs",
     "if self.allowed_tools is not None and name not in self.allowed_tools:",
     "if False:"),
    ("mcp_min.py", "a missing argument is -32602",
     '            raise RPCError(INVALID_PARAMS, f"missing required argument: {name}")',
     "            pass"),
    ("mcp_min.py", "an argument of the wrong JSON type is -32602",
     "        if \"type\" in rule and not is_json_type(value, rule[\"type\"]):",
     "        if False:"),
    ("mcp_min.py", "true is not an integer",
     "    if isinstance(value, bool):\n        return schema_type == \"boolean\"",
     "    if False:\n        return schema_type == \"boolean\""),
    ("mcp_min.py", "a tool's exception is an isError result",
     "        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server",
     "        except SystemExit as exc:"),
    ("mcp_min.py", "a tool's sys.exit() is caught",
     "        except (Exception, SystemExit) as exc:  # sys.exit() in a tool must not end the server",
     "        except Exception as exc:"),
    ("mcp_min.py", "an exception with an empty message still says what it was",
     'text_content(f"ERROR: {str(exc) or type(exc).__name__}")',
     'text_content(f"ERROR: {exc}")'),
    ("mcp_min.py", "a handler's bug is -32603 and never a traceback",
     '            reply = error_response(id, INTERNAL_ERROR, f"internal error: {exc!r}"[:200])',
     "            raise"),
    ("mcp_min.py", "a handler that returns no result is -32603 naming its method",
     "            if not isinstance(result, dict):  # the handler's bug",
     "            if False:  # the handler's bug"),
    ("mcp_min.py", "list_changed is queued only once the session is live",
     "        if self._initialized:  # before the handshake the client has no cache to invalidate",
     "        if True:"),
    ("mcp_min.py", "the outbox is emptied when it is drained",
     "        messages, self._outbox = self._outbox, []",
     "        messages = list(self._outbox)"),
    ("mcp_min.py", "the client re-lists on list_changed",
     "            refreshes[method]()",
     "            pass"),
    ("mcp_min.py", "only JSON crosses the in-memory transport",
     "        reply = self.server.handle(json.loads(wire))\n        return self.traced",
     "        reply = self.server.handle(message)\n        return self.traced"),
    ("mcp_min.py", "a missing prompt variable is -32602",
     "                raise RPCError(INVALID_PARAMS, f\"missing prompt variable: {variable['name']}\")",
     "                pass"),
    ("mcp_min.py", "a second tool of one name is refused",
     "        if not added and not replace:",
     "        if False:"),
    ("mcp_min.py", "notify=True beyond the declared capabilities is refused",
     "        if notify and not self.CAPABILITIES[listed].get(\"listChanged\"):",
     "        if False:"),
    ("mcp_min.py", "a tool name must be one the spec allows",
     '    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", str(name)):',
     "    if False:"),
    ("mcp_min.py", "a malformed response is refused by the client",
     "    if (\"result\" in reply) == (\"error\" in reply):",
     "    if False:"),
    ("mcp_min.py", "the lab declares course 000's capabilities",
     '    CAPABILITIES = {"tools": {"listChanged": True}, "resources": {}, "prompts": {}}',
     '    CAPABILITIES = {"tools": {"listChanged": True}, "resources": True, "prompts": {}}'),
    # The layers built on the lab: the whole suite runs against these.
    ("mcp_full.py", "progress must grow",
     "if self.last_progress is not None and progress <= self.last_progress:",
     "if False:"),
    ("mcp_full.py", "a requestState is bound to its tool and arguments",
     'if [payload["method"], payload["name"], payload["arguments"]] != [method, name, arguments]:',
     'if payload["method"] != method:'),
    ("mcp_full.py", "a requestState is bound to its arguments",
     'if [payload["method"], payload["name"], payload["arguments"]] != [method, name, arguments]:',
     'if [payload["method"], payload["name"]] != [method, name]:'),
    ("mcp_full.py", "a requestState is spent once",
     '            if payload["nonce"] in self._states_spent:',
     "            if False:"),
    ("mcp_full.py", "a requestState expires",
     '        if payload["expires"] < now:',
     "        if False:"),
    ("mcp_full.py", "silence to server/discover falls back to initialize",
     "                return self.initialize()  # an older server that ignores what it does not know",
     "                raise"),
    ("mcp_full.py", "a 2026-07-28 request passes no gate, any other passes the lab's",
     "        if not context().stateless:\n            super()._gate(method)",
     "        if False:\n            super()._gate(method)"),
    ("mcp_full.py", "a method of the other era is not found: initialize in 2026-07-28",
     "        if method in (HANDSHAKE_ONLY if ctx.stateless else STATELESS_ONLY):",
     "        if False:"),
    ("mcp_full.py", "a cancelled request gets no response",
     "        return None if ctx.cancelled else reply",
     "        return reply"),
    ("mcp_full.py", "the listen acknowledgement comes first",
     '        ctx.send(notification("notifications/subscriptions/acknowledged",',
     '        (lambda message: None)(notification("notifications/subscriptions/acknowledged",'),
    ("mcp_full.py", "an unknown cursor is -32602",
     "        if listed == key and offset.isdecimal() and offset.isascii():",
     "        if offset.isdecimal() and offset.isascii():"),
    ("mcp_full.py", "a template variable carries no decoded /",
     '        if "/" in value and name not in spanning:',
     "        if False:"),
    ("mcp_full.py", "a client refuses to answer what it cannot",
     "            return error_response(message.get(\"id\"), METHOD_NOT_FOUND, f\"this client answers no {message['method']}\")",
     "            return response(message.get(\"id\"), {})"),
    ("mcp_full.py", "a question for a capability the client lacks is -32021",
     "        if missing:\n            raise RPCError(MISSING_CLIENT_CAPABILITY",
     "        if False:\n            raise RPCError(MISSING_CLIENT_CAPABILITY"),
    ("mcp_full.py", "a function that asks an unanswered question ends the round with input_required",
     "            result = self.input_required(exc, ctx)",
     "            raise RuntimeError(exc.questions)"),
    ("mcp_full.py", "a request that ended is no longer found by notifications/cancelled",
     "            if self._running.get(ctx.id) is ctx:\n                self._running.pop(ctx.id, None)",
     "            pass"),
    ("mcp_full.py", "a tool that asks for a Context gets it",
     "        if ctx_name:\n            arguments[ctx_name] = ctx",
     "        if False:\n            arguments[ctx_name] = ctx"),
    ("mcp_full.py", "list_changed reaches every session of a shared catalog",
     "        for server in self.sharing():\n            with server._lock:",
     "        for server in [self]:\n            with server._lock:"),
    ("mcp_stdio.py", "a response id must be the request's own id, not one that only looks like it",
     "    return type(a) is type(b) and a == b",
     "    return a == b"),
    ("mcp_stdio.py", "the stdio timeout holds whatever keeps arriving",
     "            if time.monotonic() > deadline:\n                self.cancel(message",
     "            if False:\n                self.cancel(message"),
    ("mcp_stdio.py", "a reader that lost the baton leaves its successor's clock alone",
     "                if reading[\"thread\"] is not me or gone.is_set():\n                    return",
     "                reading[\"since\"] = None\n                if reading[\"thread\"] is not me or gone.is_set():\n                    return"),
    ("mcp_http.py", "the server unwraps a base64 Mcp-Name",
     'return base64.b64decode(value[9:-2], validate=True).decode("utf-8")',
     "return value"),
    ("mcp_http.py", "a header that does not repeat the body is -32020",
     "            if not header_matches(text, value):",
     "            if False:"),
    ("mcp_http.py", "a body framed two ways is refused",
     '        if "transfer-encoding" in self.header_values or len(lengths) > 1:',
     "        if False:"),
    ("mcp_http.py", "a header line that could be read two ways is refused",
     '        if not colon or not name or name != name.strip() or "\\r" in value:',
     "        if not colon:"),
    ("mcp_http.py", "a head ends at its first empty line, whether it arrived whole or not",
     '    if end > 0 and not arrived.startswith(b"\\r\\n") and ',
     "    if end > 0 and "),
    ("mcp_http.py", "a request's head is bounded",
     "            if len(line) > MAX_HEADER_LINE or len(lines) == MAX_HEADERS:",
     "            if False:"),
    ("mcp_http.py", "the client reads an event stream across its chunks",
     "            self.reader.readline(3)  # the CRLF after a chunk's data",
     "            pass"),
    ("mcp_http.py", "the client does not reuse a connection the server closed while it was idle",
     "        if self.closing or (self.socket and select.select([self.socket], [], [], 0)[0] and not self.still_open()):",
     "        if self.closing:"),
    ("mcp_http.py", "a batch or a scalar body is 400 -32600",
     "        if not isinstance(message, dict):  # a batch, a string, a number",
     "        if False:  # a batch, a string, a number"),
    ("mcp_http.py", "a connection carries many requests (keep-alive)",
     '        self.close_connection = connection == "close" or (version == "HTTP/1.0" and connection != "keep-alive")',
     "        self.close_connection = True"),
    ("mcp_http.py", "Expect: 100-continue is answered before the body is read",
     "            self.handle_expect_100()  # only now",
     "            pass  # only now"),
    ("mcp_http.py", "a body without Content-Length is 411",
     "        elif not (len(length) <= 10 and length.isascii() and length.isdigit()):",
     "        elif False:"),
    ("mcp_http.py", "a body over MAX_MESSAGE_BYTES is 413 before it is read",
     "        elif int(length) > MAX_MESSAGE_BYTES:\n            self.refuse(413",
     "        elif False:\n            self.refuse(413"),
    ("mcp_http.py", "a Host or Origin that is not local is 403 (DNS rebinding)",
     "        if host not in allowed or (origin and origin_host not in allowed):",
     "        if host not in allowed:"),
    ("mcp_http.py", "only /mcp is served",
     "        if path != self.server.served_path:",
     "        if False:"),
    ("mcp_http.py", "a session is its subject's alone (issue 44)",
     "            if sid not in self.sessions or self.sessions[sid].subject != subject:",
     "            if sid not in self.sessions:"),
    ("mcp_http.py", "a tool a scope the token lacks would grant is 403 insufficient_scope (issue 44)",
     "            if scope:  # the lattice refused it",
     "            if False:  # the lattice refused it"),
    ("mcp_auth.py", "a token minted for another resource is refused (issue 44)",
     "    if audience not in audiences:",
     "    if False:"),
    ("mcp_auth.py", "an expired token is refused (issue 44)",
     "    if exp is not None and not (isinstance(exp, (int, float)) and now <= exp + LEEWAY_S):",
     "    if False:"),
    ("mcp_auth.py", "the key chooses the algorithm, never the token's header (issue 44)",
     "        if header.get(\"alg\") != self.algorithm:",
     "        if header.get(\"alg\") == \"none\":"),
    ("mcp_http.py", "an unknown session is 404, a missing one 400",
     '(400, "missing Mcp-Session-Id") if sid is None else (404, "unknown or ended session")',
     '(400, "missing Mcp-Session-Id") if sid is None else (400, "unknown or ended session")'),
    ("mcp_http.py", "a session idle past SESSION_IDLE_S is forgotten",
     "                if now - session.used <= SESSION_IDLE_S and len(self.sessions) - len(idle) < MAX_SESSIONS:",
     "                if len(self.sessions) - len(idle) < MAX_SESSIONS:"),
    ("mcp_http.py", "past MAX_SESSIONS the session unused the longest is forgotten",
     "                if now - session.used <= SESSION_IDLE_S and len(self.sessions) - len(idle) < MAX_SESSIONS:",
     "                if now - session.used <= SESSION_IDLE_S:"),
    ("mcp_http.py", "a busy session is never forgotten to make room",
     "                if not session.busy:",
     "                if True:"),
    ("mcp_http.py", "with every session busy, an initialize is refused",
     "        if not self.make_room():",
     "        if not self.make_room() and False:"),
    ("mcp_http.py", "a session's use keeps it from being forgotten",
     "                session.used = time.monotonic()",
     "                pass"),
    ("mcp_http.py", "DELETE ends the session",
     "        session = self.session(end=True)",
     "        session = self.session()"),
    ("mcp_http.py", "an unknown MCP-Protocol-Version is 400",
     "        elif version is not None and version not in PUBLISHED_VERSIONS:",
     "        elif False:"),
    ("mcp_http.py", "a stateless request for an unknown method is 404",
     "                return 404  # the method itself is unknown here",
     "                return 200"),
    ("mcp_http.py", "a stateless request missing a required _meta field is 400",
     "                return 400  # a required _meta field is missing",
     "                return 200  # a required _meta field is missing"),
    ("mcp_http.py", "a header sent twice does not repeat the body",
     "            if len(sent) > 1:",
     "            if False:"),
    ("mcp_http.py", "subscriptions/listen without text/event-stream is 406",
     "        if listen and not events_accepted:",
     "        if False:"),
    ("mcp_http.py", "a listen stream the client closes ends its subscription",
     "                mcp.stop_listening(stream)",
     "                pass"),
    ("mcp_http.py", "a resumed stream replays what it missed",
     "            for event in missed:",
     "            for event in []:"),
    ("mcp_http.py", "a resumption after events no longer kept is refused",
     "            if not first - 1 <= after <= self.number:",
     "            if False:"),
    ("mcp_http.py", "a stream of another session is not resumed",
     "        if stream is None or stream.session_id != session_id or not number.isdigit():",
     "        if stream is None or not number.isdigit():"),
    ("mcp_http.py", "a server that closes a stream early sends a retry field first",
     '                handler.write_chunk(f"retry: {RETRY_MS}\\n\\n".encode())',
     "                pass"),
    ("mcp_http.py", "what a session sends outside a request waits while a request is in flight",
     "        if self.in_flight == 0 and self.standing.handler is not None:",
     "        if self.standing.handler is not None:"),
    ("mcp_http.py", "what a session sends outside a request goes on its GET stream",
     "            mcp.on_send = session.deliver",
     "            pass"),
    ("mcp_http.py", "a GET without a session is 405",
     '        if self.header("Mcp-Session-Id") is None:  # 2026-07-28 has no sessions',
     "        if False:  # 2026-07-28 has no sessions"),
    ("mcp_http.py", "at most MAX_GET_STREAMS GET streams are open",
     "        if not streams.take(1):",
     "        if not streams.take(0):"),
    ("mcp_http.py", "a connection whose request is late is cut",
     "            late = [connection for connection, deadline in self.arriving.items() if now > deadline]",
     "            late = []"),
    ("mcp_http.py", "long requests past their share of MAX_LONG are stopped",
     "        for handler in long[max(0, MAX_LONG - (len(streams) - len(yielding))):]:",
     "        for handler in long[len(long):]:"),
    ("mcp_http.py", "calls are stopped only when calls alone are past the share, never for streams",
     "        for handler in long[max(0, MAX_LONG - (len(streams) - len(yielding))):]:",
     "        for handler in long[max(0, MAX_LONG - len(streams)):]:"),
    ("mcp_http.py", "streams give way to calls past the share, the one held longest first",
     "            handler.giving_way = True  # its own thread ends it, within 0.25 s: the watchdog waits for no client",
     "            pass"),
    ("mcp_http.py", "a listen stream that gives way gets its graceful end, the listen's response",
     "                mcp.end_listening(stream)",
     "                mcp.stop_listening(stream)"),
    ("mcp_http.py", "a full server cuts the idlest connection to make room",
     "                idlest = min(self.arriving, key=self.arriving.get, default=None)",
     "                idlest = None"),
    ("mcp_http.py", "what the bodies being served hold, parsed, is bounded",
     "        if body is None or not self.reserve(parsed_size(body) - len(body)):",
     "        if body is None:"),
    ("mcp_http.py", "a refusal reads what the client still sends, so that it reads the response",
     "                if not self.connection.recv(1 << 20):\n                    break",
     "                break"),
    ("mcp_http.py", "a half-closed client's stream is probed before it is taken for gone",
     '            self.send_comment(b":\\n\\n")',
     "            pass"),
    ("mcp_http.py", "notifications queued during a request go out before its JSON response",
     "        if queued and self.accepts_events:",
     "        if False:"),
    ("mcp_http.py", "an HTTP/1.0 client's event stream ends with the connection",
     '        framing = {"Transfer-Encoding": "chunked"} if self.request_version == "HTTP/1.1" else {"Connection": "close"}',
     '        framing = {"Transfer-Encoding": "chunked"}'),
    ("mcp_http.py", "the client resumes a stream cut before its response",
     '            if "id" not in cursor or not (stopped or "retry" in cursor) or connection not in (',
     '            if True or connection not in ('),
    ("mcp_http.py", "the client waits the retry it was told",
     '        wait = min(cursor.get("retry", RETRY_MS) / 1000, RETRY_CAP_S)',
     "        wait = min(RETRY_MS / 1000, RETRY_CAP_S)"),
    ("mcp_http.py", "an empty event id resets the last event id",
     '                if not value:\n                    del cursor["id"]',
     '                if False:\n                    del cursor["id"]'),
    ("mcp_http.py", "the client takes an HTTP error with a JSON-RPC error as its request's answer",
     '    return status >= 400 and "error" in incoming',
     "    return False"),
    ("mcp_http.py", "an open stream with nothing to say gets a keep-alive comment",
     '                stream.send_comment(b": keep-alive\\n\\n")',
     "                pass"),
    ("mcp_http.py", "a GET stream gets what waited in the outbox as it opens",
     "            session.deliver()  # what waited in the outbox",
     "            pass  # what waited in the outbox"),
    ("mcp_http.py", "a listen stream's writes wait at most STREAM_WRITE_S",
     "        if listen:  # its writes come from whoever changes a list, and may never wait long\n            self.connection.settimeout(STREAM_WRITE_S)",
     "        if listen:  # its writes come from whoever changes a list, and may never wait long\n            pass"),
    ("mcp_http.py", "a stopped request's late answer goes nowhere",
     "        if stream.stopped:  # it has its one answer",
     "        if False:  # it has its one answer"),
    ("mcp_http.py", "the watchdog waits for no client",
     "                    carrier.connection.settimeout(0)",
     "                    pass"),
    ("mcp_http.py", "a GET stream another GET took over ends",
     "lambda: stream.handler is not self or self.server.closing",
     "lambda: self.server.closing"),
    ("mcp_http.py", "a GET stream whose client went ends",
     "or self.giving_way or bool(self.client_gone()))",
     "or self.giving_way)"),
    ("tap.py", "the tap stops its server when the host closes",
     "        self.child.stdin.close()\n        self.stop(polite=True)",
     "        self.child.stdin.close()"),
]


def survives(number: int, name: str, promise: str, text: str, broken: str) -> str | None:
    """Apply one breakage to one file in a copy of the project; None if every test still passes, else the test that
    failed first (one that only fails under load is no catch: rerun it alone)."""
    with tempfile.TemporaryDirectory() as folder:
        copy = pathlib.Path(folder) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".ci", "__pycache__", "*.pyc", ".pytest_cache"))
        module = copy / name
        source = module.read_text(encoding="utf-8")
        if source.count(text) < 1:
            raise SystemExit(f"breakage {number} ({promise}): its text is no longer in {name}; update the list")
        source = source.replace(text, broken, 1)
        try:
            compile(source, name, "exec")
        except SyntaxError as exc:  # every test that imports the file would fail: a catch that proves nothing
            raise SystemExit(f"breakage {number} ({promise}) is not Python: {exc}; update the list")
        module.write_text(source, encoding="utf-8")
        tests = TESTS_OF.get(name, TESTS)
        status, printed = run_tests(copy, tests, timeout_of(tests))
        if status is None:
            return f"timed out: its tests were stopped after {timeout_of(tests)} s"  # a hang has noticed
        failed = [line.split(" - ")[0] for line in printed.splitlines() if line.startswith(("FAILED", "ERROR"))]
        return None if status == 0 else (failed or [f"exit status {status}"])[0]


def timeout_of(tests: list) -> int:
    """How long a run of tests may take before it counts as a hang."""
    return LAB_TIMEOUT if tests == LAB_TESTS else SUITE_TIMEOUT


def run_tests(copy: pathlib.Path, tests: list, timeout: int) -> tuple:
    """Run tests with pytest -x in the copy: (its exit status, or None if it outlived timeout; what it printed).
    It runs in a session of its own, and whatever it leaves running, a hang's or a broken cleanup's, is ended."""
    process = subprocess.Popen([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                               cwd=copy, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True,
                               env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})  # no stale .pyc of an earlier mutant
    try:
        printed, _ = process.communicate(timeout=timeout)
        status = process.returncode
    except subprocess.TimeoutExpired:
        status = None
    end_below(process)
    if status is None:
        printed, _ = process.communicate()  # every writer to its pipe has ended
    return status, printed


def end_below(process: subprocess.Popen):
    """End the process and every process below this one: where Linux lets this process be a subreaper, the orphans
    its tests left come back to it; elsewhere the tests' own session (process group) is all there is to end."""
    if not tap.WATCHING:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        return
    me = os.getpid()

    def running() -> set:
        table = tap.processes()
        for pid, found in table.items():  # an orphan that ended is this subreaper's to reap (pytest is Popen's)
            if found.parent == me and found.state == "Z" and pid != process.pid:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)
        below = tap.descent([(me, table[me].start)], table, tap.children_of(table)) - {me}
        return {pid for pid in below if table[pid].state != "Z"}
    tap.end(running)


# ---- seeded mutants of the lab ----

SEED = 39  # fixed: a sample is the same sample on every machine, in every run
OPERATORS = {  # each operator, and the sites it changes
    "pass": "a simple statement inside a function becomes pass",
    "return-none": "return X becomes return None",
    "negate": "the condition of an if, a while, an assert, a conditional expression or a comprehension's if is negated",
    "and-or": "and becomes or, and or becomes and",
    "plus-one": "an integer constant n becomes n + 1",
}
SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Delete, ast.Assert,
          ast.Break, ast.Continue)  # the statements "pass" replaces (imports, pass itself and blocks are not)

Mutant = collections.namedtuple("Mutant", "operator line start end text")  # byte offsets in the UTF-8 source

# Mutants no test can tell from the lab, by (operator, function, the line's text, the code changed): why each
# changes nothing the lab does.
EQUIVALENT = {
    ("plus-one", "MCPServer._offer",
     'if getattr(getattr(entry["fn"], "__code__", None), "co_flags", 0) & 0x80:  # inspect.CO_COROUTINE', "0"):
        "the default for a callable without code: 1 & 0x80 is 0, as 0 & 0x80 is",
    ("return-none", "check_schema", "return takes  # it takes any name: any property fits", "takes"):
        "takes is None on that line",
    ("pass", "malformed", "return None", "return None"):
        "the function's last line: without it the function returns None all the same",
    ("pass", "MCPClient._pump_notifications",
     "return notifications  # the usual case after a call: nothing was pushed", "return notifications"):
        "a shortcut: without it an empty list goes through the loop, changes nothing, and is returned the same",
}


def seeded_mutants(source: str) -> list:
    """Every single-site mutant of source that OPERATORS make, in the order of the source."""
    data = source.encode("utf-8")
    starts = [0] + [index + 1 for index, byte in enumerate(data) if byte == 10]  # each line's first byte

    def at(line: int, column: int) -> int:
        return starts[line - 1] + column  # ast's columns count UTF-8 bytes

    def code(node) -> bytes:
        return data[at(node.lineno, node.col_offset):at(node.end_lineno, node.end_col_offset)]

    def mutant(operator: str, node, text: bytes) -> Mutant:
        return Mutant(operator, node.lineno, at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset), text)

    tree = ast.parse(source)
    docstrings = {id(body[0]) for node in ast.walk(tree) for body in [getattr(node, "body", None)]
                  if isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                  and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)}
    in_functions = {id(node) for function in ast.walk(tree) if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
                    for node in ast.walk(function)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, SIMPLE) and id(node) in in_functions and id(node) not in docstrings:
            found.append(mutant("pass", node, b"pass"))
        if isinstance(node, ast.Return) and node.value is not None and not (
                isinstance(node.value, ast.Constant) and node.value.value is None):
            found.append(mutant("return-none", node.value, b"None"))
        tests = [node.test] if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) else []
        tests += node.ifs if isinstance(node, ast.comprehension) else []
        found += [mutant("negate", test, b"not (" + code(test) + b")") for test in tests]
        if isinstance(node, ast.BoolOp):  # the operator between each two values swapped; the values as they are
            old, new = (b"and", b"or") if isinstance(node.op, ast.And) else (b"or", b"and")
            edges = [at(node.lineno, node.col_offset)]
            for value in node.values:
                edges += [at(value.lineno, value.col_offset), at(value.end_lineno, value.end_col_offset)]
            edges.append(at(node.end_lineno, node.end_col_offset))
            pieces = [data[a:b] for a, b in zip(edges, edges[1:])]  # before, value, between, value, ..., after
            between = [re.sub(rb"\b" + old + rb"\b", new, piece, count=1) if 1 < index < len(pieces) - 1 else piece
                       for index, piece in enumerate(pieces)]
            found.append(mutant("and-or", node, b"".join(piece if index % 2 else between[index]
                                                           for index, piece in enumerate(pieces))))
        if isinstance(node, ast.Constant) and type(node.value) is int:
            found.append(mutant("plus-one", node, str(node.value + 1).encode()))
    return sorted(found, key=lambda m: (m.start, m.end, m.operator))


def applied(source: str, mutant: Mutant) -> str:
    """source with one mutant applied."""
    data = source.encode("utf-8")
    return (data[:mutant.start] + mutant.text + data[mutant.end:]).decode("utf-8")


def described(source: str, mutant: Mutant) -> tuple:
    """(operator, the function it is in, the line's text, the code changed): how EQUIVALENT names a mutant,
    whatever line number it has."""
    data = source.encode("utf-8")
    line = source.splitlines()[mutant.line - 1].strip()
    return mutant.operator, enclosing(source, mutant.line), line, data[mutant.start:mutant.end].decode("utf-8")


def enclosing(source: str, line: int) -> str:
    """The qualified name of the innermost function (or class) holding a line; "" at the module's top level."""
    holding = [(first, name) for first, last, name in scopes(source) if first <= line <= last]
    return max(holding)[1] if holding else ""  # the one that starts last is the innermost


@functools.lru_cache(maxsize=4)
def scopes(source: str) -> list:
    """(first line, last line, qualified name) of every function and class in source."""
    found = []

    def walk(body: list, prefix: str):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found.append((node.lineno, node.end_lineno, prefix + node.name))
                walk(node.body, prefix + node.name + ".")
    walk(ast.parse(source).body, "")
    return found


def sample(source: str, count: int | None) -> list:
    """The mutants to run: all but the equivalent ones, or count of them drawn with SEED, in source order."""
    candidates = [m for m in seeded_mutants(source) if described(source, m) not in EQUIVALENT]
    if count is None or count >= len(candidates):
        return candidates
    return sorted(random.Random(SEED).sample(candidates, count), key=lambda m: (m.start, m.end, m.operator))


def killed(copy: pathlib.Path, source: str, mutant: Mutant) -> bool:
    """Whether the lab's own tests fail (or hang) with mutant applied to the copy's mcp_min.py."""
    (copy / "mcp_min.py").write_text(applied(source, mutant), encoding="utf-8")
    status, _ = run_tests(copy, LAB_TESTS, LAB_TIMEOUT)
    return status != 0  # None, a test that never ends, has noticed too


def seeded_score(count: int | None) -> tuple:
    """Run the seeded mutants against the lab's own tests; print each survivor and the score; (killed, run)."""
    source = (ROOT / "mcp_min.py").read_text(encoding="utf-8")
    every = seeded_mutants(source)
    named = [described(source, m) for m in every]
    stale = [key for key in EQUIVALENT if named.count(key) != 1]
    if stale:
        raise SystemExit(f"each entry of EQUIVALENT must name one mutant of mcp_min.py; update the list: {stale}")
    chosen = sample(source, count)
    survivors = []
    with tempfile.TemporaryDirectory() as folder:
        copy = pathlib.Path(folder) / "project"
        shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".git", ".ci", "__pycache__", "*.pyc", ".pytest_cache"))
        for number, mutant in enumerate(chosen, 1):
            if not killed(copy, source, mutant):
                survivors.append(mutant)
                operator, line, changed = described(source, mutant)
                print(f"SURVIVED {operator:11} mcp_min.py:{mutant.line}: {changed!r} -> {mutant.text.decode()!r}   "
                      f"({line})", flush=True)
    score = 100 * (len(chosen) - len(survivors)) / max(len(chosen), 1)
    print(f"the lab's own tests killed {len(chosen) - len(survivors)} of {len(chosen)} seeded mutants of mcp_min.py "
          f"({score:.1f}%; {len(every)} sites, {len(EQUIVALENT)} equivalent left out, seed {SEED})", flush=True)
    return len(chosen) - len(survivors), len(chosen)


def curated_survivors(chosen: list) -> list:
    """Run the curated breakages numbered chosen, printing each verdict; the numbers of those that survived."""
    survivors = []
    for number in chosen:
        name, promise, text, broken = BREAKAGES[number - 1]
        failed = survives(number, name, promise, text, broken)
        print(f"{number:2}. {'caught  ' if failed else 'SURVIVED'}  {name}: {promise}" + (f" ({failed})" if failed else ""),
              flush=True)
        if not failed:
            survivors.append(number)
    return survivors


# ---- the run CI makes: its scope fits the budget, three minutes on a two-core machine ----

CI_SEEDED = 100  # seeded mutants of the lab, drawn with SEED
CI_SEEDED_AT_LEAST = 90.0  # percent killed: a few mutants of a sample may change nothing a test can see
CI_FILES = ("mcp_stdio.py",)  # beyond the lab: its three breakages take the suite about 15 s each


def ci_scope(breakages: list) -> tuple:
    """The numbers of the curated breakages --ci runs: the lab's (its own tests alone), then those of CI_FILES."""
    lab = [number for number, (name, _, _, _) in enumerate(breakages, 1) if name == "mcp_min.py"]
    beyond = [number for number, (name, _, _, _) in enumerate(breakages, 1) if name in CI_FILES]
    return lab, beyond


def verdict(parts: list) -> tuple:
    """parts: (what was run, how many were caught, out of how many, the percent wanted). A score line a part and
    one for them all, and whether every part met its threshold."""
    lines, below = [], []
    for title, caught, total, at_least in parts:
        score = 100 * caught / max(total, 1)
        met = score >= at_least
        lines.append(f"{title}: {caught} of {total} caught ({score:.1f}%; "
                     f"{'all' if at_least == 100 else f'{at_least:g}%'} wanted){'' if met else ' BELOW THRESHOLD'}")
        if not met:
            below.append(title)
    caught, total = sum(part[1] for part in parts), sum(part[2] for part in parts)
    lines.append(f"mutation run: {caught} of {total} caught ({100 * caught / max(total, 1):.1f}%); "
                 + (f"below threshold: {'; '.join(below)}" if below else "every part met its threshold"))
    return lines, not below


def run_ci() -> int:
    """The curated breakages of the lab, the seeded mutants, the curated breakages of CI_FILES; a score line for each
    and for all; 1 if any part is below its threshold."""
    times = [time.monotonic()]
    lab, beyond = ci_scope(BREAKAGES)
    parts = [("the lab's curated breakages (mcp_min.py, test_mcp_min.py alone)",
              len(lab) - len(curated_survivors(lab)), len(lab), 100.0)]
    times.append(time.monotonic())
    parts.append((f"{CI_SEEDED} seeded mutants of mcp_min.py (test_mcp_min.py alone, seed {SEED})",
                  *seeded_score(CI_SEEDED), CI_SEEDED_AT_LEAST))
    times.append(time.monotonic())
    parts.append((f"the curated breakages of {', '.join(CI_FILES)} (the suite's tests)",
                  len(beyond) - len(curated_survivors(beyond)), len(beyond), 100.0))
    times.append(time.monotonic())
    lines, met = verdict(parts)
    took = ", ".join(f"{end - begin:.0f} s" for begin, end in zip(times, times[1:]))
    print("\n".join(lines) + f"\n(the parts took {took}: {times[-1] - times[0]:.0f} s in all)")
    return 0 if met else 1


def main(argv: list) -> int:
    """Run the breakages asked for (by number or by file; all by default), or the seeded mutants, or CI's run; print
    each verdict and the score."""
    if {"-h", "--help"} & set(argv):
        print(__doc__)
        return 0
    # A shell starts a background job with SIGINT ignored, and every process the tests start would inherit that:
    # the tests of Ctrl-C would fail whatever the breakage. Handled here, it is the default again in each child.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    tap.become_subreaper()  # what the tests leave running comes back to this process, which ends it (end_below)
    if argv == ["--ci"]:
        return run_ci()
    if argv[:1] == ["--seeded"]:  # --seeded [COUNT] [--at-least PERCENT]
        rest, at_least = argv[1:], None
        if "--at-least" in rest:
            at = rest.index("--at-least")
            at_least, rest = float(rest[at + 1]), rest[:at] + rest[at + 2:]
        killed_count, run = seeded_score(int(rest[0]) if rest else None)
        return 1 if at_least is not None and 100 * killed_count / max(run, 1) < at_least else 0
    files = {name for name, _, _, _ in BREAKAGES}
    chosen = [int(arg) for arg in argv if arg not in files]
    chosen += [number for number, (name, _, _, _) in enumerate(BREAKAGES, 1) if name in argv]
    chosen = chosen or range(1, len(BREAKAGES) + 1)
    survivors = curated_survivors(chosen)
    lab = [number for number in chosen if BREAKAGES[number - 1][0] == "mcp_min.py"]
    lab_caught = len([number for number in lab if number not in survivors])
    print(f"caught {len(chosen) - len(survivors)} of {len(chosen)}" + (f"; survivors: {survivors}" if survivors else ""))
    print(f"the lab's own tests caught {lab_caught} of the {len(lab)} breakages of mcp_min.py")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
