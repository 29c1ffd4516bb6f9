"""``history``: the user's recent cells in the kernel, newest last."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session.mcp import ToolResult
from ..bounded import ToolLimits
from ..card import read_only_card
from ..describe import history_text
from ..spec import READ_ONLY, KernelTool, ToolContext

__all__ = ["HISTORY_DESCRIPTION", "TOOL"]

HISTORY_DESCRIPTION = """\
Show the user's most recent notebook cells in the live kernel (inputs and a summary of their \
Out values, with execution counts), newest last. Credentials are shown as [redacted]. \
Depending on the user's settings each call may need their approval, or the tool may be \
disabled."""


def history(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    n = args.get("n", 10)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        return ToolResult.text("`n` must be a positive integer.", is_error=True)
    return ToolResult.text(history_text(ctx.shell, min(n, ctx.limits.max_history), ctx.limits))


def _schema(limits: ToolLimits) -> Mapping[str, Any]:
    return {
        "type": "object",
        "properties": {
            "n": {
                "type": "integer",
                "minimum": 1,
                "maximum": limits.max_history,
                "default": 10,
                "description": "How many recent cells to show.",
            }
        },
        "additionalProperties": False,
    }


TOOL = KernelTool(
    name="history",
    description=HISTORY_DESCRIPTION,
    schema=_schema,
    gate="read",
    handler=history,
    annotations=READ_ONLY,
    # Its one input is a number: the summary shows the call's input as it is.
    card=read_only_card("Read your recent cells"),
    prompt="To see what they ran use mcp__byre__history.",
    summary="the user's recent cells in the kernel and their Out values.",
)
