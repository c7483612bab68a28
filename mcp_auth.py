"""mcp_auth: what an MCP server checks of a bearer token before it serves a request (spec 2025-11-25, basic/authorization).

  12. The resource server   what a verified token grants (Grant); the verifiers: a JWT signed HS256 or RS256
                            (JwtVerifier, RsaPublicKey), an opaque token by introspection (IntrospectionVerifier)

Over HTTP the MCP server is an OAuth 2.1 resource server: each request carries `Authorization: Bearer <token>`,
and the server checks that the token is genuine (a signature, or the authorization server's word), that it was
minted for this server (its audience: this server's resource URI, RFC 8707) and that it has not expired. What the
token grants (its scopes) becomes the session's allow-list (mcp_http.py, with a mapping from scopes to tools), so
that mcp_min's _call_tool stays the one place a tool is refused. A verifier has one method, verify(token,
audience), which returns the Grant or raises InvalidToken, saying why; the audience is the resource server's own
resource URI, which it passes.

    verifier = JwtVerifier(key=b"the secret the authorization server signs with, 32 bytes or more")
    httpd = http_server(mcp, verifier=verifier, authorization_servers=["http://127.0.0.1:9000"],
                        scopes={"mcp:add": {"add"}})

Glossary: mcp_http's, and
  token         an access token: a string a client got from an authorization server and sends as Bearer
  grant         what a verified token allows: its subject, its client, its scopes (Grant)
  audience      the resource a token was minted for (its aud claim): this server's resource URI, or refused
  verifier      what checks a token: verify(token, audience) -> Grant, or InvalidToken
"""

import base64
import binascii
import dataclasses
import hashlib
import hmac
import http.client
import json
import time
import urllib.parse

# ---------------------------------------------------------------------------------------------------
# ---- 12. The resource server ----
# A token is checked for three things, in this order: genuine, minted for this server, not expired.
# Every size is bounded before it is read: a token, a key, the authorization server's answer.
# ---------------------------------------------------------------------------------------------------

MAX_TOKEN_BYTES = 8192  # a bearer token longer than this is refused before any decoding (a JWT is ~1 kB)
LEEWAY_S = 30  # clocks differ: a token is still taken this long after its exp (and this long before its nbf)
MIN_RSA_BITS = 2048  # a smaller RSA key is refused (RFC 7518, section 3.3)
MAX_RSA_BITS = 8192  # and a larger one: verifying is one pow(), whose cost grows with the key
INTROSPECT_S = 5  # the authorization server answers an introspection within this, or the token is refused
MAX_INTROSPECTION_BYTES = 65536  # an introspection response longer than this is refused

# EMSA-PKCS1-v1_5's DigestInfo for SHA-256 (RFC 8017, section 9.2, note 1): these bytes, then the hash.
SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


class InvalidToken(ValueError):
    """The token is refused: its message says why (sent as error_description, with error="invalid_token")."""


@dataclasses.dataclass(frozen=True)
class Grant:
    """What a verified token allows: who (subject), through which client, with which scopes, until when."""
    subject: str
    client_id: str | None
    scopes: frozenset
    audience: tuple  # the resources it was minted for (one, usually)
    expires_at: float | None  # seconds since the epoch; None: the introspection named no exp


def grant_of(claims: dict, audience: str, now: float | None = None, expiry_required: bool = True) -> Grant:
    """The Grant claims make, once checked: minted for audience, unexpired, naming its subject; else InvalidToken."""
    now = time.time() if now is None else now
    aud = claims.get("aud")
    audiences = (aud,) if isinstance(aud, str) else tuple(aud) if isinstance(aud, list) else ()
    if audience not in audiences:  # a token for another resource, replayed here (spec: "Token Audience Binding")
        raise InvalidToken(f"the token was not minted for {audience}")
    exp, nbf = claims.get("exp"), claims.get("nbf")
    if exp is None and expiry_required:
        raise InvalidToken("the token has no exp")
    if exp is not None and not (isinstance(exp, (int, float)) and now <= exp + LEEWAY_S):
        raise InvalidToken("the token has expired")
    if nbf is not None and not (isinstance(nbf, (int, float)) and nbf - LEEWAY_S <= now):
        raise InvalidToken("the token is not valid yet")
    subject, client_id, scope = claims.get("sub"), claims.get("client_id"), claims.get("scope", "")
    if not (isinstance(subject, str) and subject):  # a session is bound to it (mcp_http.py)
        raise InvalidToken("the token names no subject (sub)")
    if not isinstance(scope, str) or not (client_id is None or isinstance(client_id, str)):
        raise InvalidToken("scope is a string of scopes, one space apart, and client_id a string")
    return Grant(subject, client_id, frozenset(scope.split()), audiences, exp)


def b64url_decode(text: str) -> bytes:
    """base64url without padding (RFC 7515, section 2), strictly: any other character is InvalidToken."""
    try:
        return base64.urlsafe_b64decode(text.encode("ascii") + b"=" * (-len(text) % 4))
    except (UnicodeEncodeError, binascii.Error, ValueError):
        raise InvalidToken("the token is not base64url") from None


def b64url_encode(data: bytes) -> str:
    """base64url without padding (RFC 7515, section 2)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def json_part(text: str) -> dict:
    """One JSON object part of a JWT (its header or its claims); else InvalidToken."""
    try:
        value = json.loads(b64url_decode(text))
    except (UnicodeDecodeError, ValueError):
        raise InvalidToken("a part of the token is not JSON") from None
    if not isinstance(value, dict):
        raise InvalidToken("a part of the token is not a JSON object")
    return value


class RsaPublicKey:
    """An RSA public key (n, e), which verifies RS256 signatures by one pow() on integers (RFC 8017, section 8.2.2)."""

    def __init__(self, n: int, e: int):
        if not MIN_RSA_BITS <= n.bit_length() <= MAX_RSA_BITS:
            raise ValueError(f"an RSA key has {MIN_RSA_BITS} to {MAX_RSA_BITS} bits, not {n.bit_length()}")
        if e < 3 or e % 2 == 0:
            raise ValueError("an RSA public exponent is odd, and 3 or more")
        self.n, self.e = n, e

    @classmethod
    def from_jwk(cls, jwk: dict) -> "RsaPublicKey":
        """The key a JWK names ({"kty": "RSA", "n": ..., "e": ...}, RFC 7517 and RFC 7518, section 6.3.1)."""
        if jwk.get("kty") != "RSA" or not isinstance(jwk.get("n"), str) or not isinstance(jwk.get("e"), str):
            raise ValueError('an RSA JWK has "kty": "RSA" and its "n" and "e" in base64url')
        return cls(int.from_bytes(b64url_decode(jwk["n"]), "big"), int.from_bytes(b64url_decode(jwk["e"]), "big"))

    @classmethod
    def from_pem(cls, text: str) -> "RsaPublicKey":
        """The key a PEM text holds: "PUBLIC KEY" (SubjectPublicKeyInfo, RFC 5280) or "RSA PUBLIC KEY" (RFC 8017)."""
        lines = [line.strip() for line in text.strip().splitlines()]
        if len(lines) < 3 or lines[0] not in ("-----BEGIN PUBLIC KEY-----", "-----BEGIN RSA PUBLIC KEY-----"):
            raise ValueError("a PEM public key starts -----BEGIN PUBLIC KEY----- or -----BEGIN RSA PUBLIC KEY-----")
        der = base64.b64decode("".join(lines[1:-1]), validate=True)
        if lines[0] == "-----BEGIN PUBLIC KEY-----":  # SEQUENCE {SEQUENCE {rsaEncryption, NULL}, BIT STRING {the key}}
            [(tag, algorithm), (bits_tag, bits)] = der_items(der_one(der, 0x30), 2)
            if (tag, bits_tag) != (0x30, 0x03) or not algorithm.startswith(bytes.fromhex("06092a864886f70d010101")):
                raise ValueError("the PEM key is not an RSA key")
            if bits[:1] != b"\x00":
                raise ValueError("the key's BIT STRING has unused bits")
            der = bits[1:]
        [(n_tag, n), (e_tag, e)] = der_items(der_one(der, 0x30), 2)  # SEQUENCE {INTEGER n, INTEGER e}
        if (n_tag, e_tag) != (0x02, 0x02):
            raise ValueError("an RSA public key is two INTEGERs, n and e")
        return cls(int.from_bytes(n, "big"), int.from_bytes(e, "big"))

    def verify(self, message: bytes, signature: bytes) -> bool:
        """Whether signature is this key's RSASSA-PKCS1-v1_5 signature of message with SHA-256."""
        size = (self.n.bit_length() + 7) // 8
        s = int.from_bytes(signature, "big")
        if len(signature) != size or s >= self.n:
            return False
        encoded = pow(s, self.e, self.n).to_bytes(size, "big")  # the signer's pow(m, d, n), undone
        digest = SHA256_DIGEST_INFO + hashlib.sha256(message).digest()
        expected = b"\x00\x01" + b"\xff" * (size - len(digest) - 3) + b"\x00" + digest
        return hmac.compare_digest(encoded, expected)  # the whole block compared: no part is parsed (no forgery)


def der_one(der: bytes, tag: int) -> bytes:
    """The content of the one DER element der holds, of type tag (and nothing after it)."""
    [(found, content)] = der_items(der, 1)
    if found != tag:
        raise ValueError(f"expected a DER element of tag {tag:#x}, not {found:#x}")
    return content


def der_items(der: bytes, count: int | None = None) -> list:
    """The (tag, content) of the DER elements der holds one after another (X.690: tag, length, content): count of
    them, or any number if count is None."""
    items, at = [], 0
    while at < len(der):
        if at + 2 > len(der):
            raise ValueError("a DER element is cut short")
        tag, length, at = der[at], der[at + 1], at + 2
        if length & 0x80:  # long form: the next length & 0x7f bytes hold the length
            width = length & 0x7F
            if not 1 <= width <= 4 or at + width > len(der):
                raise ValueError("a DER length is malformed")
            length, at = int.from_bytes(der[at:at + width], "big"), at + width
        if at + length > len(der):
            raise ValueError("a DER element is cut short")
        items.append((tag, der[at:at + length]))
        at += length
    if count is not None and len(items) != count:
        raise ValueError(f"expected {count} DER elements, not {len(items)}")
    return items


class JwtVerifier:
    """A JWT access token (RFC 9068's shape), signed HS256 with a shared secret (bytes) or RS256 with an RsaPublicKey:
    the key chooses the algorithm, never the token's header. issuer, if given, must be its iss."""

    def __init__(self, key, issuer: str | None = None):
        if isinstance(key, (bytes, bytearray)) and len(key) >= 32:
            self.algorithm = "HS256"
        elif isinstance(key, RsaPublicKey):
            self.algorithm = "RS256"
        else:
            raise TypeError("key is an HS256 secret of 32 bytes or more, or an RsaPublicKey")
        self.key, self.issuer = key, issuer

    def verify(self, token: str, audience: str, now: float | None = None) -> Grant:
        """The token's Grant; InvalidToken if it is malformed, forged, for another audience, expired or nameless."""
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidToken(f"the token is longer than {MAX_TOKEN_BYTES} bytes (MAX_TOKEN_BYTES)")
        parts = token.split(".")
        if len(parts) != 3:
            raise InvalidToken("a JWT is three base64url parts, one dot apart")
        header = json_part(parts[0])
        if header.get("alg") != self.algorithm:  # "none", or HS256 signed with an RSA key's public bytes: refused
            raise InvalidToken(f"the token is not signed {self.algorithm}")
        signed, signature = f"{parts[0]}.{parts[1]}".encode("ascii"), b64url_decode(parts[2])
        if self.algorithm == "HS256":
            genuine = hmac.compare_digest(hmac.new(self.key, signed, hashlib.sha256).digest(), signature)
        else:
            genuine = self.key.verify(signed, signature)
        if not genuine:
            raise InvalidToken("the token's signature does not verify")
        claims = json_part(parts[1])  # read only once the signature holds
        if self.issuer is not None and claims.get("iss") != self.issuer:
            raise InvalidToken(f"the token was not issued by {self.issuer}")
        return grant_of(claims, audience, now)


class IntrospectionVerifier:
    """An opaque token, asked of the authorization server's introspection endpoint (RFC 7662), as client_id with
    client_secret (HTTP Basic), within INTROSPECT_S; its answer read up to MAX_INTROSPECTION_BYTES."""

    def __init__(self, url: str, client_id: str, client_secret: str, timeout: float = INTROSPECT_S):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the introspection endpoint is an http or https URL, not {url!r}")
        self.url, self.timeout = parts, timeout
        credentials = f"{urllib.parse.quote(client_id)}:{urllib.parse.quote(client_secret)}"  # RFC 6749, section 2.3.1
        self.authorization = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")

    def verify(self, token: str, audience: str, now: float | None = None) -> Grant:
        """The token's Grant, as the authorization server describes it; InvalidToken if inactive, for another
        audience, expired, or if the authorization server cannot say."""
        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidToken(f"the token is longer than {MAX_TOKEN_BYTES} bytes (MAX_TOKEN_BYTES)")
        claims = self.introspect(token)
        if claims.get("active") is not True:
            raise InvalidToken("the authorization server says the token is not active")
        return grant_of(claims, audience, now, expiry_required=False)

    def introspect(self, token: str) -> dict:
        """The authorization server's answer about token (RFC 7662, section 2.2); InvalidToken if none came."""
        kind = http.client.HTTPSConnection if self.url.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.url.hostname, self.url.port, timeout=self.timeout)
        body = urllib.parse.urlencode({"token": token, "token_type_hint": "access_token"})
        try:
            connection.request("POST", self.url.path or "/", body, {
                "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
                "Authorization": self.authorization})
            answer = connection.getresponse()
            data = answer.read(MAX_INTROSPECTION_BYTES + 1)
        except (OSError, http.client.HTTPException) as exc:
            raise InvalidToken(f"the authorization server did not answer the introspection: {exc}") from None
        finally:
            connection.close()
        if answer.status != 200 or len(data) > MAX_INTROSPECTION_BYTES:
            raise InvalidToken(f"the introspection failed (HTTP {answer.status}, {len(data)} bytes)")
        try:
            claims = json.loads(data)
        except ValueError:
            raise InvalidToken("the introspection's answer is not JSON") from None
        if not isinstance(claims, dict):
            raise InvalidToken("the introspection's answer is not a JSON object")
        return claims
