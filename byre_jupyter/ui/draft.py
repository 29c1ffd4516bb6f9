"""The streaming draft: a turn shown without widgets while it runs (``Claude.live = False``,
``BYRE_LIVE=0``, a frontend that sends no ``cellId``, nbclient).

What the draft publishes is sanitized HTML (:func:`render_markdown`, nh3) and plain text, never
``text/markdown``: JupyterLab renders a trusted Markdown output with marked and does not
sanitize it, so any raw HTML a Markdown draft kept would run (docs/security.md, "Markdown we
publish"). The source is the turn's Markdown with model text as written
(``turn_markdown(view, inert=False)``), which only our renderer reads.

Refreshing the whole turn a few times a second would cost iopub bytes that grow with the square
of the answer (56 kB for a 1.5 kB answer), so the draft is sent in parts: the slot being
refreshed holds only the growing tail, and when the tail is long enough its finished prefix
stays where it is and a new slot below takes the rest. A part cut inside a code fence (or a
``$$`` block) closes it, and the next part opens it again with the same opener, as
:func:`verbatim_spans` reads them. Pure module: the surface (``app/surfaces.py``) publishes.
"""

from __future__ import annotations

from dataclasses import dataclass

from byre_jupyter.ui.markdown import MATH_PROCESS, Verbatim, open_verbatim, render_markdown
from byre_jupyter.ui.record import turn_markdown
from byre_jupyter.ui.style import TURN_BORDER, TURN_PADDING
from byre_jupyter.ui.viewmodel import TurnView

__all__ = ["DRAFT_PART_CHARS", "Draft", "DraftUpdate", "draft_bundle"]

#: A finished part of the draft is at least this long; the refreshed tail stays below twice it.
DRAFT_PART_CHARS = 600

# The turn's left bar on every part, without the turn's margin: the parts read as one turn.
_PART_STYLE = f"border-left:{TURN_BORDER};padding:{TURN_PADDING}"


def draft_bundle(markdown: str) -> dict[str, str]:
    """One part of the draft: ``markdown`` (model text as written) as sanitized HTML, and
    as plain text."""
    html = render_markdown(markdown)
    return {
        "text/html": f'<div class="byre-draft {MATH_PROCESS}" style="{_PART_STYLE}">{html}</div>',
        "text/plain": markdown,
    }


@dataclass(frozen=True)
class DraftUpdate:
    """What one refresh publishes: ``finished`` parts, each replacing the slot being refreshed
    before a new slot is opened below it, then the ``tail`` in the last slot."""

    finished: tuple[dict[str, str], ...]
    tail: dict[str, str]


def _draft_cut(text: str) -> int:
    """Where the finished prefix of ``text`` ends (0: keep it all in the tail): after a
    paragraph, else a line, else a word."""
    if len(text) < 2 * DRAFT_PART_CHARS:
        return 0
    for sep in ("\n\n", "\n", " "):
        cut = text.rfind(sep, DRAFT_PART_CHARS)
        if cut >= DRAFT_PART_CHARS:
            return cut + len(sep)
    return 0


def _opener(span: Verbatim | None) -> str:
    return f"{' ' * span.indent}{span.opener}{span.info}\n" if span else ""


def _closer(span: Verbatim | None) -> str:
    return f"\n{' ' * span.indent}{span.opener}" if span else ""


class Draft:
    """The parts of one turn's draft; :meth:`refresh` says what to publish now."""

    def __init__(self, view: TurnView) -> None:
        self.view = view
        #: Characters of the draft's body already sent as finished parts.
        self.sent = 0

    def refresh(self) -> DraftUpdate:
        body, _, footer = turn_markdown(self.view, inert=False).rstrip("\n").rpartition("\n\n")
        tail = body[self.sent :]
        reopen = _opener(open_verbatim(body[: self.sent]))
        finished: list[dict[str, str]] = []
        cut = _draft_cut(tail)
        if cut:
            still_open = open_verbatim(body[: self.sent + cut])
            finished.append(draft_bundle(reopen + tail[:cut].rstrip() + _closer(still_open)))
            self.sent += cut
            tail = tail[cut:]
            reopen = _opener(still_open)
        return DraftUpdate(tuple(finished), draft_bundle(f"{reopen}{tail}\n\n{footer}\n"))
