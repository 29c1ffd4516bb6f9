"""Whether Claude may run a piece of Python in the user's kernel: the policy and the approver.

The policy (``Claude.python_tool``: ``"allow"``, ``"ask"`` or ``"deny"``) is read at every call, so
``%config`` takes effect for the next tool call. Under ``"ask"`` an approver (the notebook UI)
decides each run; without one the run is denied, never silently allowed.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Union

__all__ = [
    "ApprovalDecision",
    "ApproveFn",
    "Policy",
    "PythonApproval",
    "decide",
]

log = logging.getLogger(__name__)

Policy = Literal["allow", "ask", "deny"]

ENABLE_HINT = (
    'The user can enable it with `%config Claude.python_tool = "ask"` (approve each run) '
    'or `%config Claude.python_tool = "allow"`.'
)


@dataclass(frozen=True)
class PythonApproval:
    """What the approver is asked about: one ``python`` tool call."""

    code: str


@dataclass(frozen=True)
class ApprovalDecision:
    """An approver's answer. ``approved_by`` ends up in :class:`PythonRun` (e.g. for the card)."""

    allowed: bool
    reason: str | None = None
    approved_by: str = "user"

    @classmethod
    def allow(cls, approved_by: str = "user") -> ApprovalDecision:
        return cls(True, None, approved_by)

    @classmethod
    def deny(cls, reason: str | None = None) -> ApprovalDecision:
        return cls(False, reason)


ApproveFn = Callable[
    [PythonApproval],
    Union[Awaitable[Union[ApprovalDecision, bool]], ApprovalDecision, bool],  # noqa: UP007
]
"""Decides one run; may be async. ``True``/``False`` stand for allow/deny without a reason."""


async def decide(
    code: str, policy: Callable[[], str], approve: ApproveFn | None
) -> ApprovalDecision:
    """The decision for one run under the current policy; a denial's ``reason`` is for Claude.

    Cancellation while the approver waits propagates (the run never starts).
    """
    mode = policy()
    if mode == "allow":
        return ApprovalDecision.allow("policy")
    if mode == "deny":
        return ApprovalDecision.deny(
            "The python tool is disabled in this kernel (Claude.python_tool = 'deny'). "
            + ENABLE_HINT
        )
    if mode != "ask":
        return ApprovalDecision.deny(
            f"Unknown Claude.python_tool policy {mode!r}; expected 'allow', 'ask' or 'deny'. "
            + ENABLE_HINT
        )
    if approve is None:
        return ApprovalDecision.deny(
            "Running Python needs the user's approval (Claude.python_tool = 'ask'), but no "
            "approver is attached to this session, so the run was denied. The user can allow "
            'runs without asking with `%config Claude.python_tool = "allow"`.'
        )
    try:
        answer = approve(PythonApproval(code))
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as e:
        log.warning("byre: the python approver failed", exc_info=True)
        return ApprovalDecision.deny(f"the approver failed ({type(e).__name__}: {e})")
    if isinstance(answer, ApprovalDecision) and answer.allowed:
        return answer
    if answer is True:
        return ApprovalDecision.allow()
    reason = answer.reason if isinstance(answer, ApprovalDecision) else None
    return ApprovalDecision.deny(
        f"The user declined to run this code: {reason}"
        if reason
        else "The user declined to run this code."
    )
