"""Debian's chromium, headless, driven by chromium-driver: for tests of what a real browser sends."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless chromium (a selenium WebDriver); the test is skipped where none is installed."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the test extras")
    if not (CHROMIUM and DRIVER):
        pytest.skip("chromium and chromium-driver are not installed (make system-deps installs them, as root)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()


class _Recording(SimpleHTTPRequestHandler):
    """Serves files, and notes the ``Cookie`` header of every request (what the browser gave this site)."""

    cookies: list[str]

    def do_GET(self) -> None:
        self.cookies.append(self.headers.get("Cookie", ""))
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def other_site(folder: Path) -> Iterator[tuple[int, list[str]]]:
    """Another web server on this machine (a page on another loopback port) serving ``folder``: its port,
    and the cookies browsers sent it."""
    seen: list[str] = []
    handler = type("Handler", (_Recording,), {"cookies": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(handler, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
