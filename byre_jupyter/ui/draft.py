"""The streaming draft: a turn shown without widgets while it runs (``Claude.live = False``,
``BYRE_LIVE=0``, a frontend that sends no ``cellId``, nbclient).

What the draft publishes is sanitized HTML (:func:`render_markdown`, nh3) and plain text, never
``text/markdown``: JupyterLab renders a trusted Markdown output with marked and does not
sanitize it, so any raw HTML a Markdown draft kept would run (docs/security.md, "Markdown we
publish"). The source is the turn's Markdown with model text as written
(``turn_markdown(view, inert=False)``), which only our renderer reads.

Refreshing the whole turn a few times a second would cost iopub bytes that grow with the square
of the answer (56 kB for a 1.5 kB answer), so the draft shows a window: its one slot holds only
the growing tail, and when the tail is long enough its finished prefix leaves the window (a
line says how many characters are above it) and is not sent again. One slot, because a cell
cannot lose an output: a slot emptied at the end stays in the saved notebook as an empty
``display_data`` (nbclient and Lab update it in place by its display id), and
``clear_output`` would also wipe what else the cell shows. A window that starts inside a code
fence (or a ``$$`` block) opens it again with the same opener, as :func:`verbatim_spans`
reads them. Pure module: the surface (``app/surfaces.py``) publishes, and at the end the
record takes the slot.
"""

from __future__ import annotations

from byre_jupyter.ui.markdown import MATH_PROCESS, Verbatim, open_verbatim, render_markdown
from byre_jupyter.ui.record import turn_markdown
from byre_jupyter.ui.style import TURN_BORDER, TURN_PADDING
from byre_jupyter.ui.viewmodel import TurnView

__all__ = ["DRAFT_PART_CHARS", "Draft", "draft_bundle"]

#: The window moves on by at least this much; the tail it shows stays below twice it.
DRAFT_PART_CHARS = 600

# The turn's left bar, without the turn's margin (the record brings its own).
_PART_STYLE = f"border-left:{TURN_BORDER};padding:{TURN_PADDING}"


def draft_bundle(markdown: str) -> dict[str, str]:
    """The draft's window: ``markdown`` (model text as written) as sanitized HTML, and as
    plain text."""
    html = render_markdown(markdown)
    return {
        "text/html": f'<div class="byre-draft {MATH_PROCESS}" style="{_PART_STYLE}">{html}</div>',
        "text/plain": markdown,
    }


def _draft_cut(text: str) -> int:
    """Where the prefix of ``text`` that leaves the window ends (0: keep it all): after a
    paragraph, else a line, else a word, with at least ``DRAFT_PART_CHARS`` left to show."""
    if len(text) < 2 * DRAFT_PART_CHARS:
        return 0
    for sep in ("\n\n", "\n", " "):
        cut = text.rfind(sep, DRAFT_PART_CHARS, len(text) - DRAFT_PART_CHARS)
        if cut >= 0:
            return cut + len(sep)
    return 0


def _opener(span: Verbatim | None) -> str:
    return f"{' ' * span.indent}{span.opener}{span.info}\n" if span else ""


class Draft:
    """The window of one turn's draft; :meth:`refresh` says what to publish now."""

    def __init__(self, view: TurnView) -> None:
        self.view = view
        #: Characters of the draft's body above the window (sent before, never again).
        self.above = 0

    def refresh(self) -> dict[str, str]:
        body, _, footer = turn_markdown(self.view, inert=False).rstrip("\n").rpartition("\n\n")
        self.above += _draft_cut(body[self.above :])
        reopen = _opener(open_verbatim(body[: self.above]))
        note = f"*… {self.above:,} characters above; the whole answer shows when it ends.*\n\n"
        head = note if self.above else ""
        return draft_bundle(f"{head}{reopen}{body[self.above :]}\n\n{footer}\n")
