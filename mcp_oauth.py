"""mcp_oauth: the client authorizes itself, OAuth 2.1 (spec 2025-11-25 and 2026-07-28, basic/authorization).

  13. The OAuth client   OAuthClient, which HttpTransport(url, auth=...) asks for its Authorization header and
                         hands each 401 (and 403 insufficient_scope) it gets: it discovers the protected resource's
                         and the authorization server's metadata, registers, authorizes (the authorization code
                         with PKCE, or client credentials), refreshes; TokenStore, what it keeps; parse_challenge,
                         fetch_redirect; ES256 client assertions (P-256 ECDSA, RFC 6979 nonces), es256_assertion

An MCP server that wants authorization answers 401 with a WWW-Authenticate challenge. The client reads the
Protected Resource Metadata (RFC 9728), which names the authorization server, then that server's metadata (RFC 8414,
or OpenID discovery), gets itself a client id (one given by the user, a Client ID Metadata Document, or dynamic
registration, RFC 7591), sends the user to the authorization endpoint with a PKCE challenge (S256) and the resource
it wants a token for (RFC 8707), checks the redirect that comes back (state, iss: RFC 9207), trades the code for a
token, and repeats the request with `Authorization: Bearer <token>`. The user's part is one callback: it gets the
authorization URL and returns the URL the browser was redirected to.

    auth = OAuthClient(authorize=lambda url: input(f"open {url}\\nthen paste the address you land on: "))
    client = MCPClient(HttpTransport("https://example.com/mcp", auth=auth))

Every request of its own (metadata, registration, tokens) goes through http.client: https, or http on loopback only;
a bounded body, a bounded number of redirects (metadata only), a timeout. Its trace shows each exchange with every
secret in it (tokens, client secrets, codes, verifiers) redacted.

Glossary: mcp_http's, and
  resource      the MCP server as OAuth names it: the URL a token is asked for (RFC 8707), as the server's
                Protected Resource Metadata publishes it
  issuer        an authorization server's identifier, the URL its metadata is found from and must repeat
  credential    what one authorization server gave or knows of this client (its client id and secret, its tokens):
                never shown to another authorization server
"""

import base64
import hashlib
import hmac
import http.client
import json
import re
import secrets
import threading
import time
import urllib.parse

from mcp_auth import b64url_encode, der_items
from mcp_http import LOCAL_NAMES, Unauthorized

# ---------------------------------------------------------------------------------------------------
# ---- 13. The OAuth client ----
# The spec's authorization section (2025-11-25 and 2026-07-28, basic/authorization) over OAuth 2.1: discovery,
# registration, the authorization code with PKCE, tokens and their refresh, step-up on insufficient_scope.
# ---------------------------------------------------------------------------------------------------

MAX_OAUTH_BYTES = 256 * 1024  # the largest metadata document, registration or token response read
MAX_REDIRECTS = 3  # redirects followed by a metadata GET (never https to http); a POST follows none
OAUTH_TIMEOUT_S = 30.0  # each of its requests must be answered whole within this
SECRET_FIELDS = {"access_token", "refresh_token", "id_token", "client_secret", "code", "code_verifier",
                 "client_assertion", "registration_access_token"}  # shown redacted in every trace
REDACTED = "[redacted]"
AUTH_ITEM = re.compile(r'([^\s,=]+)(?:\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*))?')  # a scheme, or a name=value parameter
PRM_PATH = "/.well-known/oauth-protected-resource"  # RFC 9728, section 3
AS_PATH = "/.well-known/oauth-authorization-server"  # RFC 8414, section 3
OIDC_PATH = "/.well-known/openid-configuration"  # OpenID Connect Discovery 1.0, section 4
DEFAULT_REDIRECT = "http://127.0.0.1:33418/callback"  # a loopback redirect, as a native app's (RFC 8252, section 7.3)


class AuthError(Unauthorized):
    """A step of authorization failed: the message names the step and what the server said."""


def parse_challenge(header: str) -> dict:
    """The parameters of the Bearer challenge in a WWW-Authenticate value (RFC 6750, section 3; RFC 9110, section
    11.6.1): {name: value}, names lower-cased, quoted strings unquoted; {} if there is no Bearer challenge."""
    params, scheme = {}, None
    for item in AUTH_ITEM.finditer(header):
        name, value = item.groups()
        if value is None:  # a scheme begins a challenge (and ends the one before)
            if scheme == "bearer":
                break
            scheme = name.lower()
        elif scheme == "bearer":
            params.setdefault(name.lower(), re.sub(r"\\(.)", r"\1", value[1:-1]) if value.startswith('"') else value)
    return params


def redacted(fields: dict) -> dict:
    """fields with each secret's value replaced by REDACTED: what a trace may show."""
    return {name: REDACTED if name.lower() in SECRET_FIELDS or name.lower() == "authorization" else value
            for name, value in fields.items()}


def redacted_url(url: str) -> str:
    """url with each secret in its query (a code, above all) replaced by REDACTED."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    if not any(name in SECRET_FIELDS for name, _ in query):
        return url
    shown = urllib.parse.urlencode([(name, REDACTED if name in SECRET_FIELDS else value) for name, value in query])
    return urllib.parse.urlunsplit(parts._replace(query=shown))


def origin_of(url: str) -> str:
    """The scheme, host and port of url, lower-cased, a default port left out: what two URLs share if same-origin."""
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
    port = "" if parts.port in (None, default) else f":{parts.port}"
    return f"{parts.scheme.lower()}://{host}{port}"


def canonical(url: str) -> str:
    """The canonical URI of an MCP server (2025-11-25, basic/authorization, "Canonical Server URI"): its origin and
    path, no fragment, no trailing slash."""
    parts = urllib.parse.urlsplit(url)
    return origin_of(url) + parts.path.rstrip("/") + (f"?{parts.query}" if parts.query else "")


def check_url(url: str, what: str) -> str:
    """url, if it may be used: https, or http to a loopback host (2025-11-25, basic/authorization, "Communication
    Security": every authorization endpoint MUST be served over HTTPS); AuthError otherwise."""
    parts = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    if parts is None or not parts.hostname or parts.scheme not in ("https", "http"):
        raise AuthError(f"{what}: {url!r} is not an http(s) URL")
    if parts.scheme == "http" and parts.hostname not in LOCAL_NAMES:
        raise AuthError(f"{what}: {url} is plain http to a host that is not loopback; https is required")
    return url


def resource_covers(resource: str, url: str) -> bool:
    """Whether the resource a Protected Resource Metadata document names is this server's (RFC 9728, section 3.3):
    the same origin, and a path that is the server's or one of its parents."""
    if not isinstance(resource, str) or origin_of(resource) != origin_of(url):
        return False
    prefix = urllib.parse.urlsplit(resource).path.rstrip("/") + "/"
    return (urllib.parse.urlsplit(url).path.rstrip("/") + "/").startswith(prefix)


def pkce_pair() -> tuple:
    """A PKCE code verifier and its S256 challenge (RFC 7636, section 4): 64 characters of 48 random bytes."""
    verifier = secrets.token_urlsafe(48)
    challenge = b64url_encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge


def fetch(method: str, url: str, headers: dict | None = None, body: bytes = b"", timeout: float = OAUTH_TIMEOUT_S,
          redirects: int = 0) -> tuple:
    """One HTTP request of the OAuth client: (status, {lower-case header: value}, body). Its body is read up to
    MAX_OAUTH_BYTES and within timeout, whole; up to redirects redirects are followed (GET only, never from https
    to http), none if redirects is 0 (a redirect is then the answer). OSError for a server that cannot be reached,
    answers too much or too slowly, or redirects too often."""
    deadline = time.monotonic() + timeout
    for _ in range(redirects + 1):
        parts = urllib.parse.urlsplit(url)
        kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = kind(parts.hostname, parts.port, timeout=timeout)
        try:
            connection.request(method, urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, "")), body or None,
                               {"Accept": "application/json", **(headers or {})})
            response = connection.getresponse()
            fields = {name.lower(): value for name, value in response.getheaders()}
            pieces, size = [], 0
            while piece := response.read(min(65536, MAX_OAUTH_BYTES + 1 - size)):
                pieces.append(piece)
                size += len(piece)
                if size > MAX_OAUTH_BYTES:
                    raise ConnectionError(f"{redacted_url(url)} answered more than {MAX_OAUTH_BYTES} bytes (MAX_OAUTH_BYTES)")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{redacted_url(url)} did not answer whole in {timeout} s")
        finally:
            connection.close()
        location = fields.get("location")
        if response.status not in (301, 302, 303, 307, 308) or not location or method != "GET" or not redirects:
            return response.status, fields, b"".join(pieces)
        following = check_url(urllib.parse.urljoin(url, location), f"a redirect from {url}")
        if parts.scheme == "https" and not following.startswith("https:"):
            raise ConnectionError(f"{url} redirected from https to {redacted_url(following)}")
        url = following
    raise ConnectionError(f"{redacted_url(url)}: more than {redirects} redirects (MAX_REDIRECTS)")


def fetch_redirect(url: str, redirect_uri: str, timeout: float = OAUTH_TIMEOUT_S) -> str:
    """The authorize callback of an authorization server that approves by itself (a test's, or the conformance
    suite's): GET url and follow its redirects until one leads to redirect_uri, whose address is returned."""
    for _ in range(MAX_REDIRECTS + 1):
        status, fields, _ = fetch("GET", url, timeout=timeout)
        location = urllib.parse.urljoin(url, fields.get("location", ""))
        if status not in (301, 302, 303, 307, 308) or "location" not in fields:
            raise AuthError(f"authorization: {redacted_url(url)} answered {status}, not a redirect")
        if location.startswith(redirect_uri):
            return location
        url = location
    raise AuthError(f"authorization: no redirect to {redirect_uri} within {MAX_REDIRECTS} redirects (MAX_REDIRECTS)")


# ---- ES256 client assertions (RFC 7523, section 2.2; RFC 7518, section 3.4) ----
# A client authenticated by a key signs a short JWT with ECDSA on P-256 (FIPS 186-4; SEC 2, section 2.4.2), its
# nonce derived from the key and the message (RFC 6979), never from a random source that could repeat. Plain
# Python integers: correct, but NOT hardened against side channels (its time depends on the key's bits), so
# fit for a client's own process, not for a server that signs on an attacker's demand.

P256_P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff  # the field's prime
P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551  # the group's order
P256_G = (0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296,
          0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5)  # the base point (a = -3)
EC_PUBLIC_KEY_OID = bytes.fromhex("2a8648ce3d0201")  # 1.2.840.10045.2.1, id-ecPublicKey (RFC 5480)
P256_OID = bytes.fromhex("2a8648ce3d030107")  # 1.2.840.10045.3.1.7, secp256r1


def p256_add(a: tuple | None, b: tuple | None) -> tuple | None:
    """The sum of two points of P-256 in affine coordinates (None is the point at infinity)."""
    if a is None or b is None:
        return a or b
    if a[0] == b[0] and (a[1] + b[1]) % P256_P == 0:
        return None
    if a == b:
        slope = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, P256_P) % P256_P
    else:
        slope = (b[1] - a[1]) * pow(b[0] - a[0], -1, P256_P) % P256_P
    x = (slope * slope - a[0] - b[0]) % P256_P
    return x, (slope * (a[0] - x) - a[1]) % P256_P


def p256_multiply(k: int, point: tuple = P256_G) -> tuple | None:
    """k times point, by doubling and adding (its time depends on k's bits: see above)."""
    result = None
    for bit in bin(k)[2:]:
        result = p256_add(result, result)
        if bit == "1":
            result = p256_add(result, point)
    return result


def rfc6979_nonce(key: int, digest: bytes) -> int:
    """The deterministic ECDSA nonce for key and a SHA-256 digest (RFC 6979, section 3.2; qlen = hlen = 256)."""
    x, h = key.to_bytes(32, "big"), (int.from_bytes(digest, "big") % P256_N).to_bytes(32, "big")
    v, k = b"\x01" * 32, b"\x00" * 32
    k = hmac.new(k, v + b"\x00" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    k = hmac.new(k, v + b"\x01" + x + h, hashlib.sha256).digest()
    v = hmac.new(k, v, hashlib.sha256).digest()
    while True:
        v = hmac.new(k, v, hashlib.sha256).digest()
        candidate = int.from_bytes(v, "big")
        if 1 <= candidate < P256_N:
            return candidate
        k = hmac.new(k, v + b"\x00", hashlib.sha256).digest()
        v = hmac.new(k, v, hashlib.sha256).digest()


def p256_sign(key: int, message: bytes) -> tuple:
    """The ECDSA signature (r, s) of message with SHA-256 by the private key (FIPS 186-4, section 6.4)."""
    digest = hashlib.sha256(message).digest()
    nonce = rfc6979_nonce(key, digest)
    r = p256_multiply(nonce)[0] % P256_N
    s = pow(nonce, -1, P256_N) * (int.from_bytes(digest, "big") + r * key) % P256_N
    if r == 0 or s == 0:  # a chance of 2**-256: RFC 6979 would draw the next nonce; this says so instead
        raise ValueError("ECDSA drew a zero r or s: sign again with another message")
    return r, s


def p256_private_key(pem: str) -> int:
    """The private key of a PEM PKCS#8 document (RFC 5208) holding a P-256 key (RFC 5915); ValueError for anything
    else, or for a key whose public half, if given, is not its own."""
    body = "".join(line for line in pem.strip().splitlines() if not line.startswith("-----"))
    try:
        (outer_tag, outer), = der_items(base64.b64decode(body, validate=True))
        (_, version), (algorithm_tag, algorithm), (key_tag, key_octets), *_ = der_items(outer)
        (_, algorithm_oid), (_, curve_oid), *_ = der_items(algorithm)
        (inner_tag, inner), = der_items(key_octets)
        (_, key_version), (secret_tag, secret), *extra = der_items(inner)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a PKCS#8 EC private key: {exc}")
    if (outer_tag, algorithm_tag, key_tag, inner_tag, secret_tag) != (0x30, 0x30, 0x04, 0x30, 0x04) \
            or algorithm_oid != EC_PUBLIC_KEY_OID or curve_oid != P256_OID or key_version != b"\x01" or len(secret) != 32:
        raise ValueError("not a PKCS#8 P-256 private key")
    key = int.from_bytes(secret, "big")
    if not 1 <= key < P256_N:
        raise ValueError("the private key is out of range")
    for tag, content in extra:
        if tag == 0xa1:  # [1] the public key, a BIT STRING: 0 unused bits, 04, x, y
            (_, bits), = der_items(content)
            x, y = p256_multiply(key)
            if bits != b"\x00\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big"):
                raise ValueError("the key's public half is not its own")
    return key


def es256_assertion(key: int, client_id: str, audience: str, lifetime_s: int = 300) -> str:
    """A client assertion JWT (RFC 7523, section 3) signed ES256: the client as issuer and subject, the
    authorization server as audience, a unique jti, valid lifetime_s seconds."""
    now = int(time.time())
    header = {"alg": "ES256", "typ": "JWT"}
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + lifetime_s,
              "jti": secrets.token_urlsafe(16)}
    signed = f"{b64url_encode(json.dumps(header).encode())}.{b64url_encode(json.dumps(claims).encode())}"
    r, s = p256_sign(key, signed.encode())
    return f"{signed}.{b64url_encode(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


class TokenStore:
    """What the OAuth client keeps, by key: the tokens it holds for each server ("token <url>") and the client ids
    it registered with each authorization server ("client <issuer>"). In memory; a user's own store (on disk, in a
    keychain) needs only get and put, and values that json.dumps can write."""

    def __init__(self):
        self.kept, self.lock = {}, threading.Lock()

    def get(self, key: str) -> dict | None:
        """The value kept under key, or None."""
        with self.lock:
            return self.kept.get(key)

    def put(self, key: str, value: dict | None):
        """Keep value under key (None forgets it)."""
        with self.lock:
            if value is None:
                self.kept.pop(key, None)
            else:
                self.kept[key] = value


class OAuthClient:
    """An MCP client's OAuth 2.1 side (2025-11-25 and 2026-07-28, basic/authorization): the Bearer header for each
    request, and what a challenge asks for (discovery, registration, authorization, refresh).

        OAuthClient(authorize=callback)                          # dynamic registration, or a metadata document
        OAuthClient(authorize=callback, client_id="...", client_secret="...", issuer="https://as.example.com")
        OAuthClient(client_id="...", client_secret="...")        # client credentials, where the server offers them
        OAuthClient(client_id="...", private_key_pem=pem)         # the same, authenticated by an ES256 assertion
    authorize(url) -> the URL the user's browser was redirected to; None: no user to ask (client credentials only).
    A client id given is used with its issuer only (with any, if none is named); one registered is kept by issuer, and
    tokens by server, with the issuer that gave them: no credential is shown to another authorization server.
    """

    def __init__(self, authorize=None, *, client_id: str | None = None, client_secret: str | None = None,
                 issuer: str | None = None, private_key_pem: str | None = None, client_metadata_url: str | None = None,
                 redirect_uri: str = DEFAULT_REDIRECT,
                 client_name: str = "mcp_min", offline: bool = True, store: TokenStore | None = None, trace=None,
                 timeout: float = OAUTH_TIMEOUT_S):
        self.authorize, self.client_id, self.client_secret, self.issuer = authorize, client_id, client_secret, issuer
        self.private_key = p256_private_key(private_key_pem) if private_key_pem else None
        self.client_metadata_url = check_url(client_metadata_url, "the client metadata document") \
            if client_metadata_url else None
        self.redirect_uri, self.client_name, self.offline = redirect_uri, client_name, offline
        self.store = store or TokenStore()
        self.trace, self.timeout = trace, timeout

    def headers(self, url: str) -> dict:
        """The Authorization header of a request to the MCP server at url: its Bearer token, once it has one."""
        token = self.store.get(f"token {url}")
        return {"Authorization": f"Bearer {token['access_token']}"} if token else {}

    def challenge(self, url: str, status: int, header: str):
        """Answer a server's refusal (401, or 403 insufficient_scope) with a new token for url: refreshed if the
        authorization server that gave the last one still guards the server, else authorized afresh with the scope
        the challenge names (joined to the one asked before). AuthError names the step that failed."""
        params = parse_challenge(header)
        resource_meta = self.protected_resource(url, params.get("resource_metadata"))
        if resource_meta is None:  # 2025-03-26: no resource metadata, the server's origin is its authorization server
            resource, issuer = canonical(url), origin_of(url)
        else:
            resource, issuer = resource_meta["resource"], resource_meta["authorization_servers"][0]
        server = self.authorization_server(issuer, legacy=resource_meta is None)
        held = self.store.get(f"token {url}")
        if held and held.get("issuer") != issuer:
            held = None  # another authorization server's token: it is not refreshed there, nor its scope carried over
        if status == 401 and held and held.get("refresh_token") and self.refreshed(url, held, resource, server):
            return
        scope = self.scope_for(params, resource_meta, server, held)
        grants = server.get("grant_types_supported", ["authorization_code"])
        client = self.client_for(issuer, server)
        if "authorization_code" in grants and self.authorize is not None:
            token = self.authorization_code(client, server, resource, scope)
        elif "client_credentials" in grants and (client.get("client_secret") or client.get("private_key")):
            token = self.token_request(client, server, "client credentials",
                                       {"grant_type": "client_credentials", "resource": resource, "scope": scope})
        else:
            raise AuthError(f"authorization: {issuer} offers grants {grants}, and this client can use none of them "
                            "(authorization_code needs an authorize callback; client_credentials a secret or a key)")
        self.keep(url, token, issuer, scope)

    # ---- discovery ----

    def get_json(self, url: str, what: str) -> dict | None:
        """The JSON object at url (GET, with MAX_REDIRECTS redirects), or None if the server has none (4xx); AuthError
        for a server that cannot be reached or answers what is not a JSON object."""
        check_url(url, what)
        self.show("→", {"http": f"GET {url}"})
        try:
            status, _, body = fetch("GET", url, timeout=self.timeout, redirects=MAX_REDIRECTS)
        except (OSError, http.client.HTTPException) as exc:
            raise AuthError(f"{what}: GET {url} failed: {exc}")
        if 400 <= status < 500:
            self.show("←", {"status": status})
            return None
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if status != 200 or not isinstance(document, dict):
            raise AuthError(f"{what}: GET {url} answered {status} with what is not a JSON object: {body[:80]!r}")
        self.show("←", {"status": status, "body": redacted(document)})
        return document

    def protected_resource(self, url: str, named: str | None) -> dict | None:
        """The server's Protected Resource Metadata (RFC 9728): at the URL the challenge names, else at the well-known
        URIs, the path-based one first (2025-11-25, basic/authorization, "Protected Resource Metadata Discovery
        Requirements"); None if there is none (a 2025-03-26 server). AuthError if it names another resource."""
        parts = urllib.parse.urlsplit(url)
        path = parts.path.rstrip("/")
        candidates = ([named] if named else []) + ([origin_of(url) + PRM_PATH + path] if path else []) \
            + [origin_of(url) + PRM_PATH]
        for candidate in dict.fromkeys(candidates):
            document = self.get_json(candidate, "protected resource metadata")
            if document is None:
                continue
            servers = document.get("authorization_servers")
            if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
                raise AuthError(f"protected resource metadata at {candidate} names no authorization_servers")
            if not resource_covers(document.get("resource"), url):
                # RFC 9728, section 3.3: a document that names another resource is not this server's; asking for a
                # token to it would hand that resource a token meant for this one, or this one for it
                raise AuthError(f"protected resource metadata at {candidate} is for resource {document.get('resource')!r}, "
                                f"not this server ({url}): refused")
            return document
        return None

    def authorization_server(self, issuer: str, legacy: bool = False) -> dict:
        """The authorization server's metadata (RFC 8414 or OpenID discovery), tried at the well-known URIs in the
        spec's order (2025-11-25, basic/authorization, "Authorization Server Metadata Discovery"); its issuer must
        be the one it was found from (RFC 8414, section 3.3). A 2025-03-26 server (legacy) with none has the default
        endpoints at its origin (2025-03-26, "Fallbacks for Servers without Metadata Discovery")."""
        check_url(issuer, "the authorization server")
        origin, path = origin_of(issuer), urllib.parse.urlsplit(issuer).path.rstrip("/")
        if path:
            candidates = [origin + AS_PATH + path, origin + OIDC_PATH + path, origin + path + OIDC_PATH]
        else:
            candidates = [origin + AS_PATH, origin + OIDC_PATH]
        for candidate in candidates:
            document = self.get_json(candidate, "authorization server metadata")
            if document is None:
                continue
            if document.get("issuer") != issuer:
                raise AuthError(f"authorization server metadata at {candidate} names issuer {document.get('issuer')!r}, "
                                f"not {issuer!r}, the one it was found from: refused (RFC 8414, section 3.3)")
            if "token_endpoint" not in document:
                raise AuthError(f"authorization server metadata at {candidate} names no token_endpoint")
            for endpoint in ("authorization_endpoint", "token_endpoint", "registration_endpoint"):
                if endpoint in document:
                    check_url(document[endpoint], endpoint)
            return document
        if legacy:
            return {"issuer": issuer, "authorization_endpoint": origin + "/authorize", "token_endpoint": origin + "/token",
                    "registration_endpoint": origin + "/register"}
        raise AuthError(f"authorization server metadata: none for {issuer} at {', '.join(candidates)}")

    def scope_for(self, params: dict, resource_meta: dict | None, server: dict, held: dict | None) -> str | None:
        """The scope to ask for (2025-11-25, basic/authorization, "Scope Selection Strategy"): the challenge's, else
        every scope the resource supports, else none; joined to the scope asked before (2026-07-28, "Scope Challenge
        Handling"), and offline_access where the authorization server offers it and a refresh token is wanted."""
        wanted = params.get("scope", "").split() or (resource_meta or {}).get("scopes_supported") or []
        scopes = list(dict.fromkeys([*((held or {}).get("asked") or "").split(), *wanted]))
        if scopes and self.offline and "offline_access" in (server.get("scopes_supported") or []) \
                and "offline_access" not in scopes:
            scopes.append("offline_access")  # 2026-07-28, "Refresh Tokens": asked only where the server lists it
        return " ".join(scopes) or None

    # ---- registration ----

    def client_for(self, issuer: str, server: dict) -> dict:
        """This client's id at the authorization server issuer: the one given (if given for this issuer, or for any),
        else its metadata document's URL where the server accepts one, else one registered there (RFC 7591), kept."""
        if self.client_id and self.issuer in (None, issuer):
            return {"client_id": self.client_id, "client_secret": self.client_secret, "private_key": self.private_key}
        if self.client_metadata_url and server.get("client_id_metadata_document_supported") is True:
            return {"client_id": self.client_metadata_url, "token_endpoint_auth_method": "none"}
        kept = self.store.get(f"client {issuer}")
        if kept:
            return kept
        if "registration_endpoint" not in server:
            raise AuthError(f"registration: {issuer} has no registration endpoint and accepts no client metadata "
                            "document; give this client a pre-registered client_id for it")
        loopback = urllib.parse.urlsplit(self.redirect_uri).hostname in LOCAL_NAMES
        asked = {"client_name": self.client_name, "redirect_uris": [self.redirect_uri],
                 "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
                 "token_endpoint_auth_method": "none", "application_type": "native" if loopback else "web"}
        status, answer = self.post(server["registration_endpoint"], "registration", json.dumps(asked).encode(),
                                   {"Content-Type": "application/json"})
        if status not in (200, 201) or not isinstance(answer.get("client_id"), str):
            raise AuthError(f"registration at {server['registration_endpoint']} answered {status}: {self.reason(answer)}")
        client = {name: answer[name] for name in ("client_id", "client_secret", "token_endpoint_auth_method")
                  if isinstance(answer.get(name), str)}
        self.store.put(f"client {issuer}", client)
        return client

    # ---- authorization and tokens ----

    def authorization_code(self, client: dict, server: dict, resource: str, scope: str | None) -> dict:
        """The authorization code grant with PKCE (OAuth 2.1, section 4.1; RFC 7636): send the user to the
        authorization endpoint, check the redirect that comes back, and trade its code for a token."""
        methods = server.get("code_challenge_methods_supported")
        if "code_challenge_methods_supported" in server and "S256" not in (methods or []):
            raise AuthError(f"authorization: {server['issuer']} does not offer PKCE with S256 (code_challenge_methods_"
                            f"supported: {methods}): refused (2025-11-25, basic/authorization, \"Authorization Code "
                            "Protection\")")
        if "authorization_endpoint" not in server:
            raise AuthError(f"authorization: {server['issuer']} names no authorization_endpoint")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": self.redirect_uri,
                 "code_challenge": challenge, "code_challenge_method": "S256", "state": state, "resource": resource}
        if scope:
            query["scope"] = scope
        endpoint = server["authorization_endpoint"]
        url = endpoint + ("&" if "?" in endpoint else "?") + urllib.parse.urlencode(query)
        self.show("→", {"authorize": url})
        try:
            landed = self.authorize(url)
        except OSError as exc:
            raise AuthError(f"authorization: {exc}")
        self.show("←", {"redirect": redacted_url(landed)})
        answer = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(landed).query, keep_blank_values=True))
        if answer.get("state") != state:
            raise AuthError("authorization: the redirect's state is not the one sent: refused (a forged redirect)")
        if "error" in answer:
            raise AuthError(f"authorization refused: {answer['error']} {answer.get('error_description', '')}".rstrip())
        # RFC 9207, section 2.4: an iss that is present must be the issuer, compared as strings; one the server
        # promised (authorization_response_iss_parameter_supported) must be present.
        if "iss" in answer and answer["iss"] != server["issuer"]:
            raise AuthError(f"authorization: the redirect's iss {answer['iss']!r} is not the issuer {server['issuer']!r}: "
                            "refused (RFC 9207), the code is not sent anywhere")
        if "iss" not in answer and server.get("authorization_response_iss_parameter_supported") is True:
            raise AuthError(f"authorization: {server['issuer']} promises an iss in its redirect, and this one has none: "
                            "refused (RFC 9207)")
        if not answer.get("code"):
            raise AuthError("authorization: the redirect holds no code")
        return self.token_request(client, server, "token", {
            "grant_type": "authorization_code", "code": answer["code"], "redirect_uri": self.redirect_uri,
            "code_verifier": verifier, "resource": resource})

    def refreshed(self, url: str, held: dict, resource: str, server: dict) -> bool:
        """Whether a refresh token got a new token for url (OAuth 2.1, section 4.3); False if the server refused it."""
        try:
            token = self.token_request(self.client_for(held["issuer"], server), server, "refresh", {
                "grant_type": "refresh_token", "refresh_token": held["refresh_token"], "resource": resource})
        except AuthError:
            return False
        token.setdefault("refresh_token", held["refresh_token"])  # a server that does not rotate it keeps the old one
        self.keep(url, token, held["issuer"], held.get("asked"))
        return True

    def token_request(self, client: dict, server: dict, step: str, fields: dict) -> dict:
        """POST to the token endpoint, the client authenticated as the server allows (client_secret_basic,
        client_secret_post, private_key_jwt, or none: RFC 6749, section 2.3; RFC 7523); the token response, checked."""
        fields = {name: value for name, value in fields.items() if value is not None}
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        method = self.auth_method(client, server)
        if method == "client_secret_basic":
            pair = f"{urllib.parse.quote_plus(client['client_id'])}:{urllib.parse.quote_plus(client['client_secret'])}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "private_key_jwt":
            fields["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            fields["client_assertion"] = es256_assertion(client["private_key"], client["client_id"], server["issuer"])
        else:
            fields["client_id"] = client["client_id"]
            if method == "client_secret_post":
                fields["client_secret"] = client["client_secret"]
        status, answer = self.post(server["token_endpoint"], step, urllib.parse.urlencode(fields).encode(), headers,
                                   shown=fields)
        if status != 200 or not isinstance(answer.get("access_token"), str) \
                or str(answer.get("token_type", "")).lower() != "bearer":
            raise AuthError(f"{step} request at {server['token_endpoint']} answered {status}: {self.reason(answer)}")
        return answer

    def auth_method(self, client: dict, server: dict) -> str:
        """How the client authenticates at the token endpoint: by its key if it has one, as it registered, else as
        the server supports (client_secret_basic when it names none, RFC 8414, section 2); none with no secret."""
        if client.get("private_key"):
            return "private_key_jwt"
        if not client.get("client_secret"):
            return "none"
        supported = server.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        registered = client.get("token_endpoint_auth_method")
        if registered in ("client_secret_basic", "client_secret_post", "none"):
            return registered
        for method in ("client_secret_basic", "client_secret_post", "none"):
            if method in supported:
                return method
        return "client_secret_basic"

    def keep(self, url: str, token: dict, issuer: str, asked: str | None):
        """Keep a token for url, with the issuer that gave it and the scope asked (a later challenge adds to it)."""
        kept = {name: token[name] for name in ("access_token", "refresh_token", "scope") if isinstance(token.get(name), str)}
        if isinstance(token.get("expires_in"), (int, float)):
            kept["expires_at"] = time.time() + token["expires_in"]
        self.store.put(f"token {url}", kept | {"issuer": issuer, "asked": asked or ""})

    def post(self, url: str, step: str, body: bytes, headers: dict, shown: dict | None = None) -> tuple:
        """POST body to url (no redirect followed): (status, its JSON object, or {}); AuthError if unreachable."""
        check_url(url, step)
        self.show("→", {"http": f"POST {url}", "headers": redacted(headers),
                        "body": redacted(shown if shown is not None else json.loads(body))})
        try:
            status, _, answer = fetch("POST", url, headers, body, timeout=self.timeout)
        except (OSError, http.client.HTTPException) as exc:
            raise AuthError(f"{step}: POST {url} failed: {exc}")
        try:
            document = json.loads(answer)
        except ValueError:
            document = {}
        document = document if isinstance(document, dict) else {}
        self.show("←", {"status": status, "body": redacted(document)})
        return status, document

    def reason(self, answer: dict) -> str:
        """What an OAuth error response says (RFC 6749, section 5.2)."""
        return f"{answer.get('error', 'no error code')} {answer.get('error_description', '')}".rstrip()

    def show(self, direction: str, what: dict):
        """Show one step to the trace hook, if there is one (secrets already redacted)."""
        if self.trace:
            self.trace(direction, what)
