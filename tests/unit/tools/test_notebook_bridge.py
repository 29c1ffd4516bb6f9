"""The kernel's end of the frontend bridge (docs/bridge.md) over a stand-in comm: the hello,
requests answered by id (from another thread too), every way a request can fail, the turn
announcements, and the stray comms of our target closed when byre_jupyter loads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from byre_jupyter.app.doctor import bridge_check
from byre_jupyter.tools import notebook_bridge
from byre_jupyter.tools.notebook_bridge import (
    PROTOCOL,
    TARGET,
    Bridge,
    BridgeError,
    BridgeTurn,
    Hello,
    announce_turn,
    install_bridge,
    uninstall_bridge,
)

HELLO = {"type": "hello", "protocol": PROTOCOL, "version": "0.1.0", "frontend": "lab"}


class FakeComm:
    """What ipykernel's Comm offers the bridge: send, on_msg, on_close, close."""

    def __init__(self, target_name: str = TARGET) -> None:
        self.target_name = target_name
        self.sent: list[dict[str, Any]] = []
        self.handler: Callable[[dict[str, Any]], None] | None = None
        self.close_handler: Callable[[dict[str, Any]], None] | None = None
        self.closed = False

    def send(self, data: dict[str, Any]) -> None:
        self.sent.append(data)

    def on_msg(self, handler: Callable[[dict[str, Any]], None]) -> None:
        self.handler = handler

    def on_close(self, handler: Callable[[dict[str, Any]], None]) -> None:
        self.close_handler = handler

    def close(self) -> None:
        self.closed = True

    def deliver(self, data: dict[str, Any]) -> None:
        assert self.handler is not None
        self.handler({"content": {"data": data}})


def connected(path: str = "work/a.ipynb") -> tuple[Bridge, FakeComm]:
    bridge, comm = Bridge(), FakeComm()
    bridge.opened(comm, {"content": {"data": {**HELLO, "path": path}}})
    return bridge, comm


def failing(error: str = "no model") -> tuple[Bridge, FakeComm]:
    """A connected bridge whose frontend answers every request with ``error`` (on the next
    turn of the loop, as a real reply arrives)."""
    bridge, comm = connected("p")
    send = comm.send

    def fail(data: dict[str, Any]) -> None:
        send(data)
        answer = {"type": "reply", "id": data["id"], "ok": False, "error": error}
        asyncio.get_running_loop().call_soon(comm.deliver, answer)

    comm.send = fail  # type: ignore[method-assign]
    return bridge, comm


async def next_request(comm: FakeComm) -> dict[str, Any]:
    for _ in range(1000):  # the request is sent before the first await that waits
        if comm.sent:
            return comm.sent[-1]
        await asyncio.sleep(0)
    raise AssertionError("no request was sent")


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
    task = asyncio.ensure_future(bridge.request("read", {"images": False}))
    request = await next_request(comm)
    assert request["type"] == "request"
    assert request["method"] == "read"
    assert request["params"] == {"images": False}
    comm.deliver({"type": "reply", "id": "not-" + request["id"], "ok": True, "result": {"x": 0}})
    comm.deliver({"type": "reply", "id": request["id"], "ok": True, "result": {"cells": []}})
    assert await task == {"cells": []}


async def test_a_reply_from_a_subshell_thread_settles_on_the_loop() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request("read", {}))
    request = await next_request(comm)
    reply = {"type": "reply", "id": request["id"], "ok": True, "result": {"cells": [1]}}
    thread = threading.Thread(target=comm.deliver, args=(reply,))
    thread.start()
    thread.join()
    assert await asyncio.wait_for(task, 5) == {"cells": [1]}


async def test_a_frontend_that_fails_says_why() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request("read", {}))
    request = await next_request(comm)
    comm.deliver({"type": "reply", "id": request["id"], "ok": False, "error": "model gone"})
    with pytest.raises(BridgeError, match="model gone"):
        await task


async def test_a_silent_frontend_times_out() -> None:
    bridge, _ = connected()
    with pytest.raises(BridgeError, match="did not answer"):
        await bridge.request("read", {}, timeout=0.01)


async def test_closing_the_comm_fails_what_waits_and_disconnects() -> None:
    bridge, comm = connected()
    task = asyncio.ensure_future(bridge.request("read", {}))
    await next_request(comm)
    assert comm.close_handler is not None
    comm.close_handler({})
    with pytest.raises(BridgeError, match="closed"):
        await asyncio.wait_for(task, 5)
    assert not bridge.connected
    with pytest.raises(BridgeError, match="not connected"):
        await bridge.request("read", {})


async def test_a_reloaded_page_replaces_the_old_comm() -> None:
    bridge, old = connected("old.ipynb")
    task = asyncio.ensure_future(bridge.request("read", {}))
    await next_request(old)
    new = FakeComm()
    bridge.attach(new)  # the kernel's own announce, before the page's hello
    assert not bridge.connected
    with pytest.raises(BridgeError, match="reconnected"):
        await asyncio.wait_for(task, 5)
    new.deliver({**HELLO, "path": "new.ipynb"})
    assert bridge.hello is not None and bridge.hello.path == "new.ipynb"
    assert old.close_handler is not None
    old.close_handler({})  # the old comm's late close does not disconnect the new one
    assert bridge.connected


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
