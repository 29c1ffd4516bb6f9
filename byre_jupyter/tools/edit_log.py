"""Who changed what, and taking a turn back (docs/bridge.md, "Undo").

The kernel keeps, per turn, every cell its approved ``edit_notebook`` batches inserted, changed
or deleted, with the text before and after (:class:`EditLog`); ``%claude history`` lists them
and ``%claude undo`` builds from one turn's entry the batch that restores them
(:func:`plan_undo`): a new cell is deleted, a changed one gets its old text back, a deleted one
is inserted again where it was. A cell someone changed since the turn (its text is not what
the turn left, or it is gone) is refused and named, never overwritten; the rest is restored.

The log lives in the kernel (so it serves every tab, and a reloaded page), not in the notebook:
after a kernel restart it is gone, and the cells' ``metadata.byre`` can only say which cells the
turn touched (:func:`marked_cells`), not what they held before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .notebook import Cell
from .notebook_edit import CellChange, Delete, Edit, Insert, Replace

__all__ = [
    "EditLog",
    "LoggedCell",
    "TurnEdits",
    "UndoPlan",
    "clip_prompt",
    "marked_cells",
    "plan_undo",
    "turn_lines",
]

Action = Literal["insert", "replace", "delete"]

#: A turn's prompt is kept in each changed cell's ``metadata.byre`` clipped to this many
#: characters (the mark's hover; labextension/src/edit.ts refuses a longer one): enough to
#: recognise the turn, little in the saved file.
PROMPT_CHARS = 200


def _units(text: str) -> int:
    """The length of ``text`` as the page counts it (UTF-16 code units: an emoji is two)."""
    return len(text.encode("utf-16-le")) // 2


def clip_prompt(prompt: str) -> str:
    """The prompt, whitespace folded, within :data:`PROMPT_CHARS` as the page counts them."""
    text = " ".join(prompt.split())
    if _units(text) <= PROMPT_CHARS:
        return text
    kept, used = [], 1  # room for the "…"
    for char in text:
        used += 2 if ord(char) > 0xFFFF else 1
        if used > PROMPT_CHARS:
            break
        kept.append(char)
    return "".join(kept) + "…"


@dataclass(frozen=True)
class LoggedCell:
    """One cell as a turn left it: its text before the turn and after (the net of the turn's
    batches). ``place`` is, for a cell the turn inserted, the cell it went below, and for a
    deleted one, the cell that was above it (None: it was the first)."""

    cell: str
    cell_type: str
    action: Action
    before: str
    after: str
    place: str | None = None


@dataclass
class TurnEdits:
    """What one turn changed in the notebook, in the order it first touched each cell."""

    session: str
    conversation: str
    turn: int | None
    prompt: str = ""
    cells: list[LoggedCell] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"turn #{self.turn}" if self.turn is not None else "a turn no cell owned"


def _merge(first: LoggedCell, then: LoggedCell) -> LoggedCell | None:
    """One cell touched by two batches of a turn: the net change (None: none is left)."""
    if first.action == "insert":
        if then.action == "delete":
            return None  # made and deleted in the same turn: nothing to take back
        return LoggedCell(first.cell, then.cell_type, "insert", "", then.after, first.place)
    if then.action == "delete":
        return LoggedCell(first.cell, first.cell_type, "delete", first.before, "", then.place)
    # A cell deleted and then inserted again under the same id counts as changed in place.
    return LoggedCell(first.cell, then.cell_type, "replace", first.before, then.after)


class EditLog:
    """The kernel's record of each turn's applied edits (oldest first)."""

    def __init__(self) -> None:
        self._turns: list[TurnEdits] = []

    def record(
        self,
        session: str,
        provenance: Mapping[str, object],
        changes: Sequence[CellChange],
        order: Sequence[str],
    ) -> None:
        """An approved batch landed: ``changes`` as planned against the cells ``order`` (the
        notebook's ids before the batch, which place a deleted cell)."""
        conversation = str(provenance.get("conversation") or "")
        raw_turn = provenance.get("turn")
        turn = raw_turn if type(raw_turn) is int else None
        prompt = str(provenance.get("prompt") or "")
        entry = next(
            (
                t
                for t in reversed(self._turns)
                if (t.session, t.conversation, t.turn) == (session, conversation, turn)
            ),
            None,
        )
        if entry is None:
            entry = TurnEdits(session, conversation, turn, prompt)
            self._turns.append(entry)
        for change in changes:
            place = change.below
            if change.action == "delete" and change.cell in order:
                at = order.index(change.cell)
                place = order[at - 1] if at > 0 else None
            logged = LoggedCell(
                change.cell, change.cell_type, change.action, change.before, change.after, place
            )
            known = next((i for i, c in enumerate(entry.cells) if c.cell == change.cell), None)
            if known is None:
                entry.cells.append(logged)
                continue
            merged = _merge(entry.cells[known], logged)
            if merged is None:
                del entry.cells[known]
            else:
                entry.cells[known] = merged

    def turns(self, session: str | None = None) -> list[TurnEdits]:
        """The turns that changed cells (of ``session``, or of all), oldest first."""
        return [t for t in self._turns if t.cells and (session is None or t.session == session)]

    def find(self, session: str, turn: int | None) -> TurnEdits | None:
        """Turn ``turn`` of ``session`` (None: its newest that changed cells)."""
        found = self.turns(session)
        if turn is None:
            return found[-1] if found else None
        return next((t for t in reversed(found) if t.turn == turn), None)

    def forget(self, entry: TurnEdits) -> None:
        """The turn was taken back: it has nothing left to undo."""
        if entry in self._turns:
            self._turns.remove(entry)


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return repr(line[:40]) if line else "(empty)"


_VERBS = {"insert": "inserted", "replace": "changed", "delete": "deleted"}


def turn_lines(entry: TurnEdits) -> list[str]:
    """``%claude history``'s lines for one turn: each cell it touched, as plain text."""
    prompt = f" {entry.prompt[:60]!r}" if entry.prompt else ""
    lines = [f"  {entry.label}{prompt}:"]
    for cell in entry.cells:
        text = cell.before if cell.action == "delete" else cell.after
        lines.append(
            f"    {_VERBS[cell.action]} {cell.cell_type} cell {cell.cell}: {_first_line(text)}"
        )
    return lines


@dataclass(frozen=True)
class UndoPlan:
    """The batch that takes a turn back, the cells it restores (the review card shows them as
    diffs), and each cell it cannot restore with why."""

    edits: tuple[Edit, ...]
    changes: tuple[CellChange, ...]
    refused: tuple[str, ...]
    #: The ids of the refused cells: the turn's entry keeps them after the undo.
    unrestored: tuple[str, ...] = ()


def _named(cell: Cell | LoggedCell, text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    shown = f" ({line[:40]!r})" if line else ""
    return f"cell {cell.cell if isinstance(cell, LoggedCell) else cell.id}{shown}"


def plan_undo(entry: TurnEdits, cells: Sequence[Cell]) -> UndoPlan:
    """The batch that restores what ``entry``'s turn changed, against the notebook's ``cells``
    now: a cell whose text is not what the turn left (typed into, run over) or that is gone
    is refused and named; the others are restored."""
    now = {cell.id: cell for cell in cells}
    present = set(now)
    restores: list[Edit] = []
    reinserts: list[Edit] = []
    removes: list[Edit] = []
    changes: list[CellChange] = []
    refused: list[str] = []
    since = f"since {entry.label}"
    for logged in entry.cells:
        current = now.get(logged.cell)
        if logged.action == "delete":
            if current is not None:
                refused.append(f"{_named(logged, logged.before)}: a cell with its id is back")
                continue
            if logged.place is None or logged.place not in present:
                where = "the first cell" if logged.place is None else f"below cell {logged.place}"
                refused.append(
                    f"{_named(logged, logged.before)}: it was {where}, and the bridge inserts "
                    "only below a cell that is there now; copy its text from this review"
                )
                continue
            reinserts.append(Insert(logged.place, logged.cell_type, logged.before, logged.cell))
            present.add(logged.cell)
            changes.append(
                CellChange(logged.cell, logged.cell_type, "insert", "", logged.before, logged.place)
            )
            continue
        if current is None:
            refused.append(f"{_named(logged, logged.after)}: deleted {since}")
            continue
        if current.source != logged.after:
            refused.append(f"{_named(current, current.source)}: changed {since}")
            continue
        if logged.action == "insert":
            removes.append(Delete(logged.cell))
            changes.append(CellChange(logged.cell, current.cell_type, "delete", logged.after, ""))
        else:
            restores.append(Replace(logged.cell, logged.after, logged.before, whole=True))
            changes.append(
                CellChange(logged.cell, current.cell_type, "replace", logged.after, logged.before)
            )
    # Deleted cells come back before the turn's new cells go: one of those may be the cell a
    # later batch of the turn deleted a cell below.
    edits = (*restores, *reinserts, *removes)
    restored = {change.cell for change in changes}
    unrestored = tuple(c.cell for c in entry.cells if c.cell not in restored)
    return UndoPlan(edits, tuple(changes), tuple(refused), unrestored)


def marked_cells(cells: Sequence[Cell], conversation: str | None, turn: int | None) -> list[str]:
    """The ids of the cells whose ``metadata.byre`` names this turn (a kernel restarted since
    it: the log is gone, the marks saved with the notebook are not)."""
    found = []
    for cell in cells:
        byre = cell.byre
        if not isinstance(byre, Mapping) or byre.get("turn") != turn:
            continue
        if conversation is None or byre.get("conversation") == conversation:
            found.append(cell.id)
    return found
