"""Whether Claude may use a kernel tool: the policy and the approver, one path for all four.

Two policies gate the tools: ``Claude.python_tool`` for ``python`` and ``Claude.read_tools`` for
the read tools (each ``"allow"``, ``"ask"`` or ``"deny"``; which tools read is each tool record's
``gate``, ``tools/spec.py``, and the words name them from there: :func:`read_gate`). A policy is
read at every call, so ``%config`` takes effect for the next tool call. Under ``"ask"`` an
approver (the notebook UI) decides each call; without one the call is denied, never silently
allowed. ``edit_notebook`` follows the session's permission mode instead (``acceptEdits`` and
``bypassPermissions`` apply a batch without asking; docs/bridge.md). Every answer is the
session's one decision type, an ``Allow`` or a ``Deny`` (``session/permissions.py``).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
    "read_gate",
    "tool_list",
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
    """What the approver is asked about: one call of a read tool (``inspect``, ``notebook``)."""

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
class Gate:
    """The words a denial uses for one policy trait."""

    trait: str
    what: str
    action: str


_PYTHON = Gate("python_tool", "The python tool", "Running Python")
_EDIT = Gate("permission_mode", "Editing the notebook", "Editing the notebook's cells")


def tool_list(names: Sequence[str]) -> str:
    """``a, b and c``: tool names as the gate's words and the trait's help list them."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def read_gate(names: Sequence[str]) -> Gate:
    """The read tools' gate, naming ``names`` (the records gated by ``Claude.read_tools``)."""
    listed = f" ({tool_list(names)})" if names else ""
    return Gate("read_tools", f"The read tools{listed}", "Reading the kernel")


def _gate(request: ToolApproval, read_tools: Sequence[str]) -> Gate:
    if type(request) is EditApproval:
        return _EDIT
    return _PYTHON if type(request) is PythonApproval else read_gate(read_tools)


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
    request: ToolApproval,
    policy: Callable[[], str],
    approve: ApproveFn | None,
    read_tools: Sequence[str] = (),
) -> Decision:
    """The decision for one call under the current policy; a denial's ``message`` is for
    Claude, and names the ``read_tools`` when it is about one of them.

    Cancellation while the approver waits propagates (the call never starts).
    """
    gate = _gate(request, read_tools)
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
