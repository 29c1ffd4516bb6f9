"""Credential files ask first: a PreToolUse hook that routes a read of one to the user.

In the default permission mode the CLI reads files under its working folder without asking, so
``Read(.env)`` or ``cat .env`` put every key of the project into a tool result, with nobody
asked (docs/security.md). Redaction hides the values it recognises in what we show and save,
but the model has read them, and a value of no known shape passes. So a call that reads a
credential file is answered ``"ask"`` by this hook, in every permission mode,
``bypassPermissions`` included (the CLI honours a hook's "ask" there, and a mode that lets
every tool run is a standing allowance like *Always allow*, given before anyone knew the
call would read a key): the CLI then sends its permission prompt (``can_use_tool``, with
``decision_reason_type: "hook"``, docs/protocol.md section 6), which becomes the approval card
in the cell, or, where nobody can click (nbclient, papermill, a turn the CLI started by itself),
the headless policy: denied unless ``Claude.headless_permission = "allow"``.

What counts as a credential file is one table, :data:`CLASSES`, a class of files per row with
the reason it is one; :func:`credential_class` matches a path against it, case-insensitively,
on the file's name and the folders above it. A backup or editor copy of one (``.env~``,
``id_rsa.bak``, ``.netrc.orig``, ``#.env#``) is one too.

A file is judged by what it is, not by how the call spells it (:func:`resolve`): the path is
also resolved, in the session's working folder, through ``~``, ``..`` and every symlink
(``notes.txt -> .env``, ``/proc/self/fd/3``, ``/proc/self/root/home/u/.netrc``), and the call
asks when either the path as given or the file it reaches is one.

Which calls (:func:`credential_paths`): ``Read``, ``Edit`` and ``MultiEdit`` of such a file
(an edit's result quotes the file); ``Grep`` whose ``path`` is one or a folder the table names
such files in (``~/.ssh``, ``~/.aws``, ``~/.claude``, ``/proc/self``), or whose ``glob`` names
one; ``Bash`` whose command names one as a word (``cat .env``, ``grep KEY .env``,
``source .env``, ``. ./.env``, ``< .env``, ``"$HOME/.netrc"``, ``.env*``, ``*.pem``). ``Glob``
lists names, not contents, and is not asked. A shell can spell a name in ways no hook can
read (``cat .e""nv``, ``$(printf ...)``), and a ``Grep`` over another folder may reach such a
file: there, redaction is the line that holds.

No standing answer covers such a call (``approvals.Approvals.ask`` shows the card every time,
whatever the user allowed always), and the hook asks under ``acceptEdits`` and
``bypassPermissions`` too.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..session import HookCallback

__all__ = [
    "ASK_REASON",
    "CLASSES",
    "CredentialClass",
    "credential_class",
    "credential_paths",
    "credentials_hook",
    "is_credential_folder",
    "is_credential_path",
    "resolve",
]

ASK_REASON = (
    "byre_jupyter: {path} looks like a credential file ({what}); reading it needs the user's "
    "approval."
)


@dataclass(frozen=True)
class CredentialClass:
    """One kind of credential file: what it holds (for the card), the path patterns that name
    it, and the files among those that hold no secret.

    A pattern is matched with :mod:`fnmatch` against the path's last components (``.aws/
    credentials`` against the file and its folder); one that starts with ``/`` against the
    whole path."""

    holds: str
    patterns: tuple[str, ...]
    unless: tuple[str, ...] = ()


CLASSES: tuple[CredentialClass, ...] = (
    # Environment files: every variable of a project, its API keys and database URLs first.
    # The templates committed beside them list names only.
    CredentialClass(
        "environment variables, keys",
        (".env", ".env.*", "*.env", ".envrc"),
        unless=(".env.example", ".env.sample", ".env.template", ".env.dist"),
    ),
    # Private keys and key stores: whoever reads one is the key's owner. Of ~/.ssh only the
    # public keys and the host and client settings hold no secret.
    CredentialClass(
        "a private key",
        ("*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore", "*.ppk", "id_rsa",
         "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", ".ssh/*"),
        unless=(".ssh/*.pub", ".ssh/known_hosts*", ".ssh/authorized_keys*", ".ssh/config*"),
    ),
    # Command line tools' logins: passwords and tokens in the tool's own file.
    CredentialClass(
        "a tool's login",
        (".netrc", "_netrc", ".npmrc", ".pypirc", ".pgpass", ".my.cnf", ".git-credentials",
         ".vault-token", ".dockercfg", ".docker/config.json", ".boto", ".s3cfg",
         ".aws/credentials", ".kube/config", "kubeconfig*", "gh/hosts.yml"),
    ),
    # Cloud and data platforms a notebook logs in to: the token files their clients write.
    CredentialClass(
        "a cloud or data platform's token",
        (".kaggle/kaggle.json", ".databrickscfg", "huggingface/token", ".huggingface/token",
         ".streamlit/secrets.toml", "credentials.json", "application_default_credentials.json",
         "client_secret*.json"),
    ),
    # Claude Code's own login (docs/security.md): the OAuth token this CLI runs on.
    CredentialClass("Claude's login", (".claude/.credentials.json",)),
    # Jupyter's runtime files: a server's file holds its token (the whole server, every
    # kernel), a kernel's connection file its HMAC key (run any code in that kernel).
    CredentialClass(
        "a Jupyter token or kernel key",
        ("jpserver-*.json", "nbserver-*.json", "kernel-*.json", "jupyter_cookie_secret"),
    ),
    # A process's environment, command line and open files: every variable it started with
    # (the CLI's ANTHROPIC_API_KEY, the kernel's JUPYTER_TOKEN), a server started with
    # --IdentityProvider.token=..., and a file it holds open, which this process cannot name
    # (/proc/self/fd/3 is another file in the CLI than here). /proc/self is resolved first.
    CredentialClass(
        "a process's environment, command line or open files",
        ("/proc/*/environ", "/proc/*/task/*/environ", "/proc/*/cmdline",
         "/proc/*/task/*/cmdline", "/proc/*/fd/*", "/proc/*/task/*/fd/*", "/proc/*/mem",
         "/dev/fd/*"),
    ),
)  # fmt: skip

#: What editors and tools append to a copy of a file (a credential's copy is a credential).
_BACKUP = re.compile(r"(?:~|\.(?:bak|backup|old|orig|save|sav|swp|swo|tmp))$")
_GLOB = re.compile(r"[*?\[]")
#: What separates words in a shell command (a file name is a word between these); the second
#: keeps ``$`` so a path with a variable in it stays one word (``/proc/$$/environ``).
_SHELL_SPLIT = re.compile(r"""[\s;|&<>()`'"=$]+""")
_SHELL_WORDS = re.compile(r"""[\s;|&<>()`'"=]+""")


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[\\/]+", path.strip().lower()) if p]


def _matches(pattern: str, parts: list[str]) -> bool:
    if pattern.startswith("/"):
        want = pattern[1:].split("/")
        return len(want) == len(parts) and all(map(fnmatch.fnmatchcase, parts, want))
    want = pattern.split("/")
    if len(want) > len(parts):
        return False
    return all(map(fnmatch.fnmatchcase, parts[-len(want) :], want))


def _by_name(parts: list[str]) -> CredentialClass | None:
    for kind in CLASSES:
        if any(_matches(p, parts) for p in kind.patterns) and not any(
            _matches(p, parts) for p in kind.unless
        ):
            return kind
    name = parts[-1]
    # A glob that could name one: "*.pem" ends like one (fnmatch above), ".env*" starts like
    # one, ".e*" does not.
    if _GLOB.search(name) and name.startswith(".env"):
        return CLASSES[0]
    # A backup or an editor's copy: "#.env#" (Emacs), ".env~", "id_rsa.bak".
    bare = name[1:-1] if len(name) > 2 and name[0] == name[-1] == "#" else _BACKUP.sub("", name)
    if bare and bare != name:
        return _by_name([*parts[:-1], bare])
    return None


def resolve(path: str, cwd: str | None = None) -> str | None:
    """The file ``path`` reaches from ``cwd``: ``~`` expanded, ``..`` and every symlink resolved
    (``/proc/self`` becomes ``/proc/<pid>``). None if it cannot be resolved (a name the OS
    refuses)."""
    try:
        full = os.path.join(cwd or os.getcwd(), os.path.expanduser(path))
        return os.path.realpath(full)
    except (OSError, ValueError):  # a NUL byte, a name too long: the literal check stands
        return None


def credential_class(path: str, cwd: str | None = None) -> CredentialClass | None:
    """The credential class ``path`` belongs to, as given or as resolved from ``cwd`` (a symlink
    to ``.env`` is an environment file), or None. Glob characters count as "could be":
    ``.env*`` and ``*.pem`` are credential paths."""
    parts = _parts(path)
    if not parts:
        return None
    found = _by_name(parts)
    if found is not None:
        return found
    target = resolve(path, cwd)
    return _by_name(_parts(target)) if target else None


def _folder_of_one(parts: list[str]) -> bool:
    """Whether the folder ``parts`` is one a class names its files in (``.ssh``, ``.aws``,
    ``.claude``, ``/proc/<pid>``): a search over it reads them."""
    for kind in CLASSES:
        for pattern in kind.patterns:
            head = pattern.rsplit("/", 1)[0] if "/" in pattern.lstrip("/") else ""
            if head and _matches(head, parts):
                return True
    return False


def is_credential_folder(path: str, cwd: str | None = None) -> bool:
    """Whether ``path``, as given or resolved, is a folder the table names credential files
    in (a ``Grep`` over it reads them)."""
    parts = _parts(path)
    if parts and _folder_of_one(parts):
        return True
    target = resolve(path, cwd)
    return bool(target) and _folder_of_one(_parts(target or ""))


def is_credential_path(path: str, cwd: str | None = None) -> bool:
    """Whether ``path`` names a credential file (:func:`credential_class`)."""
    return credential_class(path, cwd) is not None


def credential_paths(
    tool_name: str, tool_input: Mapping[str, Any], cwd: str | None = None
) -> list[str]:
    """The credential files a tool call would read (the rules in the module docstring), as the
    call names them; relative paths start at ``cwd``, the folder the CLI runs in."""
    candidates: list[str] = []
    if tool_name in ("Read", "Edit", "MultiEdit"):
        candidates = [_str(tool_input.get("file_path"))]
    elif tool_name == "Grep":
        folder = _str(tool_input.get("path"))
        if folder and is_credential_folder(folder, cwd):
            return [folder]
        candidates = [folder, _str(tool_input.get("glob"))]
    elif tool_name == "Bash":
        command = _str(tool_input.get("command"))
        words = _SHELL_SPLIT.split(command)
        candidates = [*words, *(w for w in _SHELL_WORDS.split(command) if w not in words)]
    return [c for c in candidates if c and is_credential_path(c, cwd)]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def credentials_hook() -> HookCallback:
    """A PreToolUse hook that answers "ask" for a call reading a credential file, whatever the
    session's permission mode (the module docstring says why)."""

    async def ask_first(hook_input: Mapping[str, Any]) -> Mapping[str, Any]:
        tool, args = hook_input.get("tool_name"), hook_input.get("tool_input")
        if not isinstance(tool, str) or not isinstance(args, Mapping):
            return {}
        cwd = hook_input.get("cwd")
        cwd = cwd if isinstance(cwd, str) and cwd else None
        found = credential_paths(tool, args, cwd)
        if not found:
            return {}
        kind = credential_class(found[0], cwd)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": ASK_REASON.format(
                    path=os.path.basename(found[0]), what=kind.holds if kind else "secrets"
                ),
            }
        }

    return ask_first
