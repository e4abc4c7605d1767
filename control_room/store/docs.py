"""Markdown documents with YAML front matter: CONTROL.md, role prompts, tombstones.

Reading is strict, because a setting read wrong must fail closed: an opened but unclosed block,
broken YAML, or YAML that is not a mapping is an ``InvalidError`` naming the file and the line,
never "no front matter" and never a traceback. Parsed documents are cached against the file's
fingerprint (``store.cache``), so most commands never import the YAML parser.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from control_room.errors import InvalidError, NotFoundError
from control_room.store import cache
from control_room.store.files import read_text

Meta = dict[str, Any]


def split(text: str, where: Path | str) -> tuple[Meta, str]:
    """(front matter, body) of a document's text; a text without front matter has ``{}``."""
    import frontmatter  # PyYAML behind it costs ~25 ms: only when a document is parsed
    import yaml  # likewise

    text = text.lstrip("\ufeff")  # a byte-order mark must not hide the front matter
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        close = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if close is None:
            raise InvalidError(f"{where}: the front matter opened on line 1 is never closed with ---")
        try:
            raw = yaml.safe_load("\n".join(lines[1:close]))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = f": line {mark.line + 2}" if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise InvalidError(f"{where}{at}: front matter is not valid YAML: {problem}") from None
        if raw is not None and not isinstance(raw, dict):
            raise InvalidError(f"{where}: front matter must be a mapping of keys to values")
    meta, body = frontmatter.parse(text)  # not loads: a key named `content` or `handler` is data
    return dict(meta), body


def has_front_matter(text: str) -> bool:
    return text.lstrip("\ufeff").startswith("---")


def render(meta: Meta, body: str) -> str:
    """A document's text: the front matter in the order given, then the body."""
    import frontmatter  # see split

    post = frontmatter.Post(body)
    post.metadata.update(meta)
    return frontmatter.dumps(post, sort_keys=False) + "\n"


def flow(value: Any) -> str:
    """``value`` as YAML on one line (flow style), for rewriting one key of a front matter."""
    import yaml  # see split

    return str(yaml.safe_dump(value, default_flow_style=True, width=1 << 30)).strip().removesuffix("\n...")


def plain(meta: Meta) -> Meta:
    """YAML dates and the like as strings, so the values can be cached and compare simply."""
    ok = (str, int, float, bool, list, dict, type(None))
    return {str(k): (v if isinstance(v, ok) else str(v)) for k, v in meta.items()}


def read(path: Path, cache_file: Path | None = None, *, missing: str = "") -> tuple[Meta, str]:
    """(front matter, body) of the document at ``path``, cached in ``cache_file`` for as long
    as the file is unchanged. A missing file is a ``NotFoundError`` saying ``missing``."""

    def parse() -> list[Any]:
        try:
            text = read_text(path)
        except (FileNotFoundError, IsADirectoryError):
            raise NotFoundError(missing or f"{path} is missing") from None
        meta, body = split(text, path)
        return [plain(meta), body]

    meta, body = parse() if cache_file is None else cache.derived(cache_file, path, parse)
    return meta, body
