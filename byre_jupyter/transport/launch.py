"""What to run: finding the CLI, its argv and its environment.

Pure functions (no process is started here), so the exact command line is testable. The argv
follows ``shared/protocol/claude-protocol.md`` ("Launch"): stream-json both ways, ``--verbose``,
partial messages, empty attribution, and the in-process sdk MCP server ``byre`` with
``alwaysLoad`` so its tools are in the prompt from the first turn (observed doc, section 8).
Nothing secret goes on argv: keys travel in the environment only.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import CLINotFoundError

__all__ = ["LaunchSpec", "build_argv", "build_env", "find_cli"]

ENV_CLI_PATH = "BYRE_CLAUDE_PATH"


def find_cli(configured: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Resolve the CLI: the configured path, else ``$BYRE_CLAUDE_PATH``, else ``claude`` on PATH."""
    env = os.environ if env is None else env
    candidates: list[tuple[str, str]] = []
    if configured:
        candidates.append(("configured cli_path", configured))
    if env.get(ENV_CLI_PATH):
        candidates.append((ENV_CLI_PATH, env[ENV_CLI_PATH]))
    for origin, path in candidates:
        resolved = shutil.which(path) if os.sep not in path else path
        if resolved and os.path.isfile(resolved) and os.access(resolved, os.X_OK):
            return os.path.abspath(resolved)  # the CLI may run in another cwd
        raise CLINotFoundError(f"{origin} {path!r} is not an executable file")
    found = shutil.which("claude", path=env.get("PATH"))
    if found:
        return found
    raise CLINotFoundError("no `claude` on PATH and BYRE_CLAUDE_PATH is not set")


@dataclass(frozen=True)
class LaunchSpec:
    """Everything that decides how one CLI process is started."""

    cli_path: str
    cwd: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    session_id: str | None = None  # --session-id: a new conversation with a known id
    resume: str | None = None  # --resume: continue that conversation
    resume_session_at: str | None = None  # keep history only up to this message uuid
    fork_session: bool = False
    mcp_servers: Sequence[str] = ("byre",)  # in-process sdk servers, answered over control
    settings: Mapping[str, object] = field(
        default_factory=lambda: {"attribution": {"commit": "", "pr": ""}}
    )
    extra_args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    commit_name: str | None = None
    commit_email: str | None = None
    # Launch so that a later set_permission_mode("bypassPermissions") is accepted (the CLI
    # answers bypass_not_launched otherwise); it does not bypass anything by itself.
    allow_bypass: bool = False


def build_argv(spec: LaunchSpec) -> list[str]:
    argv = [
        spec.cli_path,
        "--output-format", "stream-json",
        "--input-format", "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--settings", json.dumps(dict(spec.settings), separators=(",", ":")),
    ]  # fmt: skip
    if spec.mcp_servers:
        servers = {
            name: {"type": "sdk", "name": name, "alwaysLoad": True} for name in spec.mcp_servers
        }
        argv += ["--mcp-config", json.dumps({"mcpServers": servers}, separators=(",", ":"))]
    if spec.permission_mode:
        argv += ["--permission-mode", spec.permission_mode]
    if spec.permission_mode == "bypassPermissions" or spec.allow_bypass:
        argv.append("--allow-dangerously-skip-permissions")
    if spec.permission_mode != "bypassPermissions":
        # Without it the CLI never sends can_use_tool: tools needing approval are silently
        # refused (observed doc, section 14, run n2).
        argv += ["--permission-prompt-tool", "stdio"]
    if spec.model:
        argv += ["--model", spec.model]
    # The equals form keeps a dash-leading value from being read as a flag.
    if spec.resume:
        argv.append(f"--resume={spec.resume}")
        if spec.resume_session_at:
            argv.append(f"--resume-session-at={spec.resume_session_at}")
        if spec.fork_session:
            argv.append("--fork-session")
    if spec.session_id and (not spec.resume or spec.fork_session):
        argv.append(f"--session-id={spec.session_id}")
    argv += list(spec.extra_args)
    return argv


def build_env(spec: LaunchSpec, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The kernel's environment, minus ``CLAUDECODE``, plus commit identity and extra env."""
    env = dict(os.environ if base is None else base)
    env.pop("CLAUDECODE", None)  # else the child believes it is nested in another Claude Code
    if spec.commit_name:
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = spec.commit_name
    if spec.commit_email:
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = spec.commit_email
    env.update(spec.env)
    return env
