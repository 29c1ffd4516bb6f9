"""``%claude doctor``'s checks against fake ``claude`` and ``node`` executables.

Each fake prints a version the way the real one does (``2.1.328 (Claude Code)``, ``v20.20.2``);
the checks must judge the version, not just find the file, and say how to fix what is wrong.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from byre_jupyter.app.doctor import (
    CLI_INSTALL,
    Check,
    cli_check,
    doctor_checks,
    ipykernel_check,
    node_check,
    render_checks,
)


def fake(bin_dir: Path, name: str, prints: str) -> str:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\necho '{prints}'\n")
    path.chmod(0o755)
    return str(path)


def env_with(bin_dir: Path, **extra: str) -> dict[str, str]:
    return {"PATH": f"{bin_dir}:/nonexistent", "HOME": str(bin_dir.parent), **extra}


@pytest.mark.parametrize(
    ("printed", "ok", "says"),
    [
        ("2.1.328 (Claude Code)", True, "the tested release"),
        ("2.1.400 (Claude Code)", True, "newer than the tested 2.1.328"),
        ("2.1.197 (Claude Code)", False, "older than the tested 2.1.328"),
        ("2.2.0 (Claude Code)", False, "newer than the supported 2.1.x"),
        ("garbage", False, "printed no version"),
    ],
)
def test_cli_version_is_judged_against_the_tested_range(
    tmp_path: Path, printed: str, ok: bool, says: str
) -> None:
    path = fake(tmp_path / "bin", "claude", printed)
    check = cli_check(path, env_with(tmp_path / "bin"))
    assert check.ok is ok, check
    assert says in check.detail
    if not ok:
        assert CLI_INSTALL in check.detail  # the fix names the tested release
        assert "@2.1.328" in CLI_INSTALL


def test_an_old_cli_names_the_node_it_needs(tmp_path: Path) -> None:
    path = fake(tmp_path / "bin", "claude", "2.1.197 (Claude Code)")
    assert "Node.js >= 22" in cli_check(path, env_with(tmp_path / "bin")).detail


@pytest.mark.parametrize(
    ("printed", "cli_ok", "ok", "says"),
    [
        ("v22.11.0", False, True, "22.11.0"),
        ("v24.1.0", True, True, "24.1.0"),
        ("v20.20.2", False, False, "Install Node.js >= 22"),
        ("v20.20.2", True, True, "2.1.197 at most"),  # runs the installed CLI; says the limit
        ("v18.0.0", False, False, "2.1.197 at most"),
    ],
)
def test_node_version_is_judged(
    tmp_path: Path, printed: str, cli_ok: bool, ok: bool, says: str
) -> None:
    fake(tmp_path / "bin", "node", printed)
    check = node_check(env_with(tmp_path / "bin"), cli_ok)
    assert check.ok is ok, check
    assert says in check.detail
    if not ok:
        assert CLI_INSTALL in check.detail


def test_missing_node_matters_only_without_a_cli(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    assert node_check(env_with(tmp_path / "bin"), cli_ok=True).ok
    missing = node_check(env_with(tmp_path / "bin"), cli_ok=False)
    assert not missing.ok and "Node.js >= 22" in missing.detail


def test_old_ipykernel_says_what_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipykernel

    monkeypatch.setattr(ipykernel, "__version__", "6.29.5")
    check = ipykernel_check()
    assert not check.ok
    assert "when the running cell ends" in check.detail and "ipykernel>=7.4" in check.detail
    monkeypatch.setattr(ipykernel, "__version__", "7.4.0")
    assert ipykernel_check().ok


def test_gateway_kernel_without_home_gets_the_allow_list(tmp_path: Path) -> None:
    env = {"PATH": "/nonexistent", "KERNEL_ID": "abc", "KERNEL_GATEWAY": "1"}
    checks = {c.name: c for c in doctor_checks(None, env, "JupyterLab")}
    assert not checks["Claude CLI"].ok
    assert "KG_ENV_PROCESS_WHITELIST=HOME,ANTHROPIC_API_KEY" in checks["Claude CLI"].detail
    gateway = checks["Kernel gateway"]
    assert not gateway.ok
    assert "EG_ENV_PROCESS_WHITELIST" in gateway.detail
    assert "--KernelGatewayApp.env_process_whitelist" in gateway.detail


def test_no_gateway_row_for_an_ordinary_kernel(tmp_path: Path) -> None:
    path = fake(tmp_path / "bin", "claude", "2.1.328 (Claude Code)")
    checks = doctor_checks(path, env_with(tmp_path / "bin"), "JupyterLab")
    assert "Kernel gateway" not in {c.name for c in checks}


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX only")
def test_root_without_is_sandbox_1_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    env = env_with(tmp_path / "bin", IS_SANDBOX="yes")
    checks = {c.name: c for c in doctor_checks(None, env, "JupyterLab")}
    assert "IS_SANDBOX=1" in checks["bypassPermissions as root"].detail
    env["IS_SANDBOX"] = "1"
    assert "bypassPermissions as root" not in {c.name for c in doctor_checks(None, env, "x")}


def test_marks_are_plain_characters_and_details_cannot_break_the_table() -> None:
    table = render_checks([Check("a", True, "x | y"), Check("b", False, "two\nlines")])
    rows = table.splitlines()
    assert len(rows) == 4
    assert "| a | ✓ |" in rows[2] and "| b | ✗ |" in rows[3]
    assert "x \\| y" in rows[2]
    assert all(ord(ch) < 0x1F000 for ch in table)  # no emoji (✅ ❌ are U+2705, U+274C)
    assert "✅" not in table and "❌" not in table


def test_the_python_row_is_this_interpreter() -> None:
    checks = doctor_checks(None, {"PATH": "/nonexistent", "HOME": "/nonexistent"}, "x")
    assert {c.name: c for c in checks}["Python"].detail == sys.version.split()[0]
