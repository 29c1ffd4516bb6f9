"""``mcp__byre__edit_notebook``: Claude edits cells, the user reviews the batch (docs/bridge.md).

A batch of edits (insert, replace, delete) is checked here before anything is shown: its
shape, its bounds, the cells it names and the new ids it gives. It is then resolved against
the notebook as it is now (:func:`plan_edits`): every touched cell's source before and after,
which is what the review card shows and what the user approves. The frontend bridge applies
the approved batch on the live notebook model and checks each ``replace`` once more against
the source at that moment, so text the user typed meanwhile is never overwritten.

Without the bridge nothing is written to the ``.ipynb`` (it is open in an editor): VS Code gets
a single insert as the kernel's ``set_next_input`` payload, a headless run only records the
proposed edits, and the result tells the model which of these happened.
"""

from __future__ import annotations

import difflib
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from .notebook import Cell

__all__ = [
    "EDIT_NOTEBOOK_DESCRIPTION",
    "EDIT_NOTEBOOK_SCHEMA",
    "MAX_EDITS",
    "MAX_EDIT_CHARS",
    "CellChange",
    "Delete",
    "Edit",
    "Insert",
    "Replace",
    "change_diff",
    "edit_ops",
    "parse_edits",
    "plan_edits",
    "review_input",
    "reviewed_sources",
    "valid_cell_id",
]

EDIT_NOTEBOOK_DESCRIPTION = """\
Edit the cells of the Jupyter notebook the user has open. `edits` is a list applied in order, \
each one of: {"insert": {"after": CELL_ID or null, "cell_type": "code" or "markdown", \
"source": "...", "id": optional new id}} (null: below the %%claude cell asking you), \
{"replace": {"cell": CELL_ID, "old": "...", "new": "..."}} (`old` must occur exactly once in \
the cell's current source, as with the Edit tool), {"delete": {"cell": CELL_ID}}. Read the \
cells with mcp__byre__notebook first: cell ids come from there. The user reviews the whole \
batch as a diff and may deny it; if they typed in a cell since you read it, a replace there \
is refused ("cell X changed since you read it") and nothing of the batch is applied: read the \
cell again. The result names the id of every new cell. Never use Write, Edit or NotebookEdit \
on the open .ipynb file: use this tool."""

#: At most this many edits in one batch, and this many characters of source, old and new text
#: in all of them together: a review card of thousands of cells is one nobody reads.
MAX_EDITS = 50
MAX_EDIT_CHARS = 200_000
#: nbformat 4.5's cell id: 1 to 64 letters, digits, ``-`` and ``_``.
_CELL_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_CELL_TYPES = ("code", "markdown")

EDIT_NOTEBOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "edits": {
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_EDITS,
            "items": {
                "type": "object",
                "properties": {
                    "insert": {
                        "type": "object",
                        "properties": {
                            "after": {"type": ["string", "null"]},
                            "cell_type": {"type": "string", "enum": list(_CELL_TYPES)},
                            "source": {"type": "string"},
                            "id": {"type": "string"},
                        },
                        "required": ["after", "cell_type", "source"],
                    },
                    "replace": {
                        "type": "object",
                        "properties": {
                            "cell": {"type": "string"},
                            "old": {"type": "string"},
                            "new": {"type": "string"},
                        },
                        "required": ["cell", "old", "new"],
                    },
                    "delete": {
                        "type": "object",
                        "properties": {"cell": {"type": "string"}},
                        "required": ["cell"],
                    },
                },
            },
        }
    },
    "required": ["edits"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class Insert:
    after: str | None
    cell_type: str
    source: str
    id: str | None = None


@dataclass(frozen=True)
class Replace:
    cell: str
    old: str
    new: str
    #: ``old`` is the cell's whole text (an undo's restore, tools/edit_log.py): the frontend
    #: refuses it when the cell holds anything else, not only when ``old`` is not found once.
    whole: bool = False


@dataclass(frozen=True)
class Delete:
    cell: str


Edit = Union[Insert, Replace, Delete]  # noqa: UP007


def valid_cell_id(value: str) -> bool:
    return _CELL_ID.fullmatch(value) is not None


def _shown(value: object) -> str:
    return repr(str(value)[:80])


def parse_edits(args: Mapping[str, Any]) -> tuple[Edit, ...] | str:
    """The batch ``args`` holds, or an error the model reads (shape, types, bounds, ids)."""
    raw = args.get("edits")
    if not isinstance(raw, list) or not raw:
        return "`edits` must be a non-empty list of edits."
    if len(raw) > MAX_EDITS:
        return (
            f"The batch holds {len(raw):,} edits; at most {MAX_EDITS} go in one batch (the user "
            "reviews each batch): split it."
        )
    edits: list[Edit] = []
    chars = 0
    for n, item in enumerate(raw, start=1):
        where = f"Edit {n}"
        if not isinstance(item, Mapping) or len(item) != 1:
            return f'{where} must be an object with one key: "insert", "replace" or "delete".'
        ((kind, body),) = item.items()
        if not isinstance(body, Mapping):
            return f"{where}: `{str(kind)[:20]}` must be an object."
        if kind == "insert":
            after, cell_type = body.get("after"), body.get("cell_type")
            source, new_id = body.get("source"), body.get("id")
            if after is not None and not isinstance(after, str):
                return f"{where}: `after` must be a cell id or null."
            if cell_type not in _CELL_TYPES:
                return f'{where}: `cell_type` must be "code" or "markdown".'
            if not isinstance(source, str):
                return f"{where}: `source` must be a string."
            if new_id is not None and (not isinstance(new_id, str) or not valid_cell_id(new_id)):
                return (
                    f"{where}: `id` {_shown(new_id)} is not a valid nbformat cell id (1 to 64 "
                    "letters, digits, - and _)."
                )
            chars += len(source)
            edits.append(Insert(after, str(cell_type), source, new_id))
        elif kind == "replace":
            cell, old, new = body.get("cell"), body.get("old"), body.get("new")
            if not isinstance(cell, str):
                return f"{where}: `cell` must be a cell id."
            if not isinstance(old, str) or not old:
                return f"{where}: `old` must be a non-empty string."
            if not isinstance(new, str):
                return f"{where}: `new` must be a string."
            if old == new:
                return f"{where}: `old` and `new` are the same."
            chars += len(old) + len(new)
            edits.append(Replace(cell, old, new))
        elif kind == "delete":
            cell = body.get("cell")
            if not isinstance(cell, str):
                return f"{where}: `cell` must be a cell id."
            edits.append(Delete(cell))
        else:
            return f'{where}: unknown edit {_shown(kind)}; use "insert", "replace" or "delete".'
        if chars > MAX_EDIT_CHARS:
            return (
                f"The batch holds more than {MAX_EDIT_CHARS:,} characters of cell text; split it "
                "into smaller batches."
            )
    return tuple(edits)


@dataclass(frozen=True)
class CellChange:
    """One cell as the batch changes it: what the review card shows, whole."""

    cell: str
    cell_type: str
    action: Literal["insert", "replace", "delete"]
    before: str  # "" for a new cell
    after: str  # "" for a deleted cell
    #: For a new cell, the cell it goes below (None: the top of the notebook).
    below: str | None = None


def _new_id(taken: set[str]) -> str:
    while True:
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate


def plan_edits(
    edits: Sequence[Edit],
    cells: Sequence[Cell],
    asking: str | None,
    *,
    new_id: Callable[[set[str]], str] = _new_id,
) -> tuple[tuple[Edit, ...], tuple[CellChange, ...]] | str:
    """The batch resolved against ``cells`` (in order, each edit seeing the ones before it):
    every insert with its id and place, and each touched cell's change; or an error."""
    order = [cell.id for cell in cells]
    source = {cell.id: cell.source for cell in cells}
    kinds = {cell.id: cell.cell_type for cell in cells}
    original = dict(source)
    taken = set(order)
    created: dict[str, str | None] = {}
    deleted: set[str] = set()
    resolved: list[Edit] = []

    def unknown(n: int, cell: str) -> str:
        if cell in deleted:
            return f"Edit {n}: cell {_shown(cell)} is deleted by an earlier edit of this batch."
        known = ", ".join(i for i in order[:50] if i)
        return f"Edit {n}: there is no cell with id {_shown(cell)}; the ids are: {known}."

    for n, edit in enumerate(edits, start=1):
        if isinstance(edit, Insert):
            after = edit.after if edit.after is not None else asking
            if after is None:
                return (
                    f'Edit {n}: "after": null means below the asking %%claude cell, which is '
                    "not known here; give a cell id."
                )
            if after not in source:
                return unknown(n, after)
            cell_id = edit.id if edit.id is not None else new_id(taken)
            if cell_id in taken:
                return (
                    f"Edit {n}: the id {_shown(cell_id)} is already used in this notebook; "
                    "choose another or leave `id` out."
                )
            taken.add(cell_id)
            order.insert(order.index(after) + 1, cell_id)
            source[cell_id], kinds[cell_id] = edit.source, edit.cell_type
            created[cell_id] = after
            resolved.append(Insert(after, edit.cell_type, edit.source, cell_id))
        elif isinstance(edit, Replace):
            if edit.cell not in source:
                return unknown(n, edit.cell)
            found = source[edit.cell].count(edit.old)
            if found != 1:
                times = "does not occur" if found == 0 else f"occurs {found} times"
                return (
                    f"Edit {n}: `old` {times} in cell {_shown(edit.cell)}'s current source; it "
                    "must occur exactly once (read the cell again, or give more context)."
                )
            source[edit.cell] = source[edit.cell].replace(edit.old, edit.new, 1)
            resolved.append(edit)
        else:
            if edit.cell not in source:
                return unknown(n, edit.cell)
            if edit.cell == asking:
                return f"Edit {n}: the asking %%claude cell cannot be deleted."
            order.remove(edit.cell)
            del source[edit.cell]
            deleted.add(edit.cell)
            resolved.append(edit)
    changes: list[CellChange] = []
    touched = dict.fromkeys(
        e.id if isinstance(e, Insert) and e.id is not None else getattr(e, "cell", "")
        for e in resolved
    )
    for cell in touched:
        kind = kinds.get(cell, "code")
        if cell in created:
            if cell in source:  # inserted and not deleted again in the same batch
                changes.append(CellChange(cell, kind, "insert", "", source[cell], created[cell]))
        elif cell in deleted:
            changes.append(CellChange(cell, kind, "delete", original[cell], ""))
        else:
            changes.append(CellChange(cell, kind, "replace", original[cell], source[cell]))
    return tuple(resolved), tuple(changes)


def change_diff(change: CellChange) -> str:
    """A unified diff of one cell, the whole of both versions (``n`` = every line kept)."""
    before = change.before.splitlines(keepends=True)
    after = change.after.splitlines(keepends=True)
    lines = max(len(before), len(after))
    diff = difflib.unified_diff(
        before,
        after,
        "/dev/null" if change.action == "insert" else f"cell {change.cell}",
        "/dev/null" if change.action == "delete" else f"cell {change.cell}",
        n=lines,
        lineterm="",
    )
    return "\n".join(line.rstrip("\n") for line in diff)


def review_input(changes: Sequence[CellChange]) -> dict[str, Any]:
    """What the approval card is asked about: each cell's change, whole (ui/edit_card.py)."""
    return {
        "cells": [
            {
                "cell": c.cell,
                "cell_type": c.cell_type,
                "action": c.action,
                "before": c.before,
                "after": c.after,
                "below": c.below,
            }
            for c in changes
        ]
    }


def reviewed_sources(changes: Sequence[CellChange]) -> dict[str, str]:
    """Each cell the batch replaces or deletes, with the source the review showed: the bridge
    applies the batch only if every one of them still holds exactly that. Keystrokes that
    leave a replace's ``old`` whole (another person's, on a shared notebook) would otherwise
    land a cell text nobody reviewed, or be deleted with the cell."""
    return {c.cell: c.before for c in changes if c.action != "insert"}


def edit_ops(edits: Sequence[Edit]) -> list[dict[str, Any]]:
    """The resolved batch as the bridge's ``edit`` request carries it (docs/bridge.md)."""
    ops: list[dict[str, Any]] = []
    for edit in edits:
        if isinstance(edit, Insert):
            ops.append(
                {
                    "insert": {
                        "after": edit.after,
                        "cell_type": edit.cell_type,
                        "source": edit.source,
                        "id": edit.id,
                    }
                }
            )
        elif isinstance(edit, Replace):
            op: dict[str, Any] = {"cell": edit.cell, "old": edit.old, "new": edit.new}
            if edit.whole:
                op["whole"] = True
            ops.append({"replace": op})
        else:
            ops.append({"delete": {"cell": edit.cell}})
    return ops
