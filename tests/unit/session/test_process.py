"""The CLI process on its own, without a conversation: what it launches, what it reports
back (messages, the EOF, the exit's error) and how an interrupt escalates to a kill.

``CLIProcess`` knows nothing of turns: these tests drive it with plain callbacks over the
in-process fake CLI, as ``Session`` does with its own."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from support.memory_cli import Exit, FakeCLI, Stall, result

from byre_jupyter.errors import CLIProcessError, ControlError, ProtocolError
from byre_jupyter.protocol import Message, ResultMessage, user_message
from byre_jupyter.session import SessionOptions
from byre_jupyter.session.process import CLIProcess, ExitHandler
from byre_jupyter.transport import LaunchSpec

PROCESS = Path(__file__).resolve().parents[3] / "byre_jupyter" / "session" / "process.py"


class Host:
    """What a conversation gives the process: it records what the process reports."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.messages: list[Message] = []
        self.eofs = 0
        self.exited: asyncio.Future[CLIProcessError] = loop.create_future()
        self.ended: asyncio.Future[object] = loop.create_future()  # a result arrived

    def on_message(self, message: Message) -> None:
        self.messages.append(message)
        if isinstance(message, ResultMessage) and not self.ended.done():
            self.ended.set_result(message)

    def on_bad_line(self, line: bytes, error: ProtocolError) -> None:
        raise AssertionError(f"bad line {line!r}: {error}")

    def on_eof(self) -> ExitHandler:
        self.eofs += 1
        return self.exited.set_result

    def done(self) -> bool:  # an Interruptible: the work is a result to come
        return self.ended.done()

    async def result(self) -> object:
        return await asyncio.shield(self.ended)


def make(fake: FakeCLI, host: Host) -> CLIProcess:
    return CLIProcess(
        SessionOptions(transport_factory=fake.factory, control_timeout=5.0, start_timeout=5.0),
        on_message=host.on_message,
        on_bad_line=host.on_bad_line,
        on_eof=host.on_eof,
        handlers={},
    )


async def test_it_launches_the_spec_it_is_given_and_initializes_it() -> None:
    fake, host = FakeCLI(), Host()
    process = make(fake, host)
    info = await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)
    try:
        assert process.running and process.pid is None  # in memory: no pid
        assert [spec.session_id for spec in fake.launches] == ["s-1"]
        assert info["models"]  # the initialize answer
        initialize = [m["request"] for m in fake.received if m["type"] == "control_request"]
        assert initialize == [{"subtype": "initialize", "hooks": None}]
    finally:
        await process.close()
    assert not process.running and process.transport is None


async def test_a_cli_that_exits_is_reported_at_eof_then_with_its_exit_status() -> None:
    fake, host = FakeCLI([[Exit(3)]]), Host()
    process = make(fake, host)
    await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)
    await process.send(user_message("hi", session_id="s-1"))
    error = await asyncio.wait_for(host.exited, 10)
    assert host.eofs == 1 and error.exit_code == 3
    assert not process.running and process.transport is None  # reaped and let go
    await process.close()


async def test_a_request_or_a_message_to_no_cli_is_an_error_not_a_hang() -> None:
    fake, host = FakeCLI(), Host()
    process = make(fake, host)
    with pytest.raises(ControlError, match="not running"):
        await process.request("set_model")
    with pytest.raises(CLIProcessError, match="not running"):
        await process.send(user_message("hi", session_id="s-1"))
    assert fake.launches == []


async def test_an_interrupt_the_cli_answers_ends_the_work_without_a_kill() -> None:
    fake, host = FakeCLI([[Stall()]]), Host()
    process = make(fake, host)
    await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)
    try:
        await process.send(user_message("hi", session_id="s-1"))
        still, killed = await asyncio.wait_for(process.interrupt(host, grace=30.0), 10)
        assert (still, killed) == ([], False) and process.running
        assert isinstance(host.ended.result(), ResultMessage) and fake.interrupts == 1
    finally:
        await process.close()


async def test_an_interrupt_the_cli_ignores_kills_it_after_the_grace() -> None:
    fake, host = FakeCLI([[Stall(answer_interrupt=False)]]), Host()
    process = make(fake, host)
    await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)
    await process.send(user_message("hi", session_id="s-1"))
    still, killed = await asyncio.wait_for(process.interrupt(host, grace=0.2), 10)
    assert (still, killed) == ([], True)
    assert not process.running and not host.done()  # the work never ended: the CLI is gone
    error = await asyncio.wait_for(host.exited, 10)  # and its EOF is reported as ever
    assert error.exit_code == -9
    await process.close()


async def test_a_dead_process_replaced_by_a_new_one_does_not_report_its_eof() -> None:
    fake, host = FakeCLI([[result("one")]]), Host()
    process = make(fake, host)
    await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)
    old = process.transport
    await asyncio.wait_for(process.spawn(LaunchSpec(session_id="s-1")), 5)  # replaced, not stopped
    assert old is not None and process.transport is not old
    await old.kill()
    await process.send(user_message("hi", session_id="s-1"))
    await asyncio.wait_for(host.ended, 10)  # the new one answers
    assert host.eofs == 0 and process.running
    await process.close()


def test_the_process_module_knows_nothing_of_turns_or_the_session() -> None:
    imported: set[str] = set()
    for node in ast.walk(ast.parse(PROCESS.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    assert imported.isdisjoint({"turn", "session", "accounting", "permissions", "mcp"})
