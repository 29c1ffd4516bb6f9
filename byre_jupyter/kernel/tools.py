"""The ``byre`` MCP tools that act on the user's live kernel: python, variables, inspect, history.

The model sees them as ``mcp__byre__python`` etc. They run as tasks on the kernel's event loop
(the control channel answers ``mcp_message`` there; observed-cli doc, section 8). Only ``python``
changes anything; it is gated by the ``Claude.python_tool`` policy and an approver (``approval``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..session.mcp import McpTool, ToolResult
from .approval import ApproveFn, decide
from .bounded import DEFAULT_LIMITS, ToolLimits
from .describe import (
    NotFound,
    describe_object,
    history_text,
    resolve,
    variables_table,
    visible_names,
)
from .runner import PythonRun, PythonRunCancelled, PythonRunner

__all__ = ["kernel_tools", "run_result"]

log = logging.getLogger(__name__)

PYTHON_DESCRIPTION = """\
Run Python code in the user's live Jupyter kernel, in the notebook's own namespace: variables \
the user defined are available, and names you define stay for the user and for later calls. \
Use it to compute, check data, and make plots. Returns stdout, stderr, the value of the last \
expression, any exception with its traceback, and images of matplotlib figures the code created \
or changed and of images it display()ed. Top-level `await` and IPython syntax (%magics, !shell) \
work. The code is not added to the notebook's cell history. It runs in the kernel's main thread \
and blocks the notebook while it runs: avoid long loops, huge prints and slow downloads; the \
user can interrupt it (KeyboardInterrupt). Depending on the user's settings each run may need \
their approval, or the tool may be disabled."""

VARIABLES_DESCRIPTION = """\
List the variables in the user's live Jupyter kernel: name, type, shape or length, approximate \
memory, and the value of short scalars. Modules, _private names and IPython's own names are \
hidden. Read-only; use `inspect` for details on one variable."""

INSPECT_DESCRIPTION = """\
Summarize one object from the user's live Jupyter kernel by name; dotted attribute paths like \
`df.columns` or `model.coef_` work (no indexing or calls). DataFrame/Series: shape, dtypes, \
head and describe(); numpy arrays: shape, dtype, min/max/mean and a preview; matplotlib figures \
and PIL images: the image; anything else: type, signature/doc and a truncated repr. Read-only."""

HISTORY_DESCRIPTION = """\
Show the user's most recent notebook cells in the live kernel (inputs and their Out values, \
with execution counts), newest last. Read-only."""

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def kernel_tools(
    shell: Any,
    *,
    approve: ApproveFn | None = None,
    policy: Callable[[], str] = lambda: "ask",
    on_python_run: Callable[[PythonRun], None] | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
    runner: PythonRunner | None = None,
) -> list[McpTool]:
    """The four kernel tools for ``shell`` (an ``InteractiveShell``), ready for ``McpServer``.

    ``runner`` lets the caller keep the :class:`PythonRunner` (to call ``interrupt()`` from a Stop
    button or the kernel's interrupt); by default one is made here with ``limits``.
    """
    python_runner = runner if runner is not None else PythonRunner(shell, limits=limits)

    async def python(args: Mapping[str, Any]) -> ToolResult:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return ToolResult.text("`code` must be a non-empty string of Python.", is_error=True)
        decision = await decide(code, policy, approve)
        if not decision.allowed:
            return ToolResult.text(decision.reason or "The run was not approved.", is_error=True)
        try:
            run = await python_runner.run(code, approved_by=decision.approved_by)
        except PythonRunCancelled as cancelled:
            _report(on_python_run, cancelled.run)
            raise
        _report(on_python_run, run)
        return run_result(run)

    async def variables(args: Mapping[str, Any]) -> ToolResult:
        return ToolResult.text(variables_table(shell.user_ns, shell.user_ns_hidden, limits))

    async def inspect(args: Mapping[str, Any]) -> ToolResult:
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            return ToolResult.text("`name` must be a variable name.", is_error=True)
        candidates = visible_names(shell.user_ns, shell.user_ns_hidden)
        try:
            value = resolve(name, shell.user_ns, candidates)
        except NotFound as e:
            return ToolResult.text(e.message, is_error=True)
        description = describe_object(name.strip(), value, limits)
        result = ToolResult.text(description.text, is_error=description.is_error)
        for image in description.images:
            result.add_image(image)
        return result

    async def history(args: Mapping[str, Any]) -> ToolResult:
        n = args.get("n", 10)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            return ToolResult.text("`n` must be a positive integer.", is_error=True)
        return ToolResult.text(history_text(shell, min(n, limits.max_history), limits))

    return [
        McpTool(
            "python",
            PYTHON_DESCRIPTION,
            {
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
            python,
            {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
        ),
        McpTool(
            "variables",
            VARIABLES_DESCRIPTION,
            {"type": "object", "properties": {}, "additionalProperties": False},
            variables,
            _READ_ONLY,
        ),
        McpTool(
            "inspect",
            INSPECT_DESCRIPTION,
            {
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
            inspect,
            _READ_ONLY,
        ),
        McpTool(
            "history",
            HISTORY_DESCRIPTION,
            {
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
            },
            history,
            _READ_ONLY,
        ),
    ]


def _report(on_python_run: Callable[[PythonRun], None] | None, run: PythonRun) -> None:
    if on_python_run is None:
        return
    try:
        on_python_run(run)
    except Exception:  # the notebook's card failing must not fail Claude's tool call
        log.exception("byre: on_python_run failed")


def run_result(run: PythonRun) -> ToolResult:
    """The tool result Claude sees for a run: labelled sections, then the images."""
    sections = []
    if run.stdout:
        sections.append(f"[stdout]\n{run.stdout.rstrip()}")
    if run.stderr:
        sections.append(f"[stderr]\n{run.stderr.rstrip()}")
    if run.displayed:
        sections.append(f"[displayed]\n{run.displayed.rstrip()}")
    if run.result is not None:
        sections.append(f"[result]\n{run.result}")
    if run.traceback:
        label = "[interrupted]" if run.status == "interrupted" else "[error]"
        sections.append(f"{label}\n{run.traceback.rstrip()}")
    elif run.error:
        sections.append(f"[error]\n{run.error}")
    if run.images:
        sections.append(f"[images] {len(run.images)} attached below")
    for note in run.notes:
        sections.append(f"[note] {note}")
    if not sections:
        sections.append("(ran without output)")
    result = ToolResult.text("\n\n".join(sections), is_error=run.status != "ok")
    for image in run.images:
        result.add_image(image)
    return result
