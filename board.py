"""The wire board: a live page that shows an MCP host and server talking, and every rule either breaks.

    python board.py [--port N] [--fault NAME] [--delay S] [--timeout S] [--log FILE] [--hold] [--] <server command...>
    python board.py --fault list          # each fault, with the course passage it demonstrates

Put it where a host starts a server, as you would the tap (`python tap.py`): it passes every byte
through unchanged, logs each line as the tap does, and serves a page at http://127.0.0.1:PORT/ (the URL is
printed on stderr) where a sequence diagram grows as messages cross, beside the state each side must be in
and the rules broken. Course 000 ends with the three ways naive code fails "precisely at these seams"; the
board names the seam a message broke, on the message itself.

  1. The rules      what the board flags, each with the course passage or the spec rule it breaks
  2. The model      Board: lines in; events, the state of the session and the flags out (no I/O at all)
  3. Faults         --fault NAME changes the wire in one named way, to watch a peer cope (or not)
  4. The recording  the lines the relay passed, read by the Board only when somebody looks
  5. The page       one HTML document, its script and style inline, fed by Server-Sent Events
  6. The relay      the tap's pump, recording each line and applying the fault
  7. The command line

Directions are the tap's: "→" host to server, "←" server to host.

Glossary: mcp_min's, and
  session       as there, one client's state on a server: the one the board shows (Board models one at a time;
                client_demo.py --board begins three on one page, report_card.py --board one a rule)
  recording     the lines one relay passed, with their times, read by the Board when somebody looks (Recording;
                the page serves it whole at /recording); as in diagram.py, what crossed the wire, kept in order
"""

import contextlib
import http.server
import itertools
import json
import os
import shlex
import signal
import sys
import threading
import time
import urllib.parse

from mcp_full import CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, MAX_MESSAGE_BYTES, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY
from mcp_http import LOCAL_NAMES
from mcp_min import RPCError, error_response, valid_id
from mcp_stdio import parse
from tap import Tap, become_subreaper

HOST, SERVER = "→", "←"
DEFAULT_TIMEOUT = 10.0  # seconds a request may wait before the board flags it (the lab's client waits 30)
DEFAULT_DELAY = 35.0  # --fault delay-response: past the 30 s the lab's StdioTransport waits
SHOWN_CHARS = 100_000  # a longer line reaches the page cut to this many characters
VIEW_INTERVAL = 0.05  # seconds: a page is updated at most 20 times a second, so watching costs the relay little
VIEW_BATCH = 500  # lines read for a page at one time (at most 10,000 a second): a burst is shown late, not slowly
SUMMARY_LIMIT = 20_000  # lines: past this, the board does not read its recording at its end (nobody watched it anyway)
MAX_KEPT_LINES = 100_000  # lines the board keeps for its page; later ones are passed on, logged, and not kept
MAX_KEPT_BYTES = 64 * 1024 * 1024  # nor more than this many bytes of them (a board holds about twice this, parsed)
PAGE_IDLE_S = 10  # a connection to the page that sends no request for this long is closed
MAX_PAGE_CONNECTIONS = 16  # connections to the page open at once, each a thread: one more is answered 503
PAGE_PIECE = 65536  # bytes a page connection writes at once: it holds this and one event, not its whole answer

# ---------------------------------------------------------------------------------------------------
# ---- 1. The rules ----
# Each flag names the passage it breaks: the course where it says so, else the spec revision and section.
# ---------------------------------------------------------------------------------------------------

THREE_SHAPES = 'course 000, "Three message shapes"'
RULES = {  # name: (title on the message, the passage it breaks)
    "notification-id": ("notification with an id", THREE_SHAPES + "; the naive failures at its end"),
    "before-initialized": ("request before initialized", 'course 000, "The stateful handshake"'),
    "no-request": ("response to no request", THREE_SHAPES + ": a response echoes the id of its request"),
    "answered-twice": ("answered twice", THREE_SHAPES + ": a request demands exactly one reply"),
    "reused-id": ("reused id", 'spec 2025-06-18, Base Protocol, "Requests": an id MUST NOT have been used '
                               "before by the requestor within the same session"),
    "not-json": ("not JSON", 'spec 2025-06-18, Transports, "stdio": nothing but valid MCP messages on the '
                             "server's stdin and stdout"),
    "not-a-message": ("not a JSON-RPC message", THREE_SHAPES + '; "The five standard error codes" (-32600)'),
    "unknown-code": ("error code not in the table", 'course 000, "The five standard error codes"; spec 2026-07-28, '
                                                    "Base Protocol: -32020, -32021, -32022"),
    "no-response": ("no response", THREE_SHAPES + ": a request demands exactly one reply"),
    "never-answered": ("never answered", THREE_SHAPES + ": a request demands exactly one reply"),
}

# The course's codes, by the case each answers, written here from the course's text and never read from the lab's
# constants (mcp_min's UNKNOWN_TOOL and the like), which a lesson's exercise changes: the board and the report
# card judge by this one table. Course 000, "The five standard error codes and where each is raised" and its
# _call_tool lattice; 2026-07-28's three (spec 2026-07-28, Base Protocol; course 004, section 4 names -32022).
CODES = {
    "parse error": -32700,  # "the bytes were not valid JSON ... (id is null)"
    "invalid request": -32600,  # "well-formed JSON but not a valid request object"
    "wrong jsonrpc": -32600,  # "a message whose jsonrpc field isn't "2.0""
    "not initialized": -32600,  # "any method call issued before the session is initialized"
    "method not found": -32601,  # "unknown method"
    "unknown tool": -32601,  # "and in _call_tool, an unknown tool name"
    "tool not allowed": -32600,  # "name exists but is not in the per-client allow-list → -32600"
    "invalid params": -32602,  # "the method exists but the params are wrong"
    "missing argument": -32602,  # "a missing required tool argument"
    "missing prompt variable": -32602,  # "and for a missing prompt-template variable"
    "internal error": -32603,  # "an unhandled exception inside a handler"
    "header mismatch": -32020,  # 2026-07-28 over HTTP: a header disagrees with the body
    "missing client capability": -32021,  # 2026-07-28: a request needs a capability the client did not declare
    "unsupported version": -32022,  # course 004: "a version error (-32022) that lists the versions ..."
}
COURSE_CODES = tuple(dict.fromkeys(CODES.values()))  # every code of the table, once, in its order
LISTS = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
         "resources/templates/list": "resources"}  # a resources list_changed covers the templates too
LONG_LIVED = {"subscriptions/listen"}  # a stream that stays open by design: waiting is not a fault
HANDSHAKE_FREE = {"initialize", "ping", "server/discover"}  # may be sent before the gate opens


def flag(rule: str, text: str, cite: str | None = None) -> dict:
    """One rule broken: its name and title, what happened here, and the passage it breaks."""
    title, passage = RULES[rule]
    return {"rule": rule, "title": title, "text": text, "cite": cite or passage}


def label(message) -> str:
    """A message's text on its arrow: a request's method (and tool, prompt or URI) and [id], a response's outcome."""
    if not isinstance(message, dict):
        return "not a JSON-RPC message"
    tag = f" [{json.dumps(message['id'])}]" if "id" in message else ""
    if isinstance(message.get("method"), str):
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        name = params.get("name") if message["method"] in ("tools/call", "prompts/get") else params.get("uri")
        return message["method"] + (f" {name}" if isinstance(name, str) else "") + tag
    if isinstance(message.get("error"), dict):
        text = str(message["error"].get("message", ""))
        short = text if len(text) <= 40 else text[:40].rstrip() + "…"
        return f"error {message['error'].get('code')} {short}{tag}"
    result = message.get("result")
    if isinstance(result, dict) and result.get("resultType") == "input_required":
        return "input_required" + tag
    if isinstance(result, dict) and result.get("isError"):
        return "result isError" + tag
    return "result" + tag


def read_line(line) -> tuple:
    """(the line as text, whether it is JSON, the value): bytes must be UTF-8 (stdio's encoding)."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError:
            return line.decode("utf-8", "replace"), False, None
    try:
        return line, True, parse(line)  # mcp_stdio's parse: the same limits as the project's own stdio server
    except RPCError:
        return line, False, None


# ---------------------------------------------------------------------------------------------------
# ---- 2. The model ----
# Board reads lines as they crossed and keeps what a careful observer would: who asked what and is still
# waiting, where the handshake gate stands, what each side declared, which caches are stale. Pure: the
# time comes in with each line, so a recorded session gives the same events whenever it is read.
# ---------------------------------------------------------------------------------------------------

class Board:
    """One session as the wire shows it: feed it lines; read its events, its state() and the flags.

        board = Board(timeout=10)
        board.feed("→", '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', t=0.0)
        board.events[-1]["flags"]   # [{"rule": "before-initialized", "title": ..., "text": ..., "cite": ...}]
        board.state(now=1.0)        # era, gate, peers, requests waiting (with their age), caches, ...
    Each event is a dict: n (from 1), t (seconds), dir, kind, label, line, flags, and where they apply
    answers and waited (the request's n, and the seconds since), group and round (an input_required round
    trip), fault (what a fault changed), waits (the request a timeout is about).
    """

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self.events = []
        self._reset()

    def _reset(self):
        """Forget the session (a new one begins); the events stay."""
        self.first = len(self.events)  # the session's first event
        self.ended = None  # the n of the event that ended the session
        self.era = self.version = self.offered = self.supported = None
        self.gate = {"initialize": None, "answered": None, "initialized": None}  # event numbers
        self.peers = {"host": {"info": None, "capabilities": None}, "server": {"info": None, "capabilities": None}}
        self.pending = {}  # (direction, id as JSON) -> the request: n, t, method, label, ...
        self.used = {}  # (direction, id as JSON) -> n of every request sent so far
        self.answered = {}  # (direction, id as JSON) -> n of its response
        self.cancelled = set()  # (direction, id as JSON) of requests their sender cancelled
        self.lists = {}  # "tools" -> {"listed": n, "changed": n, "relisted": n}
        self.subscriptions = {}  # uri -> {"uri", "n", "updated"}
        self.listens = {}  # (direction, id as JSON) -> {"id", "n", "acknowledged", "filter"}
        self.rounds = {}  # group -> the input_required round waiting for its retry

    # -- lines in --

    def feed(self, direction: str, line, t: float = 0.0, note: dict | None = None) -> list:
        """Read one line that crossed at time t (seconds); return the events it adds.

        note, from the relay: a fault's change ({"fault", "text", "original"?, "dropped"?}) or {"size": n}
        for a line too long to keep whole.
        """
        added = self.tick(t)
        text, is_json, message = read_line(line)
        event = self._add({"t": t, "dir": direction, "kind": "junk", "label": "", "line": text, "flags": []})
        if note and "fault" in note:
            event["fault"] = note
        if note and note.get("dropped"):
            event["kind"], event["label"] = "dropped", label(message) + " (dropped)"  # the receiver never saw it
        elif note and "size" in note:
            event["kind"], event["label"] = "oversized", f"a line of {note['size']} bytes, not read"
        elif not is_json:
            event["label"] = "not JSON: " + text[:60]
            stream = "stdout" if direction == SERVER else "stdin"
            event["flags"].append(flag("not-json", f"a line that is not JSON on the server's {stream}"))
        elif not isinstance(message, dict):
            event["kind"], event["label"] = "invalid", label(message)
            event["flags"].append(flag("not-a-message", "a message is a JSON object (batches left in 2025-06-18)"))
        else:
            self._message(event, direction, message)
        return added + [event]

    def begin(self, title: str, t: float = 0.0) -> list:
        """A new session on the same board (client_demo.py runs three): end the last, forget its state."""
        added = self.end(t) if len(self.events) > self.first and self.ended is None else []
        self._reset()
        return added + [self._add({"t": t, "dir": "", "kind": "session", "label": title, "line": "", "flags": []})]

    def full(self, text: str, t: float) -> list:
        """The board keeps no more lines (Recording.keeps): a banner says so, where it happened."""
        return [self._add({"t": t, "dir": "", "kind": "session", "label": text, "line": "", "flags": []})]

    def tick(self, now: float) -> list:
        """Flag each request that has waited longer than the timeout, at the moment it did; the events added."""
        late = [r for r in self.pending.values()
                if not r["late"] and r["method"] not in LONG_LIVED and now - r["t"] > self.timeout]
        added = []
        for request in sorted(late, key=lambda r: r["t"]):
            request["late"] = True
            text = f"no response to {request['label']} (#{request['n']}) within {self.timeout:g} s"
            added.append(self._add({"t": request["t"] + self.timeout, "dir": request["dir"], "kind": "timeout",
                                    "label": f"{self.timeout:g} s, and {request['label']} is still waiting",
                                    "line": "", "flags": [flag("no-response", text)], "waits": request["n"]}))
        return added

    def end(self, t: float) -> list:
        """The session is over (the server exited): every request still waiting will never be answered."""
        added = self.tick(t)
        flags = [flag("never-answered", f"{r['label']} (#{r['n']}) never got a response")
                 for r in sorted(self.pending.values(), key=lambda r: r["n"]) if r["method"] not in LONG_LIVED]
        event = self._add({"t": t, "dir": "", "kind": "end", "label": "the session ended", "line": "", "flags": flags})
        self.ended = event["n"]
        return added + [event]

    def _add(self, event: dict) -> dict:
        """Number an event, round its time to the millisecond, and keep it."""
        event["n"] = len(self.events) + 1
        event["t"] = round(event["t"], 3)
        self.events.append(event)
        return event

    # -- the three shapes (course 000: told apart by their keys, never by a type tag) --

    def _message(self, event: dict, direction: str, message: dict):
        """Classify a JSON object by its keys and update the session."""
        event["label"] = label(message)
        if message.get("jsonrpc") != "2.0":
            event["flags"].append(flag("not-a-message", 'jsonrpc is not "2.0": the peer answers -32600, or drops it'))
        if isinstance(message.get("method"), str) and "id" in message:
            self._request(event, direction, message)
        elif isinstance(message.get("method"), str):
            self._notification(event, direction, message)
        elif "id" in message and ("result" in message) != ("error" in message):
            self._response(event, direction, message)
        else:
            event["kind"] = "invalid"
            event["flags"].append(flag("not-a-message", "neither a request, a notification nor a response"))

    def _request(self, event: dict, direction: str, message: dict):
        """A request: it waits for exactly one response with its id."""
        method, id, n = message["method"], message["id"], event["n"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        key = (direction, json.dumps(id))
        stateless = PROTOCOL_VERSION_KEY in meta
        event["kind"] = "request"
        if method.startswith("notifications/"):
            event["flags"].append(flag("notification-id", "a notification sent with an id: a request now, so its "
                                       "sender waits for a reply that a well-behaved peer refuses to send"))
        if not valid_id(id):
            event["flags"].append(flag("not-a-message", f"id {json.dumps(id)}: a request id is a string or an "
                                       "integer, never null (a null id is not a notification either)"))
        elif key in self.pending or (key in self.used and not stateless):
            # 2026-07-28 asks only that an id be unique among the requests still unanswered.
            event["flags"].append(flag("reused-id", f"id {json.dumps(id)} was used before in this session "
                                       f"(#{self.used[key]})"))
        self.used[key] = n
        self.pending[key] = {"n": n, "t": event["t"], "dir": direction, "id": id, "method": method,
                             "label": event["label"], "params": params, "late": False}
        if direction == HOST:
            self._host_request(event, self.pending[key], params, meta)
        elif self.era == "handshake" and self.gate["initialized"] is None and method != "ping":
            event["flags"].append(flag("before-initialized", "the server sent a request before "
                                       "notifications/initialized", "spec 2025-06-18, Lifecycle, "
                                       '"Initialization": only pings and logging until then'))

    def _host_request(self, event: dict, request: dict, params: dict, meta: dict):
        """What a host's request says about the session: its era, the gate, caches, rounds, streams."""
        method, n = request["method"], event["n"]
        if method == "initialize":
            self.era, self.gate["initialize"], self.offered = "handshake", n, params.get("protocolVersion")
            self.peers["host"] = {"info": params.get("clientInfo"), "capabilities": params.get("capabilities")}
        elif PROTOCOL_VERSION_KEY in meta:  # 2026-07-28: each request carries what the handshake used to
            self.era, self.version = "stateless", meta[PROTOCOL_VERSION_KEY]
            self.peers["host"] = {"info": meta.get(CLIENT_INFO_KEY), "capabilities": meta.get(CLIENT_CAPABILITIES_KEY)}
        elif method not in HANDSHAKE_FREE and not method.startswith("notifications/") and not self.gate["initialized"]:
            event["flags"].append(flag("before-initialized", f"{method} before notifications/initialized: the "
                                       "gate answers -32600 (only initialize and ping may pass)"))
        cache = self.lists.get(LISTS.get(method), {})
        if cache.get("changed") and not cache["relisted"]:
            cache["relisted"] = n  # the client lists again after list_changed, as it must (course 000)
        if "requestState" in params or "inputResponses" in params:
            self._retry(event, request, params)
        if method == "subscriptions/listen":
            self.listens[(HOST, json.dumps(request["id"]))] = {"id": request["id"], "n": n, "acknowledged": None,
                                                               "filter": params.get("notifications")}

    def _retry(self, event: dict, request: dict, params: dict):
        """A retry after input_required: same method, new id, the requestState echoed (2026-07-28)."""
        name = params.get("name", params.get("uri"))
        for group, waiting in list(self.rounds.items()):
            same_state = waiting["state"] is None or waiting["state"] == params.get("requestState")
            if waiting["method"] == request["method"] and waiting["name"] == name and same_state:
                del self.rounds[group]
                event["group"], event["round"] = group, waiting["round"] + 1
                request["group"], request["round"] = group, waiting["round"] + 1
                return

    def _response(self, event: dict, direction: str, message: dict):
        """A response: it must answer a request still waiting, once."""
        id, ok = message["id"], "result" in message
        event["kind"] = "result" if ok else "error"
        error = message.get("error")
        code = error.get("code") if isinstance(error, dict) else None
        if not ok and (not isinstance(code, int) or code not in COURSE_CODES):
            event["flags"].append(flag("unknown-code", f"error code {json.dumps(code)} is not in the course's table"))
        key = (SERVER if direction == HOST else HOST, json.dumps(id))
        request = self.pending.pop(key, None)
        if request is None:
            if key in self.answered:
                event["flags"].append(flag("answered-twice", f"a second response to [{json.dumps(id)}]: "
                                           f"#{self.answered[key]} answered it"))
            elif key not in self.cancelled and not (id is None and not ok):
                # An error with a null id answers a line that had no readable id (-32700): nothing to match.
                event["flags"].append(flag("no-request", f"a response to [{json.dumps(id)}], which no request "
                                           "waiting had"))
            return
        self.answered[key] = event["n"]
        event["answers"], event["waited"] = request["n"], round(event["t"] - request["t"], 3)
        if request["late"]:
            event["label"] += " (late)"  # the board flagged its request already
        if "group" in request:
            event["group"], event["round"] = request["group"], request["round"]
        if request["method"] in LONG_LIVED:
            self.listens.pop(key, None)  # the stream's final response: it is over
        if ok and isinstance(message["result"], dict):
            self._result(event, request, message["result"])

    def _result(self, event: dict, request: dict, result: dict):
        """What a successful result tells: the version, the peer's capabilities, a fresh list, a round to come."""
        method, n, params = request["method"], event["n"], request["params"]
        if method == "initialize":
            self.gate["answered"], self.version = n, result.get("protocolVersion")
            self.peers["server"] = {"info": result.get("serverInfo"), "capabilities": result.get("capabilities")}
        elif method == "server/discover":
            meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
            self.supported = result.get("supportedVersions")
            self.peers["server"] = {"info": meta.get(SERVER_INFO_KEY), "capabilities": result.get("capabilities")}
        elif method in LISTS:
            self.lists.setdefault(LISTS[method], {"listed": None, "changed": None, "relisted": None})["listed"] = n
        elif method == "resources/subscribe" and isinstance(params.get("uri"), str):
            self.subscriptions[params["uri"]] = {"uri": params["uri"], "n": n, "updated": None}
        elif method == "resources/unsubscribe" and isinstance(params.get("uri"), str):
            self.subscriptions.pop(params["uri"], None)
        if result.get("resultType") == "input_required":
            group = request.get("group", request["n"])
            event["group"], event["round"] = group, request.get("round", 1)
            inputs = result.get("inputRequests") if isinstance(result.get("inputRequests"), dict) else {}
            self.rounds[group] = {"group": group, "round": event["round"], "n": n, "method": method,
                                  "name": params.get("name", params.get("uri")), "asks": sorted(inputs),
                                  "state": result.get("requestState")}

    def _notification(self, event: dict, direction: str, message: dict):
        """A notification: no response ever; some move the session along."""
        method, n = message["method"], event["n"]
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        event["kind"] = "notification"
        live = self.gate["initialize"] and not self.gate["initialized"]  # the lab ignores it before initialize
        if method == "notifications/initialized" and direction == HOST and live:
            self.gate["initialized"] = n  # the session is live only now (course 000, step 3)
        elif method.endswith("/list_changed") and direction == SERVER:
            kind = method.split("/")[1]  # a bare invalidation: the client must list again (course 000)
            self.lists.setdefault(kind, {"listed": None, "changed": None, "relisted": None})
            self.lists[kind].update(changed=n, relisted=None)
        elif method == "notifications/resources/updated" and isinstance(params.get("uri"), str):
            if params["uri"] in self.subscriptions:
                self.subscriptions[params["uri"]]["updated"] = n
        elif method == "notifications/subscriptions/acknowledged":
            meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
            listen = self.listens.get((HOST, json.dumps(meta.get("io.modelcontextprotocol/subscriptionId"))))
            if listen:
                listen.update(acknowledged=n, filter=params.get("notifications"))
        elif method == "notifications/cancelled":
            key = (direction, json.dumps(params.get("requestId")))
            if self.pending.pop(key, None):
                self.cancelled.add(key)  # its response, if one still comes, is ignored by the sender
            self.listens.pop(key, None)

    # -- state out --

    def state(self, now: float | None = None) -> dict:
        """The state each side must be in, as the wire shows it; now (seconds) gives the waiting requests' ages."""
        pending = sorted(self.pending.values(), key=lambda r: r["n"])
        return {
            "era": self.era, "version": self.version, "offered": self.offered, "supported": self.supported,
            "gate": dict(self.gate),
            "host": dict(self.peers["host"]), "server": dict(self.peers["server"]),
            "pending": [{"n": r["n"], "dir": r["dir"], "label": r["label"], "late": r["late"],
                         "age": None if now is None else round(now - r["t"], 1)} for r in pending],
            "lists": {kind: dict(entry) for kind, entry in sorted(self.lists.items())},
            "subscriptions": [dict(entry) for entry in self.subscriptions.values()],
            "listens": [dict(entry) for entry in self.listens.values()],
            "request_states": [{key: entry[key] for key in ("group", "round", "n", "method", "name", "asks", "state")}
                               for entry in self.rounds.values()],
            "flags": sum(len(event["flags"]) for event in self.events[self.first:]),
            "ended": self.ended,
        }

    def flags(self) -> list:
        """Every flag of this session, one line each: where, what, and the passage it breaks."""
        lines = []
        for event in self.events[self.first:]:
            where = f"#{event['n']} {event['dir']} {event['label']}" if event["line"] else f"#{event['n']}"
            lines.extend(f"{where}: {one['text']} ({one['cite']})" for one in event["flags"])
        return lines

    def faults(self) -> list:
        """Every change a fault made in this session, one line each."""
        return [f"#{event['n']} {event['dir']} {event['label']}: {event['fault']['text']}"
                for event in self.events[self.first:] if "fault" in event]


def describe(state: dict, ages: bool = False) -> list:
    """The state as (term, [items]) pairs of plain text: the page draws them, a notebook prints them."""
    era = {None: "not known yet (no initialize, no request with a version in _meta)",
           "handshake": f"handshake, version {state['version'] or 'not agreed yet'} "
                        f"(initialize offered {state['offered']})",
           "stateless": f"stateless, version {state['version']}: no handshake, each request carries it in _meta"}
    pairs = [("era", [era[state["era"]]])]
    if state["era"] != "stateless":
        gate = state["gate"]
        pairs.append(("handshake gate", [
            f"initialize sent #{gate['initialize']}" if gate["initialize"] else "initialize not sent",
            f"answered #{gate['answered']}" if gate["answered"] else "not answered",
            (f"notifications/initialized sent #{gate['initialized']}: the session is live" if gate["initialized"]
             else "notifications/initialized not sent: every request but ping gets -32600")]))
    for side in ("host", "server"):
        info, capabilities = state[side]["info"], state[side]["capabilities"]
        name = f"{info.get('name')} {info.get('version')}" if isinstance(info, dict) else "not introduced"
        declared = json.dumps(capabilities) if capabilities is not None else "not declared"
        pairs.append((side, [name, f"capabilities {declared}"]))
    if isinstance(state["supported"], list):
        pairs.append(("versions the server serves", [", ".join(map(str, state["supported"]))]))
    waiting = [f"{r['dir']} {r['label']} (#{r['n']})" + (f", {r['age']:.1f} s" if ages and r["age"] is not None else "")
               + (", flagged" if r["late"] else "") for r in state["pending"]]
    caches = []
    for kind, cache in state["lists"].items():
        text = f"{kind}: listed #{cache['listed']}" if cache["listed"] else f"{kind}: not listed"
        if cache["changed"]:
            text += f", changed #{cache['changed']}, " + (f"re-listed #{cache['relisted']}" if cache["relisted"]
                                                          else "not re-listed: stale")
        caches.append(text)
    subscriptions = [f"{s['uri']} since #{s['n']}" + (f", updated #{s['updated']}" if s["updated"] else "")
                     for s in state["subscriptions"]]
    listens = [f"[{json.dumps(s['id'])}] #{s['n']}, " + (f"acknowledged #{s['acknowledged']}: {json.dumps(s['filter'])}"
                                                          if s["acknowledged"] else "not acknowledged yet")
               for s in state["listens"]]
    rounds = [f"{r['method']} {r['name']} round {r['round']} (#{r['n']}) asks {', '.join(r['asks']) or 'nothing'}; "
              f"requestState {str(r['state'])[:16]}…" for r in state["request_states"]]
    for term, items in (("waiting for a response", waiting), ("list caches", caches),
                        ("resource subscriptions", subscriptions), ("listen streams", listens),
                        ("requestStates in flight", rounds)):
        pairs.append((term, items or ["none"]))
    return pairs


def state_text(state: dict) -> str:
    """describe() as lines of text, without ages: the same for the same session, every time."""
    return "\n".join(f"{term}: {'; '.join(items)}" for term, items in describe(state))


# ---------------------------------------------------------------------------------------------------
# ---- 3. Faults ----
# Each changes exactly what it names and leaves every other byte alone. "After the handshake" means the
# first response to a request other than initialize and server/discover: the first real call.
# ---------------------------------------------------------------------------------------------------

FAULTS = {  # name: (what it changes, the passage it demonstrates)
    "initialized-id": ('give notifications/initialized an id ("board:initialized")',
                       'course 000, "Three message shapes", and its last paragraph: give a notification an id '
                       "and the peer waits forever"),
    "drop-initialized": ("drop notifications/initialized on its way to the server",
                         'course 000, "The stateful handshake": skip the handshake and every call is -32600'),
    "tool-error": ("turn each isError tool result into a -32603 error response",
                   'course 000, "Dispatch to primitives, and the _call_tool error lattice": let a tool exception '
                   "escape and the agent cannot recover"),
    "stray-line": ("write a line that is not JSON on the server's stdout, before its first response after the "
                   "handshake",
                   "course 004, section 4 (one message per line, and nothing else on stdout); spec 2025-06-18, "
                   'Transports, "stdio"'),
    "drop-response": ("drop the server's first response after the handshake",
                      THREE_SHAPES + ": a request demands exactly one reply"),
    "delay-response": ("hold the server's first response after the handshake for --delay seconds "
                       f"(default {DEFAULT_DELAY:g}: past the lab client's 30 s timeout)",
                       THREE_SHAPES + "; course 002, \"Error Responses\" (a client's retry policy)"),
}
FAULT_ID = "board:initialized"  # a string no client counts up to, so no host request shares it
STRAY_LINE = b"print() from a tool: this line is not JSON"


class Fault:
    """One named change to the wire: change(direction, line) says what to send instead, and when.

    It returns a list of (line, note, action): action "pass" sends the line now, "delay" after
    self.delay seconds, "drop" never; note (None when untouched) tells the board what was changed.
    """

    def __init__(self, name: str, delay: float = DEFAULT_DELAY):
        if name not in FAULTS:
            raise ValueError(f"unknown fault {name!r}; python board.py --fault list")
        self.name, self.delay = name, delay
        self.methods = {}  # the host's request ids (as JSON) -> method: what each response answers
        self.struck = False  # the one-time faults strike once

    def note(self, text: str, original: bytes | None = None, dropped: bool = False) -> dict:
        """What the board tells about the change it made."""
        note = {"fault": self.name, "text": text}
        if original is not None:
            note["original"] = original.decode("utf-8", "replace")
        if dropped:
            note["dropped"] = True
        return note

    def change(self, direction: str, line: bytes) -> list:
        """What to do with one line (without its newline) crossing in direction."""
        _, is_json, message = read_line(line) if len(line) <= MAX_MESSAGE_BYTES else (None, False, None)
        if not is_json or not isinstance(message, dict):
            return [(line, None, "pass")]
        if direction == HOST:
            return self.change_host(line, message)
        return self.change_server(line, message)

    def change_host(self, line: bytes, message: dict) -> list:
        """Host to server: remember what each request asks; the two handshake faults strike here."""
        if "id" in message and isinstance(message.get("method"), str):
            self.methods[json.dumps(message["id"])] = message["method"]
        if message.get("method") != "notifications/initialized" or "id" in message or self.struck:
            return [(line, None, "pass")]
        self.struck = self.name in ("initialized-id", "drop-initialized")
        if self.name == "initialized-id":
            start = line.index(b"{") + 1  # the id goes in as the first key; every other byte stays as it was
            changed = line[:start] + b'"id": ' + json.dumps(FAULT_ID).encode() + b", " + line[start:].lstrip()
            return [(changed, self.note(f'the board gave this notification an id, "{FAULT_ID}"', line), "pass")]
        if self.name == "drop-initialized":
            return [(line, self.note("the board dropped this notification: the server never saw it", dropped=True),
                     "drop")]
        return [(line, None, "pass")]

    def change_server(self, line: bytes, message: dict) -> list:
        """Server to host: the response faults strike here."""
        if "id" not in message or "method" in message:
            return [(line, None, "pass")]
        method = self.methods.get(json.dumps(message["id"]))
        result = message.get("result")
        if self.name == "tool-error" and method == "tools/call" and isinstance(result, dict) and result.get("isError"):
            content = result.get("content") if isinstance(result.get("content"), list) else []
            texts = [block.get("text", "") for block in content if isinstance(block, dict)]
            reply = error_response(message["id"], -32603, "internal error: " + " ".join(map(str, texts)))
            changed = json.dumps(reply, ensure_ascii=False).encode()
            return [(changed, self.note("the board turned this isError result into -32603", line), "pass")]
        if self.struck or method in (None, "initialize", "server/discover"):
            return [(line, None, "pass")]
        if self.name == "stray-line":
            self.struck = True
            return [(STRAY_LINE, self.note("the board wrote this line, as a stray print() would"), "pass"),
                    (line, None, "pass")]
        if self.name == "drop-response":
            self.struck = True
            return [(line, self.note("the board dropped this response: the host never saw it", dropped=True), "drop")]
        if self.name == "delay-response":
            self.struck = True
            return [(line, self.note(f"the board held this response for {self.delay:g} s"), "delay")]
        return [(line, None, "pass")]


# ---------------------------------------------------------------------------------------------------
# ---- 4. The recording ----
# The relay only appends (time, direction, line, note) to a list: that is all a line costs while nobody
# watches. A viewer, or the end of the session, feeds the Board what it has not read yet, in order, so
# the events are the same whenever they are read.
# ---------------------------------------------------------------------------------------------------

class Recording:
    """The lines one relay passed, with their times, and the Board that reads them when somebody looks.

        recording = Recording(timeout=10)
        recording.record("→", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}')
        recording.view(0)   # (events since the first, the state, whether it ended)
    """

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, about: dict | None = None, clock=time.monotonic):
        self.clock = clock  # seconds, from any start (a recorded session's times come from its own)
        self.start = clock()
        self.about = about or {}  # the command, the fault: what the page's header shows
        self.records = []  # (t, direction, line, note); only ever appended
        self.board = Board(timeout)
        self.fed = 0  # how many records the board has read
        self.lock = threading.Lock()  # one thread feeds the board at a time
        self.changed = threading.Condition()  # wakes the viewers
        self.viewers = 0
        self.ended_at = None
        self.card = None  # a report card (report_card.py --board): sent to the page with the recording's end
        self.kept = 0  # bytes of the lines kept

    def now(self) -> float:
        """Seconds since the recording began."""
        return self.clock() - self.start

    def record(self, direction: str, line: bytes, note: dict | None = None):
        """Keep one line the relay passed; a line longer than the lab reads is kept cut, with its size."""
        if len(line) > MAX_MESSAGE_BYTES:
            line, note = line[:SHOWN_CHARS], {**(note or {}), "size": len(line)}
        if self.keeps(len(line)):
            self.records.append((self.now(), direction, line, note))
        if self.viewers:
            self.wake()

    def record_lines(self, direction: str, lines: list):
        """Keep several lines that arrived together (one clock reading for all)."""
        t = self.now()
        for line in lines:
            if len(line) > MAX_MESSAGE_BYTES:
                self.record(direction, line)
            elif self.keeps(len(line)):
                self.records.append((t, direction, line, None))
        if self.viewers and lines:
            self.wake()

    def keeps(self, size: int) -> bool:
        """Whether one more line of size bytes is kept: past MAX_KEPT_LINES or MAX_KEPT_BYTES, a note says so once,
        and the board keeps nothing more (the relay passes and logs every line all the same)."""
        if self.kept + size <= MAX_KEPT_BYTES and len(self.records) < MAX_KEPT_LINES:
            self.kept += size
            return True
        if self.kept <= MAX_KEPT_BYTES:
            self.kept = MAX_KEPT_BYTES + 1  # the note goes in once
            self.records.append((self.now(), "full", f"the board keeps no more lines ({len(self.records)} lines, "
                                 f"{MAX_KEPT_BYTES // 1024 // 1024} MiB at most): the rest pass, logged, unseen here", None))
        return False

    def begin(self, title: str):
        """A new session begins on this board (client_demo.py --board)."""
        self.records.append((self.now(), "session", title, None))
        self.wake()

    def end(self):
        """The recording is over (its last session ended): the viewers hear so, and then their streams close."""
        self.ended_at = self.now()
        self.wake()

    def wake(self):
        """Tell every viewer that something changed."""
        with self.changed:
            self.changed.notify_all()

    def catch_up(self, limit: int | None = None):
        """Feed the board the records it has not read yet (at most limit), then the clock (a request may be late)."""
        with self.lock:
            stop = len(self.records) if limit is None else min(len(self.records), self.fed + limit)
            while self.fed < stop:
                t, direction, line, note = self.records[self.fed]
                self.fed += 1
                if direction == "session":
                    self.board.begin(line, t)
                elif direction == "full":
                    self.board.full(line, t)
                else:
                    self.board.feed(direction, line, t, note)
            if self.fed < len(self.records):
                return  # more to read: the clock waits for the lines before it
            if self.ended_at is not None and self.board.ended is None:
                self.board.end(self.ended_at)
            elif self.ended_at is None:
                self.board.tick(self.now())

    def view(self, cursor: int, wait: float = 0.0, limit: int | None = None) -> tuple:
        """(the events from number cursor + 1 on, the state, whether it ended), waiting up to wait s for news.

        limit bounds the lines read now: a page behind a burst catches up over several views, and the
        relay's threads are not kept waiting for the interpreter meanwhile.
        """
        with self.changed:
            if wait and self.fed == len(self.records) and len(self.board.events) <= cursor and self.ended_at is None:
                self.changed.wait(wait)
        self.catch_up(limit)
        with self.lock:
            return self.board.events[cursor:], self.board.state(self.now()), self.board.ended is not None


# ---------------------------------------------------------------------------------------------------
# ---- 5. The page ----
# One document, nothing fetched but its own event stream. The script draws what the Board said; it infers
# nothing itself. GET / is the page, /events the stream (every event so far, then each as it comes),
# /recording the same as one JSON document.
# ---------------------------------------------------------------------------------------------------

PAGE = r"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>wire board</title>
<style>
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.45 system-ui, sans-serif; color: #0f172a; background: #f1f5f9; }
header { display: flex; gap: 1.5em; align-items: baseline; padding: .5em 1em; background: #0f172a; color: #e2e8f0; }
header h1 { font-size: 15px; margin: 0; }
header code { color: #93c5fd; }
#fault { color: #fbbf24; }
#status { margin-left: auto; }
main { display: grid; grid-template-columns: minmax(460px, 3fr) minmax(320px, 2fr); gap: 1em; padding: 1em;
       height: calc(100vh - 2.5em); }
#diagram, #side { overflow-y: auto; }
#diagram { background: #fff; border: 1px solid #cbd5e1; }
.row, .ends { display: grid; grid-template-columns: 3.5em 1fr 15em; align-items: stretch; }
.ends { position: sticky; top: 0; z-index: 1; background: #fff; border-bottom: 1px solid #cbd5e1; font-weight: 600; }
.ends .lane { display: flex; justify-content: space-between; border: 0; }
.ends .lane span { transform: translateX(-50%); padding: .3em 0; }
.ends .lane span + span { transform: translateX(50%); }
.lane { position: relative; min-height: 2.6em; margin: 0 3.5em;
        border-left: 2px solid #94a3b8; border-right: 2px solid #94a3b8; }  /* the two lifelines */
.n { text-align: right; padding: .6em .4em 0 0; color: #64748b; font-variant-numeric: tabular-nums; }
.label { position: absolute; left: .5em; right: .5em; top: .1em; text-align: center; white-space: nowrap;
         overflow: hidden; text-overflow: ellipsis; font-family: ui-monospace, monospace; font-size: 12px; }
.arrow { position: absolute; left: 0; right: 0; top: 1.75em; border-top: 2px solid currentColor; }
.arrow::after { content: ""; position: absolute; top: -7px; border: 6px solid transparent; }
.up .arrow::after { right: -2px; border-left: 10px solid currentColor; border-right: 0; }
.down .arrow::after { left: -2px; border-right: 10px solid currentColor; border-left: 0; }
.k-request { color: #1d4ed8; } .k-result { color: #15803d; } .k-error { color: #b91c1c; }
.k-notification { color: #7c3aed; } .k-notification .arrow { border-top-style: dashed; }
.k-junk, .k-invalid, .k-oversized { color: #64748b; } .k-junk .arrow, .k-invalid .arrow { border-top-style: dotted; }
.k-dropped { color: #b45309; } .up.k-dropped .arrow { right: 50%; } .down.k-dropped .arrow { left: 50%; }
.k-dropped .arrow::after { content: "✗"; border: 0; top: -.8em; font-size: 15px; }
.up.k-dropped .arrow::after { right: -.4em; } .down.k-dropped .arrow::after { left: -.4em; }
.banner { display: block; margin: .5em 0; text-align: center; font-style: italic; color: #334155; }
.k-timeout .banner { color: #b91c1c; } .k-session .banner { font-weight: 600; font-style: normal; }
.k-session { border-top: 3px double #94a3b8; }
.grouped .lane { background: #faf5ff; } .grouped .n { border-left: 4px solid #a855f7; }
.round { position: absolute; left: .4em; bottom: 0; font-size: 10px; line-height: 1.2; color: #7e22ce; }
.grouped .arrow { top: 1.6em; }
.flagged { background: #fef2f2; }
.notes { padding: .35em .3em; }
.notes span { display: inline-block; margin: 1px; padding: 0 .4em; border-radius: 3px; color: #fff; font-size: 11px; }
.notes .flag { background: #dc2626; } .notes .fault { background: #b45309; }
.row { cursor: pointer; } .row:hover { background: #f8fafc; }
.selected { outline: 2px solid #0ea5e9; outline-offset: -2px; }
section { background: #fff; border: 1px solid #cbd5e1; margin-bottom: 1em; padding: .5em .8em; }
h2 { margin: 0 0 .4em; font-size: 11px; letter-spacing: .06em; text-transform: uppercase; color: #475569; }
dl { margin: 0; } dt { font-weight: 600; margin-top: .35em; } dd { margin: 0 0 0 1em; overflow-wrap: anywhere; }
pre { margin: .4em 0; padding: .5em; max-height: 45vh; overflow: auto; background: #f1f5f9; white-space: pre-wrap;
      overflow-wrap: anywhere; font-size: 12px; }
.cite { color: #475569; font-style: italic; }
#broken li { cursor: pointer; margin-bottom: .3em; }
#legend b { font-weight: 600; margin-right: .6em; white-space: nowrap; } #legend .flagged { color: #dc2626; }
#card ol { padding: 0; margin: 0; } #card li { list-style: none; cursor: pointer; margin: .25em 0; }
#card .mark { display: inline-block; width: 1.2em; font-weight: 700; } .v-pass .mark { color: #15803d; }
.v-fail .mark { color: #b91c1c; } .v-not_applicable, .v-not_tested, .v-could_not_run { color: #64748b; }
#card .why, #card .differs { margin-left: 1.2em; }
#card a { margin-left: .4em; } #card-summary { font-weight: 600; } .decides { background: #fef9c3; }
</style>
</head>
<body>
<header>
  <h1>wire board</h1><code id="command"></code><span id="fault"></span><span id="status">connecting…</span>
</header>
<main>
  <div id="diagram">
    <div class="ends">
      <span></span><div class="lane"><span>Host</span><span>Server</span></div><span>rules broken</span>
    </div>
    <div id="rows"></div>
  </div>
  <div id="side">
    <section id="card" hidden><h2>Report card</h2><p id="card-eras"></p><ol id="card-rows"></ol>
      <p id="card-summary"></p></section>
    <section id="legend">
      <b class="k-request">→ request</b> <b class="k-result">← result</b> <b class="k-error">← error</b>
      <b class="k-notification">⇢ notification (dashed)</b> <b class="k-junk">not JSON (dotted)</b>
      <b class="k-dropped">✗ dropped by a fault</b> <b class="flagged">⚑ a rule broken</b></section>
    <section id="detail"><h2>Message</h2><p>Click a message to see its JSON.</p></section>
    <section><h2>State</h2><dl id="state"></dl></section>
    <section><h2>Rules broken</h2><ol id="broken"></ol></section>
  </div>
</main>
<script>
"use strict";
// Draws what board.py's Board says; infers nothing itself. Each "wire" event is one row of the diagram.
const $ = (id) => document.getElementById(id);
const events = new Map();  // event number -> event

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function addEvent(event) {
  events.set(event.n, event);
  const row = el("div", `row k-${event.kind} ${event.dir === "→" ? "up" : "down"}`);
  row.dataset.n = event.n;
  const lane = el("div", "lane");
  if (["timeout", "end", "session"].includes(event.kind)) {
    lane.append(el("span", "banner", event.label));
  } else {
    lane.append(el("span", "label", event.label), el("div", "arrow"));
  }
  const notes = el("div", "notes");
  for (const broken of event.flags) notes.append(el("span", "flag", "⚑ " + broken.title));
  if (event.fault) notes.append(el("span", "fault", "fault"));
  row.append(el("span", "n", "#" + event.n), lane, notes);
  if (event.flags.length) row.classList.add("flagged");
  row.addEventListener("click", () => show(event.n));
  row.title = "click: the message's JSON";
  const diagram = $("diagram");
  const following = diagram.scrollTop + diagram.clientHeight >= diagram.scrollHeight - 8;
  $("rows").append(row);
  if (event.group) group(event);
  if (following) diagram.scrollTop = diagram.scrollHeight;
  if (location.hash === "#" + event.n) show(event.n);  // a link to one message: .../#12
  for (const broken of event.flags) {
    const item = el("li", "", `#${event.n} ${event.label}: ${broken.text} `);
    item.append(el("span", "cite", broken.cite));
    item.addEventListener("click", () => show(event.n));
    $("broken").append(item);
  }
}

function group(event) {
  // An input_required round trip: the request it answers joins the group too.
  for (const n of [event.n, event.answers]) {
    const row = document.querySelector(`.row[data-n="${n}"]`);
    if (!row || row.classList.contains("grouped")) continue;
    row.classList.add("grouped");
    row.querySelector(".lane").append(el("span", "round", `input_required #${event.group}, round ${event.round}`));
  }
}

function show(n) {
  const event = events.get(n);
  document.querySelectorAll(".selected").forEach((row) => row.classList.remove("selected"));
  document.querySelector(`.row[data-n="${n}"]`).classList.add("selected");
  const box = $("detail");
  box.replaceChildren(el("h2", "", `Message #${n} ${event.dir} ${event.kind}`));
  if (event.answers) box.append(el("p", "", `answers #${event.answers}, ${event.waited} s after it`));
  for (const broken of event.flags) {
    const p = el("p", "", `⚑ ${broken.text} `);
    p.append(el("span", "cite", broken.cite));
    box.append(p);
  }
  if (event.fault) box.append(el("p", "", `fault (${event.fault.fault}): ${event.fault.text}`));
  box.append(el("pre", "json", pretty(event.line || event.label)));
  if (event.fault && event.fault.original) {
    box.append(el("p", "", "what the peer sent:"), el("pre", "", pretty(event.fault.original)));
  }
}

function showCard(card) {
  // A report card (report_card.py --board): a row a rule, each linked to the messages that decided it.
  $("card").hidden = false;
  $("card-eras").textContent = card.eras;  // the eras the server serves, or why no session opened
  $("card-summary").textContent = card.summary.join(" · ");
  $("card-rows").replaceChildren();
  for (const rule of card.rules) {
    const item = el("li", "v-" + rule.outcome);  // pass, fail, not_applicable, not_tested, could_not_run
    item.dataset.rule = rule.id;
    item.append(el("span", "mark", rule.mark), el("b", "", rule.id), document.createTextNode(`: ${rule.claim} `),
                el("span", "cite", rule.passage));
    if (rule.text) item.append(el("div", "why", rule.text));
    if (rule.differs) item.append(el("div", "differs", `course: ${rule.differs.course} · spec: ${rule.differs.spec}`));
    for (const n of rule.events) {
      const link = el("a", "", "#" + n);
      link.href = "#" + n;
      link.addEventListener("click", (click) => { click.preventDefault(); click.stopPropagation(); decide(rule, n); });
      item.append(link);
    }
    item.addEventListener("click", () => decide(rule, rule.events.length ? rule.events[0] : rule.session));
    $("card-rows").append(item);
  }
}

function decide(rule, n) {
  // The messages that decided a rule are marked in the diagram, and message n is opened and scrolled to.
  document.querySelectorAll(".decides").forEach((row) => row.classList.remove("decides"));
  for (const m of rule.events) document.querySelector(`.row[data-n="${m}"]`).classList.add("decides");
  show(n);
  document.querySelector(`.row[data-n="${n}"]`).scrollIntoView({block: "center"});
}

function pretty(line) {
  try { return JSON.stringify(JSON.parse(line), null, 2); } catch (error) { return line; }
}

function showState(view) {
  const list = $("state");
  list.replaceChildren();
  for (const [term, items] of view.lines) {
    list.append(el("dt", "", term));
    for (const item of items) list.append(el("dd", "", item));
  }
}

const stream = new EventSource("events");
stream.addEventListener("hello", (message) => {
  // A (re)connection replays the recording from its first event: start the drawing afresh.
  const about = JSON.parse(message.data);
  events.clear();
  $("rows").replaceChildren();
  $("broken").replaceChildren();
  $("command").textContent = about.command || "";
  $("fault").textContent = about.fault ? `--fault ${about.fault}: ${about.fault_text}` : "";
  $("status").textContent = "live";
  $("card").hidden = true;
});
stream.addEventListener("wire", (message) => addEvent(JSON.parse(message.data)));
stream.addEventListener("card", (message) => showCard(JSON.parse(message.data)));
stream.addEventListener("state", (message) => showState(JSON.parse(message.data)));
stream.addEventListener("end", () => {
  $("status").textContent = "the session ended";
  stream.close();
});
stream.onerror = () => { $("status").textContent = "the board is not answering: reconnecting…"; };
</script>
</body>
</html>
"""


def public(event: dict) -> dict:
    """An event as the page gets it: a very long line is cut."""
    if len(event["line"]) <= SHOWN_CHARS:
        return event
    return {**event, "line": event["line"][:SHOWN_CHARS] + f"… ({len(event['line'])} characters)"}


def sse(kind: str, data) -> bytes:
    """One Server-Sent Event: its name and one line of JSON."""
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def recording_json(recording: Recording):
    """The recording as one JSON document ({"events", "state", "ended", "card"}), in pieces, each event made as the
    one before has gone out."""
    events, state, ended = recording.view(0)
    yield b'{"events": ['
    for number, event in enumerate(events):
        yield (", " if number else "").encode() + json.dumps(public(event), ensure_ascii=False).encode()
    rest = json.dumps({"state": state, "ended": ended, "card": recording.card}, ensure_ascii=False)
    yield ("], " + rest[1:]).encode()


class PageHandler(http.server.BaseHTTPRequestHandler):
    """The board's page, its recording as JSON, and its event stream: the recording is its server's (serve sets it)."""

    def setup(self):
        """The connection's set-up, each read and write waiting PAGE_IDLE_S at most: an idle connection is closed."""
        self.timeout = PAGE_IDLE_S
        super().setup()

    def log_message(self, format, *args):
        pass  # stderr belongs to the host's log

    def do_GET(self):
        try:
            host = urllib.parse.urlsplit("//" + self.headers.get("Host", "")).hostname
            path = urllib.parse.urlsplit(self.path).path
        except ValueError:  # "[" that opens no IPv6 address, say
            return self.reply(400, "text/plain", b"Host or the target cannot be read as a URL's part")
        if host not in LOCAL_NAMES:  # a DNS-rebinding page must not read the recording
            self.reply(403, "text/plain", b"the board answers only local names")
        elif path == "/":
            self.reply(200, "text/html; charset=utf-8", PAGE.encode())
        elif path == "/recording":
            self.send_response(200)  # its end is the connection's (HTTP/1.0): the length is not known before
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.write_pieces(recording_json(self.server.recording))
        elif path == "/events":
            self.stream()
        else:
            self.reply(404, "text/plain", b"not found: the board serves /, /events and /recording")

    def reply(self, status: int, kind: str, body: bytes):
        """A whole response."""
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def write_pieces(self, chunks):
        """Write chunks (bytes each) as they come, gathered into writes of about PAGE_PIECE bytes."""
        gathered, size = [], 0
        for chunk in chunks:
            gathered.append(chunk)
            size += len(chunk)
            if size >= PAGE_PIECE:
                self.wfile.write(b"".join(gathered))
                gathered, size = [], 0
        if gathered:
            self.wfile.write(b"".join(gathered))

    def stream(self):
        """Every event so far, then each as it comes, with the state every second; until the recording ends."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        recording = self.server.recording
        with recording.changed:
            recording.viewers += 1
        try:
            self.wfile.write(sse("hello", recording.about))
            cursor, ended = 0, False
            while not ended:
                events, state, ended = recording.view(cursor, wait=1.0, limit=VIEW_BATCH)
                cursor += len(events)
                view = {"lines": describe(state, ages=True), "flags": state["flags"], "ended": ended}
                card = [sse("card", recording.card)] if ended and recording.card is not None else []  # after every event
                wire = (sse("wire", public(event)) for event in events)  # each made as the one before has gone out
                self.write_pieces(itertools.chain(wire, [sse("state", view)], card, [sse("end", {})] if ended else []))
                time.sleep(VIEW_INTERVAL)  # the messages of the next moment go out together
        except OSError:
            pass  # the viewer closed or reloaded: the relay never notices
        finally:
            with recording.changed:
                recording.viewers -= 1
                recording.changed.notify_all()


BUSY = (b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
        b"the board's page has as many connections as it serves at once: try again shortly")


class PageServer(http.server.ThreadingHTTPServer):
    """The page's server: a thread for each connection, MAX_PAGE_CONNECTIONS at most; recording is what it shows."""
    daemon_threads = True

    def __init__(self, port: int, recording: Recording):
        super().__init__(("127.0.0.1", port), PageHandler)
        self.recording = recording
        self.slots = threading.BoundedSemaphore(MAX_PAGE_CONNECTIONS)

    def process_request(self, connection, client_address):
        if not self.slots.acquire(blocking=False):  # a crowd that never reads would hold a thread and its bytes each
            with contextlib.suppress(OSError):
                connection.settimeout(0)  # a few bytes into an empty socket: the accepting thread never waits
                connection.send(BUSY)
            self.shutdown_request(connection)
            return
        super().process_request(connection, client_address)

    def process_request_thread(self, connection, client_address):
        try:
            super().process_request_thread(connection, client_address)
        finally:
            self.slots.release()


def serve(recording: Recording, port: int = 0):
    """Serve the page for recording on 127.0.0.1:port (0: a free one), in a thread; returns the HTTP server."""
    httpd = PageServer(port, recording)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    return httpd


def url_of(httpd) -> str:
    """The page's address."""
    return f"http://127.0.0.1:{httpd.server_address[1]}/"


def let_viewers_finish(recording: Recording, seconds: float = 2.0):
    """Give each viewer up to seconds to read the end of the recording before the process goes."""
    deadline = time.monotonic() + seconds
    with recording.changed:
        while recording.viewers and time.monotonic() < deadline:
            recording.changed.wait(deadline - time.monotonic())


# ---------------------------------------------------------------------------------------------------
# ---- 6. The relay ----
# The tap (tap.py, section 11), recording each line: each chunk is passed on as it came, after its whole lines
# are recorded and logged. With a fault, lines are passed one by one, so that one of them can change.
# ---------------------------------------------------------------------------------------------------

class Relay(Tap):
    """The tap with a window: each line the tap passes is kept in its recording, and a fault may change it."""

    name = "board"

    def __init__(self, command: list, recording: Recording, log=None, fault: Fault | None = None,
                 subreaper: bool = False):
        super().__init__(command, log, subreaper)
        self.recording, self.fault = recording, fault
        self.target_locks = {}  # a line delayed by the fault and the lines after it reach their reader one at a time
        self.timers = []  # the fault's delayed lines, each on a timer

    def run(self) -> int:
        """The tap's run; then every line the fault delayed goes out, late, before the board ends."""
        code = super().run()
        for timer in self.timers:
            timer.join()
        return code

    def passed(self, target: int, arrow: str, lines: list, chunk: bytes, final: bool = False):
        """Record the read's whole lines, then pass it on as the tap does; with a fault, line by line through it."""
        lines = [b"".join(pieces) for pieces in lines]
        if self.fault is None:
            self.recording.record_lines(arrow, lines)
            return super().passed(target, arrow, [[line] for line in lines], chunk, final)
        for line in lines:
            self.faulty(target, arrow, line, b"" if final else b"\n")

    def faulty(self, target: int, arrow: str, line: bytes, end: bytes):
        """Pass one line through the fault: dropped (recorded only), delayed on a timer, or changed."""
        for out, note, action in self.fault.change(arrow, line):
            if action == "drop":
                self.recording.record(arrow, out, note)
            elif action == "delay":
                timer = threading.Timer(self.fault.delay, self.deliver, (target, arrow, out, end, note))
                timer.daemon = True
                self.timers.append(timer)
                timer.start()
            else:
                self.deliver(target, arrow, out, end, note)

    def deliver(self, target: int, arrow: str, line: bytes, end: bytes, note):
        """Record, log and send one line (a fault's timer may call this from its own thread)."""
        with self.target_locks.setdefault(target, threading.Lock()):
            self.recording.record(arrow, line, note)
            self.write_log(arrow, [[line]])
            try:
                self.forward(target, line + end)
            except OSError:
                pass  # the receiver is gone; the line was recorded all the same


def terminated(signum: int, frame):
    """SIGTERM: end the board as Ctrl-C would (the relay stops the server on its way out); exit 128 + signum."""
    raise SystemExit(128 + signum)


def release_stdout():
    """Close the host's end of the wire now (fd 1 then points to /dev/null): its reader sees the end at once,
    while the board still lets its pages finish and prints its summary."""
    with open(os.devnull, "wb") as nothing:
        os.dup2(nothing.fileno(), 1)


# ---------------------------------------------------------------------------------------------------
# ---- 7. The command line ----
# ---------------------------------------------------------------------------------------------------

USAGE = ("usage: python board.py [--port N] [--fault NAME] [--delay S] [--timeout S] [--log FILE] [--hold] "
         "[--] <server command> [args...]\n       python board.py --fault list")
OPTIONS = {"--port": "0", "--fault": None, "--delay": str(DEFAULT_DELAY), "--timeout": str(DEFAULT_TIMEOUT),
           "--log": None}


def summary(recording: Recording) -> list:
    """What the board says on stderr when the session ends: the flags, then the state."""
    if len(recording.records) > SUMMARY_LIMIT:
        return [f"the session ended after {len(recording.records)} lines: too many to read here"]
    recording.catch_up()
    board = recording.board
    count = board.state()["flags"]
    lines = [f"the session ended: {len(board.events)} events, {count} {'rule' if count == 1 else 'rules'} broken"]
    lines += [f"fault {text}" for text in board.faults()] + [f"! {text}" for text in board.flags()]
    return lines + state_text(board.state()).splitlines()


def main(argv: list | None = None) -> int:
    """The command line (see the module's docstring); returns the server's exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    options, hold = dict(OPTIONS), False
    while args and (args[0] in options or args[0] == "--hold"):
        if args[0] == "--hold":
            hold, args = True, args[1:]
            continue
        if len(args) < 2:
            break
        options[args[0]], args = args[1], args[2:]
    command = args[1:] if args[:1] == ["--"] else args  # "--" may be eaten by the host: optional
    if options["--fault"] == "list":
        for name, (change, passage) in FAULTS.items():
            print(f"{name:17} {change}\n{'':17} demonstrates {passage}")
        return 0
    try:
        port, delay, timeout = int(options["--port"]), float(options["--delay"]), float(options["--timeout"])
        fault = Fault(options["--fault"], delay) if options["--fault"] else None
    except ValueError as exc:
        print(f"board: {exc}\n{USAGE}", file=sys.stderr)
        return 2
    if not command or command[0].startswith("--"):
        print(USAGE, file=sys.stderr)
        return 2
    about = {"command": shlex.join(command), "fault": fault and fault.name,
             "fault_text": fault and FAULTS[fault.name][0], "timeout": timeout}
    recording = Recording(timeout, about)
    try:
        httpd = serve(recording, port)
    except OSError as exc:  # the port is taken, say: one line, not a traceback
        print(f"board: cannot serve the page on 127.0.0.1:{port}: {exc.strerror}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, terminated)
    print(f"board: {url_of(httpd)}", file=sys.stderr, flush=True)
    subreaper = become_subreaper()  # the board's own process: what its server orphans comes back to it, and ends
    try:
        if options["--log"]:
            with open(options["--log"], "a", encoding="utf-8") as log:
                code = Relay(command, recording, log, fault, subreaper).run()
        else:
            code = Relay(command, recording, None, fault, subreaper).run()
        release_stdout()
        recording.end()
        let_viewers_finish(recording)
        print("\n".join(f"board: {line}" for line in summary(recording)), file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        return 130  # Ctrl-C in a terminal: stop quietly
    try:
        while hold:  # --hold: the page stays up after the session, until Ctrl-C or SIGTERM
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    httpd.server_close()
    return code


if __name__ == "__main__":
    sys.exit(main())
