"""The client authorizes itself (mcp_oauth, spec 2025-11-25 and 2026-07-28, basic/authorization): against a small
protected MCP endpoint and its authorization server, written here, on loopback; and ES256 against RFC 6979's vectors.
"""

import base64
import hashlib
import http.server
import json
import threading
import urllib.parse

import pytest

import mcp_full
import mcp_http
import mcp_oauth
import server_demo
from harness import TIMEOUT, http_endpoint

REDIRECT = mcp_oauth.DEFAULT_REDIRECT
PRM_MCP = "/.well-known/oauth-protected-resource/mcp"
AS_META = "/.well-known/oauth-authorization-server"


class World:
    """A protected MCP endpoint at /mcp and an authorization server on one loopback port, as options say; each
    request logged ("GET /path"), each authorization, token request and registration kept as it came."""

    DEFAULTS = {"prm_path": PRM_MCP, "prm_in_header": True, "prm_resource": None, "prm_scopes": None,
                "authorization_server": None, "as_prefix": "", "as_metadata_path": AS_META, "metadata_issuer": None,
                "as_extra": {}, "iss": "correct", "challenge_scope": None, "call_scope": None, "refresh": False,
                "registration": {}, "tokens": None, "grant": True}

    def __init__(self, **options):
        self.options = self.DEFAULTS | options
        self.log, self.authorizations, self.token_requests, self.registrations = [], [], [], []
        self.tokens = self.options["tokens"] if self.options["tokens"] is not None else {}  # access token -> scopes
        self.codes, self.refresh_tokens, self.issued, self.lock = {}, {}, [], threading.Lock()
        self.mcp = server_demo.make_server()
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), WorldHandler)
        self.httpd.world = self
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def issuer(self) -> str:
        return self.base + self.options["as_prefix"]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=TIMEOUT)

    def issue(self, scopes: list) -> dict:
        """A new access token for scopes, or for none if the world grants none (and a refresh token, if it gives them)."""
        scopes = scopes if self.options["grant"] else []
        with self.lock:
            token = {"access_token": f"at-{len(self.tokens) + 1}-{self.httpd.server_address[1]}", "token_type": "Bearer",
                     "expires_in": 3600}
            self.tokens[token["access_token"]] = scopes
            if self.options["refresh"]:
                token["refresh_token"] = f"rt-{len(self.issued) + 1}"
                self.refresh_tokens[token["refresh_token"]] = scopes
            self.issued += [token[name] for name in ("access_token", "refresh_token") if name in token]
        return token | ({"scope": " ".join(scopes)} if scopes else {})


class WorldHandler(http.server.BaseHTTPRequestHandler):
    """The world's one handler: metadata, authorize, token, register and the MCP endpoint."""

    protocol_version = "HTTP/1.1"  # kept alive, as the transport expects of a server

    def log_message(self, format, *args):
        pass

    def answer(self, status: int, body=None, headers: dict | None = None):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        world, options = self.server.world, self.server.world.options
        path, _, query = self.path.partition("?")
        world.log.append(f"GET {path}")
        prefix = world.base + options["as_prefix"]
        if path == options["prm_path"]:
            document = {"resource": options["prm_resource"] or world.base + "/mcp",
                        "authorization_servers": [options["authorization_server"] or world.issuer]}
            if options["prm_scopes"] is not None:
                document["scopes_supported"] = options["prm_scopes"]
            return self.answer(200, document)
        if path == options["as_metadata_path"]:
            return self.answer(200, {"issuer": options["metadata_issuer"] or world.issuer,
                                     "authorization_endpoint": prefix + "/authorize", "token_endpoint": prefix + "/token",
                                     "registration_endpoint": prefix + "/register", "response_types_supported": ["code"],
                                     "code_challenge_methods_supported": ["S256"]} | options["as_extra"])
        if path == options["as_prefix"] + "/authorize":
            asked = dict(urllib.parse.parse_qsl(query))
            world.authorizations.append(asked)
            code = f"code-{len(world.authorizations)}"
            world.codes[code] = asked
            back = {"code": code, "state": asked["state"]}
            iss = {"correct": world.issuer, "wrong": "https://evil.example.com", "slash": world.issuer + "/",
                   "omit": None}[options["iss"]]
            if iss is not None:
                back["iss"] = iss
            return self.answer(302, None, {"Location": asked["redirect_uri"] + "?" + urllib.parse.urlencode(back)})
        self.answer(404, {"error": "not_found"})

    def do_POST(self):
        world, options = self.server.world, self.server.world.options
        world.log.append(f"POST {self.path}")
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.path == options["as_prefix"] + "/register":
            asked = json.loads(body)
            world.registrations.append(asked)
            return self.answer(201, {"client_id": f"client-{len(world.registrations)}-{world.httpd.server_address[1]}"}
                               | options["registration"])
        if self.path == options["as_prefix"] + "/token":
            form = dict(urllib.parse.parse_qsl(body.decode()))
            world.token_requests.append(form | {"authorization": self.headers.get("Authorization")})
            if form["grant_type"] == "authorization_code" and form.get("code") in world.codes:
                asked = world.codes.pop(form["code"])
                return self.answer(200, world.issue(asked.get("scope", "").split()))
            if form["grant_type"] == "refresh_token" and form.get("refresh_token") in world.refresh_tokens:
                return self.answer(200, world.issue(world.refresh_tokens.pop(form["refresh_token"])))
            if form["grant_type"] == "client_credentials" and self.headers.get("Authorization", "").startswith("Basic "):
                return self.answer(200, world.issue(form.get("scope", "").split()))
            return self.answer(400, {"error": "invalid_grant"})
        if self.path == "/mcp":
            return self.protected(world, options, json.loads(body))
        self.answer(404, {"error": "not_found"})

    def protected(self, world: World, options: dict, message: dict):
        """The MCP endpoint: a valid Bearer token, and the call scope for tools/call, or a challenge."""
        challenge = 'Bearer error="invalid_token"'
        if options["prm_in_header"] and options["prm_path"]:
            challenge += f', resource_metadata="{world.base}{options["prm_path"]}"'
        if options["challenge_scope"]:
            challenge += f', scope="{options["challenge_scope"]}"'
        token = self.headers.get("Authorization", "").removeprefix("Bearer ")
        if token not in world.tokens:
            return self.answer(401, {"error": "invalid_token"}, {"WWW-Authenticate": challenge})
        if message.get("method") == "tools/call" and options["call_scope"] \
                and options["call_scope"] not in world.tokens[token]:
            return self.answer(403, {"error": "insufficient_scope"}, {"WWW-Authenticate": (
                f'Bearer error="insufficient_scope", scope="{options["call_scope"]}", '
                f'resource_metadata="{world.base}{options["prm_path"]}"')})
        reply = world.mcp.handle(message)
        if reply is None:
            return self.answer(202)
        self.answer(200, reply)


def approve(url: str) -> str:
    """The user, approving at once: the redirect the authorization server answers."""
    return mcp_oauth.fetch_redirect(url, REDIRECT, timeout=TIMEOUT)


def connect(world: World, auth: mcp_oauth.OAuthClient, trace=None) -> mcp_full.MCPClient:
    """An initialized client of world's MCP endpoint, authorized by auth."""
    client = mcp_full.MCPClient(mcp_http.HttpTransport(world.base + "/mcp", trace=trace, timeout=TIMEOUT, auth=auth))
    client.initialize()
    return client


def adds(client: mcp_full.MCPClient) -> str:
    """What the demo's add tool says of 2 + 3."""
    return client.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"]


def test_a_client_registers_authorizes_and_calls_with_a_bearer_token():
    with World() as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert adds(client) == "5"
        assert world.log == ["POST /mcp", f"GET {PRM_MCP}", f"GET {AS_META}", "POST /register", "GET /authorize",
                             "POST /token", "POST /mcp", "POST /mcp", "POST /mcp"]
        assert world.registrations == [{"client_name": "mcp_min", "redirect_uris": [REDIRECT],
                                        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                                        "token_endpoint_auth_method": "none", "application_type": "native"}]


def test_pkce_s256_and_the_resource_go_with_the_authorization_and_the_token_request():
    with World() as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        asked, traded = world.authorizations[0], world.token_requests[0]
        digest = hashlib.sha256(traded["code_verifier"].encode()).digest()
        assert asked["code_challenge"] == base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
        assert (asked["code_challenge_method"], asked["resource"], traded["resource"]) == (
            "S256", world.base + "/mcp", world.base + "/mcp")
        assert 43 <= len(traded["code_verifier"]) <= 128 and "scope" not in asked


def test_without_auth_a_401_is_a_plain_error_that_says_so():
    with World() as world:
        transport = mcp_http.HttpTransport(world.base + "/mcp", timeout=TIMEOUT)
        with pytest.raises(mcp_http.Unauthorized, match=r"HTTP 401: the server asks for authorization \(WWW-Authenticate: "
                                                        r'Bearer error="invalid_token", resource_metadata=.*\), and this '
                                                        r"client has none"):
            mcp_full.MCPClient(transport).initialize()


def test_a_server_that_asks_nothing_sees_no_authorization_and_the_oauth_client_asks_nobody():
    shown = []
    auth = mcp_oauth.OAuthClient(approve, trace=lambda direction, step: shown.append(step), timeout=TIMEOUT)
    for given in (None, auth):
        transport = mcp_http.HttpTransport("http://127.0.0.1:9/mcp", auth=given)
        assert transport.headers_for({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == {
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with http_endpoint() as port:
        client = mcp_full.MCPClient(mcp_http.HttpTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT, auth=auth))
        client.initialize()
        assert adds(client) == "5"
        client.close()
    assert shown == []


def test_a_401_this_client_cannot_answer_names_the_step_that_failed():
    with World() as world:
        with pytest.raises(mcp_oauth.AuthError, match=r"authorization: http://127\.0\.0\.1:\d+ offers grants "
                                                      r"\['authorization_code'\], and this client can use none of them"):
            connect(world, mcp_oauth.OAuthClient(timeout=TIMEOUT))  # no authorize callback, no secret


def test_discovery_goes_in_the_spec_s_order_when_the_challenge_names_no_metadata():
    # 2025-11-25, basic/authorization: the path-based resource metadata first, then the root; for an issuer with a
    # path, RFC 8414's inserted form, then OpenID's inserted form, then OpenID's appended form.
    with World(prm_in_header=False, prm_path="/.well-known/oauth-protected-resource", as_prefix="/tenant",
               as_metadata_path="/tenant/.well-known/openid-configuration") as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert [line for line in world.log if "well-known" in line] == [
            f"GET {PRM_MCP}", "GET /.well-known/oauth-protected-resource",
            "GET /.well-known/oauth-authorization-server/tenant", "GET /.well-known/openid-configuration/tenant",
            "GET /tenant/.well-known/openid-configuration"]


def test_the_metadata_the_challenge_names_is_fetched_first_wherever_it_is():
    with World(prm_path="/custom/metadata.json") as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert world.log[1] == "GET /custom/metadata.json"


def test_a_2025_03_26_server_without_metadata_has_the_default_endpoints_at_its_origin():
    with World(prm_path=None, as_metadata_path=None) as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert world.log[:8] == ["POST /mcp", f"GET {PRM_MCP}", "GET /.well-known/oauth-protected-resource",
                                 f"GET {AS_META}", "GET /.well-known/openid-configuration", "POST /register",
                                 "GET /authorize", "POST /token"]


@pytest.mark.parametrize("options, refusal", [
    ({"prm_resource": "https://evil.example.com/mcp"}, r"is for resource 'https://evil.example.com/mcp', not this server"),
    ({"metadata_issuer": "https://attacker.example.com"}, r"names issuer 'https://attacker.example.com', not 'http://"),
    ({"iss": "wrong"}, r"the redirect's iss 'https://evil.example.com' is not the issuer"),
    ({"iss": "slash"}, r"the redirect's iss 'http://127\.0\.0\.1:\d+/' is not the issuer"),
    ({"iss": "omit", "as_extra": {"authorization_response_iss_parameter_supported": True}},
     r"promises an iss in its redirect, and this one has none"),
])
def test_what_could_be_forged_is_refused_before_a_code_or_token_leaves(options, refusal):
    with World(**options) as world:
        with pytest.raises(mcp_oauth.AuthError, match=refusal):
            connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert world.token_requests == []


def test_an_iss_neither_promised_nor_sent_is_no_reason_to_refuse():
    with World(iss="omit") as world:
        assert adds(connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))) == "5"


@pytest.mark.parametrize("options, scope", [
    ({"challenge_scope": "mcp:basic", "prm_scopes": ["mcp:read"]}, "mcp:basic"),  # the challenge's first
    ({"prm_scopes": ["mcp:read", "mcp:write"]}, "mcp:read mcp:write"),  # then all the resource supports
    ({}, None),  # else none
    ({"prm_scopes": ["mcp:read"], "as_extra": {"scopes_supported": ["mcp:read", "offline_access"]}},
     "mcp:read offline_access"),  # offline_access only where the server lists it
])
def test_the_scope_asked_is_the_challenge_s_else_the_resource_s_else_none(options, scope):
    with World(**options) as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert world.authorizations[0].get("scope") == scope


def test_step_up_on_insufficient_scope_asks_for_the_union_of_the_scopes():
    with World(challenge_scope="mcp:basic", call_scope="mcp:write") as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        assert adds(client) == "5"
        assert [asked["scope"] for asked in world.authorizations] == ["mcp:basic", "mcp:basic mcp:write"]


def test_a_scope_never_granted_stops_after_max_authorizations():
    with World(call_scope="mcp:admin", grant=False) as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        before = len(world.authorizations)
        with pytest.raises(mcp_http.Unauthorized, match=r"HTTP 403: tools/call still refused after 3 authorizations"):
            adds(client)
        assert len(world.authorizations) - before == mcp_http.MAX_AUTHORIZATIONS


def test_a_refused_token_is_refreshed_not_authorized_again():
    with World(refresh=True) as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        world.tokens.clear()  # the server forgets every access token (they expired)
        assert adds(client) == "5"
        assert (len(world.authorizations), [form["grant_type"] for form in world.token_requests]) == (
            1, ["authorization_code", "refresh_token"])


def test_a_new_authorization_server_gets_a_registration_of_its_own_and_never_the_old_one_s_credentials():
    with World(registration={"client_secret": "secret-of-the-first"}) as first:
        with World(tokens=first.tokens) as second:
            client = connect(first, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
            first.options["authorization_server"] = second.issuer
            first.tokens.clear()
            assert adds(client) == "5"
            first_id, second_id = (f"client-1-{world.httpd.server_address[1]}" for world in (first, second))
            assert (len(second.registrations), second.authorizations[0]["client_id"]) == (1, second_id)
            seen_there = json.dumps([second.authorizations, second.token_requests])
            assert (first_id in seen_there, "secret-of-the-first" in seen_there) == (False, False)


@pytest.mark.parametrize("registered, method", [
    ({"client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_basic"}, "client_secret_basic"),
    ({"client_secret": "s3cret", "token_endpoint_auth_method": "client_secret_post"}, "client_secret_post"),
    ({}, "none"),
])
def test_the_client_authenticates_at_the_token_endpoint_as_it_registered(registered, method):
    with World(registration=registered, as_extra={"token_endpoint_auth_methods_supported": [method]}) as world:
        connect(world, mcp_oauth.OAuthClient(approve, timeout=TIMEOUT))
        form, client_id = world.token_requests[0], f"client-1-{world.httpd.server_address[1]}"
        basic = "Basic " + base64.b64encode(f"{client_id}:s3cret".encode()).decode()
        assert (form["authorization"], form.get("client_secret"), form.get("client_id")) == {
            "client_secret_basic": (basic, None, None), "client_secret_post": (None, "s3cret", client_id),
            "none": (None, None, client_id)}[method]


def test_a_pre_registered_client_is_used_at_its_issuer_only():
    with World() as world:
        connect(world, mcp_oauth.OAuthClient(approve, client_id="given", client_secret="s3cret", issuer=world.issuer,
                                             timeout=TIMEOUT))
        assert (world.registrations, world.authorizations[0]["client_id"]) == ([], "given")
    with World() as world:
        connect(world, mcp_oauth.OAuthClient(approve, client_id="given", client_secret="s3cret",
                                             issuer="https://elsewhere.example.com", timeout=TIMEOUT))
        assert (len(world.registrations), world.authorizations[0]["client_id"]) == (
            1, f"client-1-{world.httpd.server_address[1]}")


def test_client_credentials_where_the_server_offers_only_them():
    with World(as_extra={"grant_types_supported": ["client_credentials"]}, challenge_scope="mcp:basic") as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, client_id="robot", client_secret="s3cret", timeout=TIMEOUT))
        assert adds(client) == "5"
        assert (world.authorizations, world.token_requests[0]["grant_type"], world.token_requests[0]["scope"]) == (
            [], "client_credentials", "mcp:basic")


def test_the_trace_shows_each_step_and_no_secret():
    lines = []

    def trace(direction: str, message: dict):
        lines.append(f"{direction} {json.dumps(message)}")

    with World(refresh=True, registration={"client_secret": "s3cret"}) as world:
        client = connect(world, mcp_oauth.OAuthClient(approve, trace=trace, timeout=TIMEOUT), trace=trace)
        world.tokens.clear()
        adds(client)
        form = world.token_requests[0]
        secrets_shown = [form["code"], form["code_verifier"], "s3cret", *world.issued]
        assert (len(world.issued), [secret for secret in secrets_shown if any(secret in line for line in lines)]) == (4, [])
        assert [any(shown in line for line in lines) for shown in ('"code": "[redacted]"', "code=%5Bredacted%5D",
                                                                   '"Authorization": "[redacted]"')] == [True] * 3


@pytest.mark.parametrize("header, params", [
    ('Bearer error="invalid_token", resource_metadata="https://a.example/x", scope="a b"',
     {"error": "invalid_token", "resource_metadata": "https://a.example/x", "scope": "a b"}),
    ('DPoP algs="ES256", Bearer realm="r", error=insufficient_scope', {"realm": "r", "error": "insufficient_scope"}),
    ('Bearer scope="say \\"hi\\""', {"scope": 'say "hi"'}),
    ('Basic realm="x"', {}),
    ("", {}),
])
def test_a_challenge_s_parameters_are_read_from_its_bearer_part_only(header, params):
    assert mcp_oauth.parse_challenge(header) == params


# RFC 6979, appendix A.2.5: ECDSA, 256 bits (prime field), with SHA-256.
RFC6979_KEY = 0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721
RFC6979_PUBLIC = (0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6,
                  0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299)
RFC6979_VECTORS = [
    (b"sample", 0xA6E3C57DD01ABE90086538398355DD4C3B17AA873382B0F24D6129493D8AAD60,
     0xEFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716,
     0xF7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8),
    (b"test", 0xD16B6AE827F17175E040871A1C7EC3500192C4C92677336EC2537ACAEE0008E0,
     0xF1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367,
     0x019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083),
]


def pkcs8(key: int, public: bytes | None = None) -> str:
    """A PEM PKCS#8 document for a P-256 key, written by hand (RFC 5208, RFC 5915), with the public half if given."""
    inner = b"\x02\x01\x01" + b"\x04\x20" + key.to_bytes(32, "big")
    if public is not None:
        inner += b"\xa1\x44\x03\x42\x00" + public
    ec_key = b"\x30" + bytes([len(inner)]) + inner
    algorithm = b"\x30\x13\x06\x07" + mcp_oauth.EC_PUBLIC_KEY_OID + b"\x06\x08" + mcp_oauth.P256_OID
    body = b"\x02\x01\x00" + algorithm + b"\x04" + bytes([len(ec_key)]) + ec_key
    der = b"\x30" + bytes([0x81, len(body)] if len(body) > 127 else [len(body)]) + body
    return "-----BEGIN PRIVATE KEY-----\n" + base64.b64encode(der).decode() + "\n-----END PRIVATE KEY-----\n"


def test_the_public_key_of_rfc_6979_s_private_key_is_its_own():
    assert mcp_oauth.p256_multiply(RFC6979_KEY) == RFC6979_PUBLIC


@pytest.mark.parametrize("message, nonce, r, s", RFC6979_VECTORS)
def test_es256_signs_rfc_6979_s_vectors_with_their_nonces(message, nonce, r, s):
    assert mcp_oauth.rfc6979_nonce(RFC6979_KEY, hashlib.sha256(message).digest()) == nonce
    assert mcp_oauth.p256_sign(RFC6979_KEY, message) == (r, s)


def test_a_pkcs8_key_is_read_and_a_public_half_not_its_own_refused():
    public = b"\x04" + RFC6979_PUBLIC[0].to_bytes(32, "big") + RFC6979_PUBLIC[1].to_bytes(32, "big")
    assert mcp_oauth.p256_private_key(pkcs8(RFC6979_KEY)) == RFC6979_KEY
    assert mcp_oauth.p256_private_key(pkcs8(RFC6979_KEY, public)) == RFC6979_KEY
    with pytest.raises(ValueError, match="the key's public half is not its own"):
        mcp_oauth.p256_private_key(pkcs8(RFC6979_KEY + 1, public))


def unpadded(part: str) -> bytes:
    """base64url without its padding, decoded."""
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def test_a_client_assertion_is_a_jwt_signed_es256_naming_the_client_and_the_server():
    token = mcp_oauth.es256_assertion(RFC6979_KEY, "robot", "https://as.example.com")
    header, claims, signature = token.split(".")
    r, s = mcp_oauth.p256_sign(RFC6979_KEY, f"{header}.{claims}".encode())
    assert json.loads(unpadded(header)) == {"alg": "ES256", "typ": "JWT"}
    assert {name: json.loads(unpadded(claims))[name] for name in ("iss", "sub", "aud")} == {
        "iss": "robot", "sub": "robot", "aud": "https://as.example.com"}
    assert unpadded(signature) == r.to_bytes(32, "big") + s.to_bytes(32, "big")
