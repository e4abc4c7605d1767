"""The dashboard (SPEC §10): a static, read-only HTML site made from the room's files.

- ``fold``: the ledger folded once, incrementally (``ledger.follow``): per-day aggregates, the
  objective's metrics, each task's review lines, the names the ledger pages filter on
- ``svg``: the charts, inline SVG written by hand
- ``page``: the page shell, escaping, markdown (markdown-it-py, raw HTML off)
- ``pages``: overview, routes, findings, scorecard
- ``runs``: each run's page (prompt, report, validator output, context pressure, reviews)
- ``ledger_pages``: the ledger, 500 lines a page, newest first, written in one pass
- ``site``: every page into a folder (``build``), or one page at a time for ``--serve``

It reads the room and never writes to it: every derived cache it brings up to date is kept in
memory (``store.cache.held``); with ``--out`` the memory is kept in the site's own folder.
"""
