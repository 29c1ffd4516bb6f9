"""The kernel's per-turn edit log and the undo batch built from it (tools/edit_log.py)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

import pytest
from IPython.core.error import UsageError
from support.frontend import FakePage

from byre_jupyter.app.undo import apply_undo, parse_turn, prepare_undo
from byre_jupyter.magics.transform import transform_claude_cell
from byre_jupyter.session.permissions import Allow, Decision, Deny
from byre_jupyter.tools.edit_log import (
    PROMPT_CHARS,
    EditLog,
    clip_prompt,
    marked_cells,
    plan_undo,
    turn_lines,
)
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


# -- %claude undo (app/undo.py) over a bridge whose frontend answers -------------------------


def as_json(
    cells_now: list[Cell], marks: dict[str, dict[str, object]] | None = None
) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "cell_type": c.cell_type, "source": c.source, "execution_count": None,
         "outputs": [], "metadata": {"byre": (marks or {})[c.id]} if c.id in (marks or {}) else {}}
        for c in cells_now
    ]  # fmt: skip


def logged_turn() -> tuple[EditLog, list[Cell]]:
    log = EditLog()
    after = turn_of(
        log,
        BEFORE,
        {"insert": {"after": "a", "cell_type": "code", "source": "w = 0"}},
        {"replace": {"cell": "b", "old": "2", "new": "20"}},
    )
    return log, after


async def test_undo_reviews_one_batch_and_applies_it_without_provenance() -> None:
    log, after = logged_turn()
    typed = [Cell(c.id, "code", "w = 0 # mine", None) if c.id == "new1" else c for c in after]
    frontend = FakePage(cells=as_json(typed), edit_reply={"applied": ["b"]}, dirty=False).connect()
    prepared = await prepare_undo(log, "default", None, frontend.bridge)
    reviewed: list[Mapping[str, Any]] = []

    async def allow(review: Mapping[str, Any]) -> Decision:
        reviewed.append(review)
        return Allow()

    outcome = await apply_undo(log, prepared, allow)
    assert outcome.applied, outcome.text
    (review,) = reviewed
    assert [(c["cell"], c["before"], c["after"]) for c in review["cells"]] == [
        ("b", "y = 20", "y = 2")
    ]
    (sent,) = frontend.edits
    assert sent == {
        "edits": [{"replace": {"cell": "b", "old": "y = 20", "new": "y = 2", "whole": True}}],
        "reviewed": {},  # a whole-text replace is its own check
        "provenance": None,
    }
    assert "restored cells b" in outcome.text
    assert "not restored: cell new1 ('w = 0 # mine'): changed since turn #2" in outcome.text
    # The cell left alone stays in the log; a second undo names it again.
    entry = log.find("default", 2)
    assert entry is not None and [c.cell for c in entry.cells] == ["new1"]


async def test_a_denied_or_refused_undo_changes_nothing_and_says_so() -> None:
    log, after = logged_turn()
    frontend = FakePage(cells=as_json(after), edit_reply={"applied": []}, dirty=False).connect()
    prepared = await prepare_undo(log, "default", 2, frontend.bridge)

    async def deny(review: Mapping[str, Any]) -> Decision:
        return Deny("keep it")

    outcome = await apply_undo(log, prepared, deny)
    assert not outcome.applied and "denied: keep it" in outcome.text
    assert frontend.edits == []
    refusing = FakePage(
        cells=as_json(after), edit_reply={"refused": "cell b changed since the turn"}, dirty=False
    ).connect()
    prepared = await prepare_undo(log, "default", 2, refusing.bridge)
    outcome = await apply_undo(log, prepared, lambda r: _allowed())
    assert not outcome.applied and "cell b changed since the turn" in outcome.text
    assert log.find("default", 2) is not None


async def _allowed() -> Decision:
    return Allow()


async def test_undo_errors_are_usage_errors_before_anything_is_shown() -> None:
    log, after = logged_turn()
    with pytest.raises(UsageError, match="no notebook frontend with byre_jupyter's bridge"):
        await prepare_undo(log, "default", None, None)
    frontend = FakePage(cells=as_json(after), edit_reply={"applied": []}, dirty=False).connect()
    with pytest.raises(UsageError, match="turn #7 of session 'default' changed no cells"):
        await prepare_undo(log, "default", 7, frontend.bridge)
    with pytest.raises(UsageError, match="no turn of session 'other' changed cells"):
        await prepare_undo(log, "other", None, frontend.bridge)
    # A restarted kernel: no log, but the saved marks name the turn's cells.
    marked = FakePage(
        cells=as_json(after, {"b": {"conversation": "c", "turn": 2}}), edit_reply={}, dirty=False
    ).connect()
    with pytest.raises(UsageError, match=r"no record of turn #2's edits .*cells b carry its mark"):
        await prepare_undo(EditLog(), "default", 2, marked.bridge)
    # Every cell changed since: nothing to review.
    gone = FakePage(
        cells=as_json([c for c in after if c.id not in ("b", "new1")]), edit_reply={}, dirty=False
    ).connect()
    with pytest.raises(UsageError, match="nothing of turn #2 can be restored"):
        await prepare_undo(log, "default", 2, gone.bridge)
    with pytest.raises(argparse.ArgumentTypeError, match="#N or N"):
        parse_turn("last")
    assert parse_turn("#3") == parse_turn("3") == 3


def test_a_claude_undo_cell_alone_becomes_an_async_cell() -> None:
    assert transform_claude_cell(["%claude undo #2 -s x\n"]) == [
        'await __import__("byre_jupyter.magics", fromlist=["undo"]).undo(\'#2 -s x\')\n'
    ]
    assert transform_claude_cell(["%claude undo"]) == [
        'await __import__("byre_jupyter.magics", fromlist=["undo"]).undo(\'\')\n'
    ]
    for lines in (["%claude undo\n", "x = 1\n"], ["%claude history\n"], ["%claude undone\n"]):
        assert transform_claude_cell(lines) == lines


def test_history_lists_each_turn_s_cells() -> None:
    log, _ = logged_turn()
    entry = log.find("default", None)
    assert entry is not None
    assert turn_lines(entry) == [
        "  turn #2 'tidy up':",
        "    inserted code cell new1: 'w = 0'",
        "    changed code cell b: 'y = 20'",
    ]


def test_the_clipped_prompt_fits_the_frontends_limit_in_its_own_units() -> None:
    """The page counts a string's length in UTF-16 units (labextension/src/edit.ts refuses a
    provenance whose prompt is longer than 200): a prompt of emoji clipped to 200 code points
    was twice that there, and the page refused the whole batch."""
    for prompt in ("📈" * 300, "a" * 150 + "😀" * 100, "x" * 500, "short 😀"):
        clipped = clip_prompt(prompt)
        assert len(clipped.encode("utf-16-le")) // 2 <= PROMPT_CHARS, prompt[:20]
        assert prompt.startswith(clipped.rstrip("…")), prompt[:20]
    assert clip_prompt("short 😀") == "short 😀"
