"""``notebook``: the notebook's cells as the user sees them, over the frontend bridge or from
the saved file (``tools/notebook.py``, docs/bridge.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session.mcp import ToolResult
from ..card import read_only_card
from ..notebook import (
    NOTEBOOK_DESCRIPTION,
    NOTEBOOK_SCHEMA,
    ran_sources,
    read_notebook,
    render_notebook,
    select,
)
from ..spec import READ_ONLY, KernelTool, ToolContext

__all__ = ["TOOL"]


async def notebook(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    images = args.get("images", False)
    if not isinstance(images, bool):
        return ToolResult.text("`images` must be true or false.", is_error=True)
    # Before the await: a comm message handled meanwhile becomes the kernel's shell parent.
    asking = ctx.asking_cell()
    read = await read_notebook(ctx.bridge(), ctx.notebook_path(), images=images, turn=asking)
    if isinstance(read, str):
        return ToolResult.text(read, is_error=True)
    indices, error = select(read.cells, args)
    if error is not None:
        return ToolResult.text(error, is_error=True)
    return render_notebook(
        read,
        indices,
        asking=asking,
        ran=ran_sources(ctx.shell),
        images=images,
        limits=ctx.limits,
    )


TOOL = KernelTool(
    name="notebook",
    description=NOTEBOOK_DESCRIPTION,
    schema=NOTEBOOK_SCHEMA,
    gate="read",
    handler=notebook,
    annotations=READ_ONLY,
    card=read_only_card("Read the notebook's cells", summary_keys=("cell", "start")),
    prompt="To see the notebook's cells (their source as on screen, unsaved edits included, "
    "their outputs and errors, which cell is asking you and which were edited since they ran) "
    "use mcp__byre__notebook, not Read on the .ipynb file: the file is JSON that may lag behind "
    "the screen.",
    summary="reads the notebook's cells as on screen (unsaved edits, outputs, errors).",
)
