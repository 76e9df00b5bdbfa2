"""Headless Chromium driven through the Chrome DevTools Protocol over its pipe (``--remote-debugging-pipe``).

The pipe is what Puppeteer and Playwright use: the browser reads JSON commands from file descriptor 3 and writes
answers and events to 4, each message ended by a NUL byte. No debugging port, no driver binary, no Python package.

    with Chromium(executable, tmp_path / "profile") as browser:
        page = browser.new_page(width=1000, height=900)
        page.navigate(url)
        page.evaluate("document.title")
        page.screenshot(path)
        page.type_text("input[name=customerNumber]", "13039319955")
        page.click("button[type=submit]")

Every wait is bounded (``timeout``); a browser that dies or hangs fails the call with its log tail.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--remote-debugging-pipe")
TIMEOUT = 30.0
EXECUTABLES = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "apt-get install chromium (as .ci/run does)"


def chromium_executable() -> str:
    """Debian's chromium on PATH; without it the calling test skips, saying how to install it, except in CI (the CI
    environment variable set), where it fails: CI installs it (.ci/run), so a missing browser there is a fault."""
    import pytest

    found = next(filter(None, map(shutil.which, EXECUTABLES)), None)
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"no chromium on PATH, and CI is set: {INSTALL}", pytrace=False)
    pytest.skip(f"no chromium on PATH; install it with: {INSTALL}")


class BrowserError(RuntimeError):
    pass


class Chromium:
    def __init__(self, executable: str, user_data_dir: str | os.PathLike, *, log: str | os.PathLike | None = None) -> None:
        self.log = Path(log) if log else Path(user_data_dir).with_suffix(".log")
        commands_read, commands_write = os.pipe()
        events_read, events_write = os.pipe()

        def on_fds_3_and_4() -> None:  # in the child, before exec: the pipe ends become fds 3 and 4
            high_in = fcntl.fcntl(commands_read, fcntl.F_DUPFD, 10)
            high_out = fcntl.fcntl(events_write, fcntl.F_DUPFD, 10)
            os.dup2(high_in, 3)
            os.dup2(high_out, 4)

        with open(self.log, "ab") as log_file:
            # close_fds=False: only fds 3 and 4 are inheritable (Python opens everything close-on-exec).
            self.process = subprocess.Popen([executable, *FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
                                            stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
                                            close_fds=False, preexec_fn=on_fds_3_and_4)
        os.close(commands_read)
        os.close(events_write)
        self._commands = os.fdopen(commands_write, "wb", buffering=0)
        self._events = os.fdopen(events_read, "rb", buffering=0)
        self._next_id = 0
        self._answers: dict[int, dict] = {}
        self._received: list[dict] = []
        self._closed = False
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # ---- protocol ----
    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = self._events.read(65536)
            if not chunk:
                break
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._changed:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._answers[message["id"]] = message
                    else:
                        self._received.append(message)
                self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _wait(self, ready: Callable[[], Any], what: str, timeout: float) -> Any:
        """``ready()``'s first value that is not None (called under the lock as messages arrive)."""
        found = None

        def done() -> bool:
            nonlocal found
            found = ready()
            return found is not None or self._closed

        with self._changed:
            self._changed.wait_for(done, timeout)
        if found is None:
            state = "exited" if self._closed else f"gave no answer in {timeout:.0f} s"
            raise BrowserError(f"chromium {state} waiting for {what}: {self._log_tail()}")
        return found

    def send(self, method: str, session: str | None = None, timeout: float = TIMEOUT, **params: Any) -> dict:
        """One CDP command; its result (raises BrowserError on a protocol error)."""
        with self._changed:
            self._next_id += 1
            command_id = self._next_id
        message = {"id": command_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self._commands.write(json.dumps(message).encode("utf-8") + b"\0")
        answer = self._wait(lambda: self._answers.pop(command_id, None), method, timeout)
        if "error" in answer:
            raise BrowserError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def mark(self) -> int:
        """A position in the event stream, for :meth:`wait_event`."""
        with self._changed:
            return len(self._received)

    def wait_event(self, method: str, session: str | None, since: int, timeout: float = TIMEOUT) -> dict:
        """The first event ``method`` of ``session`` received after ``since``."""
        def first():
            return next((e for e in self._received[since:]
                         if e["method"] == method and e.get("sessionId") == session), None)
        return self._wait(first, method, timeout)["params"]

    def new_page(self, *, width: int = 1000, height: int = 900) -> "Page":
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, session)
        page.send("Page.enable")
        page.send("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        return page

    # ---- lifetime ----
    def close(self) -> None:
        try:
            if self.process.poll() is None and not self._closed:
                self.send("Browser.close", timeout=5)
        except (BrowserError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self._commands.close()
        self._reader.join(5)
        self._events.close()

    def _log_tail(self, chars: int = 1500) -> str:
        try:
            return self.log.read_text("utf-8", "replace")[-chars:]
        except OSError:
            return "(no log)"

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Page:
    """One tab, attached through a flat CDP session."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser, self.session = browser, session

    def send(self, method: str, **params: Any) -> dict:
        return self.browser.send(method, self.session, **params)

    def navigate(self, url: str, timeout: float = TIMEOUT) -> None:
        """Open ``url`` and wait for its load event."""
        since = self.browser.mark()
        result = self.send("Page.navigate", url=url)
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url}: {result['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session, since, timeout)

    def evaluate(self, expression: str) -> Any:
        """A JavaScript expression's value (JSON-serialisable)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def screenshot(self, path: str | os.PathLike) -> bytes:
        """A PNG of the viewport, saved at ``path`` and returned."""
        data = base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"])
        Path(path).write_bytes(data)
        return data

    def _centre(self, selector: str) -> tuple[float, float]:
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
                            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"no element {selector}")
        return box[0], box[1]

    def click(self, selector: str) -> None:
        """A real left click (mouse pressed and released) at the element's centre."""
        x, y = self._centre(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def type_text(self, selector: str, text: str) -> None:
        """Click into the element, then type ``text`` as keyboard input."""
        self.click(selector)
        self.send("Input.insertText", text=text)

    def wait_for_url(self, prefix: str, timeout: float = TIMEOUT) -> str:
        """Until the page's address starts with ``prefix`` and the document has loaded; the address."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                href = self.evaluate("document.readyState === 'complete' ? location.href : ''")
            except BrowserError:  # the document is being replaced
                href = ""
            if href and href.startswith(prefix):
                return href
            time.sleep(0.05)
        raise BrowserError(f"the page did not reach {prefix} within {timeout:.0f} s")
