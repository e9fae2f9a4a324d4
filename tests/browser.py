"""Serve a built book on 127.0.0.1 and drive Debian's Chromium with Playwright (no download)."""
from __future__ import annotations

import contextlib
import functools
import http.server
import threading
from pathlib import Path
from urllib.parse import urlparse

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(directory: Path):
    """An HTTP server on 127.0.0.1 (free port) for ``directory``, stopped on exit."""
    handler = functools.partial(_Quiet, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def book_pages(html: Path) -> list[Path]:
    """The pages of a built book a reader scrolls through: every page of book/generated (the
    chapters and the appendix), the intro and the method."""
    return sorted((html / "book" / "generated").glob("*.html")) + [html / "book" / "intro.html",
                                                                   html / "book" / "method.html"]


def page_heights(page, base: str, html: Path, pages: list[Path]) -> dict[str, int]:
    """Each page's height in px (``document.documentElement.scrollHeight``) once it has loaded
    (its widgets drawn), by its path under ``html``."""
    out = {}
    for p in pages:
        rel = p.relative_to(html).as_posix()
        page.goto(f"{base}/{rel}", wait_until="networkidle")
        settle(page)
        out[rel] = page.evaluate("document.documentElement.scrollHeight")
    return out


# a page is laid out once the document has loaded, its images are decoded, its fonts are in, and
# every embedded widget view has been drawn into the subarea the widget manager puts before it
_SETTLED = """() => document.readyState === "complete"
  && [...document.images].every(i => i.complete)
  && document.fonts.status === "loaded"
  && [...document.querySelectorAll('script[type="application/vnd.jupyter.widget-view+json"]')]
       .every(s => s.previousElementSibling
                   && s.previousElementSibling.classList.contains("widget-subarea")
                   && s.previousElementSibling.childElementCount > 0)"""


def settle(page, timeout_ms: int = 30_000) -> None:
    """Wait (on the page's own state, not a fixed time) until ``page`` is laid out as a reader
    sees it: a height read before that is the viewport's, not the page's."""
    page.wait_for_function(_SETTLED, timeout=timeout_ms)


@contextlib.contextmanager
def page_session(width: int = 1300):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": 1000})
        finally:
            browser.close()


class RequestLog:
    """Every request a page makes: which went outside 127.0.0.1, and which failed."""

    def __init__(self, page, base: str):
        self.base_host = urlparse(base).hostname
        self.external: list[str] = []
        self.failed: list[str] = []
        page.on("request", self._on_request)
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url} ({r.failure})"))
        page.on("response", lambda r: r.status >= 400 and self.failed.append(f"{r.url} (HTTP {r.status})"))

    def _on_request(self, req):
        u = urlparse(req.url)
        if u.scheme in ("data", "blob", "about"):
            return
        if u.hostname != self.base_host:
            self.external.append(req.url)
