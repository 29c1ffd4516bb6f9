"""A permission-mode switch is in force at once (docs/security.md, "How modes switch"), over
MemoryTransport: the session's mode changes when the user asks, a launch queued right behind
the switch uses it, no turn is sent to a CLI still in the old mode (one that refuses or does
not answer the switch, or was launched in bypassPermissions and so never asks, is launched
again in the asked mode), and byre's own decisions read the new mode even while the CLI's
lags. The same with the real CLI in a real kernel:
tests/integration/kernel/test_permissions_kernel.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.memory_cli import Ask, FakeCLI, assistant

from byre_jupyter.app.config import Claude
from byre_jupyter.app.credentials import credentials_hook
from byre_jupyter.app.extension import ClaudeExtension
from byre_jupyter.errors import ControlError
from byre_jupyter.protocol import PERMISSION_MODES, PermissionMode
from byre_jupyter.session import Decision, Deny, PermissionRequest, Session
from byre_jupyter.ui.live import PERMISSION_HELP

BASH = Ask("can_use_tool", {"tool_name": "Bash", "input": {"command": "touch made"}})


class Asked:
    """A can_use_tool that denies and keeps what it was asked."""

    def __init__(self) -> None:
        self.tools: list[str] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.tools.append(request.tool_name)
        return Deny("not now")


def bypass_session(fake: FakeCLI, **options: Any) -> Session:
    options.setdefault("can_use_tool", Asked())
    return Session(
        permission_mode="bypassPermissions",
        env={"IS_SANDBOX": "1"},  # as root the CLI takes bypass only with it
        transport_factory=fake.factory,
        **options,
    )


async def test_a_turn_queued_right_behind_leaving_bypass_runs_in_a_cli_that_asks() -> None:
    fake = FakeCLI([[assistant("one")], [BASH, assistant("two")]])
    asked = Asked()
    session = bypass_session(fake, can_use_tool=asked)
    await session.query("one")
    switching = asyncio.ensure_future(session.set_permission_mode("default"))
    turn = await session.send("two")  # Shift+Enter right behind the switch
    assert (await turn.result()).text == "two"
    await switching
    # Launched in bypass, the CLI sends no permission prompt in any mode: it is launched again
    # in default, continuing the conversation, before the turn is sent.
    assert [spec.permission_mode for spec in fake.launches] == ["bypassPermissions", "default"]
    assert fake.launches[1].resume == session.session_id
    assert asked.tools == ["Bash"]
    await session.close()


@pytest.mark.parametrize("answer", ["error", "none"])
async def test_a_cli_that_refuses_or_never_answers_the_switch_is_launched_in_the_asked_mode(
    answer: str,
) -> None:
    fake = FakeCLI([[assistant("one")], [assistant("two")]])
    session = Session(
        permission_mode="acceptEdits", transport_factory=fake.factory, control_timeout=0.2
    )
    await session.query("one")
    fake.mode_answer = answer
    switching = asyncio.ensure_future(session.set_permission_mode("default"))
    assert (await session.query("two")).text == "two"
    await switching
    assert session.permission_mode == "default"
    assert [spec.permission_mode for spec in fake.launches] == ["acceptEdits", "default"]
    await session.close()


@pytest.mark.parametrize("looser", ["bypassPermissions", "auto"])
async def test_a_refused_switch_to_a_mode_a_policy_turns_off_is_undone(
    looser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI refuses bypassPermissions under a policy that turns it off (bypass_disabled):
    launched again in it, it would quietly run in its own mode while byre answered its prompts
    by the looser one. The session goes back to the CLI's mode and the caller hears why."""
    monkeypatch.setenv("IS_SANDBOX", "1")  # as root, bypassPermissions needs it
    fake = FakeCLI([[assistant("one")], [assistant("two")]])
    session = Session(permission_mode="default", transport_factory=fake.factory)
    await session.query("one")
    fake.mode_answer = "error"
    with pytest.raises(ControlError):
        await session.set_permission_mode(looser)
    assert session.permission_mode == "default"
    assert (await session.query("two")).text == "two"
    assert [spec.permission_mode for spec in fake.launches] == ["default"]  # not launched again
    await session.close()


async def test_an_answered_switch_keeps_the_cli_and_comes_before_the_next_turn() -> None:
    fake = FakeCLI([[assistant("one")], [assistant("two")]])
    session = Session(permission_mode="acceptEdits", transport_factory=fake.factory)
    await session.query("one")
    session.switch_permission_mode("default")
    assert (await session.query("two")).text == "two"
    assert fake.modes == ["acceptEdits", "default"] and len(fake.launches) == 1
    sent = [m.get("type") for m in fake.received if m.get("type") != "control_response"]
    requests = [m["request"]["subtype"] for m in fake.received if m["type"] == "control_request"]
    assert requests == ["initialize", "set_permission_mode"]
    assert sent.index("user", sent.index("user") + 1) > sent.index("control_request", 1)
    await session.close()


async def test_the_hooks_and_the_policy_read_the_mode_in_force_not_the_clis() -> None:
    # The CLI's hook input still says bypassPermissions (its mode lags): the credentials hook
    # asks all the same, as the mode in force is default.
    lagging = {"permission_mode": "bypassPermissions", "hook_event_name": "PreToolUse"}
    read_env = {**lagging, "tool_name": "Read", "tool_input": {"file_path": ".env"}}
    hook = Ask("hook_callback", {"callback_id": "hook_0", "input": read_env})
    fake = FakeCLI([[assistant("one")], [hook, assistant("two")]])
    session = bypass_session(fake, hooks={"PreToolUse": [credentials_hook()]})
    await session.query("one")
    switching = asyncio.ensure_future(session.set_permission_mode("default"))
    await session.query("two")
    await switching
    (answer,) = fake.answers
    decision = answer["response"]["hookSpecificOutput"]["permissionDecision"]
    assert decision == "ask"
    await session.close()


async def test_the_default_policy_follows_the_switch_at_once() -> None:
    fake = FakeCLI()
    session = bypass_session(fake, can_use_tool=None)
    await session.start()
    session.switch_permission_mode("default")  # no await: in force before the CLI hears it
    decision = await session.can_use_tool(PermissionRequest.from_request({"tool_name": "Bash"}))
    assert isinstance(decision, Deny)
    await session.close()


def test_a_word_that_is_no_mode_is_refused_and_the_mode_stays() -> None:
    session = Session(permission_mode="plan")
    with pytest.raises(Exception, match="no permission mode 'yolo'") as caught:
        session.switch_permission_mode("yolo")
    assert type(caught.value).__name__ == "ByreError"
    assert session.permission_mode == "plan"


def test_the_modes_are_listed_once_and_the_help_menu_and_readme_read_them() -> None:
    assert tuple(mode.value for mode in PermissionMode) == PERMISSION_MODES
    assert f"{PermissionMode.BYPASS}" == str(PermissionMode.BYPASS) == "bypassPermissions"
    trait = Claude.class_traits()["permission_mode"]
    assert tuple(trait.values) == PERMISSION_MODES
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    (row,) = [line for line in readme.splitlines() if line.startswith("| `permission_mode` |")]
    for mode in PermissionMode:
        assert mode.meaning and f"{mode.value}: {mode.meaning}" in trait.help
        assert PERMISSION_HELP[mode.value] == f"{mode.value}: {mode.meaning}"
        assert f"`{mode.value}`" in row


# -- the notebook: %config, then a re-run right behind it -------------------------------------


@pytest.fixture
def ext(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ClaudeExtension]:
    monkeypatch.setenv("BYRE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("IS_SANDBOX", "1")
    extension = ClaudeExtension(InteractiveShell.instance())
    extension.config.cwd = str(tmp_path)
    extension.config.speculate = False
    yield extension


def on_fake(ext: ClaudeExtension, fake: FakeCLI, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = ext._settings
    monkeypatch.setattr(
        ext, "_settings", lambda name: {**settings(name), "transport_factory": fake.factory}
    )


async def test_a_rerun_queued_right_behind_config_leaving_bypass_launches_in_default(
    ext: ClaudeExtension, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeCLI([[assistant("one")], [BASH, assistant("two")]])
    on_fake(ext, fake, monkeypatch)
    ext.config.permission_mode = "bypassPermissions"
    old = ext.session("default")
    await old.query("one")
    ext.config.permission_mode = "default"  # %config ...: nothing has run on the loop since
    assert old.permission_mode == "default"
    branched = ext.branch("default", None, None)  # the re-run of the first cell, queued
    assert branched.permission_mode == "default"
    await branched.query("two")
    assert fake.launches[-1].permission_mode == "default"
    assert fake.answers and fake.answers[-1]["response"]["behavior"] == "deny"  # headless
    await ext.close()


@pytest.mark.parametrize(
    ("cli", "in_force", "asks"),
    [
        ("bypassPermissions", "default", True),
        ("acceptEdits", "default", True),
        ("bypassPermissions", "acceptEdits", True),
        ("acceptEdits", "plan", True),
        ("default", "acceptEdits", False),  # stricter than in force: the CLI asks anyway
        ("acceptEdits", "acceptEdits", False),
        ("bypassPermissions", "bypassPermissions", False),
    ],
)
async def test_a_tool_call_the_lagging_cli_would_let_through_is_asked(
    cli: str, in_force: str, asks: bool
) -> None:
    """A turn that was running at the switch: the CLI's hook input still says its old mode.
    Where that mode is looser than the one in force, the call is asked rather than run."""
    calls: list[str] = []

    async def hook(hook_input: Any) -> dict[str, Any]:
        calls.append(hook_input["permission_mode"])
        return {}

    edit = {"permission_mode": cli, "hook_event_name": "PreToolUse", "tool_name": "Edit"}
    ask = Ask("hook_callback", {"callback_id": "hook_0", "input": edit})
    fake = FakeCLI([[ask, assistant("done")]])
    session = bypass_session(fake, hooks={"PreToolUse": [hook]})
    session.switch_permission_mode(in_force)
    await session.query("edit it")
    (answer,) = fake.answers
    output = answer["response"].get("hookSpecificOutput", {})
    assert (output.get("permissionDecision") == "ask") is asks
    assert calls == ([] if asks else [in_force])
    await session.close()


@pytest.mark.parametrize(("reported", "followed"), [("plan", True), ("acceptEdits", False)])
async def test_the_session_follows_a_mode_the_cli_entered_by_itself_never_a_looser_one(
    reported: str, followed: bool
) -> None:
    """CLI 2.1.328 enters plan mode without asking the host (EnterPlanMode) and says so in a
    ``system/status`` line: the session follows it, so the header, later launches and byre's
    decisions agree; a looser mode on the CLI's word alone is not taken."""
    status = {"type": "system", "subtype": "status", "permissionMode": reported}
    fake = FakeCLI([[status, assistant("planning")]])
    session = Session(permission_mode="default", transport_factory=fake.factory)
    assert (await session.query("plan it")).text == "planning"
    assert session.permission_mode == (reported if followed else "default")
    await session.close()
