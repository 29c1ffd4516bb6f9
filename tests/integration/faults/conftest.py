"""Fixtures of the fault, load, bad-input and security suite.

Kernel tests get the shared kernel environment (tests/conftest.py) with a distinctive fake API
key, so the security tests can look for it. Every kernel a test starts is
closed at the end, and then no CLI process (real or stand-in) with this test's HOME may remain.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.faults import SECRET_KEY, assert_no_leftovers
from support.kernel import LOAD, KernelDriver
from support.kernel import kernel_env as make_kernel_env
from support.rig import STANDIN, find_cli

from byre_jupyter.scripted import ScriptedAPI


@pytest.fixture(autouse=True)
def no_leftover_clis(tmp_path: Path) -> Iterator[None]:
    """After every test (and its other fixtures): no CLI, real or stand-in, with this test's
    HOME is still running."""
    yield
    home = tmp_path / "home"
    cli = find_cli()
    if cli is not None:
        assert_no_leftovers(cli, home)
    assert_no_leftovers(str(STANDIN), home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def kernel_env(api: ScriptedAPI, cli_path: str, tmp_path: Path, home: Path) -> dict[str, str]:
    """The shared kernel environment, but with a recognisable secret as the API key: the fault
    tests look for it in every place it must not reach."""
    return make_kernel_env(api.url, cli_path, tmp_path, ANTHROPIC_API_KEY=SECRET_KEY)


@pytest.fixture
def kernels(
    kernel_env: dict[str, str], workdir: Path, home: Path, cli_path: str
) -> Iterator[Callable[..., KernelDriver]]:
    """Start kernels (extension loaded unless ``load=False``); all closed at the end, then no
    CLI process of this test may be left."""
    started: list[KernelDriver] = []

    def start(env: dict[str, str] | None = None, load: bool = True) -> KernelDriver:
        driver = KernelDriver(env or kernel_env, str(workdir))
        started.append(driver)
        if load:
            out = driver.run(LOAD)
            assert "Error" not in out.texts(), out.texts()
        return driver

    yield start
    for driver in started:
        with contextlib.suppress(Exception):
            driver.close()
    assert_no_leftovers(cli_path, home)
    assert_no_leftovers(str(STANDIN), home)
