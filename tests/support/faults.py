"""Helpers of the fault suite: process hunting, the figures file, the recognisable secret."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psutil

from support.processes import alive, cli_children, cmdline
from support.rig import TESTS
from support.waiting import poll

FIGURES = TESTS / "artifacts" / "fault_figures.json"

SECRET_KEY = "sk-ant-test-SECRET123"  # the fake API key of the kernel tests: must never leak


def record_figure(key: str, value: Any) -> None:
    """Merge ``{key: value}`` into tests/artifacts/fault_figures.json (locked), and print it."""
    FIGURES.parent.mkdir(parents=True, exist_ok=True)
    with open(Path(tempfile.gettempdir()) / "byre-fault-figures.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            data = json.loads(FIGURES.read_text())
        except (OSError, ValueError):
            data = {}
        data[key] = value
        tmp = FIGURES.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
        tmp.replace(FIGURES)
    print(f"[fault figure] {key} = {json.dumps(value)}", file=sys.stderr)


def talking_cli(kernel_pid: int, port: int) -> list[psutil.Process]:
    """The CLI below a kernel that holds a connection to the scripted API on ``port``: the one
    serving the turn, not a spare started idle beside it (app/spare.py), which sends nothing."""

    def talks(proc: psutil.Process) -> bool:
        try:
            conns = getattr(proc, "net_connections", proc.connections)(kind="tcp")
        except psutil.Error:
            return False
        return any(c.raddr and c.raddr.port == port for c in conns)

    return [p for p in cli_children(kernel_pid) if talks(p)]


def leftover_clis(cli_marker: str, home: str | os.PathLike[str]) -> list[psutil.Process]:
    """Live processes whose cmdline mentions ``cli_marker`` and whose HOME is ``home``."""
    home = os.fspath(home)
    found = []
    for proc in psutil.process_iter():
        args = cmdline(proc)
        if not any(cli_marker in a for a in args):
            continue
        try:
            if proc.environ().get("HOME") == home and alive(proc.pid):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def assert_no_leftovers(cli_marker: str, home: str | os.PathLike[str], timeout: float = 10) -> None:
    try:
        poll(lambda: not leftover_clis(cli_marker, home), timeout, "CLI processes to leave")
    except AssertionError:
        procs = [(p.pid, cmdline(p)[:3]) for p in leftover_clis(cli_marker, home)]
        for p in leftover_clis(cli_marker, home):
            with contextlib.suppress(psutil.NoSuchProcess):
                p.kill()
        raise AssertionError(f"CLI processes left behind: {procs}") from None


def outputs_json(outputs: Iterable[dict[str, Any]]) -> str:
    return json.dumps(list(outputs), ensure_ascii=False)
