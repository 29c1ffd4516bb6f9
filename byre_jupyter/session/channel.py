"""The control channel: one reader over the CLI's stdout, correlated requests both ways.

Modelled on claude-agent-sdk-python's ``Query``: a single task reads every line, resolves our
pending control requests by ``request_id``, runs handlers for the CLI's requests
(``hook_callback``, ``mcp_message``, ``can_use_tool``) as tasks so a slow tool never blocks the
stream, and hands every other message to the session. An unknown request subtype gets an error
response at once: the CLI must never wait forever on us.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..errors import ControlError, ControlTimeout, LineTooLongError, ProtocolError
from ..protocol import (
    ControlCancelRequest,
    ControlRequest,
    ControlResponse,
    Message,
    StreamEvent,
    cancel_request,
    control_request,
    encode_line,
    error_response,
    jsonio,
    parse_message,
    success_response,
)
from ..transport import Transport

__all__ = ["ControlChannel", "RequestHandler"]

log = logging.getLogger(__name__)

#: Handles one CLI → host control request; returns the success body, raises to answer error.
RequestHandler = Callable[[ControlRequest], Awaitable[Mapping[str, Any]]]


class ControlChannel:
    def __init__(
        self,
        transport: Transport,
        *,
        on_message: Callable[[Message], None],
        on_bad_line: Callable[[bytes, ProtocolError], None],
        on_eof: Callable[[], None],
        handlers: Mapping[str, RequestHandler],
        on_send: Callable[[Mapping[str, Any]], None] | None = None,
        on_recv: Callable[[Message], None] | None = None,
    ) -> None:
        self.transport = transport
        self._on_message = on_message
        self._on_bad_line = on_bad_line
        self._on_eof = on_eof
        self._handlers = dict(handlers)
        self._on_send = on_send
        self._on_recv = on_recv
        self._ids = itertools.count(1)
        self._pending: dict[str, asyncio.Future[ControlResponse]] = {}
        self._inbound: dict[str, asyncio.Task[None]] = {}
        self._reader: asyncio.Task[None] | None = None
        self.closed = asyncio.Event()

    def start(self) -> None:
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    # -- sending ----------------------------------------------------------------------------

    async def send(self, message: Mapping[str, Any]) -> None:
        if self._on_send is not None:
            self._on_send(message)
        await self.transport.write(encode_line(dict(message)))

    async def request(self, subtype: str, *, timeout: float, **fields: Any) -> Mapping[str, Any]:
        """Send a control request and wait for its answer.

        Raises :class:`ControlTimeout` (after telling the CLI we gave up with a
        ``control_cancel_request``) or :class:`ControlError` for an error response or a CLI that
        went away.
        """
        request_id = f"req_{next(self._ids)}"
        future: asyncio.Future[ControlResponse] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self.send(control_request(request_id, subtype, **fields))
            try:
                response = await asyncio.wait_for(asyncio.shield(future), timeout)
            except asyncio.TimeoutError:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self.send(cancel_request(request_id)), 1.0)
                raise ControlTimeout(subtype, timeout) from None
        finally:
            self._pending.pop(request_id, None)
        if response.subtype != "success":
            raise ControlError(subtype, response.error or "unknown error", response.error_code)
        return response.response

    # -- reading ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            loads, dispatch = jsonio.loads, self._dispatch
            async for batch in self.transport.batches():
                for item in batch:
                    if isinstance(item, LineTooLongError):
                        self._on_bad_line(b"", item)
                        continue
                    try:
                        raw = loads(item)
                    except ValueError:
                        try:
                            raw = jsonio.loads_refused(item)  # what only the stdlib accepts
                        except ValueError as e:  # also UnicodeDecodeError
                            self._on_bad_line(item, ProtocolError(f"not JSON: {e}", item))
                            continue
                    if not isinstance(raw, dict):
                        self._on_bad_line(item, ProtocolError("not a JSON object", item))
                        continue
                    dispatch(parse_message(raw))
        except Exception as e:
            log.exception("byre: reader failed")
            self._on_bad_line(b"", ProtocolError(f"reader failed: {e!r}"))
        finally:
            self._fail_pending()
            self.closed.set()
            self._on_eof()

    def _dispatch(self, message: Message) -> None:
        if self._on_recv is not None:
            self._on_recv(message)
        if type(message) is StreamEvent:  # most lines of a turn: skip the ladder below
            self._on_message(message)
        elif isinstance(message, ControlResponse):
            future = self._pending.get(message.request_id)
            if future is not None and not future.done():
                future.set_result(message)
            else:
                log.debug("byre: control_response for unknown request %s", message.request_id)
        elif isinstance(message, ControlRequest):
            request_id = message.request_id
            answer = asyncio.get_running_loop().create_task(self._answer(message))
            self._inbound[request_id] = answer
            answer.add_done_callback(lambda _t: self._inbound.pop(request_id, None))
        elif isinstance(message, ControlCancelRequest):
            pending = self._inbound.get(message.request_id)
            if pending is not None:
                pending.cancel()
        else:
            self._on_message(message)

    async def _answer(self, request: ControlRequest) -> None:
        handler = self._handlers.get(request.subtype)
        try:
            if handler is None:
                raise ControlError(request.subtype, "unsupported control request", "unsupported")
            body = await handler(request)
            reply = success_response(request.request_id, body)
        except asyncio.CancelledError:
            reply = error_response(request.request_id, "cancelled")
        except Exception as e:
            log.debug("byre: control request %s failed: %r", request.subtype, e)
            reply = error_response(request.request_id, str(e) or type(e).__name__)
        with contextlib.suppress(Exception):  # the CLI may be gone; nothing left to tell
            await self.send(reply)

    def _fail_pending(self) -> None:
        for request_id, future in list(self._pending.items()):
            if not future.done():
                future.set_result(
                    ControlResponse(
                        raw={},
                        request_id=request_id,
                        subtype="error",
                        response={},
                        error="the CLI exited before answering",
                        error_code="closed",
                    )
                )
        for task in list(self._inbound.values()):
            task.cancel()

    async def aclose(self) -> None:
        for task in list(self._inbound.values()):
            task.cancel()
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
