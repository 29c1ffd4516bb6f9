"""Claude asks the user, not for permission: its questions and its plans.

The CLI routes ``AskUserQuestion``, ``ExitPlanMode`` and ``EnterPlanMode`` through
``can_use_tool`` like any tool, but what the user answers is not "may it run":

* ``AskUserQuestion``: the answers (ui/question_card.py). Headless, ``Claude.headless_questions``
  says what Claude is told: by default that nobody can answer and to proceed on its best
  judgement.
* ``ExitPlanMode``: the plan, approved or sent back with feedback (ui/plan_card.py). An approval
  switches the session's permission mode (the CLI's ``setMode`` update, and byre's session
  through its public ``set_permission_mode``: header, later turns, ``%claude sessions``).
  Headless, ``Claude.headless_plans`` says what happens; the plan is kept in the output either
  way.
* ``EnterPlanMode``: the generic card, worded plainly (ui/toolinfo.py); allowed, the session's
  mode becomes ``plan``.

Each handler gets the card from the turn's owner (the cell), so the card kinds live in
ui/cards.py and only the answer's meaning lives here. Every answer is written into the cell's
record.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from ..errors import ByreError
from ..session import Allow, Decision, Deny, PermissionRequest, Session
from ..ui.plan_card import NO_PLAN, approved_mode, plan_text, plans_folder, set_mode
from ..ui.question_card import answer_lines, answered_input, parse_questions
from ..ui.reveal import reveal
from .config import Claude

__all__ = ["ASKING", "HEADLESS_PLAN", "HEADLESS_QUESTION", "MODE_AFTER", "follow_mode"]

log = logging.getLogger(__name__)

#: The answer to each question of a headless run under ``headless_questions = "proceed"``.
HEADLESS_QUESTION = (
    "Nobody can answer in this run (headless, e.g. papermill): proceed on your best judgement, "
    "and say in your answer what you assumed."
)
HEADLESS_QUESTION_DENIED = (
    "byre_jupyter: nobody can answer questions in this run (headless), and "
    "Claude.headless_questions = 'deny'. Do not ask; the user can let Claude proceed on its "
    "best judgement with `%config Claude.headless_questions = 'proceed'`."
)
HEADLESS_PLAN = (
    "byre_jupyter: nobody can approve a plan in this run (headless), so plan mode goes on and "
    "nothing may be changed. Your plan is recorded in the notebook's output for the user to "
    "read. Finish by summarising it. (The user can approve plans of headless runs with "
    "`%config Claude.headless_plans = 'approve'`.)"
)


class Owner(Protocol):
    """The cell of the turn (``approvals.TurnOwner``)."""

    def card(
        self, tool_name: str, tool_input: Mapping[str, Any], tool_use_id: str | None = None
    ) -> Any: ...
    def notice(self, kind: str, text: str) -> None: ...


@runtime_checkable
class ShowsMode(Protocol):
    """A cell whose header shows the permission mode (``turns.TurnController``)."""

    def show_permission_mode(self, mode: str) -> None: ...


Handler = Callable[[Claude, Session, "Owner | None", PermissionRequest], Awaitable[Decision]]


def _note(owner: Owner | None, kind: str, text: str) -> None:
    if owner is not None:
        owner.notice(kind, text)


def _card(owner: Owner | None, request: PermissionRequest, shown: Mapping[str, Any]) -> Any:
    return owner.card(request.tool_name, shown, request.tool_use_id) if owner is not None else None


# -- questions -------------------------------------------------------------------------------


async def questions(
    config: Claude, session: Session, owner: Owner | None, request: PermissionRequest
) -> Decision:
    asked = parse_questions(request.input)
    card = _card(owner, request, request.input)
    if card is None:
        return _headless_questions(config, owner, request)
    decision: Decision = await card.decision
    if isinstance(decision, Allow) and asked:
        answers = (decision.updated_input or {}).get("answers")
        lines = answer_lines(asked, answers if isinstance(answers, Mapping) else {})
        _note(owner, "question", "Claude asked, you answered:\n" + "\n".join(lines))
    else:
        why = decision.message if isinstance(decision, Deny) else ""
        lines = answer_lines(asked, {})
        _note(owner, "question", f"Claude asked ({why or 'not answered'}):\n" + "\n".join(lines))
    return decision


def _headless_questions(
    config: Claude, owner: Owner | None, request: PermissionRequest
) -> Decision:
    asked = parse_questions(request.input)
    if config.headless_questions == "deny" or not asked:
        lines = answer_lines(asked, {})
        _note(
            owner,
            "question",
            "Claude asked; nobody can answer here (headless), denied "
            "(Claude.headless_questions):\n" + "\n".join(lines),
        )
        return Deny(HEADLESS_QUESTION_DENIED)
    answers = {q.text: HEADLESS_QUESTION for q in asked}
    _note(
        owner,
        "question",
        "Claude asked; nobody can answer here (headless), so Claude was told to proceed on "
        "its best judgement:\n" + "\n".join(reveal(q.text, one_line=True) for q in asked),
    )
    return Allow(updated_input=answered_input(request.input, answers), approved_by="headless")


# -- plans -------------------------------------------------------------------------------------


def _folder(session: Session) -> str:
    options = getattr(session, "options", None)
    env = getattr(options, "env", None)
    return plans_folder(env if isinstance(env, Mapping) else None)


async def _switch(session: Session, owner: Owner | None, mode: str) -> None:
    """byre's session follows the mode the CLI was told (header, later turns, sessions list)."""
    try:
        await session.set_permission_mode(mode)
    except ByreError as e:
        _note(owner, "error", f"permission mode change to {mode} refused: {e}")
        return
    if isinstance(owner, ShowsMode):
        owner.show_permission_mode(mode)
    _note(owner, "info", f"Permission mode: {mode}")


async def exit_plan(
    config: Claude, session: Session, owner: Owner | None, request: PermissionRequest
) -> Decision:
    plan = plan_text(request.input, _folder(session))
    # The card shows the plan it was given: read here, where the CLI's plans folder is known.
    shown = {**request.input, "plan": plan} if plan else dict(request.input)
    card = _card(owner, request, shown)
    # The record keeps the plan whatever the answer (after the card: not twice on screen).
    if card is None:
        _note(owner, "plan", plan or NO_PLAN)
        if config.headless_plans == "approve":
            _note(owner, "approved", "Claude's plan (headless policy: approve)")
            await _switch(session, owner, "default")
            return Allow(updated_permissions=(set_mode("default"),), approved_by="headless")
        _note(owner, "permission", "Claude's plan: nobody can approve it here (headless)")
        return Deny(HEADLESS_PLAN)
    decision: Decision = await card.decision
    _note(owner, "plan", plan or NO_PLAN)
    if isinstance(decision, Deny):
        _note(owner, "permission", f"Claude's plan: {decision.message}")
        return decision
    mode = approved_mode(decision) or "default"
    _note(owner, "approved", f"Claude's plan (continuing in {mode})")
    await _switch(session, owner, mode)
    # The CLI is sent its own input back (the plan it read), never the one shown.
    return Allow(updated_input=request.input, updated_permissions=decision.updated_permissions)


#: Tools whose approval puts the session in a mode: allowed, the CLI switches itself.
MODE_AFTER: dict[str, str] = {"EnterPlanMode": "plan"}


async def follow_mode(session: Session, owner: Owner | None, tool_name: str) -> None:
    """After an allowed ``tool_name``, byre's session takes the mode the CLI switched to."""
    mode = MODE_AFTER.get(tool_name)
    if mode is not None and session.permission_mode != mode:
        await _switch(session, owner, mode)


#: The tools whose requests ask the user something other than "may it run".
ASKING: dict[str, Handler] = {
    "AskUserQuestion": questions,
    "ExitPlanMode": exit_plan,
}
