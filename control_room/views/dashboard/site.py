"""The whole site: every page into a folder (``build``), or one page per request (``serve``).

Both work inside ``store.cache.held``: the derived caches they bring up to date (the
dashboard's fold, the history, the scorecard, the status summary) are kept in memory, never
written to ``control-room/.cache/``. ``build`` keeps that memory in its own folder
(``<out>/.state``), with where the ledger's last full page ended, so the next build reads
only the ledger lines appended since and rewrites only the pages that grew; ``serve``
keeps it for as long as it runs and writes nothing at all.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from control_room import redact
from control_room.errors import InvalidError
from control_room.room.layout import Room
from control_room.store import cache
from control_room.store.files import atomic_write
from control_room.text import escaped
from control_room.views.dashboard import fold, ledger_pages, pages, runs
from control_room.views.dashboard.page import CSS, shell

MARKER = ".control-room-dashboard"  # in a folder this command made: it may write there again
HOST = "127.0.0.1"
_LEDGER_PAGE = re.compile(r"ledger-([0-9]{1,9})\.html")
_RUN_PAGE = re.compile(r"run-(.+)\.html")


def default_out(room: Room) -> Path:
    return room.cr / ".dashboard"


def _titled(room: Room, title: str, here: str, body: str) -> str:
    return shell(title, here, str(room.root), body)


def render(room: Room, name: str, st: dict[str, Any]) -> str | None:
    """The page called ``name`` (``index.html``, ``run-<id>.html``, ...), or None if there is none;
    a secret of our environment in it is redacted (``redact``: a running task's output is not yet)."""
    page = _render(room, name, st)
    return redact.scrub(page) if page is not None else None


def _render(room: Room, name: str, st: dict[str, Any]) -> str | None:
    if name == "style.css":
        return CSS
    if name == "index.html":
        return _titled(room, "Overview", name, pages.overview(room, st))
    if name == "routes.html":
        return _titled(room, "Routes", name, pages.routes_page(room))
    if name == "findings.html":
        return _titled(room, "Findings", name, pages.findings_page(room))
    if name == "scorecard.html":
        return _titled(room, "Scorecard", name, pages.scorecard_page(room))
    if name == "runs.html":
        return _titled(room, "Runs", name, runs.index(room))
    if name == "ledger.html":
        return ledger_pages.one(room, st, ledger_pages.pages(st["lines"]))
    m = _LEDGER_PAGE.fullmatch(name)
    if m and 1 <= int(m.group(1)) <= ledger_pages.pages(st["lines"]):
        return ledger_pages.one(room, st, int(m.group(1)))
    m = _RUN_PAGE.fullmatch(name)
    if m and m.group(1) in runs.tasks(room):
        task = m.group(1)
        return _titled(room, f"Run {task}", "runs.html", runs.page(room, task, st["reviews"].get(task, [])))
    return None


def _prepare(room: Room, out: Path) -> None:
    """``out`` is new, empty, or a folder this command made before (never anything else)."""
    if out.exists():
        if not out.is_dir():
            raise InvalidError(f"{out}: not a folder; --out needs a folder for the site")
        if any(out.iterdir()) and not (out / MARKER).exists():
            raise InvalidError(
                f"{out}: not empty and not a dashboard this command made (no {MARKER}); "
                "name a new or empty folder"
            )
    out.mkdir(parents=True, exist_ok=True)
    if not (out / MARKER).exists():
        atomic_write(out / MARKER, "made by `control-room dashboard`; rewritten by it\n", durable=False)


def build(room: Room, out: Path) -> dict[str, int]:
    """Write every page into ``out``; return what was written (pages, ledger pages, runs)."""
    _prepare(room, out)
    state_file = out / ".state"
    kept = cache.load(state_file)
    kept = kept if isinstance(kept, dict) else {}
    held = kept.get("memory")
    memory: dict[str, bytes] = held if isinstance(held, dict) else {}
    written = [0]

    def sink(name: str, text: str) -> None:
        atomic_write(out / name, text, durable=False)
        written[0] += 1

    with cache.held(memory):
        st = fold.state(room)
        for name in (
            "style.css",
            "index.html",
            "routes.html",
            "findings.html",
            "scorecard.html",
            "runs.html",
        ):
            text = render(room, name, st)
            assert text is not None
            sink(name, text)
        task_ids = runs.tasks(room)
        for task in task_ids:
            sink(
                f"run-{task}.html",
                _titled(room, f"Run {task}", "runs.html", runs.page(room, task, st["reviews"].get(task, []))),
            )
        n, resume = ledger_pages.write(room, st, sink, kept.get("pages"))
    cache.save(state_file, {"memory": memory, "pages": resume})
    return {"files": written[0], "ledger_pages": n, "runs": len(task_ids), "ledger_lines": st["lines"]}


# A Host header a page of ours is asked with: the loopback names, with a port or without. Any
# other name is a page of another site whose name was made to point here (DNS rebinding).
_LOCAL_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::[0-9]{1,5})?", re.IGNORECASE)
TIMEOUT_S = 10.0  # a connection that sends nothing for this long is closed (it holds a thread)
_GONE = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


def local_host(host: str | None) -> bool:
    """Whether a request's Host header names this machine's loopback (and nothing else)."""
    return host is not None and _LOCAL_HOST.fullmatch(host.strip()) is not None


def handler(room: Room, memory: dict[str, bytes], log: Callable[[str], None]) -> type[BaseHTTPRequestHandler]:
    rendering = threading.Lock()  # the caches held in ``memory`` are one module's: one page at a time

    class Handler(BaseHTTPRequestHandler):
        timeout = TIMEOUT_S  # per connection: an idle client is let go, and holds only its own thread

        def do_GET(self) -> None:  # http.server's name
            if not local_host(self.headers.get("Host")):
                self._answer(403, "text/plain", "forbidden: ask for this page as 127.0.0.1 or localhost\n")
                return
            name = unquote(urlsplit(self.path).path).lstrip("/") or "index.html"
            with rendering, cache.held(memory):
                text = render(room, name, fold.state(room)) if "/" not in name else None
            # a 404 is plain text: the name in it is whatever a link asked for, never markup
            kind = "text/plain" if text is None else "text/css" if name.endswith(".css") else "text/html"
            self._answer(
                200 if text is not None else 404, kind, text if text is not None else f"no page {name}\n"
            )

        def _answer(self, status: int, kind: str, text: str) -> None:
            body = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # http.server's names
            # the request line is whatever the client sent: every control character written out
            log(f"{self.address_string()} {escaped(format % args)}")

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a connection still open never holds the command's exit

    def handle_error(self, request: Any, client_address: Any) -> None:  # socketserver's names
        """A client that went away mid-answer (closed, reset, timed out) is no error of ours."""
        if isinstance(sys.exc_info()[1], _GONE):
            return
        super().handle_error(request, client_address)


def server(room: Room, port: int, log: Callable[[str], None] = lambda _: None) -> ThreadingHTTPServer:
    """A server on 127.0.0.1 (never another address) that renders each page when asked: each
    connection in its own thread (an idle one blocks no other), with a time-out; only requests
    naming the loopback in their Host header are answered (others: 403)."""
    return _Server((HOST, port), handler(room, {}, log))
