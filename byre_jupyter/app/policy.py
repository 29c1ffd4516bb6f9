"""The administrator's rules and the kernel's spending cap: what byre offers and refuses.

Claude Code enforces *managed settings*, a policy an administrator installs for every user of
the machine (docs/hub.md, "Policy and spend"). On Linux the CLI reads
``/etc/claude-code/managed-settings.json`` and then every ``*.json`` of
``/etc/claude-code/managed-settings.d/`` (names not starting with ``.``, in name order); macOS
and Windows have folders of their own (:data:`MANAGED_FOLDERS`). CLI 2.1.328 reads that fixed
folder: its ``CLAUDE_CODE_MANAGED_SETTINGS_PATH`` variable did not move it (measured: a policy
there was not applied, the same file in ``/etc/claude-code`` was). The CLI does the enforcing;
byre reads the same files only so that it never offers what they forbid (the header's mode
menu, a ``%config``) and can say why (``%claude doctor``), instead of the CLI quietly starting
in another mode. ``BYRE_MANAGED_SETTINGS_DIR`` points byre (not the CLI) at another folder, for
tests and for a look at a policy before it is installed.

A file that cannot be read or parsed is left out with a warning naming it, as a damaged file
must not stop the kernel; the CLI then applies what it makes of it.

The kernel's spending cap (``Claude.kernel_budget_usd``) is byre's own: :func:`budget_refusal`
says whether a turn may be sent, from what the kernel's turns have cost so far
(``Conversations.spent``, the sum ``%claude usage`` shows).
"""

from __future__ import annotations

import json
import math
import os
import sys
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ByreWarning
from ..protocol import PERMISSION_MODES

__all__ = [
    "MANAGED_DIR_ENV",
    "MANAGED_FOLDERS",
    "POLICY_MODES",
    "ManagedPolicy",
    "budget_refusal",
    "describe",
    "managed_folder",
    "mode_refusal",
    "offered_modes",
    "read_policy",
]

#: Where the CLI reads managed settings, by ``sys.platform`` prefix (CLI 2.1.328).
MANAGED_FOLDERS = {
    "darwin": "/Library/Application Support/ClaudeCode",
    "win32": "C:\\Program Files\\ClaudeCode",
}
LINUX_FOLDER = "/etc/claude-code"
#: byre's own override of the folder (the CLI does not read it).
MANAGED_DIR_ENV = "BYRE_MANAGED_SETTINGS_DIR"
#: A managed settings file larger than this is not read (a policy is a few kB).
MAX_FILE_BYTES = 4 * 2**20

#: The setting that takes bypassPermissions away, and the one that takes auto mode away.
BYPASS_OFF = "permissions.disableBypassPermissionsMode"
AUTO_OFF = "permissions.disableAutoMode"
#: The permission modes a policy can take away.
POLICY_MODES = ("bypassPermissions", "auto")


@dataclass(frozen=True)
class ManagedPolicy:
    """What the managed settings of one folder say, as far as byre acts on it."""

    folder: str
    #: The files read, in the CLI's order (the main file, then the drop-ins by name).
    files: tuple[str, ...] = ()
    #: ``permissions.deny`` rules of all the files, in order, each once.
    deny: tuple[str, ...] = ()
    #: The file that turns bypassPermissions off (the first one that does), or None.
    bypass_off_in: str | None = None
    #: The file that turns auto mode off, or None.
    auto_off_in: str | None = None
    #: ``availableModels``: the only models a user may pick, or None (no restriction).
    models: tuple[str, ...] | None = None
    #: Files left out, each with why (unreadable, not JSON, not an object).
    problems: tuple[str, ...] = ()

    def forbids(self, mode: str) -> tuple[str, str] | None:
        """(the setting, the file) that forbids permission mode ``mode``, or None."""
        if mode == "bypassPermissions" and self.bypass_off_in is not None:
            return BYPASS_OFF, self.bypass_off_in
        if mode == "auto" and self.auto_off_in is not None:
            return AUTO_OFF, self.auto_off_in
        return None


def describe(policy: ManagedPolicy) -> str:
    """The policy in one line, for ``%claude doctor``."""
    if not policy.files:
        found = f"none in `{policy.folder}`"
    else:
        found = ", ".join(f"`{path}`" for path in policy.files)
        rules = len(policy.deny)
        found += f": {rules} deny rule{'' if rules == 1 else 's'}"
        off = [mode for mode in POLICY_MODES if policy.forbids(mode)]
        found += "; " + (
            " and ".join(off) + " turned off" if off else "every permission mode allowed"
        )
        if policy.models is not None:
            found += "; models limited to " + (", ".join(policy.models) or "none")
    if policy.problems:
        found += "; left out: " + "; ".join(policy.problems)
    return found


def managed_folder(env: Mapping[str, str] | None = None, platform: str | None = None) -> str:
    """The folder of the managed settings the CLI reads here (or ``$BYRE_MANAGED_SETTINGS_DIR``)."""
    env = os.environ if env is None else env
    override = env.get(MANAGED_DIR_ENV)
    if override:
        return override
    platform = sys.platform if platform is None else platform
    for prefix, folder in MANAGED_FOLDERS.items():
        if platform.startswith(prefix):
            return folder
    return LINUX_FOLDER


def _documents(folder: Path) -> tuple[list[Path], list[str]]:
    """The files the CLI reads in ``folder``, in its order, and problems listing them."""
    files = [folder / "managed-settings.json"]
    drop_ins = folder / "managed-settings.d"
    try:
        names = sorted(
            entry.name
            for entry in os.scandir(drop_ins)
            if entry.name.endswith(".json") and not entry.name.startswith(".")
        )
    except (FileNotFoundError, NotADirectoryError):
        names = []  # no drop-ins (the CLI reads a non-folder there as none too)
    except OSError as e:
        return files, [f"{drop_ins} could not be listed ({e.strerror or e})"]
    return files + [drop_ins / name for name in names], []


def _load(path: Path) -> dict[str, Any] | str | None:
    """The file's object; a problem in words; None when there is no file."""
    if not path.is_file():
        return None  # no file, or a folder named like a document (the CLI skips it too)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        return f"{path} could not be read ({e.strerror or e})"
    if len(data) > MAX_FILE_BYTES:
        return f"{path} is larger than {MAX_FILE_BYTES // 2**20} MiB"
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError) as e:
        return f"{path} is not valid JSON ({e})"
    if not isinstance(parsed, dict):
        return f"{path} holds a JSON {type(parsed).__name__}, not an object of settings"
    return parsed


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def read_policy(folder: str | None = None) -> ManagedPolicy:
    """The managed settings in ``folder`` (default: :func:`managed_folder`). Never raises: a
    file that cannot be used is named in ``problems``, left out, and warned about (once: the
    default warning filter shows each message once)."""
    folder = managed_folder() if folder is None else folder
    paths, problems = _documents(Path(folder))
    files: list[str] = []
    deny: list[str] = []
    models: list[str] | None = None
    bypass_off = auto_off = None
    for path in paths:
        loaded = _load(path)
        if loaded is None:
            continue
        if isinstance(loaded, str):
            problems.append(loaded)
            continue
        files.append(str(path))
        permissions = loaded.get("permissions")
        permissions = permissions if isinstance(permissions, dict) else {}
        deny += _strings(permissions.get("deny"))
        if bypass_off is None and permissions.get("disableBypassPermissionsMode") == "disable":
            bypass_off = str(path)
        # The CLI takes auto mode away for either spelling.
        auto = (permissions.get("disableAutoMode"), loaded.get("disableAutoMode"))
        if auto_off is None and "disable" in auto:
            auto_off = str(path)
        if "availableModels" in loaded:
            models = [*(models or []), *_strings(loaded["availableModels"])]
    for problem in problems:
        warnings.warn(f"managed settings: {problem}; byre leaves it out", ByreWarning, stacklevel=2)
    return ManagedPolicy(
        folder=folder,
        files=tuple(files),
        deny=_unique(deny),
        bypass_off_in=bypass_off,
        auto_off_in=auto_off,
        models=None if models is None else _unique(models),
        problems=tuple(problems),
    )


def offered_modes(policy: ManagedPolicy, modes: Sequence[str] = PERMISSION_MODES) -> list[str]:
    """The permission modes a menu offers under ``policy``: ``modes`` but the forbidden ones.

    The one place the offer is filtered; ``modes`` is the one list of modes
    (:data:`~byre_jupyter.protocol.PERMISSION_MODES`)."""
    return [mode for mode in modes if policy.forbids(mode) is None]


def mode_refusal(policy: ManagedPolicy, mode: str, current: str | None = None) -> str | None:
    """Why ``mode`` cannot be used under ``policy`` (naming the setting and its file), or
    None when it can."""
    forbidden = policy.forbids(mode)
    if forbidden is None:
        return None
    setting, path = forbidden
    stays = f"; the permission mode stays {current!r}" if current else ""
    return (
        f'{mode} is turned off by this machine\'s managed settings ({setting} = "disable" '
        f"in {path}), which Claude Code enforces{stays}. Ask your administrator if you need it."
    )


def budget_refusal(spent: float, budget: float | None) -> str | None:
    """Why no further turn may be sent when the kernel's turns have cost ``spent`` dollars
    and the cap is ``budget`` (None: no cap), or None when one may."""
    if budget is None or spent < budget:
        return None
    raised = max(math.ceil(budget * 2), math.ceil(spent) + 1)
    # In USD, not "$": two "$" in one paragraph read as LaTeX in Jupyter's Markdown.
    return (
        f"Kernel budget reached: this kernel's turns have cost {spent:.4f} USD, and "
        f"Claude.kernel_budget_usd is {budget:.4f} USD. Nothing was sent. To go on, raise the "
        f"cap, e.g. `%config Claude.kernel_budget_usd = {raised}` (None: no cap)."
    )
