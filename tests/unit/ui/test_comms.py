"""UpdateAcknowledger: the idle a widget update waits for, when ipykernel sends none."""

from __future__ import annotations

import asyncio
from typing import Any

from byre_jupyter.ui.comms import StatusKeeper, UpdateAcknowledger

CELL = {"header": {"msg_id": "cell-request", "msg_type": "execute_request"}}


class FakeKernel:
    def __init__(self, locked: bool) -> None:
        self._main_asyncio_lock = asyncio.Lock()
        if locked:
            self._main_asyncio_lock._locked = True  # type: ignore[attr-defined]
        self.published: list[tuple[str, Any]] = []

    def get_parent(self, channel: str) -> Any:
        return CELL

    def _publish_status(self, status: str, channel: str, parent: Any) -> None:
        self.published.append((status, parent["header"]["msg_id"]))


def update(msg_id: str, method: str = "update") -> dict[str, Any]:
    return {"header": {"msg_id": msg_id}, "content": {"data": {"method": method, "state": {}}}}


def test_an_update_handled_while_the_cell_runs_is_acknowledged() -> None:
    kernel = FakeKernel(locked=True)
    UpdateAcknowledger(kernel).handled(update("u1"))
    # idle for the update (the browser's throttle), then busy again for the running cell
    assert kernel.published == [("idle", "u1"), ("busy", "cell-request")]


def test_nothing_is_published_when_ipykernel_sends_the_status_itself() -> None:
    kernel = FakeKernel(locked=False)
    UpdateAcknowledger(kernel).handled(update("u1"))
    assert kernel.published == []


def test_clicks_are_not_acknowledged() -> None:
    kernel = FakeKernel(locked=True)
    UpdateAcknowledger(kernel).handled(update("c1", method="custom"))
    assert kernel.published == []


def test_watch_runs_the_widget_handler_then_acknowledges() -> None:
    kernel = FakeKernel(locked=True)
    seen: list[Any] = []

    class Comm:
        callback: Any = None

        def on_msg(self, callback: Any) -> None:
            self.callback = callback

    class Widget:
        comm = Comm()

        def _handle_msg(self, msg: Any) -> None:
            seen.append(msg["header"]["msg_id"])

    widget = Widget()
    UpdateAcknowledger(kernel).watch(widget)
    widget.comm.callback(update("u2"))
    assert seen == ["u2"] and kernel.published == [("idle", "u2"), ("busy", "cell-request")]


# -- StatusKeeper: the kernel status stays "busy" while the cell runs -----------------------

SUBSHELL = {"header": {"msg_id": "sub-1", "msg_type": "create_subshell_request"}}
DEBUG = {"header": {"msg_id": "dbg-1", "msg_type": "debug_request"}}


class ControlKernel(FakeKernel):
    """A kernel whose control channel is handling ``control`` (as ipykernel 7.4 publishes a
    control request's busy/idle: parent None, taken from ``get_parent("control")``)."""

    def __init__(self, locked: bool, control: Any) -> None:
        super().__init__(locked)
        self.control = control

    def get_parent(self, channel: str) -> Any:
        return self.control if channel == "control" else CELL

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        parent = parent if parent is not None else self.get_parent(channel)
        self.published.append((status, parent["header"]["msg_id"]))

    def answer_control(self) -> None:
        self._publish_status("busy", "control")
        self._publish_status("idle", "control")


def test_a_subshell_request_answered_while_the_cell_runs_leaves_the_status_busy() -> None:
    kernel = ControlKernel(locked=True, control=SUBSHELL)
    StatusKeeper(kernel).install()
    kernel.answer_control()
    assert kernel.published == [("busy", "sub-1"), ("idle", "sub-1"), ("busy", "cell-request")]


def test_requests_the_frontends_do_not_track_and_an_idle_kernel_are_left_alone() -> None:
    kernel = ControlKernel(locked=True, control=DEBUG)  # untracked by jupyter_server anyway
    StatusKeeper(kernel).install()
    kernel.answer_control()
    assert kernel.published == [("busy", "dbg-1"), ("idle", "dbg-1")]
    idle = ControlKernel(locked=False, control=SUBSHELL)  # no cell runs: nothing to keep
    StatusKeeper(idle).install()
    idle.answer_control()
    assert idle.published == [("busy", "sub-1"), ("idle", "sub-1")]


def test_uninstall_in_any_order_restores_the_kernel_and_adds_nothing() -> None:
    kernel = ControlKernel(locked=True, control=SUBSHELL)
    first, second = StatusKeeper(kernel), StatusKeeper(kernel)
    first.install()
    second.install()
    first.uninstall()
    kernel.answer_control()
    assert kernel.published[-1] == ("busy", "cell-request")  # the second still keeps it
    second.uninstall()
    kernel.published.clear()
    kernel.answer_control()
    assert kernel.published == [("busy", "sub-1"), ("idle", "sub-1")]
    single = ControlKernel(locked=True, control=SUBSHELL)
    keeper = StatusKeeper(single)
    keeper.install()
    keeper.uninstall()
    assert "_publish_status" not in vars(single)  # ipykernel's own method again


def test_kernels_without_subshells_are_not_touched() -> None:
    kernel = ControlKernel(locked=True, control=SUBSHELL)
    del kernel._main_asyncio_lock  # ipykernel 6.x
    StatusKeeper(kernel).install()
    assert "_publish_status" not in vars(kernel)
