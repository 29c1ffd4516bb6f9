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
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
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
def kernels(request: pytest.FixtureRequest, workdir: Path) -> Iterator[Callable[..., Any]]:
    """Start real ipykernels (tests/support/kernel.py), the one way every kernel test does:
    ``kernels(env=None, load=True, *, driver=KernelDriver, cwd=workdir, **extra)`` starts one
    with ``env`` (default ``kernel_env``, asked for only then: a kernel with an environment of
    its own needs no scripted API and no CLI) plus the ``extra`` variables, as ``driver`` (a
    frontend of the test's own, e.g. one that records iopub) in ``cwd``, and first runs
    :data:`support.kernel.LOAD` unless ``load`` is false (it may not fail). Every kernel is
    closed at the end (if the test has not: it may close, kill or shut one down itself, and
    start the next, as after a restart)."""
    from support.kernel import KernelDriver

    started: list[KernelDriver] = []

    def start(
        env: Mapping[str, str] | None = None,
        load: bool = True,
        *,
        driver: type[KernelDriver] = KernelDriver,
        cwd: Path | None = None,
        **extra: str,
    ) -> KernelDriver:
        base = request.getfixturevalue("kernel_env") if env is None else env
        kernel = driver({**base, **extra}, str(cwd or workdir))
        started.append(kernel)
        if load:
            out = kernel.run(LOAD)
            assert "Error" not in out.texts(), out.texts()
        return kernel

    try:
        yield start
    finally:
        for kernel in started:
            kernel.close()


@pytest.fixture
def kernel(request: pytest.FixtureRequest, kernels: Callable[..., Any]) -> Any:
    """One kernel of :func:`kernels`. It first runs :data:`support.kernel.LOAD`, or the cells
    of the closest ``kernel_setup`` marker; none of them may fail."""
    marker = request.node.get_closest_marker("kernel_setup")
    driver = kernels(load=marker is None)
    for cell in marker.args if marker is not None else ():
        out = driver.run(cell)
        assert "Error" not in out.texts(), out.texts()
    return driver


INTEGRATION = Path(__file__).resolve().parent / "integration"
#: The markers of the tiers that start processes: every test under tests/integration/ carries
#: one, so ``./dev test --fast`` (which selects none of them) need not even collect that folder.
PROCESS_MARKERS = ("cli", "kernel", "browser", "slow")


@pytest.hookimpl(trylast=True)  # after the folders' conftests have added their own markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [
        item.nodeid
        for item in items
        if INTEGRATION in Path(item.path).resolve().parents
        and not any(item.get_closest_marker(name) for name in PROCESS_MARKERS)
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests under tests/integration/ start processes and must be marked "
            f"{', '.join(PROCESS_MARKERS)} (a test that starts none belongs in tests/unit/): "
            + ", ".join(unmarked)
        )


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move every object alive after collection (the imported modules of IPython, pandas,
    matplotlib, ipywidgets...) out of the collector's reach. ``InteractiveShell.reset`` runs a
    full ``gc.collect()`` (its displayhook flush), and tests that reset the shell per test paid
    for walking that whole heap each time: ~0.2 s alone, ~1 s in the full run. Objects the
    tests create are still collected as before."""
    gc.freeze()


_frozen_after: list[Path] = []


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the first test of each module, collect what the modules before it left and move
    what is still alive (what they imported lazily: pygments' lexers, pyplot, the caches they
    filled) out of the collector's reach, as after collection: otherwise every full collection
    of the tool tests (one per shell reset) walked that heap again, growing with every module
    before them (10 s of the fast tier's CPU). The collection first, so no cycle the earlier
    tests left goes uncollected (and unwarned: a coroutine never awaited)."""
    if _frozen_after[-1:] != [item.path]:
        _frozen_after[:] = [item.path]
        gc.collect()
        gc.freeze()
