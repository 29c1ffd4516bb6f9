"""A session's turns as a tree, so that re-running a cell branches.

A notebook is not a chat log: people edit cell 3 of 5 and run it again. Each turn remembers the
cell that ran it (JupyterLab, Notebook 7 and VS Code send ``cellId`` in the execute_request's
metadata) and the turn it followed. A cell's first run follows wherever the session is now. A
cell run again follows the *newest* turn of the cell it followed last time, so its old answer
and everything after it are out of its context: the session is swapped for a fork of the
conversation at that turn's last assistant message (``--resume=OLD --resume-session-at=UUID
--fork-session``), and continues from there (in a CLI started for that point when the previous
turn ended, if the cell is the newest: :mod:`.spare`). Without ``cellId`` (nbclient,
papermill, terminal IPython) or with ``Claude.rerun = "append"`` the conversation stays linear.

The cells answered on the branch left behind are marked stale: their record is shown again in
place (its display id) with a short mark at the top and the answer dimmed below it, which the
saved notebook keeps; a cell run again shows its new answer unmarked. With the frontend bridge
the mark has a "Run again" button (docs/bridge.md).

The tree lives in the kernel: after a restart and ``%claude resume``, the resumed conversation
is the root of a new tree; the turns after it go on in a fork of it (``--fork-session``), so it
stays as it was for re-runs to return to. Cells run then are first runs (they append), and
re-running them branches from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..errors import ByreError
from ..session import Ledger, Session, TurnResult
from ..tools.notebook_edit import valid_cell_id
from ..ui import TurnView
from ..ui.history import HistoryEntry, history_bundle
from ..ui.viewmodel import StaleMark
from .surfaces import Restate, current_cell_id

__all__ = [
    "BranchError",
    "ConversationTree",
    "Conversations",
    "NamedConversation",
    "Placement",
    "TurnNode",
    "current_cell_id",
]


class BranchError(ByreError):
    """A re-run cannot go back to the point it should follow; the message says why."""

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mCannot re-run here\x1b[0m: {self}"]


@dataclass(eq=False)
class TurnNode:
    """One turn of a session: its cell, the turn it followed, and where its answer lives."""

    number: int
    cell: str | None
    parent: TurnNode | None
    prompt: str
    execution_count: int | None = None
    conversation: str | None = None
    uuids: tuple[str, ...] = ()
    cost_usd: float | None = None
    scripted: bool = False
    done: bool = False
    interrupted: bool = False
    #: The CLI compacted the conversation during this turn (``TurnResult.compacted``).
    compacted: bool = False
    #: The cell number whose newer version made this answer stale, if one did.
    stale_since: int | None = None
    #: The turn's view, whose record shows the stale mark (``TurnView.stale``).
    view: TurnView | None = field(default=None, repr=False)
    #: Shows the turn's finished record again in place, once it has one (its surface's
    #: ``record()``: the view and output slot, not the turn's widgets).
    restate: Restate | None = field(default=None, repr=False)
    #: The portable record (``Claude.portable``) the turn's saved output holds, while it holds
    #: it: a newer turn of the session takes it out when it saves its own.
    portable: Mapping[str, Any] | None = field(default=None, repr=False)

    def finish(self, result: TurnResult | None) -> None:
        self.done = True
        if result is not None:
            self.conversation = result.session_id
            self.uuids = result.message_uuids
            self.cost_usd = result.cost_usd
            self.scripted = result.scripted
            self.interrupted = result.interrupted
            self.compacted = result.compacted

    def show_stale(self, mark: StaleMark | None) -> None:
        """Mark this turn's answer stale (None: not any more) where it shows. Only turns of a
        known cell show it (nbclient and papermill runs never branch); a turn still running
        shows it in the record it ends with."""
        if self.cell is None or self.view is None:
            return
        self.view.stale = mark
        if self.restate is not None:
            self.restate(self.portable)

    def drop_portable(self) -> None:
        """Take the portable record out of this turn's saved output, if it holds one."""
        if self.portable is not None:
            self.portable = None
            if self.restate is not None:
                self.restate(None)

    def label(self) -> str:
        return f"[{self.execution_count}]" if self.execution_count is not None else "[ ]"


@dataclass(frozen=True)
class Placement:
    """Where a new turn goes: after ``parent`` (None: the root), and whether the session must
    move there first (``fork``) because it is elsewhere now."""

    parent: TurnNode | None
    fork: bool


class ConversationTree:
    """The turns of one session name since its conversation began in this kernel.

    ``base`` is the conversation the tree grew from (a ``%claude resume``), or None for a fresh
    one; ``current`` is the turn the session continues from.
    """

    def __init__(self, base: str | None = None) -> None:
        self.base = base
        self.turns: list[TurnNode] = []
        self.current: TurnNode | None = None

    def newest(self, cell: str) -> TurnNode | None:
        for node in reversed(self.turns):
            if node.cell == cell:
                return node
        return None

    def place(self, cell: str | None, mode: str = "branch") -> Placement:
        last = self.newest(cell) if cell is not None and mode == "branch" else None
        if last is None:
            return Placement(self.current, fork=False)
        # Follow the newest turn of the cell this cell followed last time (not this cell's own
        # earlier turns, which a run in "append" mode may have left in its chain).
        before = last.parent
        while before is not None and before.cell == cell:
            before = before.parent
        if before is not None and before.cell is not None:
            before = self.newest(before.cell)
        return Placement(before, fork=before is not self.current)

    def begin(
        self, placement: Placement, cell: str | None, prompt: str, execution_count: int | None
    ) -> TurnNode:
        node = TurnNode(len(self.turns) + 1, cell, placement.parent, prompt, execution_count)
        self.turns.append(node)
        self.current = node
        return node

    def fork_point(self, node: TurnNode | None) -> tuple[str | None, str | None]:
        """The conversation and assistant message uuid that hold the state after ``node``:
        the nearest turn up the chain that produced a message; ``(base, None)`` (the whole
        resumed conversation, or nothing) at the root."""
        while node is not None and not (node.uuids and node.conversation):
            node = node.parent
        if node is None:
            return self.base, None
        later = [
            n
            for n in self.turns
            if n.number > node.number and n.compacted and n.conversation == node.conversation
        ]
        if later:
            # The CLI keeps only the summary of what came before a compaction: it cannot
            # resume at an older message ("No message found with message.uuid").
            raise BranchError(
                f"Claude Code cannot go back to the answer of {node.label()}: the conversation "
                f"was compacted after it (in {later[-1].label()}) and keeps only a summary of "
                "what came before. Run the cell again after the newest one, or start afresh "
                "with %claude new."
            )
        return node.conversation, node.uuids[-1]

    @staticmethod
    def path(node: TurnNode | None) -> list[TurnNode]:
        """``node`` and the turns it followed, newest first."""
        chain = []
        while node is not None:
            chain.append(node)
            node = node.parent
        return chain

    def left_behind(self, parent: TurnNode | None, cell: str | None) -> list[TurnNode]:
        """The newest turns of other cells on the current branch that a move to ``parent``
        leaves out of the context: the answers that no longer match what Claude saw."""
        keep = {id(n) for n in self.path(parent)}
        return [
            node
            for node in self.path(self.current)
            if id(node) not in keep
            and node.cell is not None
            and node.cell != cell
            and self.newest(node.cell) is node
        ]

    def on_current_branch(self) -> set[int]:
        return {id(n) for n in self.path(self.current)}

    def children(self, node: TurnNode | None) -> Iterator[TurnNode]:
        return (n for n in self.turns if n.parent is node)


# -- the extension's side ---------------------------------------------------------------------


class Host(Protocol):
    """What the conversations need of the extension (``extension.ClaudeExtension``)."""

    shell: Any

    def session(self, name: str = "default", *, new: bool = False) -> Session: ...
    def branch(self, name: str, conversation: str | None, at: str | None) -> Session: ...
    def rerun_mode(self) -> str: ...


@dataclass(eq=False)
class NamedConversation:
    """Everything one session name holds, in one entry so the parts cannot drift apart: the
    session it sends to now, the tree of its turns, the view of its last finished turn
    (``%claude transcript``), and the ledger of every turn paid for under the name. A branch
    swaps the session and keeps the rest; a new conversation (``--new``, ``%claude new``,
    ``%claude resume``, a closed session) starts a new tree; the ledger stays for the kernel's
    life, so ``%claude usage`` counts the abandoned branches too."""

    name: str
    session: Session
    tree: ConversationTree
    ledger: Ledger = field(default_factory=Ledger)
    last_view: TurnView | None = None


class Conversations:
    """The one registry of named conversations (:class:`NamedConversation`), and the session
    swaps that re-runs cause. ``factory(name)`` makes a name's first session."""

    def __init__(self, host: Host, factory: Callable[[str], Session]) -> None:
        self.host = host
        self.factory = factory
        self._entries: dict[str, NamedConversation] = {}
        #: Every turn the kernel paid for, under any name, closed names included: each name's
        #: ledger adds into it (``Claude.kernel_budget_usd`` is checked against it).
        self.spent = Ledger()
        #: Records of --bg turns that ended in a headless run (no cell id: nbclient,
        #: papermill), shown again by the next foreground turn (``TurnController``): such a
        #: client saves only the messages of the cell it runs, and the turn's record came
        #: from its own cell's context; from the running cell it updates that slot by its
        #: display id.
        self.unsaved_records: list[Callable[[], None]] = []

    # -- the registry ------------------------------------------------------------------------

    def entry(self, name: str) -> NamedConversation | None:
        return self._entries.get(name)

    def peek(self, name: str) -> Session | None:
        entry = self._entries.get(name)
        return entry.session if entry is not None else None

    def get(self, name: str) -> Session:
        """The name's session; a new conversation if it has none or its session was closed."""
        entry = self._entries.get(name)
        if entry is None or entry.session.closed:
            return self.install(self.factory(name), new=True)
        return entry.session

    def install(self, session: Session, *, new: bool, base: str | None = None) -> Session:
        """``session`` is the name's session from now on: a move within its conversation (a
        branch: the tree goes on), or with ``new`` a new conversation (a new tree, grown from
        ``base`` if it resumes one). Every session of a name counts into the name's ledger."""
        entry = self._entries.get(session.name)
        if entry is None:
            entry = self._entries[session.name] = NamedConversation(
                session.name, session, ConversationTree(base), Ledger(parent=self.spent)
            )
        elif new:
            entry.tree = ConversationTree(base)
        entry.session = session
        session.ledger = entry.ledger
        return session

    def tree(self, name: str) -> ConversationTree | None:
        entry = self._entries.get(name)
        return entry.tree if entry is not None else None

    def __iter__(self) -> Iterator[NamedConversation]:
        return iter(list(self._entries.values()))

    def sessions(self) -> list[Session]:
        return [entry.session for entry in self._entries.values()]

    async def drop(self, name: str) -> None:
        """Close the name's session and forget the name (``%claude close``)."""
        entry = self._entries.pop(name, None)
        if entry is not None:
            await entry.session.close()

    async def close_all(self) -> None:
        entries = list(self._entries.values())
        self._entries.clear()
        await asyncio.gather(*(e.session.close() for e in entries), return_exceptions=True)

    # -- turns ---------------------------------------------------------------------------------

    def begin(self, name: str, prompt: str, *, new: bool = False) -> tuple[Session, TurnNode]:
        """Place the cell's turn in its session's tree, moving the session if the cell was
        run before; returns the session to send to and the turn's node."""
        session = self.host.session(name, new=new)
        tree = self._entries[name].tree
        if tree.base is not None and not tree.turns and not session.busy:
            # The first turn after ``%claude resume`` goes on in a fork of the resumed
            # conversation, which stays as it was: the root a re-run can return to.
            session = self.host.branch(name, tree.base, None)
        cell = current_cell_id(self.host.shell)
        placement = tree.place(cell, self.host.rerun_mode())
        if placement.fork and session.busy:
            # A --bg turn still runs on the session: moving it would cut that turn off.
            placement = Placement(tree.current, fork=False)
        # The running cell's In [n]: its input is stored before it runs, so it is the last
        # entry of the input history. (``shell.execution_count`` is n during the cell on
        # IPython 8 but n + 1 on IPython 9, which counts before running.)
        history = getattr(
            getattr(self.host.shell, "history_manager", None), "input_hist_parsed", None
        )
        count = len(history) - 1 if isinstance(history, list) and history else None
        if placement.fork:
            conversation, at = tree.fork_point(placement.parent)  # first: it may refuse
            for node in tree.left_behind(placement.parent, cell):
                self._mark(node, count)
            session = self.host.branch(name, conversation, at)
        earlier = tree.newest(cell) if cell is not None else None
        if earlier is not None:
            self._clear(earlier)  # this cell's own output is replaced by the new run
        node = tree.begin(placement, cell, prompt, count)
        return session, node

    def checkout(self, name: str, node: TurnNode | None) -> Session:
        """Continue session ``name`` after ``node`` (None: the root), explicitly."""
        tree = self._entries[name].tree
        conversation, at = tree.fork_point(node)  # first: it may refuse
        for stale in tree.left_behind(node, None):
            self._mark(stale, None)
        session = self.host.branch(name, conversation, at)
        tree.current = node
        return session

    def _mark(self, node: TurnNode, since: int | None) -> None:
        node.stale_since = since if since is not None else -1
        # The id goes into the record's HTML, for the bridge's "Run again": a valid nbformat id.
        cell = node.cell if node.cell is not None and valid_cell_id(node.cell) else None
        node.show_stale(StaleMark(since, cell))

    def _clear(self, node: TurnNode) -> None:
        if node.stale_since is not None:
            node.show_stale(None)
        node.stale_since = None


# -- %claude history / checkout -------------------------------------------------------------


def render_history(name: str, tree: ConversationTree) -> dict[str, str]:
    """The tree's mimebundle (``ui.history``): one row per turn, ``●`` on the branch the
    session continues from, ``stale`` for an answer left on an older branch."""
    current = tree.on_current_branch()
    root = f"(resumed conversation {tree.base})" if tree.base else "(start)"
    if tree.current is None:
        root += "  ● current"
    return history_bundle(name, root, [_history_entry(n, current, tree) for n in tree.turns])


def _history_entry(node: TurnNode, current: set[int], tree: ConversationTree) -> HistoryEntry:
    flags = []
    if node is tree.current:
        flags.append("current")
    if not node.done:
        flags.append("running")
    elif node.interrupted:
        flags.append("interrupted")
    if node.stale_since is not None:
        flags.append("stale")
    return HistoryEntry(
        number=node.number,
        parent=node.parent.number if node.parent is not None else None,
        label=node.label(),
        cell=node.cell[:8] if node.cell else None,
        cost_usd=node.cost_usd,
        scripted=node.scripted,
        prompt=node.prompt,
        current_branch=id(node) in current,
        flags=tuple(flags),
    )


def find_turn(tree: ConversationTree, spec: str) -> TurnNode | None:
    """A turn by ``#N`` or ``N`` (its number), ``[N]`` (the cell's In [N]), a cell id (or
    its first characters: the newest turn of that cell), or ``start`` (None, the root).
    Raises LookupError."""
    if spec in ("start", "root"):
        return None
    if spec.startswith("[") and spec.endswith("]") and spec[1:-1].isdigit():
        count = int(spec[1:-1])
        for node in reversed(tree.turns):
            if node.execution_count == count:
                return node
        raise LookupError(f"no turn ran in cell [{count}]")
    number = spec[1:] if spec.startswith("#") else spec
    if number.isdigit():
        index = int(number)
        if 1 <= index <= len(tree.turns):
            return tree.turns[index - 1]
        raise LookupError(f"no turn #{index} (there are {len(tree.turns)})")
    cells = {n.cell for n in tree.turns if n.cell and n.cell.startswith(spec)}
    if len(cells) == 1:
        newest = tree.newest(cells.pop())
        assert newest is not None
        return newest
    raise LookupError(
        f"{spec!r} names no turn or cell" if not cells else f"{spec!r} names several cells"
    )
