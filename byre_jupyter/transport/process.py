"""The CLI process: spawn, write lines, read lines, and a bounded close that leaves no orphans.

* ``start_new_session=True``: Jupyter's interrupt sends SIGINT to the kernel's whole process
  group and the CLI exits on SIGINT (kernel-mechanics.md, Q3); in its own session it is stopped
  only by us, gracefully, over the control channel.
* On Linux the child also asks the kernel for SIGTERM when its parent dies
  (``PR_SET_PDEATHSIG``): a kernel killed with SIGKILL takes its CLI with it at once, instead of
  the CLI finishing a whole turn on a closed stdin (observed doc, section 13).
* stderr is always piped (else it lands in whatever cell runs) and its tail kept for errors.
* Lines come out of :class:`~byre_jupyter.protocol.framing.LineSplitter`: no practical limit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import logging
import os
import signal
import sys
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from ..errors import CLIConnectionError, CLIProcessError, LineTooLongError
from ..protocol.framing import DEFAULT_MAX_LINE_BYTES, LineSplitter

__all__ = ["SubprocessTransport"]

log = logging.getLogger(__name__)

_READ_CHUNK = 1 << 18
_LIVE: weakref.WeakSet[SubprocessTransport] = weakref.WeakSet()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the parent already died before prctl took effect
        os._exit(1)


class SubprocessTransport:
    """One ``claude`` process speaking NDJSON on stdin/stdout."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        stderr_tail_lines: int = 40,
        on_stderr: Callable[[str], None] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env) if env is not None else None
        self.cwd = cwd
        self.max_line_bytes = max_line_bytes
        self._stderr_tail: deque[str] = deque(maxlen=stderr_tail_lines)
        self._on_stderr = on_stderr
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr_task: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def returncode(self) -> int | None:
        return self._proc.returncode if self._proc else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.returncode is None

    @property
    def stderr_tail(self) -> str:
        return "\n".join(self._stderr_tail)

    async def start(self) -> None:
        if self._proc is not None:
            raise CLIConnectionError("transport already started")
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                limit=_READ_CHUNK * 4,
            )
        except OSError as e:
            raise CLIConnectionError(f"could not start {self.argv[0]!r}: {e}") from e
        _LIVE.add(self)
        self._stderr_task = asyncio.get_running_loop().create_task(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        stream = self._proc.stderr
        while True:
            try:
                line = await stream.readline()
            except ValueError:  # a stderr line over the limit: keep a marker, go on
                self._stderr_tail.append("<stderr line too long>")
                continue
            if not line:
                return
            text = line.decode(errors="replace").rstrip("\n")
            self._stderr_tail.append(text)
            if self._on_stderr is not None:
                self._on_stderr(text)

    # -- I/O ------------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise self._dead_error("cannot write: the CLI is not running")
        async with self._write_lock:
            try:
                proc.stdin.write(data)
                await proc.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as e:
                raise self._dead_error("the CLI closed its stdin") from e

    async def batches(self) -> AsyncIterator[list[bytes | LineTooLongError]]:
        """Yield the complete stdout lines of each chunk read, as a list, until EOF.

        One await per chunk, not per line: at stream rates the per-line async-generator hop
        was a measurable share of the cost. Over-long lines come as LineTooLongError items.
        """
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        splitter = LineSplitter(self.max_line_bytes)
        while True:
            chunk = await stdout.read(_READ_CHUNK)
            if not chunk:
                tail = list(splitter.finish())
                if tail:
                    yield tail
                return
            batch = list(splitter.feed(chunk))
            if batch:
                yield batch

    async def lines(self) -> AsyncIterator[bytes | LineTooLongError]:
        """Yield stdout lines one by one until EOF (see :meth:`batches`)."""
        async for batch in self.batches():
            for item in batch:
                yield item

    def _dead_error(self, message: str) -> CLIProcessError:
        return CLIProcessError(message, self.returncode, self.stderr_tail)

    async def wait(self) -> int:
        assert self._proc is not None
        code = await self._proc.wait()
        if self._stderr_task is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        return code

    async def close(self, grace: float = 2.0, term_grace: float = 2.0) -> int | None:
        """stdin EOF, bounded wait, SIGTERM, SIGKILL to the process group. Cancellation-safe:
        if cancelled mid-way, the group is killed before the CancelledError propagates."""
        proc = self._proc
        if proc is None:
            return None
        try:
            if proc.returncode is None and proc.stdin is not None and not proc.stdin.is_closing():
                with contextlib.suppress(OSError, RuntimeError):
                    proc.stdin.close()
            if await self._wait_for_exit(grace):
                return proc.returncode
            self._signal_group(signal.SIGTERM)
            if await self._wait_for_exit(term_grace):
                return proc.returncode
            self._signal_group(signal.SIGKILL)
            await self._wait_for_exit(5.0)
            return proc.returncode
        except BaseException:
            self._signal_group(signal.SIGKILL)
            raise
        finally:
            # After the leader exits, its children (a Bash tool's shell) may still be in the
            # group: kill them too, so no orphan survives.
            self._signal_group(signal.SIGKILL)
            _LIVE.discard(self)

    async def kill(self) -> None:
        """Kill the whole process group now (used when the CLI stalls)."""
        self._signal_group(signal.SIGKILL)
        if self._proc is not None:
            await self._wait_for_exit(5.0)

    async def _wait_for_exit(self, timeout: float) -> bool:
        assert self._proc is not None
        if self._proc.returncode is not None:
            return True
        try:
            await asyncio.wait_for(self._proc.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def _signal_group(self, sig: int) -> None:
        if self._proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, sig)  # pid == pgid: start_new_session

    def kill_now(self) -> None:
        """Synchronous last resort (interpreter exit): SIGKILL the group."""
        self._signal_group(signal.SIGKILL)


@atexit.register
def _reap_all() -> None:
    for transport in list(_LIVE):
        transport.kill_now()
