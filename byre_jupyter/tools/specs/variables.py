"""``variables``: the user's variables, listed without running their code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session.mcp import ToolResult
from ..card import read_only_card
from ..describe import variables_table
from ..spec import READ_ONLY, KernelTool, ToolContext

__all__ = ["TOOL", "VARIABLES_DESCRIPTION"]

VARIABLES_DESCRIPTION = """\
List the variables in the user's live Jupyter kernel: name, type, shape or length, approximate \
memory, and the value of short scalars and strings. Modules, _private names and IPython's own \
names are hidden; objects of types other than builtins, numpy, pandas, matplotlib and PIL are \
listed by type only. Runs none of the user's code; values that look like credentials are \
shown as [redacted]. Use `inspect` for details on one variable. Depending on the user's \
settings each call may need their approval, or the tool may be disabled."""


def variables(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    shell = ctx.shell
    return ToolResult.text(variables_table(shell.user_ns, shell.user_ns_hidden, ctx.limits))


TOOL = KernelTool(
    name="variables",
    description=VARIABLES_DESCRIPTION,
    schema={"type": "object", "properties": {}, "additionalProperties": False},
    gate="read",
    handler=variables,
    annotations=READ_ONLY,
    # No input: the card's summary is empty and its title says it all.
    card=read_only_card("List the variables in your kernel"),
    prompt="To list their variables use mcp__byre__variables.",
    summary="lists the user's variables: type, shape, size, short values.",
)
