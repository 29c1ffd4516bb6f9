"""Named sessions for one kernel."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

from .session import Session

__all__ = ["SessionManager"]


class SessionManager:
    """Keeps named :class:`Session` objects; ``get`` creates them with a factory on first use."""

    def __init__(self, factory: Callable[..., Session] = Session) -> None:
        self.factory = factory
        self._sessions: dict[str, Session] = {}

    def get(self, name: str = "default", **options: Any) -> Session:
        session = self._sessions.get(name)
        if session is None or session.closed:
            session = self.factory(name=name, **options)
            self._sessions[name] = session
        return session

    def peek(self, name: str) -> Session | None:
        return self._sessions.get(name)

    def add(self, session: Session) -> Session:
        self._sessions[session.name] = session
        return session

    def __iter__(self) -> Iterator[Session]:
        return iter(list(self._sessions.values()))

    def __len__(self) -> int:
        return len(self._sessions)

    async def drop(self, name: str) -> None:
        session = self._sessions.pop(name, None)
        if session is not None:
            await session.close()

    async def close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
