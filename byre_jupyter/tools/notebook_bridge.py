"""The kernel's end of the frontend bridge: one ``byre.bridge`` comm per kernel (docs/bridge.md).

The JupyterLab / Notebook 7 extension in ``labextension/`` opens the comm when a notebook's
kernel is ready, and the kernel opens it too when byre_jupyter loads (the frontend registers
the target), so either order connects. The frontend says hello (its version, the notebook's
path); the kernel then sends requests that carry an id, and each gets one reply with that id.

A tool awaits a reply inside a running ``%%claude`` cell: ipykernel 7.4 handles comm messages
while an async cell awaits (docs/kernel.md, section 3), on the main thread or on a subshell
thread, so a reply only ever settles its future through the loop that waits for it.

The kernel tells the frontend when a ``%%claude`` turn starts and ends (``turn.begin``,
``turn.end``: :class:`BridgeTurn`): the frontend applies edits and shows runs in place only
inside a turn of a ``%%claude`` cell the user ran on that page, since any code in the kernel can
open a comm or send on this one (docs/security.md, "A hostile package and the bridge"). For
the same reason :func:`install_bridge` closes the comms of our target it did not open.

The frontend also sends events, which need no reply: ``editing`` (the user began changing a
``%%claude`` cell that ran) goes to the callback :func:`install_bridge` was given, on the loop
that installed it (the kernel's), so the extension can start the spare CLI that cell's re-run
will adopt (app/spare.py).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ByreError

__all__ = [
    "PROTOCOL",
    "TARGET",
    "Bridge",
    "BridgeError",
    "BridgeTurn",
    "Hello",
    "announce_turn",
    "bridge_of",
    "install_bridge",
    "uninstall_bridge",
]

log = logging.getLogger(__name__)

TARGET = "byre.bridge"
#: The message shapes' version (labextension/src/protocol.ts says the same); 3: the turn
#: announcements, without which the frontend refuses edits and runs.
PROTOCOL = 3
#: How long a request waits for the frontend. A read of the model is milliseconds; a page
#: that went away never answers.
REQUEST_TIMEOUT = 10.0


class BridgeError(ByreError):
    """The frontend bridge is not connected, or did not answer."""


@dataclass(frozen=True)
class Hello:
    """What the frontend said when the comm opened."""

    version: str
    frontend: str  # "lab" or "notebook"
    path: str  # the notebook's path, relative to the server's root

    @classmethod
    def parse(cls, data: object) -> Hello | None:
        if not isinstance(data, Mapping) or data.get("type") != "hello":
            return None
        if data.get("protocol") != PROTOCOL:
            return None
        fields = [data.get(name) for name in ("version", "frontend", "path")]
        if not all(isinstance(value, str) for value in fields):
            return None
        version, frontend, path = (str(value)[:500] for value in fields)
        return cls(version, frontend, path)


class Bridge:
    """The comm to the frontend that shows this kernel's notebook, when there is one."""

    def __init__(self) -> None:
        self._comm: Any = None
        self.hello: Hello | None = None
        #: The protocol a frontend spoke that we do not (a stale page after an upgrade).
        self.refused: str | None = None
        self._pending: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._ids = itertools.count(1)
        #: The cells whose turn runs (:class:`BridgeTurn`), told again to a frontend that says
        #: hello during it: Run all sends ``%load_ext`` and a ``%%claude`` cell at once, and the
        #: hello reaches the kernel only once that cell awaits.
        self._turns: collections.Counter[str] = collections.Counter()
        #: Where ``editing`` events go (:meth:`listen`): the loop and the callback.
        self._editing: tuple[asyncio.AbstractEventLoop, Callable[[str], None]] | None = None
        #: How many times a frontend said hello: a page that showed a turn's output is gone
        #: when this changed since (tools/pending_answers.py keeps what it missed).
        self.connections = 0
        #: Called after each hello (tools/pending_answers.py: the answers that waited for a page).
        self.on_hello: Callable[[], None] | None = None

    @property
    def connected(self) -> bool:
        return self._comm is not None and self.hello is not None

    # -- the comm's life ---------------------------------------------------------------

    def opened(self, comm: Any, msg: Mapping[str, Any]) -> None:
        """The comm target's callback: the frontend opened the comm (its hello rides along)."""
        self.attach(comm)
        self.received(msg)

    def attach(self, comm: Any) -> None:
        """Serve over ``comm`` from now on; a previous comm (a reloaded page) is dropped."""
        old, self._comm = self._comm, comm
        if old is not None and old is not comm:
            self.hello = None
            self._fail_pending("the notebook page reconnected")
        comm.on_msg(self.received)
        comm.on_close(lambda msg, comm=comm: self._closed(comm))

    def _closed(self, comm: Any) -> None:
        if self._comm is comm:
            self._comm, self.hello = None, None
            self._fail_pending("the notebook page closed the bridge")

    def received(self, msg: Mapping[str, Any]) -> None:
        """A message from the frontend: a hello, a reply or an event (anything else is
        ignored; an event's cell id is the listener's to check)."""
        content = msg.get("content") if isinstance(msg, Mapping) else None
        data = content.get("data") if isinstance(content, Mapping) else None
        if not isinstance(data, Mapping):
            return
        if data.get("type") == "hello":
            hello = Hello.parse(data)
            self.hello = hello
            self.refused = None if hello is not None else str(data.get("protocol"))[:20]
            for running in list(self._turns):
                self.notify("turn.begin", {"cell": running})
            if hello is not None:
                self.connections += 1
                if self.on_hello is not None:
                    self.on_hello()
        elif data.get("type") == "reply" and isinstance(data.get("id"), str):
            future = self._pending.get(data["id"])
            if future is not None:
                # On a subshell thread too (docs/kernel.md, section 3): settle on its own loop.
                future.get_loop().call_soon_threadsafe(_settle, future, data)
        elif data.get("type") == "event" and data.get("name") == "editing":
            cell = data.get("cell")
            if self._editing is None or self.hello is None:
                return
            if isinstance(cell, str):
                loop, callback = self._editing
                loop.call_soon_threadsafe(callback, cell)

    def listen(self, on_editing: Callable[[str], None] | None) -> None:
        """Hand the cell id of each ``editing`` event to ``on_editing``, called on the loop
        running now (the kernel's: the comm may deliver the event on a subshell thread);
        None, or no running loop (terminal IPython has no comm either): events are dropped."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        self._editing = (loop, on_editing) if loop is not None and on_editing else None

    def turn_began(self, cell: str) -> None:
        """The turn of ``cell`` starts: tell the frontend now, or when it says hello."""
        self._turns[cell] += 1
        self.notify("turn.begin", {"cell": cell})

    def turn_ended(self, cell: str) -> None:
        self._turns[cell] -= 1
        if self._turns[cell] <= 0:
            del self._turns[cell]
        self.notify("turn.end", {"cell": cell})

    def _fail_pending(self, why: str) -> None:
        for future in list(self._pending.values()):
            future.get_loop().call_soon_threadsafe(_fail, future, BridgeError(why))

    # -- requests ------------------------------------------------------------------------

    def notify(self, method: str, params: Mapping[str, Any]) -> bool:
        """Tell the frontend something that needs no reply (a run's output); False when no
        frontend is connected. The comm keeps the order of messages."""
        comm = self._comm
        if comm is None or self.hello is None:
            return False
        comm.send({"type": "notify", "method": method, "params": dict(params)})
        return True

    def restore(self, cell: str, outputs: list[dict[str, Any]]) -> bool:
        """Show a running turn's live view in code cell ``cell`` in place of its outputs, on a
        page that loaded during the turn (``cell.restore``, docs/bridge.md "Pending answers";
        a finished record goes as a request, so it is kept until a page has it). False: no
        frontend is connected."""
        return self.notify("cell.restore", {"cell": cell, "outputs": outputs, "final": False})

    async def request(
        self, method: str, params: Mapping[str, Any], timeout: float = REQUEST_TIMEOUT
    ) -> Mapping[str, Any]:
        """Ask the frontend; the reply's ``result``, or :class:`BridgeError`."""
        reply = await self._ask(method, params, timeout)
        if reply.get("ok") is not True:
            error = reply.get("error")
            raise BridgeError(f"the notebook frontend failed: {str(error)[:300]}")
        result = reply.get("result")
        if not isinstance(result, Mapping):
            raise BridgeError("the notebook frontend sent a reply without a result")
        return result

    async def answers(self, timeout: float = REQUEST_TIMEOUT) -> bool:
        """Whether a page answers on the comm now: a closed tab leaves the comm open (the
        server does not tell the kernel), so only a reply tells. The page refuses ``ping``
        as any request it does not serve, and that reply is the answer."""
        try:
            await self._ask("ping", {}, timeout)
        except BridgeError:
            return False
        return True

    async def _ask(
        self, method: str, params: Mapping[str, Any], timeout: float
    ) -> Mapping[str, Any]:
        """Send a request and wait for its reply, whatever it says."""
        comm = self._comm
        if comm is None or self.hello is None:
            raise BridgeError("the notebook frontend is not connected")
        request_id = str(next(self._ids))
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            comm.send(
                {"type": "request", "id": request_id, "method": method, "params": dict(params)}
            )
            reply = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            why = f"the notebook frontend did not answer within {timeout:g} s"
            raise BridgeError(why) from None
        finally:
            self._pending.pop(request_id, None)
        return reply


_T = TypeVar("_T")


class BridgeTurn:
    """A ``%%claude`` turn as the frontend hears of it: ``turn.begin`` for its cell when made,
    ``turn.end`` at :meth:`end` (docs/bridge.md, "Who drives the bridge"). The frontend opens
    a turn only for a ``%%claude`` cell the user ran there, once per run; nothing is sent
    without a cell id (no frontend sent one: there is no bridge to tell); a frontend that
    connects during the turn is told when it says hello."""

    def __init__(self, bridge: Bridge | None, cell: str | None) -> None:
        self.cell = cell
        self._bridge = bridge if cell is not None else None
        if self._bridge is not None and cell is not None:
            self._bridge.turn_began(cell)

    def end(self) -> None:
        """The turn is over (once; later calls do nothing)."""
        bridge, self._bridge = self._bridge, None
        if bridge is not None and self.cell is not None:
            bridge.turn_ended(self.cell)

    async def around(self, work: Awaitable[_T]) -> _T:
        """Await ``work`` (the turn), then end the turn however it ended."""
        try:
            return await work
        finally:
            self.end()


def _settle(future: asyncio.Future[Mapping[str, Any]], data: Mapping[str, Any]) -> None:
    if not future.done():
        future.set_result(data)


def _fail(future: asyncio.Future[Mapping[str, Any]], error: BaseException) -> None:
    if not future.done():
        future.set_exception(error)


# One bridge per kernel, for as long as the kernel lives (a kernel is weak-referenceable).
_BRIDGES: weakref.WeakKeyDictionary[Any, Bridge] = weakref.WeakKeyDictionary()


def bridge_of(shell: Any) -> Bridge | None:
    """The bridge of ``shell``'s kernel, or None (no kernel, or byre_jupyter is not loaded)."""
    kernel = getattr(shell, "kernel", None)
    return None if kernel is None else _BRIDGES.get(kernel)


def announce_turn(shell: Any, cell: str | None) -> BridgeTurn:
    """Tell the frontend of ``shell``'s kernel that the turn of ``cell`` starts (the running
    ``%%claude`` cell's id); call :meth:`BridgeTurn.end`, or await it ``around`` the turn."""
    return BridgeTurn(bridge_of(shell), cell)


def install_bridge(
    shell: Any, on_editing: Callable[[str], None] | None = None, *, announce: bool = True
) -> Bridge | None:
    """Register the comm target and open the comm toward a frontend that is already there
    (``announce``: False when the client running the cell is no such frontend, a headless
    nbclient run; a frontend that connects later opens its own comm); ``editing`` events go
    to ``on_editing`` (:meth:`Bridge.listen`).

    Nothing happens without a kernel (terminal IPython); a frontend without the extension
    has no such target and closes the kernel's comm at once, which only means no bridge.
    A comm of our target that other code opened (or took from the frontend) before we loaded
    is closed first: the frontend keeps the first comm announced to it and refuses any other
    while that one is open, so a stray one would leave byre_jupyter without a bridge.
    """
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    bridge = _BRIDGES.get(kernel)
    if bridge is None:
        bridge = _BRIDGES[kernel] = Bridge()
    bridge.listen(on_editing)
    try:
        import comm as comm_package

        manager = comm_package.get_comm_manager()
        manager.register_target(TARGET, bridge.opened)
        _close_strays(manager, bridge)
        if not announce:
            return bridge
        announced = comm_package.create_comm(
            target_name=TARGET, data={"type": "announce", "protocol": PROTOCOL}
        )
    except Exception:  # no bridge is a supported state (docs/bridge.md), never a failed load
        log.warning("byre: the frontend bridge could not be set up", exc_info=True)
        return bridge
    bridge.attach(announced)
    return bridge


def _close_strays(manager: Any, bridge: Bridge) -> None:
    """Close every open comm of our target but the bridge's own."""
    comms = getattr(manager, "comms", None)
    if not isinstance(comms, Mapping):
        return
    for comm in list(comms.values()):
        if getattr(comm, "target_name", None) == TARGET and comm is not bridge._comm:
            log.warning("byre: closing a %s comm byre_jupyter did not open", TARGET)
            comm.close()


def uninstall_bridge(shell: Any) -> None:
    kernel = getattr(shell, "kernel", None)
    bridge = _BRIDGES.pop(kernel, None) if kernel is not None else None
    if bridge is None:
        return
    try:
        import comm as comm_package

        comm_package.get_comm_manager().unregister_target(TARGET, bridge.opened)
    except Exception:
        log.warning("byre: the frontend bridge target could not be removed", exc_info=True)
    comm = bridge._comm
    bridge._closed(comm)
    if comm is not None:
        comm.close()
