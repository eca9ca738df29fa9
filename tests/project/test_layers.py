"""helpers/ is layered (docs/architecture.md, "The layers"): a subpackage imports only the layers below
it, at the top of a module or lazily inside a function. Checked on the source, every import statement."""
from __future__ import annotations

import ast
from pathlib import Path

import helpers

LAYERS: tuple[str, ...] = ("engine", "machine", "topics", "bench", "recording", "viz", "widgets", "exercises")
ROOT = Path(helpers.__file__).parent


def _layer(module: str) -> int | None:
    """The layer of ``helpers.<layer>...`` (None for helpers.data, helpers.nb and what is not helpers)."""
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[0] == "helpers" and parts[1] in LAYERS else None


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in the file (``from helpers import x``: helpers.x)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "helpers":
            out += [(node.lineno, f"helpers.{a.name}") for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def test_no_layer_imports_a_higher_one() -> None:
    upward = []
    for path in sorted(ROOT.rglob("*.py")):
        mine = _layer(".".join(("helpers", *path.relative_to(ROOT).with_suffix("").parts)))
        if mine is None:
            continue
        for line, module in _imports(path):
            theirs = _layer(module)
            if theirs is not None and theirs > mine:
                upward.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module} ({LAYERS[theirs]} is above "
                              f"{LAYERS[mine]})")
    assert not upward, "\n".join(upward)


def test_the_layer_table_names_every_subpackage() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == set(LAYERS), packages ^ set(LAYERS)


def test_no_private_name_is_imported_across_modules() -> None:
    """``from helpers.x import _name`` reaches into another module's insides (the project's style: no
    private names imported across modules); a module's own ``_name`` stays its own."""
    private = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "helpers":
                private += [f"{path.relative_to(ROOT.parent)}:{node.lineno} imports {node.module}.{a.name}"
                            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]
    assert not private, "\n".join(private)
