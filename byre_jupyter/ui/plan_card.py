"""Claude's plan (the CLI's ``ExitPlanMode``), shown as a plan and approved in the cell.

In plan mode Claude writes its plan to the file the plan-mode reminder names and ends planning
with ``ExitPlanMode``. The CLI asks the host with ``{plan, planFilePath}`` when that file
exists, and with ``{}`` when Claude wrote none (measured with CLI 2.1.328). :func:`plan_text`
takes the plan from the input, or reads ``planFilePath`` when the input holds no plan text, but
only a regular file inside the CLI's plans folder, and at most :data:`MAX_PLAN_BYTES`: the path
is model-influenced and the card must not become a way to show any file of the machine.

:class:`PlanCard` renders the plan as Markdown with the sanitizing renderer (ui/markdown.py:
model text is untrusted), and offers *Approve* (the session continues in the mode chosen in
the menu beside it, ``default`` or ``acceptEdits``) and *Keep planning* with feedback, sent to
Claude as the denial's message. The approval carries the CLI's own ``setMode`` permission
update, and the turn's approvals switch byre's session to the same mode (app/asking.py).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Mapping
from typing import Any

from byre_jupyter.session.permissions import Allow, Decision, Deny
from byre_jupyter.ui.card_frame import CardFrame
from byre_jupyter.ui.markdown import escape_text, render_markdown

__all__ = [
    "AFTER_PLAN_MODES",
    "KEEP_PLANNING",
    "MAX_PLAN_BYTES",
    "PlanCard",
    "approved_mode",
    "plan_text",
    "plans_folder",
    "set_mode",
]

#: The modes an approved plan may continue in, the first the default.
AFTER_PLAN_MODES = ("default", "acceptEdits")
#: A plan file larger than this is not read (a plan is a page or two, not a data file).
MAX_PLAN_BYTES = 256 * 1024
#: What Claude reads when the user keeps planning without a word of feedback.
KEEP_PLANNING = "The user wants you to keep planning: the plan is not approved yet."
NO_PLAN = "(Claude wrote no plan.)"


def plans_folder(env: Mapping[str, str] | None = None) -> str:
    """The CLI's plans folder: ``$CLAUDE_CONFIG_DIR/plans``, else ``~/.claude/plans`` (the
    HOME the CLI runs with, which the session's env may set)."""
    env = env or {}
    config = env.get("CLAUDE_CONFIG_DIR") or os.environ.get("CLAUDE_CONFIG_DIR")
    if config:
        return os.path.join(config, "plans")
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(home, ".claude", "plans")


def _read_plan_file(path: str, folder: str) -> str | None:
    """The file's text, if it is a regular file inside ``folder`` (symlinks resolved) of at
    most :data:`MAX_PLAN_BYTES`; else None."""
    try:
        real = os.path.realpath(path)
        root = os.path.realpath(folder)
        if os.path.commonpath([real, root]) != root or real == root:
            return None
        # O_NOFOLLOW and fstat on the opened file: what is read is what was checked.
        fd = os.open(
            real, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_PLAN_BYTES:
            return None
        data = f.read(MAX_PLAN_BYTES + 1)
    if len(data) > MAX_PLAN_BYTES:
        return None
    return data.decode("utf-8", errors="replace")


def plan_text(tool_input: Mapping[str, Any], folder: str) -> str:
    """The plan of an ``ExitPlanMode`` call: its ``plan``, else the plan file it names (only
    inside ``folder``), else empty."""
    plan = tool_input.get("plan")
    if isinstance(plan, str) and plan.strip():
        return plan
    path = tool_input.get("planFilePath")
    if isinstance(path, str) and path:
        return _read_plan_file(path, folder) or ""
    return ""


def set_mode(mode: str) -> dict[str, Any]:
    """The CLI's permission update that sets the session's mode (as the Agent SDKs send it)."""
    return {"type": "setMode", "mode": mode, "destination": "session"}


def approved_mode(decision: Decision) -> str | None:
    """The mode an approval sets (its ``setMode`` update), or None."""
    if not isinstance(decision, Allow):
        return None
    for update in decision.updated_permissions:
        if update.get("type") == "setMode" and isinstance(update.get("mode"), str):
            return str(update["mode"])
    return None


_PLAN_BOX = (
    "max-height:28em;overflow:auto;overflow-wrap:anywhere;padding:0.2em 0.6em;"
    "border:1px solid var(--jp-border-color2, #ccc)"
)
_DIM = "font-size:0.85em;opacity:0.75;line-height:1.4"


def plan_html(plan: str) -> str:
    """The plan rendered as sanitized Markdown in a scrolling box."""
    body = render_markdown(plan) if plan.strip() else f"<p>{escape_text(NO_PLAN)}</p>"
    return f'<div class="byre-plan-body" style="{_PLAN_BOX}">{body}</div>'


class PlanCard(CardFrame):
    """A live card for one ``ExitPlanMode`` call; ``await card.decision`` for the answer.
    ``folder`` is where the CLI keeps plans (a test's own; by default ``plans_folder()``)."""

    card_class = "byre-plan-card"

    def __init__(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        *,
        loop: asyncio.AbstractEventLoop,
        own: Callable[[Any], Any] = lambda w: w,
        folder: str | None = None,
    ) -> None:
        self._folder = folder if folder is not None else plans_folder()
        super().__init__(tool_name, tool_input, loop=loop, own=own)

    def _build(self) -> list[Any]:
        W, own = self._W, self._own
        self.plan = plan_text(self.tool_input, self._folder)
        self.title = "Claude's plan"

        title = self.html(
            f'<div class="byre-approval-title" style="line-height:1.4">'
            f"<b>{escape_text(self.title)}</b> "
            f'<span style="{_DIM}">Approve it and Claude starts; or keep planning, '
            "with what to change.</span></div>"
        )
        body = self.html(plan_html(self.plan))
        self.approve = self.button("Approve", "check", "success")
        self.mode_menu = self.control(
            W.Dropdown(
                options=[
                    ("then ask before edits (default)", "default"),
                    ("then accept edits (acceptEdits)", "acceptEdits"),
                ],
                value=AFTER_PLAN_MODES[0],
                layout=own(W.Layout(width="auto")),
            )
        )
        self.keep = self.button("Keep planning", "pencil")
        self.feedback = self.text_box("what to change (sent to Claude)")
        self.approve.on_click(lambda _b: self._clicked("approve"))
        self.keep.on_click(lambda _b: self._clicked("keep"))
        buttons = self.row((self.approve, self.mode_menu, self.keep, self.feedback))
        return [title, body, buttons]

    def answer(self, choice: str, mode: str = "default", feedback: str = "") -> Decision:
        """``approve`` (continuing in ``mode``) or ``keep`` (planning, told ``feedback``)."""
        if choice == "approve":
            mode = mode if mode in AFTER_PLAN_MODES else AFTER_PLAN_MODES[0]
            return Allow(updated_input=self.tool_input, updated_permissions=(set_mode(mode),))
        feedback = feedback.strip()
        return Deny(
            f"The user wants you to keep planning: {feedback}" if feedback else KEEP_PLANNING
        )

    def _clicked(self, choice: str) -> None:  # any thread
        self.settle(self.answer(choice, str(self.mode_menu.value), str(self.feedback.value or "")))
