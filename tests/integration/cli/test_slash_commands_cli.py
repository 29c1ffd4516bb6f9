"""Slash commands, compaction and the context meter with the real CLI 2.1.328 and the
scripted API, the way a notebook cell shows a turn (its TurnView fed every message, the meter
read from the session's gauge, as ``app/turns.py`` does).

One CLI process runs the whole conversation (each turn is a second of a shared CPU): a turn
whose API message read 48,000 tokens; ``/greet Bob``, a project command with an argument;
``/context``; ``/compact``; then a turn whose figures fill the window, after which the CLI
compacts by itself before the next request. No environment variable was needed for the
automatic compaction: the CLI compacts when the last message's usage is near the model's
window (1M for the scripted model); ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` exists in the CLI
but is not used here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from byre_jupyter.errors import ByreError
from byre_jupyter.protocol import parse_context_usage
from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.session import Session
from byre_jupyter.ui.blocks import NoticeView
from byre_jupyter.ui.format import context_meter, footer_parts
from byre_jupyter.ui.record import turn_markdown
from byre_jupyter.ui.viewmodel import TurnView

pytestmark = [pytest.mark.cli]

#: What the pinned CLI offers, as tests/unit/test_claude_code_doc.py reads it against
#: docs/claude-code.md; this test rewrites it when the CLI's lists change.
RECORDED_INIT = Path(__file__).resolve().parents[2] / "support" / "cli_init.json"


def offered(session: Session) -> dict[str, object]:
    """The built-in commands and skills the CLI lists (the test's own project command is not
    one of them)."""
    init = session.last_init
    assert init is not None
    builtin = {c.name for c in session.commands if c.builtin}
    return {
        "claude_code_version": init.claude_code_version,
        "slash_commands": sorted(n for n in init.slash_commands if n in builtin),
        "skills": sorted(init.skills),
        "terminal_slash_commands": sorted(init.raw.get("terminal_slash_commands") or []),
    }


async def cell(session: Session, prompt: str) -> TurnView:
    """One ``%%claude`` cell's view of a turn."""
    view = TurnView(session.name, prompt)
    turn = await session.send(prompt)
    async for message in turn.events():
        view.apply(message)
        view.set_context(session.context.fill)
    result = await turn.result()
    view.settle(result)
    view.message_uuids = list(result.message_uuids)
    view.set_context(session.context.fill)
    view.finish()
    return view


def notices(view: TurnView) -> list[str]:
    return [b.text for b in view.blocks if isinstance(b, NoticeView)]


async def test_commands_compaction_and_the_meter_with_the_real_cli(
    make_session: Callable[..., Session], api: ScriptedAPI, tmp_path: Path
) -> None:
    commands = tmp_path / "work" / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "greet.md").write_text(
        "---\ndescription: Greet someone\n---\nSay hello to $ARGUMENTS, in French.\n"
    )
    api.default = Reply(Text("fine"), usage={"input_tokens": 48_000, "output_tokens": 10})
    api.on(lambda req: req.is_compaction, Reply(Text("<summary>s</summary>")))
    session = make_session(name="long")

    first = await cell(session, "hello")
    # The meter's source: the API message's prompt, and the window the CLI names for it.
    fill = session.context.fill
    assert fill.window is not None and fill.window >= 200_000
    assert 48_000 <= fill.used < 48_000 + 10 + 1  # the prompt, and the output the line carried
    assert context_meter(first.context) == context_meter(fill)
    # The CLI's own count (%claude context's breakdown) agrees with the gauge.
    counted = parse_context_usage(await session.get_context_usage())
    assert counted.window == fill.window and abs(counted.total - fill.used) <= 10, counted
    assert any(c.name == "Messages" for c in counted.categories)

    # %claude commands' source: every command init lists, with the project's description.
    assert session.last_init is not None
    names = {c.name for c in session.commands}
    assert set(session.last_init.slash_commands) <= names
    (greet,) = [c for c in session.commands if c.name == "greet"]
    assert greet.description.startswith("Greet someone") and not greet.builtin
    recorded = json.loads(RECORDED_INIT.read_text()) if RECORDED_INIT.exists() else None
    if recorded != offered(session):
        RECORDED_INIT.write_text(json.dumps(offered(session), indent=1) + "\n")
        pytest.fail(
            f"the CLI's lists changed: {RECORDED_INIT} rewritten, check docs/claude-code.md"
        )

    greeted = await cell(session, "/greet Bob")
    assert "Say hello to Bob, in French." in api.requests[-1].last_user_text
    assert greeted.local_command is None  # a prompt for the model, as the user wrote it

    table = await cell(session, "/context")
    assert table.local_command == "context"
    assert "Context Usage" in turn_markdown(table)
    assert not any("$" in part for part in footer_parts(table))  # no model was asked

    before = session.context.fill.used
    compacted = await cell(session, "/compact")
    (text,) = notices(compacted)
    assert text.startswith("compacted: ") and text.endswith(" tokens"), text
    assert session.context.fill.used < before
    assert text in turn_markdown(compacted)  # the saved record keeps it
    assert any(r.is_compaction for r in api.requests)  # the summary was the script's

    api.default = Reply(Text("full"), usage={"input_tokens": 990_000, "output_tokens": 10})
    await cell(session, "read everything")
    api.default = Reply(Text("after"), usage={"input_tokens": 1_000, "output_tokens": 10})
    auto = await cell(session, "go on")
    assert any(n.startswith("compacted automatically") for n in notices(auto)), notices(auto)

    # Branching across a compaction (what re-running an earlier cell does): the CLI resumes
    # at an answer after the newest compaction, but no longer at one before it: it keeps only
    # the summary from there on ("No message found with message.uuid of: ..."), so the tree
    # refuses such a move in words (tests/unit/app/test_conversation_tree.py).
    after = session.fork(at=auto.message_uuids[-1], name="after")
    try:
        await cell(after, "again")
        texts = " ".join(str(m.get("content")) for m in api.requests[-1].user_messages)
        assert "again" in texts and "go on" in texts
    finally:
        await after.close()
    before_compaction = session.fork(at=first.message_uuids[-1], name="before")
    try:
        with pytest.raises(ByreError, match="No message found"):
            await before_compaction.start()
    finally:
        await before_compaction.close()
