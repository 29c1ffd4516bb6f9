"""Claude's questions and plans in the approvals: what the answer means, the headless traits,
the session's mode after a plan, and the record."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from byre_jupyter.app.approvals import Approvals
from byre_jupyter.app.asking import HEADLESS_PLAN, HEADLESS_QUESTION
from byre_jupyter.app.config import Claude
from byre_jupyter.errors import ByreError
from byre_jupyter.session import Allow, Decision, Deny, PermissionRequest
from byre_jupyter.ui.plan_card import approved_mode, set_mode

QUESTION = {
    "questions": [
        {
            "question": "Which colour?",
            "header": "Colour",
            "multiSelect": False,
            "options": [{"label": "Red", "description": ""}, {"label": "Blue", "description": ""}],
        }
    ]
}


class Shown:
    """The turn's cell: its card answers ``answer`` (None: nobody can click); it keeps what
    each card was given, its notices and the mode its header shows."""

    def __init__(self, answer: Decision | None) -> None:
        self.answer = answer
        self.shown: list[Mapping[str, Any]] = []
        self.notices: list[tuple[str, str]] = []
        self.header_mode: str | None = None

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Any:
        if self.answer is None:
            return None
        self.shown.append(tool_input)
        future = asyncio.get_running_loop().create_future()
        future.set_result(self.answer)
        return SimpleNamespace(decision=future)

    def notice(self, kind: str, text: str) -> None:
        self.notices.append((kind, text))

    def show_permission_mode(self, mode: str) -> None:
        self.header_mode = mode

    def text(self, kind: str) -> str:
        return "\n".join(t for k, t in self.notices if k == kind)


class FakeSession:
    def __init__(self, mode: str = "plan", env: Mapping[str, str] | None = None) -> None:
        self.session_id = "conv-1"
        self.permission_mode = mode
        self.options = SimpleNamespace(cwd=None, env=dict(env or {}))
        self.refuse = False

    async def set_permission_mode(self, mode: str) -> None:
        if self.refuse:
            raise ByreError("the CLI said no")
        self.permission_mode = mode


def approvals(**traits: Any) -> Approvals:
    return Approvals(Claude(**traits), sessions=None, shell=None, runner=None)  # type: ignore[arg-type]


def request(tool: str, tool_input: Mapping[str, Any]) -> PermissionRequest:
    return PermissionRequest(tool, tool_input, tool_use_id="toolu_1")


async def test_an_answered_question_goes_back_as_is_and_is_recorded() -> None:
    answer = Allow(updated_input={**QUESTION, "answers": {"Which colour?": "Blue"}})
    cell = Shown(answer)
    decision = await approvals().decide(
        FakeSession("default"), cell, request("AskUserQuestion", QUESTION)
    )  # type: ignore[arg-type]
    assert decision == answer  # the answers reach the CLI untouched
    assert cell.text("question") == "Claude asked, you answered:\nWhich colour? → Blue"


async def test_a_question_not_answered_is_recorded_as_such() -> None:
    cell = Shown(Deny("Stopped by the user."))
    decision = await approvals().decide(
        FakeSession("default"), cell, request("AskUserQuestion", QUESTION)
    )  # type: ignore[arg-type]
    assert isinstance(decision, Deny)
    assert "Stopped by the user." in cell.text("question") and "(no answer)" in cell.text(
        "question"
    )


async def test_headless_questions_proceed_or_deny() -> None:
    cell = Shown(None)
    decision = await approvals().decide(
        FakeSession("default"), cell, request("AskUserQuestion", QUESTION)
    )  # type: ignore[arg-type]
    assert isinstance(decision, Allow) and decision.approved_by == "headless"
    assert decision.updated_input == {**QUESTION, "answers": {"Which colour?": HEADLESS_QUESTION}}
    assert "best judgement" in cell.text("question") and "Which colour?" in cell.text("question")
    cell = Shown(None)
    a = approvals(headless_questions="deny")
    decision = await a.decide(FakeSession("default"), cell, request("AskUserQuestion", QUESTION))  # type: ignore[arg-type]
    assert isinstance(decision, Deny) and "headless_questions" in decision.message


async def test_an_approved_plan_switches_the_session_and_the_header() -> None:
    session = FakeSession("plan")
    cell = Shown(Allow(updated_input={"plan": "p"}, updated_permissions=(set_mode("acceptEdits"),)))
    tool_input = {"plan": "# P", "planFilePath": "/x/plans/p.md"}
    decision = await approvals().decide(session, cell, request("ExitPlanMode", tool_input))  # type: ignore[arg-type]
    assert isinstance(decision, Allow) and approved_mode(decision) == "acceptEdits"
    assert decision.updated_input == tool_input  # the CLI's own input, not what the card shows
    assert session.permission_mode == "acceptEdits" and cell.header_mode == "acceptEdits"
    assert cell.text("plan") == "# P" and "continuing in acceptEdits" in cell.text("approved")


async def test_a_refused_switch_says_so_and_keeps_the_header() -> None:
    session = FakeSession("plan")
    session.refuse = True
    cell = Shown(Allow(updated_permissions=(set_mode("default"),)))
    decision = await approvals().decide(session, cell, request("ExitPlanMode", {"plan": "p"}))  # type: ignore[arg-type]
    assert decision.allowed and session.permission_mode == "plan" and cell.header_mode is None
    assert "refused: the CLI said no" in cell.text("error")


async def test_the_plan_file_is_read_in_the_clis_home(tmp_path: Path) -> None:
    plans = tmp_path / "home" / ".claude" / "plans"
    plans.mkdir(parents=True)
    (plans / "plan-x.md").write_text("# From the file")
    session = FakeSession("plan", env={"HOME": str(tmp_path / "home")})
    cell = Shown(Deny("keep going"))
    tool_input = {"planFilePath": str(plans / "plan-x.md")}
    decision = await approvals().decide(session, cell, request("ExitPlanMode", tool_input))  # type: ignore[arg-type]
    assert decision == Deny("keep going") and session.permission_mode == "plan"
    assert cell.shown == [{**tool_input, "plan": "# From the file"}]
    assert cell.text("plan") == "# From the file"


async def test_headless_plans_are_denied_or_approved_and_recorded() -> None:
    session, cell = FakeSession("plan"), Shown(None)
    decision = await approvals().decide(session, cell, request("ExitPlanMode", {"plan": "# P"}))  # type: ignore[arg-type]
    assert decision == Deny(HEADLESS_PLAN) and session.permission_mode == "plan"
    assert cell.text("plan") == "# P"
    session, cell = FakeSession("plan"), Shown(None)
    a = approvals(headless_plans="approve")
    decision = await a.decide(session, cell, request("ExitPlanMode", {}))  # type: ignore[arg-type]
    assert decision.allowed and approved_mode(decision) == "default"
    assert session.permission_mode == "default" and "Claude wrote no plan" in cell.text("plan")


async def test_entering_plan_mode_is_asked_plainly_and_followed() -> None:
    session, cell = FakeSession("default"), Shown(Allow())
    decision = await approvals().decide(session, cell, request("EnterPlanMode", {}))  # type: ignore[arg-type]
    assert decision.allowed and session.permission_mode == "plan"
    approved = cell.text("approved")
    assert "Claude wants to plan before changing anything: switch to plan mode?" in approved
