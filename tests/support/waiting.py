"""Bounded polling of a condition nothing tells the test about: a process appearing or leaving,
a file another process writes, a server answering, a browser's page reaching a state. The one
place tests wait by looking again; every wait has a bound and says what it waited for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

__all__ = ["apoll", "poll"]


def poll(
    check: Callable[[], Any],
    timeout: float,
    what: str,
    *,
    interval: float = 0.02,
    detail: Callable[[], str] | None = None,
    error: type[AssertionError] = AssertionError,
) -> Any:
    """Call ``check()`` until it returns a truthy value (returned), or raise ``error`` after
    ``timeout`` seconds, with ``detail()`` appended when given."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            extra = f"\n{detail()}" if detail is not None else ""
            raise error(f"timed out after {timeout:g} s waiting for {what}{extra}")
        time.sleep(interval)  # the loop re-checks real state


async def apoll(
    check: Callable[[], Any], timeout: float, what: str, *, interval: float = 0.05
) -> Any:
    """:func:`poll` for a test running on an event loop: the loop runs while it waits."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(interval)
