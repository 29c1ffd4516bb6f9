"""UpdateAcknowledger: the idle a widget update waits for, when ipykernel sends none."""

from __future__ import annotations

import asyncio
from typing import Any

from byre_jupyter.ui.comms import UpdateAcknowledger

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
