"""The shared fixtures are defined once, in tests/conftest.py: what differs per test is said with
markers (``kernel_env``, ``kernel_setup``) or arguments (``kernels(env=..., load=...)``), not
by a second definition that drifts from the first."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
#: (``kernel`` and ``api`` still have variants that differ on purpose: a kernel recording every
#: iopub message, one with the inline backend and no extension, an API failing what a test did
#: not script; each says so where it is defined. Every kernel is still started by ``kernels``:
#: the test below holds that.)
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


def test_every_kernel_is_started_by_the_shared_kernels_fixture() -> None:
    """No test starts a kernel of its own (a ``KernelDriver``, a subclass of it, a
    ``KernelManager``): ``kernels`` takes the environment, the driver and the folder as
    arguments, and closes every kernel whatever the test does."""
    started = {
        f"{path.relative_to(TESTS)}:{node.lineno}"
        for path in TESTS.rglob("*.py")
        if path not in (TESTS / "conftest.py", TESTS / "support" / "kernel.py")
        and "node_modules" not in path.parts
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and (node.func.id.endswith("Driver") or node.func.id == "KernelManager")
    }
    assert not started, sorted(started)


def _module_name(path: Path) -> str:
    """The name pytest's default import mode gives a test file: its basename, prefixed by the
    packages (folders with ``__init__.py``) it sits in."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").exists():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


def test_no_two_test_files_import_under_one_name() -> None:
    # The fast tier collects tests/unit alone, so a clash with an integration test's module
    # name would first show in the whole suite as a collection error.
    seen: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        if "node_modules" not in path.parts:
            seen.setdefault(_module_name(path), []).append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}
