"""The administrator's side, in a real kernel with the real CLI and the scripted API: byre's
defaults set system-wide (``{sys.prefix}/etc/ipython/ipython_config.py``, which IPython loads
for every kernel of that environment) and the machine's managed settings (app/policy.py).

The kernel runs in an environment of its own (a venv on top of the test's, so that its
``sys.prefix`` is the test's folder: the shared one is not written), started through a
``python3`` kernelspec on ``JUPYTER_PATH``. The CLI's own policy folder is fixed
(``/etc/claude-code``; its ``CLAUDE_CODE_MANAGED_SETTINGS_PATH`` did not move it in 2.1.328),
so byre is pointed at the test's policy with ``BYRE_MANAGED_SETTINGS_DIR``: what is tested is
byre's side (docs/hub.md)."""

from __future__ import annotations

import json
import site
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.kernel import CellRun, KernelDriver

from byre_jupyter.app.policy import MANAGED_DIR_ENV
from byre_jupyter.scripted import Reply, ScriptedAPI, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

SYSTEM_CONFIG = """
c.Claude.kernel_budget_usd = 0.5
c.Claude.python_tool = "deny"
c.Claude.permission_mode = "bypassPermissions"
"""


def run(kernel: KernelDriver, code: str, cell: str | None = None) -> CellRun:
    result = kernel.run(code, cell_id=cell)
    assert result.reply is not None and result.reply["status"] == "ok", result.texts()
    return result


def prefix_with_config(root: Path) -> Path:
    """A venv at ``root`` that sees the test's packages, its ``etc/ipython`` holding
    :data:`SYSTEM_CONFIG`; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    python = root / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The test's own site-packages, with its .pth files (an import line in a .pth runs).
    (Path(purelib) / "outer.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages())
    )
    (root / "etc" / "ipython").mkdir(parents=True)
    (root / "etc" / "ipython" / "ipython_config.py").write_text(SYSTEM_CONFIG)
    return python


def test_system_wide_defaults_and_the_machines_policy_in_a_kernel(
    kernels: Callable[..., KernelDriver],
    api: ScriptedAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    python = prefix_with_config(tmp_path / "prefix")
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec.joinpath("kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Python 3", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    policy_dir = tmp_path / "claude-code"
    policy_dir.mkdir()
    policy = policy_dir / "managed-settings.json"
    policy.write_text(
        json.dumps(
            {
                "permissions": {
                    "disableBypassPermissionsMode": "disable",
                    "deny": ["Bash(curl:*)", "WebFetch"],
                }
            }
        )
    )
    kernel = kernels(load=False, **{MANAGED_DIR_ENV: str(policy_dir)})
    assert run(kernel, "import sys; print(sys.prefix)").texts().strip() == str(tmp_path / "prefix")

    # The system-wide config is read; its bypassPermissions is not applied, and says why.
    loaded = run(kernel, "%load_ext byre_jupyter").texts()
    assert "disableBypassPermissionsMode" in loaded and str(policy) in loaded, loaded
    assert "0.5" in run(kernel, "%config Claude.kernel_budget_usd").texts()
    assert "deny" in run(kernel, "%config Claude.python_tool").texts()
    assert "'default'" in run(kernel, "%config Claude.permission_mode").texts()

    # A user asking for it in a cell: refused, naming the policy; the mode stays.
    asked = run(kernel, "%config Claude.permission_mode = 'bypassPermissions'").texts()
    assert "disableBypassPermissionsMode" in asked and str(policy) in asked, asked
    assert "stays 'default'" in asked
    assert "'default'" in run(kernel, "%config Claude.permission_mode").texts()
    # byre's own settings are the user's to change in their kernel.
    run(kernel, "%config Claude.kernel_budget_usd = 2.5")
    assert "2.5" in run(kernel, "%config Claude.kernel_budget_usd").texts()

    doctor = run(kernel, "%claude doctor").texts()
    row = next(line for line in doctor.splitlines() if "Managed settings" in line)
    assert str(policy) in row and "2 deny rules" in row, row
    assert "bypassPermissions turned off" in row

    # The header's mode menu (a cell of JupyterLab: live widgets) offers what the policy
    # allows, and nothing else.
    api.default = Reply(Text("hello from the policy kernel"))
    turn = run(kernel, "%%claude\nhello", "cell-1")
    assert "hello from the policy kernel" in turn.texts()
    menus: list[dict[str, Any]] = [
        state["menus"] for state in turn.widget_states if isinstance(state.get("menus"), dict)
    ]
    assert menus, "no header widget opened"
    modes = menus[0]["modes"]
    assert "bypassPermissions" not in modes and {"default", "acceptEdits", "plan"} <= set(modes)
    assert menus[0]["mode"] == "default"
