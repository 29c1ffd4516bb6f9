"""One fake of the notebook page's bridge, speaking the real protocol
(byre_jupyter/bridge/messages.py; labextension/src/gate.ts is the real one).

:class:`PageModel` is what the page does with the kernel's messages, transport aside: it
answers reads with its cells, edits with ``edit_reply``, clears a cell at ``run.begin`` and
puts ``run.output`` / ``run.end`` into it, and keeps everything it was sent.
:class:`FakePage` puts one on a :class:`FakeComm` of a :class:`Bridge`, as a page's own comm
reaches the kernel's target (its hello rides on the open); the kernel tests put one on the
test client's channels (tests/integration/kernel/test_notebook_tool_kernel.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from byre_jupyter.bridge import TARGET, Bridge
from byre_jupyter.bridge.messages import Hello, Reply

__all__ = ["FakeComm", "FakePage", "PageModel", "hello_of", "next_request"]


def hello_of(path: str, frontend: str = "lab") -> dict[str, Any]:
    """The hello a page of this extension version says, as it goes on the wire."""
    return Hello("0.1.0", frontend, path).to_wire()


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

    def deliver(self, data: Mapping[str, Any]) -> None:
        """The page sends ``data`` (from any thread)."""
        assert self.handler is not None
        self.handler({"content": {"data": dict(data)}})

    def page_closed(self) -> None:
        """The page closed its comm (a closed tab, a reload): the kernel's comm_close."""
        assert self.close_handler is not None
        self.close_handler({})


class PageModel:
    """A notebook page's answers to the kernel: ``cells`` (nbformat dicts, source one string)
    read and run in place; edits answered with ``edit_reply``; ``error``: every request is
    answered with that failure instead."""

    def __init__(
        self,
        cells: list[dict[str, Any]] | None = None,
        *,
        path: str = "n.ipynb",
        dirty: bool = True,
        edit_reply: Mapping[str, Any] | None = None,
        error: str | None = None,
    ) -> None:
        self.cells = cells if cells is not None else []
        self.path, self.dirty = path, dirty
        self.edit_reply = dict(edit_reply or {"applied": []})
        self.error = error
        #: Everything the kernel sent, in order.
        self.messages: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []

    def cell(self, cell_id: str) -> dict[str, Any]:
        return next(cell for cell in self.cells if cell["id"] == cell_id)

    def outputs(self, cell_id: str) -> list[dict[str, Any]]:
        return list(self.cell(cell_id)["outputs"])

    def methods(self) -> list[str]:
        return [str(m.get("method")) for m in self.messages]

    def notified(self, prefix: str = "") -> list[tuple[str, Any]]:
        return [
            (m["method"], m["params"])
            for m in self.messages
            if m.get("type") == "notify" and str(m["method"]).startswith(prefix)
        ]

    def handle(self, data: Mapping[str, Any]) -> dict[str, Any] | None:
        """The page's reply to ``data`` as it goes on the wire, or None (a notification)."""
        self.messages.append(dict(data))
        params = data.get("params", {})
        if data.get("type") == "notify":
            if data["method"] == "run.output":
                self.cell(params["cell"])["outputs"].append(params["output"])
            elif data["method"] == "run.end":
                self.cell(params["cell"])["execution_count"] = params["execution_count"]
            return None
        if data.get("type") != "request":
            return None
        self.requests.append(dict(data))
        if self.error is not None:
            return Reply(data["id"], False, error=self.error).to_wire()
        result: dict[str, Any] = {}
        if data["method"] == "read":
            result = {"path": self.path, "dirty": self.dirty, "cells": self.cells}
        elif data["method"] == "edit":
            self.edits.append(params)
            result = self.edit_reply
        elif data["method"] == "run.begin":
            self.cell(params["cell"])["outputs"] = []
            self.cell(params["cell"])["execution_count"] = None
        return Reply(data["id"], True, result).to_wire()


class FakePage(PageModel):
    """A page with its own comm to ``bridge``, said hello on ``connect``. It answers each
    request on the next turn of the loop, as a real reply arrives, unless ``answering`` is
    False: then requests wait in ``comm.sent`` for the test (:func:`next_request`)."""

    def __init__(
        self,
        bridge: Bridge | None = None,
        cells: list[dict[str, Any]] | None = None,
        *,
        answering: bool = True,
        **options: Any,
    ) -> None:
        super().__init__(cells, **options)
        self.bridge = bridge if bridge is not None else Bridge()
        self.comm = FakeComm()
        self.answering = answering
        send = self.comm.send

        def receive(data: dict[str, Any]) -> None:
            send(data)
            if not self.answering:
                self.messages.append(data)
                return
            reply = self.handle(data)
            if reply is not None:
                asyncio.get_running_loop().call_soon(self.comm.deliver, reply)

        self.comm.send = receive  # type: ignore[method-assign]

    def connect(self) -> FakePage:
        """Open the comm with the page's hello (the kernel's target callback)."""
        self.bridge.opened(self.comm, {"content": {"data": hello_of(self.path)}})
        return self

    def close(self) -> None:
        self.comm.page_closed()


async def next_request(comm: FakeComm, after: int = 0) -> dict[str, Any]:
    """The first request ``comm`` was sent past the first ``after`` messages (sent before
    the first await that waits for its reply)."""
    for _ in range(1000):
        requests = [m for m in comm.sent[after:] if m.get("type") == "request"]
        if requests:
            return requests[0]
        await asyncio.sleep(0)
    raise AssertionError("no request was sent")
