"""``edit_notebook``: a batch of cell edits the user reviews as a diff, applied on the
frontend's model over the bridge (``tools/notebook_edit.py``, docs/bridge.md); never to the
saved file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...bridge import ApplyEdits, Bridge, BridgeError, PageClosedError
from ...redact import redact_text
from ...session.mcp import ToolResult
from ...session.permissions import Decision, Deny
from ..card import ToolInfo
from ..catalog import redact_result
from ..claude_cells import EDIT_TOOL, asks_always, mark_claude_cells
from ..edit_log import clip_prompt
from ..notebook import read_notebook
from ..notebook_edit import (
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
from ..policy import EditApproval
from ..spec import KernelTool, ToolContext

__all__ = ["TOOL"]


async def edit_notebook(ctx: ToolContext, args: Mapping[str, Any]) -> ToolResult:
    edits = parse_edits(args)
    if isinstance(edits, str):
        return ToolResult.text(edits, is_error=True)
    asking = ctx.asking_cell()  # before the await, as for the read tool
    bridge = ctx.bridge()
    read = await read_notebook(bridge, ctx.notebook_path(), images=False, turn=asking)
    if isinstance(read, str):
        return ToolResult.text(read, is_error=True)
    planned = plan_edits(edits, read.cells, asking)
    if isinstance(planned, str):
        return ToolResult.text(planned, is_error=True)
    resolved, changes = planned
    known = ctx.secrets()
    if not read.live or bridge is None:
        # A bridge that is there but did not answer: its notes say why.
        silent = read.notes if bridge is not None and bridge.connected else ()
        unapplied = await _without_bridge(ctx, resolved, changes, asking, silent)
        return redact_result(unapplied, known)
    review = _review(changes, ctx.shell)
    decision = await _review_edits(ctx, review)
    if isinstance(decision, Deny):
        return ToolResult.text(decision.message or "The edits were not approved.", is_error=True)
    order = tuple(cell.id for cell in read.cells)
    result, problem = await _apply(ctx, bridge, resolved, changes, order, asking)
    if ctx.edit_outcome is not None and decision.approved_by != "policy":
        ctx.edit_outcome(review, decision, problem)
    return redact_result(result, known)


async def _review_edits(ctx: ToolContext, review: Mapping[str, Any]) -> Decision:
    """The user's review of a batch (``_review``), under the session's mode; a batch that
    touches a cell running Claude is asked whatever the mode (tools/claude_cells.py)."""
    policy = ctx.edit_policy
    if asks_always(EDIT_TOOL, review):
        policy = lambda: "ask" if ctx.edit_policy() == "allow" else ctx.edit_policy()  # noqa: E731
    return await ctx.decide(EditApproval(review), "edit", policy)


async def _apply(
    ctx: ToolContext,
    bridge: Bridge,
    resolved: tuple[Edit, ...],
    changes: tuple[CellChange, ...],
    order: tuple[str, ...],
    asking: str | None,
) -> tuple[ToolResult, str | None]:
    """The tool's result, and why the batch did not apply (None: it did). The batch goes to
    the page that opened the turn of ``asking`` (docs/bridge.md)."""
    marks = dict(ctx.provenance())
    if isinstance(marks.get("prompt"), str):
        # Saved into the notebook: redacted as the cell's record is, whole (a clip first
        # could cut a credential past its shape), then clipped to what the page takes.
        marks["prompt"] = clip_prompt(redact_text(marks["prompt"], ctx.secrets()))
    try:
        reply = await bridge.request(
            ApplyEdits(edit_ops(resolved), reviewed_sources(changes), marks), turn=asking
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
    if ctx.on_edited is not None:
        ctx.on_edited(marks, changes, order)
    return ToolResult.text(_applied_text(changes)), None


async def _without_bridge(
    ctx: ToolContext,
    resolved: tuple[Edit, ...],
    changes: tuple[CellChange, ...],
    asking: str | None,
    silent: tuple[str, ...],
) -> ToolResult:
    """No live model to edit: never the open file. VS Code takes one new cell below the
    asking cell as the kernel's ``set_next_input`` payload; anything else is proposed."""
    shell = ctx.shell
    diffs = "\n\n".join(change_diff(change) for change in changes)
    vscode = "__vsc_ipynb_file__" in shell.user_ns
    (first, *rest) = resolved
    if vscode and not rest and isinstance(first, Insert) and first.after == asking:
        decision = await _review_edits(ctx, _review(changes, shell))
        if isinstance(decision, Deny):
            return ToolResult.text(decision.message or "The edit was not approved.", is_error=True)
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


TOOL = KernelTool(
    name="edit_notebook",
    description=EDIT_NOTEBOOK_DESCRIPTION,
    schema=EDIT_NOTEBOOK_SCHEMA,
    gate="edit",
    handler=edit_notebook,
    annotations={"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False},
    # One review card per batch; "Always allow" lets the session's later batches apply.
    card=ToolInfo(
        diff="notebook",
        approval="notebook_edits",
        allow="tool",
        covers="every later edit of this notebook's cells without a review card (but an edit "
        "of a cell that runs Claude, which always asks)",
    ),
    prompt="To change cells (insert, edit or delete them) use mcp__byre__edit_notebook with the "
    "cell ids mcp__byre__notebook shows; the user reviews each batch. Short code meant only to "
    "be read can go in fenced code blocks in your answer.",
    summary="inserts, changes or deletes cells, as one batch the user reviews as a diff.",
)
