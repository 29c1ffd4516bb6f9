"""How a turn ends its cell: failures and ■ as notebook cells report them.

A failed turn (an API error, no CLI, not logged in) records its output and then raises
:class:`TurnFailed`, so the cell ends with an error status and Run All, nbclient and papermill
stop there (``Claude.on_error = "show"`` keeps the cell ok). ■ ends the turn gracefully and then
raises :class:`CellInterrupted`, a ``KeyboardInterrupt`` as an interrupted cell raises: ipykernel
answers such a cell with status "error" and aborts the queued cells below (its
``stop_on_error``), so Run All + ■ stops everything. Both print one short line instead of a
traceback (IPython's ``_render_traceback_`` hook): the output above already says what happened.
"""

from __future__ import annotations

from ..errors import ByreError
from ..protocol.cli_errors import CliErrorKind, classify

__all__ = ["CellInterrupted", "TurnFailed", "notebook_error_text"]

LOGIN_HELP = (
    "Claude Code is not logged in. In a notebook: set ANTHROPIC_API_KEY (e.g. in "
    "`%config Claude.env`, or in the environment Jupyter starts from), or run `claude` once "
    "in a terminal and log in there. `%claude doctor` checks the setup."
)


def notebook_error_text(text: str) -> str:
    """The CLI's error text in notebook terms, when we know better words for it (its words
    are for its own REPL)."""
    if classify(text) is CliErrorKind.NOT_LOGGED_IN:
        return LOGIN_HELP
    return text


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class TurnFailed(ByreError):
    """A ``%%claude`` turn failed; its output is recorded above the error."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mTurnFailed\x1b[0m: {_first_line(self.message)}"]


class CellInterrupted(KeyboardInterrupt):
    """■ stopped the turn (the conversation is kept); the cell ends as interrupted."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mInterrupted\x1b[0m: {self}"]
