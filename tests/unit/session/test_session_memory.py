"""The session and its control channel against an in-process scripted CLI (no processes).

The fast tier: what the real CLI does here is tested against it in
tests/integration/cli/test_session_turns.py and tests/integration/cli/test_engine_cli.py; these
pin the host's side of each exchange (docs/protocol.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import pytest
from support.memory_cli import Ask, Exit, FakeCLI, Item, Stall, assistant, result, text_delta

from byre_jupyter import CLIProcessError, ControlError, Session
from byre_jupyter.errors import LineTooLongError, ProtocolError
from byre_jupyter.session import Allow, Deny, McpServer, PermissionRequest

MakeSession = Callable[..., tuple[Session, FakeCLI]]


@pytest.fixture
async def make() -> AsyncIterator[MakeSession]:
    sessions: list[Session] = []

    def build(turns: list[list[Item]] = (), **options: Any) -> tuple[Session, FakeCLI]:  # type: ignore[assignment]
        fake = FakeCLI(turns)
        session = Session("mem", transport_factory=fake.factory, **options)
        sessions.append(session)
        return session, fake

    yield build
    for session in sessions:
        await asyncio.wait_for(session.close(), 5)


def user_lines(fake: FakeCLI) -> list[dict[str, Any]]:
    return [m for m in fake.received if m.get("type") == "user"]


async def test_a_turn_runs_and_is_accounted(make: MakeSession) -> None:
    session, fake = make([[text_delta("he"), assistant("hello", uuid="u1")]])
    result = await asyncio.wait_for(session.query("hi"), 5)
    assert (result.text, result.is_error, result.message_uuids) == ("hello", False, ("u1",))
    assert result.session_id == session.session_id == fake.launches[0].session_id
    assert session.turns_completed == 1 and session.total_cost_usd == pytest.approx(0.01)
    assert [m["message"]["content"] for m in user_lines(fake)] == ["hi"]
    assert session.models == ({"value": "default"}, {"value": "sonnet"})


async def test_interrupt_ends_the_running_turn_and_the_queued_one_runs(make: MakeSession) -> None:
    session, fake = make([[assistant("partial"), Stall()], [assistant("second")]])
    first = await session.send("one")
    second = await session.send("two")
    async for message in first.events():
        if message.type == "assistant":
            break
    assert await asyncio.wait_for(session.interrupt(), 5) == [second.id]
    one = await asyncio.wait_for(first.result(), 5)
    assert one.interrupted and one.is_error and one.error is None
    assert (await asyncio.wait_for(second.result(), 5)).text == "second"
    assert fake.interrupts == 1 and len(fake.launches) == 1  # graceful: same process


async def test_cancel_of_a_queued_turn_never_sends_it(make: MakeSession) -> None:
    session, fake = make([[assistant("a"), Stall()], [assistant("b")], [assistant("c")]])
    first = await session.send("one")
    second = await session.send("two")
    third = await session.send("three")
    async for _ in first.events():
        break  # first is running, the others queued
    await second.cancel()
    withdrawn = await asyncio.wait_for(second.result(), 5)
    assert withdrawn.interrupted and not first.done()
    await first.cancel()
    assert (await asyncio.wait_for(first.result(), 5)).interrupted
    assert (await asyncio.wait_for(third.result(), 5)).text == "b"  # the script's next turn
    assert [m["message"]["content"] for m in user_lines(fake)] == ["one", "three"]


async def test_set_model_and_an_unknown_host_request(make: MakeSession) -> None:
    session, _ = make()
    await session.start()
    assert await session.set_model("sonnet") == "sonnet"
    with pytest.raises(ControlError, match="unsupported: mcp_status"):
        await session.mcp_status()


async def test_an_unknown_cli_request_gets_an_error_answer_and_the_turn_goes_on(
    make: MakeSession,
) -> None:
    session, fake = make([[Ask("no_such_request"), assistant("still here")]])
    assert (await asyncio.wait_for(session.query("go"), 5)).text == "still here"
    assert fake.answers[0]["subtype"] == "error"
    assert "unsupported" in fake.answers[0]["error"]


CAN_USE = Ask("can_use_tool", {"tool_name": "Bash", "input": {"command": "ls"}})


async def test_can_use_tool_the_turns_own_callback_answers(make: MakeSession) -> None:
    asked: list[PermissionRequest] = []

    async def allow(request: PermissionRequest) -> Allow | Deny:
        asked.append(request)
        return Allow(updated_input={"command": "ls -a"})

    session, fake = make([[CAN_USE, assistant("done")], [CAN_USE, assistant("again")]])
    turn = await session.send("go", can_use_tool=allow)
    await asyncio.wait_for(turn.result(), 5)
    assert [r.tool_name for r in asked] == ["Bash"]
    allowed = {"behavior": "allow", "updatedInput": {"command": "ls -a"}}
    assert fake.answers[0]["response"] == allowed
    # Without a per-turn callback the session's default policy (no approver) denies, saying how.
    await asyncio.wait_for(session.query("go"), 5)
    assert fake.answers[1]["response"]["behavior"] == "deny"
    assert "permission_mode" in fake.answers[1]["response"]["message"]
    assert len(asked) == 1


async def test_mcp_message_reaches_the_in_process_server(make: MakeSession) -> None:
    server = McpServer("byre")

    @server.tool("echo", "echo", {"type": "object"})
    async def echo(arguments: Mapping[str, Any]) -> str:
        return f"echo {arguments.get('x')}"

    call = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"x": 1}},
    }
    session, fake = make(
        [
            [
                Ask("mcp_message", {"server_name": "byre", "message": call}),
                Ask("mcp_message", {"server_name": "other", "message": call}),
            ]
        ],
        mcp_server=server,
    )
    await asyncio.wait_for(session.query("go"), 5)
    reply = fake.answers[0]["response"]["mcp_response"]
    assert reply["id"] == 7 and reply["result"]["content"][0]["text"] == "echo 1"
    assert fake.answers[1]["subtype"] == "error"
    assert "unknown MCP server" in fake.answers[1]["error"]


async def test_hooks_are_registered_at_initialize_and_called_by_id(make: MakeSession) -> None:
    seen: list[Mapping[str, Any]] = []

    async def hook(hook_input: Mapping[str, Any]) -> Mapping[str, Any]:
        seen.append(hook_input)
        return {"continue": True}

    session, fake = make(
        [
            [
                Ask("hook_callback", {"callback_id": "hook_0", "input": {"tool_name": "Bash"}}),
                Ask("hook_callback", {"callback_id": "hook_9", "input": {}}),
            ]
        ],
        hooks={"PreToolUse": [hook]},
    )
    await asyncio.wait_for(session.query("go"), 5)
    init = next(m for m in fake.received if m.get("request", {}).get("subtype") == "initialize")
    assert init["request"]["hooks"] == {
        "PreToolUse": [{"matcher": None, "hookCallbackIds": ["hook_0"]}]
    }
    assert seen == [{"tool_name": "Bash"}]
    assert fake.answers[0]["response"] == {"continue": True}
    assert fake.answers[1]["subtype"] == "error"


async def test_bad_lines_are_reported_and_the_turn_completes(make: MakeSession) -> None:
    bad: list[tuple[bytes, ProtocolError]] = []
    session, _ = make(
        [
            [
                b"npm WARN something\n",
                b'{"a":"\xff"}\n',
                b"[1, 2]\n",
                b"x" * 5000 + b"\n",
                assistant("ok"),
            ]
        ],
        on_bad_line=lambda line, error: bad.append((line, error)),
        max_line_bytes=4096,
    )
    assert (await asyncio.wait_for(session.query("go"), 5)).text == "ok"
    assert [type(e) for _, e in bad] == [
        ProtocolError,
        ProtocolError,
        ProtocolError,
        LineTooLongError,
    ]
    assert b"npm WARN" in bad[0][0] and "not JSON" in str(bad[0][1])
    assert "not a JSON object" in str(bad[2][1])
    assert len(session.bad_lines) == 4


async def test_a_cli_that_ignores_interrupt_is_killed_and_the_next_turn_resumes(
    make: MakeSession,
) -> None:
    session, fake = make(
        [[assistant("first")], [Stall(answer_interrupt=False)], [assistant("back")]],
        interrupt_grace=0.2,
        control_timeout=0.1,
    )
    await asyncio.wait_for(session.query("first"), 5)
    turn = await session.send("hang")
    async for _ in turn.events():
        break  # the system/init line: the turn runs
    await asyncio.wait_for(session.interrupt(), 5)
    stopped = await asyncio.wait_for(turn.result(), 5)
    assert stopped.interrupted and isinstance(stopped.error, CLIProcessError)
    assert (await asyncio.wait_for(session.query("again"), 5)).text == "back"
    assert len(fake.launches) == 2
    assert fake.launches[1].resume == session.session_id == fake.launches[0].session_id


async def test_a_cli_that_exits_mid_turn_fails_the_turn_and_restarts(make: MakeSession) -> None:
    session, fake = make(
        [[assistant("first")], [assistant("before"), Exit(3)], [assistant("after")]]
    )
    await asyncio.wait_for(session.query("first"), 5)
    died = await asyncio.wait_for(session.query("one"), 5)
    assert died.is_error and isinstance(died.error, CLIProcessError)
    assert died.error.exit_code == 3
    assert (await asyncio.wait_for(session.query("two"), 5)).text == "after"
    assert session.restarts == 1 and fake.launches[1].resume == session.session_id


async def test_a_cli_that_dies_before_its_first_answer_starts_a_new_conversation(
    make: MakeSession,
) -> None:
    """Neither --session-id again nor --resume work then
    (tests/integration/cli/test_session_restart_cli.py)."""
    session, fake = make([[Exit(3)], [assistant("after")]])
    first_id = session.session_id
    died = await asyncio.wait_for(session.query("one"), 5)
    assert isinstance(died.error, CLIProcessError)
    assert (await asyncio.wait_for(session.query("two"), 5)).text == "after"
    assert fake.launches[1].resume is None
    assert fake.launches[1].session_id == session.session_id != first_id


async def test_a_cli_that_dies_after_an_answer_in_the_first_turn_is_resumed(
    make: MakeSession,
) -> None:
    session, fake = make([[assistant("before", uuid="a1"), Exit(3)], [assistant("after")]])
    first_id = session.session_id
    died = await asyncio.wait_for(session.query("one"), 5)
    assert isinstance(died.error, CLIProcessError)
    assert (await asyncio.wait_for(session.query("two"), 5)).text == "after"
    assert fake.launches[1].resume == first_id == session.session_id


# -- effort: the launch flag, the running CLI, and a `/effort` the user types ----------------

#: What CLI 2.1.328 answers a `/effort` prompt (no API request: the command runs locally).
SET_HIGH = "Set effort level to high (this session only): Comprehensive implementation with ..."
SET_AUTO = "Effort level set to auto (this session only)"
UNKNOWN = "Unknown option: bogus. Options: low, medium, high, xhigh, max, auto, ultracode"


async def test_a_typed_effort_command_is_what_the_session_and_its_forks_use(
    make: MakeSession,
) -> None:
    """`/effort high` typed as a prompt switches the CLI; the session learns it from the
    CLI's answer, so the header, `%claude sessions`, a restart and a fork all launch with it;
    an answer that set nothing (unknown option, usage) changes nothing."""
    session, fake = make(
        [[result(SET_HIGH)], [result(UNKNOWN)], [assistant("a", uuid="u1")], [result(SET_AUTO)]],
        effort="low",
    )
    assert fake.launches == [] and session.effort == "low"
    await asyncio.wait_for(session.query("/effort high"), 5)
    assert session.effort == "high"
    await asyncio.wait_for(session.query("/effort bogus"), 5)
    assert session.effort == "high"
    await asyncio.wait_for(session.query("go"), 5)
    assert session.fork(at="u1").options.effort == "high"
    assert session._launch_spec().effort == "high"  # a restart launches with --effort=high
    await asyncio.wait_for(session.query("/effort auto"), 5)
    assert session.effort is None  # the model's default
    assert fake.launches[0].effort == "low"


async def test_a_prompt_that_only_mentions_effort_changes_nothing(make: MakeSession) -> None:
    session, _ = make([[assistant(SET_HIGH)]], effort="medium")
    await asyncio.wait_for(session.query("please explain /effort high"), 5)
    assert session.effort == "medium"


async def test_set_effort_switches_the_running_cli_and_later_launches(make: MakeSession) -> None:
    session, fake = make([[assistant("a")]])
    assert await session.set_effort("xhigh") == "xhigh"  # not started: for the launch
    await asyncio.wait_for(session.query("go"), 5)
    assert fake.launches[0].effort == "xhigh" and fake.flag_settings == {}
    assert await session.set_effort("MAX") == "max"
    assert fake.flag_settings == {"effortLevel": "max"}
    assert await session.set_effort("default") is None
    assert fake.flag_settings == {"effortLevel": None}  # null: the model's default
    with pytest.raises(ValueError, match="low, medium"):
        await session.set_effort("turbo")
    assert session.effort is None
