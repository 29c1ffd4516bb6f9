"""Answers that wait for a page (tools/pending_answers.py; docs/bridge.md, "Pending
answers"): a turn's record is kept when the page that showed the turn is gone, and written
into its cell on the next hello, once; a page that says hello during a turn gets the turn's
live view again."""

from __future__ import annotations

import asyncio
from typing import Any

from support import wire as fx
from support.frontend import FakeComm, hello_of

from byre_jupyter.app.surfaces import SurfaceControls, WidgetSurface, as_outputs
from byre_jupyter.bridge import Bridge, BridgeTurn
from byre_jupyter.session import Allow
from byre_jupyter.tools.bounded import ToolLimits
from byre_jupyter.tools.notebook import Cell, NotebookRead, render_notebook
from byre_jupyter.tools.pending_answers import KEPT_CELLS, PendingAnswers, pending_answers
from byre_jupyter.ui import TurnView
from byre_jupyter.ui.record import static_outputs

RECORD = [({"text/plain": "the answer"}, {"byre": {"portable": {"whole": "conversation"}}})]
LIVE = [{"output_type": "display_data", "data": {"text/plain": "live"}, "metadata": {}}]


def restores(comm: FakeComm) -> list[dict[str, Any]]:
    return [m["params"] for m in comm.sent if m.get("method") == "cell.restore"]


def answering(comm: FakeComm) -> FakeComm:
    """A page that answers each request (a restore: written), a turn of the loop later."""
    send = comm.send

    def reply(data: dict[str, Any]) -> None:
        send(data)
        if data.get("type") == "request":
            answer = {"type": "reply", "id": data["id"], "ok": True, "result": {"written": True}}
            asyncio.get_running_loop().call_soon(comm.deliver, answer)

    comm.send = reply  # type: ignore[method-assign]
    return comm


def connected(path: str = "work/a.ipynb") -> tuple[Bridge, FakeComm]:
    bridge, comm = Bridge(), FakeComm()
    bridge.opened(comm, {"content": {"data": hello_of(path)}})
    return bridge, comm


def reopen(bridge: Bridge) -> FakeComm:
    """Another page opens the notebook: a new comm, and its hello."""
    comm = answering(FakeComm())
    bridge.opened(comm, {"content": {"data": hello_of("a.ipynb")}})
    return comm


async def settle() -> None:
    for _ in range(6):  # the hello's work, and the page's reply, are scheduled on the loop
        await asyncio.sleep(0)


async def test_a_turn_whose_page_closed_lands_in_its_cell_on_the_next_hello_once() -> None:
    bridge, first = connected()
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("c1").showing(lambda: LIVE)  # type: ignore[union-attr]
    assert first.close_handler is not None
    first.close_handler({})  # the page went away during the turn
    answers.slot("c1").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    assert list(answers.kept) == ["c1"]
    page = reopen(bridge)
    await settle()
    (restored,) = restores(page)
    # Written once, with the record's metadata (the page keeps its ``byre`` key: restore.ts).
    assert restored == {"cell": "c1", "outputs": as_outputs(RECORD), "final": True}
    assert restored["outputs"][0]["metadata"] == RECORD[0][1] and answers.kept == {}
    again = reopen(bridge)
    await settle()
    assert restores(again) == []


async def test_a_page_that_reloads_during_a_turn_gets_its_live_view_then_its_record() -> None:
    bridge, _first = connected()
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("c1").showing(lambda: LIVE)  # type: ignore[union-attr]
    page = reopen(bridge)  # a reload: the new comm replaces the old one
    await settle()
    assert restores(page) == [{"cell": "c1", "outputs": LIVE, "final": False}]
    answers.slot("c1").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    await settle()
    assert restores(page)[-1] == {"cell": "c1", "outputs": as_outputs(RECORD), "final": True}
    assert answers.kept == {}


async def test_a_record_sent_on_a_comm_the_page_replaced_waits_for_the_next_one() -> None:
    """The finding of the browser test: a page makes a second comm as it loads; a record sent
    once on the first one was lost. It is kept until a page says it has it."""
    bridge, first = connected()
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("c1").showing(lambda: LIVE)  # type: ignore[union-attr]
    assert first.close_handler is not None
    first.close_handler({})
    answers.slot("c1").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    silent = FakeComm()  # the page's first comm: replaced before it answers
    bridge.opened(silent, {"content": {"data": hello_of("a.ipynb")}})
    await settle()
    assert [r["cell"] for r in restores(silent)] == ["c1"] and list(answers.kept) == ["c1"]
    second = reopen(bridge)
    silent.page_closed()  # the page closes its first comm once its second is open
    await settle()
    await settle()  # the first request is asked again of the second comm
    assert [r["cell"] for r in restores(second)] == ["c1"] and answers.kept == {}


async def test_the_page_that_showed_the_turn_keeps_it_unless_it_does_not_answer() -> None:
    bridge, comm = connected()
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("c1").showing(lambda: LIVE)  # type: ignore[union-attr]
    send = comm.send

    def reply(data: dict[str, Any]) -> None:  # the page refuses ping, as any request
        send(data)
        answer = {"type": "reply", "id": data["id"], "ok": False, "error": "refused"}
        asyncio.get_running_loop().call_soon(comm.deliver, answer)

    comm.send = reply  # type: ignore[method-assign]
    answers.slot("c1").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    await asyncio.gather(*answers._checks)
    assert answers.kept == {} and [m["method"] for m in comm.sent] == ["ping"]
    # A closed tab leaves the comm open and answers nothing: the record is kept.
    comm.send = send  # type: ignore[method-assign]
    answers.slot("c2").showing(lambda: LIVE)  # type: ignore[union-attr]
    answers.slot("c2").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    await settle()  # the ping is out
    bridge._fail_pending("stands for the 10 s without an answer")
    await asyncio.gather(*answers._checks)
    assert list(answers.kept) == ["c2"]


async def test_no_page_at_the_start_keeps_nothing_and_the_kept_are_bounded() -> None:
    bridge = Bridge()  # a headless run: no page ever connected
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    assert answers.slot("c0").kept is False  # type: ignore[union-attr]
    answers.slot("c0").showing(lambda: LIVE)  # type: ignore[union-attr]
    answers.slot("c0").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    assert answers.kept == {} and answers.slot(None) is None
    bridge, comm = connected()
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    assert answers.slot("c0").kept is True  # type: ignore[union-attr]
    for n in range(KEPT_CELLS + 5):
        answers.slot(f"c{n}").showing(lambda: LIVE)  # type: ignore[union-attr]
    assert comm.close_handler is not None
    comm.close_handler({})
    for n in range(KEPT_CELLS + 5):
        answers.slot(f"c{n}").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    assert list(answers.kept) == [f"c{n}" for n in range(5, KEPT_CELLS + 5)]  # the newest


async def test_a_page_that_opens_while_the_closed_one_is_pinged_gets_the_record() -> None:
    bridge, _comm = connected()  # its tab closed: the comm stays open, nothing answers
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("c1").showing(lambda: LIVE)  # type: ignore[union-attr]
    answers.slot("c1").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    await settle()  # the ping is out
    page = reopen(bridge)  # fails the ping: "the notebook page reconnected"
    await asyncio.gather(*answers._checks)
    await settle()
    assert restores(page)[-1] == {"cell": "c1", "outputs": as_outputs(RECORD), "final": True}
    assert answers.kept == {}


async def test_cells_run_in_place_on_a_closed_tab_are_kept_with_the_turn_that_ran_them() -> None:
    bridge, _comm = connected()  # the tab closes during the turn: nothing answers
    answers = PendingAnswers(bridge, asyncio.get_running_loop())
    answers.slot("turn").showing(lambda: LIVE)  # type: ignore[union-attr]
    ran = [{"output_type": "stream", "name": "stdout", "text": "RAN\n"}]
    answers.showing("ran", None)
    answers.finished("ran", ran, ask=False)  # no ping of its own
    assert answers.kept == {}
    answers.slot("turn").finished(as_outputs(RECORD))  # type: ignore[union-attr]
    await settle()
    bridge._fail_pending("stands for the 10 s without an answer")
    await asyncio.gather(*answers._checks)
    assert sorted(answers.kept) == ["ran", "turn"]
    page = reopen(bridge)
    await settle()
    assert {r["cell"]: r["outputs"] for r in restores(page)}["ran"] == ran


def test_a_kept_record_carries_what_its_cell_holds_when_its_page_stayed() -> None:
    """The finding: a restored record had no ``metadata.byre`` (the session, the answer's text,
    the portable record), so a notebook saved after a restore read otherwise than one whose
    page never went away: the read tool gave the whole exchange, tool cards included, and
    ``%claude resume --from`` found no record. The record goes with its metadata."""
    view, _ = fx.run_turn(fx.bash_roundtrip())
    extra = {"portable": {"format": "f", "session_id": "s", "saved_at": 1.0, "data": "AA=="}}
    bundles = static_outputs(view, extra=extra)
    shown = [{"output_type": "display_data", "data": d, "metadata": m} for d, m in bundles]
    assert as_outputs(bundles) == shown
    assert shown[0]["metadata"]["byre"]["portable"] == extra["portable"]

    def read(outputs: list[dict[str, Any]]) -> str:
        cells = (Cell("c1", "code", "%%claude\nhi", 1, tuple(outputs)),)
        found = render_notebook(
            NotebookRead(cells, where="n.ipynb", live=False),
            [0],
            asking=None,
            ran=lambda _n: None,
            images=False,
            limits=ToolLimits(),
        )
        return str(found.content)

    assert read(as_outputs(bundles)) == read(shown)
    assert "%%claude answer" in read(as_outputs(bundles))


async def test_a_card_in_the_turns_cell_tells_every_page_while_it_waits() -> None:
    """The widget surface is where every card (approval, question, plan) starts and stops
    waiting: it tells the bridge, which tells the pages (docs/bridge.md, "Collaboration")."""
    bridge, comm = connected()
    other = reopen(bridge)
    answers = pending_answers(bridge)
    assert answers is not None
    turn = BridgeTurn(bridge, "c1")
    controls = SurfaceControls([], lambda: None, lambda _m: None, asyncio.get_running_loop())
    surface = WidgetSurface(TurnView("s", "go"), controls, answers.slot("c1"))
    card = surface.ask("Bash", {"command": "ls"})
    assert card is not None
    told = [m["params"] for m in other.sent if m.get("method") == "review.pending"]
    assert told == [{"cell": "c1", "waiting": True}]
    card.decision.set_result(Allow())
    await settle()
    for page in (comm, other):
        told = [m["params"] for m in page.sent if m.get("method") == "review.pending"]
        assert told == [{"cell": "c1", "waiting": True}, {"cell": "c1", "waiting": False}]
    turn.end()
