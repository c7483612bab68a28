"""tiny_auth_server.py: a teaching OAuth 2.1 authorization server, small enough to read in one sitting (lesson 12).

It issues the tokens an MCP server checks (mcp_auth.py): metadata (RFC 8414), dynamic client registration
(RFC 7591), an /authorize endpoint that approves at once (no login page: every request is its user's, `user`),
with PKCE S256 and the resource a token is for (RFC 8707), /token (authorization_code and refresh_token; the
client authenticated by client_secret_basic, client_secret_post, or none for a public client) and introspection
(RFC 7662). Its access tokens are JWTs signed HS256 with `signing_key`, which an MCP server verifies with
mcp_auth.JwtVerifier(auth.signing_key), or asks about with mcp_auth.IntrospectionVerifier.

Loopback only, everything in memory, nothing persisted, the standard library alone (not even the project's
modules): the lessons and tests start one, the product never imports it. A real authorization server logs its user in and asks before it approves.

    auth = TinyAuthServer()             # http://127.0.0.1:<port>, served on a thread
    auth.issuer                         # its metadata at /.well-known/oauth-authorization-server
    auth.close()
"""

import base64
import hashlib
import hmac
import http.server
import json
import secrets
import threading
import time
import urllib.parse

ACCESS_S = 3600  # an access token's lifetime
CODE_S = 60  # an authorization code's: it is spent at once, or never
MAX_FORM_BYTES = 16384  # a registration or token request's body, at most


def b64url_encode(data: bytes) -> str:
    """base64url without padding, as JWTs and PKCE write it (RFC 7515, section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class AuthHandler(http.server.BaseHTTPRequestHandler):
    """One request to the authorization server: each endpoint a method, each error an OAuth error object."""

    def log_message(self, format, *args):
        pass  # quiet: the lesson prints what crosses

    def reply(self, status: int, body: dict, headers: dict | None = None):
        """A JSON response; token responses are never cached (RFC 6749, section 5.1)."""
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in {"Content-Type": "application/json", "Cache-Control": "no-store",
                            "Content-Length": str(len(data)), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status: int, error: str, description: str, headers: dict | None = None):
        """An OAuth error response (RFC 6749, section 5.2)."""
        self.reply(status, {"error": error, "error_description": description}, headers)

    def body(self) -> bytes | None:
        """The request's body, up to MAX_FORM_BYTES (None, and 413 sent, if longer)."""
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_FORM_BYTES:
            self.error(413, "invalid_request", f"the body is {MAX_FORM_BYTES} bytes at most")
            return None
        return self.rfile.read(length)

    def form(self) -> dict | None:
        """The request's form fields, each given once (RFC 6749, section 3.1: a repeated one is an error)."""
        data = self.body()
        if data is None:
            return None
        pairs = urllib.parse.parse_qsl(data.decode("utf-8", "replace"), keep_blank_values=True)
        fields = dict(pairs)
        if len(fields) != len(pairs):
            self.error(400, "invalid_request", "a parameter was sent twice")
            return None
        return fields

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/.well-known/oauth-authorization-server":
            return self.reply(200, self.server.metadata())
        if url.path == "/authorize":
            return self.authorize(urllib.parse.parse_qs(url.query))
        self.error(404, "invalid_request", "not found")

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/register":
            return self.register()
        form = self.form() if path in ("/token", "/introspect") else None
        if form is None:
            return None if path in ("/token", "/introspect") else self.error(404, "invalid_request", "not found")
        client = self.client(form)
        if client is None:  # RFC 6749, section 5.2: invalid_client is 401, with the scheme the client tried
            return self.error(401, "invalid_client", "unknown client, or a wrong secret",
                              {"WWW-Authenticate": 'Basic realm="tiny-auth"'})
        if path == "/introspect":
            return self.reply(200, self.server.introspect(form.get("token", "")))
        self.token(form, client)

    def register(self):
        """RFC 7591: a client's metadata in, its client_id (and secret, unless it is public) out."""
        data = self.body()
        if data is None:
            return
        try:
            asked = json.loads(data)
        except ValueError:
            return self.error(400, "invalid_client_metadata", "the body is JSON")
        uris = asked.get("redirect_uris") if isinstance(asked, dict) else None
        if not (isinstance(uris, list) and uris and all(isinstance(uri, str) for uri in uris)):
            return self.error(400, "invalid_redirect_uri", "redirect_uris is a list of URLs")
        method = asked.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in self.server.AUTH_METHODS:
            return self.error(400, "invalid_client_metadata", f"token_endpoint_auth_method is one of {self.server.AUTH_METHODS}")
        client = {**asked, "client_id": secrets.token_urlsafe(12), "client_id_issued_at": int(time.time()),
                  "redirect_uris": uris, "token_endpoint_auth_method": method,
                  "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"]}
        if method != "none":
            client |= {"client_secret": secrets.token_urlsafe(24), "client_secret_expires_at": 0}
        self.server.clients[client["client_id"]] = client
        self.reply(201, client)

    def authorize(self, query: dict):
        """Approve at once: a code for the client's redirect URI, bound to the PKCE challenge and the resource."""
        asked = {name: values[0] for name, values in query.items() if len(values) == 1}
        client = self.server.clients.get(asked.get("client_id", ""))
        redirect = asked.get("redirect_uri")
        if client is None or redirect not in client["redirect_uris"]:  # never redirect to an unregistered URL
            return self.error(400, "invalid_request", "unknown client_id, or a redirect_uri it did not register")
        problem = ("response_type is code" if asked.get("response_type") != "code"
                   else "PKCE: code_challenge, with code_challenge_method S256" if not asked.get("code_challenge")
                   or asked.get("code_challenge_method") != "S256" else None)
        answer = {"error": "invalid_request", "error_description": problem} if problem else {
            "code": self.server.new_code(client["client_id"], redirect, asked)}
        answer |= {"state": asked["state"]} if "state" in asked else {}
        self.send_response(302)
        self.send_header("Location", redirect + ("&" if "?" in redirect else "?") + urllib.parse.urlencode(answer))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def client(self, form: dict) -> dict | None:
        """The client the request authenticates as: HTTP Basic, or client_id (and client_secret) in the form."""
        basic = self.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            try:
                decoded = base64.b64decode(basic[6:], validate=True).decode()
            except ValueError:
                return None
            client_id, _, secret = (urllib.parse.unquote(part) for part in decoded.partition(":"))
        else:
            client_id, secret = form.get("client_id", ""), form.get("client_secret")
        client = self.server.clients.get(client_id)
        if client is None or "client_secret" not in client:
            return client if secret is None else None  # a public client sends its id alone
        return client if secret and hmac.compare_digest(secret, client["client_secret"]) else None

    def token(self, form: dict, client: dict):
        """RFC 6749, section 4.1.3 and 6: a code (with its PKCE verifier) or a refresh token, for an access token."""
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            code = self.server.codes.pop(form.get("code", ""), None)  # spent now, whatever follows
            verifier = form.get("code_verifier", "")
            challenge = b64url_encode(hashlib.sha256(verifier.encode()).digest())
            if (code is None or code["client_id"] != client["client_id"] or code["expires"] < time.time()
                    or code["redirect_uri"] != form.get("redirect_uri")):
                return self.error(400, "invalid_grant", "the code is unknown, spent, expired, or another client's")
            if not hmac.compare_digest(challenge, code["code_challenge"]):
                return self.error(400, "invalid_grant", "PKCE: the code_verifier does not match the code_challenge")
            if form.get("resource", code["resource"]) != code["resource"]:
                return self.error(400, "invalid_target", "the resource is not the one authorized")
            return self.reply(200, self.server.tokens(code["subject"], client["client_id"], code["scope"],
                                                      code["resource"]))
        if grant_type == "refresh_token":
            kept = self.server.refresh.pop(form.get("refresh_token", ""), None)  # rotated: each is used once
            if kept is None or kept["client_id"] != client["client_id"]:
                return self.error(400, "invalid_grant", "the refresh token is unknown, spent, or another client's")
            if form.get("resource", kept["resource"]) != kept["resource"]:
                return self.error(400, "invalid_target", "the resource is not the one authorized")
            return self.reply(200, self.server.tokens(kept["subject"], client["client_id"], kept["scope"],
                                                      kept["resource"]))
        self.error(400, "unsupported_grant_type", "authorization_code or refresh_token")


class TinyAuthServer(http.server.ThreadingHTTPServer):
    """The authorization server, on loopback, serving on a thread of its own from the moment it is made."""
    daemon_threads = True
    AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]

    def __init__(self, port: int = 0, scopes=(), user: str = "student"):
        super().__init__(("127.0.0.1", port), AuthHandler)
        self.issuer = f"http://127.0.0.1:{self.server_address[1]}"
        self.scopes, self.user = list(scopes), user  # user: whom /authorize approves, without asking
        self.signing_key = secrets.token_bytes(32)  # HS256: the MCP server verifies with the same key
        self.clients, self.codes, self.refresh = {}, {}, {}  # client_id -> its metadata; code, refresh token -> grant
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def metadata(self) -> dict:
        """RFC 8414, section 2: where each endpoint is, and what it supports."""
        return {"issuer": self.issuer, "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token", "registration_endpoint": self.issuer + "/register",
                "introspection_endpoint": self.issuer + "/introspect", "scopes_supported": self.scopes,
                "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": self.AUTH_METHODS,
                "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]}

    def new_code(self, client_id: str, redirect_uri: str, asked: dict) -> str:
        """A code for this authorization: one use, CODE_S to use it."""
        code = secrets.token_urlsafe(24)
        self.codes[code] = {"client_id": client_id, "redirect_uri": redirect_uri, "subject": self.user,
                            "code_challenge": asked["code_challenge"], "resource": asked.get("resource"),
                            "scope": asked.get("scope", " ".join(self.scopes)), "expires": time.time() + CODE_S}
        return code

    def issue(self, subject: str, client_id: str, scope: str, audience: str | None, lifetime: float = ACCESS_S) -> str:
        """An access token: a JWT (RFC 9068's claims) signed HS256 with signing_key."""
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": subject, "client_id": client_id, "scope": scope, "iat": now,
                  "exp": now + int(lifetime), "jti": secrets.token_urlsafe(12)}
        claims |= {"aud": audience} if audience else {}
        header = b64url_encode(json.dumps({"alg": "HS256", "typ": "at+jwt"}).encode())
        payload = b64url_encode(json.dumps(claims).encode())
        signature = hmac.new(self.signing_key, f"{header}.{payload}".encode(), hashlib.sha256).digest()
        return f"{header}.{payload}.{b64url_encode(signature)}"

    def tokens(self, subject: str, client_id: str, scope: str, resource: str | None) -> dict:
        """A token response (RFC 6749, section 5.1): the access token, and a refresh token for the next one."""
        refresh = secrets.token_urlsafe(24)
        self.refresh[refresh] = {"subject": subject, "client_id": client_id, "scope": scope, "resource": resource}
        return {"access_token": self.issue(subject, client_id, scope, resource), "token_type": "Bearer",
                "expires_in": ACCESS_S, "scope": scope, "refresh_token": refresh}

    def introspect(self, token: str) -> dict:
        """RFC 7662, section 2.2: a token this server signed and that has not expired is active, with its claims."""
        parts = token.split(".")
        if len(parts) != 3:
            return {"active": False}
        signature = hmac.new(self.signing_key, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(b64url_encode(signature), parts[2]):
            return {"active": False}
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
        return {"active": True, "token_type": "Bearer", **claims} if claims["exp"] > time.time() else {"active": False}

    def close(self):
        """Stop serving and let go of the port."""
        self.shutdown()
        self.server_close()
