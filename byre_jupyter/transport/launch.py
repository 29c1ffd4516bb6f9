"""What to run: finding the CLI, its argv and its environment.

Pure functions (no process is started here), so the exact command line is testable. The argv
follows ``docs/protocol.md`` (section 1): stream-json both ways, ``--verbose``,
partial messages, empty attribution, and the in-process sdk MCP server ``byre`` with
``alwaysLoad`` so its tools are in the prompt from the first turn (docs/protocol.md, section 1).
Nothing secret goes on argv: keys travel in the environment only.

The CLI gets the kernel's environment minus Jupyter's own credentials (:data:`DEFAULT_ENV_DROP`):
a prompt-injected model can run ``env`` in Bash, and the server's token would let it drive the
user's whole Jupyter server (every kernel, every file), the hub token their whole account. The
CLI's own settings (``ANTHROPIC_*``, ``CLAUDE_*``, cloud-provider credentials for Bedrock or
Vertex), ``PATH`` and ``HOME`` pass.

How the CLI is launched is written once, in :class:`LaunchOptions`: each field says in its
metadata (:class:`Setting`) what it becomes (a flag, the environment, the process), which
``Claude`` trait sets it and whether a fork inherits it. ``SessionOptions`` and
:class:`LaunchSpec` extend it, the ``Claude`` settings are read from it, and :func:`build_argv`
turns every flag field into its flag: a new CLI flag is one field here and one trait.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import CLINotFoundError
from ..protocol import PermissionMode, effort_option, model_option
from ..protocol.framing import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "DEFAULT_ENV_DROP",
    "LaunchOptions",
    "LaunchSpec",
    "Setting",
    "asks_over_stdio",
    "build_argv",
    "build_env",
    "bypass_allowed",
    "bypass_refusal",
    "cli_projects_dir",
    "find_cli",
    "gateway_hint",
    "launch_fields",
    "make_cli_folders_private",
]

ENV_CLI_PATH = "BYRE_CLAUDE_PATH"

#: Names and globs (case-sensitive) of variables never passed on to the CLI unless
#: ``LaunchSpec.env`` sets them: jupyter_server's token (``JUPYTER_TOKEN``, ``JUPYTER_TOKEN_FILE``),
#: the credentials JupyterHub's ``Spawner.get_env`` gives a single-user server (the API token as
#: ``JUPYTERHUB_API_TOKEN`` and its deprecated alias ``JPY_API_TOKEN``, cookie options, the SSL
#: key file), the Hub's own secrets (``JPY_COOKIE_SECRET``, ``CONFIGPROXY_AUTH_TOKEN``,
#: ``JUPYTERHUB_CRYPT_KEY``) and a kernel gateway's (``JUPYTER_GATEWAY_AUTH_TOKEN``, its password,
#: headers and client key). ``JPY_SESSION_NAME`` (the notebook's path) is not a credential.
DEFAULT_ENV_DROP = (
    "JUPYTER_TOKEN", "JUPYTER_TOKEN_FILE", "JPY_API_TOKEN", "JPY_COOKIE_SECRET",
    "JUPYTERHUB_*TOKEN*", "JUPYTERHUB_*SECRET*", "JUPYTERHUB_*COOKIE*", "JUPYTERHUB_*KEY*",
    "CONFIGPROXY_AUTH_TOKEN",
    "JUPYTER_GATEWAY_AUTH_TOKEN", "JUPYTER_GATEWAY_HTTP_PWD", "JUPYTER_GATEWAY_HEADERS",
    "JUPYTER_GATEWAY_CLIENT_KEY",
)  # fmt: skip


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
    raise CLINotFoundError(
        "no `claude` on PATH and BYRE_CLAUDE_PATH is not set", hint=gateway_hint(env)
    )


#: What a gateway must pass on for ``%%claude`` (docs/gateway.md).
GATEWAY_ENV = "HOME,ANTHROPIC_API_KEY,BYRE_CLAUDE_PATH"


def gateway_hint(env: Mapping[str, str]) -> str | None:
    """What to configure when this kernel was started by a Jupyter Kernel Gateway or Enterprise
    Gateway, else None.

    A gateway passes the kernels it starts only ``PATH``, ``KERNEL_*`` and the names it
    allow-lists: no ``HOME``, no ``ANTHROPIC_*``, no ``BYRE_CLAUDE_PATH`` (measured with
    jupyter_kernel_gateway 3.0.1, docs/gateway.md). Kernel Gateway sets ``KERNEL_GATEWAY``;
    any gateway sets ``KERNEL_ID``, which a kernel with no ``HOME`` got from one.
    """
    if env.get("KERNEL_GATEWAY"):
        why = "KERNEL_GATEWAY is set"
    elif env.get("KERNEL_ID") and not env.get("HOME"):
        why = "KERNEL_ID is set and HOME is not"
    else:
        return None
    return (
        f"This kernel was started by a Jupyter kernel gateway ({why}), which passes a kernel "
        "only PATH, KERNEL_* and the variables it allow-lists. Allow-list what Claude needs "
        f"where the gateway runs: Kernel Gateway: KG_ENV_PROCESS_WHITELIST={GATEWAY_ENV} "
        f"(or --KernelGatewayApp.env_process_whitelist={GATEWAY_ENV}); Enterprise Gateway: "
        f"EG_ENV_PROCESS_WHITELIST={GATEWAY_ENV}. Add ANTHROPIC_BASE_URL, "
        "CLAUDE_CODE_OAUTH_TOKEN or IS_SANDBOX if you use them, and restart the gateway "
        "(docs/gateway.md in the byre_jupyter repository)."
    )


def bypass_allowed(env: Mapping[str, str]) -> bool:
    """Whether the CLI will start with ``--allow-dangerously-skip-permissions`` in ``env``.

    As root the CLI refuses to start at all with that flag unless ``IS_SANDBOX`` is exactly
    ``1`` (measured with 2.1.328: unset, ``yes`` and ``true`` are refused). Container images
    often set ``IS_SANDBOX=yes``, so any other value must not count.
    """
    return not hasattr(os, "geteuid") or os.geteuid() != 0 or env.get("IS_SANDBOX") == "1"


def bypass_refusal(env: Mapping[str, str]) -> str | None:
    """Why bypassPermissions cannot be used in ``env`` and what to set, or None if it can."""
    if bypass_allowed(env):
        return None
    found = env.get("IS_SANDBOX")
    now = "IS_SANDBOX is not set" if found is None else f"IS_SANDBOX is {found!r}"
    return (
        "bypassPermissions is not possible here: the kernel runs as root and the Claude CLI "
        f"accepts it as root only with IS_SANDBOX=1 ({now}). In a container or sandbox, set "
        "IS_SANDBOX=1 in the kernel's environment (or `%config Claude.env = {'IS_SANDBOX': '1'}` "
        "before the conversation starts); otherwise run Jupyter as a non-root user, or use "
        "another permission mode."
    )


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Setting:
    """What one :class:`LaunchOptions` field is (its ``metadata["launch"]``)."""

    reaches: Literal["flag", "argv", "environment", "process"]
    """``flag``: ``FLAG=VALUE`` on argv (:func:`build_argv`); ``argv``: the words themselves;
    ``environment``: the CLI's environment (:func:`build_env`); ``process``: how it is run."""
    flag: str = ""
    trait: str | None = None
    """The ``Claude`` trait that sets it for the notebook's sessions; None: set from code."""
    from_trait: Callable[[Any], Any] = _same
    """The field's value for the trait's (``max_line_mb`` is in MiB, the field in bytes)."""
    fork: bool = True
    """A fork of a conversation is launched with it too."""


def _setting(default: Any = None, **how: Any) -> Any:
    factory = {"default_factory": default} if callable(default) else {"default": default}
    return field(**factory, metadata={"launch": Setting(**how)})


def _mebibytes(value: Any) -> int:
    return int(value) * 1024 * 1024


@dataclass(frozen=True)
class LaunchOptions:
    """How the CLI is launched: every setting the user or the host chooses, each once."""

    cli_path: str | None = _setting(reaches="process", trait="cli_path")
    """None or "": $BYRE_CLAUDE_PATH, else ``claude`` on PATH (:func:`find_cli`)."""
    cwd: str | None = _setting(reaches="process", trait="cwd")
    model: str | None = _setting(reaches="flag", flag="--model", trait="model")
    """What the user typed: "default" and "" mean the CLI's default (:func:`model_option`)."""
    permission_mode: str | None = _setting(
        reaches="flag", flag="--permission-mode", trait="permission_mode"
    )
    effort: str | None = _setting(reaches="flag", flag="--effort", trait="effort")
    """The CLI's effort level (:data:`~byre_jupyter.protocol.EFFORT_LEVELS`); None: its default.
    A running CLI switches with ``apply_flag_settings`` (``Session.set_effort``)."""
    fallback_model: str | None = _setting(
        reaches="flag", flag="--fallback-model", trait="fallback_model"
    )
    """Models to fall back to when the main one is busy or unavailable, comma-separated."""
    max_budget_usd: float | None = _setting(
        reaches="flag", flag="--max-budget-usd", trait="max_budget_usd"
    )
    """The CLI's own spending cap, in US dollars: the turn that reaches it ends with a result
    of subtype ``error_max_budget_usd``, and every later one at once."""
    add_dirs: Sequence[str] = _setting(
        tuple, reaches="flag", flag="--add-dir", trait="add_dirs", from_trait=tuple
    )
    allowed_tools: Sequence[str] = _setting(
        tuple, reaches="flag", flag="--allowedTools", trait="allowed_tools", from_trait=tuple
    )
    disallowed_tools: Sequence[str] = _setting(
        tuple, reaches="flag", flag="--disallowedTools", trait="disallowed_tools", from_trait=tuple
    )
    agents: Mapping[str, Any] = _setting(dict, reaches="flag", flag="--agents", trait="agents")
    """Custom subagents by name (``{"reviewer": {"description": ..., "prompt": ...}}``), passed
    as ``--agents`` JSON."""
    plugin_dirs: Sequence[str] = _setting(
        tuple, reaches="flag", flag="--plugin-dir", trait="plugin_dirs", from_trait=tuple
    )
    env: Mapping[str, str] = _setting(dict, reaches="environment", trait="env")
    """Added to the kernel's environment last: always wins."""
    env_drop: Sequence[str] = _setting(tuple, reaches="environment", trait="env_drop")
    """Names and globs withheld from the CLI, beyond :data:`DEFAULT_ENV_DROP`."""
    extra_args: Sequence[str] = _setting(tuple, reaches="argv", trait="extra_args")
    commit_name: str | None = _setting(reaches="environment")
    commit_email: str | None = _setting(reaches="environment")
    max_line_bytes: int = _setting(
        DEFAULT_MAX_LINE_BYTES, reaches="process", trait="max_line_mb", from_trait=_mebibytes
    )
    """Longer stdout lines are reported, not read."""

    def __post_init__(self) -> None:
        # Normalised once, so equal settings compare equal and nothing shares a caller's list.
        normal: dict[str, Any] = {
            "model": model_option(self.model),
            "cwd": os.fspath(self.cwd) if self.cwd is not None else None,
            "env": dict(self.env or {}),
            "env_drop": tuple(self.env_drop),
            "extra_args": tuple(self.extra_args),
            "effort": effort_option(self.effort),
            "fallback_model": self.fallback_model or None,
            "max_budget_usd": None if self.max_budget_usd is None else float(self.max_budget_usd),
            "add_dirs": tuple(os.fspath(d) for d in self.add_dirs),
            "plugin_dirs": tuple(os.fspath(d) for d in self.plugin_dirs),
            "allowed_tools": tuple(self.allowed_tools),
            "disallowed_tools": tuple(self.disallowed_tools),
            # A copy through JSON: plain data that compares by value, and what goes on argv.
            "agents": json.loads(json.dumps(dict(self.agents or {}))),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    def launch_options(self) -> dict[str, Any]:
        """The launch settings alone, by field name (of a ``SessionOptions`` too)."""
        return {f.name: getattr(self, f.name) for f in launch_fields()}


def launch_fields() -> list[dataclasses.Field[Any]]:
    """The fields of :class:`LaunchOptions`, each with its :class:`Setting` as
    ``metadata["launch"]``."""
    return list(dataclasses.fields(LaunchOptions))


@dataclass(frozen=True)
class LaunchSpec(LaunchOptions):
    """Everything that decides how one CLI process is started: the launch options and which
    conversation this process continues."""

    session_id: str | None = None  # --session-id: a new conversation with a known id
    resume: str | None = None  # --resume: continue that conversation
    resume_session_at: str | None = None  # keep history only up to this message uuid
    fork_session: bool = False
    mcp_servers: Sequence[str] = ("byre",)  # in-process sdk servers, answered over control
    settings: Mapping[str, object] = field(
        default_factory=lambda: {"attribution": {"commit": "", "pr": ""}}
    )
    # Launch so that a later set_permission_mode("bypassPermissions") is accepted (the CLI
    # answers bypass_not_launched otherwise); it does not bypass anything by itself.
    allow_bypass: bool = False


def _flag(flag: str, value: object) -> list[str]:
    """A flag field's words: ``--flag=VALUE`` (the equals form keeps a dash-leading value from
    being read as a flag), once per item of a list, a mapping as JSON, a bare ``--flag`` for
    True; nothing when unset, empty or False."""
    if value is None or value is False or value == "":
        return []
    if value is True:
        return [flag]
    if isinstance(value, Mapping):
        return [f"{flag}={json.dumps(value, separators=(',', ':'))}"] if value else []
    if isinstance(value, (list, tuple)):
        return [f"{flag}={item}" for item in value]
    return [f"{flag}={value}"]


def asks_over_stdio(spec: LaunchSpec) -> bool:
    """Whether the CLI is launched to send its permission prompts to the host
    (``--permission-prompt-tool stdio``): in every mode but bypassPermissions. Without it the
    CLI never sends can_use_tool, and tools needing approval are refused with no prompt
    (docs/protocol.md, section 1), in whatever mode it is switched to later."""
    return spec.permission_mode != PermissionMode.BYPASS


def build_argv(spec: LaunchSpec) -> list[str]:
    argv = [
        spec.cli_path or "claude",
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
    for option in launch_fields():
        setting: Setting = option.metadata["launch"]
        if setting.reaches == "flag":
            argv += _flag(setting.flag, getattr(spec, option.name))
    if spec.permission_mode == PermissionMode.BYPASS or spec.allow_bypass:
        argv.append("--allow-dangerously-skip-permissions")
    if asks_over_stdio(spec):
        argv += ["--permission-prompt-tool", "stdio"]
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
    """The kernel's environment, minus ``CLAUDECODE``, :data:`DEFAULT_ENV_DROP` and
    ``spec.env_drop``, plus commit identity and ``spec.env`` (which always wins)."""
    drop = (*DEFAULT_ENV_DROP, *spec.env_drop)
    env = {
        name: value
        for name, value in (os.environ if base is None else base).items()
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in drop)
    }
    env.pop("CLAUDECODE", None)  # else the child believes it is nested in another Claude Code
    if spec.commit_name:
        env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = spec.commit_name
    if spec.commit_email:
        env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = spec.commit_email
    env.update(spec.env)
    return env


def cli_projects_dir(env: Mapping[str, str]) -> Path:
    """The CLI's ``projects`` folder under the environment it is launched with: a folder per
    working directory, each holding that directory's session files."""
    config = env.get("CLAUDE_CONFIG_DIR")
    if not config:
        config = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".claude")
    return Path(config) / "projects"


def make_cli_folders_private(env: Mapping[str, str]) -> None:
    """Create the CLI's config folder and its ``projects`` folder ``0700`` where they are
    missing, before the CLI creates them with the umask's mode (``0755`` under the usual
    ``022``): on a shared host (JupyterHub) every other user could then list which folders a
    user works in and their conversation ids (docs/hub.md; tests/integration/hub). Folders
    that exist are the user's and stay as they are; a HOME we cannot write to is left for the
    CLI to report."""
    projects = cli_projects_dir(env)
    for folder in (projects.parent, projects):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            continue
        except OSError:
            return
        os.chmod(folder, 0o700)  # mkdir's mode went through the umask
