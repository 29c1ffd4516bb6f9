"""The frame every live card in a cell is built on: one constructor, one way to make its
controls, one way to answer.

A card (ui/approval_card.py, ui/question_card.py, ui/plan_card.py) shows a tool call and waits
for the user's decision. What they share lives here, once: the constructor
``(tool_name, tool_input, *, loop, own)``, which sets the card up, asks it for its rows
(``_build``, the one thing each card writes) and frames them; the future ``decision`` (the
session's one decision type), the bordered box the live view recognises by its class, buttons
and text boxes laid out so a narrow notebook wraps them instead of cutting them, and the answer
path: a widget callback may run on another thread, so a click only hands its decision to the
loop; the first decision wins and every control is disabled after it. :meth:`CardFrame.reject`
answers deny without a click (Stop/■, or the turn ended).

``own`` is the turn's widget keeper (app/surfaces.py): every widget a card makes goes through
it, so the turn closes them all when it ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from byre_jupyter.session.permissions import Decision, Deny

__all__ = ["Card", "CardFrame"]

#: The card's outline; the live view also shows a waiting card by its class, not its colour.
_BORDER = "1px solid #d4a017"


class Card(Protocol):
    """A live card in a cell: ``await card.decision`` for the user's answer."""

    title: str
    widget: Any
    decision: asyncio.Future[Decision]

    def reject(self, reason: str) -> None: ...


class CardFrame:
    """The shared part of a live card; a subclass builds its rows in :meth:`_build`."""

    title: str = ""
    #: The card's own class beside ``byre-approval-card`` (the tests and the page find it).
    card_class: str = ""

    def __init__(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        loop: asyncio.AbstractEventLoop,
        own: Callable[[Any], Any] = lambda w: w,
    ) -> None:
        import ipywidgets as W

        self.tool_name = tool_name
        self.tool_input = dict(tool_input)
        self.decision: asyncio.Future[Decision] = loop.create_future()
        self.widget: Any = None
        self._W = W
        self._loop = loop
        self._own = own
        #: Everything the user can click or type in: disabled once the card is answered.
        self._controls: list[Any] = []
        self._frame(self._build())

    def _build(self) -> list[Any]:
        """The card's rows, top to bottom, made with the helpers below; it sets ``title``."""
        raise NotImplementedError

    # -- building ----------------------------------------------------------------------------

    def html(self, html: str) -> Any:
        """A block of HTML the card's whole width (the HTML is the caller's, escaped at the
        leaf). 100% plus the widget's default 2 px side margins would overflow the card."""
        W, own = self._W, self._own
        return own(W.HTML(html, layout=own(W.Layout(width="100%", margin="2px 0"))))

    def button(self, description: str, icon: str, style: str = "") -> Any:
        """A button sized to its label (the default width cuts the labels)."""
        W, own = self._W, self._own
        button = own(
            W.Button(
                description=description,
                button_style=style,
                icon=icon,
                layout=own(W.Layout(width="auto")),
            )
        )
        self._controls.append(button)
        return button

    def text_box(self, placeholder: str) -> Any:
        """A one-line text box on a row of its own under the buttons, the card's whole width.
        Its value syncs on blur, i.e. before the click that blurs it reaches the kernel: a
        per-key sync could still sit in the browser's buffer when the button's click arrives
        (the browser tests of a typed reason hold it to that)."""
        W, own = self._W, self._own
        box = own(
            W.Text(
                placeholder=placeholder,
                continuous_update=False,
                layout=own(W.Layout(width="auto", flex="1 1 100%", min_width="12em")),
            )
        )
        self._controls.append(box)
        return box

    def control(self, widget: Any) -> Any:
        """Another control of the card (a menu, a checkbox): owned, and disabled on answer."""
        owned = self._own(widget)
        self._controls.append(owned)
        return owned

    def row(self, children: Iterable[Any], *, centred: bool = True) -> Any:
        """Widgets side by side that wrap, so a narrow notebook shows every one of them."""
        W, own = self._W, self._own
        layout = (
            W.Layout(flex_flow="row wrap", align_items="center")
            if centred
            else W.Layout(flex_flow="row wrap")
        )
        return own(W.HBox(tuple(children), layout=own(layout)))

    def _frame(self, rows: Iterable[Any]) -> None:
        """The card's box around ``rows``: ``self.widget``. The live view makes any
        ``byre-approval-card`` an alertdialog named by its title and shows it while it waits."""
        W, own = self._W, self._own
        self.widget = own(
            W.VBox(
                tuple(rows),
                layout=own(W.Layout(border=_BORDER, padding="0.3em", margin="0.3em 0")),
            )
        )
        for name in ("byre-approval-card", self.card_class):
            if name:
                self.widget.add_class(name)

    # -- answering ---------------------------------------------------------------------------

    def settle(self, decision: Decision) -> None:  # any thread
        """Hand ``decision`` to the loop: widget callbacks may run on another thread."""
        self._loop.call_soon_threadsafe(self._resolve, decision)

    def _resolve(self, decision: Decision) -> None:
        if not self.decision.done():
            self.decision.set_result(decision)
        for control in self._controls:
            control.disabled = True

    def reject(self, reason: str) -> None:
        """Stop/■ or the turn ended: answer deny without a click."""
        self._resolve(Deny(reason))
