"""A CLI that dies during the conversation's *first* turn: the next turn must still run.

Measured with 2.1.328: after the CLI was killed while its first API request was pending, a
restart with the same ``--session-id`` is refused ("Session ID … is already in use": the dead
process's entry under ``~/.claude/sessions/`` remains) and ``--resume`` finds no conversation
(nothing was recorded yet). The next turn has to start a new conversation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.waiting import apoll

from byre_jupyter import CLIProcessError, Session
from byre_jupyter.protocol import AssistantMessage
from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse
from byre_jupyter.session import Deny, PermissionRequest

pytestmark = pytest.mark.cli

SLEEPER = "python3 -c 'import time; time.sleep(30.5)'"


async def test_a_cli_killed_before_its_first_answer_leaves_a_usable_session(
    api: ScriptedAPI, make_session
) -> None:
    api.on("hang please", Hang())
    api.on("hello again", Reply(Text("hi back")))
    session: Session = make_session()
    turn = await session.send("hang please")
    await asyncio.to_thread(api.wait_for_request, "hang please")
    transport = session._process.transport
    assert transport is not None
    await transport.kill()  # the CLI dies before its first result
    first = await asyncio.wait_for(turn.result(), 30)
    assert first.is_error and isinstance(first.error, CLIProcessError)
    second = await asyncio.wait_for(session.query("hello again"), 60)
    assert not second.is_error, second.error_message
    assert second.text == "hi back"
    assert second.session_id == session.session_id != first.session_id


def conversation_files(home: Path, session_id: str | None) -> list[Path]:
    """The CLI's own record of a conversation (``~/.claude/projects/<cwd>/<id>.jsonl``)."""
    return list((home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))


def has_assistant_line(files: list[Path]) -> bool:
    return any('"type":"assistant"' in f.read_text() for f in files)


async def kill_during_the_first_turn(
    api: ScriptedAPI, session: Session, home: Path, *, recorded: bool
) -> str | None:
    """Start a turn whose Bash tool runs long, kill the CLI once its first answer came (and,
    with ``recorded``, once the CLI has written it); returns the conversation's id."""
    api.on("run the slow one", Reply(ToolUse("Bash", {"command": SLEEPER})))
    api.on("after the kill", Reply(Text("still here")))
    turn = await session.send("run the slow one")
    first_id = session.session_id
    async for message in turn.events():
        if isinstance(message, AssistantMessage) and message.uuid:
            break
    if recorded:  # the CLI may emit the line before writing it (2.1.328): wait for the file
        await apoll(
            lambda: has_assistant_line(conversation_files(home, first_id)),
            30,
            "the CLI to record its first answer",
        )
    transport = session._process.transport
    assert transport is not None
    await transport.kill()  # the CLI dies while its Bash tool runs
    first = await asyncio.wait_for(turn.result(), 30)
    assert isinstance(first.error, CLIProcessError)
    return first_id


async def test_a_cli_killed_after_it_recorded_its_first_answer_is_resumed(
    api: ScriptedAPI, make_session, tmp_path: Path
) -> None:
    """Once the CLI has written the answer to its conversation file, --resume keeps it."""
    session: Session = make_session()
    first_id = await kill_during_the_first_turn(api, session, tmp_path / "home", recorded=True)
    second = await asyncio.wait_for(session.query("after the kill"), 60)
    assert not second.is_error, second.error_message
    assert second.session_id == first_id
    request = api.requests[-1]
    assert "run the slow one" in str(request.user_messages), "the resumed CLI lost the history"


async def test_a_conversation_the_cli_never_recorded_goes_on_as_a_new_one_and_says_so(
    api: ScriptedAPI, make_session, tmp_path: Path
) -> None:
    """CLI 2.1.328 can emit its first answer before saving it; killed right then, ``--resume``
    finds nothing ("No conversation found"). Made deterministic here by removing the record:
    the next turn must still answer, in a new conversation, with a notice that history was lost
    (never a session that fails every later turn)."""
    api.on("and once more", Reply(Text("again")))
    session: Session = make_session()
    first_id = await kill_during_the_first_turn(api, session, tmp_path / "home", recorded=False)
    for path in conversation_files(tmp_path / "home", first_id):
        path.unlink()  # what a kill before the CLI's write leaves: no record

    second = await asyncio.wait_for(session.query("after the kill"), 60)
    assert not second.is_error, second.error_message
    assert second.text == "still here"
    assert second.session_id != first_id
    assert any("could not be resumed" in n for n in session.notices), session.notices
    third = await asyncio.wait_for(session.query("and once more"), 60)
    assert third.text == "again" and third.session_id == second.session_id
    assert "after the kill" in str(api.requests[-1].user_messages)  # the new one goes on


async def test_leaving_bypass_launches_the_cli_again_and_it_asks(
    api: ScriptedAPI, make_session, tmp_path: Path
) -> None:
    """A CLI launched in bypassPermissions has no permission prompt tool, so in any mode it
    would never ask: leaving bypass launches it again in the asked mode, the conversation
    going on (docs/security.md, "How modes switch"). One that was sent no turn yet is launched
    again as it was (the same --session-id)."""
    made = tmp_path / "work" / "made_by_bash.txt"
    api.on("first", Reply(Text("one")))
    api.on("make", Reply(ToolUse("Bash", {"command": f"touch {made}"})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("after the tool")))
    asked: list[str] = []

    async def deny(request: PermissionRequest) -> Deny:
        asked.append(request.tool_name)
        return Deny("not now")

    session: Session = make_session(can_use_tool=deny)  # bypassPermissions
    assert not (await asyncio.wait_for(session.query("first"), 60)).is_error
    bypassed = session.pid
    await asyncio.wait_for(session.set_permission_mode("default"), 60)
    result = await asyncio.wait_for(session.query("make a file"), 60)
    assert result.text == "after the tool" and asked == ["Bash"] and not made.exists()
    assert session.pid != bypassed
    assert "first" in str(api.requests[-1].body["messages"])  # the same conversation

    unused: Session = make_session(can_use_tool=deny)
    await asyncio.wait_for(unused.start(), 60)
    first_id = unused.session_id
    await asyncio.wait_for(unused.set_permission_mode("default"), 60)
    again = await asyncio.wait_for(unused.query("first"), 60)
    assert not again.is_error, again.error_message
    assert unused.session_id == first_id
