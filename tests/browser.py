"""Headless Chromium, driven through chromedriver's W3C WebDriver HTTP API with urllib: the board's page as a browser
shows it. Where Chromium or chromedriver is absent, the tests that need it skip (Debian: apt-get install chromium
chromium-driver)."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

from harness import TIMEOUT, stderr_line


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


CHROMEDRIVER = shutil.which("chromedriver")


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000"]


class Browser:
    """Headless Chromium, driven through chromedriver's WebDriver HTTP API with urllib."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix="board-chromium-")
        # --port=0: the OS picks a free port, and chromedriver names it ("... started successfully on port N."). Its
        # own process group: the Chromium it starts, and Chromium's helpers, end with it (end()).
        self.driver = subprocess.Popen([CHROMEDRIVER, "--port=0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                       start_new_session=True)
        self.drain = None
        try:
            said = ""
            while "started successfully on port" not in said:
                said = stderr_line(self.driver, "chromedriver did not say its port", stream="stdout")
            self.base = f"http://127.0.0.1:{said.rstrip().rstrip('.').split()[-1]}"
            self.drain = threading.Thread(target=self.driver.stdout.read, daemon=True)  # the rest: the pipe never fills
            self.drain.start()
            self.wait_for(lambda: self.call("GET", "/status")["ready"], "chromedriver")
            options = {"binary": CHROMIUM, "args": CHROMIUM_FLAGS + [f"--user-data-dir={self.profile}"]}
            capabilities = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": options}}}
            self.session = self.call("POST", "/session", capabilities)["sessionId"]
        except BaseException:
            self.end()  # a start that fails half way leaves no chromedriver, and no Chromium, running
            raise

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc_info):
        self.close()

    def call(self, verb: str, path: str, body=None):
        """One WebDriver command; its value."""
        data = None if body is None else json.dumps(body).encode()
        asked = urllib.request.Request(self.base + path, data=data, method=verb,
                                       headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(asked, timeout=60) as reply:
            return json.loads(reply.read())["value"]

    def open(self, url: str):
        self.call("POST", f"/session/{self.session}/url", {"url": url})

    def run(self, script: str, *args):
        """Run script in the page (a function body); what it returns."""
        return self.call("POST", f"/session/{self.session}/execute/sync", {"script": script, "args": list(args)})

    def wait_for(self, condition, what: str):
        """Poll condition() until it is true, or fail after TIMEOUT."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            with contextlib.suppress(OSError):  # chromedriver may not listen yet
                if condition():
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"gave up waiting for {what}")
            time.sleep(0.05)

    def close(self):
        """End the WebDriver session (Chromium closes), then chromedriver and whatever is left of its group."""
        with contextlib.suppress(OSError):
            self.call("DELETE", f"/session/{self.session}")
        self.end()

    def end(self):
        """End chromedriver's process group (chromedriver, Chromium and its helpers) and remove the profile."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.driver.pid, signal.SIGTERM)
        try:
            self.driver.wait(timeout=TIMEOUT)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.driver.pid, signal.SIGKILL)  # a Chromium helper that outlived chromedriver, say
        if self.drain is not None:
            self.drain.join(TIMEOUT)
        self.driver.stdout.close()
        shutil.rmtree(self.profile, ignore_errors=True)
