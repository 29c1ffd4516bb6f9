"""``BYRE_LIVE`` and ``BYRE_STATE_DIR`` are defaults of ``Claude`` traits: the
environment sets them, ``%config`` / ``ipython_config.py`` override them, and ``%config Claude``
documents them. No process starts."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from byre_jupyter.app.config import LAUNCH_TRAITS, Claude, launch_settings
from byre_jupyter.app.extension import LAUNCH_SETTINGS, ClaudeExtension
from byre_jupyter.app.surfaces import frontend_kind
from byre_jupyter.transport.launch import launch_fields


@pytest.mark.parametrize(
    ("env", "live"), [("1", True), ("0", False), (None, "auto"), ("x", "auto")]
)
def test_byre_live_sets_the_live_default(
    monkeypatch: pytest.MonkeyPatch, env: str | None, live: Any
) -> None:
    if env is None:
        monkeypatch.delenv("BYRE_LIVE", raising=False)
    else:
        monkeypatch.setenv("BYRE_LIVE", env)
    assert Claude().live == live
    assert "$BYRE_LIVE" in Claude.class_get_trait_help(Claude.class_traits()["live"])


def test_frontend_kind_is_what_the_frontend_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The frontend is a fact about the cell; forcing widgets on or off is ``Claude.live``."""
    monkeypatch.setenv("BYRE_LIVE", "0")
    kernel = SimpleNamespace(get_parent=lambda *_: {"metadata": {"cellId": "c1"}})
    assert frontend_kind(SimpleNamespace(kernel=kernel)) == "lab"


def test_byre_state_dir_sets_the_state_dir_default_and_config_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setenv("BYRE_STATE_DIR", str(tmp_path / "from-env"))
    ext = ClaudeExtension(InteractiveShell.instance())
    ext.config.cwd = str(tmp_path)
    assert ext.config.state_dir == str(tmp_path / "from-env")
    ext.remember(SimpleNamespace(name="a"), SimpleNamespace(session_id="id-a"))  # type: ignore[arg-type]
    assert (tmp_path / "from-env" / "sessions.json").exists()

    ext.config.state_dir = str(tmp_path / "configured")
    ext.remember(SimpleNamespace(name="b"), SimpleNamespace(session_id="id-b"))  # type: ignore[arg-type]
    assert ext.remembered() == {f"{tmp_path}::b": "id-b"}
    assert (tmp_path / "configured" / "sessions.json").exists()

    monkeypatch.delenv("BYRE_STATE_DIR")
    assert Claude().state_dir == "~/.byre_jupyter"
    assert "$BYRE_STATE_DIR" in Claude.class_get_trait_help(Claude.class_traits()["state_dir"])


def test_every_launch_trait_sets_its_launch_option(tmp_path: Path) -> None:
    """The launch traits are read from the launch options' metadata (transport/launch.py):
    each names a configurable ``Claude`` trait, a CLI started before it changed is replaced,
    and a session the extension creates is launched with its value."""
    configurable = Claude.class_traits(config=True)
    named = {o.name: o.metadata["launch"].trait for o in launch_fields()}
    assert {trait for trait in named.values() if trait} <= set(configurable)
    assert set(LAUNCH_TRAITS) <= set(LAUNCH_SETTINGS)
    ext = ClaudeExtension(InteractiveShell.instance())
    chosen = {
        "cli_path": "/opt/claude",
        "model": "haiku",
        "permission_mode": "plan",
        "env": {"A": "1"},
        "env_drop": ["OPENAI_*"],
        "extra_args": ["--sample"],
        "max_line_mb": 3,
        "cwd": str(tmp_path),
        "notebook_prompt": False,
        "effort": "xhigh",
        "fallback_model": "sonnet",
        "max_budget_usd": 2.5,
        "add_dirs": ["/data"],
        "allowed_tools": ["Bash(git *)"],
        "disallowed_tools": ["Write"],
        "agents": {"reviewer": {"description": "Reviews code"}},
        "plugin_dirs": ["/plugins"],
    }
    for trait, value in chosen.items():
        setattr(ext.config, trait, value)
    assert set(launch_settings(ext.config)) == {name for name, trait in named.items() if trait}
    options = ext.session("launch-traits").options
    assert options.launch_options() == {
        "cli_path": "/opt/claude",
        "cwd": str(tmp_path),
        "model": "haiku",
        "permission_mode": "plan",
        "effort": "xhigh",
        "fallback_model": "sonnet",
        "max_budget_usd": 2.5,
        "add_dirs": ("/data",),
        "allowed_tools": ("Bash(git *)",),
        "disallowed_tools": ("Write",),
        "agents": {"reviewer": {"description": "Reviews code"}},
        "plugin_dirs": ("/plugins",),
        "env": {"A": "1"},
        "env_drop": ("OPENAI_*",),
        "extra_args": ("--sample",),
        "commit_name": None,
        "commit_email": None,
        "max_line_bytes": 3 * 2**20,
    }


def test_a_branch_keeps_the_effort_its_session_has_now() -> None:
    """A re-run cell's fork, and the spare started for it, launch with the effort the session
    switched to (the header, -e or a typed /effort), not the trait's."""
    ext = ClaudeExtension(InteractiveShell.instance())
    ext.config.effort = "low"
    session = ext.session("branching")
    session.effort = "max"  # as a typed `/effort max` leaves it
    assert ext._branch_settings("branching", session)["effort"] == "max"
    assert ext._settings("branching")["effort"] == "low"  # a fresh conversation: the trait's
