"""`control-room dashboard`: the site on real files, and `--serve` on 127.0.0.1, writing nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from support import error, queue, snapshot

from control_room.room.layout import Room
from control_room.views.dashboard import site


def _metric_room(run: Callable[..., Result], room: Room) -> None:
    py = sys.executable
    for i, v in enumerate((1.0, 2.5, 4.0), 1):
        queue(room, f"speed-{i}", validator=[py, "-c", f"print('METRIC speedup={v}')"])
    for i in range(1, 4):
        assert run("cycle").exit_code == 10, f"cycle {i}"


def test_dashboard_writes_only_its_folder(run: Callable[..., Result], inside: Room) -> None:
    _metric_room(run, inside)
    before = {p: b for p, b in snapshot(inside.root).items()}
    r = run("dashboard")
    out = inside.cr / ".dashboard"
    assert (r.exit_code, r.stderr) == (0, "")
    assert (
        r.stdout == f"{out / 'index.html'}: 11 files written (7 ledger lines on 1 page, 3 tasks with runs)\n"
    )
    after = snapshot(inside.root)
    assert {p: b for p, b in after.items() if out not in p.parents} == before
    assert sorted(p.name for p in out.iterdir()) == [
        ".control-room-dashboard", ".state", "findings.html", "index.html", "ledger-1.html", "ledger.html",
        "routes.html", "run-speed-1.html", "run-speed-2.html", "run-speed-3.html", "runs.html",
        "scorecard.html", "style.css",
    ]  # fmt: skip
    index = (out / "index.html").read_text()
    m = re.search(r'<polyline class="line" data-metric="speedup" points="([^"]+)"/>', index)
    assert m is not None and m.group(1) == "56.0,133.0 304.0,74.5 552.0,16.0"
    assert "0 of 1" in index  # slots in use of max_parallel
    ledger = (out / "ledger.html").read_text()
    assert ledger.count("<tr><td>") == 7 and "<td>result</td><td>speed-3</td>" in ledger
    # again: the same pages, read from the state it kept
    r = run("dashboard")
    assert r.exit_code == 0 and (out / "index.html").read_text() == index


def test_dashboard_out_elsewhere_and_refusals(
    run: Callable[..., Result], inside: Room, tmp_path: Path
) -> None:
    before = snapshot(inside.root)
    r = run("dashboard", "--out", str(tmp_path / "site"))
    assert r.exit_code == 0 and r.stdout == (
        f"{tmp_path / 'site' / 'index.html'}: 8 files written (1 ledger line on 1 page, 0 tasks with runs)\n"
    )
    assert snapshot(inside.root) == before
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    error(
        run("dashboard", "--out", str(tmp_path / "full")),
        4,
        f"{tmp_path / 'full'}: not empty and not a dashboard this command made (no .control-room-dashboard); "
        "name a new or empty folder",
    )
    r = run("dashboard", "--serve", "--out", str(tmp_path / "site"))
    assert r.exit_code == 2 and "--out and --serve do not go together" in r.stderr


def test_serve_binds_loopback_and_writes_nothing(run: Callable[..., Result], inside: Room) -> None:
    _metric_room(run, inside)
    (inside.swarm / "results" / "speed-1" / "report.md").write_text(
        "<script>document.title='pwned'</script>\n"
    )
    before = snapshot(inside.root)
    httpd = site.server(inside, 0)
    host, port = httpd.server_address[:2]
    assert host == "127.0.0.1"
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:

        def get(name: str) -> tuple[int, str]:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/{name}", timeout=10) as resp:
                    return resp.status, resp.read().decode()
            except urllib.error.HTTPError as exc:
                return exc.code, exc.read().decode()

        code, index = get("")
        assert code == 200 and 'data-metric="speedup"' in index
        code, page = get("run-speed-1.html")
        assert code == 200 and "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in page
        assert "<script>document" not in page
        assert get("ledger-1.html")[0] == 200 and get("ledger.html")[1] == get("ledger-1.html")[1]
        assert get("nope.html") == (404, "no page nope.html\n")
        assert get("../LEDGER.md")[0] == 404
        assert snapshot(inside.root) == before
        queue(inside, "speed-4")  # regenerated on each request: a new task shows at once
        assert run("cycle").exit_code == 10
        before = snapshot(inside.root)
        assert "<td>result</td><td>speed-4</td>" in get("ledger.html")[1]
        assert "speed-4" in get("runs.html")[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert snapshot(inside.root) == before


def test_serve_command_prints_where_and_stops(exe: str, inside: Room) -> None:
    proc = subprocess.Popen(
        [exe, "dashboard", "--serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.fullmatch(
            rf"serving {re.escape(str(inside.root))} on http://127\.0\.0\.1:(\d+)/ "
            r"\(read-only; Ctrl-C to stop\)\n",
            line,
        )
        assert m is not None, line
        with urllib.request.urlopen(f"http://127.0.0.1:{m.group(1)}/routes.html", timeout=10) as resp:
            assert resp.status == 200 and "rewrite" not in json.dumps(dict(resp.headers))
    finally:
        proc.terminate()
        proc.wait(timeout=10)
