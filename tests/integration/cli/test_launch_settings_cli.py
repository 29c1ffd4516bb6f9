"""The launch settings against the real CLI (2.1.328) and the scripted Messages API: effort
reaches the API request (``output_config.effort``) from the launch, from a switch of a running
session and from a ``/effort`` the user types; the spending cap stops a turn, and the cell's
words say so; the other flags are taken by the CLI (it starts, and does what each says).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from byre_jupyter.app.config import Claude, launch_settings
from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.session import Session
from byre_jupyter.ui.viewmodel import TurnView, notebook_error_text

pytestmark = [pytest.mark.cli]


def efforts(api: ScriptedAPI) -> list[object]:
    """The effort of each streamed request the API got, in order."""
    return [
        (r.body.get("output_config") or {}).get("effort")
        for r in api.requests
        if r.body.get("stream")
    ]


async def test_effort_reaches_the_api_from_the_launch_a_switch_and_a_typed_command(
    make_session: Callable[..., Session], api: ScriptedAPI
) -> None:
    api.default = Reply(Text("ok"))
    settings = launch_settings(Claude(effort="low"))  # %config Claude.effort = "low"
    session = make_session(effort=settings["effort"])
    await session.query("one")
    await session.set_effort("xhigh")  # the header's menu, -e, or the trait changed
    await session.query("two")
    typed = await session.query("/effort high")  # a local command: no API request
    assert not typed.is_error and session.effort == "high"
    await session.query("three")
    assert efforts(api) == ["low", "xhigh", "high"]
    # A fork (a re-run cell) and a restart launch with what the session has now.
    fork = session.fork(at=typed.message_uuids[-1] if typed.message_uuids else None)
    assert fork.options.effort == "high"
    await session.set_effort("default")
    await session.query("four")
    assert efforts(api)[-1] == "medium"  # the model's own default, 2.1.328's opus


async def test_the_spending_cap_stops_the_turn_and_says_so(
    make_session: Callable[..., Session], api: ScriptedAPI
) -> None:
    """--max-budget-usd in stream-json mode (its --help says "only works with --print"; it works
    without): the turn that crosses the cap ends with ``error_max_budget_usd``, its answer kept,
    and the cell's error says what happened instead of repeating the answer; later turns stop
    without a request. The cap counts what one CLI process spent: `%claude resume` (a new CLI
    for the conversation) goes on, under a higher cap or the same one."""
    api.default = Reply(Text("PRICEY answer"), usage={"input_tokens": 1000, "output_tokens": 100})
    capped = make_session(max_budget_usd=0.01)  # about $0.006 a turn
    assert not (await capped.query("one")).is_error
    crossed = await capped.query("two")
    assert crossed.is_error and crossed.raw is not None and crossed.raw.budget_exhausted
    assert crossed.text == "PRICEY answer"  # what it answered before the cap is kept
    words = notebook_error_text(crossed.error_message or "")
    assert "spending cap ($0.01) was reached" in words and "Claude.max_budget_usd" in words
    assert "PRICEY" not in words
    view = TurnView("default", "two")
    assert crossed.raw is not None
    view.apply(crossed.raw)
    notices = [b.text for b in view.walk() if getattr(b, "notice_kind", None) == "error"]
    assert notices == [words]
    requests = len(api.requests)
    again = await capped.query("three")
    assert again.is_error and again.raw is not None and again.raw.budget_exhausted
    assert len(api.requests) == requests  # stopped before asking the API
    await capped.close()

    raised = make_session(resume=capped.session_id, max_budget_usd=1.0)
    assert not (await raised.query("four")).is_error
    await raised.close()
    same = make_session(resume=capped.session_id, max_budget_usd=0.01)
    assert not (await same.query("five")).is_error  # the new process counts from zero
    assert (await same.query("six")).is_error


async def test_the_other_launch_settings_are_taken_by_the_cli(
    make_session: Callable[..., Session], api: ScriptedAPI, tmp_path: Path
) -> None:
    api.default = Reply(Text("ok"))
    extra = tmp_path / "more data"
    extra.mkdir()
    session = make_session(
        add_dirs=(str(extra),),
        allowed_tools=("Bash(git *)", "Read"),
        disallowed_tools=("Write",),
        agents={"reviewer": {"description": "Reviews code SUBAGENT", "prompt": "Review."}},
        fallback_model="sonnet",
        plugin_dirs=(str(tmp_path / "no plugins here"),),
    )
    assert not (await session.query("hello")).is_error
    init = session.last_init
    assert init is not None
    assert "reviewer" in init.raw.get("agents", [])
    assert "Write" not in init.raw.get("tools", []) and "Read" in init.raw.get("tools", [])
    body = json.dumps(api.requests[-1].body)
    assert str(extra) in body  # the model is told it may work there
    assert "Reviews code SUBAGENT" in body
