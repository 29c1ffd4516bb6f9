"""The kernel's per-turn edit log and the undo batch built from it (tools/edit_log.py)."""

from __future__ import annotations

from byre_jupyter.tools.edit_log import EditLog, marked_cells, plan_undo
from byre_jupyter.tools.notebook import Cell
from byre_jupyter.tools.notebook_edit import (
    CellChange,
    Delete,
    Insert,
    Replace,
    edit_ops,
    parse_edits,
    plan_edits,
)

PROVENANCE = {"conversation": "conv-1", "turn": 2, "prompt": "tidy up"}


def cells(**sources: str) -> list[Cell]:
    return [
        Cell(id=k, cell_type="code", source=v, execution_count=None) for k, v in sources.items()
    ]


def turn_of(log: EditLog, before: list[Cell], *edits: dict[str, object]) -> list[Cell]:
    """Plan ``edits`` against ``before`` as the tool does, log them, return the cells after."""
    parsed = parse_edits({"edits": list(edits)})
    assert not isinstance(parsed, str), parsed
    planned = plan_edits(parsed, before, "ask", new_id=lambda taken: "new1")
    assert not isinstance(planned, str), planned
    resolved, changes = planned
    log.record("default", PROVENANCE, changes, [c.id for c in before])
    after = {c.id: c for c in before}
    order = [c.id for c in before]
    for edit in resolved:
        if isinstance(edit, Insert):
            assert edit.after is not None and edit.id is not None
            order.insert(order.index(edit.after) + 1, edit.id)
            after[edit.id] = Cell(edit.id, edit.cell_type, edit.source, None)
        elif isinstance(edit, Replace):
            old = after[edit.cell]
            after[edit.cell] = Cell(old.id, "code", old.source.replace(edit.old, edit.new, 1), None)
        else:
            order.remove(edit.cell)
    return [after[i] for i in order]


BEFORE = cells(ask="%%claude\ntidy", a="x = 1", b="y = 2", c="z = 3")


def test_the_log_keeps_each_cell_a_turn_touched_with_before_after_and_place() -> None:
    log = EditLog()
    turn_of(
        log,
        BEFORE,
        {"insert": {"after": "a", "cell_type": "code", "source": "w = 0"}},
        {"replace": {"cell": "b", "old": "2", "new": "20"}},
        {"delete": {"cell": "c"}},
    )
    (entry,) = log.turns("default")
    assert (entry.conversation, entry.turn, entry.prompt) == ("conv-1", 2, "tidy up")
    assert [(c.cell, c.action, c.before, c.after, c.place) for c in entry.cells] == [
        ("new1", "insert", "", "w = 0", "a"),
        ("b", "replace", "y = 2", "y = 20", None),
        ("c", "delete", "z = 3", "", "b"),
    ]
    assert log.find("default", None) is entry and log.find("default", 2) is entry
    assert log.find("default", 1) is None and log.find("other", None) is None


def test_two_batches_of_one_turn_merge_into_the_net_change() -> None:
    log = EditLog()
    middle = turn_of(
        log,
        BEFORE,
        {"insert": {"after": "a", "cell_type": "code", "source": "w = 0"}},
        {"replace": {"cell": "b", "old": "2", "new": "20"}},
    )
    turn_of(
        log,
        middle,
        {"replace": {"cell": "new1", "old": "0", "new": "1"}},
        {"replace": {"cell": "b", "old": "20", "new": "200"}},
        {"delete": {"cell": "c"}},
    )
    (entry,) = log.turns()
    assert [(c.cell, c.action, c.before, c.after) for c in entry.cells] == [
        ("new1", "insert", "", "w = 1"),
        ("b", "replace", "y = 2", "y = 200"),
        ("c", "delete", "z = 3", ""),
    ]
    # A cell made and deleted again in one turn leaves nothing to take back.
    again = EditLog()
    made = turn_of(again, BEFORE, {"insert": {"after": "a", "cell_type": "code", "source": "t"}})
    turn_of(again, made, {"delete": {"cell": "new1"}})
    assert again.turns() == []


def test_undo_restores_every_cell_in_one_batch() -> None:
    log = EditLog()
    after = turn_of(
        log,
        BEFORE,
        {"insert": {"after": "a", "cell_type": "code", "source": "w = 0"}},
        {"replace": {"cell": "b", "old": "2", "new": "20"}},
        {"delete": {"cell": "c"}},
    )
    entry = log.find("default", None)
    assert entry is not None
    plan = plan_undo(entry, after)
    assert plan.refused == ()
    assert plan.edits == (
        Replace("b", "y = 20", "y = 2", whole=True),
        Insert("b", "code", "z = 3", "c"),
        Delete("new1"),
    )
    assert [(c.cell, c.action, c.before, c.after) for c in plan.changes] == [
        ("new1", "delete", "w = 0", ""),
        ("b", "replace", "y = 20", "y = 2"),
        ("c", "insert", "", "z = 3"),
    ]
    # The bridge's message: a whole-text restore says so (labextension/src/edit.ts).
    assert edit_ops(plan.edits)[0] == {
        "replace": {"cell": "b", "old": "y = 20", "new": "y = 2", "whole": True}
    }


def test_a_cell_changed_since_the_turn_is_refused_and_named_the_rest_restored() -> None:
    log = EditLog()
    after = turn_of(
        log,
        BEFORE,
        {"insert": {"after": "a", "cell_type": "code", "source": "w = 0"}},
        {"replace": {"cell": "b", "old": "2", "new": "20"}},
    )
    entry = log.find("default", 2)
    assert entry is not None
    # The user typed around the turn's text in b (its text still holds the turn's whole).
    typed = [Cell(c.id, c.cell_type, "# mine\n" + c.source if c.id == "b" else c.source, None)
             for c in after]  # fmt: skip
    plan = plan_undo(entry, typed)
    assert plan.edits == (Delete("new1"),)
    (refused,) = plan.refused
    assert refused.startswith("cell b ('# mine'): changed since turn #2"), refused
    # A cell gone since the turn is named too.
    plan = plan_undo(entry, [c for c in after if c.id != "new1"])
    assert plan.edits == (Replace("b", "y = 20", "y = 2", whole=True),)
    assert plan.refused == ("cell new1 ('w = 0'): deleted since turn #2",)


def test_a_deleted_cell_comes_back_only_below_a_cell_that_is_there() -> None:
    log = EditLog()
    after = turn_of(log, BEFORE, {"delete": {"cell": "a"}})
    entry = log.find("default", None)
    assert entry is not None
    assert plan_undo(entry, after).edits == (Insert("ask", "code", "x = 1", "a"),)
    without_place = [c for c in after if c.id != "ask"]
    plan = plan_undo(entry, without_place)
    assert plan.edits == ()
    assert "below cell ask" in plan.refused[0]
    back = [*after, Cell("a", "code", "someone's", None)]
    assert "a cell with its id is back" in plan_undo(entry, back).refused[0]


def test_after_a_restart_the_marks_name_the_turn_s_cells() -> None:
    marked = [
        Cell("a", "code", "x", None, byre={"conversation": "conv-1", "turn": 2}),
        Cell("b", "code", "y", None, byre={"conversation": "conv-9", "turn": 2}),
        Cell("c", "code", "z", None, byre={"conversation": "conv-1", "turn": 3}),
        Cell("d", "code", "w", None),
    ]
    assert marked_cells(marked, "conv-1", 2) == ["a"]
    assert marked_cells(marked, None, 2) == ["a", "b"]


def test_changes_of_other_sessions_and_turns_are_kept_apart() -> None:
    log = EditLog()
    change = CellChange("a", "code", "replace", "x = 1", "x = 2")
    log.record("default", PROVENANCE, [change], ["a"])
    log.record("other", PROVENANCE, [change], ["a"])
    log.record("default", {**PROVENANCE, "turn": 3}, [change], ["a"])
    assert [(t.session, t.turn) for t in log.turns()] == [
        ("default", 2),
        ("other", 2),
        ("default", 3),
    ]
    assert log.find("default", None) is log.turns()[-1]
    log.forget(log.turns()[-1])
    assert log.find("default", None) is log.turns()[0]
