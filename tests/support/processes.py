"""Which processes are the CLI: one rule for every test that looks for them.

The CLI is started under a ``/bin/sh`` supervisor (byre_jupyter/transport/process.py), and its
argv names a path, a wrapper or a stand-in depending on the test, so a name is the wrong key:
the CLI is the process that speaks stream-json (``--output-format stream-json`` in its argv),
is not that supervisor, and is alive.
"""

from __future__ import annotations

import psutil

__all__ = ["alive", "cli_children", "cmdline"]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def cmdline(proc: psutil.Process) -> list[str]:
    try:
        return proc.cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return []


def cli_children(root_pid: int) -> list[psutil.Process]:
    """The CLI processes below ``root_pid`` (a kernel, a server), by the module's rule."""
    try:
        kids = psutil.Process(root_pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [
        p
        for p in kids
        if any("stream-json" in a for a in cmdline(p))
        and cmdline(p)[:1] != ["/bin/sh"]
        and alive(p.pid)
    ]
