"""Whether Claude may use a kernel tool: the policy and the approver, one path for all four.

Two policies gate the tools: ``Claude.python_tool`` for ``python`` and ``Claude.read_tools`` for
``variables``, ``inspect`` and ``history`` (each ``"allow"``, ``"ask"`` or ``"deny"``). A policy is
read at every call, so ``%config`` takes effect for the next tool call. Under ``"ask"`` an
approver (the notebook UI) decides each call; without one the call is denied, never silently
allowed. ``edit_notebook`` follows the session's permission mode instead (``acceptEdits`` and
``bypassPermissions`` apply a batch without asking; docs/bridge.md). Every answer is the
session's one decision type, an ``Allow`` or a ``Deny`` (``session/permissions.py``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..session.permissions import Allow, Decision, Deny

__all__ = [
    "ApproveFn",
    "EditApproval",
    "EditOutcome",
    "Policy",
    "PythonApproval",
    "ReadApproval",
    "ToolApproval",
    "decide",
]

log = logging.getLogger(__name__)

Policy = Literal["allow", "ask", "deny"]


@dataclass(frozen=True)
class PythonApproval:
    """What the approver is asked about: one ``python`` tool call, or one cell ``run_cells``
    runs (its id and its place in the notebook, 1 for the first cell, so the card names it)."""

    code: str
    cell: str | None = None
    position: int | None = None

    @property
    def tool(self) -> str:
        return "python" if self.cell is None else "run_cells"

    @property
    def input(self) -> Mapping[str, Any]:
        if self.cell is None:
            return {"code": self.code}
        return {"cell": self.cell, "position": self.position, "code": self.code}


@dataclass(frozen=True)
class ReadApproval:
    """What the approver is asked about: one ``variables``, ``inspect`` or ``history`` call."""

    tool: str
    input: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class EditApproval:
    """What the approver is asked about: one ``edit_notebook`` batch, each touched cell's
    source before and after (``tools/notebook_edit.py``, ``review_input``)."""

    input: Mapping[str, Any]

    @property
    def tool(self) -> str:
        return "edit_notebook"


ToolApproval = Union[PythonApproval, ReadApproval, EditApproval]  # noqa: UP007


@dataclass(frozen=True)
class _Gate:
    """The words a denial uses for one policy trait."""

    trait: str
    what: str
    action: str


_PYTHON = _Gate("python_tool", "The python tool", "Running Python")
_READ = _Gate("read_tools", "The read tools (variables, inspect, history)", "Reading the kernel")
_EDIT = _Gate("permission_mode", "Editing the notebook", "Editing the notebook's cells")


def _gate(request: ToolApproval) -> _Gate:
    if type(request) is EditApproval:
        return _EDIT
    return _PYTHON if type(request) is PythonApproval else _READ


def enable_hint(trait: str) -> str:
    return (
        f'The user can enable it with `%config Claude.{trait} = "ask"` (approve each call) '
        f'or `%config Claude.{trait} = "allow"`.'
    )


ApproveFn = Callable[
    [ToolApproval],
    Union[Awaitable[Union[Decision, bool]], Decision, bool],  # noqa: UP007
]
"""Decides one call; may be async. ``True``/``False`` stand for allow/deny without a reason.
An ``Allow``'s ``approved_by`` ends up in :class:`PythonRun` (e.g. for the card)."""


EditOutcome = Callable[[Mapping[str, Any], Decision, Union[str, None]], None]  # noqa: UP007
"""What became of an ``edit_notebook`` batch the user was asked about: its review input, the
decision, and why it did not apply (None: it applied)."""


async def decide(
    request: ToolApproval, policy: Callable[[], str], approve: ApproveFn | None
) -> Decision:
    """The decision for one call under the current policy; a denial's ``message`` is for
    Claude.

    Cancellation while the approver waits propagates (the call never starts).
    """
    gate = _gate(request)
    mode = policy()
    if mode == "allow":
        return Allow(approved_by="policy")
    if mode == "deny":
        return Deny(
            f"{gate.what} is disabled in this kernel (Claude.{gate.trait} = 'deny'). "
            + enable_hint(gate.trait)
        )
    if mode != "ask":
        return Deny(
            f"Unknown Claude.{gate.trait} policy {mode!r}; expected 'allow', 'ask' or 'deny'. "
            + enable_hint(gate.trait)
        )
    if approve is None:
        return Deny(
            f"{gate.action} needs the user's approval (Claude.{gate.trait} = 'ask'), but no "
            "approver is attached to this session, so the call was denied. The user can allow "
            f'it without asking with `%config Claude.{gate.trait} = "allow"`.'
        )
    try:
        answer = approve(request)
        if inspect.isawaitable(answer):
            answer = await answer
    except Exception as e:
        log.warning("byre: the %s approver failed", request.tool, exc_info=True)
        return Deny(f"the approver failed ({type(e).__name__}: {e})")
    if isinstance(answer, Allow):
        return answer
    if answer is True:
        return Allow()
    reason = answer.message if isinstance(answer, Deny) else None
    declined = (
        "The user declined to run this code"
        if gate is _PYTHON
        else f"The user declined this {request.tool} call"
    )
    return Deny(f"{declined}: {reason}" if reason else f"{declined}.")
