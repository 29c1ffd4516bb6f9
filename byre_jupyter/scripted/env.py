"""The environment that points the real ``claude`` CLI at a :class:`ScriptedAPI`."""

from __future__ import annotations

from pathlib import Path

__all__ = ["cli_env"]


def cli_env(api_url: str, home: Path, **extra: str) -> dict[str, str]:
    """Offline, isolated (HOME and TMPDIR under ``home``), no retries, no telemetry.

    ``IS_SANDBOX=1``: as root the CLI accepts bypassPermissions only with it.
    """
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "HOME": str(home),
        "TMPDIR": str(home),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_MAX_RETRIES": "0",
        "IS_SANDBOX": "1",
    }
    env.update(extra)
    return env
