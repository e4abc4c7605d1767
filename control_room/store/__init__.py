"""The store: the only code that reads and writes room files.

- ``files``: atomic writes, per-file locks, read-modify-write that never clobbers a person's edit.
- ``markdown``: front matter, auto blocks and tables inside markdown files.
- ``cache``: derived, disposable caches keyed by a source file's fingerprint.
"""
