"""``inspect``: one object of the user's by name, described by static lookups only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session.mcp import ToolResult
from ..card import read_only_card
from ..describe import NotFound, describe_object, resolve, visible_names
from ..spec import READ_ONLY, KernelTool, ToolContext

__all__ = ["INSPECT_DESCRIPTION", "TOOL"]

INSPECT_DESCRIPTION = """\
Summarize one object from the user's live Jupyter kernel by name. Dotted paths follow the \
object's own stored attributes (`model.coef_`, `cfg.path`) and, for DataFrames, `df.columns`, \
`df.index`, `df.dtypes` and columns by name; no indexing, calls, properties, _private \
attributes, modules or IPython/kernel internals. DataFrame/Series: shape, dtypes, head and \
describe(); numpy arrays: shape, dtype, min/max/mean and a preview; matplotlib figures and PIL \
images: the image; builtins: the value; functions and classes: signature and doc; any other \
object: its class, its attributes and the names of its properties and methods (none of them is \
evaluated: the user's code never runs). Values that look like credentials are shown as \
[redacted]. Use the python tool to compute anything else. Depending on the user's settings \
each call may need their approval, or the tool may be disabled."""


def inspect(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    name = args.get("name")
    if not isinstance(name, str) or not name.strip():
        return ToolResult.text("`name` must be a variable name.", is_error=True)
    shell = ctx.shell
    candidates = visible_names(shell.user_ns, shell.user_ns_hidden)
    try:
        value = resolve(name, shell.user_ns, candidates, shell.user_ns_hidden)
    except NotFound as e:
        return ToolResult.text(e.message, is_error=True)
    description = describe_object(name.strip(), value, ctx.limits)
    result = ToolResult.text(description.text, is_error=description.is_error)
    for image in description.images:
        result.add_image(image)
    return result


TOOL = KernelTool(
    name="inspect",
    description=INSPECT_DESCRIPTION,
    schema={
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "A variable name or dotted attribute path, e.g. `df`.",
            }
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    gate="read",
    handler=inspect,
    annotations=READ_ONLY,
    card=read_only_card("Inspect", "name", "in your kernel", summary_keys=("name",)),
    prompt="To look at one of their variables (or an attribute of it) in detail use "
    "mcp__byre__inspect.",
    summary="describes one object by name or dotted path, running none of its code.",
)
