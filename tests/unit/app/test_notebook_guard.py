"""Claude knows it is in a notebook: where the notebook is (VS Code's variable, the Jupyter
server's session name), the system prompt naming it, and the PreToolUse guard that keeps
Write/Edit/NotebookEdit off the notebook open in the editor under every spelling of its path.
The same guard end to end, with the real CLI: tests/integration/kernel/test_notebook_context.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from byre_jupyter.app.context import guard_hook, notebook_path, system_prompt

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
