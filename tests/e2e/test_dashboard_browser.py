"""The dashboard in a real browser: Debian's chromium, headless, on the site built for the demo
room with a metric curve and a report that tries to run a script.

Skipped with the reason when chromium is missing, unless CONTROL_ROOM_REQUIRE_BROWSER=1 (as
.ci/run sets it): then a missing browser fails.
"""

from __future__ import annotations

import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SPEEDUPS = (1.0, 1.7, 2.6, 3.9)
SCRIPT = "<script>document.title='pwned'</script>"


def _browser() -> str:
    if CHROMIUM is None:
        if os.environ.get("CONTROL_ROOM_REQUIRE_BROWSER") == "1":
            pytest.fail(
                "chromium is not installed and CONTROL_ROOM_REQUIRE_BROWSER=1: `apt-get install chromium`"
            )
        pytest.skip(
            "chromium is not installed (`apt-get install chromium`; "
            "CONTROL_ROOM_REQUIRE_BROWSER=1 makes this a failure)"
        )
    return CHROMIUM


def _task(tid: str, validator: list[str], command: list[str]) -> dict[str, object]:
    return {
        "id": tid, "objective": f"objective of {tid}", "falsifier": "no gain", "validator": validator,
        "max_cost_usd": 0.0, "wall_clock_s": 60, "kill_condition": "none", "adapter": "probe",
        "command": command,
    }  # fmt: skip


def build_site(exe: str, where: Path) -> tuple[Path, Path]:
    """The demo room, four runs printing `METRIC speedup=...`, one whose output (so its report)
    holds a script; and its site. Returns (room, site)."""
    room = where / "demo"
    subprocess.run([exe, "demo", str(room)], check=True, capture_output=True)
    py = sys.executable
    for i, v in enumerate(SPEEDUPS, 1):
        t = _task(f"speed-{i}", [py, "-c", f"print('METRIC speedup={v}')"], [py, "-c", "print('tuned')"])
        (room / "swarm" / "queue" / f"speed-{i}.json").write_text(json.dumps(t))
    t = _task("xss", [py, "-c", "pass"], [py, "-c", f"print({SCRIPT!r})"])
    (room / "swarm" / "queue" / "xss.json").write_text(json.dumps(t))
    for _ in range(len(SPEEDUPS) + 1):
        r = subprocess.run([exe, "--room", str(room), "cycle"], capture_output=True, text=True)
        assert r.returncode == 10, r.stdout + r.stderr
    site = where / "site"
    subprocess.run(
        [exe, "--room", str(room), "dashboard", "--out", str(site)], check=True, capture_output=True
    )
    return room, site


def dom(browser: str, page: Path, profile: Path) -> str:
    r = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def test_the_site_in_chromium(exe: str, tmp_path: Path) -> None:
    browser = _browser()
    room, site = build_site(exe, tmp_path)
    profile = tmp_path / "profile"

    index = dom(browser, site / "index.html", profile)
    assert "<title>Overview - control-room</title>" in index
    assert index.count('<svg class="chart') >= 5
    for cls in ("spend", "outcomes", "depth", "pressure", "metric-curve"):
        assert f'<svg class="chart {cls}"' in index, cls
    m = re.search(r'<polyline class="line" data-metric="speedup" points="([^"]+)"', index)
    assert m is not None and len(m.group(1).split()) == len(SPEEDUPS)
    ys = [float(p.split(",")[1]) for p in m.group(1).split()]
    assert ys == sorted(ys, reverse=True)  # the curve goes up (SVG's y grows downwards)

    routes = dom(browser, site / "routes.html", profile)
    for route in ("sieve", "cache-results", "rewrite-in-c"):
        assert f"<td>{route}</td>" in routes
    assert '<table class="tombstones">' in routes

    ledger = dom(browser, site / "ledger.html", profile)
    lines = sum(
        1 for ln in (room / "control-room" / "LEDGER.md").read_text().splitlines() if ln.startswith("| 20")
    )
    assert ledger.count("<tr><td>20") == lines
    assert "<td>result</td><td>xss</td>" in ledger

    xss = dom(browser, site / "run-xss.html", profile)
    assert "<title>Run xss - control-room</title>" in xss  # the script did not set it
    assert html.escape(SCRIPT, quote=False) in xss  # shown as text
    assert "<script>document.title" not in xss


def test_a_page_loads_nothing_from_elsewhere_and_its_own_style_and_script_still_load(
    exe: str, tmp_path: Path
) -> None:
    """A report's markdown image naming another site (here a server of the test's, counting what
    it is asked) is never fetched: the page's Content-Security-Policy allows only its own files;
    its stylesheet and the ledger's filter script are not refused."""
    browser = _browser()
    asked: list[str] = []

    class Counter(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's name
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:  # http.server's names
            pass

    remote = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    threading.Thread(target=remote.serve_forever, daemon=True).start()
    try:
        room = tmp_path / "demo"
        subprocess.run([exe, "demo", str(room)], check=True, capture_output=True)
        results = room / "swarm" / "results" / "img"
        results.mkdir(parents=True)
        url = f"http://127.0.0.1:{remote.server_address[1]}/pixel.png"
        (results / "report.md").write_text(f"DECISION: look\n\n![tracker]({url})\n")
        (results / "meta.json").write_text("{}")
        site = tmp_path / "site"
        subprocess.run([exe, "--room", str(room), "dashboard", "--out", str(site)], check=True,
                       capture_output=True)  # fmt: skip
        said = {}
        for name in ("run-img.html", "ledger.html", "index.html"):
            r = subprocess.run(
                [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'p'}",
                 "--enable-logging=stderr", "--v=0", "--dump-dom", (site / name).as_uri()],
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert r.returncode == 0, r.stderr[-2000:]
            said[name] = [ln for ln in r.stderr.splitlines() if "Content Security Policy" in ln]
            if name == "run-img.html":
                assert f'<img src="{url}" alt="tracker">' in r.stdout  # in the page, never loaded
    finally:
        remote.shutdown()
        remote.server_close()
    assert asked == []
    (refused,) = said["run-img.html"]
    assert f"Loading the image '{url}' violates" in refused
    assert said["ledger.html"] == said["index.html"] == []


def test_a_missing_browser_is_a_skip_or_with_the_flag_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", None)
    monkeypatch.delenv("CONTROL_ROOM_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"):
        _browser()
    monkeypatch.setenv("CONTROL_ROOM_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="CONTROL_ROOM_REQUIRE_BROWSER=1"):
        _browser()
