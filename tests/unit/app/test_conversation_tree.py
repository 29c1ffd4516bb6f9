"""The turn tree behind re-run branching, without processes: where a re-run goes,
which answers it leaves behind, where the fork starts, and how history shows it."""

from __future__ import annotations

import pytest

from byre_jupyter.app.conversation import (
    BranchError,
    ConversationTree,
    TurnNode,
    find_turn,
    render_history,
)
from byre_jupyter.session import TurnResult


def run(tree: ConversationTree, cell: str | None, prompt: str, mode: str = "branch") -> TurnNode:
    placement = tree.place(cell, mode)
    node = tree.begin(placement, cell, prompt, len(tree.turns) + 1)
    conversation = "conv-1" if placement.parent is None else placement.parent.conversation
    if placement.fork:
        conversation = f"conv-{node.number}"
    node.finish(
        TurnResult(
            text="ok",
            session_id=conversation,
            is_error=False,
            cost_usd=0.001,
            message_uuids=(f"u{node.number}a", f"u{node.number}b"),
        )
    )
    return node


def test_rerun_follows_the_newest_turn_of_the_cell_it_followed() -> None:
    tree = ConversationTree()
    a, b, c = run(tree, "A", "a"), run(tree, "B", "b"), run(tree, "C", "c")
    placement = tree.place("B", "branch")
    assert placement.parent is a and placement.fork
    assert tree.left_behind(a, "B") == [c]  # B's own old answer is replaced, not marked
    assert tree.fork_point(a) == ("conv-1", "u1b")
    b2 = tree.begin(placement, "B", "b2", 4)
    assert tree.place("C", "branch").parent is b2
    assert not tree.place("C", "branch").fork  # B' is where the session is
    assert b.parent is a


def test_append_mode_and_cells_without_id_stay_linear() -> None:
    tree = ConversationTree()
    run(tree, "A", "a")
    b = run(tree, "B", "b")
    assert tree.place("A", "append").parent is b and not tree.place("A", "append").fork
    c = run(tree, None, "c")
    assert tree.place(None, "branch").parent is c


def test_rerunning_the_first_cell_starts_from_the_root() -> None:
    tree = ConversationTree(base="resumed")
    run(tree, "A", "a")
    run(tree, "B", "b")
    placement = tree.place("A", "branch")
    assert placement.parent is None and placement.fork
    assert tree.fork_point(None) == ("resumed", None)


def test_the_fork_point_skips_turns_that_produced_no_message() -> None:
    tree = ConversationTree()
    a = run(tree, "A", "a")
    b = tree.begin(tree.place("B"), "B", "b", 2)
    b.finish(None)  # e.g. stopped before the CLI answered
    assert tree.fork_point(b) == ("conv-1", a.uuids[-1])


def test_a_cell_appended_to_itself_branches_from_before_its_runs() -> None:
    tree = ConversationTree()
    a = run(tree, "A", "a")
    run(tree, "B", "b")
    run(tree, "B", "b again", "append")
    assert tree.place("B", "branch").parent is a


def test_history_shows_branches_cells_cost_and_current() -> None:
    tree = ConversationTree()
    run(tree, "cell-aaaaaaaaa", "first question")
    run(tree, "cell-bbbbbbbbb", "old second")
    run(tree, "cell-ccccccccc", "third")
    run(tree, "cell-bbbbbbbbb", "new second")
    text = render_history("default", tree)["text/plain"]
    lines = text.splitlines()
    assert any("#2" in line and "○" in line and "old second" in line for line in lines)
    assert any("#4" in line and "●" in line and "(current)" in line for line in lines)
    assert "$0.0010" in text and "cell cell-aaa" in text
    # #1 is the trunk; #2 (with #3 straight after it) and #4 are its two branches.
    line = {n: next(x for x in lines if f"#{n} " in x) for n in (1, 2, 3, 4)}
    assert line[1].startswith("●") and line[2].startswith("├─ ○")
    assert line[3].startswith("│  ○") and line[4].startswith("└─ ●")


def test_find_turn_by_number_count_cell_and_start() -> None:
    tree = ConversationTree()
    a = run(tree, "cell-a", "a")
    b = run(tree, "cell-b", "b")
    assert find_turn(tree, "#1") is a and find_turn(tree, "2") is b
    assert find_turn(tree, "[2]") is b and find_turn(tree, "cell-a") is a
    assert find_turn(tree, "start") is None
    for bad in ("#9", "[9]", "nope", "cell"):
        with pytest.raises(LookupError):
            find_turn(tree, bad)


def test_a_branch_to_before_a_compaction_is_refused_in_words() -> None:
    # CLI 2.1.328 cannot resume at a message older than the conversation's newest compaction
    # (tests/integration/cli/test_slash_commands_cli.py): the re-run says so and why.
    tree = ConversationTree()
    a, b = run(tree, "A", "a"), run(tree, "B", "b")
    compact = run(tree, "C", "/compact")
    compact.compacted = True
    d = run(tree, "D", "d")
    assert tree.fork_point(d) == ("conv-1", "u4b")  # after the compaction: fine
    assert tree.fork_point(compact) == ("conv-1", "u3b")
    with pytest.raises(BranchError) as caught:
        tree.fork_point(a)
    text = str(caught.value)
    assert "compacted" in text and compact.label() in text and a.label() in text
    assert "%claude new" in text
    assert b.parent is a


def test_a_compaction_on_another_branch_does_not_block_this_one() -> None:
    tree = ConversationTree()
    a = run(tree, "A", "a")
    run(tree, "B", "b")
    b2 = run(tree, "B", "b again")  # a fork of conv-1 after A: conversation conv-3
    b2.compacted = True
    assert tree.fork_point(a) == ("conv-1", "u1b")  # conv-1 was never compacted
