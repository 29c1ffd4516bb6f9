"""Claude's questions and plans through the real CLI (2.1.328) and the scripted API.

The cards are the real ones (ui/cards.py), answered as a click would, and the approvals are
the kernel's (app/approvals.py): what the model reads is what the scripted API receives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.asking import QUESTION

from byre_jupyter import Session
from byre_jupyter.app.approvals import Approvals
from byre_jupyter.app.asking import HEADLESS_PLAN, HEADLESS_QUESTION
from byre_jupyter.app.config import Claude
from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse
from byre_jupyter.session import PermissionRequest
from byre_jupyter.ui.cards import Card, make_card
from byre_jupyter.ui.plan_card import PlanCard
from byre_jupyter.ui.question_card import QuestionCard

pytestmark = [pytest.mark.cli]

MakeSession = Callable[..., Session]
TIMEOUT = 90.0

PLAN = "# The plan\n\n1. Read the data\n2. Write `report.md`"


class Cell:
    """The turn's cell: real cards, answered by ``click`` as soon as they are shown (None:
    nobody can click, a headless run)."""

    def __init__(self, click: Callable[[Card], None] | None) -> None:
        self.click = click
        self.cards: list[Card] = []
        self.notices: list[tuple[str, str]] = []

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Card | None:
        if self.click is None:
            return None
        card = make_card(tool_name, tool_input, loop=asyncio.get_running_loop())
        self.cards.append(card)
        asyncio.get_running_loop().call_soon(self.click, card)
        return card

    def notice(self, kind: str, text: str) -> None:
        self.notices.append((kind, text))

    def texts(self, kind: str) -> str:
        return "\n".join(text for k, text in self.notices if k == kind)


def wired(
    make_session: MakeSession, cell: Cell, mode: str, **traits: Any
) -> tuple[Session, list[PermissionRequest]]:
    """A session whose can_use_tool is the kernel's approvals, cards in ``cell``."""
    approvals = Approvals(Claude(**traits), sessions=None, shell=None, runner=None)  # type: ignore[arg-type]
    asked: list[PermissionRequest] = []
    holder: list[Session] = []

    async def decide(request: PermissionRequest) -> Any:
        asked.append(request)
        return await approvals.decide(holder[0], cell, request)

    holder.append(make_session(permission_mode=mode, can_use_tool=decide))
    return holder[0], asked


def result_of(api: ScriptedAPI, tool: str) -> dict[str, Any]:
    for req in reversed(api.requests):
        for result in req.last_tool_results:
            if result["tool_name"] == tool:
                return dict(result)
    raise AssertionError(f"no {tool} result reached the model")


def has_result(tool: str) -> Callable[[ScriptedRequest], bool]:
    return lambda r: any(t["tool_name"] == tool for t in r.last_tool_results)


def script_question(api: ScriptedAPI) -> None:
    api.on("ask me", Reply(ToolUse("AskUserQuestion", QUESTION)), times=1)
    api.on(has_result("AskUserQuestion"), Reply(Text("Thanks.")))


def script_plan(api: ScriptedAPI, then: Reply | None = None) -> None:
    """Plan as Claude does: Write the plan file the reminder names, then ExitPlanMode."""

    def write(req: ScriptedRequest) -> Reply:
        assert req.plan_file, "the plan-mode reminder names no plan file"
        return Reply(ToolUse("Write", {"file_path": req.plan_file, "content": PLAN}))

    api.on("plan it", write, times=1)
    api.on(has_result("ExitPlanMode"), then or Reply(Text("Planned.")))
    api.on(has_result("Write"), Reply(ToolUse("ExitPlanMode", {})))


# -- questions --------------------------------------------------------------------------------


def pick_blue(card: Card) -> None:
    assert isinstance(card, QuestionCard)
    card.option_buttons["Which colour?"][1].value = True  # one click answers


def write_other(card: Card) -> None:
    assert isinstance(card, QuestionCard)
    card.others["Which colour?"].value = "Green, like grass"
    card.answer_button.click()


@pytest.mark.parametrize(
    ("click", "answer"), [(pick_blue, "Blue"), (write_other, "Green, like grass")]
)
async def test_a_question_answered_in_the_card_reaches_claude(
    api: ScriptedAPI, make_session: MakeSession, click: Callable[[Card], None], answer: str
) -> None:
    script_question(api)
    cell = Cell(click)
    session, asked = wired(make_session, cell, "default")
    result = await asyncio.wait_for(session.query("ask me"), TIMEOUT)
    assert result.text == "Thanks.", result
    assert [r.tool_name for r in asked] == ["AskUserQuestion"]
    # The finding: a plain allow made the CLI tell Claude "The user did not answer".
    tool_result = result_of(api, "AskUserQuestion")
    assert not tool_result["is_error"]
    assert f'"Which colour?"="{answer}"' in tool_result["text"], tool_result
    assert f"Which colour? → {answer}" in cell.texts("question")  # the record


async def test_headless_questions_proceed_on_claudes_judgement(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    script_question(api)
    cell = Cell(None)
    session, _ = wired(make_session, cell, "default")
    await asyncio.wait_for(session.query("ask me"), TIMEOUT)
    tool_result = result_of(api, "AskUserQuestion")
    assert not tool_result["is_error"] and HEADLESS_QUESTION in tool_result["text"]
    assert "nobody can answer here (headless)" in cell.texts("question")
    assert "Which colour?" in cell.texts("question")


async def test_headless_questions_deny(api: ScriptedAPI, make_session: MakeSession) -> None:
    script_question(api)
    cell = Cell(None)
    session, _ = wired(make_session, cell, "default", headless_questions="deny")
    await asyncio.wait_for(session.query("ask me"), TIMEOUT)
    tool_result = result_of(api, "AskUserQuestion")
    assert tool_result["is_error"] and "headless_questions" in tool_result["text"]
    assert "denied" in cell.texts("question")


# -- plans ------------------------------------------------------------------------------------


def approve_accepting_edits(card: Card) -> None:
    assert isinstance(card, PlanCard)
    card.mode_menu.value = "acceptEdits"
    card.approve.click()


async def test_a_plan_shown_and_approved_switches_the_mode(
    api: ScriptedAPI, make_session: MakeSession, workdir: Path
) -> None:
    target = workdir / "report.md"
    # Approved, Claude goes on to write a file: under acceptEdits the CLI does not ask.
    script_plan(api, then=Reply(ToolUse("Write", {"file_path": str(target), "content": "r"})))
    api.on(
        lambda r: any(
            t["tool_name"] == "Write" and "report.md" in t["text"] for t in r.last_tool_results
        ),
        Reply(Text("Done.")),
    )
    cell = Cell(approve_accepting_edits)
    session, asked = wired(make_session, cell, "plan")
    result = await asyncio.wait_for(session.query("plan it"), TIMEOUT)
    assert result.text == "Done.", result
    (card,) = cell.cards
    assert isinstance(card, PlanCard) and card.plan == PLAN  # the plan, as the file holds it
    assert "User has approved your plan" in result_of(api, "ExitPlanMode")["text"]
    assert session.permission_mode == "acceptEdits"  # byre's session: header, sessions list
    assert target.read_text() == "r"
    assert [r.tool_name for r in asked] == ["ExitPlanMode"]  # the CLI's mode changed too
    assert PLAN in cell.texts("plan") and "continuing in acceptEdits" in cell.texts("approved")


async def test_keep_planning_sends_the_feedback(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    script_plan(api)

    def keep(card: Card) -> None:
        assert isinstance(card, PlanCard)
        card.feedback.value = "split step 2 in two"
        card.keep.click()

    cell = Cell(keep)
    session, _ = wired(make_session, cell, "plan")
    await asyncio.wait_for(session.query("plan it"), TIMEOUT)
    tool_result = result_of(api, "ExitPlanMode")
    assert tool_result["is_error"] and "split step 2 in two" in tool_result["text"]
    assert session.permission_mode == "plan"


async def test_headless_plans_are_recorded_and_not_approved(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    script_plan(api)
    cell = Cell(None)
    session, _ = wired(make_session, cell, "plan")
    await asyncio.wait_for(session.query("plan it"), TIMEOUT)
    tool_result = result_of(api, "ExitPlanMode")
    assert tool_result["is_error"] and HEADLESS_PLAN in tool_result["text"]
    assert PLAN in cell.texts("plan") and session.permission_mode == "plan"
    assert "nobody can approve it here (headless)" in cell.texts("permission")


# -- the demo's rules (scripted/demo.py) --------------------------------------------------------


async def test_the_demo_asks_and_plans_with_the_real_cli(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    """The offline demo can show a question card and a plan card: its rules make calls the
    real CLI accepts (AskUserQuestion's schema is checked) and find the plan file."""
    from byre_jupyter.scripted.demo import PLAN_MD, demo_script

    api.script = demo_script()

    def answer_first(card: Card) -> None:
        assert isinstance(card, QuestionCard)
        card.option_buttons["Which chart should the report use?"][1].value = True
        card.checkboxes["What should the report include?"][2].value = True
        card.answer_button.click()

    cell = Cell(answer_first)
    session, _ = wired(make_session, cell, "default")
    await asyncio.wait_for(session.query("choose for me"), TIMEOUT)
    asked = result_of(api, "AskUserQuestion")
    assert not asked["is_error"] and '"What should the report include?"="Caveats"' in asked["text"]

    # Outside plan mode the demo calls EnterPlanMode: CLI 2.1.328 enters plan mode without
    # asking the host (measured), then the demo writes its plan and asks to exit.
    cell.click = lambda card: card.reject("not now")
    await asyncio.wait_for(session.query("plan the report"), TIMEOUT)
    assert not result_of(api, "EnterPlanMode")["is_error"]
    (_question, plan) = cell.cards
    assert isinstance(plan, PlanCard) and plan.plan == PLAN_MD
    assert result_of(api, "ExitPlanMode")["text"] == "not now"
