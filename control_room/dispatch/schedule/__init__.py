"""Schedules that fire cycles (SPEC §10): cron, launchd, systemd.

- ``entries``: what a firing runs, names, quoting: the text of each kind of entry
- ``install``: installing, removing and finding a room's entries; when a cycle last ran

May import: the layers below ``dispatch``; no other wing.
"""
