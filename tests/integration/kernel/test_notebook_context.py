"""Claude knows it is in a notebook: the system prompt says where it runs, and a
PreToolUse hook keeps Write/Edit/NotebookEdit off the notebook open in the editor.

The guard is checked twice: here end to end with the real CLI in bypassPermissions mode, where
no approval would stop the write, and as a function (hostile spellings of the path) in
tests/unit/app/test_notebook_guard.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


@pytest.fixture(autouse=True)
def saved_notebook(workdir: Path) -> Path:
    """The notebook the kernel says it runs (JPY_SESSION_NAME), in the shared workdir, before
    the kernel starts in it."""
    path = workdir / "analysis.ipynb"
    path.write_text(NOTEBOOK)
    return path


@pytest.mark.kernel
@pytest.mark.cli
@pytest.mark.kernel_env(JPY_SESSION_NAME="work/analysis.ipynb")
def test_first_request_tells_the_model_it_is_in_a_notebook(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    api.default = Reply(Text("ok"))
    kernel.run("%%claude\nhello")
    request = api.wait_for_request("hello", timeout=60)
    system = json.dumps(request.body.get("system"))
    assert "inside a Jupyter kernel" in system
    assert json.dumps(str(workdir / "analysis.ipynb"))[1:-1] in system
    assert "mcp__byre__python" in system and "fenced code blocks" in system


@pytest.mark.kernel
@pytest.mark.cli
@pytest.mark.kernel_env(JPY_SESSION_NAME="work/analysis.ipynb")
@pytest.mark.parametrize(
    "tool",
    [
        ToolUse("Write", {"file_path": "analysis.ipynb", "content": "overwritten"}),
        ToolUse(
            "NotebookEdit",
            {
                "notebook_path": "__NB__",
                "new_source": "print(1)",
                "cell_type": "code",
                "edit_mode": "insert",
            },
        ),
    ],
    ids=["Write", "NotebookEdit"],
)
def test_writes_to_the_open_notebook_are_denied_with_a_reason(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path, tool: ToolUse
) -> None:
    nb = workdir / "analysis.ipynb"
    args = {k: (str(nb) if v == "__NB__" else v) for k, v in tool.input.items()}
    # The CLI refuses a Write of a file not Read first (before any hook): read, then write.
    api.on("edit the notebook", Reply(ToolUse("Read", {"file_path": str(nb)})), times=1)
    api.on(
        lambda r: [t["tool_name"] for t in r.last_tool_results] == ["Read"],
        Reply(ToolUse(tool.name, args)),
        times=1,
    )
    api.default = Reply(Text("done"))
    before = nb.read_bytes(), os.stat(nb).st_mtime_ns
    kernel.run("%%claude\nplease edit the notebook")
    after_tool = api.wait_for_request(
        lambda r: [t["tool_name"] for t in r.last_tool_results] == [tool.name], timeout=60
    )
    result = json.dumps(after_tool.last_tool_results)
    assert "open in the user's editor" in result, result
    assert (nb.read_bytes(), os.stat(nb).st_mtime_ns) == before
