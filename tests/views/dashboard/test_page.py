"""control_room.views.dashboard.page: escaping, links, markdown without HTML, shell, tables."""

from __future__ import annotations

import base64
import hashlib

from control_room.views.dashboard import page


def test_markdown_and_text_are_escaped() -> None:
    html = page.md("# hi\n\n<script>document.title='pwned'</script>\n\n[x](javascript:alert(1))")
    assert "<script>" not in html
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in html
    assert 'href="javascript' not in html
    assert page.esc("<b>&") == "&lt;b&gt;&amp;"


def test_esc_shows_none_as_nothing_and_quotes_quotes() -> None:
    assert page.esc(None) == ""
    assert page.esc(3) == "3"
    assert page.esc(0) == "0"
    assert page.esc('"it\'s"') == "&quot;it&#x27;s&quot;"


def test_href_quotes_a_file_name() -> None:
    assert page.href("run-x1.html") == "run-x1.html"
    assert page.href("run-a b#c?.html") == "run-a%20b%23c%3F.html"


def test_md_renders_commonmark_in_its_block() -> None:
    assert page.md("*hi* and `x < y`") == (
        '<div class="md"><p><em>hi</em> and <code>x &lt; y</code></p>\n</div>'
    )
    assert page.md("[ok](https://example.org/a)") == (
        '<div class="md"><p><a href="https://example.org/a">ok</a></p>\n</div>'
    )


def test_shell_is_the_whole_page_with_this_page_marked() -> None:
    html = page.shell("A <b>", "routes.html", "/rooms/a&b", "<p>BODY</p>")
    assert html == (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{page.CSP}">'
        "<title>A &lt;b&gt; - control-room</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="style.css"></head>'
        "<body><header><strong>control-room</strong>"
        '<a href="index.html">Overview</a>'
        '<a href="routes.html" class=here>Routes</a>'
        '<a href="ledger.html">Ledger</a>'
        '<a href="runs.html">Runs</a>'
        '<a href="findings.html">Findings</a>'
        '<a href="scorecard.html">Scorecard</a>'
        '<span class="room">/rooms/a&amp;b</span></header>'
        "<main><h1>A &lt;b&gt;</h1>\n<p>BODY</p>\n</main></body></html>\n"
    )


def test_shell_puts_a_script_after_main() -> None:
    html = page.shell("Ledger", "ledger.html", "/r", "x", page.FILTER_JS)
    assert html.endswith("\n</main>" + page.FILTER_JS + "</body></html>\n")
    assert '<a href="ledger.html" class=here>Ledger</a>' in html
    assert html.count("class=here") == 1


def test_a_page_not_in_the_nav_marks_none() -> None:
    assert "class=here" not in page.shell("Run x", "run-x.html", "/r", "")


def test_table_takes_cells_as_html_and_escapes_its_head() -> None:
    assert page.table(["a", "<b>"], [["<i>1</i>", "2"], ["3", "4"]], "k") == (
        '<table class="k"><thead><tr><th>a</th><th>&lt;b&gt;</th></tr></thead>'
        "<tbody><tr><td><i>1</i></td><td>2</td></tr><tr><td>3</td><td>4</td></tr></tbody></table>"
    )
    assert page.table(["a"], [["1"]]) == (
        "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
    )


def test_an_empty_table_says_none() -> None:
    assert page.table(["a", "b"], [], "k") == '<p class="empty">none</p>'


def test_figure_escapes_its_caption_not_its_chart() -> None:
    assert page.figure("c < d", "<svg></svg>") == (
        "<figure><figcaption>c &lt; d</figcaption><svg></svg></figure>"
    )


def test_the_policy_allows_the_ledgers_filter_script_by_its_hash_and_nothing_else() -> None:
    body = page.FILTER_JS.strip()[len("<script>") : -len("</script>")]
    digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
    want = (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )
    assert want == page.CSP
