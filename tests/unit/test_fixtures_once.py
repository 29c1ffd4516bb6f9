"""The shared fixtures are defined once, in tests/conftest.py: what differs per test is said with
markers (``kernel_env``, ``kernel_setup``) or arguments (``kernels(env=..., load=...)``), not
by a second definition that drifts from the first."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: (``kernel`` and ``api`` still have variants that differ on purpose: a kernel recording every
#: iopub message, one with the inline backend and no extension, an API failing what a test did
#: not script; each says so where it is defined.)
SHARED = {"kernels", "kernel_env", "standin", "standin_cli", "standin_script", "cli_env"}


def _fixtures(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            "fixture" in ast.unparse(d) for d in node.decorator_list
        ):
            names.add(node.name)
    return names


def test_each_shared_fixture_is_defined_only_in_the_root_conftest() -> None:
    again = {
        f"{path.relative_to(TESTS)}: {name}"
        for path in TESTS.rglob("*.py")
        if path != TESTS / "conftest.py" and "node_modules" not in path.parts
        for name in _fixtures(path) & SHARED
    }
    assert not again, sorted(again)
    assert _fixtures(TESTS / "conftest.py") >= SHARED
