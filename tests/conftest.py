"""Shared fixtures: the real CLI, a scripted Messages API, the stand-in CLI, real kernels, and
per-test isolated environments. Helpers live in tests/support/ (imported as ``support.*``).

What differs between tests is said with markers (registered in pyproject.toml), not by
redefining a fixture:

    @pytest.mark.kernel_env(MPLBACKEND="Agg")        # extra variables for ``kernel_env``
    @pytest.mark.kernel_setup("%load_ext byre_jupyter")  # the cells ``kernel`` runs first
"""

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.kernel import LOAD
from support.rig import STANDIN, cli_env_for, find_cli

from byre_jupyter import Session
from byre_jupyter.scripted import ScriptedAPI

# jsonschema (under nbformat, nbclient and nbconvert) imports rfc3987_syntax when it is
# installed, only to offer an "iri" format check, and that import builds a Lark grammar: about
# 3 s of CPU in every test process that touches a notebook, a tenth of the fast tier. No test
# validates IRIs (nbformat validates without format checks), so the test process goes without
# it; the servers and kernels the tests start are untouched.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

StandinScript = list[list[dict[str, Any]]]  # one list of stand-in items per turn


@pytest.fixture(scope="session")
def cli_path() -> str:
    path = find_cli()
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


# -- the stand-in CLI (tests/support/standin_cli.py) -------------------------------------------


@pytest.fixture
def standin_cli(tmp_path: Path) -> str:
    """An executable that execs the stand-in CLI."""
    wrapper = tmp_path / "standin-claude"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {STANDIN} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.fixture
def standin_script(tmp_path: Path) -> Callable[[StandinScript], str]:
    """Write a stand-in script (one list of items per turn); returns its path, the value of
    STANDIN_SCRIPT for the stand-in."""
    count = [0]

    def write(turns: StandinScript) -> str:
        count[0] += 1
        path = tmp_path / f"standin-script-{count[0]}.jsonl"
        path.write_text("\n---\n".join("\n".join(json.dumps(i) for i in t) for t in turns) + "\n")
        return str(path)

    return write


@pytest.fixture
async def standin(
    standin_cli: str, standin_script: Callable[[StandinScript], str]
) -> AsyncIterator[Callable[..., Session]]:
    """Build Sessions on the stand-in CLI playing ``turns`` (the script); all closed at the
    end. ``cli_path=`` and ``env=`` still apply (the script's variable is added to ``env``)."""
    sessions: list[Session] = []

    def make(turns: StandinScript | None = None, **options: Any) -> Session:
        env = dict(options.pop("env", {}))
        if turns is not None:
            env["STANDIN_SCRIPT"] = standin_script(turns)
        options.setdefault("cli_path", standin_cli)
        session = Session(env=env, **options)
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        await session.close()


# -- a real kernel with the extension loaded, for the kernel tier ------------------------------


@pytest.fixture
def kernel_env(
    request: pytest.FixtureRequest, api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> dict[str, str]:
    """A kernel's environment: ours, the CLI's pointed at ``api``, state under tmp_path, and the
    variables of any ``kernel_env`` marker (the closest one wins)."""
    from support.kernel import kernel_env as make_kernel_env

    extra: dict[str, str] = {}
    for marker in reversed(list(request.node.iter_markers("kernel_env"))):
        extra.update(marker.kwargs)
    return make_kernel_env(api.url, cli_path, tmp_path, **extra)


@pytest.fixture
def kernel(
    request: pytest.FixtureRequest, kernel_env: dict[str, str], workdir: Path
) -> Iterator[Any]:
    """A real ipykernel (tests/support/kernel.py) in ``workdir``, closed after. It first runs
    :data:`support.kernel.LOAD`, or the cells of the closest ``kernel_setup`` marker; none of
    them may fail."""
    from support.kernel import KernelDriver

    marker = request.node.get_closest_marker("kernel_setup")
    cells = marker.args if marker is not None else (LOAD,)
    driver = KernelDriver(kernel_env, str(workdir))
    try:
        for cell in cells:
            out = driver.run(cell)
            assert "Error" not in out.texts(), out.texts()
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
