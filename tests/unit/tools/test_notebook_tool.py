"""``mcp__byre__notebook`` (docs/bridge.md): the cells from the frontend bridge with unsaved
edits, or from the saved file marked as possibly behind the screen; the asking cell and the
cells edited since they ran are marked; selections, bounds, images and redaction."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.frontend import FakePage
from support.toolkit import PNG_MAGIC, images_of, text_of

from byre_jupyter.bridge import Bridge
from byre_jupyter.tools import kernel_tools
from byre_jupyter.tools.bounded import ToolLimits
from byre_jupyter.tools.notebook import Cell, NotebookRead, read_notebook, render_notebook, select

PNG = PNG_MAGIC + b"\x00" * 16
SECRET = "sk-ant-api03-" + "x" * 60


def notebook_file(tmp_path: Path, cells: list[dict[str, Any]]) -> str:
    path = tmp_path / "saved.ipynb"
    path.write_text(
        json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    )
    return str(path)


def code(cell_id: str, source: str, count: int | None = None, outputs: Any = ()) -> dict[str, Any]:
    return {
        "id": cell_id,
        "cell_type": "code",
        "source": source,
        "execution_count": count,
        "metadata": {},
        "outputs": list(outputs),
    }


def answering_bridge(cells: list[dict[str, Any]], *, dirty: bool = True) -> Bridge:
    """A bridge whose frontend answers every read with ``cells``, as the extension does."""
    return FakePage(cells=cells, path="work/live.ipynb", dirty=dirty).connect().bridge


def render(read: NotebookRead | str, **kwargs: Any) -> str:
    assert isinstance(read, NotebookRead), read
    options: dict[str, Any] = {
        "asking": None,
        "ran": lambda n: None,
        "images": False,
        "limits": ToolLimits(),
    }
    options.update(kwargs)
    return text_of(render_notebook(read, range(len(read.cells)), **options))


async def test_the_live_notebook_holds_unsaved_edits() -> None:
    bridge = answering_bridge([code("a", "x = 2  # typed, not saved", 1)])
    read = await read_notebook(bridge, "/nowhere.ipynb", images=False)
    text = render(read)
    assert "x = 2  # typed, not saved" in text
    assert "live from the notebook on screen" in text and "not saved yet" in text
    assert "may lag" not in text


async def test_without_the_bridge_the_saved_file_is_read_and_marked(tmp_path: Path) -> None:
    path = notebook_file(
        tmp_path,
        [code("a", "x = 1", 1), {"id": "m", "cell_type": "markdown", "source": ["# T", "itle"]}],
    )
    for bridge in (None, Bridge()):  # no bridge, or one that never said hello
        read = await read_notebook(bridge, path, images=False)
        text = render(read)
        assert "from the saved file" in text and "may lag behind the screen" in text
        assert "x = 1" in text and "# Title" in text and "markdown" in text


async def test_a_bridge_that_fails_falls_back_to_the_file_and_says_so(tmp_path: Path) -> None:
    path = notebook_file(tmp_path, [code("a", "saved source")])
    bridge = FakePage(path="p", error="no model").connect().bridge
    text = render(await read_notebook(bridge, path, images=False))
    assert "saved source" in text and "no model" in text and "may lag" in text


async def test_no_bridge_and_no_path_is_a_clear_error() -> None:
    read = await read_notebook(None, None, images=False)
    assert isinstance(read, str) and "JPY_SESSION_NAME" in read


async def test_an_unreadable_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.ipynb"
    bad.write_text("{not json")
    read = await read_notebook(None, str(bad), images=False)
    assert isinstance(read, str) and "could not be read" in read


def test_the_asking_cell_and_edited_cells_are_marked() -> None:
    read = NotebookRead(
        (
            Cell("a", "code", "x = 2", 1),  # ran as "x = 1", edited since
            Cell("b", "code", "y = 1", 2),  # ran as is
            Cell("c", "code", "%%claude\nwhy?", 3),
            Cell("d", "code", "z = 1", None),
        ),
        where="n.ipynb",
        live=True,
    )
    history = {1: "x = 1\n", 2: "y = 1\n", 3: "%%claude\nwhy?\n"}
    text = render(read, asking="c", ran=history.get)
    blocks = {block.split(" · ")[1]: block for block in text.split("--- ")[1:]}
    assert "edited since it ran" in blocks["id a"]
    assert "edited" not in blocks["id b"]
    assert "the %%claude cell asking you" in blocks["id c"]
    assert "not run" in blocks["id d"] and "edited" not in blocks["id d"]


def test_outputs_are_summarised_like_the_other_read_tools() -> None:
    traceback = [
        "\x1b[0;31mZeroDivisionError\x1b[0m Traceback",
        "----> 1 1/0",
        "ZeroDivisionError: division by zero",
    ]
    cell = Cell(
        "a",
        "code",
        "print('hi'); 1/0",
        4,
        (
            {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
            {
                "output_type": "error",
                "ename": "ZeroDivisionError",
                "evalue": "x",
                "traceback": traceback,
            },
            {
                "output_type": "display_data",
                "data": {"text/html": "<img src='https://evil.example/x'>"},
            },
            {
                "output_type": "execute_result",
                "data": {"text/plain": "42", "image/png": base64.b64encode(PNG).decode()},
            },
        ),
    )
    read = NotebookRead((cell,), where="n.ipynb", live=True)
    text = render(read)
    assert "[stdout]\nhi" in text
    assert "----> 1 1/0" in text and "\x1b" not in text
    assert "evil.example" not in text and "[html output]" in text  # HTML is never passed on
    assert "[image image/png]" in text and "42" in text
    with_images = render_notebook(
        read, [0], asking=None, ran=lambda n: None, images=True, limits=ToolLimits()
    )
    assert images_of(with_images) == [PNG]
    assert (
        images_of(
            render_notebook(
                read, [0], asking=None, ran=lambda n: None, images=False, limits=ToolLimits()
            )
        )
        == []
    )


def test_the_result_is_bounded() -> None:
    huge = Cell(
        "a",
        "code",
        "print('x' * 10**7)",
        1,
        ({"output_type": "stream", "name": "stdout", "text": "x" * 10**7},),
    )
    many = tuple(Cell(f"c{i}", "code", "y" * 5000, i) for i in range(500))
    limits = ToolLimits(max_output_chars=20_000)
    for cells in ((huge,), many):
        read = NotebookRead(cells, where="n.ipynb", live=True)
        text = text_of(
            render_notebook(
                read,
                range(len(cells)),
                asking=None,
                ran=lambda n: None,
                images=False,
                limits=limits,
            )
        )
        assert len(text) < 40_000


def test_selections() -> None:
    cells = [Cell(i, "code", i, None) for i in ("a", "b", "c", "d")]
    assert select(cells, {}) == ([0, 1, 2, 3], None)
    assert select(cells, {"cell": "c"}) == ([2], None)
    assert select(cells, {"start": "b", "end": "c"}) == ([1, 2], None)
    assert select(cells, {"start": "c"}) == ([2, 3], None)
    for bad, why in (
        ({"cell": "zz"}, "no cell with id 'zz'"),
        ({"start": "d", "end": "a"}, "comes after"),
        ({"cell": "a", "end": "b"}, "either"),
        ({"cell": 3}, "no cell with id"),
    ):
        indices, error = select(cells, bad)
        assert indices == [] and error is not None and why in error


async def test_the_tool_redacts_and_reads_the_saved_file(
    tmp_path: Path, shell: InteractiveShell
) -> None:
    path = notebook_file(
        tmp_path,
        [
            code(
                "a",
                f"key = {SECRET!r}",
                1,
                [{"output_type": "stream", "name": "stdout", "text": SECRET}],
            )
        ],
    )
    tools = {
        t.name: t
        for t in kernel_tools(
            shell, read_policy=lambda: "allow", notebook_path=lambda: path, asking_cell=lambda: "a"
        )
    }
    result = await tools["notebook"].function({})
    text = text_of(result)
    assert SECRET not in text and "[redacted]" in text
    assert "may lag behind the screen" in text and "asking you" in text
    refused = await tools["notebook"].function({"cell": "nope"})
    assert refused.is_error and "no cell with id" in text_of(refused)


@pytest.mark.parametrize("policy", ["deny"])
async def test_the_tool_follows_the_read_policy(
    tmp_path: Path, shell: InteractiveShell, policy: str
) -> None:
    path = notebook_file(tmp_path, [code("a", "x = 1")])
    tools = {
        t.name: t
        for t in kernel_tools(shell, read_policy=lambda: policy, notebook_path=lambda: path)
    }
    result = await tools["notebook"].function({})
    assert result.is_error and "x = 1" not in text_of(result)


def test_widget_outputs_and_the_asking_cells_own_outputs_are_not_reprs() -> None:
    widget = {
        "output_type": "display_data",
        "data": {
            "application/vnd.jupyter.widget-view+json": {"model_id": "m"},
            "text/plain": "VBox(children=(HBox(children=(HTML(value='Session')",
        },
    }
    answered = {**widget, "data": {**widget["data"], "text/markdown": "An earlier answer"}}
    read = NotebookRead(
        (
            Cell("old", "code", "%%claude\nearlier", 1, (widget, answered)),
            Cell("now", "code", "%%claude\nnow", None, (widget,)),
        ),
        where="n.ipynb",
        live=True,
    )
    text = render(read, asking="now")
    assert "VBox" not in text
    assert "[widget]" in text and "An earlier answer" in text
    asking = text.split("--- ")[2]
    assert "[display]" not in asking


def _claude_record(answer: str, cards: str) -> dict[str, Any]:
    """A ``%%claude`` cell's saved record as ui/record.py writes it: the whole exchange in
    every type (tool cards and their nested reads included), the answer's text in metadata."""
    whole = f"> **default** ▸ look\n\n{cards}\n\n{answer}\n\n*sonnet · 3 s*"
    return {
        "output_type": "display_data",
        "data": {"text/markdown": whole, "text/html": f"<div>{whole}</div>", "text/plain": whole},
        "metadata": {"byre": {"session_id": "s", "answer": answer}},
    }


async def test_an_earlier_claude_answer_is_read_as_its_text_not_its_tool_cards(
    tmp_path: Path, shell: InteractiveShell
) -> None:
    """A notebook's own history (earlier answers with their tool cards and the cells
    those reads returned) ate the read's budget; a %%claude cell reads as its answer."""
    cards = "\n".join(f"🔧 byre.notebook ▸ nested read {i} " + "·" * 200 for i in range(40))
    answer = "The mean is 4.2; the outlier is row 17."
    claude = code("q", "%%claude\nlook at the data", 2, [_claude_record(answer, cards)])
    user = code("u", "df = load()\ndf.describe()", 3)
    path = notebook_file(tmp_path, [claude, user])
    tools = {t.name: t for t in kernel_tools(shell, notebook_path=lambda: path)}
    text = text_of(await tools["notebook"].function({}))
    assert answer in text and "df.describe()" in text
    assert "nested read" not in text  # neither the tool cards nor what their reads returned
    assert len(text) < 1_500


async def test_a_long_claude_answer_is_bounded_and_a_record_without_its_text_too(
    tmp_path: Path, shell: InteractiveShell
) -> None:
    long_answer = "word " * 5_000
    old = _claude_record("x", "🔧 byre.notebook ▸ nested read " + "·" * 20_000)
    del old["metadata"]["byre"]["answer"]  # saved before records carried their answer
    cells = [
        code("q", "%%claude\nsummarise", 2, [_claude_record(long_answer, "🔧 byre.python")]),
        code("o", "%%claude\nolder", 3, [old]),
    ]
    path = notebook_file(tmp_path, cells)
    tools = {t.name: t for t in kernel_tools(shell, notebook_path=lambda: path)}
    text = text_of(await tools["notebook"].function({}))
    assert len(text) < 2_600  # each answer within its own bound, below an output's
    assert "word word" in text
