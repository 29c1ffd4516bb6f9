"""IS_SANDBOX as root: the bypass flag is passed only when the real CLI accepts it.

The CLI (2.1.328) refuses to start with ``--allow-dangerously-skip-permissions`` as root unless
``IS_SANDBOX`` is exactly ``1``; container images often set ``IS_SANDBOX=yes``. These run the
real CLI as the user the tests run as; the root cases skip elsewhere.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable

import pytest

from byre_jupyter import ByreError, Session
from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.transport.launch import bypass_allowed

pytestmark = pytest.mark.cli

MakeSession = Callable[..., Session]
TIMEOUT = 90.0

as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="the CLI's refusal is root-only"
)


@pytest.mark.parametrize(
    ("value", "root", "allowed"),
    [
        ("1", True, True),
        ("yes", True, False),
        ("true", True, False),
        ("", True, False),
        (None, True, False),
        (" 1", True, False),
        ("yes", False, True),
        (None, False, True),
    ],
)
def test_bypass_allowed_only_for_what_the_cli_accepts(
    monkeypatch: pytest.MonkeyPatch, value: str | None, root: bool, allowed: bool
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0 if root else 1000, raising=False)
    env = {} if value is None else {"IS_SANDBOX": value}
    assert bypass_allowed(env) is allowed


@as_root
async def test_is_sandbox_yes_as_root_still_runs_turns(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("hello", Reply(Text("hi from the sandbox")))
    session = make_session(permission_mode="default", env={"IS_SANDBOX": "yes"})
    result = await asyncio.wait_for(session.query("hello"), TIMEOUT)
    assert not result.is_error, result
    assert result.text == "hi from the sandbox"


@as_root
@pytest.mark.parametrize("value", ["yes", "true", ""])
async def test_bypass_as_root_without_is_sandbox_1_says_what_to_set(
    api: ScriptedAPI, make_session: MakeSession, value: str
) -> None:
    session = make_session(permission_mode="bypassPermissions", env={"IS_SANDBOX": value})
    result = await asyncio.wait_for(session.query("hello"), TIMEOUT)
    assert result.is_error
    assert isinstance(result.error, ByreError)
    message = str(result.error)
    assert "IS_SANDBOX=1" in message
    assert "root" in message
    assert "cannot be used with root/sudo" not in message  # ours, not the CLI's exit
    assert api.requests == []  # refused before any CLI was started


@as_root
async def test_switching_to_bypass_later_as_root_says_what_to_set(
    api: ScriptedAPI, make_session: MakeSession
) -> None:
    api.on("hello", Reply(Text("hi")))
    session = make_session(permission_mode="default", env={"IS_SANDBOX": "yes"})
    assert not (await asyncio.wait_for(session.query("hello"), TIMEOUT)).is_error
    with pytest.raises(ByreError, match="IS_SANDBOX=1"):
        await asyncio.wait_for(session.set_permission_mode("bypassPermissions"), TIMEOUT)
    assert session.permission_mode == "default"
