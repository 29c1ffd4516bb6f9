"""The CLI process: spawn, write lines, read lines, and a bounded close that leaves no orphans.

* ``start_new_session=True``: Jupyter's interrupt sends SIGINT to the kernel's whole process
  group and the CLI exits on SIGINT (docs/kernel.md, section 2); in its own session it is stopped
  only by us, gracefully, over the control channel.
* On Linux the CLI is started through a tiny ``/bin/sh`` supervisor (:data:`SUPERVISOR`), the
  leader of the CLI's process group, which asks the kernel for SIGHUP when the kernel dies
  (``PR_SET_PDEATHSIG``) and then SIGKILLs the whole group: a kernel killed in any way takes
  its CLI, and whatever the CLI started, along within milliseconds. (Asking for SIGTERM on the
  CLI itself, as 0.1 did, left the CLI alive for its own ~2 s shutdown, and a CLI that ignores
  SIGTERM forever; docs/processes.md has the figures.)
* stderr is always piped (else it lands in whatever cell runs) and its tail kept for errors.
* Lines come out of :class:`~byre_jupyter.protocol.framing.LineSplitter`: no practical limit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import dataclasses
import logging
import os
import signal
import sys
import weakref
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence

from ..errors import CLIConnectionError, CLIProcessError, LineTooLongError
from ..protocol.framing import DEFAULT_MAX_LINE_BYTES
from ..redact import Secrets
from .base import line_batches
from .launch import LaunchSpec, build_argv, build_env, find_cli, make_cli_folders_private

__all__ = ["SubprocessTransport", "subprocess_transport"]

log = logging.getLogger(__name__)

_READ_CHUNK = 1 << 18
#: At most one small read per this many seconds while the CLI streams steadily (see
#: transport.base.line_batches and docs/kernel.md, section 6): at most 40 ms of latency,
#: two reads per flush of the live view (80 ms), for a fraction of the wake-ups; a quarter of
#: it after a read that found the pipe quiet (the first lines of an answer).
_SETTLE = 0.040
_LIVE: weakref.WeakSet[SubprocessTransport] = weakref.WeakSet()


#: ``sh -c SUPERVISOR sh CLI ARGS...``. The kernel's death arrives as SIGHUP (see
#: :func:`_hup_when_parent_dies`) and kills the whole group at once. The CLI is started in the
#: background with the real stdin (``sh`` would give a background job /dev/null), the supervisor
#: then drops its copies of the pipes (so EOF reaches us when the CLI exits) and ignores TERM and
#: INT, which only the CLI should act on; it outlives the CLI to pass on its exit status, or the
#: signal that ended it, so ``returncode`` reads as if the CLI were our own child.
SUPERVISOR = """\
trap 'kill -KILL 0' HUP
exec 3<&0
"$@" <&3 3<&- &
child=$!
exec 3<&- 0</dev/null 1>/dev/null 2>&1
trap '' TERM INT
wait "$child"
status=$?
if [ "$status" -gt 128 ]; then trap - TERM INT; kill -$((status - 128)) $$; fi
exit "$status"
"""


def _hup_when_parent_dies() -> None:  # runs in the supervisor between fork and exec
    # A kernel under `nohup` (a server started with `nohup jupyter lab &`) inherits SIGHUP
    # ignored, and a non-interactive sh cannot trap a signal that was ignored on entry: the
    # supervisor would then outlive the kernel with its CLI. Its SIGHUP starts at the default.
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGHUP)  # PR_SET_PDEATHSIG; kept across exec, cleared for the CLI
    if os.getppid() == 1:  # the parent already died before prctl took effect
        os._exit(1)


def supervised(argv: Sequence[str]) -> list[str]:
    """``argv`` as started under the supervisor (on Linux; elsewhere unchanged)."""
    if sys.platform != "linux":
        return list(argv)
    return ["/bin/sh", "-c", SUPERVISOR, "sh", *argv]


class _PipeReader:
    """The CLI's stdout, read by us: only when :meth:`read` is awaited.

    asyncio's pipe protocol reads whenever the pipe is readable, so a CLI writing each stream
    delta on its own cost a read and an event-loop dispatch per line, even while
    :func:`~byre_jupyter.transport.base.line_batches` settled between reads (about 7,600 reads
    for 10,000 lines). Here nothing watches the pipe between reads: what arrives meanwhile
    waits in the operating system's pipe buffer (64 KiB on Linux; the CLI blocks while it is
    full, as it did at asyncio's high-water mark) and one read takes it all. The descriptor is
    closed at EOF, or when the reader is collected (``FileIO``)."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._file = open(fd, "rb", buffering=0)  # noqa: SIM115 - closed at EOF
        self._loop = asyncio.get_running_loop()
        #: Whether the last :meth:`read` found the pipe empty and waited for the CLI.
        self.waited = False

    async def read(self) -> bytes:
        """The next chunk (at most ``_READ_CHUNK`` bytes), or ``b""`` at EOF."""
        self.waited = False
        while not self._file.closed:
            chunk = self._file.read(_READ_CHUNK)  # None: nothing yet (non-blocking)
            if chunk is not None:
                if not chunk:
                    self._file.close()
                return chunk
            self.waited = True
            readable = self._loop.create_future()
            fd = self._file.fileno()
            self._loop.add_reader(fd, _resolve, readable)
            try:
                await readable
            finally:
                self._loop.remove_reader(fd)
        return b""


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


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
        self._stdout: _PipeReader | None = None
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
        stdout, child_stdout = os.pipe()  # ours to read (see _PipeReader); not inherited
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *supervised(self.argv),
                stdin=asyncio.subprocess.PIPE,
                stdout=child_stdout,
                stderr=asyncio.subprocess.PIPE,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                preexec_fn=_hup_when_parent_dies if sys.platform == "linux" else None,
            )
        except OSError as e:
            os.close(stdout)
            raise CLIConnectionError(f"could not start {self.argv[0]!r}: {e}") from e
        finally:
            os.close(child_stdout)  # the CLI holds the only write end: EOF when it exits
        self._stdout = _PipeReader(stdout)
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
        assert self._stdout is not None
        stdout = self._stdout
        async for batch in line_batches(
            stdout.read, self.max_line_bytes, _SETTLE, lambda: stdout.waited
        ):
            yield batch

    async def lines(self) -> AsyncIterator[bytes | LineTooLongError]:
        """Yield stdout lines one by one until EOF (see :meth:`batches`)."""
        async for batch in self.batches():
            for item in batch:
                yield item

    def _dead_error(self, message: str) -> CLIProcessError:
        secrets = None if self.env is None else Secrets.of(self.env)  # what the CLI was given
        return CLIProcessError(message, self.returncode, self.stderr_tail, secrets)

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
        """Kill the whole process group now (used when the CLI stalls); returns once the
        group is gone, so a caller may start a new CLI at once."""
        self._signal_group(signal.SIGKILL)
        if self._proc is not None:
            await self._wait_for_exit(5.0)
            await self._wait_group_gone(2.0)

    async def _wait_group_gone(self, timeout: float) -> None:
        # The supervisor is our child and is reaped by _wait_for_exit; the CLI and its tools,
        # killed by the same signal, are its children and leave a moment later (reaped by init).
        assert self._proc is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            try:
                os.killpg(self._proc.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            await asyncio.sleep(0.005)

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


def subprocess_transport(spec: LaunchSpec) -> SubprocessTransport:
    """The default :data:`~byre_jupyter.transport.base.TransportFactory`: the real CLI."""
    spec = dataclasses.replace(spec, cli_path=find_cli(spec.cli_path or None))  # or raises
    env = build_env(spec)
    make_cli_folders_private(env)
    return SubprocessTransport(
        build_argv(spec), env=env, cwd=spec.cwd, max_line_bytes=spec.max_line_bytes
    )


@atexit.register
def _reap_all() -> None:
    for transport in list(_LIVE):
        transport.kill_now()
