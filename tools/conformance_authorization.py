"""The official conformance suite's authorization server scenarios against lessons/tiny_auth_server.py: it starts the
teaching authorization server with a public client registered for the suite's callback, runs the suite, and plays
the user's browser: the authorization URL the suite prints is followed, and its redirect taken to the callback.

    python tools/conformance_authorization.py     # needs Node 22 and npx (@modelcontextprotocol/conformance)
    python tools/conformance_authorization.py node /tmp/conf/node_modules/.bin/conformance   # an installed suite

Exit status: the suite's.
"""

import http.client
import pathlib
import subprocess
import sys
import urllib.parse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "lessons"))  # where tiny_auth_server.py is

from tiny_auth_server import TinyAuthServer  # noqa: E402

CALLBACK_PORT = 3000  # the suite's own callback server listens here: http://127.0.0.1:3000/callback
CLIENT_ID = "conformance"  # public (token_endpoint_auth_method none): the suite uses none when the server offers it
RESOURCE = "http://127.0.0.1:8000/mcp"  # the resource the token is asked for (RFC 8707)


def get(port: int, target: str) -> http.client.HTTPResponse:
    """One GET on loopback, its response read."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", target)
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def follow(url: str, auth_port: int):
    """What a browser does with the authorization URL: GET it, then GET where it redirects (the suite's callback)."""
    split = urllib.parse.urlsplit(url)
    location = urllib.parse.urlsplit(get(auth_port, f"{split.path}?{split.query}").headers["Location"])
    get(location.port, f"{location.path}?{location.query}")


def main(suite: list) -> int:
    auth = TinyAuthServer()
    auth.clients[CLIENT_ID] = {"client_id": CLIENT_ID, "token_endpoint_auth_method": "none",
                               "redirect_uris": [f"http://127.0.0.1:{CALLBACK_PORT}/callback"]}
    try:
        command = [*suite, "authorization", "--url", auth.issuer, "--client-id", CLIENT_ID, "--resource", RESOURCE,
                   "--port", str(CALLBACK_PORT)]
        with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as child:
            url = None
            for line in child.stdout:
                print(line, end="", flush=True)
                if line.startswith(auth.issuer + "/authorize?"):
                    url = line.strip()
                if line.startswith("Callback server started") and url:  # only now is there a callback to reach
                    follow(url, auth.server_address[1])
            return child.wait()
    finally:
        auth.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["npx", "@modelcontextprotocol/conformance"]))
