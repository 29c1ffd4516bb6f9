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

__all__ = ["CellInterrupted", "TurnFailed", "notebook_error_text"]

LOGIN_HELP = (
    "Claude Code is not logged in. In a notebook: set ANTHROPIC_API_KEY (e.g. in "
    "`%config Claude.env`, or in the environment Jupyter starts from), or run `claude` once "
    "in a terminal and log in there. `%claude doctor` checks the setup."
)

#: What the CLI says (its words are for its own REPL) → what to do in a notebook.
_TRANSLATIONS = (
    (("not logged in", "/login", "invalid api key", "authentication_error"), LOGIN_HELP),
)


def notebook_error_text(text: str) -> str:
    """The CLI's error text in notebook terms, when we know better words for it."""
    lowered = text.lower()
    for needles, better in _TRANSLATIONS:
        if any(n in lowered for n in needles):
            return better
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
