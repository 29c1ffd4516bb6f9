"""The ``byre`` MCP tools that act on the user's live kernel: python, variables, inspect, history,
notebook (the cells on screen through the frontend bridge, ``notebook``: docs/bridge.md) and
edit_notebook (edits of those cells the user reviews, ``notebook_edit``) and run_cells (cells
run in place, ``notebook_run``; gated and run as ``python`` is).

The model sees them as ``mcp__byre__python`` etc. They run as tasks on the kernel's event loop
(the control channel answers ``mcp_message`` there; docs/protocol.md, section 6). Only ``python``
runs code; it is gated by the ``Claude.python_tool`` policy, the four read tools by
``Claude.read_tools``, both through one approver (``approval``). The read tools never run the
user's code (``describe``), and every result's text is redacted (``redact``): a secret-named
value, a credential-shaped string, or the exact value of a secret the user or the environment
holds never reaches the model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from ..bridge import ApplyEdits, Bridge, BridgeError, PageClosedError, bridge_of
from ..redact import Secrets, redact_text
from ..session.mcp import McpTool, ToolResult
from ..session.permissions import Decision, Deny
from .bounded import DEFAULT_LIMITS, ToolLimits
from .claude_cells import EDIT_TOOL, asks_always, mark_claude_cells, runs_claude
from .describe import (
    NotFound,
    describe_object,
    history_text,
    known_secrets,
    resolve,
    variables_table,
    visible_names,
)
from .edit_log import clip_prompt
from .notebook import (
    NOTEBOOK_DESCRIPTION,
    NOTEBOOK_SCHEMA,
    Cell,
    ran_sources,
    read_notebook,
    render_notebook,
    select,
)
from .notebook_edit import (
    EDIT_NOTEBOOK_DESCRIPTION,
    EDIT_NOTEBOOK_SCHEMA,
    CellChange,
    Edit,
    Insert,
    change_diff,
    edit_ops,
    parse_edits,
    plan_edits,
    review_input,
    reviewed_sources,
)
from .notebook_run import RUN_CELLS_DESCRIPTION, RUN_CELLS_SCHEMA, cells_result, run_cells
from .policy import (
    ApproveFn,
    EditApproval,
    EditOutcome,
    PythonApproval,
    ReadApproval,
    decide,
)
from .runner import PythonRun, PythonRunCancelled, PythonRunner

__all__ = ["kernel_tools", "known_secrets_of", "redact_result", "redact_run", "run_result"]

log = logging.getLogger(__name__)

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

VARIABLES_DESCRIPTION = """\
List the variables in the user's live Jupyter kernel: name, type, shape or length, approximate \
memory, and the value of short scalars and strings. Modules, _private names and IPython's own \
names are hidden; objects of types other than builtins, numpy, pandas, matplotlib and PIL are \
listed by type only. Runs none of the user's code; values that look like credentials are \
shown as [redacted]. Use `inspect` for details on one variable. Depending on the user's \
settings each call may need their approval, or the tool may be disabled."""

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

HISTORY_DESCRIPTION = """\
Show the user's most recent notebook cells in the live kernel (inputs and a summary of their \
Out values, with execution counts), newest last. Credentials are shown as [redacted]. \
Depending on the user's settings each call may need their approval, or the tool may be \
disabled."""

NESTED_TURN = (
    "This code would run the claude magic (a %%claude cell, run_cell_magic('claude', ...), "
    "%claude or an alias of it): a turn inside this turn. Nothing was run."
)

#: Told of each approved ``edit_notebook`` batch that landed: its provenance, its changes and
#: the notebook's cell ids before it (tools/edit_log.py, ``EditLog.record``).
EditedFn = Callable[[Mapping[str, Any], tuple[CellChange, ...], tuple[str, ...]], None]

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def kernel_tools(
    shell: Any,
    *,
    approve: ApproveFn | None = None,
    policy: Callable[[], str] = lambda: "ask",
    read_policy: Callable[[], str] = lambda: "allow",
    on_python_run: Callable[[PythonRun], None] | None = None,
    limits: ToolLimits = DEFAULT_LIMITS,
    runner: PythonRunner | None = None,
    notebook_path: Callable[[], str | None] = lambda: None,
    asking_cell: Callable[[], str | None] = lambda: None,
    edit_policy: Callable[[], str] = lambda: "ask",
    provenance: Callable[[], Mapping[str, Any]] = dict,
    environment: Callable[[], Mapping[str, str]] = dict,
    edit_outcome: EditOutcome | None = None,
    on_edited: EditedFn | None = None,
) -> list[McpTool]:
    """The six kernel tools for ``shell`` (an ``InteractiveShell``), ready for ``McpServer``.

    ``policy`` (``Claude.python_tool``) gates ``python``, ``read_policy`` (``Claude.read_tools``)
    the four read tools; under ``"ask"`` both go to the one ``approve``r.

    ``notebook`` reads the cells from the frontend bridge of ``shell``'s kernel, or else from
    the saved file ``notebook_path()`` names; ``asking_cell()`` is the running cell's id.
    ``edit_notebook`` follows ``edit_policy`` (from the session's permission mode) and marks
    the cells it touches with ``provenance()`` (``{"conversation", "turn", "prompt"}``), and
    tells ``on_edited`` (the kernel's edit log, tools/edit_log.py) of each batch that landed.

    ``environment()`` is what the CLI is given over this process's environment (``Claude.env``):
    its secret values are redacted from every result as the view redacts them.

    ``edit_outcome(review, decision, problem)`` hears what became of a batch the user was asked
    about: ``problem`` is None when it applied, else why it did not (the frontend's refusal, a
    page that did not answer): the line in the cell says what happened, not "Approved".

    ``runner`` lets the caller keep the :class:`PythonRunner` (to call ``interrupt()`` from a Stop
    button or the kernel's interrupt); by default one is made here with ``limits``.
    """
    python_runner = runner if runner is not None else PythonRunner(shell, limits=limits)

    def secrets() -> Secrets:
        return known_secrets_of(shell, environment())

    async def python(args: Mapping[str, Any]) -> ToolResult:
        code = args.get("code")
        if not isinstance(code, str) or not code.strip():
            return ToolResult.text("`code` must be a non-empty string of Python.", is_error=True)
        if runs_claude(code, shell):  # a turn inside this turn (tools/claude_cells.py)
            return ToolResult.text(NESTED_TURN, is_error=True)
        decision = await decide(PythonApproval(code), policy, approve)
        if isinstance(decision, Deny):
            return ToolResult.text(decision.message or "The run was not approved.", is_error=True)
        try:
            run = await python_runner.run(code, approved_by=decision.approved_by)
        except PythonRunCancelled as cancelled:
            _report(on_python_run, redact_run(cancelled.run, secrets()))
            raise
        known = secrets()  # after the run: it may have made new ones
        run = redact_run(run, known)  # the card in the notebook is saved and shared too
        _report(on_python_run, run)
        return redact_result(run_result(run), known)

    async def run_cells_tool(args: Mapping[str, Any]) -> ToolResult:
        asking = asking_cell()  # before any await, as for the notebook tool
        known = secrets()

        async def approve_cell(cell: Cell, position: int) -> str | None:
            request = PythonApproval(cell.source, cell=cell.id, position=position)
            decision = await decide(request, policy, approve)
            return (decision.message or "not approved.") if isinstance(decision, Deny) else None

        outcome = await run_cells(
            args,
            shell=shell,
            bridge=bridge_of(shell),
            runner=python_runner,
            approve=approve_cell,
            asking=asking,
            redact=lambda text: redact_text(text, known),
        )
        if isinstance(outcome, str):
            return ToolResult.text(outcome, is_error=True)
        known = secrets()  # after the runs: they may have made new ones
        result = cells_result(outcome, lambda run: run_result(redact_run(run, known)), limits)
        return redact_result(result, known)

    def read_tool(
        tool: str, read: Callable[[Mapping[str, Any]], ToolResult | Awaitable[ToolResult]]
    ) -> Callable[[Mapping[str, Any]], Awaitable[ToolResult]]:
        """``read`` behind the ``read_tools`` policy, with its result redacted."""

        async def call(args: Mapping[str, Any]) -> ToolResult:
            decision = await decide(ReadApproval(tool, dict(args)), read_policy, approve)
            if isinstance(decision, Deny):
                reason = decision.message or f"The {tool} call was not approved."
                return ToolResult.text(reason, is_error=True)
            result = read(args)
            if asyncio.iscoroutine(result):
                result = await result
            assert isinstance(result, ToolResult)
            return redact_result(result, secrets())

        return call

    def variables(args: Mapping[str, Any]) -> ToolResult:
        return ToolResult.text(variables_table(shell.user_ns, shell.user_ns_hidden, limits))

    def inspect(args: Mapping[str, Any]) -> ToolResult:
        name = args.get("name")
        if not isinstance(name, str) or not name.strip():
            return ToolResult.text("`name` must be a variable name.", is_error=True)
        candidates = visible_names(shell.user_ns, shell.user_ns_hidden)
        try:
            value = resolve(name, shell.user_ns, candidates, shell.user_ns_hidden)
        except NotFound as e:
            return ToolResult.text(e.message, is_error=True)
        description = describe_object(name.strip(), value, limits)
        result = ToolResult.text(description.text, is_error=description.is_error)
        for image in description.images:
            result.add_image(image)
        return result

    def history(args: Mapping[str, Any]) -> ToolResult:
        n = args.get("n", 10)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            return ToolResult.text("`n` must be a positive integer.", is_error=True)
        return ToolResult.text(history_text(shell, min(n, limits.max_history), limits))

    async def notebook(args: Mapping[str, Any]) -> ToolResult:
        images = args.get("images", False)
        if not isinstance(images, bool):
            return ToolResult.text("`images` must be true or false.", is_error=True)
        # Before the await: a comm message handled meanwhile becomes the kernel's shell parent.
        asking = asking_cell()
        read = await read_notebook(bridge_of(shell), notebook_path(), images=images)
        if isinstance(read, str):
            return ToolResult.text(read, is_error=True)
        indices, error = select(read.cells, args)
        if error is not None:
            return ToolResult.text(error, is_error=True)
        return render_notebook(
            read,
            indices,
            asking=asking,
            ran=ran_sources(shell),
            images=images,
            limits=limits,
        )

    async def edit_notebook(args: Mapping[str, Any]) -> ToolResult:
        edits = parse_edits(args)
        if isinstance(edits, str):
            return ToolResult.text(edits, is_error=True)
        asking = asking_cell()  # before the await, as for the read tool
        bridge = bridge_of(shell)
        read = await read_notebook(bridge, notebook_path(), images=False)
        if isinstance(read, str):
            return ToolResult.text(read, is_error=True)
        planned = plan_edits(edits, read.cells, asking)
        if isinstance(planned, str):
            return ToolResult.text(planned, is_error=True)
        resolved, changes = planned
        known = secrets()
        if not read.live or bridge is None:
            # A bridge that is there but did not answer: its notes say why.
            silent = read.notes if bridge is not None and bridge.connected else ()
            unapplied = await _without_bridge(resolved, changes, asking, silent)
            return redact_result(unapplied, known)
        review = _review(changes, shell)
        decision = await review_edits(review)
        if isinstance(decision, Deny):
            return ToolResult.text(
                decision.message or "The edits were not approved.", is_error=True
            )
        order = tuple(cell.id for cell in read.cells)
        result, problem = await _apply(bridge, resolved, changes, order)
        if edit_outcome is not None and decision.approved_by != "policy":
            edit_outcome(review, decision, problem)
        return redact_result(result, known)

    async def review_edits(review: Mapping[str, Any]) -> Decision:
        """The user's review of a batch (``_review``), under the session's mode; a batch that
        touches a cell running Claude is asked whatever the mode (tools/claude_cells.py)."""
        policy = edit_policy
        if asks_always(EDIT_TOOL, review):
            policy = lambda: "ask" if edit_policy() == "allow" else edit_policy()  # noqa: E731
        return await decide(EditApproval(review), policy, approve)

    async def _apply(
        bridge: Bridge,
        resolved: tuple[Edit, ...],
        changes: tuple[CellChange, ...],
        order: tuple[str, ...],
    ) -> tuple[ToolResult, str | None]:
        """The tool's result, and why the batch did not apply (None: it did)."""
        marks = dict(provenance())
        if isinstance(marks.get("prompt"), str):
            # Saved into the notebook: redacted as the cell's record is, whole (a clip first
            # could cut a credential past its shape), then clipped to what the page takes.
            marks["prompt"] = clip_prompt(redact_text(marks["prompt"], secrets()))
        try:
            reply = await bridge.request(
                ApplyEdits(edit_ops(resolved), reviewed_sources(changes), marks)
            )
        except PageClosedError as e:
            unknown = ToolResult.text(f"Not known whether applied: {e}.", is_error=True)
            return unknown, f"the page closed before it answered: {e}"
        except BridgeError as e:
            not_applied = ToolResult.text(
                f"Not applied: {e}. Nothing in the notebook changed.", is_error=True
            )
            return not_applied, f"the page did not apply it: {e}"
        refused = reply.get("refused")
        if isinstance(refused, str):
            not_applied = ToolResult.text(
                f"Not applied: {refused[:2000]}. Nothing of this batch changed in the notebook; "
                "read the cells again (mcp__byre__notebook) and send the batch anew.",
                is_error=True,
            )
            return not_applied, f"the notebook refused it: {refused}"
        if on_edited is not None:
            on_edited(marks, changes, order)
        return ToolResult.text(_applied_text(changes)), None

    async def _without_bridge(
        resolved: tuple[Edit, ...],
        changes: tuple[CellChange, ...],
        asking: str | None,
        silent: tuple[str, ...],
    ) -> ToolResult:
        """No live model to edit: never the open file. VS Code takes one new cell below the
        asking cell as the kernel's ``set_next_input`` payload; anything else is proposed."""
        diffs = "\n\n".join(change_diff(change) for change in changes)
        vscode = "__vsc_ipynb_file__" in shell.user_ns
        (first, *rest) = resolved
        if vscode and not rest and isinstance(first, Insert) and first.after == asking:
            decision = await review_edits(_review(changes, shell))
            if isinstance(decision, Deny):
                return ToolResult.text(
                    decision.message or "The edit was not approved.", is_error=True
                )
            shell.set_next_input(first.source, replace=False)
            return ToolResult.text(
                "VS Code has no byre_jupyter bridge: the new cell was handed to VS Code (the "
                "kernel's set_next_input), which puts it below the %%claude cell when this cell "
                "ends, with an id of its own."
            )
        where = (
            "VS Code has no byre_jupyter bridge and takes only a single new cell below the "
            "%%claude cell"
            if vscode
            else "no notebook frontend is connected (a headless run: nbclient, papermill, --bg, "
            "or a frontend without byre_jupyter's extension)"
            if not silent
            else " ".join(silent)
        )
        # In VS Code the user can still take the code: a fenced block has a Copy button.
        take = (
            " Show the new code of each cell in a fenced code block in your answer, so the "
            "user can copy it (each block has a Copy button)."
            if vscode
            else ""
        )
        return ToolResult.text(
            f"Not applied: {where}, so nothing in the notebook changed and the saved file was "
            "not touched. The proposed edits are recorded in the cell's output for the user, "
            f"as these diffs:{take}\n\n{diffs}",
            is_error=True,
        )

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
            read_tool("variables", variables),
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
            read_tool("inspect", inspect),
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
            read_tool("history", history),
            _READ_ONLY,
        ),
        McpTool(
            "notebook",
            NOTEBOOK_DESCRIPTION,
            NOTEBOOK_SCHEMA,
            read_tool("notebook", notebook),
            _READ_ONLY,
        ),
        McpTool(
            "edit_notebook",
            EDIT_NOTEBOOK_DESCRIPTION,
            EDIT_NOTEBOOK_SCHEMA,
            edit_notebook,
            {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
        ),
        McpTool(
            "run_cells",
            RUN_CELLS_DESCRIPTION,
            RUN_CELLS_SCHEMA,
            run_cells_tool,
            {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
        ),
    ]


def _error(text: str) -> ToolResult:
    return ToolResult.text(text, is_error=True)


def _review(changes: tuple[CellChange, ...], shell: Any = None) -> dict[str, Any]:
    """The card's input: the cells' texts whole and unredacted, as every other approval card
    shows what it asks about. What the user approves is what runs (a redacted review
    once hid two lines of code that Allow once inserted); the card is not saved with the
    notebook, only its decision's summary is (docs/security.md). The cells that run Claude are
    marked, with the fields an edit adds to them."""
    review = review_input(changes)
    mark_claude_cells(review, shell)
    return review


def _applied_text(changes: tuple[CellChange, ...]) -> str:
    done = []
    for change in changes:
        if change.action == "insert":
            below = f"below cell {change.below}" if change.below else "at the top"
            done.append(f"inserted {change.cell_type} cell {change.cell} {below}")
        elif change.action == "replace":
            done.append(f"changed cell {change.cell}")
        else:
            done.append(f"deleted cell {change.cell}")
    new = [change.cell for change in changes if change.action == "insert"]
    ids = f" New cell ids: {', '.join(new)}." if new else ""
    return "Applied to the notebook on screen (the user saves it): " + "; ".join(done) + "." + ids


def _report(on_python_run: Callable[[PythonRun], None] | None, run: PythonRun) -> None:
    if on_python_run is None:
        return
    try:
        on_python_run(run)
    except Exception:  # the notebook's card failing must not fail Claude's tool call
        log.exception("byre: on_python_run failed")


def known_secrets_of(shell: Any, env: Mapping[str, str] | None = None) -> Secrets:
    """Exact secret values to redact wherever they appear: secret-named variables of the
    environment with ``env`` (``Claude.env``) over it, the user's secret-named variables, dict
    entries and attributes, the kernel's signing key."""
    known = Secrets.of_process(env) | known_secrets(shell.user_ns, shell.user_ns_hidden)
    signing_key = getattr(getattr(getattr(shell, "kernel", None), "session", None), "key", None)
    if isinstance(signing_key, bytes) and signing_key:  # ipykernel's shell; its HMAC key
        known |= {signing_key.decode("ascii", "replace")}
    return known


def redact_result(result: ToolResult, known: Iterable[str]) -> ToolResult:
    """``result`` with credentials in its text replaced (``redact_text``: shapes, secret-named
    assignments, and the ``known`` values)."""
    for item in result.content:
        if item.get("type") == "text":
            item["text"] = redact_text(item["text"], known)
    return result


def redact_run(run: PythonRun, known: Iterable[str]) -> PythonRun:
    """``run`` with credentials replaced in what it printed, displayed, returned and raised."""

    def clean(text: str | None) -> str | None:
        return None if text is None else redact_text(text, known)

    return dataclasses.replace(
        run,
        stdout=redact_text(run.stdout, known),
        stderr=redact_text(run.stderr, known),
        displayed=redact_text(run.displayed, known),
        result=clean(run.result),
        error=clean(run.error),
        traceback=clean(run.traceback),
    )


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
