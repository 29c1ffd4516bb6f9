"""Per-shell state of the extension: configuration, named sessions, remembered conversations.

One :class:`ClaudeExtension` lives on the shell while the extension is loaded. The magics only
parse and delegate to it; it creates sessions from the ``Claude`` configuration and remembers
each session's conversation id on disk (``~/.byre_jupyter/sessions.json``, keyed by working
directory and session name) so ``%claude resume`` can continue after a kernel restart.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from ..session import Deny, PermissionRequest, Session, SessionManager, TurnResult
from ..session.permissions import NO_APPROVER, Allow
from ..ui import TurnView
from .config import Claude
from .frontend import frontend_kind

__all__ = ["ClaudeExtension"]

STATE_FILE = (
    Path(os.environ.get("BYRE_STATE_DIR", "~/.byre_jupyter")).expanduser() / "sessions.json"
)


class ClaudeExtension:
    def __init__(self, shell: InteractiveShell) -> None:
        self.shell = shell
        self.config = Claude(parent=shell)
        self.manager = SessionManager(self._new_session)
        self.views: dict[str, TurnView] = {}
        self.results: dict[str, TurnResult] = {}
        self.background: set[Any] = set()
        self.config.observe(self._config_changed, names=["model", "permission_mode"])

    # -- sessions -------------------------------------------------------------------------

    def cwd(self) -> str:
        return os.path.abspath(self.config.cwd or os.getcwd())

    def _new_session(self, name: str, **options: Any) -> Session:
        cfg = self.config
        transcript = None
        if cfg.transcripts:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            transcript = os.path.join(os.path.expanduser(cfg.transcripts), f"{name}-{stamp}.jsonl")
        settings: dict[str, Any] = {
            "model": cfg.model,
            "cli_path": cfg.cli_path,
            "cwd": self.cwd(),
            "permission_mode": cfg.permission_mode,
            "env": dict(cfg.env),
            "extra_args": list(cfg.extra_args),
            "interrupt_grace": cfg.interrupt_grace,
            "max_line_bytes": cfg.max_line_mb * 1024 * 1024,
            "transcript": transcript,
            "can_use_tool": self._decide_permission,
        }
        settings.update(options)
        return Session(name, **settings)

    def session(self, name: str = "default", *, new: bool = False) -> Session:
        if new:
            old = self.manager.peek(name)
            if old is not None and not old.closed:
                self._schedule(old.close())
            return self.manager.add(self._new_session(name))
        return self.manager.get(name)

    def resume(self, name: str, session_id: str | None) -> Session:
        session_id = session_id or self.remembered().get(self._key(name))
        if not session_id:
            from IPython.core.error import UsageError

            raise UsageError(
                f"no earlier conversation remembered for session {name!r} in {self.cwd()}"
            )
        old = self.manager.peek(name)
        if old is not None and not old.closed:
            self._schedule(old.close())
        return self.manager.add(self._new_session(name, resume=session_id))

    async def _decide_permission(self, request: PermissionRequest) -> Allow | Deny:
        """Until an in-cell approval card is attached: the configured headless answer."""
        if self.config.headless_permission == "allow":
            return Allow()
        return Deny(NO_APPROVER.format(tool=request.tool_name))

    def _config_changed(self, change: Any) -> None:
        for session in self.manager:
            if change["name"] == "model":
                self._schedule(session.set_model(change["new"]))
            else:
                self._schedule(session.set_permission_mode(change["new"]))

    def _schedule(self, coro: Any) -> None:
        import asyncio

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            coro.close()
            return
        task = loop.create_task(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    # -- memory of conversations -----------------------------------------------------------

    def _key(self, name: str) -> str:
        return f"{self.cwd()}::{name}"

    def remembered(self) -> dict[str, str]:
        try:
            data = json.loads(STATE_FILE.read_text())
        except (OSError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def remember(self, session: Session, result: TurnResult) -> None:
        self.results[session.name] = result
        if not result.session_id:
            return
        data = self.remembered()
        data[self._key(session.name)] = result.session_id
        try:
            STATE_FILE.parent.mkdir(parents=True, exist_ok=True)
            tmp = STATE_FILE.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1))
            tmp.replace(STATE_FILE)
        except OSError:
            pass  # remembering is a convenience; a read-only home must not break turns

    # -- frontend ------------------------------------------------------------------------

    def frontend(self) -> str:
        return frontend_kind(self.shell)

    async def close(self) -> None:
        await self.manager.close_all()
