"""``mcp__byre__run_cells``: Claude runs notebook cells in place (docs/bridge.md, "run_cells").

The kernel is busy with the ``%%claude`` cell, so a cell cannot be queued the usual way: byre
reads the cell's source as it is on screen over the frontend bridge and runs it with the
``python`` tool's runner (``runner.py``: the user's namespace, IPython's transforms, Stop and ■
interrupt it, no time limit). Each output goes to the frontend as it comes and lands in that
cell's own output area; the cell gets the next execution count, and its source is stored in the
kernel's input history under that count, as a cell the user ran is (so the notebook tool no
longer marks it edited).

Cell sources and what they print are untrusted: text sent to the cell is redacted and bounded
here, and Claude gets each run bounded and redacted as a ``python`` run's result.
"""

from __future__ import annotations

import base64
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..bridge import Bridge, BridgeError, RunBegin, RunEnd, RunOutput
from ..redact import redact_json
from ..session.mcp import ToolResult
from .bounded import ToolLimits, clip, fit_budget
from .capture import Output
from .claude_cells import runs_claude
from .notebook import Cell, read_notebook
from .pending_answers import pending_answers
from .runner import PythonRun, PythonRunCancelled, PythonRunner

__all__ = [
    "MAX_CELLS",
    "RUN_CELLS_DESCRIPTION",
    "RUN_CELLS_SCHEMA",
    "CellRun",
    "cells_result",
    "run_cells",
]

log = logging.getLogger(__name__)

#: Cells one call may run: a longer batch is a notebook run, which the user starts.
MAX_CELLS = 10
#: Text sent to one cell's output area; the rest is left out with a note (the tool's result
#: is bounded by ``ToolLimits`` anyway, this keeps the notebook and the comm small).
MAX_CELL_CHARS = 1_000_000
#: A partial line longer than this is sent without waiting for its end.
_LINE_CHARS = 8192

RUN_CELLS_DESCRIPTION = f"""\
Run code cells of the user's open notebook in place, by cell id (ids from \
mcp__byre__notebook): each cell's current source (as on screen) runs in the user's kernel \
namespace, like the user running it, and its outputs (prints, displays, figures, errors) appear \
in that cell with an execution count. Returns what each cell showed: text, the error with its \
traceback, figures as images. Cells run in the order given; a cell that fails stops the rest. \
At most {MAX_CELLS} cells per call; markdown cells and %%claude cells cannot be run. Needs the \
notebook frontend's bridge (JupyterLab or Notebook 7 with byre_jupyter installed). A long run \
is fine (it streams to the cell; the user can interrupt it). Credentials are shown as \
[redacted]. Depending on the user's settings each run may need their approval, or the tool \
may be disabled."""

RUN_CELLS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cells": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": MAX_CELLS,
            "description": "The ids of the code cells to run, in order.",
        }
    },
    "required": ["cells"],
    "additionalProperties": False,
}

NO_BRIDGE = (
    "run_cells needs the notebook frontend's bridge (JupyterLab or Notebook 7 with "
    "byre_jupyter installed in the environment that runs it), and none is connected to this "
    "kernel (VS Code, nbclient or papermill, or a page without the extension): nothing was run. "
    "Use mcp__byre__python to run code in the kernel instead."
)


@dataclass(frozen=True)
class CellRun:
    """One cell run in place: the cell as read, the count it got, and the python run."""

    cell: Cell
    count: int
    run: PythonRun


Approve = Callable[[Cell, int], Awaitable[str | None]]
"""Asks about one cell (its source, and its place in the notebook from 1, for the card): None
to run it, else why not, for Claude. The ``python`` tool's policy and approver
(``policy.decide``)."""


def _requested(args: Mapping[str, Any]) -> list[str] | str:
    ids = args.get("cells")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        return "`cells` must be a non-empty list of cell ids (from mcp__byre__notebook)."
    if len(ids) > MAX_CELLS:
        return (
            f"{len(ids)} cells asked for; run_cells runs at most {MAX_CELLS} per call. Ask the "
            "user to run the notebook, or run the cells in several calls."
        )
    return list(ids)


def plan(
    cells: Sequence[Cell], ids: Sequence[str], asking: str | None, shell: Any = None
) -> list[Cell] | str:
    """The cells to run, in order, or why none is run (the model reads it). A cell that would
    run the claude magic, however written (``claude_cells.runs_claude``), is refused: it would
    start a turn inside this one."""
    by_id = {cell.id: cell for cell in cells if cell.id}
    chosen = []
    for cell_id in ids:
        cell = by_id.get(cell_id)
        shown = repr(cell_id[:100])
        if cell is None:
            known = ", ".join(list(by_id)[:50])
            listed = f"; the ids are: {known}" if known else ""
            return f"There is no cell with id {shown}{listed}. Nothing was run."
        if cell.cell_type != "code":
            return f"Cell {shown} is a {cell.cell_type} cell, not code. Nothing was run."
        if cell_id == asking:
            return f"Cell {shown} is the %%claude cell asking you; it cannot run itself."
        if runs_claude(cell.source, shell):
            return f"Cell {shown} runs Claude (a %%claude cell); run_cells runs only code cells."
        chosen.append(cell)
    return chosen


def take_count(shell: Any, source: str) -> int:
    """The next execution count, with ``source`` stored under it in the input history as
    IPython stores a cell's (raw and transformed), so ``In[n]`` and the notebook tool see it.

    The running ``%%claude`` cell took its count when it started; the cells it runs take the
    ones after it (:class:`_CountAfterReply` keeps its reply at its own)."""
    count = int(shell.execution_count)
    history = getattr(shell, "history_manager", None)
    raw = getattr(history, "input_hist_raw", None)
    if history is not None and type(raw) is list and len(raw) == count:
        try:
            transformed = shell.transform_cell(source)
        except Exception:  # as the runner: the raw source then stands for both
            transformed = source
        history.store_inputs(count, transformed, source)
        for kept in (history.input_hist_parsed, history.input_hist_raw):
            if len(kept) == count:  # IPython skips `exit`; keep the list index the count
                kept.append(source)
    shell.execution_count = count + 1
    return count


def parent_request(shell: Any) -> Mapping[str, Any]:
    """The execute_request whose context this code runs in; empty without a kernel (terminal
    IPython)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return {}
    try:
        parent = kernel.get_parent("shell")
    except TypeError:  # older ipykernel signature
        parent = kernel.get_parent()
    return parent if isinstance(parent, Mapping) else {}


def _request_id(shell: Any) -> str | None:
    """The msg_id of the execute_request whose context this code runs in (None: no kernel)."""
    header = parent_request(shell).get("header")
    msg_id = header.get("msg_id") if isinstance(header, Mapping) else None
    return msg_id if isinstance(msg_id, str) and msg_id else None


class _CountAfterReply:
    """Execution counts the user sees follow on, with no gap (docs/bridge.md, "Execution
    counts"): the ``%%claude`` cell keeps the count it started with (In [5]), the cells it ran
    take the next ones ([6], [7]), and the next cell follows them ([8]).

    ipykernel's execute_reply gives the cell ``shell.execution_count - 1`` when it ends, so
    after the runs the count is set back to the one after the cell's own, and the next free
    count comes back before another request's cell reads it: IPython transforms every cell
    (``input_transformers_cleanup``) before it takes the cell's count, so a transformer that
    sees a request other than this turn's cell restores it, then leaves. A run later in the
    same turn restores it at its start (:meth:`resume`); the ``python`` tool's transforms run
    in the turn's own request and restore nothing. Without a kernel there is no reply."""

    #: IPython's check_complete (an is_complete_request, no cell) then skips it.
    has_side_effects = True

    def __init__(self, shell: Any, resume_at: int, request: str) -> None:
        self.shell, self.resume_at, self.request = shell, resume_at, request

    @classmethod
    def defer(cls, shell: Any, own: int) -> None:
        request = _request_id(shell)
        transformers = getattr(shell, "input_transformers_cleanup", None)
        if request is None or type(transformers) is not list:
            return
        transformers.insert(0, cls(shell, int(shell.execution_count), request))
        shell.execution_count = own + 1

    @classmethod
    def resume(cls, shell: Any) -> None:
        for pending in list(getattr(shell, "input_transformers_cleanup", None) or ()):
            if isinstance(pending, cls):
                pending.restore()

    def restore(self) -> None:
        transformers = self.shell.input_transformers_cleanup
        if self in transformers:
            transformers.remove(self)
            self.shell.execution_count = max(int(self.shell.execution_count), self.resume_at)

    def __call__(self, lines: list[str]) -> list[str]:
        if _request_id(self.shell) != self.request:
            self.restore()
        return lines


class _CellOutputs:
    """A run's outputs on their way to the cell: JSON-ready, redacted, bounded, and streams
    line-buffered (as a terminal shows them; ``print`` writes its parts one by one)."""

    def __init__(
        self,
        bridge: Bridge,
        cell_id: str,
        count: int,
        redact: Callable[[str], str],
        turn: str | None = None,
    ):
        self.bridge = bridge
        self.cell_id = cell_id
        #: The asking ``%%claude`` cell: its turn's page shows the run (docs/bridge.md).
        self.turn = turn
        self.count = count
        self.redact = redact
        self.sent = 0
        self.full = False
        self._stream = ""
        self._stream_name = "stdout"
        #: What the cell shows now, for a page that was not there to see it (pending_answers).
        self.shown: list[Output] = []

    def __call__(self, output: Output) -> None:
        kind = output.get("output_type")
        if kind == "stream":
            name = "stderr" if output.get("name") == "stderr" else "stdout"
            if name != self._stream_name:
                self.flush()
                self._stream_name = name
            self._stream += str(output.get("text", ""))
            if "\n" in self._stream or "\r" in self._stream or len(self._stream) > _LINE_CHARS:
                self.flush()
            return
        self.flush()
        if kind == "clear_output":
            self._send(output)
        elif kind in ("display_data", "execute_result"):
            data = output.get("data")
            bundle = _bundle(data if isinstance(data, Mapping) else {}, self.redact)
            out: Output = {"output_type": kind, "data": bundle, "metadata": {}}
            if kind == "execute_result":
                out["execution_count"] = self.count
            self._bounded(out, sum(len(v) for v in bundle.values() if isinstance(v, str)))
        elif kind == "error":
            out = {key: output[key] for key in ("output_type", "ename", "evalue", "traceback")}
            self._bounded(out, 0)  # the error is always shown: it is why the cell stopped

    def flush(self) -> None:
        text, self._stream = self._stream, ""
        if text:
            text = self.redact(text)
            self._bounded(
                {"output_type": "stream", "name": self._stream_name, "text": text}, len(text)
            )

    def _bounded(self, output: Output, size: int) -> None:
        if self.full and size:
            return
        if self.sent + size > MAX_CELL_CHARS:
            self.full = True
            note = f"[byre_jupyter: output beyond {MAX_CELL_CHARS} characters is not shown]\n"
            self._send({"output_type": "stream", "name": "stderr", "text": note})
            return
        self.sent += size
        self._send(output)

    def _send(self, output: Output) -> None:
        if output.get("output_type") == "clear_output":
            self.shown.clear()
        else:
            self.shown.append(output)
        self.bridge.notify(RunOutput(self.cell_id, dict(output)), turn=self.turn)


def _bundle(data: Mapping[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """A display's data as nbformat keeps it: images base64, and every text redacted as all
    output run_cells puts in a cell is: SVG (an image written as text) and HTML, Markdown,
    plain text; JSON's strings, its structure kept."""
    out: dict[str, Any] = {}
    for mime, value in data.items():
        if not isinstance(mime, str):
            continue
        if isinstance(value, (bytes, bytearray, memoryview)):
            out[mime] = base64.b64encode(bytes(value)).decode("ascii")
        elif isinstance(value, str):
            # A base64 image's text is pixels; an SVG's is text that a reader sees.
            binary = mime.startswith("image/") and not mime.startswith("image/svg")
            out[mime] = value if binary else redact(value)
        elif mime.endswith("json") and isinstance(value, (dict, list)):
            out[mime] = redact_json(value, redact=redact)  # a widget's model id, JSON data
    return out


def _error_output(run: PythonRun) -> Output | None:
    if run.status == "ok" or run.error is None:
        return None
    ename, _, evalue = run.error.partition(": ")
    traceback = (run.traceback or run.error).rstrip().splitlines()
    return {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}


async def run_cells(
    args: Mapping[str, Any],
    *,
    shell: Any,
    bridge: Bridge | None,
    runner: PythonRunner,
    approve: Approve,
    asking: str | None,
    redact: Callable[[str], str],
) -> list[CellRun] | str:
    """Run the cells ``args`` names, in place; their runs, or why nothing (more) was run.

    Stops at the first cell that does not run through (an error, an interrupt, a denial) as a
    notebook's run-all does. A cancellation (Stop) propagates after its cell is finished."""
    ids = _requested(args)
    if isinstance(ids, str):
        return ids
    if bridge is None or not bridge.connected:
        return NO_BRIDGE
    read = await read_notebook(bridge, None, images=False, turn=asking)
    if isinstance(read, str) or not read.live:
        why = read if isinstance(read, str) else "the bridge did not answer"
        return f"The notebook on screen could not be read ({why[:300]}). Nothing was run."
    chosen = plan(read.cells, ids, asking, shell)
    if isinstance(chosen, str):
        return chosen
    # A run earlier in this turn set the count back (_CountAfterReply): the next free one again.
    _CountAfterReply.resume(shell)
    own = int(shell.execution_count) - 1  # the running (or the last) cell's own count
    counted: list[int] = []
    places = {cell.id: n for n, cell in enumerate(read.cells, start=1)}

    async def approve_placed(cell: Cell) -> str | None:
        return await approve(cell, places.get(cell.id, 0))

    try:
        return await _run_each(
            chosen, counted, shell, bridge, runner, approve_placed, redact, asking
        )
    finally:
        if counted:
            _CountAfterReply.defer(shell, own)


async def _run_each(
    chosen: Sequence[Cell],
    counted: list[int],
    shell: Any,
    bridge: Bridge,
    runner: PythonRunner,
    approve: Callable[[Cell], Awaitable[str | None]],
    redact: Callable[[str], str],
    asking: str | None,
) -> list[CellRun] | str:
    """Each cell's run, shown on the page that opened the turn of ``asking``."""
    runs: list[CellRun] = []
    for cell in chosen:
        refused = await approve(cell)
        if refused is not None:
            return _stopped(runs, f"Cell {cell.id!r} was not run: {refused}")
        count = take_count(shell, cell.source)
        counted.append(count)
        try:
            await bridge.request(RunBegin(cell.id, count), turn=asking)
        except BridgeError as e:
            return _stopped(runs, f"Cell {cell.id!r} was not run: {e}")
        outputs = _CellOutputs(bridge, cell.id, count, redact, asking)
        answers = pending_answers(bridge)
        if answers is not None:  # the page that began the run may go before it ends
            answers.showing(cell.id, None)
        try:
            run = await runner.run(
                cell.source, approved_by="run_cells", on_output=outputs, name=f"cell In[{count}]"
            )
        except PythonRunCancelled as cancelled:
            _finish(bridge, outputs, cancelled.run)
            raise
        _finish(bridge, outputs, run)
        runs.append(CellRun(cell, count, run))
        if run.status != "ok":
            break
    return runs


def _finish(bridge: Bridge, outputs: _CellOutputs, run: PythonRun) -> None:
    error = _error_output(run)
    if error is not None:
        error["evalue"] = outputs.redact(error["evalue"])
        error["traceback"] = [outputs.redact(line) for line in error["traceback"]]
        outputs(error)
    outputs.flush()
    bridge.notify(RunEnd(outputs.cell_id, outputs.count), turn=outputs.turn)
    answers = pending_answers(bridge)
    if answers is not None:
        answers.finished(outputs.cell_id, outputs.shown, ask=False)


def _stopped(runs: list[CellRun], why: str) -> list[CellRun] | str:
    if not runs:
        return why
    # What ran stays reported; the reason rides along as a note of the last run.
    last = runs[-1]
    noted = dataclasses.replace(last.run, notes=(*last.run.notes, why))
    return [*runs[:-1], CellRun(last.cell, last.count, noted)]


def cells_result(
    runs: Sequence[CellRun], result_of: Callable[[PythonRun], ToolResult], limits: ToolLimits
) -> ToolResult:
    """Claude's result: each cell's run as the ``python`` tool reports one, under a header
    naming the cell and its count; all of it within one budget and the image limit."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    failed = False
    for item in runs:
        result = result_of(item.run)
        failed = failed or result.is_error
        body = "\n".join(part["text"] for part in result.content if part.get("type") == "text")
        texts.append(f"--- cell {item.cell.id} · [{item.count}] · {item.run.status} ---\n{body}")
        images.extend(part for part in result.content if part.get("type") == "image")
    budgets = fit_budget([len(text) for text in texts], limits.max_output_chars)
    joined = "\n\n".join(clip(text, budget) for text, budget in zip(texts, budgets, strict=True))
    out = ToolResult.text(joined, is_error=failed)
    out.content.extend(images[: limits.max_images])
    if len(images) > limits.max_images:
        out.add_text(f"[note] {len(images) - limits.max_images} image(s) left out")
    return out
