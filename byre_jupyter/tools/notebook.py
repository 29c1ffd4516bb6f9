"""``mcp__byre__notebook``: the notebook as the user sees it, cell by cell (docs/bridge.md).

With the frontend bridge connected the cells come from the notebook model on screen, unsaved
edits included; without it (VS Code, nbclient, a frontend without the extension) from the
saved ``.ipynb``, and the result says that it may lag behind the screen. Either way every cell
shows its nbformat id, type, source, execution count and a summary of its outputs, and the
result marks the asking ``%%claude`` cell and the cells whose source changed since they ran.

Cell sources and outputs are untrusted data: they go to the model as plain text in the tool
result (bounded here, redacted by the caller like every read tool's result) and are never
rendered by byre_jupyter.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..bridge import Bridge, BridgeError, ReadNotebook
from ..protocol import Image
from ..session.mcp import ToolResult
from .bounded import ToolLimits, clip, fit_budget

__all__ = [
    "NOTEBOOK_DESCRIPTION",
    "NOTEBOOK_SCHEMA",
    "Cell",
    "NotebookRead",
    "ran_sources",
    "read_notebook",
    "render_notebook",
    "select",
]

NOTEBOOK_DESCRIPTION = """\
Read the Jupyter notebook the user has open, cell by cell: each cell's id, type (code or \
markdown), source as it is on screen (including edits the user has not saved or run), \
execution count, and a summary of its outputs (text, errors with their traceback; images \
when `images` is true). Marks the %%claude cell that is asking you and the cells edited since \
they last ran. Pass nothing for the whole notebook, `cell` for one cell, or `start`/`end` \
(cell ids, inclusive) for a range. Use this instead of reading the .ipynb file. Without the \
notebook frontend's bridge it reads the saved file, which may lag behind the screen; the \
result says so. Credentials are shown as [redacted]. Depending on the user's settings each \
call may need their approval, or the tool may be disabled."""

NOTEBOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cell": {"type": "string", "description": "The id of one cell to read."},
        "start": {"type": "string", "description": "The id of the first cell of a range."},
        "end": {"type": "string", "description": "The id of the last cell of a range."},
        "images": {
            "type": "boolean",
            "default": False,
            "description": "Return the images cells show as images.",
        },
    },
    "additionalProperties": False,
}

#: A saved notebook larger than this is not read (its outputs would not fit a result anyway).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Each output's text in the summary; the whole result shares ``max_output_chars``.
OUTPUT_CHARS = 2_000
#: An earlier ``%%claude`` answer's text: the notebook's own history, not the user's work, so
#: less than an output.
ANSWER_CHARS = 1_000
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_WIDGET = "application/vnd.jupyter.widget-view+json"
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class Cell:
    id: str
    cell_type: str
    source: str
    execution_count: int | None
    outputs: tuple[Mapping[str, Any], ...] = ()
    #: Its ``metadata.byre`` (the turn that last changed it, docs/bridge.md), untrusted.
    byre: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class NotebookRead:
    """The cells and where they came from."""

    cells: tuple[Cell, ...]
    where: str  # the path the frontend or the kernel names
    live: bool  # from the model on screen (True) or from the saved file
    dirty: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(item for item in value if isinstance(item, str))
    return ""


def _cells(raw: object) -> tuple[Cell, ...]:
    if not isinstance(raw, list):
        return ()
    cells = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        count = item.get("execution_count")
        outputs = item.get("outputs")
        metadata = item.get("metadata")
        byre = metadata.get("byre") if isinstance(metadata, Mapping) else None
        cells.append(
            Cell(
                id=_text(item.get("id")),
                cell_type=_text(item.get("cell_type")) or "code",
                source=_text(item.get("source")),
                execution_count=count if type(count) is int else None,
                outputs=tuple(o for o in outputs if isinstance(o, Mapping))
                if isinstance(outputs, list)
                else (),
                byre=byre if isinstance(byre, Mapping) else None,
            )
        )
    return tuple(cells)


async def read_notebook(
    bridge: Bridge | None, path: str | None, *, images: bool, turn: str | None = None
) -> NotebookRead | str:
    """The notebook from the bridge, else from the saved file at ``path``; or why neither.
    ``turn``: the asking cell, whose turn's page is read (its model is the one the turn's
    edits apply to, docs/bridge.md "Which page holds the bridge")."""
    if bridge is not None and bridge.connected:
        try:
            result = await bridge.request(ReadNotebook(images), turn=turn)
        except BridgeError as e:
            fallback = _read_file(path)
            if isinstance(fallback, str):
                return f"The notebook could not be read: {e}; {fallback}"
            note = f"The notebook frontend did not answer ({e}): this is the saved file"
            return _with_note(fallback, note + ", which may lag behind the screen.")
        hello_path = bridge.hello.path if bridge.hello is not None else ""
        return NotebookRead(
            _cells(result.get("cells")),
            where=_text(result.get("path")) or hello_path,
            live=True,
            dirty=result.get("dirty") is True,
        )
    read = _read_file(path)
    if isinstance(read, str):
        return read
    return _with_note(
        read,
        "No notebook frontend bridge is connected (VS Code, nbclient, or JupyterLab without "
        "byre_jupyter's extension): this is the saved file, which may lag behind the screen "
        "(unsaved edits are missing).",
    )


def _with_note(read: NotebookRead, note: str) -> NotebookRead:
    return NotebookRead(read.cells, read.where, read.live, read.dirty, (*read.notes, note))


def _read_file(path: str | None) -> NotebookRead | str:
    if path is None:
        return (
            "the kernel does not know which notebook it runs (no frontend bridge, and neither "
            "__vsc_ipynb_file__ nor JPY_SESSION_NAME is set)."
        )
    try:
        size = os.path.getsize(path)
        if size > MAX_FILE_BYTES:
            return f"{path} is {size} bytes, more than the {MAX_FILE_BYTES} this tool reads."
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return f"the saved notebook {path} could not be read: {type(e).__name__}: {e}"
    cells = data.get("cells") if isinstance(data, Mapping) else None
    return NotebookRead(_cells(cells), where=path, live=False)


def ran_sources(shell: Any) -> Callable[[int], str | None]:
    """What ran as ``In[n]`` in this kernel, as typed (IPython's raw input history), so a cell
    whose source differs from what ran under its execution count was edited since. After a
    restart the screen's counts are the old kernel's; a count this kernel has not reached
    says nothing."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)

    def ran(count: int) -> str | None:
        if type(raw) is not list or not 0 < count < len(raw):
            return None
        source = raw[count]
        return source if type(source) is str else None

    return ran


def select(cells: Sequence[Cell], args: Mapping[str, Any]) -> tuple[list[int], str | None]:
    """The indices ``args`` selects, or an error the model reads."""
    ids = [cell.id for cell in cells]
    for key in ("cell", "start", "end"):
        value = args.get(key)
        if value is not None and (not isinstance(value, str) or value not in ids):
            known = ", ".join(i for i in ids[:50] if i)
            listed = f"; the ids are: {known}" if known else ""
            return [], f"There is no cell with id {str(value)[:100]!r}{listed}."
    if isinstance(args.get("cell"), str):
        if args.get("start") is not None or args.get("end") is not None:
            return [], "Give either `cell` or `start`/`end`, not both."
        return [ids.index(args["cell"])], None
    first = ids.index(args["start"]) if isinstance(args.get("start"), str) else 0
    last = ids.index(args["end"]) if isinstance(args.get("end"), str) else len(ids) - 1
    if first > last:
        return [], "`start` comes after `end` in the notebook."
    return list(range(first, last + 1)), None


def _output_summary(output: Mapping[str, Any], images: bool) -> tuple[str, list[Image]]:
    kind = _text(output.get("output_type"))
    found: list[Image] = []
    if kind == "stream":
        return f"[{_text(output.get('name')) or 'stream'}]\n{_text(output.get('text'))}", found
    if kind == "error":
        traceback = output.get("traceback")
        lines = (
            [line for line in traceback if isinstance(line, str)]
            if isinstance(traceback, list)
            else []
        )
        body = _strip_ansi("\n".join(lines)) or (
            f"{_text(output.get('ename'))}: {_text(output.get('evalue'))}"
        )
        return f"[error]\n{body}", found
    data = output.get("data")
    data = data if isinstance(data, Mapping) else {}
    parts = []
    for media in _IMAGE_TYPES:
        if media not in data:
            continue
        if not images:
            parts.append(f"[image {media}]")
            continue
        # A saved notebook is untrusted: its key is a claim, the bytes decide (Image).
        image = Image.from_base64(_text(data[media]))
        if image is None:
            parts.append(f"[output under {media}: not an image, left out]")
        else:
            found.append(image)
            parts.append(f"[image {image.media_type}, attached below]")
    if _WIDGET in data:
        # A widget's text/plain is its Python repr (a live %%claude view: VBox(children=…)).
        parts.append(_text(data.get("text/markdown")) or "[widget]")
    elif _text(data.get("text/plain")):
        parts.append(_text(data.get("text/plain")))
    elif "text/markdown" in data:
        parts.append(_text(data["text/markdown"]))
    elif "text/html" in data:
        parts.append("[html output]")
    label = "result" if kind == "execute_result" else "display"
    return f"[{label}]\n" + "\n".join(parts), found


def _answer(output: Mapping[str, Any]) -> str | None:
    """The answer's text of a ``%%claude`` record output (``metadata.byre``, ui/record.py), or
    None for any other output. A record saved before records carried ``answer`` gives its
    plain text, of which the answer is the end (it follows the tool cards)."""
    metadata = output.get("metadata")
    byre = metadata.get("byre") if isinstance(metadata, Mapping) else None
    if not isinstance(byre, Mapping):
        return None
    answer = byre.get("answer")
    if isinstance(answer, str):
        return answer
    data = output.get("data")
    whole = _text(data.get("text/plain")) if isinstance(data, Mapping) else ""
    return whole if len(whole) <= ANSWER_CHARS else "…" + whole[-(ANSWER_CHARS - 1) :]


def _strip_ansi(text: str) -> str:
    # IPython colours tracebacks in the saved outputs; the model reads the plain text.
    return _ANSI.sub("", text)


def render_notebook(
    read: NotebookRead,
    indices: Sequence[int],
    *,
    asking: str | None,
    ran: Callable[[int], str | None],
    images: bool,
    limits: ToolLimits,
) -> ToolResult:
    """The tool result: a header, then each selected cell; images after the text."""
    origin = (
        "live from the notebook on screen (unsaved edits included"
        + ("; not saved yet)" if read.dirty else ")")
        if read.live
        else "from the saved file"
    )
    header = [f"Notebook {read.where}, {origin}: {len(read.cells)} cells."]
    header.extend(read.notes)
    blocks: list[str] = []
    attached: list[Image] = []
    for index in indices:
        cell = read.cells[index]
        marks = [f"cell {index + 1}", f"id {cell.id or '(none)'}", cell.cell_type]
        if cell.cell_type == "code":
            marks.append(f"[{cell.execution_count}]" if cell.execution_count else "[ ] not run")
        if asking is not None and cell.id == asking:
            marks.append("the %%claude cell asking you")
        elif cell.cell_type == "code" and cell.execution_count is not None:
            ran_source = ran(cell.execution_count)
            if ran_source is not None and ran_source.rstrip() != cell.source.rstrip():
                marks.append("edited since it ran")
        summaries = []
        # The asking cell's outputs are this very turn, still running: nothing to read there.
        outputs = () if asking is not None and cell.id == asking else cell.outputs
        answers = [_answer(output) for output in outputs]
        if any(answer is not None for answer in answers):
            # An earlier turn's record: its answer's text, not its tool cards and the cells
            # its reads returned, so the budget goes to the user's cells.
            summaries = [
                "[%%claude answer: its text; tool cards and images left out]\n"
                + clip(answer.rstrip(), ANSWER_CHARS)
                for answer in answers
                if answer is not None
            ]
            outputs = ()
        for output in outputs:
            text, found = _output_summary(output, images)
            summaries.append(clip(text.rstrip(), OUTPUT_CHARS))
            attached.extend(found)
        blocks.append(
            "--- "
            + " · ".join(marks)
            + " ---\n"
            + cell.source.rstrip()
            + ("\n" + "\n".join(summaries) if summaries else "")
        )
    budgets = fit_budget([len(block) for block in blocks], limits.max_output_chars)
    text = (
        "\n".join(header)
        + "\n\n"
        + "\n\n".join(clip(block, budget) for block, budget in zip(blocks, budgets, strict=True))
    )
    result = ToolResult.text(text)
    kept = [image for image in attached if image.size <= limits.max_image_bytes]
    kept = kept[: limits.max_images]
    for image in kept:
        result.add_image(image)
    if len(attached) > len(kept):
        result.add_text(f"[note] {len(attached) - len(kept)} image(s) left out")
    return result
