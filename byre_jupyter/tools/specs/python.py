"""``python``: run code in the user's live kernel, gated by ``Claude.python_tool``; the only
tool that runs the user's kind of code (``tools/runner.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...session.mcp import ToolResult
from ...session.permissions import Deny
from ..card import ToolInfo
from ..catalog import redact_result, redact_run, run_result
from ..claude_cells import runs_claude
from ..policy import PythonApproval
from ..runner import PythonRunCancelled
from ..spec import KernelTool, ToolContext

__all__ = ["NESTED_TURN", "PYTHON_DESCRIPTION", "TOOL"]

PYTHON_DESCRIPTION = """\
Run Python code in the user's live Jupyter kernel, in the notebook's own namespace: variables \
the user defined are available, and names you define stay for the user and for later calls. \
Use it to compute, check data, and make plots. Returns stdout, stderr, the value of the last \
expression, any exception with its traceback, and images of matplotlib figures the code created \
or changed and of images it display()ed. Top-level `await` and IPython syntax (%magics, !shell) \
work. The code is not added to the notebook's cell history. It runs in the kernel's main thread \
and blocks the notebook while it runs: avoid long loops, huge prints and slow downloads; the \
user can interrupt it (KeyboardInterrupt). Values that look like credentials are shown as \
[redacted] in what it returns. Depending on the user's settings each run may need their \
approval, or the tool may be disabled."""

NESTED_TURN = (
    "This code would run the claude magic (a %%claude cell, run_cell_magic('claude', ...), "
    "%claude or an alias of it): a turn inside this turn. Nothing was run."
)


async def python(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    code = args.get("code")
    if not isinstance(code, str) or not code.strip():
        return ToolResult.text("`code` must be a non-empty string of Python.", is_error=True)
    if runs_claude(code, ctx.shell):  # a turn inside this turn (tools/claude_cells.py)
        return ToolResult.text(NESTED_TURN, is_error=True)
    decision = await ctx.decide(PythonApproval(code), "python")
    if isinstance(decision, Deny):
        return ToolResult.text(decision.message or "The run was not approved.", is_error=True)
    try:
        run = await ctx.runner.run(code, approved_by=decision.approved_by)
    except PythonRunCancelled as cancelled:
        ctx.report(redact_run(cancelled.run, ctx.secrets()))
        raise
    known = ctx.secrets()  # after the run: it may have made new ones
    run = redact_run(run, known)  # the card in the notebook is saved and shared too
    ctx.report(run)
    return redact_result(run_result(run), known)


TOOL = KernelTool(
    name="python",
    description=PYTHON_DESCRIPTION,
    schema={
        "type": "object",
        "properties": {
            "code": {
                "type": "string",
                "description": "Python source to run, like the body of a notebook cell.",
            }
        },
        "required": ["code"],
        "additionalProperties": False,
    },
    gate="python",
    handler=python,
    annotations={"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
    card=ToolInfo(
        summary_keys=("code",), body_key="code", approval="python", covers="this exact code again"
    ),
    prompt="To run Python in their session (their variables, imports and data) use "
    "mcp__byre__python.",
    summary="runs code in the kernel, in the notebook's namespace (`Claude.python_tool`).",
)
