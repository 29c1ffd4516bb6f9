"""``run_cells``: cells run in place, each gated as a ``python`` run (``tools/notebook_run.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...redact import redact_text
from ...session.mcp import ToolResult
from ...session.permissions import Deny
from ..card import ToolInfo
from ..catalog import redact_result, redact_run, run_result
from ..notebook import Cell
from ..notebook_run import RUN_CELLS_DESCRIPTION, RUN_CELLS_SCHEMA, cells_result, run_cells
from ..policy import PythonApproval
from ..spec import KernelTool, ToolContext

__all__ = ["TOOL"]


async def run_cells_tool(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    asking = ctx.asking_cell()  # before any await, as for the notebook tool
    known = ctx.secrets()

    async def approve_cell(cell: Cell, position: int) -> str | None:
        request = PythonApproval(cell.source, cell=cell.id, position=position)
        decision = await ctx.decide(request, "python")
        return (decision.message or "not approved.") if isinstance(decision, Deny) else None

    outcome = await run_cells(
        args,
        shell=ctx.shell,
        bridge=ctx.bridge(),
        runner=ctx.runner,
        approve=approve_cell,
        asking=asking,
        redact=lambda text: redact_text(text, known),
    )
    if isinstance(outcome, str):
        return ToolResult.text(outcome, is_error=True)
    known = ctx.secrets()  # after the runs: they may have made new ones
    result = cells_result(outcome, lambda run: run_result(redact_run(run, known)), ctx.limits)
    return redact_result(result, known)


TOOL = KernelTool(
    name="run_cells",
    description=RUN_CELLS_DESCRIPTION,
    schema=RUN_CELLS_SCHEMA,
    gate="python",
    handler=run_cells_tool,
    annotations={"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
    # Gated per cell by the python tool's policy (tools/notebook_run.py); each cell's card
    # names the cell by its position and first line.
    card=ToolInfo(
        summary_list="cells",
        body_key="code",
        approval="run_cell",
        covers="running cell {position} again, only while its source is exactly this",
    ),
    prompt="To run notebook cells so their outputs appear in the cells themselves, use "
    "mcp__byre__run_cells with their ids.",
    summary="runs notebook cells in place, their outputs in the cells (as `python` is gated).",
)
