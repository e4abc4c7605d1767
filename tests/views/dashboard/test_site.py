"""control_room.views.dashboard.site: pages by name, a build writing only what grew, the server."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import HTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
from support import snapshot

from control_room import ledger
from control_room.errors import InvalidError
from control_room.ledger import events
from control_room.room.layout import Room
from control_room.store import cache
from control_room.views.dashboard import fold, ledger_pages, page, site

PAGES = ["findings.html", "index.html", "routes.html", "runs.html", "scorecard.html", "style.css"]


def _run(room: Room, task: str) -> None:
    folder = room.swarm / "results" / task
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(f"DECISION: {task}\n")


def test_render_knows_its_pages(room: Room) -> None:
    with cache.held({}):
        st = fold.state(room)
        assert site.render(room, "nope.html", st) is None
        assert site.render(room, "ledger-2.html", st) is None
        assert site.render(room, "run-..%2f.html", st) is None
        assert site.render(room, "style.css", st) == page.CSS
        for name in (
            "index.html",
            "routes.html",
            "findings.html",
            "scorecard.html",
            "runs.html",
            "ledger.html",
        ):
            text = site.render(room, name, st)
            assert text is not None and text.startswith("<!DOCTYPE html>")


def test_out_must_be_new_empty_or_made_by_the_dashboard(room: Room, tmp_path: Path) -> None:
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(InvalidError) as caught:
        site.build(room, other)
    assert str(caught.value) == (
        f"{other}: not empty and not a dashboard this command made (no .control-room-dashboard); "
        "name a new or empty folder"
    )
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]


def test_out_that_is_a_file_is_refused(room: Room, tmp_path: Path) -> None:
    (tmp_path / "site").write_text("a file")
    with pytest.raises(InvalidError) as caught:
        site.build(room, tmp_path / "site")
    assert str(caught.value) == f"{tmp_path / 'site'}: not a folder; --out needs a folder for the site"
    assert (tmp_path / "site").read_text() == "a file"


def test_the_default_folder_is_in_control_room(room: Room) -> None:
    assert site.default_out(room) == room.cr / ".dashboard"


def test_render_titles_each_page_and_marks_it_in_the_nav(room: Room) -> None:
    _run(room, "t1")
    with cache.held({}):
        st = fold.state(room)
        for name, title, here in (
            ("index.html", "Overview", "index.html"),
            ("routes.html", "Routes", "routes.html"),
            ("findings.html", "Findings", "findings.html"),
            ("scorecard.html", "Scorecard", "scorecard.html"),
            ("runs.html", "Runs", "runs.html"),
            ("run-t1.html", "Run t1", "runs.html"),
        ):
            text = site.render(room, name, st)
            assert text is not None
            assert f"<title>{title} - control-room</title>" in text, name
            assert f'<a href="{here}" class=here>' in text, name
            assert f'<span class="room">{room.root}</span>' in text
        assert site.render(room, "ledger.html", st) == ledger_pages.one(room, st, 1)
        assert site.render(room, "ledger-1.html", st) == ledger_pages.one(room, st, 1)
        assert site.render(room, "ledger-0.html", st) is None
        assert site.render(room, "run-t2.html", st) is None  # no results folder
        assert site.render(room, "run-.html", st) is None
        assert "DECISION: t1" in (site.render(room, "run-t1.html", st) or "")


def test_a_run_page_shows_the_tasks_review_lines(room: Room) -> None:
    _run(room, "t1")
    ledger.append(room.ledger, events.REVIEW, task="t1", adapter="probe", outcome="reject", detail="too slow")
    ledger.append(room.ledger, events.REVIEW, task="t2", adapter="probe", outcome="accept", detail="other")
    with cache.held({}):
        text = site.render(room, "run-t1.html", fold.state(room)) or ""
    assert '<td>review</td><td>reject</td><td>probe</td><td><span class="detail">too slow</span></td>' in text
    assert "other" not in text


def test_a_build_writes_every_page_and_nothing_in_the_room(room: Room, tmp_path: Path) -> None:
    _run(room, "t1")
    _run(room, "t2")
    before = snapshot(room.root)
    out = tmp_path / "deep" / "site"
    assert site.build(room, out) == {"files": 10, "ledger_pages": 1, "runs": 2, "ledger_lines": 1}
    assert snapshot(room.root) == before
    assert not room.cache.exists() or not any(room.cache.iterdir())
    made = [".control-room-dashboard", ".state", "ledger-1.html", "ledger.html", "run-t1.html", "run-t2.html"]
    assert sorted(p.name for p in out.iterdir()) == sorted([*made, *PAGES])
    marker = (out / ".control-room-dashboard").read_text()
    assert marker == "made by `control-room dashboard`; rewritten by it\n"
    assert (out / "style.css").read_text() == page.CSS
    with cache.held({}):
        st = fold.state(room)
        for name in ("index.html", "runs.html", "run-t1.html", "ledger.html", "ledger-1.html"):
            assert (out / name).read_text() == site.render(room, name, st), name


def test_the_next_build_rewrites_only_the_ledger_pages_that_grew(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    out = tmp_path / "site"
    for k in range(4):
        ledger.append(room.ledger, events.WARNING, detail=f"line {k}")
    assert site.build(room, out) == {"files": 10, "ledger_pages": 3, "runs": 0, "ledger_lines": 5}
    full = (out / "ledger-2.html").stat().st_mtime_ns
    (out / "ledger-1.html").write_text("kept as it is")  # a full page is never written again
    ledger.append(room.ledger, events.WARNING, detail="line 4")
    # the six pages, then ledger-3.html (now full), ledger-4.html (the newest) and ledger.html
    assert site.build(room, out) == {"files": 9, "ledger_pages": 4, "runs": 0, "ledger_lines": 6}
    assert (out / "ledger-1.html").read_text() == "kept as it is"
    assert (out / "ledger-2.html").stat().st_mtime_ns == full
    assert "line 4" in (out / "ledger-3.html").read_text()
    assert "no lines yet" in (out / "ledger.html").read_text()
    kept = cache.load(out / ".state")
    assert sorted(kept) == ["memory", "pages"] and kept["pages"]["page"] == 4
    assert str(room.cache / "dashboard") in kept["memory"]


def test_a_build_without_its_state_writes_every_page_again(
    room: Room, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ledger_pages, "PER_PAGE", 2)
    out = tmp_path / "site"
    for k in range(4):
        ledger.append(room.ledger, events.WARNING, detail=f"line {k}")
    site.build(room, out)
    first = {p.name: p.read_text() for p in out.glob("*.html")}
    (out / ".state").write_bytes(b"not a cache")
    (out / "ledger-1.html").write_text("stale")
    assert site.build(room, out)["files"] == 10
    assert {p.name: p.read_text() for p in out.glob("*.html")} == first


@pytest.fixture
def served(room: Room) -> Iterator[tuple[HTTPServer, list[str]]]:
    said: list[str] = []
    httpd = site.server(room, 0, said.append)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    t.start()
    try:
        yield httpd, said
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join()


def _get(httpd: HTTPServer, path: str) -> tuple[int, str, str, str]:
    """(status, content type, cache control, body) of GET ``path``."""
    url = f"http://127.0.0.1:{httpd.server_address[1]}{path}"
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            body, status, headers = resp.read().decode(), resp.status, resp.headers
    except urllib.error.HTTPError as exc:
        body, status, headers = exc.read().decode(), exc.code, exc.headers
    return status, headers["Content-Type"], headers["Cache-Control"], body


def test_the_server_listens_on_loopback_only(served: tuple[HTTPServer, list[str]]) -> None:
    httpd, _ = served
    assert httpd.server_address[0] == site.HOST == "127.0.0.1"


def test_the_server_renders_each_page_when_asked_and_writes_nothing(
    room: Room, served: tuple[HTTPServer, list[str]]
) -> None:
    httpd, said = served
    before = snapshot(room.root)
    status, kind, caching, body = _get(httpd, "/")
    assert (status, kind, caching) == (200, "text/html; charset=utf-8", "no-store")
    assert "<title>Overview - control-room</title>" in body
    assert _get(httpd, "/style.css") == (200, "text/css; charset=utf-8", "no-store", page.CSS)
    assert "<title>Ledger, page 1 - control-room</title>" in _get(httpd, "/ledger.html?x=1")[3]
    _run(room, "t 1")  # not a safe name: no page
    _run(room, "t1")  # a new run shows at once
    before = snapshot(room.root)
    assert "run-t1.html" in _get(httpd, "/runs.html")[3]
    assert _get(httpd, "/run-t1.html")[0] == 200
    assert _get(httpd, "/run-t%201.html")[0] == 404
    assert snapshot(room.root) == before
    assert len(said) == 6 and all(line.startswith("127.0.0.1 ") for line in said)
    assert '"GET /style.css HTTP/1.1" 200' in said[1]


@pytest.mark.parametrize("path", ["/nope.html", "/../LEDGER.md", "/swarm/queue/x.json", "/%2e%2e/CONTROL.md"])
def test_the_server_answers_404_for_anything_else(served: tuple[HTTPServer, list[str]], path: str) -> None:
    httpd, said = served
    status, kind, caching, body = _get(httpd, path)
    assert (status, kind, caching) == (404, "text/plain; charset=utf-8", "no-store")
    assert body == f"no page {unquote(path)[1:]}\n"
    assert " 404 " in said[-1]


def test_a_404_is_plain_text_so_the_name_asked_for_is_never_markup(
    served: tuple[HTTPServer, list[str]],
) -> None:
    httpd, _ = served  # a link from any web page could ask for this name
    status, kind, _, body = _get(httpd, "/%3Cimg%20src=x%20onerror=alert(1)%3E.html")
    assert (status, kind) == (404, "text/plain; charset=utf-8")
    assert body == "no page <img src=x onerror=alert(1)>.html\n"


def test_only_the_loopback_names_are_a_local_host() -> None:
    for host in (
        "127.0.0.1",
        "127.0.0.1:8750",
        "localhost",
        "LocalHost:1",
        "[::1]",
        "[::1]:8750",
        " localhost ",
    ):
        assert site.local_host(host), host
    for host in (None, "", "evil.example", "evil.example:8750", "localhost.evil.example", "127.0.0.1.nip.io",
                 "127.0.0.1:8750@evil", "localhost:", "localhost:http", "127.0.0.2", "[::2]"):  # fmt: skip
        assert not site.local_host(host), host


def test_a_connection_is_timed_out_and_its_thread_never_holds_the_exit(room: Room) -> None:
    httpd = site.server(room, 0)
    try:
        assert httpd.daemon_threads is True
        assert httpd.RequestHandlerClass.timeout == site.TIMEOUT_S == 10.0
    finally:
        httpd.server_close()


def test_every_page_says_it_loads_nothing_from_elsewhere(room: Room) -> None:
    for name in ("index.html", "ledger.html", "routes.html"):
        text = site.render(room, name, fold.state(room))
        assert text is not None
        assert (
            f'<head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="{page.CSP}">'
            in text
        )
    assert page.CSP.startswith(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'sha256-"
    )
