"""Interop (issue 44): the official Python SDK's client (mcp==2.3.0), with its OAuth support, drives the project's
server behind a verifier, with a token from the teaching authorization server (lessons/tiny_auth_server.py), over
HTTP on loopback: the 401, both metadata documents, registration, the auto-approved redirect with PKCE, the token,
then the calls with Authorization: Bearer.

Skips where `mcp` (v2) is not importable. Every SDK exchange runs under anyio.fail_after.
"""

import importlib.metadata
import threading
import urllib.parse

import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (pip install mcp==2.3.0) is not installed")
if int(importlib.metadata.version("mcp").split(".")[0]) < 2:
    pytest.skip("these tests need the official MCP SDK v2 (mcp==2.3.0)", allow_module_level=True)

import anyio  # noqa: E402
import httpx2  # noqa: E402  (the SDK's HTTP library)
from mcp import Client  # noqa: E402
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.auth import OAuthClientMetadata  # noqa: E402

import mcp_http  # noqa: E402
import server_demo  # noqa: E402
from harness import TIMEOUT  # noqa: E402
from lessons.tiny_auth_server import TinyAuthServer  # noqa: E402
from mcp_auth import JwtVerifier  # noqa: E402

SDK_DEADLINE = 20  # seconds for one whole SDK client session
SCOPES = {"mcp:add": {"add"}, "mcp:weather": {"weather"}}
REDIRECT = "http://127.0.0.1:1/callback"  # never listened on: the test reads the redirect's Location itself


class Storage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self):
        self.tokens = self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def run_sdk_with_oauth(url: str, mode: str) -> tuple:
    """The SDK client, authorizing itself, calls add and weather at url: (what came back, every HTTP exchange)."""
    exchanges, redirected = [], []

    async def on_response(response):
        request = response.request
        exchanges.append((request.method, urllib.parse.urlsplit(str(request.url)).path, response.status_code,
                          "authorization" in request.headers))

    async def redirect_handler(authorization_url: str):
        # The teaching server approves at once: follow the URL, read the code off the redirect's Location.
        async with httpx2.AsyncClient() as http:
            answer = await http.get(authorization_url)
        redirected.append(dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(answer.headers["location"]).query)))

    async def callback_handler():
        return AuthorizationCodeResult(code=redirected[-1]["code"], state=redirected[-1].get("state"))

    async def scenario():
        metadata = OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="sdk-interop",
                                       grant_types=["authorization_code", "refresh_token"])
        auth = OAuthClientProvider(url, metadata, Storage(), redirect_handler, callback_handler)
        with anyio.fail_after(SDK_DEADLINE):
            async with httpx2.AsyncClient(auth=auth, timeout=10, event_hooks={"response": [on_response]}) as http:
                async with Client(streamable_http_client(url, http_client=http), mode=mode,
                                  read_timeout_seconds=5) as client:
                    added = await client.call_tool("add", {"x": 2, "y": 3})
                    weather = await client.call_tool("weather", {"city": "Oslo"})
                    return [block.text for block in added.content + weather.content]
    return anyio.run(scenario), exchanges


@pytest.fixture
def secured_url():
    """The teaching authorization server, and server_demo behind a verifier of its tokens: the MCP URL."""
    auth = TinyAuthServer(scopes=list(SCOPES))
    httpd = mcp_http.http_server(server_demo.make_server, verifier=JwtVerifier(auth.signing_key),
                                 authorization_servers=[auth.issuer], scopes=SCOPES)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield httpd.resource
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=TIMEOUT)
        auth.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_official_client_authorizes_itself_and_calls_our_server_with_a_bearer_token(mode, secured_url):
    answers, exchanges = run_sdk_with_oauth(secured_url, mode)
    assert answers == ["5", "Sunny, 21 °C in Oslo"]
    # Its first request is refused 401; it reads both metadata documents, registers, is redirected, gets its token.
    assert exchanges[0][2:] == (401, False)
    oauth = [(verb, path, status) for verb, path, status, _ in exchanges if not path.startswith("/mcp")]
    assert oauth == [("GET", "/.well-known/oauth-protected-resource/mcp", 200),
                     ("GET", "/.well-known/oauth-authorization-server", 200),
                     ("POST", "/register", 201), ("POST", "/token", 200)]
    # Every MCP request after the token carries it, and is served.
    after = exchanges[exchanges.index(next(e for e in exchanges if e[1] == "/token")) + 1:]
    assert after and {(status < 300, bearer) for _, _, status, bearer in after} == {(True, True)}

