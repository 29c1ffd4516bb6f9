"""How a tool's card reads: the value each tool record carries and the UI's table holds.

:class:`ToolInfo` says what a card's one-line summary shows, which input is its body, whether
it has a diff, how an approval card describes the call (``ui/approval_card.py`` has one
describer per :data:`ApprovalKind`), what an "Always allow" of it covers (docs/security.md,
"What the allowances cover") and whether its result is a subagent's report. It lives here, below
``ui``, so a kernel tool's record (``tools/spec.py``) can carry its own card; ``ui/toolinfo.py``
holds the CLI's tools' entries and reads the kernel tools' from their records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..session.permissions import Scope

__all__ = ["ApprovalKind", "ToolInfo", "read_only_card"]

#: How an approval card lays out a call (``ui/approval_card.py`` has one describer per kind).
ApprovalKind = Literal[
    "bash",
    "python",
    "write",
    "edit",
    "multi_edit",
    "notebook_edit",
    "notebook_edits",
    "run_cell",
    "agent",
    "titled",
    "generic",
]


@dataclass(frozen=True)
class ToolInfo:
    """One tool's card: an entry of ``ui/toolinfo.py``'s ``TOOLS``."""

    #: Input keys whose first non-empty string is the card's one-line summary (else its JSON).
    summary_keys: tuple[str, ...] = ()
    #: An input key holding a list of names (cell ids) that the summary joins, when it has one.
    summary_list: str | None = None
    #: The input key a card shows as the call's body, and the words before it (``"$ "``).
    body_key: str | None = None
    body_prefix: str = ""
    #: ``edit`` or ``multi_edit``: the card shows a diff of the strings it replaces;
    #: ``notebook``: of the cells an edit_notebook batch proposes (ui/edit_card.py).
    diff: Literal["edit", "multi_edit", "notebook"] | None = None
    #: How the approval card describes a call; for ``titled``, its action words, the input key
    #: named after them and the words after that.
    approval: ApprovalKind = "generic"
    action: str = ""
    named: str | None = None
    after: str = ""
    #: What "Always allow" covers, and the input key it looks at.
    allow: Scope = "input"
    allow_key: str = ""
    #: What "Always allow" covers in the user's words, when the scope's own words would name
    #: the tool and not the thing (a cell, code, the notebook's edits). ``{position}`` and the
    #: like are the call's input fields (an "input" allowance keeps the input).
    covers: str = ""
    #: A subagent: its result is the CLI's hand-back frame around the subagent's report.
    subagent: bool = False


def read_only_card(action: str, named: str | None = None, after: str = "", **kw: Any) -> ToolInfo:
    """A read-only tool's card: titled by ``action`` (the input ``named`` after it), and
    "Always allow" covers the tool, as reading changes nothing."""
    return ToolInfo(approval="titled", action=action, named=named, after=after, allow="tool", **kw)
