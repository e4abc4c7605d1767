"""The house's shape: layers you can see in the tree, data flowing one way.

``imports.py`` reads every import of the package from the source, those inside functions
included. A lower layer never imports a higher one; no two modules import each other, however
indirectly; an import inside a function says why on its line (or the line above).
"""

from __future__ import annotations

import ast

import imports


def test_every_module_is_in_a_layer() -> None:
    for name in imports.modules():
        imports.layer(name)  # raises, naming the module, if it is in none


def test_no_lower_layer_imports_a_higher_one() -> None:
    assert imports.upward(imports.graph()) == []


def test_no_import_cycle() -> None:
    assert imports.cycles(imports.graph()) == []


def test_no_import_inside_a_function_is_loaded_already() -> None:
    """An import is put inside a function only to spare the module's importers its cost: one
    that importing the module loads anyway only misleads."""
    assert imports.needless_lazy(imports.graph()) == []


def test_the_checks_see_what_they_must_forbid() -> None:
    """The checks themselves: an upward import and a cycle are found."""
    g = {
        "control_room.store.files": [("control_room.cli.common", 3, True)],
        "control_room.cli.common": [("control_room.store.files", 5, False)],
    }
    assert imports.upward(g) == ["control_room.store.files:3 imports control_room.cli.common (store -> cli)"]
    assert imports.cycles(g) == [["control_room.cli.common", "control_room.store.files"]]


def test_every_import_inside_a_function_says_why() -> None:
    silent = []
    for path in imports.modules().values():
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    line, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                    if "#" not in line and not above.startswith("#"):
                        silent.append(
                            f"{path.relative_to(imports.PACKAGE.parent)}:{node.lineno}: {line.strip()}"
                        )
    assert silent == [], "an import inside a function needs its reason in a comment"


def test_each_wing_of_dispatch_names_its_modules_and_dispatch_names_its_wings() -> None:
    """dispatch/__init__.py is the map of the wings, and each wing's __init__ the map of its
    modules: a module or a wing that is not on its map is one a newcomer cannot find."""
    dispatch = imports.PACKAGE / "dispatch"
    top = (dispatch / "__init__.py").read_text(encoding="utf-8")
    wings = sorted(p.name for p in dispatch.iterdir() if (p / "__init__.py").is_file())
    assert wings == sorted(imports.DISPATCH_WINGS)
    assert [w for w in wings if f"``{w}/``" not in top] == []
    unnamed = []
    for wing in wings:
        text = (dispatch / wing / "__init__.py").read_text(encoding="utf-8")
        unnamed += [f"{wing}/{m.name}" for m in (dispatch / wing).glob("*.py")
                    if m.name != "__init__.py" and f"``{m.stem}``" not in text]  # fmt: skip
    assert unnamed == []
    assert sorted(p.name for p in dispatch.glob("*.py")) == ["__init__.py"]  # nothing but the map
