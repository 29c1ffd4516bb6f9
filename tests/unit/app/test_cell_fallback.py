"""``%%claude`` through ``run_cell_magic`` (the fallback when the input transformer did not run)
while a loop runs, as in a kernel: the turn is a task that outlives the call, so an error it
meets after the options were parsed (the CLI refusing ``-m``) must be shown, not left as an
unretrieved task exception that only the kernel's log ever sees."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import byre_jupyter.magics as magics_pkg
from byre_jupyter.errors import ByreError
from byre_jupyter.session import Session


@pytest.fixture
def shell(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> InteractiveShell:
    """The magics' shell (conftest.py), whose CLI refuses every model change."""

    async def refuse(self: Any, model: str | None) -> str | None:
        raise ByreError(f"the CLI refused model {model!r}")

    monkeypatch.setattr(Session, "set_model", refuse)
    magics_pkg.extension().config.prewarm = False
    return shell


def test_bad_options_raise_in_the_callers_cell(shell: InteractiveShell) -> None:
    async def cell() -> None:
        with pytest.raises(UsageError):
            shell.run_cell_magic("claude", "--bogus", "hi")
        assert not magics_pkg.extension().background

    asyncio.run(cell())


def test_a_refused_model_is_shown_not_lost_in_a_task(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    lost: list[dict[str, Any]] = []

    async def cell() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: lost.append(ctx))
        shell.run_cell_magic("claude", "-m nope", "hi")  # returns at once: the turn is a task
        ext = magics_pkg.extension()
        for _ in range(1000):  # bounded: the task fails within a few loop iterations
            if not ext.background:
                break
            await asyncio.sleep(0)
        assert not ext.background
        gc.collect()  # an unretrieved task exception is reported when the task is collected

    asyncio.run(cell())
    assert lost == []
    assert "the CLI refused model 'nope'" in capsys.readouterr().err
