"""Plans (SPEC §13): a markdown plan into routes and tasks, and back.

- ``syntax``: the plan format: parse and render
- ``importer``: ``plan import`` (the whole plan through admission, all or nothing, idempotent
  by content hash) and ``plan export``

May import: the wings before it (``queue`` and what it may import).
"""
