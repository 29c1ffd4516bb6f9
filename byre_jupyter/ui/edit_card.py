"""The review card of an ``edit_notebook`` batch, and the diff its tool card keeps (pure).

The approval card (ui/approval_card.py) shows one batch as one card: our title, counting the
cells it inserts, changes and deletes, then a unified diff of every touched cell holding the
whole of both versions, so what the user approves is all there. :func:`review_text` builds that
from what the approver is asked (``tools/notebook_edit.py``, ``review_input``); the card reveals
hidden characters and escapes it at the leaf, like every approval body.

:func:`input_diff` is the diff the tool's card in the cell shows, live and in the saved record,
built from the model's input alone, so a headless run records the proposed edits too.

Cell sources are untrusted (a cell may hold HTML, Markdown or a remote image link): here they
are only text in a diff; nothing is rendered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from byre_jupyter.tools.notebook_edit import (
    CellChange,
    Delete,
    Insert,
    change_diff,
    parse_edits,
)

__all__ = ["input_diff", "input_summary", "review_text"]


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _changes(tool_input: Mapping[str, Any]) -> list[CellChange] | None:
    cells = tool_input.get("cells")
    if not isinstance(cells, list):
        return None
    changes = []
    for cell in cells:
        if not isinstance(cell, Mapping):
            return None
        fields = [cell.get(k) for k in ("cell", "cell_type", "before", "after")]
        action, below = cell.get("action"), cell.get("below")
        if not all(isinstance(f, str) for f in fields) or action not in (
            "insert",
            "replace",
            "delete",
        ):
            return None
        cell_id, cell_type, before, after = (str(f) for f in fields)
        changes.append(
            CellChange(
                cell_id,
                cell_type,
                action,
                before,
                after,
                below if isinstance(below, str) else None,
            )
        )
    return changes


def _label(change: CellChange) -> str:
    if change.action == "insert":
        where = f"below cell {change.below}" if change.below else "at the top"
        return f"New {change.cell_type} cell {change.cell}, {where}:"
    if change.action == "delete":
        return f"Delete {change.cell_type} cell {change.cell}:"
    return f"Change {change.cell_type} cell {change.cell}:"


def review_text(tool_input: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(heading, body)`` of the review card, or None for an input of another shape."""
    changes = _changes(tool_input)
    if not changes:
        return None
    counts = []
    for action, word in (("insert", "new"), ("replace", "changed"), ("delete", "deleted")):
        n = sum(1 for c in changes if c.action == action)
        if n:
            counts.append(f"{n} {word}")
    heading = f"Edit the notebook: {_count(len(changes), 'cell')} ({', '.join(counts)})"
    cells = tool_input.get("cells")
    raw = cells if isinstance(cells, list) else []
    notes = [_claude_note(cell) for cell in raw]
    if any(notes):
        heading += ", in a cell that runs Claude"
    body = "\n\n".join(
        f"{_label(c)}\n{change_diff(c)}{note}" for c, note in zip(changes, notes, strict=True)
    )
    return heading, body


def _claude_note(cell: Mapping[str, Any]) -> str:
    """The lines under a cell's diff when the cell runs Claude (``tools/claude_cells.py``
    marks it): its prompt goes to Claude when the cell runs, and each new ``{name}`` field
    reads the user's variable into it."""
    if cell.get("claude") is not True:
        return ""
    note = "\n⚠ This cell runs Claude: its text is the prompt sent when the cell runs."
    fields = cell.get("fields")
    names = [f for f in fields if isinstance(f, str)] if isinstance(fields, list) else []
    if names:
        listed = ", ".join("{" + name + "}" for name in names)
        note += f"\n⚠ The edit adds fields that read your variables when the cell runs: {listed}"
    return note


def input_summary(tool_input: Mapping[str, Any]) -> str | None:
    """One line for the tool's card: what each edit does to which cell."""
    edits = parse_edits(tool_input)
    if isinstance(edits, str):
        return None
    words = []
    for edit in edits:
        if isinstance(edit, Insert):
            words.append(f"insert {edit.id or 'a cell'}")
        elif isinstance(edit, Delete):
            words.append(f"delete {edit.cell}")
        else:
            words.append(f"change {edit.cell}")
    return f"{_count(len(edits), 'edit')}: " + ", ".join(words)


def input_diff(tool_input: Mapping[str, Any]) -> str | None:
    """The proposed edits as diffs, from the model's input (None: not a valid batch)."""
    edits = parse_edits(tool_input)
    if isinstance(edits, str):
        return None
    parts = []
    for edit in edits:
        if isinstance(edit, Insert):
            below = f"below cell {edit.after}" if edit.after else "below the %%claude cell"
            change = CellChange(edit.id or "(new)", edit.cell_type, "insert", "", edit.source)
            named = f"cell {edit.id}" if edit.id else "cell"
            parts.append(f"# new {edit.cell_type} {named} {below}\n")
            parts.append(change_diff(change) + "\n")
        elif isinstance(edit, Delete):
            parts.append(f"# delete cell {edit.cell}\n")
        else:
            change = CellChange(edit.cell, "code", "replace", edit.old, edit.new)
            parts.append(f"# in cell {edit.cell}\n{change_diff(change)}\n")
    return "".join(parts)
