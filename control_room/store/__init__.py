"""The store: the only code that reads and writes the contents of room files.

- ``files``: atomic writes, exclusive creation, read-modify-write that never clobbers a
  person's concurrent edit, lenient reads
- ``lock``: every lock (flock on POSIX; filelock where fcntl is missing)
- ``docs``: markdown with YAML front matter (CONTROL.md, roles, tombstones)
- ``tables``: markdown tables keyed by id (ROUTES.md, levers, branches)
- ``markdown``: the auto block of CURRENT_CONTEXT.md
- ``textmerge``: a three-way merge of plain text (``git merge-file``) for the merge drivers
- ``records``: JSON files (tasks, claims)
- ``cache``: derived, disposable caches keyed by a source file's fingerprint

Moving a task between state folders is one ``rename`` and belongs to ``room.swarm``.
May import: the base modules (``errors``, ``timeutil``).
"""
