"""The spares the ``editing`` event asks for (``ClaudeExtension.editing``, app/spare.py): the
fork where re-running the edited cell branches, then a fresh one, and nothing for a cell no
conversation holds, a first cell, speculation off, or while a turn runs. Over a hand-built
turn tree and a recording ``Spares.offer``: no CLI starts. The event's way from the comm:
tests/unit/bridge/test_channel.py; with the real CLI:
tests/integration/kernel/test_spare_kernel.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from byre_jupyter.app.conversation import Placement
from byre_jupyter.app.extension import ClaudeExtension
from byre_jupyter.app.spare import Want
from byre_jupyter.session import Session

Offered = list[list[Want]]


@pytest.fixture
def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClaudeExtension]:
    monkeypatch.setenv("BYRE_STATE_DIR", str(tmp_path / "state"))
    extension = ClaudeExtension(InteractiveShell.instance())
    extension.config.cwd = str(tmp_path)
    yield extension


def offers(ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch) -> Offered:
    """What ``ext.spares.offer`` is asked for, each offer's wants in order (nothing starts)."""
    offered: Offered = []

    def offer(wants: Sequence[tuple[Want, Callable[[], Session]]]) -> None:
        offered.append([want for want, _ in wants])

    monkeypatch.setattr(ext.spares, "offer", offer)
    return offered


def ran(ext: ClaudeExtension, name: str, *cells: str) -> None:
    """Session ``name`` (no CLI) has run ``cells`` in order, each answered in conversation
    ``conv-NAME`` with assistant message ``uuid-CELL``."""
    tree = ext.conversations.tree(name)
    if tree is None:
        ext.conversations.install(Session(name), new=True)
        tree = ext.conversations.tree(name)
    assert tree is not None
    for cell in cells:
        node = tree.begin(Placement(tree.current, fork=False), cell, f"PROMPT_{cell}", None)
        node.conversation, node.uuids = f"conv-{name}", (f"uuid-{cell}",)


def test_editing_an_earlier_cell_offers_its_fork_then_a_fresh_one(
    ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch
) -> None:
    offered = offers(ext, monkeypatch)
    ran(ext, "default", "cell-a", "cell-b", "cell-c")
    ext.speculate("default")
    ext.editing("cell-b")
    (newest, fresh), (edited, fresh_again) = offered
    # At its end the turn asked for the fork before the newest cell (after A's answer, B's).
    assert (newest.conversation, newest.at) == ("conv-default", "uuid-cell-b")
    # Editing B: the fork after A's answer, where B's re-run branches, in the newest's place.
    assert (edited.conversation, edited.at) == ("conv-default", "uuid-cell-a")
    assert fresh == fresh_again and (fresh.conversation, fresh.at) == (None, None)
    # The launch B's re-run makes is the one that spare was made for (ClaudeExtension._launch).
    assert edited.key == newest.key


def test_the_cell_is_found_in_the_conversation_that_holds_it(
    ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch
) -> None:
    offered = offers(ext, monkeypatch)
    ran(ext, "default", "cell-a")
    ran(ext, "other", "cell-x", "cell-y")
    ext.editing("cell-y")
    ((edited, _),) = offered
    assert (edited.conversation, edited.at) == ("conv-other", "uuid-cell-x")


@pytest.mark.parametrize(
    "cell",
    ["cell-unknown", "cell-a", "", "cell a", "x" * 65],
    ids=["no conversation holds it", "a first cell", "empty", "a space", "too long"],
)
def test_nothing_for_a_bad_id_or_a_cell_whose_rerun_would_not_fork(
    ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch, cell: str
) -> None:
    offered = offers(ext, monkeypatch)
    ran(ext, "default", "cell-a", "cell-b", "cell a", "x" * 65)
    ext.editing(cell)
    assert offered == []


def test_nothing_with_speculation_off_or_transcripts_or_append_mode(
    ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ran(ext, "default", "cell-a", "cell-b", "cell-c")
    offered = offers(ext, monkeypatch)
    ext.config.speculate = False
    ext.editing("cell-b")
    ext.config.speculate, ext.config.transcripts = True, str(tmp_path)
    ext.editing("cell-b")
    ext.config.transcripts, ext.config.rerun = "", "append"
    ext.editing("cell-b")  # a re-run appends, it does not branch
    assert offered == []


def test_nothing_while_a_turn_runs(ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch) -> None:
    offered = offers(ext, monkeypatch)
    ran(ext, "default", "cell-a", "cell-b", "cell-c")
    monkeypatch.setattr(ext.spares, "idle", lambda: False)
    ext.editing("cell-b")
    assert offered == []
