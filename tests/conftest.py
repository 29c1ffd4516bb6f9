"""Shared fixtures: the real CLI, a scripted Messages API, and per-test isolated environments."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.rig import cli_env_for, tiny_png  # noqa: F401  (re-exported for tests)

from byre_jupyter import Session
from byre_jupyter.scripted import ScriptedAPI

ROOT = Path(__file__).resolve().parent.parent


def find_test_cli() -> str | None:
    """The pinned CLI installed by ./dev setup (BYRE_CLAUDE_PATH), else .byre, else None."""
    candidates = [
        os.environ.get("BYRE_CLAUDE_PATH", ""),
        *(
            str(p)
            for p in (ROOT / ".byre/cli/node_modules/@anthropic-ai").glob(
                "claude-code-linux-*/claude"
            )
        ),
    ]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    return None


@pytest.fixture(scope="session")
def cli_path() -> str:
    path = find_test_cli()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("the claude CLI is not installed: ./dev setup must install it in CI")
        pytest.skip("the claude CLI is not installed (run ./dev setup)")
    return path


@pytest.fixture
def api() -> Iterator[ScriptedAPI]:
    server = ScriptedAPI()
    server.start()
    try:
        yield server
    finally:
        server.release()
        server.stop()


@pytest.fixture
def cli_env(api: ScriptedAPI, tmp_path: Path) -> dict[str, str]:
    return cli_env_for(api.url, tmp_path / "home")


@pytest.fixture
async def make_session(
    cli_path: str, cli_env: dict[str, str], tmp_path: Path
) -> AsyncIterator[Callable[..., Session]]:
    """Build Sessions wired to the real CLI and the scripted API; all closed at the end."""
    sessions: list[Session] = []
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)

    def make(**options: Any) -> Session:
        options.setdefault("cli_path", cli_path)
        options.setdefault("cwd", str(workdir))
        options.setdefault("permission_mode", "bypassPermissions")
        options["env"] = {**cli_env, **options.get("env", {})}
        session = Session(**options)
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        await session.close()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir(exist_ok=True)
    return path


def which(name: str) -> str | None:
    return shutil.which(name)


# -- a real kernel with the extension loaded, for the kernel tier ------------------------------

#: What the shared ``kernel`` fixture runs first.
KERNEL_LOAD = "%load_ext byre_jupyter\n%config Claude.permission_mode = 'bypassPermissions'"


@pytest.fixture
def kernel_env(api: ScriptedAPI, cli_path: str, tmp_path: Path) -> dict[str, str]:
    """A kernel's environment: ours, the CLI's pointed at ``api``, state under tmp_path."""
    from support.kernel import kernel_env as make_kernel_env

    return make_kernel_env(api.url, cli_path, tmp_path)


@pytest.fixture
def kernel(kernel_env: dict[str, str], workdir: Path) -> Iterator[Any]:
    """A real ipykernel (tests/support/kernel.py) with byre_jupyter loaded, closed after."""
    from support.kernel import KernelDriver

    driver = KernelDriver(kernel_env, str(workdir))
    try:
        assert "Error" not in driver.run(KERNEL_LOAD).texts()
        yield driver
    finally:
        driver.close()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move every object alive after collection (the imported modules of IPython, pandas,
    matplotlib, ipywidgets...) out of the collector's reach. ``InteractiveShell.reset`` runs a
    full ``gc.collect()`` (its displayhook flush), and tests that reset the shell per test paid
    for walking that whole heap each time: ~0.2 s alone, ~1 s in the full run. Objects the
    tests create are still collected as before."""
    gc.freeze()
