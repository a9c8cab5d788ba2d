"""A headless Chromium driven over the DevTools protocol, with the standard library only.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol commands from file
descriptor 3 and writes answers and events to descriptor 4, each message one JSON text ended by
a NUL byte. No websocket, no extra package. Every read has a deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Flags for a quiet, offline, throw-away browser (the network is closed on CI machines).
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
)

INSTALL_HINT = (
    "the replay widget's browser tests need headless Chromium: on Debian or Ubuntu run "
    "`apt-get install -y chromium` (or set CHROMIUM=/path/to/chromium)"
)


#: Put the two pipe ends on descriptors 3 and 4, then become the browser.
_TRAMPOLINE = """
import fcntl, os, sys
r, w = (fcntl.fcntl(int(fd), fcntl.F_DUPFD, 10) for fd in sys.argv[1:3])
os.dup2(r, 3)
os.dup2(w, 4)
os.execv(sys.argv[3], sys.argv[3:])
"""


class BrowserError(RuntimeError):
    """The browser failed, answered with an error, or did not answer in time."""


def find_chromium() -> str | None:
    """The Chromium executable: ``$CHROMIUM``, else the usual names on ``PATH``."""
    given = os.environ.get("CHROMIUM")
    if given:
        return given if os.access(given, os.X_OK) else shutil.which(given)
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page (a tab), attached in flat session mode."""

    def __init__(self, executable: str, *, timeout: float = 20.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="replay-chromium-")
        self._log = open(Path(self._profile.name) / "stderr.log", "w+b")  # noqa: SIM115
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        profile = Path(self._profile.name) / "profile"
        args = [
            executable,
            *FLAGS,
            f"--user-data-dir={profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        # The browser expects the pipe on descriptors 3 and 4: a tiny trampoline moves them there.
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _TRAMPOLINE, str(to_browser_r), str(from_browser_w), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
            pass_fds=(to_browser_r, from_browser_w),
            start_new_session=True,
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session = ""
        try:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True}
            )["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable")
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ the protocol

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A browser-level command (no session)."""
        return self._command(method, params or {}, None)

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command to the page."""
        return self._command(method, params or {}, self.session)

    def _command(self, method: str, params: dict[str, Any], session: str | None) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            n = os.write(self._to_browser, data)
            data = data[n:]
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read(deadline, f"an answer to {method}")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        """Wait for the next event ``method`` (events already received count)."""
        for k, event in enumerate(self.events):
            if event["method"] == method:
                return self.events.pop(k)
        deadline = time.monotonic() + self.timeout
        while True:
            message = self._read(deadline, f"the event {method}")
            if message.get("method") == method:
                return message
            if "method" in message:
                self.events.append(message)

    def _read(self, deadline: float, what: str) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"Chromium sent no {what} in {self.timeout} s{self._stderr()}")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise BrowserError(f"Chromium closed the pipe (exited?){self._stderr()}")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def _stderr(self) -> str:
        self._log.seek(0)
        tail = self._log.read()[-2000:].decode(errors="replace").strip()
        return f"; its last output:\n{tail}" if tail else ""

    # ------------------------------------------------------------------ what a test does

    def goto(self, url: str) -> None:
        """Load a page and wait for its load event."""
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str, *, await_promise: bool = False) -> Any:
        """Run JavaScript in the page and return its (JSON) value; a thrown error fails."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"JavaScript error: {text}\nin: {expression}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """A real mouse click (press and release) in the middle of the element."""
        box = self.evaluate(
            f"""(() => {{
                const el = document.querySelector({json.dumps(selector)});
                if (!el) return null;
                el.scrollIntoView({{block: "center"}});
                const r = el.getBoundingClientRect();
                return [r.left + r.width / 2, r.top + r.height / 2];
            }})()"""
        )
        if box is None:
            raise BrowserError(f"nothing matches {selector!r}")
        x, y = box
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1},
            )

    def key(self, key: str) -> None:
        """Press and release a key (``ArrowRight``, ``Home``, ...) in the focused element."""
        codes = {"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40,
                 "Home": 36, "End": 35}  # fmt: skip
        params = {"key": key, "code": key, "windowsVirtualKeyCode": codes.get(key, 0)}
        self.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **params})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads seen so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                entry = p["entry"]
                if not entry.get("url", "").endswith("/favicon.ico"):
                    out.append(f"{entry.get('text')} {entry.get('url', '')}".strip())
        return out

    def close(self) -> None:
        """Ask the browser to quit; stop its process group if it does not."""
        if self.proc.poll() is None:
            with contextlib.suppress(BrowserError, OSError):
                self.call("Browser.close")
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)  # helpers left in its group, if any
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._log.close()
        self._profile.cleanup()
