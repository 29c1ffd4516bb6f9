"""The kernel's end of the frontend bridge (docs/bridge.md) over a stand-in comm: the hello,
requests answered by id (from another thread too), every way a request can fail, the turn
announcements, and the stray comms of our target closed when byre_jupyter loads."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from support.frontend import FakeComm, FakePage, hello_of, next_request

from byre_jupyter import bridge as notebook_bridge
from byre_jupyter.app.doctor import bridge_check
from byre_jupyter.bridge import (
    PROTOCOL,
    Bridge,
    BridgeError,
    BridgeTurn,
    Hello,
    PageClosedError,
    ReadNotebook,
    announce_turn,
    install_bridge,
    uninstall_bridge,
)
from byre_jupyter.bridge.messages import ApplyEdits, RunBegin, RunEnd, RunOutput

HELLO = hello_of("")


def connected(path: str = "work/a.ipynb") -> tuple[Bridge, FakeComm]:
    page = FakePage(path=path, answering=False).connect()
    return page.bridge, page.comm


def test_the_hello_connects_and_names_the_notebook() -> None:
    bridge, _ = connected()
    assert bridge.connected
    assert bridge.hello == Hello("0.1.0", "lab", "work/a.ipynb")


@pytest.mark.parametrize(
    "hello",
    [
        {**HELLO, "protocol": PROTOCOL + 1, "path": "a.ipynb"},
        {**HELLO, "path": ["not", "a", "string"]},
        {"type": "hello"},
    ],
)
def test_a_hello_we_do_not_speak_does_not_connect(hello: dict[str, Any]) -> None:
    bridge, comm = Bridge(), FakeComm()
    bridge.opened(comm, {"content": {"data": hello}})
    assert not bridge.connected
    assert bridge.refused is not None


async def test_a_request_gets_the_reply_with_its_id() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request(ReadNotebook(images=False)))
    request = await next_request(comm)
    assert request["type"] == "request"
    assert request["method"] == "read"
    assert request["params"] == {"images": False}
    comm.deliver({"type": "reply", "id": "not-" + request["id"], "ok": True, "result": {"x": 0}})
    comm.deliver({"type": "reply", "id": request["id"], "ok": True, "result": {"cells": []}})
    assert await task == {"cells": []}


async def test_a_reply_from_a_subshell_thread_settles_on_the_loop() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request(ReadNotebook()))
    request = await next_request(comm)
    reply = {"type": "reply", "id": request["id"], "ok": True, "result": {"cells": [1]}}
    thread = threading.Thread(target=comm.deliver, args=(reply,))
    thread.start()
    thread.join()
    assert await asyncio.wait_for(task, 5) == {"cells": [1]}


async def test_a_frontend_that_fails_says_why() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request(ReadNotebook()))
    request = await next_request(comm)
    comm.deliver({"type": "reply", "id": request["id"], "ok": False, "error": "model gone"})
    with pytest.raises(BridgeError, match="model gone"):
        await task


async def test_a_silent_frontend_times_out() -> None:
    bridge, _ = connected()
    with pytest.raises(BridgeError, match="did not answer"):
        await bridge.request(ReadNotebook(), timeout=0.01)


async def test_closing_the_comm_fails_what_waits_and_disconnects() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request(ReadNotebook()))
    await next_request(comm)
    assert comm.close_handler is not None
    comm.close_handler({})
    with pytest.raises(BridgeError, match="closed"):
        await asyncio.wait_for(task, 5)
    assert not bridge.connected
    with pytest.raises(BridgeError, match="not connected"):
        await bridge.request(ReadNotebook())


async def test_a_newer_page_serves_and_the_older_stays_for_when_it_closes() -> None:
    """A reloaded page, or a second tab: the kernel's announce comes before its hello, and the
    page that said hello last serves; the older one's late close changes nothing."""
    bridge, old = connected("old.ipynb")
    task = asyncio.ensure_future(bridge.request(ReadNotebook()))
    request = await next_request(old)
    new = FakeComm()
    bridge.attach(new)  # the kernel's own announce, before the page's hello
    assert bridge.hello is not None and bridge.hello.path == "old.ipynb"
    old.deliver({"type": "reply", "id": request["id"], "ok": True, "result": {"cells": []}})
    assert await task == {"cells": []}  # asked of the old page, answered by it
    new.deliver({**HELLO, "path": "new.ipynb"})
    assert bridge.hello is not None and bridge.hello.path == "new.ipynb"
    assert bridge.pages == 2
    old.page_closed()  # the old comm's late close does not disconnect the new one
    assert bridge.connected and bridge.comm is new and bridge.pages == 1


CELLS = [{"id": "a", "cell_type": "code", "source": "x = 1", "execution_count": 1, "outputs": []}]


def two_pages() -> tuple[FakePage, FakePage]:
    """Two tabs on one notebook and kernel: each opened its own comm."""
    first = FakePage(cells=CELLS, path="n.ipynb").connect()
    second = FakePage(first.bridge, cells=CELLS, path="n.ipynb").connect()
    return first, second


async def test_when_the_page_holding_the_bridge_closes_the_other_takes_over() -> None:
    first, second = two_pages()
    bridge = first.bridge
    assert (await bridge.request(ReadNotebook()))["cells"] == CELLS
    assert second.requests and not first.requests  # the newest serves
    turn = BridgeTurn(bridge, "ask")
    second.close()
    assert bridge.connected and bridge.comm is first.comm
    # The page that took over heard of the running turn as it began, once.
    assert first.notified("turn.") == [("turn.begin", {"cell": "ask"})]
    assert (await bridge.request(ReadNotebook()))["cells"] == CELLS
    first.edit_reply = {"applied": ["b"]}
    edit = ApplyEdits([{"insert": {"after": "a", "cell_type": "code", "source": "y"}}], {}, {})
    assert await bridge.request(edit) == {"applied": ["b"]}
    turn.end()
    assert first.notified("turn.")[-1] == ("turn.end", {"cell": "ask"})
    assert len(first.edits) == 1 and second.edits == []
    first.close()
    assert not bridge.connected


async def test_a_read_in_flight_on_a_page_that_closes_is_asked_of_the_next() -> None:
    first, second = two_pages()
    second.answering = False
    task = asyncio.ensure_future(first.bridge.request(ReadNotebook()))
    await next_request(second.comm)
    second.close()
    assert await asyncio.wait_for(task, 5) == {"path": "n.ipynb", "dirty": True, "cells": CELLS}
    assert [r["method"] for r in first.requests] == ["read"]


@pytest.mark.parametrize(
    "message",
    [
        ApplyEdits([{"delete": {"cell": "a"}}], {}, {"conversation": "c", "turn": 1}),
        RunBegin("a", 4),
    ],
    ids=["edit", "run.begin"],
)
async def test_an_edit_or_run_in_flight_on_a_page_that_closes_fails_and_is_not_resent(
    message: ApplyEdits | RunBegin,
) -> None:
    """The closed page may have applied it: asking the next page would apply it twice."""
    first, second = two_pages()
    second.answering = False
    task = asyncio.ensure_future(first.bridge.request(message))
    await next_request(second.comm)
    second.close()
    with pytest.raises(PageClosedError, match=r"closed before it answered.*read the notebook"):
        await asyncio.wait_for(task, 5)
    assert first.requests == []  # nothing asked again
    assert first.bridge.connected


async def test_a_reply_counts_only_from_the_page_that_was_asked() -> None:
    first, second = two_pages()
    second.answering = False
    task = asyncio.ensure_future(first.bridge.request(ApplyEdits([], {}, {})))
    request = await next_request(second.comm)
    forged = {"type": "reply", "id": request["id"], "ok": True, "result": {"applied": ["x"]}}
    first.comm.deliver(forged)
    await asyncio.sleep(0)
    assert not task.done()
    second.comm.deliver({**forged, "result": {"applied": []}})
    assert await asyncio.wait_for(task, 5) == {"applied": []}


def test_a_comm_that_never_said_hello_never_serves() -> None:
    """The kernel's announced comm before any page took it, or a page of another protocol."""
    bridge = Bridge()
    announced, stale = FakeComm(), FakeComm()
    bridge.attach(announced)
    bridge.opened(stale, {"content": {"data": {**HELLO, "protocol": 99, "path": "a"}}})
    assert not bridge.connected and bridge.pages == 0 and bridge.refused == "99"
    page = FakePage(bridge, path="a").connect()
    assert bridge.comm is page.comm and bridge.refused is None
    page.close()
    assert not bridge.connected


def editing(cell: object) -> dict[str, Any]:
    return {"type": "event", "name": "editing", "cell": cell}


async def test_an_editing_event_reaches_the_listener_on_the_loop_from_any_thread() -> None:
    bridge, comm = connected()
    loop = asyncio.get_running_loop()
    heard: list[tuple[str, bool]] = []
    got = asyncio.Event()

    def on_editing(cell: str) -> None:
        heard.append((cell, asyncio.get_running_loop() is loop))
        got.set()

    bridge.listen(on_editing)
    thread = threading.Thread(target=comm.deliver, args=(editing("cell-b"),))
    thread.start()
    thread.join()
    await asyncio.wait_for(got.wait(), 5)
    assert heard == [("cell-b", True)] and comm.sent == []  # an event gets no reply


async def test_events_without_a_cell_id_or_before_the_hello_are_dropped() -> None:
    heard: list[str] = []
    bridge, comm = connected()
    bridge.listen(heard.append)
    for junk in (None, 7, ["c"], {"id": "c"}):
        comm.deliver(editing(junk))
    comm.deliver({"type": "event", "name": "typing", "cell": "cell-b"})  # not one we know
    silent = Bridge()
    silent.listen(heard.append)
    unhello = FakeComm()
    silent.attach(unhello)  # the kernel's announce: no hello yet
    unhello.deliver(editing("cell-b"))
    comm.deliver(editing("cell-ok"))
    await asyncio.sleep(0)  # the one call_soon_threadsafe made runs now
    assert heard == ["cell-ok"]


def test_doctor_says_connected_and_for_which_notebook() -> None:
    bridge, _ = connected("work/a.ipynb")
    check = bridge_check(bridge, "lab", vscode=False)
    assert check is not None and check.ok
    assert "connected" in check.detail and "JupyterLab" in check.detail
    assert "work/a.ipynb" in check.detail


def test_doctor_says_what_to_do_without_the_bridge() -> None:
    check = bridge_check(Bridge(), "lab", vscode=False)
    assert check is not None and not check.ok
    assert "saved file" in check.detail
    assert "jupyter labextension list" in check.detail
    stale = Bridge()
    stale.opened(FakeComm(), {"content": {"data": {**HELLO, "protocol": 99, "path": "a"}}})
    check = bridge_check(stale, "lab", vscode=False)
    assert check is not None and not check.ok and "reload the page" in check.detail


def test_doctor_explains_the_frontends_without_a_bridge() -> None:
    vscode = bridge_check(None, "lab", vscode=True)
    headless = bridge_check(None, "headless", vscode=False)
    assert vscode is not None and "VS Code" in vscode.detail and "saved file" in vscode.detail
    assert headless is not None and "headless" in headless.detail
    assert bridge_check(None, "terminal", vscode=False) is None


def turn_messages(comm: FakeComm) -> list[tuple[str, Any]]:
    return [
        (m["method"], m["params"]) for m in comm.sent if str(m.get("method")).startswith("turn.")
    ]


async def test_a_turn_is_announced_when_it_starts_and_when_it_ends_however_it_ends() -> None:
    bridge, comm = connected()
    turn = BridgeTurn(bridge, "cell-1")
    assert turn_messages(comm) == [("turn.begin", {"cell": "cell-1"})]

    async def fails() -> None:
        raise BridgeError("the turn failed")

    with pytest.raises(BridgeError):
        await turn.around(fails())
    turn.end()  # once only
    assert turn_messages(comm) == [
        ("turn.begin", {"cell": "cell-1"}),
        ("turn.end", {"cell": "cell-1"}),
    ]


async def test_no_turn_is_announced_without_a_cell_or_a_connected_bridge() -> None:
    bridge, comm = connected()
    assert await BridgeTurn(bridge, None).around(asyncio.sleep(0, "done")) == "done"
    assert comm.sent == []
    BridgeTurn(None, "cell-1").end()


def test_a_frontend_that_says_hello_during_a_turn_is_told_of_it() -> None:
    """Run all sends `%load_ext` and a `%%claude` cell at once: the turn starts before the
    page's hello reaches the kernel, and the page hears of it with the hello's answer."""
    bridge, comm = Bridge(), FakeComm()
    bridge.attach(comm)  # the announced comm, no hello yet
    turn = BridgeTurn(bridge, "cell-1")
    ended = BridgeTurn(bridge, "cell-2")
    ended.end()
    assert comm.sent == []
    comm.deliver({**HELLO, "path": "a.ipynb"})
    assert turn_messages(comm) == [("turn.begin", {"cell": "cell-1"})]
    turn.end()
    comm.deliver({**HELLO, "path": "a.ipynb"})  # a reloaded page: no turn runs now
    assert turn_messages(comm) == [
        ("turn.begin", {"cell": "cell-1"}),
        ("turn.end", {"cell": "cell-1"}),
    ]


class FakeManager:
    """The comm package's manager as the bridge uses it: targets and the open comms."""

    def __init__(self, *comms: FakeComm) -> None:
        self.comms = {str(i): c for i, c in enumerate(comms)}
        self.targets: dict[str, Any] = {}

    def register_target(self, name: str, callback: Any) -> None:
        self.targets[name] = callback

    def unregister_target(self, name: str, callback: Any) -> None:
        self.targets.pop(name, None)


class FakeKernel:
    pass


class FakeShell:
    def __init__(self) -> None:
        self.kernel = FakeKernel()


def test_loading_closes_the_comms_of_our_target_it_did_not_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kernel code that opened a `byre.bridge` comm before byre_jupyter loaded would keep the
    frontend's bridge (it refuses a second while one is open): that comm is closed first."""
    import comm as comm_package

    forged, other = FakeComm(), FakeComm("jupyter.widget")
    manager = FakeManager(forged, other)
    announced: list[FakeComm] = []

    def create_comm(target_name: str, data: dict[str, Any]) -> FakeComm:
        assert forged.closed  # before the announcement reaches the frontend
        made = FakeComm(target_name)
        made.sent.append(data)
        announced.append(made)
        return made

    monkeypatch.setattr(comm_package, "get_comm_manager", lambda: manager)
    monkeypatch.setattr(comm_package, "create_comm", create_comm)
    shell = FakeShell()
    bridge = install_bridge(shell)
    assert bridge is not None and forged.closed and not other.closed
    assert announced[0].sent == [{"type": "announce", "protocol": PROTOCOL}]
    bridge.opened(announced[0], {"content": {"data": {**HELLO, "path": "a.ipynb"}}})

    with_turn = announce_turn(shell, "cell-9")
    with_turn.end()
    assert turn_messages(announced[0]) == [
        ("turn.begin", {"cell": "cell-9"}),
        ("turn.end", {"cell": "cell-9"}),
    ]
    uninstall_bridge(shell)
    assert announced[0].closed
    assert notebook_bridge.bridge_of(shell) is None


def test_doctor_says_how_many_pages_share_the_bridge() -> None:
    first, second = two_pages()
    check = bridge_check(first.bridge, "lab", vscode=False)
    assert check is not None and "connected: JupyterLab (1 of 2 pages, the newest)" in check.detail
    second.close()
    check = bridge_check(first.bridge, "lab", vscode=False)
    assert check is not None and "connected: JupyterLab, bridge" in check.detail


def test_every_page_hears_the_turns_so_none_keeps_one_that_ended() -> None:
    """A turn that ends while the newer page holds the bridge ends on the older page too: else
    the older one, taking over later, would still take edits in a turn that is over."""
    first, second = two_pages()
    BridgeTurn(first.bridge, "ask").end()
    told = [("turn.begin", {"cell": "ask"}), ("turn.end", {"cell": "ask"})]
    assert first.notified("turn.") == told and second.notified("turn.") == told
    second.close()
    assert first.notified("turn.") == told  # no turn runs: nothing more to tell


# -- routing: a turn's requests go to the page that opened it (docs/bridge.md) -----------


def opened(page: FakePage, cell: str) -> None:
    """``page``'s gate opened the turn of ``cell`` (its user ran it there, or adopted it)."""
    page.comm.deliver({"type": "event", "name": "turn.opened", "cell": cell})


async def test_a_turns_edits_and_runs_go_to_the_page_that_opened_it() -> None:
    """The user ran the cell in the older tab: the newer one still serves reads, but the turn's
    edit, run and outputs go to the older one, whose gate takes them."""
    first, second = two_pages()
    bridge = first.bridge
    turn = BridgeTurn(bridge, "ask")
    opened(first, "ask")
    edit = ApplyEdits([{"delete": {"cell": "a"}}], {}, {})
    await bridge.request(edit, turn="ask")
    await bridge.request(RunBegin("a", 2), turn="ask")
    assert bridge.notify(RunOutput("a", {"output_type": "stream"}), turn="ask")
    assert bridge.notify(RunEnd("a", 2), turn="ask")
    await bridge.request(ReadNotebook())  # a read of no turn: the serving page
    assert [r["method"] for r in first.requests] == ["edit", "run.begin"]
    assert first.notified("run.") == [
        ("run.output", {"cell": "a", "output": {"output_type": "stream"}}),
        ("run.end", {"cell": "a", "execution_count": 2}),
    ]
    assert [r["method"] for r in second.requests] == ["read"] and second.edits == []
    turn.end()  # the turn is over: its cell no longer routes
    await bridge.request(edit, turn="ask")
    assert second.edits == [edit.to_wire("x")["params"]]


async def test_a_turn_opened_for_no_running_turn_or_before_hello_routes_nothing() -> None:
    """A page can claim only a turn the kernel runs; its claim never outlives the turn."""
    first, second = two_pages()
    opened(first, "ask")  # no such turn runs
    BridgeTurn(first.bridge, "ask")
    assert first.bridge.page_of("ask") is None
    silent = FakeComm()
    first.bridge.attach(silent)  # no hello yet
    silent.deliver({"type": "event", "name": "turn.opened", "cell": "ask"})
    assert first.bridge.page_of("ask") is None
    await first.bridge.request(ApplyEdits([], {}, {}), turn="ask")
    assert len(second.edits) == 1 and first.edits == []


async def test_a_page_that_closes_drops_its_turns_and_the_serving_page_takes_them() -> None:
    first, second = two_pages()
    BridgeTurn(first.bridge, "ask")
    opened(first, "ask")
    first.close()
    assert first.bridge.page_of("ask") is None
    await first.bridge.request(ApplyEdits([], {}, {}), turn="ask")
    assert len(second.edits) == 1


async def test_an_edit_in_flight_on_the_turns_page_fails_when_it_closes() -> None:
    """Never applied twice: the turn's page may have applied it before it closed."""
    first, second = two_pages()
    BridgeTurn(first.bridge, "ask")
    opened(first, "ask")
    first.answering = False
    task = asyncio.ensure_future(first.bridge.request(ApplyEdits([], {}, {}), turn="ask"))
    await next_request(first.comm)
    first.close()
    with pytest.raises(PageClosedError):
        await asyncio.wait_for(task, 5)
    assert second.requests == []


async def test_a_turns_read_in_flight_moves_to_the_serving_page_when_its_page_closes() -> None:
    first, second = two_pages()
    BridgeTurn(first.bridge, "ask")
    opened(first, "ask")
    first.answering = False
    task = asyncio.ensure_future(first.bridge.request(ReadNotebook(), turn="ask"))
    await next_request(first.comm)
    first.close()
    assert (await asyncio.wait_for(task, 5))["cells"] == CELLS
    assert [r["method"] for r in second.requests] == ["read"]


# -- take-over: the new serving page gets what a hello gets ------------------------------


def test_a_take_over_is_a_hello_for_the_page_that_takes_over() -> None:
    """tools/pending_answers.py re-shows the running turns' live views at each hello: the
    page that takes over gets them too (the page that showed them is gone)."""
    first, second = two_pages()
    bridge = first.bridge
    heard: list[int] = []
    bridge.on_hello = lambda: heard.append(bridge.connections)
    before = bridge.connections
    first.close()  # not the serving page: nothing changes hands
    assert heard == []
    third = FakePage(bridge, cells=CELLS).connect()
    assert heard == [before + 1]
    third.close()
    assert heard == [before + 1, before + 2] and bridge.comm is second.comm


# -- a page gone without comm_close --------------------------------------------------------


async def test_a_page_that_lets_a_request_time_out_stops_serving_until_it_answers() -> None:
    """A killed tab sends no comm_close: after one timeout, the next live page serves (and
    takes over), so later requests do not each wait the full timeout."""
    first, second = two_pages()
    bridge = first.bridge
    heard: list[int] = []
    bridge.on_hello = lambda: heard.append(bridge.connections)
    second.answering = False
    with pytest.raises(BridgeError, match="did not answer"):
        await bridge.request(ReadNotebook(), timeout=0.01)
    assert bridge.comm is first.comm and len(heard) == 1  # taken over
    assert (await bridge.request(ReadNotebook()))["cells"] == CELLS
    assert [r["method"] for r in first.requests] == ["read"]
    assert bridge.pages == 2  # still listed: it may come back
    late = next(m for m in second.comm.sent if m.get("type") == "request")
    second.comm.deliver({"type": "reply", "id": late["id"], "ok": True, "result": {}})
    assert bridge.comm is second.comm  # it answered after all: the newest serves again


async def test_a_lone_page_that_timed_out_is_still_asked() -> None:
    bridge, comm = connected()
    with pytest.raises(BridgeError, match="did not answer"):
        await bridge.request(ReadNotebook(), timeout=0.01)
    assert bridge.connected and bridge.comm is comm


async def test_a_turns_page_that_timed_out_gives_its_turn_to_the_serving_page() -> None:
    first, second = two_pages()
    BridgeTurn(first.bridge, "ask")
    opened(first, "ask")
    first.answering = False
    with pytest.raises(BridgeError, match="did not answer"):
        await first.bridge.request(ApplyEdits([], {}, {}), timeout=0.01, turn="ask")
    await first.bridge.request(ApplyEdits([], {}, {}), turn="ask")
    assert len(second.edits) == 1
    first.comm.deliver(hello_of("n.ipynb"))  # a hello revives it (and it is the newest now)
    assert first.bridge.comm is first.comm


# -- a card that waits: the pages that do not show it mark its cell (docs/bridge.md) -------


def pending(page: FakePage) -> list[Any]:
    return [params for _method, params in page.notified("review.")]


def test_every_page_hears_that_a_card_waits_and_that_it_stopped() -> None:
    """Without real-time collaboration only the page that ran the cell shows its card: every
    page hears that one waits (each page's gate decides whether to mark the cell), once for
    several cards at a time, and that none waits any more."""
    first, second = two_pages()
    turn = BridgeTurn(first.bridge, "ask")
    first.bridge.card_waiting("ask", True)
    first.bridge.card_waiting("ask", True)  # a second card while the first waits
    first.bridge.card_waiting("ask", False)
    waits = [{"cell": "ask", "waiting": True}]
    assert pending(first) == waits and pending(second) == waits
    first.bridge.card_waiting("ask", False)
    done = [*waits, {"cell": "ask", "waiting": False}]
    assert pending(first) == done and pending(second) == done
    first.bridge.card_waiting("ask", False)  # nothing waits: nothing to tell
    turn.end()
    assert pending(first) == done and pending(second) == done


def test_a_page_that_says_hello_while_a_card_waits_is_told_with_the_turn() -> None:
    first = FakePage(cells=CELLS, path="n.ipynb").connect()
    turn = BridgeTurn(first.bridge, "ask")
    first.bridge.card_waiting("ask", True)
    late = FakePage(first.bridge, cells=CELLS, path="n.ipynb").connect()
    assert late.notified() == [
        ("turn.begin", {"cell": "ask"}),
        ("review.pending", {"cell": "ask", "waiting": True}),
    ]
    turn.end()  # the turn's end ends its wait: the pages drop the mark with the turn
    reloaded = FakePage(first.bridge, cells=CELLS, path="n.ipynb").connect()
    assert reloaded.notified() == []
    first.bridge.card_waiting("ask", False)  # the card settles after the turn ended
    assert pending(late) == [{"cell": "ask", "waiting": True}]


def test_a_card_outside_an_announced_turn_is_told_to_no_page() -> None:
    """A cell whose turn no page heard of would keep its mark: nothing is sent for it."""
    page = FakePage(cells=CELLS, path="n.ipynb").connect()
    page.bridge.card_waiting("ask", True)
    page.bridge.card_waiting("ask", False)
    assert pending(page) == []
