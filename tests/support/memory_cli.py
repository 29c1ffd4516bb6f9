"""A scripted fake CLI speaking stream-json in-process, behind a MemoryTransport.

For the fast tier of session and control-channel tests: no process, no network, one event loop.
It answers ``initialize``, ``interrupt``, ``set_model``, ``apply_flag_settings`` and
``set_permission_mode`` as the real CLI 2.1.328 does (docs/protocol.md; ``mode_answer`` makes
the last refuse or never answer); every other host request gets an error. Each user message
runs the next turn's script; a script item is one of

* a dict: written as one stdout line (``session_id`` filled in);
* ``bytes``: written as-is (garbage, invalid UTF-8, a line without its newline...);
* :class:`Ask`: a control request to the host; the turn waits for the answer, kept in
  ``FakeCLI.answers``;
* :class:`Stall`: wait until interrupted (``answer_interrupt=False``: ignore the interrupt
  request too, a CLI that hangs);
* :class:`Exit`: exit with that status now.

A turn without a ``result`` item gets a success result with the text of its assistant lines;
an interrupted turn ends with ``error_during_execution`` as the real CLI's does. Every launch
(the spec: argv flags such as ``--resume``) is kept in ``FakeCLI.launches``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from byre_jupyter.transport import LaunchSpec, MemoryTransport, PeerEnd

from .standin_cli import assistant, control_answer, result, text_delta

__all__ = ["Ask", "Exit", "FakeCLI", "Item", "Stall", "assistant", "result", "text_delta"]


@dataclass(frozen=True)
class Ask:
    subtype: str
    request: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Stall:
    answer_interrupt: bool = True


@dataclass(frozen=True)
class Exit:
    code: int


Item = Mapping[str, Any] | bytes | Ask | Stall | Exit


class FakeCLI:
    """The scripted CLI. ``session.transport_factory = fake.factory`` plugs it in."""

    def __init__(self, turns: Sequence[Sequence[Item]] = ()) -> None:
        self.turns = [list(t) for t in turns]
        self.turn_index = 0  # survives restarts: a restarted CLI goes on with the script
        self.launches: list[LaunchSpec] = []
        self.received: list[dict[str, Any]] = []  # every line the host wrote
        self.answers: list[Mapping[str, Any]] = []  # the host's answers to Ask items
        self.interrupts = 0
        self.flag_settings: dict[str, Any] = {}  # what apply_flag_settings merged in
        #: How the CLI answers set_permission_mode: "success", "error" or "none" (never).
        self.mode_answer = "success"
        #: Each process's permission mode, launch and switches alike, in order.
        self.modes: list[str | None] = []
        self._ids = itertools.count(1)

    def factory(self, spec: LaunchSpec) -> MemoryTransport:
        self.launches.append(spec)
        return MemoryTransport(lambda end: self.run(end, spec), max_line_bytes=spec.max_line_bytes)

    # -- the process ------------------------------------------------------------------------

    async def run(self, end: PeerEnd, spec: LaunchSpec) -> int:
        session_id = spec.resume if spec.resume and not spec.fork_session else spec.session_id
        self.modes.append(spec.permission_mode)
        self.session_id = session_id or "fake-session"
        self.end = end
        self.interrupted = asyncio.Event()
        self._pending: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._ignore_interrupt = False
        self._exit: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        turn: asyncio.Task[None] | None = None
        reader = asyncio.ensure_future(self._read(end))
        try:
            while True:
                got = await asyncio.wait([reader, self._exit], return_when=asyncio.FIRST_COMPLETED)
                if self._exit in got[0]:
                    return self._exit.result()
                message = reader.result()
                if message is None:
                    return 0  # stdin EOF: exit as the CLI does
                reader = asyncio.ensure_future(self._read(end))
                if message.get("type") == "control_request":
                    self._answer(message)
                elif message.get("type") == "control_response":
                    response = message.get("response", {})
                    future = self._pending.pop(str(response.get("request_id")), None)
                    if future is not None and not future.done():
                        future.set_result(response)
                elif message.get("type") == "user":
                    if turn is not None:
                        await turn  # the CLI runs one turn at a time
                    turn = asyncio.ensure_future(self._turn())
        finally:
            reader.cancel()
            if turn is not None:
                turn.cancel()

    async def _read(self, end: PeerEnd) -> dict[str, Any] | None:
        while True:
            line = await end.read_line()
            if line is None:
                return None
            if line.strip():
                message: dict[str, Any] = json.loads(line)
                self.received.append(message)
                return message

    def write(self, obj: Mapping[str, Any] | bytes) -> None:
        if isinstance(obj, bytes):
            self.end.write(obj)
            return
        line = dict(obj)
        if line.get("type") != "control_response":
            line.setdefault("session_id", self.session_id)
        self.end.write(json.dumps(line).encode() + b"\n")

    def _answer(self, message: Mapping[str, Any]) -> None:
        request = message.get("request", {})
        subtype = request.get("subtype")
        answer = control_answer(request)
        if subtype == "interrupt":
            self.interrupts += 1
            if self._ignore_interrupt:
                return
            self.interrupted.set()
        elif subtype == "apply_flag_settings":
            self.flag_settings.update(request.get("settings") or {})
        elif subtype == "set_permission_mode":
            if self.mode_answer == "none":
                return
            if self.mode_answer == "error":
                answer = {"subtype": "error", "error": f"unsupported: {subtype}"}
            else:
                self.modes.append(request.get("mode"))
        response = {"request_id": str(message.get("request_id")), **answer}
        self.write({"type": "control_response", "response": response})

    async def _ask(self, ask: Ask) -> Mapping[str, Any]:
        request_id = f"cli_req_{next(self._ids)}"
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self.write(
            {
                "type": "control_request",
                "request_id": request_id,
                "request": {"subtype": ask.subtype, **ask.request},
            }
        )
        return await future

    async def _turn(self) -> None:
        items = self.turns[self.turn_index] if self.turn_index < len(self.turns) else []
        self.turn_index += 1
        self.interrupted.clear()
        self._ignore_interrupt = False
        self.write({"type": "system", "subtype": "init", "model": "fake", "tools": []})
        texts: list[str] = []
        for item in items:
            if self.interrupted.is_set():
                break
            if isinstance(item, Ask):
                self.answers.append(await self._ask(item))
            elif isinstance(item, Stall):
                self._ignore_interrupt = not item.answer_interrupt
                if self._ignore_interrupt:
                    await asyncio.Event().wait()  # hung: until killed
                await self.interrupted.wait()
            elif isinstance(item, Exit):
                self._exit.set_result(item.code)
                return
            else:
                if isinstance(item, Mapping) and item.get("type") == "result":
                    self.write(item)
                    return
                if isinstance(item, Mapping) and item.get("type") == "assistant":
                    texts.extend(b["text"] for b in item["message"]["content"] if "text" in b)
                self.write(item)
        if self.interrupted.is_set():
            self.write(result(None, "error_during_execution", is_error=True, cost=0.01))
        else:
            self.write(result("".join(texts) or "fake reply", cost=0.01))
