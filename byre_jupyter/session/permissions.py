"""Permission decisions for ``can_use_tool`` requests.

The CLI asks only when launched with ``--permission-prompt-tool stdio`` and a mode other than
``bypassPermissions`` (docs/protocol.md, section 6). A :data:`PermissionCallback` decides; its
answer is an :class:`Allow` or a :class:`Deny`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Allow", "Deny", "PermissionCallback", "PermissionRequest", "default_policy"]


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


@dataclass(frozen=True)
class Allow:
    updated_input: Mapping[str, Any] | None = None
    updated_permissions: Sequence[Mapping[str, Any]] = ()

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


@dataclass(frozen=True)
class Deny:
    message: str = "Denied by the user."
    interrupt: bool = False

    def to_wire(self, request: PermissionRequest) -> dict[str, Any]:
        body: dict[str, Any] = {"behavior": "deny", "message": self.message}
        if self.interrupt:
            body["interrupt"] = True
        return body


PermissionCallback = Callable[[PermissionRequest], Awaitable["Allow | Deny"]]

NO_APPROVER = (
    "byre_jupyter: {tool} needs approval and nobody can answer here (no approver attached). "
    "Allow it with `%config Claude.permission_mode = 'acceptEdits'` (file edits) or "
    "'bypassPermissions' (everything), or pass can_use_tool= to Session."
)


def default_policy(permission_mode: str | None) -> PermissionCallback:
    """Used when no callback is given: follow the mode. Under bypassPermissions the CLI should
    not ask at all; if it does, allow. Any other mode denies, saying how to allow."""

    async def decide(request: PermissionRequest) -> Allow | Deny:
        if permission_mode == "bypassPermissions":
            return Allow()
        return Deny(NO_APPROVER.format(tool=request.tool_name))

    return decide
