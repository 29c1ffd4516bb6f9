"""Per-shell state of the extension: configuration, named sessions, remembered conversations.

One :class:`ClaudeExtension` lives on the shell while the extension is loaded. The magics only
parse and delegate to it. It owns the sessions: it creates them from the ``Claude``
configuration (prewarm, branches, ``%claude resume``, portable notebooks) and remembers each
session's conversation id on disk (``sessions.json`` in ``Claude.state_dir``, keyed by notebook
and session name: :mod:`byre_jupyter.session.index`) so ``%claude resume`` can continue after a
kernel restart. The other responsibilities live beside it: approvals and the standing "always
allow" answers in :mod:`.approvals` (``ext.approvals``), each turn's cell in
:mod:`.turns` (``TurnController``), the turn trees in :mod:`.conversation`.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from ..bridge import bridge_of
from ..errors import ByreError
from ..redact import Secrets
from ..session import Session, TurnResult
from ..session.index import NOTEBOOK_ENV, ResumeIndex, resume_keys
from ..tools import PythonRunner
from ..tools.catalog import known_secrets_of
from ..tools.notebook_edit import valid_cell_id
from ..tools.pending_answers import pending_answers
from ..ui import TurnView
from . import picker, portable
from .approvals import Approvals
from .config import LAUNCH_TRAITS, Claude, launch_settings
from .context import guard_hook, notebook_path, system_prompt
from .conversation import Conversations, ConversationTree
from .credentials import credentials_hook
from .hostspares import HostGate
from .spare import Spares, Want, launch_key
from .surfaces import Surface, SurfaceControls, current_cell_id, frontend_kind, make_surface

__all__ = ["ClaudeExtension"]

#: The largest notebook ``%claude resume --from`` reads, and the largest session file it
#: restores once decompressed (a gzip bomb in a notebook stops here).
RESTORE_MAX_BYTES = 256 * 2**20

log = logging.getLogger(__name__)

#: The ``Claude`` traits a session's CLI is launched with: those of the launch options, and
#: those that shape the session around it. Model and permission mode are switched on a running
#: CLI, but bypassPermissions needs a launch flag the warm CLI may lack, so an unused warm CLI
#: is replaced for them too.
LAUNCH_SETTINGS = [
    *LAUNCH_TRAITS, "interrupt_grace", "transcripts", "notebook_prompt", "guard_notebook"
]  # fmt: skip


class ClaudeExtension:
    def __init__(self, shell: InteractiveShell) -> None:
        self.shell = shell
        self.config = Claude(parent=shell)
        #: The one registry of named conversations: each name's session, turn tree (re-running
        #: a cell branches), last view and ledger.
        self.conversations = Conversations(self, self._new_session)
        self.python_runner = PythonRunner(shell)
        #: Who answers the CLI's permission requests and the in-kernel tools' approvals.
        self.approvals = Approvals(self.config, self.conversations, shell, self.python_runner)
        self.background: set[Any] = set()
        self.config.observe(self._config_changed, names=["model", "permission_mode", "effort"])
        #: The default session started by ``Claude.prewarm``, until it is replaced.
        self._warm: Session | None = None
        self._rewarming = False
        self.config.observe(self._launch_settings_changed, names=LAUNCH_SETTINGS)
        #: Started CLIs a re-run or a new conversation adopts (``Claude.speculate``).
        self.spares = Spares(
            idle=lambda: not any(s.busy for s in self.conversations.sessions()),
            gate=HostGate(lambda: self.config.host_spares, lambda: self.config.spare_min_free_mb),
        )
        self.config.observe(
            lambda change: self.spares.clear(),
            names=[*LAUNCH_SETTINGS, "speculate", "rerun"],
        )

    # -- sessions -------------------------------------------------------------------------

    def cwd(self) -> str:
        return os.path.abspath(self.config.cwd or os.getcwd())

    def _new_session(self, name: str, **options: Any) -> Session:
        old = self.conversations.peek(name)
        if old is not None and old.session_id and old.session_id != options.get("resume"):
            # Another conversation takes the name: the old one's standing allowances end
            # here (a later resume of it asks again).
            self.approvals.clear(old.session_id)
        settings = self._settings(name)
        if not options:
            return self._launch(name, None, None, settings)
        settings.update(options)
        return Session(name, **settings)

    def _launch(
        self, name: str, conversation: str | None, at: str | None, settings: dict[str, Any]
    ) -> Session:
        """Session ``name`` continuing ``conversation`` after message ``at`` (a fork; None:
        a fresh conversation), with ``settings``: the spare started for exactly that when there
        is one (:mod:`.spare`), else a new session whose CLI starts at its first turn."""
        spare = self.spares.take(Want(conversation, at, launch_key(settings)))
        if spare is not None:
            spare.rebind(
                name, can_use_tool=settings["can_use_tool"], mcp_server=settings["mcp_server"]
            )
            return spare
        return self._start_at(name, conversation, at, settings)

    def speculate(self, name: str) -> None:
        """A turn of session ``name`` has ended: keep the spares the next launch most likely
        wants (:mod:`.spare`), a fork where re-running the newest cell branches and a fresh
        conversation, or none with ``Claude.speculate`` off (or transcripts on: a spare's file
        would be named for a session that may never be)."""
        session, tree = self.conversations.peek(name), self.conversations.tree(name)
        if not self._speculating() or session is None or tree is None:
            self.spares.clear()
            return
        current = tree.current
        fork = self._fork_want(name, session, tree, current.cell) if current else None
        self.spares.offer([*([fork] if fork else []), self._fresh_want(name)])

    def editing(self, cell: str) -> None:
        """The user began editing ``cell`` (the bridge's ``editing`` event, on the loop): keep
        the spares ``[a fork where re-running that cell branches, a fresh conversation]``.
        With at most two spares, the fork for the newest cell is dropped meanwhile; the next
        turn's end offers the usual pair again. Nothing happens, and the spares kept stay,
        when ``cell`` is no nbformat id (the frontend's text), no conversation holds a turn
        of it, its re-run would not fork (the first cell of a conversation starts afresh: the
        fresh spare is there), speculation is off, or a turn runs (a spare started now would
        take that turn's CPU)."""
        if not valid_cell_id(cell) or not self._speculating() or not self.spares.idle():
            return
        for entry in self.conversations:
            if entry.tree.newest(cell) is not None:
                fork = self._fork_want(entry.name, entry.session, entry.tree, cell)
                if fork is not None and fork[0].conversation is not None:
                    self.spares.offer([fork, self._fresh_want(entry.name)])
                return

    def _speculating(self) -> bool:
        return bool(self.config.speculate and not self.config.transcripts)

    def _fork_want(
        self, name: str, session: Session, tree: ConversationTree, cell: str | None
    ) -> tuple[Want, Callable[[], Session]] | None:
        """What re-running ``cell`` in ``name`` launches (as :meth:`Conversations.begin` and
        :meth:`branch` will) when it moves the session: a fork, or a fresh conversation for
        its first cell (launched with the session's model and mode); else None."""
        if cell is None:
            return None
        placement = tree.place(cell, self.rerun_mode())
        if not placement.fork:
            return None
        conversation, at = tree.fork_point(placement.parent)
        forked = self._branch_settings(name, session)
        make = functools.partial(self._start_at, name, conversation, at, forked)
        return Want(conversation, at, launch_key(forked)), make

    def _fresh_want(self, name: str) -> tuple[Want, Callable[[], Session]]:
        fresh = self._settings(name)
        return Want(None, None, launch_key(fresh)), functools.partial(
            self._start_at, name, None, None, fresh
        )

    @staticmethod
    def _start_at(
        name: str, conversation: str | None, at: str | None, settings: dict[str, Any]
    ) -> Session:
        if conversation is None:
            return Session(name, **settings)
        return Session(name, resume=conversation).fork(at=at, name=name, **settings)

    def _settings(self, name: str) -> dict[str, Any]:
        cfg = self.config
        transcript = None
        if cfg.transcripts:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            transcript = os.path.join(os.path.expanduser(cfg.transcripts), f"{name}-{stamp}.jsonl")
        settings: dict[str, Any] = {
            **launch_settings(cfg),
            "cwd": self.cwd(),
            "interrupt_grace": cfg.interrupt_grace,
            "transcript": transcript,
            "can_use_tool": functools.partial(self.approvals.unowned, name),
            "mcp_server": self.approvals.kernel_server(name),
        }
        if cfg.notebook_prompt:
            prompt = system_prompt(self.notebook_path())
            settings["extra_args"] = [*settings["extra_args"], "--append-system-prompt", prompt]
        # A read of a credential file asks first, but in bypassPermissions (docs/security.md).
        pre_tool_use = [credentials_hook()]
        if cfg.guard_notebook:
            pre_tool_use.append(guard_hook(self.notebook_path))
        settings["hooks"] = {"PreToolUse": pre_tool_use}
        return settings

    def notebook_path(self) -> str | None:
        """The notebook open in the editor, when the frontend tells the kernel."""
        return notebook_path(self.shell.user_ns, self.cwd())

    def prewarm(self) -> None:
        """Start the default session's CLI in the background (``Claude.prewarm``).

        Only with a running loop (a kernel): terminal IPython runs no loop between cells, so a
        start there would block the ``%load_ext``. The task runs after the loading cell, so a
        ``%config`` in that same cell still shapes the session. A failure is left for the
        first cell: its ``start()`` tries again and shows the error.
        """
        import asyncio

        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return

        async def warm() -> None:
            session = self._warm = self.session("default")
            try:
                await session.start()
            except ByreError as e:
                log.debug("byre: prewarm of the CLI failed (the first cell retries): %s", e)

        self.schedule(warm())

    def _launch_settings_changed(self, change: Any) -> None:
        """A setting a CLI is launched with changed: a warm CLI no cell has used yet is
        closed, and the first cell starts one with what the user set, exactly as without
        prewarm (its start-up warnings, e.g. an unwritable transcript, show in that cell)."""
        warm = self._warm
        if warm is None or self._rewarming:
            return
        self._rewarming = True

        async def rewarm() -> None:
            self._rewarming = False
            if self.conversations.peek("default") is not warm or not self._unused_warm(warm):
                return
            self._warm = None
            await self.conversations.drop("default")

        self.schedule(rewarm())

    def _unused_warm(self, session: Session) -> bool:
        """The session prewarm started, before any cell used it."""
        tree = self.conversations.tree(session.name)
        return session is self._warm and not session.busy and (tree is None or not tree.turns)

    def rerun_mode(self) -> str:
        return str(self.config.rerun)

    def branch(self, name: str, conversation: str | None, at: str | None) -> Session:
        """Move session ``name`` to an earlier point: a fork of ``conversation`` after message
        ``at`` (None: all of it), or a fresh conversation when ``conversation`` is None: the
        spare started for that point when there is one (:mod:`.spare`), else a CLI started
        for it. The old CLI is closed; "always allow" answers carry over, as the user still
        sees one session."""
        old = self.conversations.peek(name)
        session = self._launch(name, conversation, at, self._branch_settings(name, old))
        sources = [conversation, old.session_id if old is not None else None]
        self.approvals.carry_over(sources, session.session_id)
        self._close(old)
        return self.conversations.install(session, new=False)

    def _branch_settings(self, name: str, old: Session | None) -> dict[str, Any]:
        """A move of ``name`` keeps the model, effort and permission mode its session has now (the
        mode in force: a switch changes it at once, docs/security.md)."""
        settings = self._settings(name)
        if old is not None:
            settings.update(model=old.model, permission_mode=old.permission_mode, effort=old.effort)
        return settings

    def session(self, name: str = "default", *, new: bool = False) -> Session:
        if new:
            old = self.conversations.peek(name)
            session = self.conversations.install(self._new_session(name), new=True)
            self._close(old)
            return session
        return self.conversations.get(name)

    def _close(self, replaced: Session | None) -> None:
        """A session the name no longer uses: its CLI ends on the loop."""
        if replaced is not None and not replaced.closed:
            self.schedule(replaced.close())

    def resume(self, name: str, session_id: str | None) -> Session:
        keys = resume_keys(name, self.cwd(), os.environ.get(NOTEBOOK_ENV))
        session_id = session_id or ResumeIndex(self.state_file()).find(keys)
        if not session_id:
            from IPython.core.error import UsageError

            raise UsageError(
                f"no earlier conversation remembered for session {name!r} in {self.cwd()}"
            )
        old = self.conversations.peek(name)
        session = self._new_session(name, resume=session_id)
        self.conversations.install(session, new=True, base=session_id)
        self._close(old)
        return session

    def cli_conversations(self, limit: int | None) -> list[picker.CliConversation]:
        """The CLI's conversations in this folder, newest first (:mod:`.picker`), each with
        where it came from: this notebook, another one, or the terminal."""
        notebook = os.environ.get(NOTEBOOK_ENV)
        # The key of a nameless session is exactly the prefix of this kernel's keys.
        here = resume_keys("", self.cwd(), notebook)[0]
        live = {
            s.session_id: s.name
            for s in self.conversations.sessions()
            if s.session_id and not s.closed
        }
        index = ResumeIndex(self.state_file()).read()
        return picker.find_conversations(self._cli_env(), self.cwd(), index, (here,), live, limit)

    # -- portable notebooks (app.portable) ---------------------------------------------

    def _cli_env(self) -> dict[str, str]:
        """The environment the CLI is launched with, as far as its files go."""
        return {**os.environ, **self.config.env}

    def portable_record(self, session_id: str) -> dict[str, Any]:
        """The conversation's session file as a portable record; raises PortableError."""
        env = self._cli_env()
        path = portable.session_file(env, self.cwd(), session_id)
        if path is None:
            raise portable.PortableError(f"the CLI's session file for {session_id} is not found")
        max_bytes = self.config.portable_max_kb * 1024
        places = portable.machine_places(self.cwd(), env)
        return portable.pack(path, session_id, max_bytes, Secrets.of(env), places)

    def resume_from(self, notebook: str, name: str) -> tuple[Session, portable.Restored]:
        """Continue the conversation a notebook carries (its newest portable record for
        ``name``) here: its session file goes into this machine's projects folder for this
        cwd, then ``name`` resumes it. Raises PortableError; the session is then unchanged."""
        path = os.path.join(self.cwd(), os.path.expanduser(notebook))
        record = portable.find_record(path, name, max_file_bytes=RESTORE_MAX_BYTES)
        restored = portable.restore(
            record, portable.projects_root(self._cli_env()), self.cwd(), RESTORE_MAX_BYTES
        )
        return self.resume(name, restored.session_id), restored

    def _config_changed(self, change: Any) -> None:
        for session in self.conversations.sessions():
            # An unused warm CLI is closed and started again by the first cell, with the new
            # value; its session takes a new mode at once all the same, as every other does.
            warm = self._unused_warm(session)
            if change["name"] == "model":
                if not warm:
                    self.schedule(session.set_model(change["new"]))
                continue
            if change["name"] == "effort":
                if not warm:
                    self.schedule(session.set_effort(change["new"]))
                continue
            try:
                # In force now, before any queued cell runs; the CLI follows before the
                # session's next turn is sent (docs/security.md, "How modes switch").
                session.switch_permission_mode(change["new"])
            except ByreError as e:  # bypassPermissions refused here: the session keeps its mode
                print(f"{type(e).__name__}: {e}", file=sys.stderr)
                continue
            if not warm:
                self.schedule(session.sync_permission_mode())

    def schedule(self, coro: Any) -> None:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            # Plain terminal IPython: no loop runs between cells, so do it now on IPython's
            # own persistent loop (the one %%claude cells run on there).
            from IPython.core.async_helpers import get_asyncio_loop

            get_asyncio_loop().run_until_complete(coro)
            return
        task = loop.create_task(coro)
        self.background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: Any) -> None:
        """A scheduled task ended. The cell that started it has returned, so its failure cannot
        fail that cell, and left unretrieved it would reach only the kernel's log: show it, as
        IPython shows an error (one line, no traceback)."""
        self.background.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            print(f"{type(error).__name__}: {error}", file=sys.stderr)

    # -- memory of conversations -----------------------------------------------------------

    def _key(self, name: str) -> str:
        return resume_keys(name, self.cwd(), os.environ.get(NOTEBOOK_ENV))[0]

    def state_file(self) -> Path:
        """The resume index, ``sessions.json`` in ``Claude.state_dir``."""
        return Path(self.config.state_dir).expanduser() / "sessions.json"

    def remembered(self) -> dict[str, str]:
        return ResumeIndex(self.state_file()).read()

    def remember(self, session: Session, result: TurnResult) -> None:
        if result.session_id:
            ResumeIndex(self.state_file()).set(self._key(session.name), result.session_id)

    # -- frontend ------------------------------------------------------------------------

    def frontend(self) -> str:
        return frontend_kind(self.shell)

    def surface(self, view: TurnView, controls: SurfaceControls) -> Surface:
        """Where a cell's turn shows: widgets, static outputs or the terminal."""
        answers = pending_answers(bridge_of(self.shell))
        keeping = answers.slot(self.cell_id()) if answers is not None else None
        return make_surface(self.frontend(), self.config.live, view, controls, keeping)

    def cell_id(self) -> str | None:
        """The running cell's id, from its execute_request (read in the cell's own context)."""
        return current_cell_id(self.shell)

    def secrets(self) -> Secrets:
        """What the kernel knows to be secret, and what the CLI was given (Claude.env)."""
        return known_secrets_of(self.shell, self.config.env)

    def namespace(self) -> dict[str, Any]:
        """The user's namespace (a turn's ``-o NAME`` lands here)."""
        ns: dict[str, Any] = self.shell.user_ns
        return ns

    async def close(self) -> None:
        await self.spares.close()
        await self.conversations.close_all()
