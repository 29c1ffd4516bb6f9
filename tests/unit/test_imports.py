"""The package's own imports form no cycle, not even under ``TYPE_CHECKING``: a
dependency that needs to call back gets a narrow Protocol instead."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "byre_jupyter"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every byre_jupyter module ``path`` imports (functions and TYPE_CHECKING blocks too)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m.startswith("byre_jupyter")}


def test_no_import_cycles_between_modules() -> None:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {
        name: {m for m in imports_of(path) if m in modules and m != name}
        for name, path in modules.items()
    }
    # A package's __init__ re-exports its modules: count only module → module edges.
    packages = {name for name, path in modules.items() if path.name == "__init__.py"}
    edges = {n: {m for m in deps if m not in packages} for n, deps in graph.items()}
    cycles = []
    for start in edges:
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start:
                    cycles.append(" -> ".join([*trail, start]))
                elif nxt not in trail and len(trail) < 6:
                    stack.append((nxt, [*trail, nxt]))
    assert not cycles, "\n".join(sorted(set(cycles)))


#: The package's rooms, lowest first. A module may import its own room and the rooms below it,
#: never one above; package ``__init__`` edges count too (the package root is the top).
LAYERS = (
    ("byre_jupyter.errors", "byre_jupyter.redact", "byre_jupyter.version"),
    ("byre_jupyter.protocol",),
    ("byre_jupyter.scripted", "byre_jupyter.transport", "byre_jupyter.bridge"),
    ("byre_jupyter.session",),
    ("byre_jupyter.tools",),
    ("byre_jupyter.ui",),
    ("byre_jupyter.app",),
    ("byre_jupyter.magics",),
    ("byre_jupyter",),
)


def layer_of(module: str) -> int:
    best = (-1, -1)  # (length of the matching room name, its layer)
    for level, rooms in enumerate(LAYERS):
        for room in rooms:
            if (module == room or module.startswith(room + ".")) and len(room) > best[0]:
                best = (len(room), level)
    assert best[1] >= 0, f"{module} is in no layer of LAYERS"
    return best[1]


def test_imports_only_go_down_the_layers_including_package_inits() -> None:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    upward = []
    for name, path in modules.items():
        mine = layer_of(name)
        for target in imports_of(path):
            if target not in modules:  # `from .x import name`: the module is the prefix
                continue
            if layer_of(target) > mine:
                upward.append(f"{name} (layer {mine}) imports {target} (layer {layer_of(target)})")
    assert not upward, "\n".join(sorted(upward))


def test_every_room_is_a_layer() -> None:
    rooms = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    named = {r.rpartition(".")[2] for level in LAYERS for r in level if r.count(".") == 1}
    assert rooms <= named, f"rooms with no layer: {sorted(rooms - named)}"
