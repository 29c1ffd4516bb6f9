"""The administrator's managed settings (app/policy.py): read as the CLI reads them, never a
crash over a damaged file, and what byre then offers and refuses: the header's mode menu, a
``%config`` or ``ipython_config.py`` asking for a forbidden mode, ``%claude doctor``'s row.
No process starts; ``BYRE_MANAGED_SETTINGS_DIR`` points byre at the test's folder."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets import TraitError
from traitlets.config import Config

from byre_jupyter.app import policy as policy_module
from byre_jupyter.app.config import Claude
from byre_jupyter.app.doctor import doctor_checks, render_checks
from byre_jupyter.app.policy import (
    LINUX_FOLDER,
    MANAGED_DIR_ENV,
    ManagedPolicy,
    budget_refusal,
    managed_folder,
    mode_refusal,
    offered_modes,
    read_policy,
)
from byre_jupyter.errors import ByreWarning
from byre_jupyter.protocol import PERMISSION_MODES
from byre_jupyter.ui import TurnView
from byre_jupyter.ui.live import LiveView

NO_BYPASS = {"permissions": {"disableBypassPermissionsMode": "disable"}}


def write(folder: Path, name: str, content: Any) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


@pytest.fixture
def policy_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "claude-code"
    folder.mkdir()
    monkeypatch.setenv(MANAGED_DIR_ENV, str(folder))
    return folder


def test_the_folder_is_the_clis_unless_byre_is_pointed_elsewhere() -> None:
    assert managed_folder({}, "linux") == LINUX_FOLDER == "/etc/claude-code"
    assert managed_folder({}, "darwin") == "/Library/Application Support/ClaudeCode"
    assert managed_folder({}, "win32") == "C:\\Program Files\\ClaudeCode"
    assert managed_folder({MANAGED_DIR_ENV: "/srv/policy"}, "linux") == "/srv/policy"


def test_no_folder_or_no_file_is_no_policy(tmp_path: Path) -> None:
    for folder in (tmp_path / "absent", tmp_path):
        policy = read_policy(str(folder))
        assert policy == ManagedPolicy(folder=str(folder))
        assert offered_modes(policy) == list(PERMISSION_MODES)


def test_the_main_file_then_the_drop_ins_in_name_order(policy_dir: Path) -> None:
    main = write(policy_dir, "managed-settings.json", {"permissions": {"deny": ["Bash(rm:*)"]}})
    drop_ins = policy_dir / "managed-settings.d"
    second = write(drop_ins, "20-models.json", {"availableModels": ["sonnet"]})
    first = write(
        drop_ins,
        "10-modes.json",
        {
            "permissions": {
                **NO_BYPASS["permissions"],
                "deny": ["Read(.env)", "Bash(rm:*)", 3],
            },
            "disableAutoMode": "disable",
        },
    )
    write(drop_ins, ".hidden.json", NO_BYPASS)  # the CLI skips these, and other suffixes
    write(drop_ins, "notes.txt", "not a policy")
    (drop_ins / "folder.json").mkdir()
    policy = read_policy()
    assert policy.files == (str(main), str(first), str(second))
    assert policy.deny == ("Bash(rm:*)", "Read(.env)")  # each rule once; a non-string dropped
    assert policy.bypass_off_in == policy.auto_off_in == str(first)
    assert policy.models == ("sonnet",) and policy.problems == ()
    assert offered_modes(policy) == ["default", "acceptEdits", "plan", "dontAsk"]
    refusal = mode_refusal(policy, "bypassPermissions", "default")
    assert refusal is not None
    assert "permissions.disableBypassPermissionsMode" in refusal and str(first) in refusal
    assert "stays 'default'" in refusal
    assert mode_refusal(policy, "plan") is None


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[1, 2]",
        '"disable"',
        "[" * 100_000,  # deeper than the parser's recursion
        b"\xff\xfe{}",
    ],
)
def test_a_damaged_file_is_left_out_with_a_warning_naming_it(
    policy_dir: Path, content: str | bytes
) -> None:
    bad = policy_dir / "managed-settings.json"
    if isinstance(content, bytes):
        bad.write_bytes(content)
    else:
        bad.write_text(content)
    write(policy_dir / "managed-settings.d", "10.json", NO_BYPASS)
    with pytest.warns(ByreWarning, match=str(bad)):
        policy = read_policy()
    assert str(bad) not in policy.files and policy.problems and str(bad) in policy.problems[0]
    assert policy.bypass_off_in is not None  # the other files still count


def test_wrong_shapes_inside_a_file_are_ignored(policy_dir: Path) -> None:
    write(
        policy_dir,
        "managed-settings.json",
        {"permissions": ["deny"], "availableModels": "opus", "disableAutoMode": True},
    )
    policy = read_policy()
    assert policy.deny == () and policy.bypass_off_in is None and policy.auto_off_in is None
    assert policy.models == () and policy.problems == ()


def test_an_unreadable_file_is_a_problem_not_a_crash(
    policy_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file the kernel's user may not read (mode 0600 root's; root reads anything, so the
    refusal is the one open raises then)."""
    write(policy_dir, "managed-settings.json", NO_BYPASS)

    def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(policy_module, "open", refuse, raising=False)
    with pytest.warns(ByreWarning, match="could not be read"):
        policy = read_policy()
    assert policy.problems and policy.bypass_off_in is None


def test_config_cannot_ask_for_a_forbidden_mode_and_the_mode_stays(policy_dir: Path) -> None:
    """%config Claude.permission_mode = 'bypassPermissions' (IPython's %config applies it with
    update_config and shows the error): refused, naming the setting and the file."""
    path = write(policy_dir, "managed-settings.json", NO_BYPASS)
    claude = Claude(config=Config({"Claude": {"permission_mode": "acceptEdits"}}))
    assert claude.permission_mode == "acceptEdits"
    with pytest.raises(TraitError) as refused:
        claude.update_config(Config({"Claude": {"permission_mode": "bypassPermissions"}}))
    assert "disableBypassPermissionsMode" in str(refused.value) and str(path) in str(refused.value)
    assert "stays 'acceptEdits'" in str(refused.value)
    assert claude.permission_mode == "acceptEdits"
    with pytest.raises(TraitError):
        claude.permission_mode = "bypassPermissions"
    claude.permission_mode = "plan"  # what the policy allows still goes
    assert claude.permission_mode == "plan"


def test_a_config_file_asking_for_a_forbidden_mode_loads_with_a_warning(
    policy_dir: Path,
) -> None:
    """ipython_config.py (or a system-wide one) setting bypassPermissions: the extension
    still loads, in the default mode, and says why."""
    write(policy_dir, "managed-settings.json", NO_BYPASS)
    with pytest.warns(ByreWarning, match="disableBypassPermissionsMode"):
        claude = Claude(config=Config({"Claude": {"permission_mode": "bypassPermissions"}}))
    assert claude.permission_mode == "default"


async def test_the_mode_menu_never_offers_a_forbidden_mode(policy_dir: Path) -> None:
    write(policy_dir, "managed-settings.json", NO_BYPASS)
    loop = asyncio.get_running_loop()
    modes = offered_modes(read_policy())
    live = LiveView(
        TurnView("default", "hi"),
        models=["default"],
        on_stop=lambda: None,
        on_model=lambda _: None,
        loop=loop,
        permission_mode="default",
        modes=modes,
        on_permission_mode=lambda _: None,
    )
    try:
        assert live._modes == modes and "bypassPermissions" not in modes
        live._mode_chosen("bypassPermissions")  # a forged choice from the frontend
        assert live._mode == "default"
    finally:
        live.close()


def test_doctor_shows_the_policy_in_force(policy_dir: Path) -> None:
    path = write(
        policy_dir,
        "managed-settings.json",
        {
            "permissions": {**NO_BYPASS["permissions"], "deny": ["Bash(curl:*)", "Read(.env)"]},
            "availableModels": ["sonnet", "haiku"],
        },
    )
    table = render_checks(doctor_checks(None, {}, "lab", None, read_policy()))
    row = next(line for line in table.splitlines() if line.startswith("| Managed settings"))
    assert "✓" in row and str(path) in row and "2 deny rules" in row
    assert "bypassPermissions turned off" in row and "sonnet, haiku" in row
    path.write_text("{oops")
    with pytest.warns(ByreWarning):
        row = render_checks(doctor_checks(None, {}, "lab", None, read_policy()))
    assert "✗" in row and "not valid JSON" in row


def test_the_budget_refusal_says_what_was_spent_and_how_to_go_on() -> None:
    assert budget_refusal(5.0, None) is None and budget_refusal(0.99, 1.0) is None
    refusal = budget_refusal(1.0, 1.0)
    assert refusal is not None and "1.0000 USD" in refusal
    assert "%config Claude.kernel_budget_usd = 2" in refusal
    assert budget_refusal(0.0, 0.0) is not None  # a cap of 0 sends nothing at all


def test_a_shell_loads_the_extension_under_a_policy(policy_dir: Path) -> None:
    """The extension object reads no policy it cannot parse into a crash."""
    from byre_jupyter.app.extension import ClaudeExtension

    write(policy_dir, "managed-settings.json", "{broken")
    with pytest.warns(ByreWarning):
        ext = ClaudeExtension(InteractiveShell.instance())
        ext.config.permission_mode = "acceptEdits"
    assert ext.config.permission_mode == "acceptEdits"
