"""``%claude undo [TURN]``: take a turn's cell edits back as one reviewed batch (docs/bridge.md,
"Undo").

The turn's entry in the kernel's edit log (tools/edit_log.py) and the notebook as it is on
screen now give the batch (:func:`plan_undo`); the user reviews it as a diff in the same card
as any edit (ui/edit_card.py), and the bridge applies it like any edit, checking each restore
once more against the cell at that moment. A cell someone changed since the turn is refused
and named; the others are restored. Whatever cannot be done is a :class:`UsageError` raised
before anything is shown: no bridge, no such turn, a turn that changed no cells, a kernel that
restarted since the turn (then the cells' marks say which cells it touched).
"""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from IPython.core.error import UsageError

from ..bridge import ApplyEdits, Bridge, BridgeError
from ..session.permissions import Decision, Deny
from ..tools.edit_log import EditLog, TurnEdits, UndoPlan, marked_cells, plan_undo
from ..tools.notebook import read_notebook
from ..tools.notebook_edit import edit_ops, review_input

__all__ = ["UndoOutcome", "apply_undo", "parse_turn", "prepare_undo"]

#: Shows the review card of ``review_input(changes)`` and waits for the user's answer.
ReviewFn = Callable[[Mapping[str, Any]], Awaitable[Decision]]


def parse_turn(spec: str | None) -> int | None:
    """``#N`` or ``N`` (None: the newest turn that changed cells); the parser's type, so a bad
    one is the subcommand's UsageError with its usage line."""
    if spec is None:
        return None
    text = spec[1:] if spec.startswith("#") else spec
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"#N or N (a turn number), not {spec[:40]!r}")
    return int(text)


@dataclass(frozen=True)
class Prepared:
    entry: TurnEdits
    plan: UndoPlan
    bridge: Bridge
    #: The ``%claude undo`` cell: its turn's page applies the batch (docs/bridge.md).
    cell: str | None = None


@dataclass(frozen=True)
class UndoOutcome:
    """What the undo did, in words for the cell (a plain static output)."""

    applied: bool
    text: str


def _usable(bridge: Bridge | None) -> Bridge:
    if bridge is None or not bridge.connected:
        raise UsageError(
            "%claude undo: no notebook frontend with byre_jupyter's bridge is connected (VS "
            "Code, a headless run, or a page to reload): the undo is applied on the notebook on "
            "screen, like any edit. See %claude doctor."
        )
    return bridge


async def prepare_undo(
    log: EditLog,
    session: str,
    turn: int | None,
    bridge: Bridge | None,
    cell: str | None = None,
) -> Prepared:
    """The turn's entry and the batch that restores it, against the notebook on screen now;
    a UsageError when there is nothing to review."""
    live = _usable(bridge)
    read = await read_notebook(live, None, images=False, turn=cell)
    if isinstance(read, str) or not read.live:
        why = read if isinstance(read, str) else " ".join(read.notes)
        raise UsageError(f"%claude undo: the notebook on screen could not be read: {why}")
    entry = log.find(session, turn)
    if entry is None:
        which = f"turn #{turn}" if turn is not None else "a turn"
        marked = marked_cells(read.cells, None, turn) if turn is not None else []
        if marked:
            raise UsageError(
                f"%claude undo: this kernel has no record of {which}'s edits (it restarted "
                f"since?): cells {', '.join(marked[:20])} carry its mark, but what they held "
                "before is not known here, so they cannot be restored (Ctrl+Z in each cell, "
                "or your version control)."
            )
        raise UsageError(
            f"%claude undo: {which} of session {session!r} changed no cells in this kernel "
            "(%claude history lists each turn's cells)."
            if turn is not None
            else f"%claude undo: no turn of session {session!r} changed cells in this kernel."
        )
    plan = plan_undo(entry, read.cells)
    if not plan.edits:
        raise UsageError(
            f"%claude undo: nothing of {entry.label} can be restored:\n- "
            + "\n- ".join(plan.refused)
        )
    return Prepared(entry, plan, live, cell)


async def apply_undo(log: EditLog, prepared: Prepared, review: ReviewFn) -> UndoOutcome:
    """Ask the user (the review card), then apply the batch through the bridge."""
    entry, plan = prepared.entry, prepared.plan
    refused = "".join(f"\n- not restored: {why}" for why in plan.refused)
    decision = await review(review_input(plan.changes))
    if isinstance(decision, Deny):
        why = f": {decision.message}" if decision.message else ""
        return UndoOutcome(False, f"Not undone (denied{why}); nothing changed.")
    try:
        # No provenance: the restored cells are again as no turn made them.
        reply = await prepared.bridge.request(
            ApplyEdits(edit_ops(plan.edits), {}, None), turn=prepared.cell
        )
    except BridgeError as e:
        return UndoOutcome(False, f"Not undone: {e}. Nothing in the notebook changed.")
    if isinstance(reply.get("refused"), str):
        return UndoOutcome(
            False,
            f"Not undone: {str(reply['refused'])[:2000]}. Nothing in the notebook changed; run "
            "%claude undo again to review what can still be restored.",
        )
    restored = ", ".join(change.cell for change in plan.changes)
    entry.cells[:] = [c for c in entry.cells if c.cell in plan.unrestored]
    if not entry.cells:
        log.forget(entry)
    return UndoOutcome(True, f"Undone {entry.label}: restored cells {restored}.{refused}")
