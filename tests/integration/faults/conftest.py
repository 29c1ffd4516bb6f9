"""Fixtures of the fault, load, bad-input and security suite.

Kernel tests get a kernel environment like tests/integration/kernel/test_notebook_kernel.py
(os.environ + the CLI's isolated environment + BYRE_CLAUDE_PATH + BYRE_STATE_DIR), with a
distinctive fake API key so the security tests can look for it. Every kernel a test starts is
closed at the end, and then no CLI process (real or stand-in) with this test's HOME may remain.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from faultkit import LOAD, SECRET_KEY, STANDIN, assert_no_leftovers, installed_cli
from support.kernel import KernelDriver
from support.rig import cli_env_for

from byre_jupyter.scripted import ScriptedAPI


@pytest.fixture(autouse=True)
def no_leftover_clis(tmp_path: Path) -> Iterator[None]:
    """After every test (and its other fixtures): no CLI, real or stand-in, with this test's
    HOME is still running."""
    yield
    home = tmp_path / "home"
    cli = installed_cli()
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
    env = dict(os.environ)
    env.update(cli_env_for(api.url, home, ANTHROPIC_API_KEY=SECRET_KEY))
    env["BYRE_CLAUDE_PATH"] = cli_path
    env["BYRE_STATE_DIR"] = str(tmp_path / "state")
    env.pop("BYRE_LIVE", None)
    return env


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


@pytest.fixture
def standin_cli(tmp_path: Path) -> str:
    """An executable that execs the stand-in CLI (tests/support/standin_cli.py)."""
    wrapper = tmp_path / "standin-claude"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} {STANDIN} "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.fixture
def standin_script(tmp_path: Path) -> Callable[[list[list[dict[str, Any]]]], str]:
    """Write a stand-in script (one list of items per turn); returns its path."""
    count = [0]

    def write(turns: list[list[dict[str, Any]]]) -> str:
        count[0] += 1
        path = tmp_path / f"standin-script-{count[0]}.jsonl"
        path.write_text("\n---\n".join("\n".join(json.dumps(i) for i in t) for t in turns) + "\n")
        return str(path)

    return write
