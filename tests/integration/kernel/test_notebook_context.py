"""Claude knows it is in a notebook: the system prompt says where it runs, and a
PreToolUse hook keeps Write/Edit/NotebookEdit off the notebook open in the editor.

The guard is checked twice: as a function (fast, hostile spellings of the path) and end to end
with the real CLI in bypassPermissions mode, where no approval would stop the write."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from support.kernel import KernelDriver

from byre_jupyter.app.context import guard_hook, notebook_path, system_prompt
from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}\n'


def deny_reason(out: object) -> str | None:
    assert isinstance(out, dict)
    specific = out.get("hookSpecificOutput")
    if not specific:
        return None
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    return str(specific["permissionDecisionReason"])


def test_guard_denies_every_spelling_of_the_open_notebook(tmp_path: Path) -> None:
    nb = tmp_path / "analysis.ipynb"
    nb.write_text(NOTEBOOK)
    (tmp_path / "link.ipynb").symlink_to(nb)
    guard = guard_hook(lambda: str(nb))

    def check(tool: str, args: dict[str, object]) -> str | None:
        out = asyncio.run(guard({"tool_name": tool, "tool_input": args, "cwd": str(tmp_path)}))
        return deny_reason(out)

    for tool, key in [("Write", "file_path"), ("Edit", "file_path"), ("MultiEdit", "file_path"),
                      ("NotebookEdit", "notebook_path")]:  # fmt: skip
        for spelling in (str(nb), "analysis.ipynb", "./sub/../analysis.ipynb", "link.ipynb"):
            reason = check(tool, {key: spelling})
            assert reason and "open in the user's editor" in reason, (tool, spelling)
    assert check("Write", {"file_path": "other.ipynb"}) is None
    assert check("Read", {"file_path": str(nb)}) is None
    assert check("Write", {"file_path": 42}) is None
    assert asyncio.run(guard_hook(lambda: None)({"tool_name": "Write"})) == {}


def test_notebook_path_from_vscode_or_jupyter_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "nb.ipynb").write_text(NOTEBOOK)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    assert notebook_path({}, str(tmp_path)) is None
    assert notebook_path({"__vsc_ipynb_file__": "/x/v.ipynb"}, str(tmp_path)) == "/x/v.ipynb"
    # Not a str (the user's object): ignored, never called.
    monkeypatch.setenv("JPY_SESSION_NAME", "deep/folder/nb.ipynb")  # relative to the server root
    assert notebook_path({"__vsc_ipynb_file__": object()}, str(tmp_path)) == str(
        tmp_path / "nb.ipynb"
    )
    assert str(tmp_path / "nb.ipynb") in system_prompt(str(tmp_path / "nb.ipynb"))


# -- end to end ---------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """The shared workdir, with the notebook the kernel says it runs (JPY_SESSION_NAME)."""
    path = tmp_path / "work"
    path.mkdir()
    (path / "analysis.ipynb").write_text(NOTEBOOK)
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
