"""How a turn ends its cell: failures and ■ as notebook cells report them.

A failed turn (an API error, no CLI, not logged in) records its output and then raises
:class:`TurnFailed`, so the cell ends with an error status and Run All, nbclient and papermill
stop there (``Claude.on_error = "show"`` keeps the cell ok). ■ ends the turn gracefully and then
raises :class:`CellInterrupted`, a ``KeyboardInterrupt`` as an interrupted cell raises: ipykernel
answers such a cell with status "error" and aborts the queued cells below (its
``stop_on_error``), so Run All + ■ stops everything. Both print one short line instead of a
traceback (IPython's ``_render_traceback_`` hook): the output above already says what happened,
so the line names the failure and points there rather than repeating it. The whole message stays
the exception's value (``evalue``), which is what nbclient and papermill report.
"""

from __future__ import annotations

import re

from ..errors import ByreError
from ..ui.viewmodel import LOGIN_HELP, notebook_error_text

__all__ = ["LOGIN_HELP", "BudgetExceeded", "CellInterrupted", "TurnFailed", "notebook_error_text"]


def _headline(text: str, limit: int = 120) -> str:
    """The message's first sentence (of its first line), for the cell's one error line."""
    line = text.strip().splitlines()[0] if text.strip() else "the turn failed"
    line = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0].rstrip(".")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class TurnFailed(ByreError):
    """A ``%%claude`` turn failed; its output is recorded above the error."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mTurnFailed\x1b[0m: {_headline(self.message)} (the turn above says more)"]


class BudgetExceeded(TurnFailed):
    """The kernel's turns have cost ``Claude.kernel_budget_usd``: the turn was not sent. It
    fails its cell whatever ``Claude.on_error`` says, so a batch stops spending there."""


class CellInterrupted(KeyboardInterrupt):
    """■ stopped the turn (the conversation is kept); the cell ends as interrupted."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mInterrupted\x1b[0m: {self}"]
