"""The approval card: Claude asks to run a tool, the user answers in the cell.

:func:`describe_tool_request` (pure) says what the tool will do: the command, the file and a
diff, the code. :class:`ApprovalCard` shows that with *Allow once*, *Always allow (session)* and
*Deny* (with an optional reason) and resolves an asyncio future with the answer. Button
callbacks may run on another thread, so they only hand the click to the loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from byre_jupyter.ui.format import truncate
from byre_jupyter.ui.markdown import escape_text
from byre_jupyter.ui.toolinfo import tool_diff, tool_label

__all__ = ["ApprovalCard", "ApprovalDecision", "describe_tool_request"]

Choice = Literal["allow", "always", "deny"]


@dataclass(frozen=True)
class ApprovalDecision:
    choice: Choice
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.choice != "deny"


def describe_tool_request(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, str]:
    """``(title, detail)`` in plain text: what the tool is about to do."""
    name = tool_name.removeprefix("mcp__byre__")
    if tool_name == "Bash":
        return f"Run a shell command: {tool_input.get('description') or ''}".rstrip(": "), str(
            tool_input.get("command", "")
        )
    if tool_name in ("Edit", "MultiEdit"):
        path = str(tool_input.get("file_path", ""))
        return f"Edit {path}", tool_diff(tool_name, tool_input) or ""
    if tool_name == "Write":
        path = str(tool_input.get("file_path", ""))
        return f"Write {path}", truncate(str(tool_input.get("content", "")), 4000)
    if name == "python" or "code" in tool_input:
        return "Run Python in your kernel", str(tool_input.get("code", ""))
    return f"Use {tool_label(tool_name)}", truncate(
        json.dumps(dict(tool_input), indent=1, default=str), 4000
    )


class ApprovalCard:
    """A live card with the three answers; ``await card.decision`` to get one."""

    def __init__(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        loop: asyncio.AbstractEventLoop,
        own: Callable[[Any], Any] = lambda w: w,
    ) -> None:
        import ipywidgets as W

        self.title, self.detail = describe_tool_request(tool_name, tool_input)
        self._loop = loop
        self.decision: asyncio.Future[ApprovalDecision] = loop.create_future()
        header = own(W.HTML(f"<b>Claude asks:</b> {escape_text(self.title)}"))
        detail = own(
            W.HTML(
                '<pre style="max-height:16em;overflow:auto;font-size:0.85em;margin:0.2em 0">'
                f"{escape_text(truncate(self.detail, 8000))}</pre>"
            )
        )

        def make_button(description: str, style: str, icon: str) -> Any:
            return own(
                W.Button(
                    description=description,
                    button_style=style,
                    icon=icon,
                    layout=own(W.Layout(width="auto")),  # the default width cuts the labels
                )
            )

        self.allow = make_button("Allow once", "success", "check")
        self.always = make_button("Always allow (session)", "", "check-double")
        self.deny = make_button("Deny", "danger", "times")
        self.reason = own(W.Text(placeholder="reason (optional, sent to Claude)"))
        for button, choice in ((self.allow, "allow"), (self.always, "always"), (self.deny, "deny")):
            button.on_click(lambda _b, c=choice: self._clicked(c))
        buttons = own(W.HBox((self.allow, self.always, self.deny, self.reason)))
        self.widget = own(
            W.VBox(
                (header, detail, buttons),
                layout=own(W.Layout(border="1px solid #d4a017", padding="0.3em", margin="0.3em 0")),
            )
        )

    def _clicked(self, choice: Choice) -> None:  # any thread
        reason = str(self.reason.value or "")
        self._loop.call_soon_threadsafe(self._resolve, ApprovalDecision(choice, reason))

    def _resolve(self, decision: ApprovalDecision) -> None:
        if not self.decision.done():
            self.decision.set_result(decision)
        for button in (self.allow, self.always, self.deny):
            button.disabled = True
        self.reason.disabled = True

    def reject(self, reason: str) -> None:
        """Stop/■ or the turn ended: answer deny without a click."""
        self._resolve(ApprovalDecision("deny", reason))
