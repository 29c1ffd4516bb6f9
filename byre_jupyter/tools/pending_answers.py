"""Answers that wait for a page (docs/bridge.md, "Pending answers").

A cell's output reaches only the page that ran it: the kernel sends it on iopub, parented to
that page's request, and a page opened later (a reload, the notebook opened again) is sent
nothing of a cell that is still running or has ended. So a turn whose page went away would
leave a waiting approval card nobody can see, and an answer that finished with no page open
would be lost from the notebook.

:class:`PendingAnswers` follows each turn's cell from the bridge's side. When a new page says
hello during a turn, the turn's live view is written into its cell again (``cell.restore``,
not final; app/surfaces.py announces its widgets again first, as a widget made now would be,
since the new page's widget manager asks the kernel for the old ones only once the running
cell ends).
When a turn ends and the page that showed it is gone (no page, another one said hello since,
or the page's tab closed: its comm stays open, so a ``ping`` that nobody answers tells), its
finished record is kept and written into its cell on the next hello (``final``), once: a
request that a page's reply ends; the page marks the notebook changed, so the user saves it.

A turn that began with no page connected (a headless run, or Run all before the bridge said
hello) has no page to lose: nothing is kept for it. A cell that ``run_cells`` runs in place is
followed the same way (tools/notebook_run.py).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from ..bridge import Bridge, BridgeError, RestoreRecord

__all__ = ["KEPT_CELLS", "Outputs", "PendingAnswers", "Slot", "pending_answers"]

#: nbformat outputs, as the bridge writes them into a cell.
Outputs = list[dict[str, Any]]

#: Finished records kept for cells no page showed; the oldest goes first beyond this (a
#: kernel left running for days with its page closed keeps the newest answers).
KEPT_CELLS = 20


class PendingAnswers:
    """The turns of one kernel's bridge, and the finished records no page took."""

    def __init__(self, bridge: Bridge, loop: asyncio.AbstractEventLoop) -> None:
        self.bridge = bridge
        self._loop = loop
        #: Running turns by cell: the hello count when the turn began (None: no page then)
        #: and its live view's outputs.
        self._showing: dict[str, tuple[int | None, Callable[[], Outputs] | None]] = {}
        #: Finished records no page took, by cell, oldest first.
        self._kept: dict[str, Outputs] = {}
        #: Cells run in place that ended on the page connected then, by cell: kept if the
        #: ping at the end of the turn finds that page gone.
        self._unsure: dict[str, tuple[int, Outputs]] = {}
        #: Pings of the page that showed a turn that just ended, and records on their way.
        self._checks: set[asyncio.Task[None]] = set()
        #: Kept records whose ``cell.restore`` request is out.
        self._sending: set[str] = set()
        bridge.on_hello = self._hello

    def slot(self, cell: str | None) -> Slot | None:
        """The keeping of one turn's cell (None: the frontend sent no cell id)."""
        return None if cell is None else Slot(self, cell)

    def showing(self, cell: str, live: Callable[[], Outputs] | None) -> None:
        """The turn (or run in place) of ``cell`` shows on the page connected now; ``live``
        gives what a page that loads meanwhile is shown (None: nothing)."""
        seen = self.bridge.connections if self.bridge.connected else None
        self._showing[cell] = (seen, live)

    def finished(self, cell: str, outputs: Outputs, *, ask: bool = True) -> None:
        """The turn of ``cell`` ended with ``outputs`` in its slot: kept when the page that
        showed the turn is gone. ``ask`` False (a cell run in place, inside a turn): the page
        is not pinged for it; the ping at the end of the turn that ran it decides for both."""
        seen, _live = self._showing.pop(cell, (None, None))
        bridge = self.bridge
        if seen is None:
            return  # no page was there to lose it
        if not bridge.connected or seen != bridge.connections:
            self._gone(seen, cell, outputs)
            if bridge.connected:
                self._deliver()  # another page said hello since: it has not got it
        elif not ask:
            self._unsure.pop(cell, None)
            self._unsure[cell] = (seen, outputs)
            while len(self._unsure) > KEPT_CELLS:
                del self._unsure[next(iter(self._unsure))]
        else:
            # The page that showed the turn, unless its tab closed: that leaves the comm open.
            task = self._loop.create_task(self._unless_answered(cell, outputs))
            self._checks.add(task)
            task.add_done_callback(self._checks.discard)

    async def _unless_answered(self, cell: str, outputs: Outputs) -> None:
        asked = self.bridge.connections
        if await self.bridge.answers():
            for each in [c for c, (seen, _o) in self._unsure.items() if seen == asked]:
                del self._unsure[each]  # that page has them
            return
        self._gone(asked, cell, outputs)  # for the next page that says hello
        if self.bridge.connected and self.bridge.connections != asked:
            self._deliver()  # one did, while the ping waited (it failed the ping)

    def _gone(self, seen: int, cell: str, outputs: Outputs) -> None:
        """The page of hello ``seen`` is gone: keep the turn's record, and the cells run in
        place on that page since (they share its fate)."""
        for each, (ran_on, kept) in list(self._unsure.items()):
            if ran_on == seen:
                del self._unsure[each]
                self._keep(each, kept)
        self._keep(cell, outputs)

    def _keep(self, cell: str, outputs: Outputs) -> None:
        self._kept.pop(cell, None)
        self._kept[cell] = outputs
        while len(self._kept) > KEPT_CELLS:
            del self._kept[next(iter(self._kept))]

    @property
    def kept(self) -> Mapping[str, Outputs]:
        return dict(self._kept)

    def _hello(self) -> None:
        """A page said hello (on whatever thread the comm delivered it): on the kernel's
        loop, give it what waited and the live views of the turns whose page it replaced."""
        self._loop.call_soon_threadsafe(self._greeted)

    def _greeted(self) -> None:
        self._deliver()
        now = self.bridge.connections
        for cell, (seen, live) in list(self._showing.items()):
            if live is not None and seen is not None and seen != now:
                self.bridge.restore(cell, live())

    def _deliver(self) -> None:
        """Send each kept record to the page connected now; it is dropped when the page says
        it has it (written, or no such cell there), else it waits for the next hello."""
        for cell in self._kept:
            if cell not in self._sending:
                self._sending.add(cell)
                task = self._loop.create_task(self._send(cell))
                self._checks.add(task)
                task.add_done_callback(self._checks.discard)

    async def _send(self, cell: str) -> None:
        outputs, sent_on = self._kept[cell], self.bridge.connections
        try:
            await self.bridge.request(RestoreRecord(cell, outputs))
        except BridgeError:
            # A page makes a second comm as it loads: the first one's request fails, and the
            # second one's hello may have come while this one was out.
            if self.bridge.connected and self.bridge.connections != sent_on:
                self._loop.call_soon(self._deliver)
            return
        finally:
            self._sending.discard(cell)
        if self._kept.get(cell) is outputs:
            del self._kept[cell]  # once: the page has it now


class Slot:
    """One turn's cell as its surface tells :class:`PendingAnswers` of it."""

    def __init__(self, answers: PendingAnswers, cell: str) -> None:
        self.answers = answers
        self.cell = cell

    @property
    def kept(self) -> bool:
        """Whether a turn beginning now is followed for a page that goes away: only when a
        page is connected (a turn with none has none to lose; VS Code's kernel has the bridge's
        target, and no page ever says hello)."""
        return self.answers.bridge.connected

    def showing(self, live: Callable[[], Outputs]) -> None:
        self.answers.showing(self.cell, live)

    def finished(self, outputs: Outputs) -> None:
        self.answers.finished(self.cell, outputs)

    def waiting(self, waiting: bool) -> None:
        """A card of this turn starts or stops waiting for the user: the other pages mark the
        cell (bridge/channel.py, ``card_waiting``)."""
        self.answers.bridge.card_waiting(self.cell, waiting)


_ANSWERS: weakref.WeakKeyDictionary[Bridge, PendingAnswers] = weakref.WeakKeyDictionary()


def pending_answers(bridge: Bridge | None) -> PendingAnswers | None:
    """The keeper of ``bridge``'s turns, made on the running loop the first time."""
    if bridge is None:
        return None
    answers = _ANSWERS.get(bridge)
    if answers is None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None  # no kernel loop (a terminal): no page either
        answers = _ANSWERS[bridge] = PendingAnswers(bridge, loop)
    return answers
