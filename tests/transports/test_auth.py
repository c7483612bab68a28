"""The server as a resource server (issue 44): the whole OAuth flow on loopback against the teaching authorization
server, each refusal with the status and WWW-Authenticate the spec gives (2025-11-25, basic/authorization), sessions
bound to the token's subject, the verifiers (HS256, RS256 by pow(), introspection), and no verifier, no change."""

import base64
import contextlib
import hashlib
import hmac
import json
import secrets
import threading
import time
import urllib.parse

import pytest

import mcp_auth
import mcp_http
import mcp_oauth
import server_demo
from harness import TIMEOUT, connection, exchange, initialize_request, stateless
from lessons.tiny_auth_server import TinyAuthServer
from mcp_auth import Grant, InvalidToken, JwtVerifier, RsaPublicKey, b64url_encode
from mcp_full import MCPClient, notification, request

SCOPES = {"mcp:add": {"add"}, "mcp:weather": {"weather"}}
# A fixed 2048-bit RSA key, made for these tests with openssl: n and d (e = 65537), and the public key as PEM.
TEST_N = int(
    "bdaea4acbddf878864a597c0024fa7afd0eb25c1d6313c9f82d751521899ca2d68b32d5c39773b332ffc7b341e2645cedee7"
    "68a58c1d86944fc4583db6a60b15ac79a571feed7194ce31c8413d8f3f1f2642e91dadb5dbf8672e5986e820983f678c3ea7"
    "282d6bbf31fe7b1e015b11339cb43f69105e245f604666080d64530c4673523fcda0e607c70dc69dffcdf6e365a804a6dbf4"
    "6fd66cd9e6efa3100073f20b2680d74ec429505f241ad0a392dcdde6fc6b6c61584de7678752158d7fc1510ab80444a3353a"
    "06db0177b838005f9bc426f161a658802924b21ec4de9a93807eaec8ccae0b7436390a4802478c0e311b2e0aa61190633086"
    "04616d12c661", 16)
TEST_D = int(
    "156e9f42b96d8155e2f166f5160dc407b4966d3cbaa3f3929e690fd233df649dbedfc7f74cb2f128767a93bd2eceea4256a3"
    "550aa78b4a828584cce7a4349cba0533f582ace84d561ffa3603511e5766809f3cd1d2a7e2c3ed7caa36f9117dc26443cf6c"
    "79b8b01cf95c24b31e3a18f678f550d8e13591ec88e74b6e0b7d5378b4c11b66079b79c09998942c229365b088a1119bb451"
    "341cc735e586552d106c831e9e24c485c7d615b5806751bd0536cbcfe90bc75d3afb0e0f5ab6f6a2030f7fcdc9427a380068"
    "c8566d968b4619ff69cc491691fbdb58a45c857caddd8e7a11cc743be5639dad364e6993618ab4afb20c723bc51b52544951"
    "9f5df80c0db5", 16)
TEST_PEM = """-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAva6krL3fh4hkpZfAAk+n
r9DrJcHWMTyfgtdRUhiZyi1osy1cOXc7My/8ezQeJkXO3udopYwdhpRPxFg9tqYL
Fax5pXH+7XGUzjHIQT2PPx8mQukdrbXb+GcuWYboIJg/Z4w+pygta78x/nseAVsR
M5y0P2kQXiRfYEZmCA1kUwxGc1I/zaDmB8cNxp3/zfbjZagEptv0b9Zs2ebvoxAA
c/ILJoDXTsQpUF8kGtCjktzd5vxrbGFYTednh1IVjX/BUQq4BESjNToG2wF3uDgA
X5vEJvFhpliAKSSyHsTempOAfq7IzK4LdDY5CkgCR4wOMRsuCqYRkGMwhgRhbRLG
YQIDAQAB
-----END PUBLIC KEY-----
"""


@contextlib.contextmanager
def secured(scopes=SCOPES, verifier_of=lambda auth: JwtVerifier(auth.signing_key)):
    """The teaching authorization server, and the demo's MCP server behind verifier_of(it): (auth, httpd)."""
    auth = TinyAuthServer(scopes=list(scopes or ()))
    httpd = mcp_http.http_server(server_demo.make_server, verifier=verifier_of(auth),
                                 authorization_servers=[auth.issuer], scopes=scopes)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield auth, httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=TIMEOUT)
        auth.close()


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def call_add(id: int = 2) -> dict:
    return request(id, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})


def session_with(port: int, token: str) -> str:
    """initialize and initialized with token; the session's id."""
    conn = connection(port)
    status, headers, _ = exchange(conn, initialize_request(), bearer(token))
    assert status == 200
    sid = headers["Mcp-Session-Id"]
    assert exchange(conn, notification("notifications/initialized"), {**bearer(token), "Mcp-Session-Id": sid})[0] == 202
    return sid


def get_json(port: int, path: str, headers: dict | None = None):
    conn = connection(port)
    conn.request("GET", path, headers=headers or {})
    reply = conn.getresponse()
    return reply.status, reply.headers, json.loads(reply.read() or b"null")


def test_the_whole_flow_on_loopback_from_a_401_to_a_tool_call():
    with secured() as (auth, httpd):
        port, as_port = httpd.server_address[1], auth.server_address[1]
        resource = f"http://127.0.0.1:{port}/mcp"
        # 1. No token: 401, naming where the metadata is.
        status, headers, _ = exchange(connection(port), initialize_request())
        assert (status, headers["WWW-Authenticate"]) == (401, f'Bearer resource_metadata="http://127.0.0.1:{port}'
                                                               '/.well-known/oauth-protected-resource/mcp", '
                                                               'scope="mcp:add mcp:weather"')
        # 2. The two metadata documents.
        status, _, prm = get_json(port, "/.well-known/oauth-protected-resource/mcp")
        assert (status, prm) == (200, {"resource": resource, "authorization_servers": [auth.issuer],
                                       "scopes_supported": ["mcp:add", "mcp:weather"], "bearer_methods_supported": ["header"]})
        status, _, metadata = get_json(as_port, "/.well-known/oauth-authorization-server")
        assert (status, metadata["issuer"], metadata["code_challenge_methods_supported"]) == (200, auth.issuer, ["S256"])
        # 3. Registration, the redirect with PKCE, the code for a token.
        conn = connection(as_port)
        conn.request("POST", "/register", json.dumps({"redirect_uris": ["http://127.0.0.1:1/callback"]}),
                     {"Content-Type": "application/json"})
        reply = conn.getresponse()
        client = json.loads(reply.read())
        assert (reply.status, client["token_endpoint_auth_method"]) == (201, "client_secret_basic")
        verifier = secrets.token_urlsafe(32)
        challenge = b64url_encode(hashlib.sha256(verifier.encode()).digest())
        query = urllib.parse.urlencode({"response_type": "code", "client_id": client["client_id"], "state": "s1",
                                        "redirect_uri": "http://127.0.0.1:1/callback", "code_challenge": challenge,
                                        "code_challenge_method": "S256", "resource": resource, "scope": "mcp:add"})
        conn.request("GET", "/authorize?" + query)
        reply = conn.getresponse()
        reply.read()
        location = urllib.parse.urlsplit(reply.headers["Location"])
        answer = dict(urllib.parse.parse_qsl(location.query))
        assert (reply.status, location.path, answer["state"]) == (302, "/callback", "s1")
        basic = base64.b64encode(f"{client['client_id']}:{client['client_secret']}".encode()).decode()
        form = urllib.parse.urlencode({"grant_type": "authorization_code", "code": answer["code"], "resource": resource,
                                       "redirect_uri": "http://127.0.0.1:1/callback", "code_verifier": verifier})
        conn.request("POST", "/token", form, {"Content-Type": "application/x-www-form-urlencoded",
                                              "Authorization": "Basic " + basic})
        reply = conn.getresponse()
        tokens = json.loads(reply.read())
        assert (reply.status, reply.headers["Cache-Control"], tokens["token_type"], tokens["scope"]) == \
            (200, "no-store", "Bearer", "mcp:add")
        # 4. The same requests with the token: served.
        sid = session_with(port, tokens["access_token"])
        status, _, body = exchange(connection(port), call_add(), {**bearer(tokens["access_token"]), "Mcp-Session-Id": sid})
        assert (status, json.loads(body)["result"]["content"]) == (200, [{"type": "text", "text": "5"}])
        # 5. The refresh token brings the next access token; the code is spent.
        conn.request("POST", "/token", form, {"Content-Type": "application/x-www-form-urlencoded",
                                              "Authorization": "Basic " + basic})
        reply = conn.getresponse()
        assert (reply.status, json.loads(reply.read())["error"]) == (400, "invalid_grant")
        refresh = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                                          "client_id": client["client_id"], "client_secret": client["client_secret"]})
        conn.request("POST", "/token", refresh, {"Content-Type": "application/x-www-form-urlencoded"})
        reply = conn.getresponse()
        fresh = json.loads(reply.read())
        status, _, body = exchange(connection(port), call_add(3), {**bearer(fresh["access_token"]), "Mcp-Session-Id": sid})
        assert (reply.status, status, json.loads(body)["result"]["content"][0]["text"]) == (200, 200, "5")


@pytest.mark.parametrize("mode", ["handshake", "auto"])
def test_the_project_s_own_client_authorizes_itself_and_calls_the_tools(mode):
    # mcp_oauth's OAuthClient, as a user sets it up, against the teaching authorization server: the 401, discovery,
    # registration, the redirect with PKCE, the token, then every request with it (issue 44's goal, in both eras).
    with secured() as (auth, httpd):
        seen = []
        oauth = mcp_oauth.OAuthClient(authorize=lambda url: mcp_oauth.fetch_redirect(url, mcp_oauth.DEFAULT_REDIRECT),
                                      trace=lambda direction, shown: seen.append((direction, shown)))
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        client = MCPClient(mcp_http.HttpTransport(url, timeout=TIMEOUT, auth=oauth))
        try:
            client.connect(mode)
            texts = [client.call_tool("add", {"x": 2, "y": 3})["content"][0]["text"],
                     client.call_tool("weather", {"city": "Oslo"})["content"][0]["text"]]
        finally:
            client.close()
        assert (texts[0], client.era) == ("5", "stateless" if mode == "auto" else "handshake")
        assert texts[1].startswith("Sunny")
        token = oauth.store.get(f"token {url}")
        assert (token["issuer"], sorted(token["scope"].split())) == (auth.issuer, ["mcp:add", "mcp:weather"])
        assert token["access_token"] not in repr(seen) and "[redacted]" in repr(seen)  # every trace redacts it


def sign_hs256(key: bytes, claims: dict) -> str:
    """A JWT signed HS256 with key."""
    head = b64url_encode(json.dumps({"alg": "HS256", "typ": "at+jwt"}).encode())
    body = b64url_encode(json.dumps(claims).encode())
    return f"{head}.{body}." + b64url_encode(hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest())


def test_each_refused_token_gets_401_invalid_token_and_says_why():
    with secured() as (auth, httpd):
        port = httpd.server_address[1]
        resource, metadata = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"
        good = auth.issue("student", "c1", "mcp:add", resource)
        head, body, signature = good.split(".")
        now = int(time.time())
        tokens = {
            "another audience": auth.issue("student", "c1", "mcp:add", "http://127.0.0.1:1/mcp"),
            "expired": auth.issue("student", "c1", "mcp:add", resource, lifetime=-3600),
            "forged signature": f"{head}.{body}.{signature[:-4]}AAAA",
            "signed by another key": sign_hs256(b"k" * 32, {"sub": "student", "aud": resource, "exp": now + 60}),
            "alg none": b64url_encode(json.dumps({"alg": "none"}).encode()) + f".{body}.",
            "no subject": sign_hs256(auth.signing_key, {"aud": resource, "exp": now + 60}),
        }
        said = {}
        for what, token in tokens.items():
            status, headers, reply = exchange(connection(port), initialize_request(), bearer(token))
            said[what] = (status, headers["WWW-Authenticate"], json.loads(reply)["error"]["code"])
        why = {"another audience": f"the token was not minted for {resource}", "expired": "the token has expired",
               "forged signature": "the token's signature does not verify",
               "signed by another key": "the token's signature does not verify",
               "alg none": "the token is not signed HS256", "no subject": "the token names no subject (sub)"}
        assert said == {what: (401, f'Bearer resource_metadata="{metadata}", error="invalid_token", '
                                    f'error_description="{reason}"', -32600)
                        for what, reason in why.items()}
        assert exchange(connection(port), initialize_request(), bearer(good))[0] == 200


def test_a_tool_the_token_s_scopes_do_not_grant_is_403_insufficient_scope_naming_the_scope():
    with secured() as (auth, httpd):
        port = httpd.server_address[1]
        resource = f"http://127.0.0.1:{port}/mcp"
        token = auth.issue("student", "c1", "mcp:weather", resource)
        sid = session_with(port, token)
        status, headers, body = exchange(connection(port), call_add(), {**bearer(token), "Mcp-Session-Id": sid})
        assert (status, headers["WWW-Authenticate"], json.loads(body)) == (403, (
            f'Bearer resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp", '
            'scope="mcp:add", error="insufficient_scope", error_description="the tool needs the scope mcp:add"'),
            {"jsonrpc": "2.0", "id": 2, "error": {"code": -32600, "message": "tool 'add' not permitted for this session"}})
        # The same session, stepped up: a token with the scope calls it.
        wider = auth.issue("student", "c1", "mcp:weather mcp:add", resource)
        status, _, body = exchange(connection(port), call_add(3), {**bearer(wider), "Mcp-Session-Id": sid})
        assert (status, json.loads(body)["result"]["content"][0]["text"]) == (200, "5")


def test_a_tool_no_scope_grants_is_refused_by_the_lattice_as_ever_not_as_a_scope():
    with secured() as (auth, httpd):
        port = httpd.server_address[1]
        token = auth.issue("student", "c1", "mcp:add mcp:weather", f"http://127.0.0.1:{port}/mcp")
        sid = session_with(port, token)
        message = request(4, "tools/call", {"name": "enable_subtract", "arguments": {}})
        status, headers, body = exchange(connection(port), message, {**bearer(token), "Mcp-Session-Id": sid})
        assert (status, "WWW-Authenticate" in headers, json.loads(body)["error"]["code"]) == (200, False, -32600)


def test_in_2026_07_28_each_request_s_token_is_its_allow_list():
    with secured() as (auth, httpd):
        port = httpd.server_address[1]
        resource = f"http://127.0.0.1:{port}/mcp"
        message, headers = stateless(1, "tools/call", {"name": "add", "arguments": {"x": 2, "y": 3}})
        narrow, wide = (auth.issue("student", "c1", scope, resource) for scope in ("mcp:weather", "mcp:add"))
        status, reply_headers, body = exchange(connection(port), message, {**headers, **bearer(narrow)})
        assert (status, reply_headers["WWW-Authenticate"].split(", ")[1:3]) == (
            403, ['scope="mcp:add"', 'error="insufficient_scope"'])
        status, _, body = exchange(connection(port), message, {**headers, **bearer(wide)})
        assert (status, json.loads(body)["result"]["content"]) == (200, [{"type": "text", "text": "5"}])
        status, _, _ = exchange(connection(port), message, headers)
        assert status == 401


def test_a_session_is_its_subject_s_alone():
    with secured() as (auth, httpd):
        port = httpd.server_address[1]
        resource = f"http://127.0.0.1:{port}/mcp"
        student, mallory = (auth.issue(who, "c1", "mcp:add", resource) for who in ("student", "mallory"))
        sid = session_with(port, student)
        for verb, message in (("POST", call_add()), ("GET", None), ("DELETE", None)):
            status, _, body = exchange(connection(port), message, {**bearer(mallory), "Mcp-Session-Id": sid}, verb=verb)
            assert (verb, status, json.loads(body)["error"]["message"]) == (verb, 404, "unknown or ended session")
        status, _, body = exchange(connection(port), call_add(), {**bearer(student), "Mcp-Session-Id": sid})
        assert (status, json.loads(body)["result"]["content"][0]["text"]) == (200, "5")


def test_without_a_verifier_nothing_changes_no_token_is_asked_and_no_metadata_is_published():
    httpd = mcp_http.http_server(server_demo.make_server)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = httpd.server_address[1]
        status, headers, _ = exchange(connection(port), initialize_request())
        assert (status, "WWW-Authenticate" in headers) == (200, False)
        assert get_json(port, "/.well-known/oauth-protected-resource/mcp")[0] == 404
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=TIMEOUT)


def test_without_a_scopes_mapping_a_valid_token_allows_what_the_server_allows():
    with secured(scopes=None) as (auth, httpd):
        port = httpd.server_address[1]
        status, headers, _ = exchange(connection(port), initialize_request())
        assert headers["WWW-Authenticate"] == (f'Bearer resource_metadata="http://127.0.0.1:{port}'
                                               '/.well-known/oauth-protected-resource/mcp"')
        sid = session_with(port, auth.issue("student", "c1", "", f"http://127.0.0.1:{port}/mcp"))
        token = auth.issue("student", "c1", "", f"http://127.0.0.1:{port}/mcp")
        status, _, body = exchange(connection(port), call_add(), {**bearer(token), "Mcp-Session-Id": sid})
        assert (status, json.loads(body)["result"]["content"][0]["text"]) == (200, "5")


def test_introspection_verifies_an_opaque_token_by_asking_the_authorization_server():
    auth = TinyAuthServer()
    try:
        verifier = introspecting(auth)
        token = auth.issue("student", "c1", "mcp:add", "http://127.0.0.1:9/mcp")
        assert verifier.verify(token, "http://127.0.0.1:9/mcp") == Grant(
            "student", "c1", frozenset({"mcp:add"}), ("http://127.0.0.1:9/mcp",), json.loads(
                base64.urlsafe_b64decode(token.split(".")[1] + "==="))["exp"])
        refusals = {}
        for what, token, audience, check in (
                ("inactive", token[:-2] + "xx", "http://127.0.0.1:9/mcp", verifier),
                ("another audience", token, "http://127.0.0.1:8/mcp", verifier),
                ("a wrong secret", token, "http://127.0.0.1:9/mcp",
                 mcp_auth.IntrospectionVerifier(auth.issuer + "/introspect", "rs", "wrong"))):
            with pytest.raises(InvalidToken) as refused:
                check.verify(token, audience)
            refusals[what] = str(refused.value)
        assert refusals == {"inactive": "the authorization server says the token is not active",
                            "another audience": "the token was not minted for http://127.0.0.1:8/mcp",
                            "a wrong secret": "the introspection failed (HTTP 401, 85 bytes)"}
    finally:
        auth.close()


def sign_rs256(claims: dict, header: dict | None = None) -> str:
    """A JWT signed RS256 with the fixed test key: EMSA-PKCS1-v1_5, then pow(m, d, n)."""
    head = b64url_encode(json.dumps(header or {"alg": "RS256"}).encode())
    body = b64url_encode(json.dumps(claims).encode())
    digest = mcp_auth.SHA256_DIGEST_INFO + hashlib.sha256(f"{head}.{body}".encode()).digest()
    encoded = b"\x00\x01" + b"\xff" * (256 - len(digest) - 3) + b"\x00" + digest
    signature = pow(int.from_bytes(encoded, "big"), TEST_D, TEST_N).to_bytes(256, "big")
    return f"{head}.{body}.{b64url_encode(signature)}"


def test_rs256_verifies_by_pow_with_a_key_from_pem_or_jwk_and_refuses_a_forgery():
    claims = {"sub": "student", "aud": "http://127.0.0.1:9/mcp", "exp": int(time.time()) + 60, "scope": "a b"}
    token = sign_rs256(claims)
    from_pem = JwtVerifier(RsaPublicKey.from_pem(TEST_PEM))
    from_jwk = JwtVerifier(RsaPublicKey.from_jwk({"kty": "RSA", "e": "AQAB",
                                                  "n": b64url_encode(TEST_N.to_bytes(256, "big"))}))
    assert from_pem.verify(token, claims["aud"]).scopes == from_jwk.verify(token, claims["aud"]).scopes == {"a", "b"}
    head, body, signature = token.split(".")
    other = b64url_encode(json.dumps({**claims, "sub": "mallory"}).encode())
    forged = {f"{head}.{other}.{signature}": "the token's signature does not verify",  # the claims changed
              sign_hs256(TEST_N.to_bytes(256, "big"), claims): "the token is not signed RS256"}
    for token, reason in forged.items():
        with pytest.raises(InvalidToken, match=reason):
            from_pem.verify(token, claims["aud"])


def test_a_key_too_small_for_rs256_is_refused_when_it_is_made():
    with pytest.raises(ValueError, match="2048 to 8192 bits, not 1024"):
        RsaPublicKey((1 << 1023) + 1, 65537)


class Refusing:
    """A verifier whose reason holds what a header cannot: quotes, a backslash, a line break."""

    def verify(self, token: str, audience: str):
        raise InvalidToken('bad "token" \\ here\r\nX-Injected: yes')


def test_a_verifier_s_reason_can_end_neither_the_quoted_string_nor_the_header():
    with secured(verifier_of=lambda auth: Refusing()) as (auth, httpd):
        port = httpd.server_address[1]
        status, headers, _ = exchange(connection(port), initialize_request(), bearer("anything"))
        assert (status, headers["WWW-Authenticate"].split(", ")[-1], headers["X-Injected"]) == (
            401, 'error_description="bad token  hereX-Injected: yes"', None)


def introspecting(auth: TinyAuthServer) -> mcp_auth.IntrospectionVerifier:
    """An introspection verifier of auth's tokens, as the resource server "rs" it registers."""
    auth.clients["rs"] = {"client_id": "rs", "client_secret": "rs-secret", "redirect_uris": ["http://127.0.0.1:1/cb"]}
    return mcp_auth.IntrospectionVerifier(auth.issuer + "/introspect", "rs", "rs-secret")


def test_an_opaque_token_checked_by_introspection_serves_as_a_jwt_does():
    with secured(verifier_of=introspecting) as (auth, httpd):
        port = httpd.server_address[1]
        token = auth.issue("student", "c1", "mcp:add", f"http://127.0.0.1:{port}/mcp")
        sid = session_with(port, token)
        status, _, body = exchange(connection(port), call_add(), {**bearer(token), "Mcp-Session-Id": sid})
        assert (status, json.loads(body)["result"]["content"][0]["text"]) == (200, "5")
        status, headers, _ = exchange(connection(port), call_add(3), {**bearer(token[:-2] + "xx"), "Mcp-Session-Id": sid})
        assert (status, headers["WWW-Authenticate"].split(", ")[-1]) == (
            401, 'error_description="the authorization server says the token is not active"')
