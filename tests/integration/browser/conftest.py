"""Fixtures for browser tests: one JupyterLab server and one headless Chromium per test run.

    def test_something(lab):                      # a fresh Lab tab (LabPage), closed after
        lab.open_notebook(new_notebook("print(1)"))
        lab.run_cell(0)
        assert "1" in lab.output_text(0)

To run a test in JupyterLab and in Notebook 7, decorate it with ``@BOTH_FRONTENDS``: its
``lab`` is then a tab on either server (``lab.frontend`` says which).

Every test under tests/integration/browser/ is marked ``browser`` automatically. Kernel
environment: override the session fixture ``lab_server_env`` in a conftest (it is passed to the
server, so every kernel inherits it), pass ``kernel_env=`` to ``LabPage.open_notebook`` for one
notebook, or start another server with ``harness.lab_server(tmp_dir, extra_env)``.

Chromium is Debian's /usr/bin/chromium (./dev setup installs it). Without it the browser
tests are skipped, except under CI, where that is an error.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.rig import cli_env_for

from byre_jupyter.scripted import ScriptedAPI

from .harness import (
    ARTIFACTS,
    LabPage,
    LabServer,
    NotebookServer,
    chromium_available,
    launch_chromium,
)

HERE = Path(__file__).resolve().parent


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.browser)
    # The collab tier's tests need Lab with real-time collaboration, which only .venv-collab has
    # (./dev test-collab): elsewhere they are deselected, as the version tiers leave out the
    # hub's. In that venv their fixture checks that collaboration is really on.
    if importlib.util.find_spec("jupyter_collaboration") is None:
        collab = [item for item in items if item.get_closest_marker("collab")]
        if collab:
            config.hook.pytest_deselected(items=collab)
            items[:] = [item for item in items if not item.get_closest_marker("collab")]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    rep = yield
    setattr(item, f"_byre_rep_{rep.when}", rep)  # read by the `lab` fixture's teardown
    return rep


@pytest.fixture(scope="session")
def lab_server_env() -> dict[str, str]:
    """Extra environment for the session's Lab server and its kernels. Override to extend."""
    return {}


# The server and the browser are package-scoped: one per run of tests/integration/browser, torn down
# when its last test ends. For Playwright that is required, not just tidy: the sync API drives its
# asyncio loop from a greenlet, so while it is alive asyncio believes a loop is running on the main
# thread, and asyncio.run()/pytest-asyncio in later test modules fail with "cannot be called from a
# running event loop". For the same reason browser tests must be sync functions.
@pytest.fixture(scope="package")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, lab_server_env: dict[str, str]
) -> Iterator[LabServer]:
    server = LabServer(tmp_path_factory.mktemp("lab"), lab_server_env)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="package")
def notebook_server(
    tmp_path_factory: pytest.TempPathFactory, lab_server_env: dict[str, str]
) -> Iterator[LabServer]:
    """Notebook 7 (``jupyter notebook``), started only by tests that run in it."""
    server = NotebookServer(tmp_path_factory.mktemp("notebook"), lab_server_env)
    server.start()
    try:
        yield server
    finally:
        server.stop()


#: Parametrize a test that takes ``lab`` with this to run it in JupyterLab and in Notebook 7.
BOTH_FRONTENDS = pytest.mark.parametrize("lab", ["lab", "notebook"], indirect=True)


@pytest.fixture(scope="package")
def playwright() -> Iterator[Any]:
    """Playwright's sync API, started once (it cannot be started twice in one thread)."""
    if not chromium_available():
        msg = "/usr/bin/chromium is missing (./dev setup installs it with apt-get)"
        if _in_ci():
            pytest.fail(msg + "; CI must run the browser tests", pytrace=False)
        pytest.skip(msg)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        if _in_ci():
            pytest.fail(f"playwright is not importable: {e}", pytrace=False)
        pytest.skip(f"playwright is not importable: {e}")
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="package")
def browser(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A Playwright BrowserContext on headless /usr/bin/chromium with a fresh profile."""
    ctx = launch_chromium(playwright, tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture(scope="package")
def other_browser(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A second BrowserContext with a profile of its own (storage, cookies): another person's
    browser, for the tests where two pages work on one notebook (test_collab.py)."""
    ctx = launch_chromium(playwright, tmp_path_factory.mktemp("chromium-profile-other"))
    try:
        yield ctx
    finally:
        ctx.close()


@pytest.fixture
def lab(request: pytest.FixtureRequest, browser: Any) -> Iterator[LabPage]:
    """A new tab on JupyterLab (fresh workspace), or on Notebook 7 when the test is
    parametrized with :data:`BOTH_FRONTENDS` (``request.param`` "notebook"). On failure a
    screenshot, the page's console and the iopub log are left in tests/artifacts/."""
    frontend = getattr(request, "param", "lab")
    yield from _page(request, browser, frontend, "")


@pytest.fixture
def other_lab(request: pytest.FixtureRequest, other_browser: Any) -> Iterator[LabPage]:
    """A tab in :func:`other_browser` on the same Lab server as ``lab``, as ``lab`` is made."""
    yield from _page(request, other_browser, "lab", "other-")


def _page(
    request: pytest.FixtureRequest, context: Any, frontend: str, prefix: str
) -> Iterator[LabPage]:
    server = request.getfixturevalue("notebook_server" if frontend == "notebook" else "lab_server")
    lp = LabPage(context.new_page(), server)
    try:
        lp.goto_lab()
        yield lp
    finally:
        rep = getattr(request.node, "_byre_rep_call", None)
        if rep is not None and rep.failed:
            _dump_failure(request.node.nodeid, lp, prefix)
        lp.close()


def _dump_failure(nodeid: str, lp: LabPage, prefix: str = "") -> None:
    stem = prefix + re.sub(r"[^A-Za-z0-9_.-]+", "_", nodeid)[-120:]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    try:
        lp.screenshot(f"failed-{stem}.png")
    except Exception as e:  # best effort: the test already failed
        lp.console.append(f"(screenshot failed: {e})")
    try:
        iopub: Any = lp.iopub_messages() if lp.path else []
        sent: Any = lp.sent_comm_messages() if lp.path else []
    except Exception as e:
        iopub = sent = f"(unavailable: {e})"
    (ARTIFACTS / f"failed-{stem}.txt").write_text(
        "console:\n"
        + "\n".join(lp.console)
        + f"\n\niopub:\n{iopub}\n\nsent comm_msgs:\n{sent}\n\n{lp.server.log_tail(80)}\n"
    )


@pytest.fixture
def claude_env(api: ScriptedAPI, cli_path: str, tmp_path: Path) -> dict[str, str]:
    """The kernel environment for %%claude: the CLI env, the CLI path, a private state dir."""
    env = cli_env_for(api.url, tmp_path / "home")
    env["BYRE_CLAUDE_PATH"] = cli_path
    env["BYRE_STATE_DIR"] = str(tmp_path / "state")
    return env
