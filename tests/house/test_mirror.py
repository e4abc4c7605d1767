"""Tests mirror modules: the tests of ``control_room/<package>/<module>.py`` are in
``tests/<package>/test_<module>.py`` (``tests/cli/test_cli_<module>.py`` for a command;
``tests/test_<module>.py`` for the base modules), so a reader finds them in one place.
Scenarios that cross many modules live in ``tests/e2e/`` besides."""

from __future__ import annotations

from pathlib import Path

import control_room

PACKAGE = Path(control_room.__file__).parent
TESTS = Path(__file__).parent.parent

# pytest imports test files by their base name, which must be unique: where two modules share a
# name, one test file carries its package's name too.
RENAMED = {
    "store/docs.py": "store/test_store_docs.py",  # house/test_docs.py
    "views/merge.py": "views/test_view_merge.py",  # ledger/test_merge.py
}
EXEMPT = {"__main__.py"}  # `python -m control_room`: one line calling the CLI


def expected(module: Path) -> str:
    rel = module.relative_to(PACKAGE).as_posix()
    if rel in RENAMED:
        return RENAMED[rel]
    folder, name = module.parent.relative_to(PACKAGE).as_posix(), module.stem
    if folder == ".":
        return f"test_{name}.py"
    if folder == "cli":
        return f"cli/test_cli_{name}.py"
    return f"{folder}/test_{name}.py"


def modules() -> list[Path]:
    return sorted(
        p
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and p.name not in EXEMPT and "templates" not in p.parts
    )


def test_every_module_has_its_test_file() -> None:
    missing = [f"{m.relative_to(PACKAGE)} -> tests/{expected(m)}" for m in modules()]
    missing = [line for line in missing if not (TESTS / line.split(" -> tests/")[1]).is_file()]
    assert missing == []


def test_test_file_names_are_unique() -> None:
    seen: dict[str, Path] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path


def test_the_rule_maps_each_kind_of_module() -> None:
    assert expected(PACKAGE / "errors.py") == "test_errors.py"
    assert expected(PACKAGE / "cli" / "task.py") == "cli/test_cli_task.py"
    assert expected(PACKAGE / "views" / "dashboard" / "svg.py") == "views/dashboard/test_svg.py"
    assert expected(PACKAGE / "store" / "docs.py") == "store/test_store_docs.py"
