"""The real CLI under a managed policy, as byre reads it (app/policy.py, docs/hub.md).

CLI 2.1.328 reads its policy from the fixed ``/etc/claude-code`` (its
``CLAUDE_CODE_MANAGED_SETTINGS_PATH`` did not move it), so the CLI runs in a mount namespace of
its own where ``/etc`` is a copy holding the test's policy: ``unshare`` as root. Elsewhere
(no root, no mount namespaces) these skip, and byre's side is tested by
tests/integration/kernel/test_policy_kernel.py with ``BYRE_MANAGED_SETTINGS_DIR``."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from byre_jupyter import Session
from byre_jupyter.app.policy import offered_modes, read_policy
from byre_jupyter.errors import ControlError
from byre_jupyter.protocol import InitMessage
from byre_jupyter.scripted import Reply, ScriptedAPI, Text

pytestmark = pytest.mark.cli

TIMEOUT = 90.0


def _namespaces() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = ["unshare", "-m", "--propagation", "private", "true"]
    return subprocess.run(probe, capture_output=True).returncode == 0


needs_namespace = pytest.mark.skipif(
    not _namespaces(), reason="a private mount namespace needs root and unshare"
)


def cli_under_policy(tmp_path: Path, cli_path: str, policy: dict[str, object]) -> tuple[str, Path]:
    """A ``claude`` that sees ``policy`` in /etc/claude-code; returns it and the copy's
    policy folder (what byre reads, pointed there)."""
    etc = tmp_path / "etc"
    shutil.copytree("/etc", etc, symlinks=True, ignore_dangling_symlinks=True)
    folder = etc / "claude-code"
    folder.mkdir(exist_ok=True)
    (folder / "managed-settings.json").write_text(json.dumps(policy))
    wrapper = tmp_path / "claude-under-policy"
    wrapper.write_text(
        "#!/bin/sh\n"
        'exec unshare -m --propagation private sh -c \'mount --bind "$0" /etc && exec "$@"\' '
        f'"{etc}" "{cli_path}" "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper), folder


@needs_namespace
async def test_the_cli_enforces_the_file_byre_reads(
    make_session: Callable[..., Session], api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    """Launched in bypassPermissions under disableBypassPermissionsMode, the CLI runs in
    "default" and says so only in its init line (what byre's turn notice reads); a switch to it
    is refused; byre, reading the same file, does not offer the mode."""
    api.default = Reply(Text("ok"))
    wrapper, folder = cli_under_policy(
        tmp_path, cli_path, {"permissions": {"disableBypassPermissionsMode": "disable"}}
    )
    assert "bypassPermissions" not in offered_modes(read_policy(str(folder)))

    session = make_session(cli_path=wrapper, permission_mode="bypassPermissions")
    turn = await asyncio.wait_for(session.send("hi"), TIMEOUT)
    modes = [m.permission_mode async for m in turn.events() if isinstance(m, InitMessage)]
    await asyncio.wait_for(turn.result(), TIMEOUT)
    assert modes == ["default"]

    calm = make_session(cli_path=wrapper, permission_mode="default")
    await asyncio.wait_for(calm.start(), TIMEOUT)
    with pytest.raises(ControlError, match="bypass_disabled"):
        await asyncio.wait_for(calm.set_permission_mode("bypassPermissions"), TIMEOUT)
    # The refused switch is undone: byre never answers the CLI's prompts by the forbidden mode.
    assert calm.permission_mode == "default"
