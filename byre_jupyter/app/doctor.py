"""``%claude doctor``: what this kernel needs for ``%%claude``, each check with a fix.

The checks are plain functions of a configured CLI path and an environment, so tests can run
them against fake ``claude`` and ``node`` executables. Marks are ✓ and ✗ (in every font; emoji
are not).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from ..bridge import Bridge
from ..errors import ByreError
from ..transport.launch import bypass_refusal, find_cli, gateway_hint
from ..version import CLI_INSTALL, TESTED_CLI
from .policy import ManagedPolicy, describe

__all__ = ["CLI_INSTALL", "TESTED_CLI", "Check", "bridge_check", "doctor_checks", "render_checks"]

#: The releases we claim: the tested one and later 2.1.x (same protocol line); below it the
#: control messages we rely on are untested, and 2.2 may change the protocol.
SUPPORTED_CLI = (TESTED_CLI, (2, 2, 0))
#: npm's ``engines`` for CLI 2.1.198 and later: Node 20 installs 2.1.197 at most.
CLI_NEEDS_NODE = 22
#: ipykernel releases before this handle widget messages (Stop, the model menu, approval
#: buttons) only when the running cell ends (README, "Install").
IPYKERNEL_LIVE_WIDGETS = (7, 4)

_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def _version(text: str) -> tuple[int, int, int] | None:
    m = _VERSION.search(text)
    return (int(m[1]), int(m[2]), int(m[3])) if m else None


def _dotted(v: tuple[int, ...]) -> str:
    return ".".join(map(str, v))


def _run_version(path: str) -> str:
    return subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
    ).stdout.strip()


def cli_check(configured: str | None, env: Mapping[str, str]) -> Check:
    try:
        path = find_cli(configured, env)
    except ByreError as e:
        return Check("Claude CLI", False, str(e))
    try:
        out = _run_version(path)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Check(
            "Claude CLI", False, f"`{path}` does not run: {e}. Reinstall it: `{CLI_INSTALL}`"
        )
    version = _version(out)
    low, high = SUPPORTED_CLI
    tested = _dotted(TESTED_CLI)
    if version is None:
        return Check(
            "Claude CLI", False, f"`{path}` printed no version ({out[:80]!r}): `{CLI_INSTALL}`"
        )
    if version == TESTED_CLI:
        return Check("Claude CLI", True, f"`{path}` {tested} (the tested release)")
    if low <= version < high:
        return Check(
            "Claude CLI",
            True,
            f"`{path}` {_dotted(version)}: supported, newer than the tested {tested}; "
            f"if something misbehaves, `{CLI_INSTALL}`",
        )
    why = "older than" if version < low else "newer than the supported 2.1.x line after"
    fix = CLI_INSTALL
    if version < low:
        fix += f" (needs Node.js >= {CLI_NEEDS_NODE}; Node 20 gets 2.1.197 at most)"
    return Check(
        "Claude CLI",
        False,
        f"`{path}` {_dotted(version)} is {why} the tested {tested}: `{fix}`",
    )


def node_check(env: Mapping[str, str], cli_ok: bool) -> Check:
    """Node runs only npm's install of the CLI (the CLI itself is a native binary)."""
    need = f"Node.js >= {CLI_NEEDS_NODE}"
    node = shutil.which("node", path=env.get("PATH"))
    if node is None:
        if cli_ok:
            return Check("Node.js", True, "not found; not needed to run the installed CLI")
        return Check(
            "Node.js",
            False,
            f"not found: install {need} (nodejs.org, or nvm), then `{CLI_INSTALL}`",
        )
    try:
        version = _version(_run_version(node))
    except (OSError, subprocess.TimeoutExpired) as e:
        return Check("Node.js", cli_ok, f"`{node}` does not run: {e}")
    if version is None:
        return Check("Node.js", cli_ok, f"`{node}` printed no version")
    if version[0] >= CLI_NEEDS_NODE:
        return Check("Node.js", True, f"{_dotted(version)} at `{node}`")
    limit = f"npm installs CLI 2.1.197 at most on Node {version[0]} (2.1.198 and later need {need})"
    if cli_ok:
        return Check("Node.js", True, f"{_dotted(version)}: runs the installed CLI; {limit}")
    return Check(
        "Node.js",
        False,
        f"{_dotted(version)}: {limit}. Install {need} (nodejs.org, or nvm), then `{CLI_INSTALL}`",
    )


def credentials_check(env: Mapping[str, str]) -> Check:
    home = env.get("HOME") or os.path.expanduser("~")
    if env.get("ANTHROPIC_API_KEY") or env.get("CLAUDE_CODE_OAUTH_TOKEN"):
        base = env.get("ANTHROPIC_BASE_URL")
        where = f" (API at {base})" if base else ""
        return Check("Credentials", True, f"API key or token in the environment{where}")
    if os.path.exists(os.path.join(home, ".claude", ".credentials.json")):
        return Check("Credentials", True, "Claude login found (~/.claude/.credentials.json)")
    return Check(
        "Credentials",
        False,
        "no login and no ANTHROPIC_API_KEY: run `claude` once in a terminal and log in, "
        "or set ANTHROPIC_API_KEY",
    )


def ipykernel_check() -> Check:
    try:
        import ipykernel
    except ImportError:
        return Check("ipykernel", False, "not installed: `pip install ipykernel`")
    version = str(getattr(ipykernel, "__version__", "0.0"))
    parsed = _version(version + ".0.0") or (0, 0, 0)
    if parsed[:2] >= IPYKERNEL_LIVE_WIDGETS:
        return Check("ipykernel", True, version)
    return Check(
        "ipykernel",
        False,
        f"{version}: everything works, except that widget clicks (Stop, the model menu, "
        "approval buttons) are handled only when the running cell ends; the ■ button "
        "(interrupt) stops a turn at once. Fix: `pip install -U 'ipykernel>=7.4'` "
        "(needs Python >= 3.11)",
    )


def root_check(env: Mapping[str, str]) -> Check | None:
    refusal = bypass_refusal(env)
    if refusal is None:
        return None
    return Check("bypassPermissions as root", False, refusal)


#: The frontends' names for the bridge's hello (labextension/src/index.ts).
_FRONTENDS = {"lab": "JupyterLab", "notebook": "Notebook 7"}
BRIDGE_FIX = (
    "install byre_jupyter in the environment that runs JupyterLab or Notebook 7 "
    "(`jupyter labextension list` there shows byre-jupyter-bridge enabled), then reload the page"
)


def bridge_check(bridge: Bridge | None, frontend: str, vscode: bool) -> Check | None:
    """Whether the frontend bridge (docs/bridge.md) serves this notebook; None in a terminal."""
    if frontend == "terminal":
        return None
    name = "Frontend bridge"
    hello = bridge.hello if bridge is not None else None
    if bridge is not None and hello is not None:
        shown = _FRONTENDS.get(hello.frontend, hello.frontend)
        # Each page showing the notebook has a comm; the newest serves (docs/bridge.md).
        pages = f" (1 of {bridge.pages} pages, the newest)" if bridge.pages > 1 else ""
        return Check(
            name,
            True,
            f"connected: {shown}{pages}, bridge {hello.version}, for `{hello.path}`; Claude "
            "reads the cells as they are on screen",
        )
    saved = "Claude's notebook tool reads the saved file, which may lag behind the screen"
    if vscode:
        return Check(name, True, f"none in VS Code: {saved} (save before asking)")
    if frontend == "headless":
        return Check(name, True, f"none in a headless run (nbclient, papermill): {saved}")
    if bridge is not None and bridge.refused is not None:
        return Check(
            name,
            False,
            f"the page runs a bridge of another protocol ({bridge.refused}): reload the page "
            "(and restart JupyterLab if byre_jupyter was upgraded)",
        )
    return Check(
        name,
        False,
        f"not connected for this notebook: {saved}. Fix: {BRIDGE_FIX}. (Right after "
        "`%load_ext byre_jupyter` in the same cell it connects only when that cell ends.)",
    )


def policy_check(policy: ManagedPolicy) -> Check:
    """The administrator's managed settings in force (app/policy.py): the files, how many
    deny rules, the permission modes turned off, the models allowed; ✗ for a file that
    could not be read."""
    return Check("Managed settings", not policy.problems, describe(policy))


def doctor_checks(
    configured: str | None,
    env: Mapping[str, str],
    frontend: str,
    bridge: Check | None = None,
    policy: ManagedPolicy | None = None,
) -> list[Check]:
    cli = cli_check(configured, env)
    checks = [cli, credentials_check(env), ipykernel_check(), node_check(env, cli.ok)]
    hint = gateway_hint(env)
    if hint is not None:
        configured_ok = cli.ok and bool(env.get("HOME"))
        detail = "gateway-started kernel; HOME and the CLI are there" if configured_ok else hint
        checks.append(Check("Kernel gateway", configured_ok, detail))
    root = root_check(env)
    if root is not None:
        checks.append(root)
    if policy is not None:
        checks.append(policy_check(policy))
    checks.append(Check("Frontend", True, frontend))
    if bridge is not None:
        checks.append(bridge)
    checks.append(Check("Python", True, sys.version.split()[0]))
    return checks


def render_checks(checks: list[Check]) -> str:
    """A Markdown table; ``|`` in details is escaped so a path cannot break a row."""
    lines = ["| check | | detail |", "|---|---|---|"]
    for c in checks:
        detail = c.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {c.name} | {'✓' if c.ok else '✗'} | {detail} |")
    return "\n".join(lines)
