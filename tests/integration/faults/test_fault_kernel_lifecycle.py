"""The kernel goes away while a turn runs (``%%claude --bg`` on a hanging API request): after a
graceful shutdown, a restart, or SIGKILL of the kernel, no CLI process of that kernel remains.
The time from SIGKILL to the CLI's end is recorded in tests/artifacts/fault_figures.json."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest
from support.faults import record_figure, talking_cli
from support.kernel import KernelDriver
from support.processes import alive
from support.waiting import poll

from byre_jupyter.scripted import Hang, ScriptedAPI

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

GONE_BOUND = 10.0  # seconds; a CLI left to itself would wait on the hanging request for minutes


def start_hanging_turn(kernel: KernelDriver, api: ScriptedAPI) -> psutil.Process:
    api.on("HANG_HERE", Hang())
    run = kernel.run("%%claude --bg\nHANG_HERE please")
    assert run.reply["status"] == "ok", run.texts()
    api.wait_for_request("HANG_HERE", timeout=90)
    (cli,) = poll(
        lambda: talking_cli(kernel.kernel_pid(), api.port), 30, "the CLI serving the turn"
    )
    return cli


def test_graceful_shutdown_mid_turn_leaves_no_cli(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI
) -> None:
    kernel = kernels()
    cli = start_hanging_turn(kernel, api)
    t0 = time.monotonic()
    kernel.close()
    poll(lambda: not alive(cli.pid), GONE_BOUND, "the CLI to leave with the kernel")
    record_figure("cli_gone_after_graceful_shutdown_s", round(time.monotonic() - t0, 3))


def test_restart_mid_turn_leaves_no_cli_and_the_new_kernel_works(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI
) -> None:
    kernel = kernels()
    cli = start_hanging_turn(kernel, api)
    old_pid = kernel.kernel_pid()
    t0 = time.monotonic()
    kernel.km.restart_kernel()
    poll(lambda: not alive(cli.pid), GONE_BOUND, "the CLI to leave with the old kernel")
    record_figure("cli_gone_after_restart_s", round(time.monotonic() - t0, 3))
    assert not alive(old_pid) and kernel.kernel_pid() != old_pid
    kernel.kc.wait_for_ready(timeout=60)
    assert kernel.run("print(6 * 7)").texts().strip() == "42"


def sighup_ignored(pid: int) -> bool:
    """Whether process ``pid`` ignores SIGHUP (bit 0 of /proc's SigIgn mask)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigIgn:"):
            return bool(int(line.split()[1], 16) & 1 << (signal.SIGHUP - 1))
    raise AssertionError(f"no SigIgn line for {pid}")


@pytest.mark.parametrize("hup", ["default", "ignored"])
def test_kernel_sigkill_mid_turn_takes_the_cli_along(
    kernels: Callable[..., KernelDriver], api: ScriptedAPI, hup: str
) -> None:
    """``ignored``: the kernel inherited SIGHUP ignored, as under ``nohup jupyter lab &`` or a
    CI job started so; the CLI's supervisor must still die of the kernel's death signal."""
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN if hup == "ignored" else signal.SIG_DFL)
    try:
        kernel = kernels()  # the kernel (and its CLI's supervisor) inherits this disposition
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert sighup_ignored(kernel.kernel_pid()) == (hup == "ignored")
    cli = start_hanging_turn(kernel, api)
    group = [cli.pid, *(p.pid for p in cli.children(recursive=True))]
    t0 = time.monotonic()
    os.kill(kernel.kernel_pid(), signal.SIGKILL)
    poll(
        lambda: not alive(cli.pid),
        GONE_BOUND,
        "the CLI to die with its SIGKILLed kernel",
        interval=0.005,
    )
    elapsed = time.monotonic() - t0
    record_figure("cli_gone_after_kernel_sigkill_s", round(elapsed, 3))
    poll(lambda: not any(alive(p) for p in group), GONE_BOUND, "the CLI's children to leave")


@pytest.mark.parametrize("death", ["sigkill", "shutdown_now"])
def test_kernel_death_takes_a_cli_that_ignores_sigterm_and_its_children(
    kernels: Callable[..., KernelDriver],
    kernel_env: dict[str, str],
    standin_cli: str,
    tmp_path: Path,
    death: str,
) -> None:
    """Whatever the CLI does with SIGTERM (the real one takes ~2 s to exit; this stand-in never
    does), the kernel's death ends it and the processes it started: SIGKILL of the kernel, and
    ``shutdown_kernel(now=True)`` (interrupt, then kill: what a gateway does on SIGTERM)."""
    pids = tmp_path / "stubborn.pids"
    kernel = kernels(env={**kernel_env, "STANDIN_STUBBORN": str(pids)})
    kernel.run(f"%config Claude.cli_path = {standin_cli!r}")
    run = kernel.run("%%claude\nhello")
    assert run.reply["status"] == "ok", run.texts()
    cli_pid, child_pid = (int(p) for p in pids.read_text().split())
    try:
        assert alive(cli_pid) and alive(child_pid)
        t0 = time.monotonic()
        if death == "sigkill":
            os.kill(kernel.kernel_pid(), signal.SIGKILL)
        else:
            kernel.km.shutdown_kernel(now=True)
        poll(
            lambda: not alive(cli_pid) and not alive(child_pid),
            GONE_BOUND,
            "the CLI and its child to die with the kernel",
            interval=0.005,
        )
        record_figure(f"stubborn_cli_gone_after_kernel_{death}_s", round(time.monotonic() - t0, 3))
    finally:
        for pid in (cli_pid, child_pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
