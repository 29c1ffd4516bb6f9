"""An in-process :class:`~byre_jupyter.transport.base.Transport`: the "CLI" is a coroutine.

For fast tests of the session and the control channel without a process: the peer coroutine
reads the host's lines and writes raw bytes back (split into lines by the same
:class:`~byre_jupyter.protocol.framing.LineSplitter` as a real process's stdout, so garbage,
invalid UTF-8 and over-long lines behave as they would). The peer's return value is the exit
status; its end is stdout's EOF. ``kill`` cancels it (status ``-9``, as SIGKILL reads).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable

from ..errors import CLIConnectionError, CLIProcessError, LineTooLongError
from ..protocol.framing import DEFAULT_MAX_LINE_BYTES
from .base import line_batches

__all__ = ["MemoryTransport", "Peer", "PeerEnd"]


class PeerEnd:
    """The CLI's side of a :class:`MemoryTransport`: its stdin, stdout and stderr."""

    def __init__(self) -> None:
        self._stdin: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._stdin_buffer = b""
        self._stdout: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.stderr: deque[str] = deque(maxlen=40)

    async def read_line(self) -> bytes | None:
        """The next line the host wrote (without its newline); None at stdin EOF."""
        while b"\n" not in self._stdin_buffer:
            chunk = await self._stdin.get()
            if chunk is None:
                return None
            self._stdin_buffer += chunk
        line, self._stdin_buffer = self._stdin_buffer.split(b"\n", 1)
        return line

    def write(self, data: bytes) -> None:
        """Write raw bytes to stdout (a line needs its own newline)."""
        self._stdout.put_nowait(data)


#: The CLI stand-in: runs from ``start`` to exit; returns the exit status.
Peer = Callable[[PeerEnd], Awaitable[int]]


class MemoryTransport:
    """A :class:`~byre_jupyter.transport.base.Transport` whose CLI is ``peer``, in this loop."""

    def __init__(self, peer: Peer, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self.peer = peer
        self.max_line_bytes = max_line_bytes
        self.end = PeerEnd()
        self._task: asyncio.Task[int] | None = None
        self._returncode: int | None = None

    @property
    def pid(self) -> int | None:
        return None

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def running(self) -> bool:
        return self._task is not None and self._returncode is None

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self.end.stderr)

    async def start(self) -> None:
        if self._task is not None:
            raise CLIConnectionError("transport already started")
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> int:
        try:
            code = await self.peer(self.end)
        except asyncio.CancelledError:
            code = -9
        except Exception as e:  # a crashing stand-in is a CLI that died: exit status 1
            self.end.stderr.append(f"{type(e).__name__}: {e}")
            code = 1
        self._returncode = code
        self.end._stdout.put_nowait(None)
        return code

    async def write(self, data: bytes) -> None:
        if not self.running:
            raise CLIProcessError(
                "cannot write: the CLI is not running", self._returncode, self.stderr_tail
            )
        self.end._stdin.put_nowait(data)

    async def batches(self) -> AsyncIterator[list[bytes | LineTooLongError]]:
        async for batch in line_batches(self.end._stdout.get, self.max_line_bytes):
            yield batch

    async def wait(self) -> int:
        assert self._task is not None
        await asyncio.wait([self._task])
        assert self._returncode is not None
        return self._returncode

    async def close(self, grace: float = 2.0) -> int | None:
        if self._task is None:
            return None
        self.end._stdin.put_nowait(None)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._task), grace)
        if not self._task.done():
            await self.kill()
        return self._returncode

    async def kill(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        await asyncio.wait([self._task])
