"""Which live card answers a tool's permission request: one registry, keyed by tool name.

Most tools get the approval card (ui/approval_card.py). A tool that asks the *user* something
rather than for permission has a card of its own: Claude's questions (``AskUserQuestion``,
ui/question_card.py) and Claude's plan (``ExitPlanMode``, ui/plan_card.py). Every card has the
same face to the rest of the kernel (:class:`Card`): its widget, a future with the decision,
and :meth:`Card.reject` for Stop and the end of the turn; they build on one frame
(ui/card_frame.py), so a new card is its rows and its answer, and one line here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from byre_jupyter.ui.approval_card import ApprovalCard
from byre_jupyter.ui.card_frame import Card
from byre_jupyter.ui.plan_card import PlanCard
from byre_jupyter.ui.question_card import QuestionCard, parse_questions

__all__ = ["Card", "make_card"]


def _questions(
    tool_name: str, tool_input: Mapping[str, Any], loop: asyncio.AbstractEventLoop, own: Any
) -> Card:
    if not parse_questions(tool_input):  # nothing a person could answer: show the input whole
        return ApprovalCard(tool_name, tool_input, loop=loop, own=own)
    return QuestionCard(tool_name, tool_input, loop=loop, own=own)


def _plan(
    tool_name: str, tool_input: Mapping[str, Any], loop: asyncio.AbstractEventLoop, own: Any
) -> Card:
    return PlanCard(tool_name, tool_input, loop=loop, own=own)


_CARDS: dict[str, Callable[[str, Mapping[str, Any], asyncio.AbstractEventLoop, Any], Card]] = {
    "AskUserQuestion": _questions,
    "ExitPlanMode": _plan,
}


def make_card(
    tool_name: str,
    tool_input: Mapping[str, Any],
    *,
    loop: asyncio.AbstractEventLoop,
    own: Callable[[Any], Any] = lambda w: w,
) -> Card:
    """The live card for a request of ``tool_name``."""
    make = _CARDS.get(tool_name)
    if make is None:
        return ApprovalCard(tool_name, tool_input, loop=loop, own=own)
    return make(tool_name, tool_input, loop, own)
