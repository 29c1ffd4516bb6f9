"""``mcp__byre__edit_notebook`` without a frontend bridge, in a real kernel through the real CLI
and the scripted API (docs/bridge.md): a headless nbclient run records the proposed edits as a
diff in the cell's saved output, tells the model nothing was applied, and the ``.ipynb`` on
disk is not touched, neither by the tool nor by the CLI's own file tools."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import LOAD

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.cli,
    pytest.mark.kernel_env(JPY_SESSION_NAME="edit.ipynb"),
]

EDITS = {
    "edits": [
        {"insert": {"after": "first", "cell_type": "code", "source": "y = x * 2", "id": "dbl"}},
        {"replace": {"cell": "first", "old": "x = 1", "new": "x = 21"}},
    ]
}


def test_headless_edits_are_recorded_as_diffs_and_the_file_is_unchanged(
    kernel_env: dict[str, str], workdir: Path, api: ScriptedAPI
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(LOAD),
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("%%claude\nEDITNB: double it"),
    ]
    nb.cells[1].id = "first"
    path = workdir / "edit.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    api.on(
        "EDITNB",
        Reply(
            ToolUse("mcp__byre__edit_notebook", EDITS, id="toolu_edit"),
            # The CLI's own file tool on the open notebook is refused too (the guard, or the
            # CLI's read-first rule): the bytes on disk below are the proof.
            ToolUse("Write", {"file_path": str(path), "content": "{}"}, id="toolu_write"),
        ),
        times=1,
    )
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("EDITDONE")))
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=kernel_env, cwd=str(workdir))
    assert path.read_bytes() == before  # the open notebook is never written

    results = {r["tool_use_id"]: r for r in api.requests[-1].last_tool_results}
    edit = results["toolu_edit"]
    assert edit["is_error"] and "Not applied" in edit["text"], edit
    assert "headless" in edit["text"] and "nothing in the notebook changed" in edit["text"]
    assert "+y = x * 2" in edit["text"] and "-x = 1" in edit["text"] and "+x = 21" in edit["text"]
    write = results["toolu_write"]
    assert write["is_error"], write

    saved = json.dumps(nb.cells[2].outputs)
    markdown = next(o["data"]["text/markdown"] for o in nb.cells[2].outputs if "data" in o)
    assert "EDITDONE" in markdown
    assert "```diff" in markdown and "+x = 21" in markdown and "+y = x * 2" in markdown, saved
