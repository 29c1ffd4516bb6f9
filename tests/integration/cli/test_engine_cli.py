"""The engine (Session / Turn / McpServer) against the real ``claude`` CLI and the scripted API.

Every test drives a real CLI 2.1.3xx process through :class:`byre_jupyter.Session`, answered by
the scripted fake Messages API (``tests/conftest.py``: isolated HOME/TMPDIR, retries off). The
behaviour asserted here is the one measured in ``docs/protocol.md``.

Synchronisation is by awaiting events, results and recorded API requests; never by sleeping.
``ScriptedAPI.wait_for_request`` blocks a thread, so it runs in ``asyncio.to_thread`` (the
session's reader must keep answering the CLI's control requests meanwhile).
"""

from __future__ import annotations

import asyncio
import base64
import os
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import psutil
import pytest
from support.rig import tiny_png
from support.waiting import apoll

from byre_jupyter import CLIProcessError, ControlError, Session
from byre_jupyter.protocol import (
    AssistantMessage,
    Image,
    Message,
    StreamEvent,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from byre_jupyter.scripted import Error, Hang, Reply, ScriptedAPI, ScriptedRequest, Text, ToolUse
from byre_jupyter.session import Allow, Deny, McpServer, PermissionRequest, ToolResult, Turn

pytestmark = pytest.mark.cli

MakeSession = Callable[..., Session]

TIMEOUT = 90.0  # generous: a loaded 2-core box; a hang still fails, it does not block forever


# -- helpers ------------------------------------------------------------------------------------


async def wait_request(
    api: ScriptedAPI,
    pred: Callable[[ScriptedRequest], bool] | str | None = None,
    *,
    after: int = 0,
    timeout: float = TIMEOUT,
) -> ScriptedRequest:
    """``api.wait_for_request`` without blocking the event loop."""
    return await asyncio.to_thread(api.wait_for_request, pred, timeout, after=after)


async def result_of(turn: Turn, timeout: float = TIMEOUT) -> Any:
    return await asyncio.wait_for(turn.result(), timeout)


async def ask(session: Session, prompt: str, timeout: float = TIMEOUT, **kw: Any) -> Any:
    """``session.query`` bounded in time."""
    return await asyncio.wait_for(session.query(prompt, **kw), timeout)


async def first_event(
    turn: Turn, pred: Callable[[Message], bool], timeout: float = TIMEOUT
) -> Message:
    """The first message of ``turn`` matching ``pred`` (fails if the turn ends first)."""

    async def scan() -> Message:
        async for m in turn.events():
            if pred(m):
                return m
        raise AssertionError(f"turn ended without a matching event: {await turn.result()!r}")

    return await asyncio.wait_for(scan(), timeout)


def is_text_delta(m: Message) -> bool:
    return (
        isinstance(m, StreamEvent)
        and m.event_type == "content_block_delta"
        and m.delta.get("type") == "text_delta"
    )


def blocks_of(turn: Turn, kind: type) -> list[Any]:
    out: list[Any] = []
    for m in turn.messages:
        if isinstance(m, (AssistantMessage, UserMessage)):
            out.extend(b for b in m.content if isinstance(b, kind))
    return out


def request_texts(req: ScriptedRequest) -> str:
    """All text of every user-role message of a request (to check what history it carries)."""
    parts: list[str] = []
    for m in req.user_messages:
        content = m.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "text":
                    parts.append(str(b.get("text", "")))
    return "\n".join(parts)


def descendants(pid: int | None) -> list[psutil.Process]:
    if pid is None:
        return []
    try:
        return list(psutil.Process(pid).children(recursive=True))
    except psutil.NoSuchProcess:
        return []


def gone(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


def has_tool_result_from(name: str) -> Callable[[ScriptedRequest], bool]:
    return lambda r: any(t["tool_name"] == name for t in r.last_tool_results)


# -- 1. streaming --------------------------------------------------------------------------------


async def test_text_deltas_concatenate_to_the_result(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    answer = "The quick brown fox jumps over the lazy dog, twice: quick brown fox, lazy dog."
    api.on("stream please", Reply(Text(answer, chunk=7, delay=0.01)))
    session: Session = make_session()
    turn = await session.send("stream please")
    deltas = [m async for m in turn.events() if isinstance(m, StreamEvent) and is_text_delta(m)]
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == answer
    assert len(deltas) >= len(answer) // 7  # really streamed, in several chunks
    assert all(d.parent_tool_use_id is None for d in deltas)
    assert "".join(d.delta["text"] for d in deltas) == answer


# -- 2. Bash -------------------------------------------------------------------------------------


async def test_bash_round_trip(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("run the shell", Reply(ToolUse("Bash", {"command": "echo byre-$((6*7))"})))
    api.on(has_tool_result_from("Bash"), Reply(Text("The shell said 42.")))
    session: Session = make_session()
    turn = await session.send("run the shell")
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == "The shell said 42."

    req = await wait_request(api, has_tool_result_from("Bash"), timeout=1)
    (tool_result,) = req.last_tool_results
    assert "byre-42" in tool_result["text"] and not tool_result["is_error"]

    uses = [b for b in blocks_of(turn, ToolUseBlock) if b.name == "Bash"]
    results = blocks_of(turn, ToolResultBlock)
    assert len(uses) == 1 and uses[0].input["command"] == "echo byre-$((6*7))"
    assert [r.tool_use_id for r in results] == [uses[0].id]
    assert "byre-42" in results[0].text


# -- 3. Read of a PNG ------------------------------------------------------------------------------


async def test_read_png_gives_an_image_tool_result(
    api: ScriptedAPI, make_session: MakeSession, workdir: Path
) -> None:
    png = tiny_png(8, 8)
    (workdir / "dot.png").write_bytes(png)
    api.on("look at dot", Reply(ToolUse("Read", {"file_path": str(workdir / "dot.png")})))
    api.on(has_tool_result_from("Read"), Reply(Text("A red square.")))
    session: Session = make_session()
    turn = await session.send("look at dot.png")
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == "A red square."

    images = [
        img
        for m in turn.messages
        if isinstance(m, UserMessage)
        for tr in m.tool_results
        for img in tr.images
    ]
    assert images and images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data).startswith(b"\x89PNG")
    assert result.images and result.images[0].media_type == "image/png"
    req = await wait_request(api, has_tool_result_from("Read"), timeout=1)
    assert req.last_tool_results[0]["has_image"]


# -- 4. a user image ------------------------------------------------------------------------------


async def test_user_message_with_an_image(api: ScriptedAPI, make_session: MakeSession) -> None:
    png = tiny_png(6, 6, (10, 200, 10))
    api.on("what is this", Reply(Text("A green square.")))
    session: Session = make_session()
    result = await result_of(await session.send("what is this", images=[png]))
    assert not result.is_error, result
    assert result.text == "A green square."

    req = await wait_request(api, "what is this", timeout=1)
    last = req.last_user_message
    assert last is not None and isinstance(last["content"], list)
    images = [b for b in last["content"] if b.get("type") == "image"]
    assert len(images) == 1
    assert images[0]["source"]["media_type"] == "image/png"
    assert images[0]["source"]["data"] == base64.b64encode(png).decode()
    # the CLI sends the text with a trailing newline, plus an "[Image: source: ...]" note
    texts = [str(b.get("text", "")).strip() for b in last["content"] if b.get("type") == "text"]
    assert "what is this" in texts


# -- 5. interrupt mid-stream -----------------------------------------------------------------------


async def test_interrupt_mid_stream_keeps_history(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("tell a long story", Reply(Text("once upon a time " * 400, chunk=6, delay=0.05)))
    api.on("after the story", Reply(Text("Fine, next.")))
    session: Session = make_session()
    turn = await session.send("tell a long story")
    delta = await first_event(turn, is_text_delta)
    assert isinstance(delta, StreamEvent)
    await asyncio.wait_for(session.interrupt(), TIMEOUT)
    result = await result_of(turn, timeout=10)
    assert len(result.text) < len("once upon a time " * 400)  # it really stopped early
    assert result.interrupted and result.is_error, result
    assert result.raw is not None and result.raw.terminal_reason == "aborted_streaming"
    assert result.error is None  # a clean interrupt, not a dead process
    assert session.running

    n = len(api.requests)
    nxt = await ask(session, "after the story")
    assert not nxt.is_error and nxt.text == "Fine, next."
    req = await wait_request(api, "after the story", after=n, timeout=1)
    assert "tell a long story" in request_texts(req)
    assert delta.delta["text"] in req.assistant_text  # the partial answer stays in history


# -- 6. interrupt during a long Bash --------------------------------------------------------------


SLEEPER = "python3 -c 'import time; time.sleep(30.25)'"


async def test_interrupt_during_a_long_bash_kills_it(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("run the slow one", Reply(ToolUse("Bash", {"command": SLEEPER})))
    api.on("after the slow one", Reply(Text("Ready again.")))
    session: Session = make_session()
    turn = await session.send("run the slow one")
    await wait_request(api, "run the slow one")

    def sleeper() -> psutil.Process | None:
        for p in descendants(session.pid):
            try:
                if p.name().startswith("python") and "time.sleep(30.25)" in " ".join(p.cmdline()):
                    return p
            except psutil.NoSuchProcess:
                continue
        return None

    proc: psutil.Process = await apoll(sleeper, TIMEOUT, "the Bash python sleep to start")
    await asyncio.wait_for(session.interrupt(), TIMEOUT)
    result = await result_of(turn, timeout=10)
    assert result.interrupted and result.is_error, result
    assert result.raw is not None and result.raw.terminal_reason == "aborted_tools"
    await apoll(lambda: gone(proc), 10, "the python sleep to be killed")
    results = blocks_of(turn, ToolResultBlock)
    assert results and results[0].is_error

    nxt = await ask(session, "after the slow one")
    assert not nxt.is_error and nxt.text == "Ready again."


# -- 7. set_model ---------------------------------------------------------------------------------


async def test_set_model_on_a_running_session(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("first model", Reply(Text("one")))
    api.on("second model", Reply(Text("two")))
    session: Session = make_session()
    assert (await ask(session, "first model")).text == "one"
    first = (await wait_request(api, "first model", timeout=1)).model
    resolved = await session.set_model("sonnet")
    assert resolved and "sonnet" in resolved and resolved != first
    n = len(api.requests)
    assert (await ask(session, "second model")).text == "two"
    req = await wait_request(api, "second model", after=n, timeout=1)
    assert req.model == resolved


# -- 8. sdk MCP tool with an image ----------------------------------------------------------------


async def test_sdk_mcp_tool_returns_text_and_image(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    png = Image(tiny_png(5, 5, (0, 0, 255)), "image/png")
    calls: list[Mapping[str, Any]] = []
    server = McpServer("byre")

    @server.tool(
        "shape",
        "Draw a shape",
        {"type": "object", "properties": {"sides": {"type": "integer"}}, "required": ["sides"]},
    )
    async def shape(args: Mapping[str, Any]) -> ToolResult:
        calls.append(dict(args))
        return ToolResult.text(f"drew a {args['sides']}-gon").add_image(png)

    api.on("draw a shape", Reply(ToolUse("mcp__byre__shape", {"sides": 5})))
    api.on(has_tool_result_from("mcp__byre__shape"), Reply(Text("Drawn.")))
    session: Session = make_session(mcp_server=server)
    turn = await session.send("draw a shape")
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == "Drawn."
    assert calls == [{"sides": 5}]

    req = await wait_request(api, has_tool_result_from("mcp__byre__shape"), timeout=1)
    (tool_result,) = req.last_tool_results
    assert "drew a 5-gon" in tool_result["text"] and tool_result["has_image"]
    assert not tool_result["is_error"]

    images = [img for tr in blocks_of(turn, ToolResultBlock) for img in tr.images]
    assert images and images[0].media_type == "image/png"
    assert base64.b64decode(images[0].data) == png.data
    assert result.images == (png,)


# -- 9. Stop hook ---------------------------------------------------------------------------------


async def test_stop_hook_blocks_once(api: ScriptedAPI, make_session: MakeSession) -> None:
    inputs: list[Mapping[str, Any]] = []

    async def on_stop(hook_input: Mapping[str, Any]) -> Mapping[str, Any]:
        inputs.append(hook_input)
        if len(inputs) == 1:
            return {"decision": "block", "reason": "ALSO_SAY_GOODBYE"}
        return {}

    api.on("hello there", Reply(Text("First answer.")))
    api.on("ALSO_SAY_GOODBYE", Reply(Text("Goodbye!")))
    session: Session = make_session(hooks={"Stop": [on_stop]})
    turn = await session.send("hello there")
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == "Goodbye!"
    assert len(inputs) == 2
    assert inputs[0].get("hook_event_name") == "Stop"
    assert inputs[0].get("stop_hook_active") is False and inputs[1].get("stop_hook_active") is True
    req = await wait_request(api, "ALSO_SAY_GOODBYE", timeout=1)
    assert req.index > 0
    # one TurnResult only: the session is idle and no second result went anywhere
    assert session.turns_completed == 1 and not session.busy


# -- 10. subagent ---------------------------------------------------------------------------------


async def test_subagent_messages_carry_the_agent_tool_use_id(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    def is_sub(r: ScriptedRequest) -> bool:
        return "SUBAGENT_TASK" in r.first_user_text

    api.on("spawn a helper", Reply(ToolUse("Agent", {
        "description": "list", "prompt": "SUBAGENT_TASK: list files",
        "subagent_type": "general-purpose", "run_in_background": False,
    })))  # fmt: skip
    api.on(has_tool_result_from("Agent"), Reply(Text("The helper is done.")))
    api.on(lambda r: is_sub(r) and not r.last_tool_results,
           Reply(ToolUse("Bash", {"command": "ls -a"})))  # fmt: skip
    api.on(lambda r: is_sub(r) and bool(r.last_tool_results), Reply(Text("Listed the files.")))
    session: Session = make_session()
    turn = await session.send("spawn a helper")
    result = await result_of(turn)
    assert not result.is_error, result
    assert result.text == "The helper is done."

    (agent_use,) = [b for b in blocks_of(turn, ToolUseBlock) if b.name == "Agent"]
    nested = [m for m in turn.messages if m.parent_tool_use_id == agent_use.id]
    assert nested, "no message carried the Agent tool_use id"
    nested_uses = [
        b for m in nested if isinstance(m, AssistantMessage) for b in m.content
        if isinstance(b, ToolUseBlock)
    ]  # fmt: skip
    assert [b.name for b in nested_uses] == ["Bash"]
    assert any(isinstance(m, UserMessage) and m.tool_results for m in nested)
    assert "SUBAGENT_TASK" in (await wait_request(api, is_sub, timeout=1)).first_user_text


# -- 11. API error --------------------------------------------------------------------------------


async def test_api_error_without_retries(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("break please", Error(500, "scripted boom"))
    api.on("and now", Reply(Text("Recovered.")))
    session: Session = make_session()
    result = await ask(session, "break please")
    assert result.is_error and not result.interrupted, result
    assert "500" in result.text and "API Error" in result.text
    assert result.raw is not None and result.raw.api_error_status == 500
    assert result.error_message and "500" in result.error_message
    assert len([r for r in api.requests if "break please" in r.last_user_text]) == 1
    nxt = await ask(session, "and now")
    assert not nxt.is_error and nxt.text == "Recovered."


# -- 12. resume in a new process ------------------------------------------------------------------


async def test_resume_in_a_new_process(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("TURN_ONE", Reply(Text("reply one")))
    api.on("TURN_TWO", Reply(Text("reply two")))
    api.on("TURN_THREE", Reply(Text("reply three")))
    a: Session = make_session()
    assert (await ask(a, "TURN_ONE")).text == "reply one"
    assert (await ask(a, "TURN_TWO")).text == "reply two"
    sid = a.session_id
    await a.close()

    b: Session = make_session(resume=sid)
    n = len(api.requests)
    result = await ask(b, "TURN_THREE")
    assert not result.is_error and result.text == "reply three"
    assert result.session_id == sid and b.session_id == sid
    texts = request_texts(await wait_request(api, "TURN_THREE", after=n, timeout=1))
    assert "TURN_ONE" in texts and "TURN_TWO" in texts


# -- 13. fork at a uuid ---------------------------------------------------------------------------


async def test_fork_at_a_message_uuid(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("TURN_ONE", Reply(Text("reply one")))
    api.on("TURN_TWO", Reply(Text("reply two")))
    api.on("TURN_FORK", Reply(Text("reply fork")))
    api.on("TURN_AFTER", Reply(Text("reply after")))
    a: Session = make_session()
    one = await ask(a, "TURN_ONE")
    assert (await ask(a, "TURN_TWO")).text == "reply two"
    assert one.message_uuids

    fork = a.fork(at=one.message_uuids[-1])
    try:
        n = len(api.requests)
        forked = await ask(fork, "TURN_FORK")
        assert not forked.is_error and forked.text == "reply fork", forked
        texts = request_texts(await wait_request(api, "TURN_FORK", after=n, timeout=1))
        assert "TURN_ONE" in texts and "TURN_TWO" not in texts
        assert fork.session_id and fork.session_id != a.session_id
        assert forked.session_id == fork.session_id
    finally:
        await fork.close()

    n = len(api.requests)
    after = await ask(a, "TURN_AFTER")
    assert not after.is_error and after.session_id == a.session_id
    texts = request_texts(await wait_request(api, "TURN_AFTER", after=n, timeout=1))
    assert "TURN_ONE" in texts and "TURN_TWO" in texts and "TURN_FORK" not in texts


# -- 14. the CLI killed mid-turn ------------------------------------------------------------------


async def test_cli_killed_mid_turn_then_resumed(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("BEFORE_KILL", Reply(Text("still alive")))
    api.on("HOLD_ME", Hang())
    api.on("AFTER_KILL", Reply(Text("back again")))
    session: Session = make_session()
    assert (await ask(session, "BEFORE_KILL")).text == "still alive"
    sid, pid = session.session_id, session.pid
    assert pid is not None

    turn = await session.send("HOLD_ME")
    await wait_request(api, "HOLD_ME")
    os.killpg(pid, signal.SIGKILL)
    result = await result_of(turn, timeout=30)
    assert result.is_error, result
    assert isinstance(result.error, CLIProcessError)
    assert result.error.exit_code == -signal.SIGKILL
    assert hasattr(result.error, "stderr_tail")

    n = len(api.requests)
    nxt = await ask(session, "AFTER_KILL")
    assert not nxt.is_error and nxt.text == "back again", nxt
    assert session.pid != pid and session.session_id == sid
    texts = request_texts(await wait_request(api, "AFTER_KILL", after=n, timeout=1))
    assert "BEFORE_KILL" in texts


# -- 15. unknown control subtype ------------------------------------------------------------------


async def test_unknown_control_subtype(api: ScriptedAPI, make_session: MakeSession) -> None:
    api.on("still there", Reply(Text("Yes.")))
    session: Session = make_session()
    with pytest.raises(ControlError) as info:
        await session._request_started("no_such_subtype")
    assert info.value.error_code == "unsupported_request"
    assert "no_such_subtype" in info.value.error
    assert (await ask(session, "still there")).text == "Yes."


# -- 16. other control requests and permission prompts --------------------------------------------


async def test_context_usage_and_mcp_status(api: ScriptedAPI, make_session: MakeSession) -> None:
    session: Session = make_session()
    usage = await session.get_context_usage()
    assert isinstance(usage, Mapping) and "totalTokens" in usage
    status = await session.mcp_status()
    assert isinstance(status, Mapping)
    servers = {s["name"]: s for s in status["mcpServers"]}
    assert servers["byre"]["status"] == "connected"


@pytest.mark.parametrize("allow", [False, True], ids=["deny", "allow"])
async def test_permission_prompt(
    api: ScriptedAPI, make_session: MakeSession, workdir: Path, allow: bool
) -> None:
    target = workdir / "made.txt"
    asked: list[PermissionRequest] = []

    async def decide(request: PermissionRequest) -> Allow | Deny:
        asked.append(request)
        return Allow() if allow else Deny("HOST_SAYS_NO")

    api.on("make a file", Reply(ToolUse("Bash", {"command": f"touch {target}"})))
    api.on(has_tool_result_from("Bash"), Reply(Text("Tried.")))
    session: Session = make_session(permission_mode="default", can_use_tool=decide)
    result = await ask(session, "make a file")
    assert not result.is_error and result.text == "Tried.", result
    assert [r.tool_name for r in asked] == ["Bash"]
    assert asked[0].input.get("command") == f"touch {target}"
    (tool_result,) = (
        await wait_request(api, has_tool_result_from("Bash"), timeout=1)
    ).last_tool_results
    if allow:
        assert target.exists() and not tool_result["is_error"]
    else:
        assert not target.exists()
        assert tool_result["is_error"] and "HOST_SAYS_NO" in tool_result["text"]
        assert result.raw is not None and result.raw.permission_denials
