"""Approvals: one place decides every permission request (card, standing answer, headless)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

from byre_jupyter.app.approvals import Approvals
from byre_jupyter.app.config import Claude
from byre_jupyter.ui.approval_card import ApprovalDecision


class Cell:
    """A turn's owner whose card the user answers with ``answer``."""

    def __init__(self, answer: ApprovalDecision | None) -> None:
        self.answer = answer
        self.notices: list[tuple[str, str]] = []
        self.cards = 0

    def card(self, tool_name: str, tool_input: Mapping[str, Any]) -> Any:
        if self.answer is None:
            return None  # nobody can click (headless)
        self.cards += 1
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.answer)
        return SimpleNamespace(decision=future)

    def notice(self, kind: str, text: str) -> None:
        self.notices.append((kind, text))


def approvals(**traits: Any) -> Approvals:
    return Approvals(Claude(**traits), sessions=None, shell=None, runner=None)  # type: ignore[arg-type]


def session(conversation: str) -> Any:
    return SimpleNamespace(session_id=conversation)


BASH = {"command": "ls"}
LS = "Run a shell command: ls"  # the card's summary: our words, then the command


async def test_always_holds_for_the_conversation_and_ends_with_it() -> None:
    a, one, other = approvals(), session("conv-1"), session("conv-2")
    cell = Cell(ApprovalDecision("always"))
    assert (await a.ask(one, cell, "Bash", BASH)).allowed
    again = Cell(ApprovalDecision("deny"))
    assert (await a.ask(one, again, "Bash", BASH)).allowed and again.cards == 0  # no card
    assert again.notices == [
        ("approved", "Run a shell command: ls (always allowed in this session)")
    ]
    assert a.allowed(one) == {"Bash"} and a.allowed(other) == set()
    assert not (await a.ask(other, again, "Bash", BASH)).allowed  # another conversation asks
    assert a.clear("conv-1") == {"Bash"} and a.allowed(one) == set()


async def test_a_branch_carries_the_standing_answers_of_where_it_came_from() -> None:
    a = approvals()
    await a.ask(session("old"), Cell(ApprovalDecision("always")), "Bash", BASH)
    await a.ask(session("base"), Cell(ApprovalDecision("always")), "Write", {"file_path": "x"})
    a.carry_over(["base", "old", None], "fork")
    assert a.allowed(session("fork")) == {"Bash", "Write"}
    a.carry_over(["nothing"], "empty")
    assert a.allowed(session("empty")) == set()


async def test_nobody_to_click_follows_the_headless_policy_and_says_so() -> None:
    cell = Cell(None)
    assert await approvals().ask(session("c"), cell, "Bash", BASH) is None  # caller denies
    assert cell.notices[-1][0] == "permission" and "headless" in cell.notices[-1][1]
    allowing = approvals(headless_permission="allow")
    assert (await allowing.ask(session("c"), cell, "Bash", BASH)).allowed
    assert cell.notices[-1] == ("approved", f"{LS} (headless policy: allow)")
