"""Permission decisions: the one decision type of every approval, and standing allowances.

The CLI asks only when launched with ``--permission-prompt-tool stdio`` and a mode other than
``bypassPermissions`` (docs/protocol.md, section 6). A :data:`PermissionCallback` decides; its
answer is a :data:`Decision`, an :class:`Allow` or a :class:`Deny`. The same two types answer
the approvals of Claude's tools in the kernel (``tools/policy.py``) and the approval card's
click (``ui/approval_card.py``): one value from the click to the wire.

An :class:`Allowance` is what "Always allow" keeps: which later calls of one tool it covers,
never more than the card showed (docs/security.md, "What the allowances cover"): the exact
command, or a prefix rule the user picked (``Bash(npm test:*)``, written as Claude Code writes
its own rules) that no compound command matches; the exact file, its path resolved; every call
of a read-only tool; else the exact input.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..protocol import PermissionMode

__all__ = [
    "Allow",
    "Allowance",
    "Decision",
    "Deny",
    "PermissionCallback",
    "PermissionRequest",
    "Scope",
    "default_policy",
    "is_simple_command",
]


@dataclass(frozen=True)
class PermissionRequest:
    tool_name: str
    input: Mapping[str, Any]
    tool_use_id: str | None = None
    description: str | None = None
    suggestions: Sequence[Mapping[str, Any]] = ()
    blocked_path: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_request(cls, request: Mapping[str, Any]) -> PermissionRequest:
        suggestions = request.get("permission_suggestions")
        tool_input = request.get("input")
        return cls(
            tool_name=str(request.get("tool_name", "")),
            input=tool_input if isinstance(tool_input, Mapping) else {},
            tool_use_id=request.get("tool_use_id")
            if isinstance(request.get("tool_use_id"), str)
            else None,
            description=request.get("description")
            if isinstance(request.get("description"), str)
            else None,
            suggestions=tuple(s for s in suggestions if isinstance(s, Mapping))
            if isinstance(suggestions, list)
            else (),
            blocked_path=request.get("blocked_path")
            if isinstance(request.get("blocked_path"), str)
            else None,
            raw=request,
        )


#: What an allowance covers: every call of the tool, the exact command, commands starting with
#: a prefix, one file, or the exact input.
Scope = Literal["tool", "command", "prefix", "file", "input"]

# Anything that lets one Bash command run another, or write where the prefix does not say:
# separators (; & | newline), substitution ($( ) and backticks, <( )), redirection, subshells
# and groups, escapes and line continuations. A prefix rule matches none of these, even quoted
# (asking once too often is cheap; a quoted-looking ";" that is not quoted is not).
_NOT_SIMPLE = re.compile(r"[;&|<>()`$\\{}\n\r]|[^\x20-\x7e]")
# A command word a prefix rule may name: a program or a subcommand, nothing a shell expands.
_WORD = re.compile(r"[A-Za-z0-9_./+-]+")
#: The keys of Bash's input that do not change what runs (the model's claim, the time limit).
_COMMAND_NOISE = frozenset({"command", "description", "timeout", "run_in_background"})


def is_simple_command(command: str) -> bool:
    """One program with plain arguments: no operator, substitution, redirection, escape or
    non-ASCII character anywhere (docs/security.md, "What the allowances cover")."""
    return bool(command.strip()) and _NOT_SIMPLE.search(command) is None


def _canonical(tool_input: Mapping[str, Any]) -> str:
    return json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)


def resolve_path(path: str, cwd: str | None) -> str:
    """``path`` as the file it names: relative to ``cwd``, ``..`` and symlinks resolved."""
    return os.path.realpath(os.path.join(cwd or os.getcwd(), os.path.expanduser(path)))


@dataclass(frozen=True)
class Allowance:
    """One "Always allow" answer: which later calls of ``tool`` it covers.

    ``key`` names the input field it looks at (``command``, ``file_path``, ...); ``value`` is
    the command, the prefix, the resolved path or the canonical input. Build one with the
    class methods; :meth:`covers` decides a call.
    """

    tool: str
    scope: Scope
    key: str = ""
    value: str = ""

    @classmethod
    def for_tool(cls, tool: str) -> Allowance:
        return cls(tool, "tool")

    @classmethod
    def for_command(cls, tool: str, key: str, command: str) -> Allowance:
        return cls(tool, "command", key, command)

    @classmethod
    def for_prefix(cls, tool: str, key: str, prefix: str) -> Allowance:
        return cls(tool, "prefix", key, prefix)

    @classmethod
    def for_file(cls, tool: str, key: str, path: str, cwd: str | None = None) -> Allowance:
        return cls(tool, "file", key, resolve_path(path, cwd))

    @classmethod
    def for_input(cls, tool: str, tool_input: Mapping[str, Any]) -> Allowance:
        return cls(tool, "input", "", _canonical(tool_input))

    @staticmethod
    def prefixes(command: str) -> tuple[str, ...]:
        """The prefix rules a card may offer for ``command``, narrowest first: its first two
        words when the second is a subcommand (``npm test``), then its first word. None for a
        command that is not simple: such a rule could never cover it."""
        if not is_simple_command(command):
            return ()
        words = command.split(" ")
        words = [w for w in words if w]
        if not words or not _WORD.fullmatch(words[0]):
            return ()
        found = [words[0]]
        if len(words) > 1 and re.fullmatch(r"[A-Za-z][A-Za-z0-9_.+-]*", words[1]):
            found.insert(0, f"{words[0]} {words[1]}")
        return tuple(found)

    @property
    def rule(self) -> str:
        """The allowance as a Claude Code permission rule: ``Bash(npm test:*)``."""
        if self.scope == "tool":
            return self.tool
        if self.scope == "prefix":
            return f"{self.tool}({self.value}:*)"
        return f"{self.tool}({self.value})"

    def covers(self, tool: str, tool_input: Mapping[str, Any], cwd: str | None = None) -> bool:
        """Whether this allowance answers a call of ``tool`` with ``tool_input`` (paths are
        resolved against ``cwd``, the folder the CLI runs in)."""
        if tool != self.tool:
            return False
        if self.scope == "tool":
            return True
        if self.scope == "input":
            return _canonical(tool_input) == self.value
        value = tool_input.get(self.key)
        if not isinstance(value, str):
            return False
        if self.scope == "file":
            return bool(value) and resolve_path(value, cwd) == self.value
        # A command allowance never covers a call that asks to leave the sandbox, or that
        # carries input the allowance did not see.
        if any(k not in _COMMAND_NOISE for k in tool_input):
            return False
        if self.scope == "command":
            return value == self.value
        return is_simple_command(value) and (
            value.strip() == self.value or value.lstrip().startswith(self.value + " ")
        )


@dataclass(frozen=True)
class Allow:
    """Run the tool. ``approved_by`` says who decided ("user", "policy", "always",
    "headless"); ``remember`` is the allowance the user asked to keep ("Always allow")."""

    updated_input: Mapping[str, Any] | None = None
    updated_permissions: Sequence[Mapping[str, Any]] = ()
    approved_by: str = "user"
    remember: Allowance | None = None

    @property
    def allowed(self) -> bool:
        return True

    def to_wire(self, request: PermissionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "behavior": "allow",
            "updatedInput": dict(
                self.updated_input if self.updated_input is not None else request.input
            ),
        }
        if self.updated_permissions:
            body["updatedPermissions"] = [dict(p) for p in self.updated_permissions]
        return body


DENIED = "Denied by the user."


@dataclass(frozen=True)
class Deny:
    """Do not run the tool. ``message`` is for Claude (empty: the user gave no reason);
    ``interrupt`` ends the turn on this answer."""

    message: str = ""
    interrupt: bool = False

    @property
    def allowed(self) -> bool:
        return False

    def to_wire(self, request: PermissionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"behavior": "deny", "message": self.message or DENIED}
        if self.interrupt:
            body["interrupt"] = True
        return body


Decision = Union[Allow, Deny]  # noqa: UP007
"""The answer to one approval, whoever asked and whoever answered."""

PermissionCallback = Callable[[PermissionRequest], Awaitable[Decision]]

NO_APPROVER = (
    "byre_jupyter: {tool} needs approval and nobody can answer here (no approver attached). "
    "Allow it with `%config Claude.permission_mode = 'acceptEdits'` (file edits) or "
    "'bypassPermissions' (everything), or pass can_use_tool= to Session."
)


def default_policy(permission_mode: str | None) -> PermissionCallback:
    """Used when no callback is given: follow the mode. Under bypassPermissions the CLI should
    not ask at all; if it does, allow. Any other mode denies, saying how to allow."""

    async def decide(request: PermissionRequest) -> Decision:
        if permission_mode == PermissionMode.BYPASS:
            return Allow(approved_by="policy")
        return Deny(NO_APPROVER.format(tool=request.tool_name))

    return decide
