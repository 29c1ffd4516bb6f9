"""Credential files ask first: a PreToolUse hook that routes a read of one to the user.

In the default permission mode the CLI reads files under its working folder without asking, so
``Read(.env)`` or ``cat .env`` put every key of the project into a tool result, with nobody
asked (docs/security.md). Redaction hides the values it recognises in what we show and save,
but the model has read them, and a value of no known shape passes. So a call that reads a
credential file is answered ``"ask"`` by this hook, in every permission mode but
``bypassPermissions``: the CLI then sends its permission prompt (``can_use_tool``, with
``decision_reason_type: "hook"``, docs/protocol.md section 6), which becomes the approval card
in the cell, or, where nobody can click (nbclient, papermill, a turn the CLI started by itself),
the headless policy: denied unless ``Claude.headless_permission = "allow"``.

What counts as a credential file (:func:`is_credential_path`, matched on the file's name and
its folder, case-insensitively):

* ``.env`` and ``.env.*`` (not ``.env.example``, ``.sample``, ``.template``, ``.dist``),
  ``*.env``, ``.envrc``;
* private keys and key stores: ``*.pem``, ``*.key``, ``*.p12``, ``*.pfx``, ``*.jks``,
  ``*.keystore``, ``*.ppk``, ``id_rsa``, ``id_dsa``, ``id_ecdsa``, ``id_ed25519`` (and
  ``_sk``), every file in ``.ssh/`` but ``*.pub``, ``known_hosts``, ``authorized_keys`` and
  ``config``;
* tool logins: ``.netrc``, ``_netrc``, ``.npmrc``, ``.pypirc``, ``.pgpass``, ``.my.cnf``,
  ``.git-credentials``, ``.vault-token``, ``.dockercfg``, ``.docker/config.json``, ``.boto``,
  ``.s3cfg``, ``.aws/credentials``, ``.kube/config``, ``kubeconfig*``, ``gh/hosts.yml``,
  ``credentials.json``, ``application_default_credentials.json``, ``client_secret*.json``.

Which calls (:func:`credential_paths`): ``Read``, ``Edit`` and ``MultiEdit`` of such a file
(an edit's result quotes the file); ``Grep`` whose ``path`` is one, or whose ``glob`` names
one; ``Bash`` whose command names one as a word (``cat .env``, ``grep KEY .env``,
``source .env``, ``. ./.env``, ``< .env``, ``"$HOME/.netrc"``, ``.env*``, ``*.pem``). ``Glob``
lists names, not contents, and is not asked. A shell can spell a name in ways no hook can
read (``cat .e""nv``, ``$(printf ...)``), and a ``Grep`` over a whole folder may reach such a
file: there, redaction is the line that holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..protocol import PermissionMode
from ..session import HookCallback

__all__ = ["ASK_REASON", "credential_paths", "credentials_hook", "is_credential_path"]

ASK_REASON = (
    "byre_jupyter: {path} looks like a credential file (keys, tokens, passwords); reading it "
    "needs the user's approval."
)

_NAMES = frozenset(
    {
        ".envrc", ".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf",
        ".git-credentials", ".vault-token", ".dockercfg", ".boto", ".s3cfg",
        "credentials.json", "application_default_credentials.json",
        "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    }
)  # fmt: skip
_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".env")
#: (folder, file name) pairs: the file is a credential only in that folder.
_IN_FOLDER = frozenset(
    {(".aws", "credentials"), (".kube", "config"), (".docker", "config.json"), ("gh", "hosts.yml")}
)
#: Files of ``.ssh/`` that hold no secret.
_SSH_PUBLIC = ("known_hosts", "authorized_keys", "config")
#: ``.env`` files meant to be committed: names only, no values.
_ENV_TEMPLATES = frozenset({"example", "sample", "template", "dist"})
_GLOB = re.compile(r"[*?\[]")
#: What separates words in a shell command (a file name is a word between these).
_SHELL_SPLIT = re.compile(r"""[\s;|&<>()`'"=$]+""")


def is_credential_path(path: str) -> bool:
    """Whether ``path`` names a credential file (the list in the module docstring). Glob
    characters count as "could be": ``.env*`` and ``*.pem`` are credential paths."""
    parts = [p for p in re.split(r"[\\/]+", path.strip().lower()) if p]
    if not parts:
        return False
    name, folder = parts[-1], parts[-2] if len(parts) > 1 else ""
    if name in _NAMES or (folder, name) in _IN_FOLDER or name.startswith("kubeconfig"):
        return True
    if name.startswith("client_secret") and name.endswith(".json"):
        return True
    if folder == ".ssh" and not name.endswith(".pub") and not name.startswith(_SSH_PUBLIC):
        return True
    if name == ".env":
        return True
    if name.startswith(".env."):
        return name.split(".")[2] not in _ENV_TEMPLATES
    if name.endswith(_SUFFIXES):
        return True
    # A glob that could name one: "*.pem" ends like one, ".e*" does not.
    return bool(_GLOB.search(name)) and name.startswith(".env")


def credential_paths(tool_name: str, tool_input: Mapping[str, Any]) -> list[str]:
    """The credential files a tool call would read (the rules in the module docstring)."""
    candidates: list[str] = []
    if tool_name in ("Read", "Edit", "MultiEdit"):
        candidates = [_str(tool_input.get("file_path"))]
    elif tool_name == "Grep":
        candidates = [_str(tool_input.get("path")), _str(tool_input.get("glob"))]
    elif tool_name == "Bash":
        candidates = _SHELL_SPLIT.split(_str(tool_input.get("command")))
    return [c for c in candidates if c and is_credential_path(c)]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def credentials_hook() -> HookCallback:
    """A PreToolUse hook that answers "ask" for a call reading a credential file, unless the
    session runs in ``bypassPermissions`` (the user chose to be asked nothing)."""

    async def ask_first(hook_input: Mapping[str, Any]) -> Mapping[str, Any]:
        if hook_input.get("permission_mode") == PermissionMode.BYPASS:
            return {}
        tool, args = hook_input.get("tool_name"), hook_input.get("tool_input")
        if not isinstance(tool, str) or not isinstance(args, Mapping):
            return {}
        found = credential_paths(tool, args)
        if not found:
            return {}
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": ASK_REASON.format(path=os.path.basename(found[0])),
            }
        }

    return ask_first
