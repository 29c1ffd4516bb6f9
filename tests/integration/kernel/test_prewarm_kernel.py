"""Warm from the first cell: loading the extension starts the default session's CLI
in the background; a failure there is silent until a cell needs the CLI. Timing is measured in
bench/prewarm.py, never asserted here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from support.kernel import LOAD, KernelDriver
from support.kernel import kernel_env as make_kernel_env
from support.processes import cli_children

from byre_jupyter.scripted import Reply, ScriptedAPI, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]


def test_the_cli_starts_when_the_extension_loads(
    kernels: Callable[..., KernelDriver],
    api: ScriptedAPI,
    cli_path: str,
    tmp_path: Path,
    workdir: Path,
) -> None:
    api.default = Reply(Text("warm answer"))
    kernel = kernels(load=False)
    try:
        # No spare at the turn's end (app/spare.py), so the CLIs counted below are the warm one.
        kernel.run("get_ipython().config.Claude.speculate = False")
        assert "Error" not in kernel.run(LOAD).texts()
        kernel.wait(lambda: bool(cli_children(kernel.kernel_pid())), timeout=60)
        started = {p.pid for p in cli_children(kernel.kernel_pid())}
        assert len(started) == 1
        kernel.wait(lambda: "True" in kernel.run(
            "import byre_jupyter.magics as m; "
            "print(m._EXTENSION.conversations.peek('default').running)"
        ).texts(), timeout=60)  # fmt: skip
        run = kernel.run("%%claude\nhello")
        assert "warm answer" in run.texts()
        # The first cell used the warm CLI, with the settings of the loading cell.
        assert {p.pid for p in cli_children(kernel.kernel_pid())} == started
        assert "--permission-mode" in " ".join(psutil.Process(started.pop()).cmdline())
    finally:
        kernel.close()


def test_prewarm_off_starts_nothing(
    kernels: Callable[..., KernelDriver],
    api: ScriptedAPI,
    cli_path: str,
    tmp_path: Path,
    workdir: Path,
) -> None:
    kernel = kernels(load=False)
    try:
        kernel.run("get_ipython().config.Claude.prewarm = False")
        assert "Error" not in kernel.run(LOAD).texts()
        kernel.run("import asyncio; await asyncio.sleep(0)")  # let a scheduled task begin
        assert (
            "None"
            in kernel.run(
                "import byre_jupyter.magics as m; print(m._EXTENSION.conversations.peek('default'))"
            ).texts()
        )
        assert cli_children(kernel.kernel_pid()) == []
    finally:
        kernel.close()


def test_a_failed_prewarm_is_silent_until_a_cell_needs_the_cli(
    kernels: Callable[..., KernelDriver],
    api: ScriptedAPI,
    cli_path: str,
    tmp_path: Path,
    workdir: Path,
) -> None:
    missing = str(tmp_path / "no-such-claude")
    env = make_kernel_env(api.url, missing, tmp_path)
    kernel = kernels(env=env, load=False)
    try:
        load = kernel.run(LOAD)
        assert load.texts().strip() == "" and load.reply["status"] == "ok"
        run = kernel.run("%%claude\nhello")
        assert "no-such-claude" in run.texts() or "not found" in run.texts().lower()
        assert api.requests == []
    finally:
        kernel.close()
