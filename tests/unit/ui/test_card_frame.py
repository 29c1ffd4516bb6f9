"""Every live card stands on one frame (ui/card_frame.py): the same constructor, the same
answer path, every control the user can touch disabled once the card is answered, and
owned by the turn so the turn closes it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from support.asking import QUESTION

from byre_jupyter.session import Deny
from byre_jupyter.ui.card_frame import CardFrame
from byre_jupyter.ui.cards import make_card

REQUESTS = [
    ("Bash", {"command": "git push origin main"}),  # a scope menu too
    ("AskUserQuestion", QUESTION),
    ("ExitPlanMode", {"plan": "# p"}),
]


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _walk(widget: Any) -> Iterator[Any]:
    yield widget
    for child in getattr(widget, "children", ()):
        yield from _walk(child)


@pytest.mark.parametrize(("tool", "tool_input"), REQUESTS, ids=[r[0] for r in REQUESTS])
def test_a_rejected_card_answers_once_and_leaves_nothing_to_click(
    loop: asyncio.AbstractEventLoop, tool: str, tool_input: dict[str, Any]
) -> None:
    owned: list[Any] = []

    def own(widget: Any) -> Any:
        owned.append(widget)
        return widget

    card = make_card(tool, tool_input, loop=loop, own=own)
    assert isinstance(card, CardFrame)
    assert "byre-approval-card" in card.widget._dom_classes
    card.reject("stopped")
    card.reject("again")  # the first answer stands
    assert loop.run_until_complete(card.decision) == Deny("stopped")
    live = [
        w
        for w in _walk(card.widget)
        if hasattr(w, "disabled") and not w.disabled and w.__class__.__name__ != "HTML"
    ]
    assert live == []
    assert all(any(w is o for o in owned) for w in _walk(card.widget))
