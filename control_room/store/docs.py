"""Markdown documents with YAML front matter: CONTROL.md, role prompts, tombstones.

Reading is strict, because a setting read wrong must fail closed: an opened but unclosed block,
broken YAML, or YAML that is not a mapping is an ``InvalidError`` naming the file and the line,
never "no front matter" and never a traceback. Writing cannot break it: every value the room
writes into a front matter (``render``, ``flow``) is on its key's line, a text with a line break
double-quoted with its breaks escaped, so no line of the block but its two markers is ``---``
or ``...``, whatever a person or an agent wrote; and the block ends only at a marker in the
first column, as in YAML, so a value indented under its key is never taken for the end.
Parsed documents are cached against the file's fingerprint (``store.cache``), so most commands
never import the YAML parser.
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
        close = next((i for i in range(1, len(lines)) if _marker(lines[i])), None)
        if close is None:
            raise InvalidError(f"{where}: the front matter opened on line 1 is never closed with ---")
        try:
            raw = yaml.safe_load("\n".join(lines[1:close]))
        except yaml.YAMLError as exc:
            raise _not_yaml(exc, where) from None
        if raw is not None and not isinstance(raw, dict):
            raise InvalidError(f"{where}: front matter must be a mapping of keys to values")
    try:  # its loader may be libyaml's, stricter than the check above (a "\uD800" escape)
        meta, body = frontmatter.parse(text)  # not loads: a key named `content` or `handler` is data
    except yaml.YAMLError as exc:
        raise _not_yaml(exc, where) from None
    return dict(meta), body


def _not_yaml(exc: Exception, where: Path | str) -> InvalidError:
    """The one-line error of a front matter that YAML refuses, naming the line where it can."""
    mark = getattr(exc, "problem_mark", None)
    at = f": line {mark.line + 2}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return InvalidError(f"{where}{at}: front matter is not valid YAML: {problem}")


def _marker(line: str) -> bool:
    """Whether ``line`` ends a front matter: ``---`` or ``...`` in the first column (YAML's
    document markers; indented, either is part of a value)."""
    return line.rstrip() in ("---", "...")


def has_front_matter(text: str) -> bool:
    return text.lstrip("\ufeff").startswith("---")


def render(meta: Meta, body: str) -> str:
    """A document's text: the front matter in the order given, then the body."""
    import frontmatter  # see split

    post = frontmatter.Post(body)
    post.metadata.update(meta)
    return frontmatter.dumps(post, sort_keys=False, Dumper=_dumper(), width=_WIDE) + "\n"


def flow(value: Any) -> str:
    """``value`` as YAML on one line (flow style), for rewriting one key of a front matter."""
    import yaml  # see split

    text = yaml.dump(value, Dumper=_dumper(), default_flow_style=True, width=_WIDE, allow_unicode=True)
    return str(text).strip().removesuffix("\n...")


_WIDE = 1 << 30  # no value is folded onto a line of its own
_BREAKS = ("\n", "\r", "\x85", "\u2028", "\u2029")  # what YAML takes for a line break
_DUMPER: list[type] = []


def _dumper() -> type:
    """PyYAML's SafeDumper, with every text that holds a line break written double-quoted on
    one line (``"a\\n---\\nb"``): it reads back exactly, and cannot end the block."""
    import yaml  # see split

    if not _DUMPER:

        class OneLine(yaml.SafeDumper):
            pass

        def text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
            style = '"' if any(b in value for b in _BREAKS) else None
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

        OneLine.add_representer(str, text)
        _DUMPER.append(OneLine)
    return _DUMPER[0]


def plain(meta: Meta) -> Meta:
    """YAML dates and the like as strings, so the values can be cached, printed as JSON and
    compare simply: at every depth (a date in a list, a mapping keyed by a number)."""
    return {str(k): _plain(v) for k, v in meta.items()}


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return plain(v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v if isinstance(v, (str, int, float, bool, type(None))) else str(v)


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
