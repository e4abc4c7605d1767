"""The page shell, one small stylesheet, escaping and markdown.

All text from the room goes through ``esc`` (``html.escape``) or ``md`` (markdown-it-py with raw
HTML off: a ``<script>`` in a report is shown as text, never run; links with a ``javascript:``
scheme are refused by markdown-it's own link check).
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from typing import Any
from urllib.parse import quote

NAV = (
    ("index.html", "Overview"),
    ("routes.html", "Routes"),
    ("ledger.html", "Ledger"),
    ("runs.html", "Runs"),
    ("findings.html", "Findings"),
    ("scorecard.html", "Scorecard"),
)

CSS = """body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#1d232a;color:#fff;padding:8px 16px;display:flex;gap:16px;align-items:baseline}
header a{color:#cfd8e3;text-decoration:none}header a.here{color:#fff;font-weight:600}
header .room{margin-left:auto;color:#8a96a3;font-size:12px}
main{padding:12px 16px;max-width:1400px}h1{font-size:20px;margin:4px 0 12px}
h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;background:#fff;margin:4px 0 12px}
td,th{border:1px solid #dde2e8;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eef1f4}td.num{text-align:right}.detail{max-width:640px;overflow-wrap:anywhere}
.stop{background:#b3261e;color:#fff;padding:8px;font-weight:600}.ok{color:#1b7a3a}.bad{color:#b3261e}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{background:#fff;border:1px solid #dde2e8;padding:8px 12px}
.card b{display:block;font-size:20px}.charts{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0;background:#fff;border:1px solid #dde2e8;padding:6px}figcaption{font-weight:600}
svg.chart{display:block}svg .axis{stroke:#8a96a3}svg text{font-size:11px;fill:#4a5561}
svg rect.value,svg rect.spend{fill:#3b6fb6}svg rect.pass{fill:#2e9d55}svg rect.fail{fill:#d0453a}
svg rect.pressure{fill:#8a5cc2}svg .line{fill:none;stroke:#3b6fb6;stroke-width:2}svg circle{fill:#3b6fb6}
pre{background:#fff;border:1px solid #dde2e8;padding:8px;overflow:auto;max-height:480px;white-space:pre-wrap}
.md{background:#fff;border:1px solid #dde2e8;padding:4px 12px}.empty{color:#6b7784}
nav.pages{margin:8px 0}nav.pages a{margin-right:10px}.filters input,.filters select{margin-right:8px}
"""

FILTER_JS = """<script>
(function(){var f=document.querySelectorAll('.filters select');
function apply(){var want=[];f.forEach(function(s){want.push([+s.dataset.col,s.value]);});
document.querySelectorAll('table.ledger tbody tr').forEach(function(tr){var ok=true;
want.forEach(function(w){if(w[1]&&tr.cells[w[0]].textContent!==w[1])ok=false;});
tr.hidden=!ok;});}
f.forEach(function(s){s.addEventListener('change',apply);});})();
</script>"""


def _script_hash(tag: str) -> str:
    """The CSP source that allows exactly this inline ``<script>...</script>`` and no other."""
    body = tag[len("<script>") : -len("</script>")]
    return "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"


# What a page may load: its stylesheet, images of its own (none today) and data: URIs, the one
# script of ours (by its hash); nothing from anywhere else, so an image an agent's markdown names
# (`![x](http://remote/...)`) is never fetched, and nothing submits or frames elsewhere.
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; "
    f"script-src {_script_hash(FILTER_JS.strip())}; base-uri 'none'; form-action 'none'"
)


def esc(value: object) -> str:
    return escape("" if value is None else str(value))


def href(name: str) -> str:
    """A link to another page of the site (a task id in a file name, quoted)."""
    return quote(name)


_md: Any = None


def md(text: str) -> str:
    """Markdown to HTML, raw HTML shown as text."""
    global _md
    if _md is None:
        from markdown_it import MarkdownIt  # ~20 ms: only the dashboard renders markdown

        _md = MarkdownIt("commonmark", {"html": False})
    return f'<div class="md">{_md.render(text)}</div>'


def shell(title: str, here: str, room: str, body: str, script: str = "") -> str:
    nav = "".join(f'<a href="{n}"{" class=here" if n == here else ""}>{t}</a>' for n, t in NAV)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{esc(title)} - control-room</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="style.css"></head>'
        f'<body><header><strong>control-room</strong>{nav}<span class="room">{esc(room)}</span></header>'
        f"<main><h1>{esc(title)}</h1>\n{body}\n</main>{script}</body></html>\n"
    )


def table(head: list[str], rows: list[list[str]], cls: str = "") -> str:
    """A table whose cells are already HTML (escape them first)."""
    if not rows:
        return '<p class="empty">none</p>'
    c = f' class="{cls}"' if cls else ""
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table{c}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def figure(caption: str, svg: str) -> str:
    return f"<figure><figcaption>{esc(caption)}</figcaption>{svg}</figure>"
