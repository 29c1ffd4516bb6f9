"""The CLI process behind one conversation: launched, read, answered and ended.

A :class:`~byre_jupyter.session.session.Session` is two things with different lifetimes: the
conversation (its turns, their queue, what they cost, the permission mode in force), which
lasts as long as the session, and the ``claude`` process that serves it, which may die and be
launched again many times meanwhile (after a crash, to switch mode, to resume). This module is
the second: one :class:`CLIProcess` per session, holding at most one running process at a time
with its transport and control channel, the lock that keeps two starts from racing, the EOF of
a process that died, the interrupt's escalation to a kill, and the wire's transcript.

It knows nothing of turns. The conversation hands it a :class:`~byre_jupyter.transport.
LaunchSpec` to start (which conversation, in which settings, is the conversation's to say) and
callbacks for what comes back: messages, bad lines, the CLI's own requests and an EOF. The
split follows claude-agent-sdk-python's, which keeps ``SubprocessCLITransport`` apart from
``Query``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..errors import CLIProcessError, ControlError, ProtocolError
from ..protocol import Message
from ..redact import Secrets
from ..transport import LaunchSpec, Transport
from .channel import ControlChannel, RequestHandler
from .options import SessionOptions
from .transcript import TranscriptWriter

__all__ = ["CLIProcess", "ExitHandler", "Interruptible"]

log = logging.getLogger(__name__)

#: Told why the process is gone (exit code and stderr tail), once it has been reaped.
ExitHandler = Callable[[CLIProcessError], None]


class Interruptible(Protocol):
    """What an interrupt waits for: it is done, or will be (a turn is one)."""

    def done(self) -> bool: ...

    def result(self) -> Awaitable[object]: ...


async def _shielded(awaitable: Awaitable[None]) -> None:
    """Run ``awaitable`` to the end even if the caller is cancelled meanwhile."""
    task = asyncio.ensure_future(awaitable)
    try:
        await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        raise


class CLIProcess:
    """At most one running CLI for a conversation; launched again by :meth:`spawn`.

    From ``options`` it reads only how the CLI runs (``transport_factory``, ``env``, the start
    and control timeouts, ``transcript``), which never change while the session lives.
    ``on_eof`` is called when the CLI's stdout ends and returns what to tell once the process
    is gone: it is asked at once, as by then a new process may run.
    """

    def __init__(
        self,
        options: SessionOptions,
        *,
        on_message: Callable[[Message], None],
        on_bad_line: Callable[[bytes, ProtocolError], None],
        on_eof: Callable[[], ExitHandler],
        handlers: Mapping[str, RequestHandler],
    ) -> None:
        self._options = options
        self._on_message = on_message
        self._on_bad_line = on_bad_line
        self._on_eof = on_eof
        self._handlers = dict(handlers)
        self._transport: Transport | None = None
        self._channel: ControlChannel | None = None
        self._start_lock: asyncio.Lock | None = None
        self._exit_handlers: set[asyncio.Task[None]] = set()
        self._transcript = (
            TranscriptWriter(options.transcript, Secrets.of_process(options.env))
            if options.transcript
            else None
        )

    @property
    def transport(self) -> Transport | None:
        """What runs the CLI now; None before a start, after an exit and after :meth:`stop`."""
        return self._transport

    @property
    def running(self) -> bool:
        return self._transport is not None and self._transport.running

    @property
    def pid(self) -> int | None:
        return self._transport.pid if self._transport else None

    @property
    def start_lock(self) -> asyncio.Lock:
        """Held while the CLI starts: a second start waits, then finds it running."""
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        return self._start_lock

    # -- start and stop ---------------------------------------------------------------------

    async def spawn(
        self, spec: LaunchSpec, hooks: Mapping[str, Any] | None = None
    ) -> Mapping[str, Any]:
        """Launch the CLI as ``spec`` says and initialize it (registering ``hooks``); returns
        its ``initialize`` answer. A CLI that does not answer is killed: CLIProcessError."""
        transport = self._options.transport_factory(spec)
        starting = asyncio.ensure_future(transport.start())
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError:
            # Cancelled while the process is being created: it may exist already; kill it.
            await asyncio.wait([starting])
            if not starting.cancelled() and starting.exception() is None:
                await _shielded(transport.kill())
            raise
        transcript = self._transcript
        channel = ControlChannel(
            transport,
            on_message=self._on_message,
            on_bad_line=self._on_bad_line,
            on_eof=lambda: self._eof(channel),
            handlers=self._handlers,
            on_send=self._log_send if transcript else None,
            on_recv=self._log_recv if transcript else None,
        )
        self._transport, self._channel = transport, channel
        channel.start()
        try:
            return await channel.request(
                "initialize", timeout=self._options.start_timeout, hooks=hooks or None
            )
        except ControlError as e:
            await self.stop(kill=True)
            raise CLIProcessError(
                f"the CLI did not initialize: {e}",
                transport.returncode,
                transport.stderr_tail,
                Secrets.of_process(self._options.env),
            ) from e
        except asyncio.CancelledError:
            # ■ (or Stop) while the CLI starts: a process that never answered initialize must
            # not stay behind as "the running CLI" (the next turn would be written to it and
            # wait forever). Kill it, shielded: the kill finishes even if cancelled again.
            await _shielded(self.stop(kill=True))
            raise

    async def stop(self, *, kill: bool = False) -> None:
        """End the running CLI, if any: stdin EOF and a bounded wait, or (``kill``) at once.
        The next :meth:`spawn` launches a new one."""
        transport, channel = self._transport, self._channel
        self._transport = self._channel = None
        if transport is not None:
            if kill:
                await transport.kill()
            else:
                await transport.close(grace=2.0)
        if channel is not None:
            await channel.aclose()

    async def close(self) -> None:
        """Stop the CLI for good: after it, the transcript is closed too."""
        await self.stop(kill=False)
        if self._transcript is not None:
            self._transcript.close()

    # -- talking to it ----------------------------------------------------------------------

    async def send(self, message: Mapping[str, Any]) -> None:
        """Write one message to the running CLI."""
        if self._channel is None:
            raise CLIProcessError("the Claude CLI is not running", None, "")
        await self._channel.send(message)

    async def request(
        self, subtype: str, *, timeout: float | None = None, **fields: Any
    ) -> Mapping[str, Any]:
        """A control request to the running CLI, answered within ``timeout`` (default: the
        options' ``control_timeout``); ControlError if it refuses, is gone or is silent."""
        if self._channel is None:
            raise ControlError(subtype, "the CLI is not running", "closed")
        wait = self._options.control_timeout if timeout is None else timeout
        return await self._channel.request(subtype, timeout=wait, **fields)

    async def interrupt(self, work: Interruptible, grace: float) -> tuple[list[str], bool]:
        """Ask the CLI to interrupt ``work``; if it has not ended ``grace`` seconds later (the
        request included), the process group is killed. Returns the ids the CLI still has
        queued, and whether it was killed (the next start then resumes the conversation)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        still: list[str] = []
        if self._channel is not None:
            try:
                response = await self.request(
                    "interrupt", timeout=min(grace, self._options.control_timeout)
                )
                raw = response.get("still_queued")
                still = [str(s) for s in raw] if isinstance(raw, list) else []
            except ControlError as e:
                log.info("byre: interrupt request failed (%s); escalating", e)
        try:
            if not work.done():
                await asyncio.wait_for(work.result(), max(0.0, deadline - loop.time()))
        except asyncio.TimeoutError:
            log.warning("byre: turn did not end %.1fs after interrupt; killing the CLI", grace)
            await self.stop(kill=True)
            return still, True
        return still, False

    # -- its end ----------------------------------------------------------------------------

    def _eof(self, channel: ControlChannel) -> None:
        if channel is not self._channel and self._channel is not None:
            return  # an old process we replaced
        exited = self._on_eof()
        task = asyncio.get_running_loop().create_task(self._after_exit(channel, exited))
        # The loop holds tasks only weakly: kept here until it ends, or it could be collected
        # before it has told the conversation that the process died.
        self._exit_handlers.add(task)
        task.add_done_callback(self._exit_handlers.discard)

    async def _after_exit(self, channel: ControlChannel, exited: ExitHandler) -> None:
        transport = channel.transport
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(transport.wait(), 5.0)
        if self._channel is channel:
            self._channel = None
            self._transport = None
            await transport.kill()  # reap whatever is left of the group
        exited(
            CLIProcessError(
                "the Claude CLI exited during the turn",
                transport.returncode,
                transport.stderr_tail,
                Secrets.of_process(self._options.env),
            )
        )

    # -- transcript -------------------------------------------------------------------------

    def _log_send(self, message: Mapping[str, Any]) -> None:
        assert self._transcript is not None
        self._transcript.write("send", message)

    def _log_recv(self, message: Message) -> None:
        assert self._transcript is not None
        self._transcript.write("recv", message.raw)
