"""The kernel's end of the frontend bridge: the ``byre.bridge`` comms of this kernel's pages
(docs/bridge.md).

The JupyterLab / Notebook 7 extension in ``labextension/`` opens a comm when a notebook's
kernel is ready, and the kernel opens one too when byre_jupyter loads (the frontend registers
the target), so either order connects. The frontend says hello (its version, the notebook's
path); the kernel then sends requests that carry an id, and each gets one reply with that id.
The messages are :mod:`.messages`'; this module keeps the comms and the requests in flight.

Every page showing the notebook (two tabs, two users with real-time collaboration) opens its
own comm. The kernel keeps each one that said hello and serves over the newest, except a
turn's edits and runs: those go to the page that opened the turn (``turn.opened``), whose gate
takes them. When the serving page closes (or stops answering: a request to it timed out), the
next live one takes over (every page hears the turns as they begin and end, and at its hello
or take-over the turns that run, with their live views). A read in flight is asked again of
it; an edit or a run in flight fails, since the closed page may have applied it
(docs/bridge.md, "Which page holds the bridge").

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
import threading
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from ..errors import ByreError
from .messages import (
    PROTOCOL,
    TARGET,
    Announce,
    Editing,
    Hello,
    Notify,
    Ping,
    RefusedHello,
    Reply,
    Request,
    ReviewPending,
    ShowLive,
    TurnBegin,
    TurnEnd,
    TurnOpened,
    parse_page_message,
)

__all__ = [
    "PROTOCOL",
    "TARGET",
    "Bridge",
    "BridgeError",
    "BridgeTurn",
    "Hello",
    "PageClosedError",
    "announce_turn",
    "bridge_of",
    "install_bridge",
    "uninstall_bridge",
]

log = logging.getLogger(__name__)

#: How long a request waits for the frontend. A read of the model is milliseconds; a page
#: that went away without closing its comm never answers.
REQUEST_TIMEOUT = 10.0
#: What a tool reads when the page it asked to edit or run closed before answering.
CLOSED_MID_REQUEST = (
    "the notebook page closed before it answered; the change may or may not have been "
    "applied there: read the notebook again before retrying"
)


class BridgeError(ByreError):
    """The frontend bridge is not connected, or did not answer."""


class PageClosedError(BridgeError):
    """The page asked to change the notebook closed before it answered: whether the change
    landed there is unknown, so it is not asked again of another page."""


class _Page:
    """One page's comm, its hello once it said one, and whether it seems gone: a request to
    it timed out (a killed tab sends no comm_close), until it replies or says hello again."""

    def __init__(self, comm: Any) -> None:
        self.comm = comm
        self.hello: Hello | None = None
        self.gone = False


@dataclass
class _InFlight:
    """A request sent and not answered yet: where it went, so a closed page's can move."""

    future: asyncio.Future[Reply]
    page: _Page
    message: Request
    #: The turn's cell it belongs to (None: any page may serve it).
    turn: str | None = None


class Bridge:
    """The comms to the pages that show this kernel's notebook, when there are any."""

    def __init__(self) -> None:
        #: Live comms, oldest hello first; the last that said hello serves.
        self._pages: list[_Page] = []
        #: The protocol a frontend spoke that we do not (a stale page after an upgrade).
        self.refused: str | None = None
        self._pending: dict[str, _InFlight] = {}
        self._ids = itertools.count(1)
        #: Comm callbacks come on the main thread or a subshell thread (docs/kernel.md).
        self._lock = threading.RLock()
        #: The cells whose turn runs (:class:`BridgeTurn`), told again to a frontend that says
        #: hello during it: Run all sends ``%load_ext`` and a ``%%claude`` cell at
        #: once, and the hello reaches the kernel only once that cell awaits.
        self._turns: collections.Counter[str] = collections.Counter()
        #: The running turns' cells whose card waits for the user, with how many cards wait
        #: (:meth:`card_waiting`): told to every page, and again to a page at its hello.
        self._waiting: collections.Counter[str] = collections.Counter()
        #: The page that opened each running turn (its ``turn.opened``): the turn's edits and
        #: runs go there, where its gate takes them.
        self._opened: dict[str, _Page] = {}
        #: Where ``editing`` events go (:meth:`listen`): the loop and the callback.
        self._editing: tuple[asyncio.AbstractEventLoop, Callable[[str], None]] | None = None
        #: How many times a page said hello: a page that showed a turn's output may be gone
        #: when this changed since (tools/pending_answers.py keeps what it missed).
        self.connections = 0
        #: Called after each hello and each take-over (tools/pending_answers.py: the answers
        #: that waited for a page, the live views of the running turns).
        self.on_hello: Callable[[], None] | None = None

    def _serving(self) -> _Page | None:
        """The newest page that said hello and answers; when none answers, the newest."""
        with self._lock:
            said = [p for p in reversed(self._pages) if p.hello is not None]
        return next((p for p in said if not p.gone), said[0] if said else None)

    def _route(self, turn: str | None) -> _Page | None:
        """The page that opened ``turn`` while it runs and that page is there; else the
        serving page."""
        with self._lock:
            page = self._opened.get(turn) if turn is not None else None
            if page is not None and page in self._pages and not page.gone:
                return page
        return self._serving()

    def page_of(self, turn: str) -> Any:
        """The comm of the page that opened ``turn``, or None (tests, doctor)."""
        with self._lock:
            page = self._opened.get(turn)
        return page.comm if page is not None else None

    @property
    def hello(self) -> Hello | None:
        """What the page that holds the bridge said, or None."""
        page = self._serving()
        return page.hello if page is not None else None

    @property
    def comm(self) -> Any:
        """The comm of the page that holds the bridge, or None."""
        page = self._serving()
        return page.comm if page is not None else None

    @property
    def connected(self) -> bool:
        return self._serving() is not None

    @property
    def pages(self) -> int:
        """How many pages said hello over a comm that is still open."""
        with self._lock:
            return sum(1 for p in self._pages if p.hello is not None)

    # -- the comms' life ---------------------------------------------------------------

    def opened(self, comm: Any, msg: Mapping[str, Any]) -> None:
        """The comm target's callback: a page opened a comm (its hello rides along)."""
        self.attach(comm)
        self.received(comm, msg)

    def attach(self, comm: Any) -> None:
        """Keep ``comm`` (a page's, or the one the kernel opened) until it closes; it serves
        once its page says hello, and from then on while it is the newest."""
        with self._lock:
            if self.holds(comm):
                return
            self._pages.append(_Page(comm))
        comm.on_msg(lambda msg, comm=comm: self.received(comm, msg))
        comm.on_close(lambda msg, comm=comm: self._closed(comm))

    def _closed(self, comm: Any) -> None:
        serving = self._serving()
        with self._lock:
            page = next((p for p in self._pages if p.comm is comm), None)
            if page is None:
                return
            self._pages.remove(page)
            for cell in [c for c, p in self._opened.items() if p is page]:
                del self._opened[cell]  # its turns go on; no page holds them until one adopts
            moved = [(rid, f) for rid, f in list(self._pending.items()) if f.page is page]
        for request_id, flight in moved:
            self._move(request_id, flight)
        if page is serving:
            self._took_over()

    def _took_over(self) -> None:
        """Another page serves now (the serving one closed or stopped answering): it gets
        what a hello gets but the turns, which it heard already, at its hello and as they
        began (:meth:`_tell_all`; its gate marked those it did not open adoptable, gate.ts):
        the running turns' live views, re-shown there, so its user can answer a waiting card."""
        if self._serving() is None:
            return
        # A page that showed a turn is gone: tools/pending_answers.py counts hellos for that.
        self.connections += 1
        if self.on_hello is not None:
            self.on_hello()

    def _fail_pending(self, why: str) -> None:
        """Fail every request in flight (as their timeout would)."""
        with self._lock:
            flights = list(self._pending.values())
        for flight in flights:
            flight.future.get_loop().call_soon_threadsafe(_fail, flight.future, BridgeError(why))

    def _move(self, request_id: str, flight: _InFlight) -> None:
        """A request whose page closed: asked again of the page that took over when that
        changes nothing (a read), else failed, never applied twice."""
        page = self._route(flight.turn)
        if page is not None and flight.message.resend:
            flight.page = page
            self._send(page, flight.message.to_wire(request_id))
            return
        error = (
            BridgeError("the notebook page closed")
            if flight.message.resend
            else PageClosedError(CLOSED_MID_REQUEST)
        )
        flight.future.get_loop().call_soon_threadsafe(_fail, flight.future, error)

    def received(self, comm: Any, msg: Mapping[str, Any]) -> None:
        """A message from a page: a hello, a reply or an event (anything else is ignored; an
        event's cell id is the listener's to check)."""
        content = msg.get("content") if isinstance(msg, Mapping) else None
        message = parse_page_message(content.get("data") if isinstance(content, Mapping) else None)
        with self._lock:
            page = next((p for p in self._pages if p.comm is comm), None)
        if page is not None and message is not None:
            self._HANDLERS[type(message)](self, page, message)

    def _on_hello(self, page: _Page, hello: Hello) -> None:
        self.refused = None
        self._said_hello(page, hello)
        for running in list(self._turns):
            self._send(page, TurnBegin(running).to_wire())
        for cell in list(self._waiting):
            self._send(page, ReviewPending(cell, True).to_wire())
        self.connections += 1
        if self.on_hello is not None:
            self.on_hello()

    def _on_refused_hello(self, page: _Page, refused: RefusedHello) -> None:
        self.refused = refused.protocol
        self._said_hello(page, None)

    def _on_reply(self, page: _Page, reply: Reply) -> None:
        page.gone = False  # it answers after all (a late reply, a slow page)
        flight = self._pending.get(reply.id)
        if flight is not None and flight.page is page:  # only the page that was asked
            # On a subshell thread too (docs/kernel.md, section 3): settle on its own loop.
            flight.future.get_loop().call_soon_threadsafe(_settle, flight.future, reply)

    def _on_editing(self, page: _Page, event: Editing) -> None:
        if self._editing is not None and page.hello is not None:
            loop, callback = self._editing
            loop.call_soon_threadsafe(callback, event.cell)

    def _on_turn_opened(self, page: _Page, event: TurnOpened) -> None:
        with self._lock:
            if page.hello is not None and event.cell in self._turns:
                self._opened[event.cell] = page
                page.gone = False

    #: Each message a page sends (messages.py's), by its type: what the bridge does with it.
    _HANDLERS: ClassVar[Mapping[type, Callable[[Bridge, _Page, Any], None]]] = {
        Hello: _on_hello,
        RefusedHello: _on_refused_hello,
        Reply: _on_reply,
        Editing: _on_editing,
        TurnOpened: _on_turn_opened,
    }

    def _said_hello(self, page: _Page, hello: Hello | None) -> None:
        """``page`` said hello (or one we do not speak): it is the newest now."""
        with self._lock:
            page.hello = hello
            page.gone = False
            if page in self._pages:
                self._pages.remove(page)
                self._pages.append(page)

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
        """The turn of ``cell`` starts: tell the pages now, or a page when it says hello."""
        self._turns[cell] += 1
        self._tell_all(TurnBegin(cell))

    def turn_ended(self, cell: str) -> None:
        self._turns[cell] -= 1
        if self._turns[cell] <= 0:
            del self._turns[cell]
            self._opened.pop(cell, None)
            self._waiting.pop(cell, None)  # the pages drop the mark with the turn
        self._tell_all(TurnEnd(cell))

    def card_waiting(self, cell: str, waiting: bool) -> None:
        """A card of the running turn of ``cell`` starts (``waiting``) or stops waiting for the
        user: every page hears when the first card starts and when the last one stops, and a
        page that says hello meanwhile hears it then. Without real-time collaboration only the
        page that ran the cell shows the card; the others mark the cell (docs/bridge.md,
        "Collaboration")."""
        with self._lock:
            if waiting:
                if cell not in self._turns:
                    return  # no turn announced for it: no page could clear the mark
                self._waiting[cell] += 1
                changed = self._waiting[cell] == 1
            else:
                if cell not in self._waiting:
                    return
                self._waiting[cell] -= 1
                changed = self._waiting[cell] <= 0
                if changed:
                    del self._waiting[cell]
        if changed:
            self._tell_all(ReviewPending(cell, waiting))

    def _tell_all(self, message: Notify) -> None:
        """Turns go to every page, not only the one serving: each page's gate keeps its own
        turns, and a page that takes over later must not hold a turn that ended meanwhile
        (its gate would take edits outside any turn, docs/security.md)."""
        with self._lock:
            pages = [p for p in self._pages if p.hello is not None]
        for page in pages:
            self._send(page, message.to_wire())

    def holds(self, comm: Any) -> bool:
        """Whether ``comm`` is one of the bridge's (a page's, or the kernel's announced one)."""
        with self._lock:
            return any(p.comm is comm for p in self._pages)

    def close(self) -> None:
        """Close every comm (byre_jupyter unloads): what waits fails."""
        with self._lock:
            pages = list(self._pages)
        for page in pages:
            self._closed(page.comm)
            page.comm.close()

    # -- requests ------------------------------------------------------------------------

    @staticmethod
    def _send(page: _Page, data: Mapping[str, Any]) -> None:
        page.comm.send(dict(data))

    def notify(self, message: Notify, *, turn: str | None = None) -> bool:
        """Tell the page that holds the bridge something that needs no reply (a run's output;
        ``turn``: the cell of the turn it belongs to, whose page takes it); False when no page
        is connected. The comm keeps the order of messages."""
        page = self._route(turn)
        if page is None:
            return False
        self._send(page, message.to_wire())
        return True

    def restore(self, cell: str, outputs: list[dict[str, Any]]) -> bool:
        """Show a running turn's live view in code cell ``cell`` in place of its outputs, on a
        page that loaded during the turn (docs/bridge.md "Pending answers"; a finished record
        goes as a request, :class:`RestoreRecord`, so it is kept until a page has it). False:
        no page is connected."""
        return self.notify(ShowLive(cell, outputs))

    async def answers(self, timeout: float = REQUEST_TIMEOUT) -> bool:
        """Whether a page answers on the comm now: a closed tab leaves the comm open (the
        server does not tell the kernel), so only a reply tells; any reply will do."""
        try:
            await self._ask(Ping(), timeout)
        except BridgeError:
            return False
        return True

    async def request(
        self, message: Request, timeout: float = REQUEST_TIMEOUT, *, turn: str | None = None
    ) -> Mapping[str, Any]:
        """Ask the page that holds the bridge (``turn``: the page that opened the turn of that
        cell, while it runs); the reply's ``result``, or :class:`BridgeError`."""
        reply = await self._ask(message, timeout, turn)
        if not reply.ok:
            raise BridgeError(f"the notebook frontend failed: {reply.error}")
        if reply.result is None:
            raise BridgeError("the notebook frontend sent a reply without a result")
        return reply.result

    async def _ask(self, message: Request, timeout: float, turn: str | None = None) -> Reply:
        """Send a request to the page that holds the bridge (or ``turn``'s) and wait for its
        reply, whatever it says."""
        page = self._route(turn)
        if page is None:
            raise BridgeError("the notebook frontend is not connected")
        request_id = str(next(self._ids))
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        flight = self._pending[request_id] = _InFlight(future, page, message, turn)
        try:
            self._send(page, message.to_wire(request_id))
            reply = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            self._unanswered(flight.page)
            why = f"the notebook frontend did not answer within {timeout:g} s"
            raise BridgeError(why) from None
        finally:
            self._pending.pop(request_id, None)
        return reply

    def _unanswered(self, page: _Page) -> None:
        """``page`` let a request time out: presumed gone (a killed tab sends no comm_close),
        so later requests go to the next live page, which takes over when this one served."""
        serving = self._serving()
        with self._lock:
            if page.gone or page not in self._pages:
                return
            page.gone = True
        if page is serving and self._serving() is not page:
            self._took_over()


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


def _settle(future: asyncio.Future[Reply], reply: Reply) -> None:
    if not future.done():
        future.set_result(reply)


def _fail(future: asyncio.Future[Reply], error: BaseException) -> None:
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
        announced = comm_package.create_comm(target_name=TARGET, data=Announce().to_wire())
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
        if getattr(comm, "target_name", None) == TARGET and not bridge.holds(comm):
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
    bridge.close()
