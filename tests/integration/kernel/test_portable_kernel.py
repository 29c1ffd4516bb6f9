"""Portable notebooks: a notebook saved under one HOME and cwd continues under
another. Real kernels, the real CLI and the scripted API; what the model saw on the second
machine is read from the API request itself. The notebook is untrusted input: a crafted one is
refused with a clear error and writes nothing."""

from __future__ import annotations

import base64
import getpass
import gzip
import json
import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support.kernel import CellRun, KernelDriver, kernel_env

from byre_jupyter.app.portable import FORMAT, project_folder
from byre_jupyter.scripted import Reply, ScriptedAPI, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

CONVERSATION = (
    "import byre_jupyter.magics as m\n"
    "s = m._EXTENSION.conversations.peek('default')\n"
    "print('CONVERSATION', s.session_id if s is not None else None)"
)


def ok(run: CellRun) -> str:
    assert run.reply is not None and run.reply["status"] == "ok", run.texts()
    return run.texts()


def records(run: CellRun) -> list[dict[str, Any]]:
    return [
        o["metadata"]["byre"]["portable"]
        for o in run.outputs
        if "portable" in o.get("metadata", {}).get("byre", {})
    ]


def save_notebook(path: Path, runs: list[tuple[str, CellRun]]) -> None:
    """The notebook a frontend would save: each cell's source and its outputs as shown last."""
    nb = nbformat.v4.new_notebook()
    for source, run in runs:
        cell = nbformat.v4.new_code_cell(source)
        cell.outputs = [
            nbformat.v4.new_output(o["output_type"], data=o["data"], metadata=o["metadata"])
            for o in run.outputs
            if o["output_type"] == "display_data"
        ]
        nb.cells.append(cell)
    nbformat.write(nb, str(path))


@pytest.fixture
def machines(tmp_path: Path, api: ScriptedAPI, cli_path: str) -> dict[str, Any]:
    """Two machines: a HOME and a cwd each."""
    out: dict[str, Any] = {}
    for name in ("a", "b"):
        cwd = tmp_path / f"work-{name}" / "project"
        cwd.mkdir(parents=True)
        out[name] = (kernel_env(api.url, cli_path, tmp_path / name), cwd)
    return out


def test_a_notebook_saved_on_one_machine_continues_on_another(
    machines: dict[str, Any], kernels: Callable[..., Any], api: ScriptedAPI, tmp_path: Path
) -> None:
    for prompt in ("PROMPT_ONE", "PROMPT_TWO", "PROMPT_THREE"):
        api.on(prompt, Reply(Text(f"answer to {prompt}")))
    env_a, cwd_a = machines["a"]
    # The user's private global instructions: the CLI loads them into its context.
    (Path(env_a["HOME"]) / ".claude").mkdir(parents=True)
    (Path(env_a["HOME"]) / ".claude" / "CLAUDE.md").write_text("GLOBAL_CLAUDE_MD_MARKER\n")
    first = kernels(env_a, cwd=cwd_a)
    ok(first.run("%config Claude.portable = True"))
    one = first.run("%%claude\nPROMPT_ONE", cell_id="cell-1")
    ok(one)
    assert len(records(one)) == 1
    two = first.run("%%claude\nPROMPT_TWO", cell_id="cell-2")
    ok(two)
    first.close()
    # Only the newest turn keeps the record: the first turn's copy left its output.
    assert records(one) == []
    (record,) = records(two)
    assert record["format"] == FORMAT
    # The notebook is made to be shared: the conversation, none of this machine's context.
    raw = gzip.decompress(base64.b64decode(record["data"])).decode()
    assert "PROMPT_ONE" in raw and "answer to PROMPT_TWO" in raw
    for private in (
        "GLOBAL_CLAUDE_MD_MARKER", "CLAUDE.md", str(tmp_path), getpass.getuser(),
        platform.release(), "OS Version", "systemPrompt",
    ):  # fmt: skip
        assert private not in raw, private
    saved = tmp_path / "shared.ipynb"
    save_notebook(saved, [("%%claude\nPROMPT_ONE", one), ("%%claude\nPROMPT_TWO", two)])

    env_b, cwd_b = machines["b"]
    (cwd_b / "shared.ipynb").write_bytes(saved.read_bytes())
    second = kernels(env_b, cwd=cwd_b)
    said = ok(second.run("%claude resume --from shared.ipynb"))
    assert record["session_id"] in said
    restored = (
        Path(env_b["HOME"]) / ".claude" / "projects" / project_folder(str(cwd_b))
    ) / f"{record['session_id']}.jsonl"
    assert restored.is_file() and os.stat(restored).st_mode & 0o077 == 0
    n = len(api.requests)
    ok(second.run("%%claude\nPROMPT_THREE", cell_id="cell-3"))
    seen = json.dumps(api.wait_for_request("PROMPT_THREE", timeout=60, after=n).body)
    for text in ("PROMPT_ONE", "answer to PROMPT_ONE", "PROMPT_TWO", "answer to PROMPT_TWO"):
        assert text in seen, text


def test_a_branch_travels_with_its_own_history(
    machines: dict[str, Any], kernels: Callable[..., Any], api: ScriptedAPI
) -> None:
    """Re-running a cell forks the conversation (--fork-session): the fork's session file must
    hold the turns before the fork on its own, since the other machine has no parent file."""
    for prompt in ("PROMPT_A", "PROMPT_B_OLD", "PROMPT_B_NEW", "PROMPT_NEXT"):
        api.on(prompt, Reply(Text(f"answer to {prompt}")))
    env_a, cwd_a = machines["a"]
    first = kernels(env_a, cwd=cwd_a)
    ok(first.run("%config Claude.portable = True"))
    a = first.run("%%claude\nPROMPT_A", cell_id="cell-a")
    ok(a)
    ok(first.run("%%claude\nPROMPT_B_OLD", cell_id="cell-b"))
    b = first.run("%%claude\nPROMPT_B_NEW", cell_id="cell-b")
    ok(b)
    first.close()
    (record,) = records(b)
    assert records(a) == []
    env_b, cwd_b = machines["b"]
    save_notebook(cwd_b / "shared.ipynb", [("a", a), ("b", b)])
    second = kernels(env_b, cwd=cwd_b)
    assert record["session_id"] in ok(second.run("%claude resume --from shared.ipynb"))
    n = len(api.requests)
    ok(second.run("%%claude\nPROMPT_NEXT", cell_id="cell-n"))
    seen = json.dumps(api.wait_for_request("PROMPT_NEXT", timeout=60, after=n).body)
    for text in ("PROMPT_A", "answer to PROMPT_A", "PROMPT_B_NEW", "answer to PROMPT_B_NEW"):
        assert text in seen, text
    assert "PROMPT_B_OLD" not in seen


def test_without_a_cell_id_too_only_the_newest_turn_keeps_the_record(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    """nbclient and papermill send no cellId: the static surface takes the record out."""
    api.on("PROMPT_ONE", Reply(Text("answer one")))
    api.on("PROMPT_TWO", Reply(Text("answer two")))
    ok(kernel.run("%config Claude.portable = True"))
    one = kernel.run("%%claude\nPROMPT_ONE")
    ok(one)
    assert len(records(one)) == 1
    two = kernel.run("%%claude\nPROMPT_TWO")
    ok(two)
    assert records(one) == [] and len(records(two)) == 1
    assert "answer one" in one.texts()  # the output itself stays


def test_portable_is_off_by_default(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.on("PROMPT_ONE", Reply(Text("answer")))
    run = kernel.run("%%claude\nPROMPT_ONE")
    ok(run)
    assert records(run) == []
    assert any("session_id" in o.get("metadata", {}).get("byre", {}) for o in run.outputs)


def test_a_record_over_the_size_bound_is_not_saved_and_the_turn_says_so(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.on("PROMPT_ONE", Reply(Text("answer")))
    ok(kernel.run("%config Claude.portable = True\n%config Claude.portable_max_kb = 1"))
    run = kernel.run("%%claude\nPROMPT_ONE")
    assert "Not saved for another machine" in ok(run)
    assert records(run) == []


# -- hostile notebooks -------------------------------------------------------------------------


def notebook_with(path: Path, record: dict[str, Any], name: str = "default") -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%claude\nhi")
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={"text/plain": "answer"},
            metadata={"byre": {"session_name": name, "portable": record}},
        )
    ]
    nb.cells.append(cell)
    nbformat.write(nb, str(path))


def packed(raw: bytes) -> str:
    return base64.b64encode(gzip.compress(raw)).decode()


GOOD_LINE = b'{"type":"user","message":{"role":"user","content":"hi"}}\n'
GOOD_ID = "0b6f1b9e-3f7c-4c1e-9a53-6d2b8a4f0e11"


@pytest.mark.parametrize(
    ("record", "name", "error"),
    [
        (
            {"format": FORMAT, "session_id": "../../../../.bashrc", "data": packed(GOOD_LINE)},
            "default",
            "is not a UUID",
        ),
        (
            {"format": FORMAT, "session_id": f"{GOOD_ID}/../../x", "data": packed(GOOD_LINE)},
            "default",
            "is not a UUID",
        ),
        (
            # 300 MB of zeros: a few hundred kB gzipped, refused at the bound.
            {"format": FORMAT, "session_id": GOOD_ID, "data": packed(b"\0" * (300 << 20))},
            "default",
            "larger than 256 MB once decompressed",
        ),
        (
            {"format": FORMAT, "session_id": GOOD_ID, "data": packed(GOOD_LINE)},
            "other",
            "no portable record for session 'default' (it has one for 'other')",
        ),
        (
            {"format": FORMAT, "session_id": GOOD_ID, "data": "not base64!"},
            "default",
            "data is corrupt",
        ),
        (
            {"format": FORMAT, "session_id": GOOD_ID, "data": packed(b"rm -rf /\n")},
            "default",
            "session file is corrupt",
        ),
    ],
    ids=["traversal", "traversal-after-uuid", "gzip-bomb", "other-name", "base64", "not-jsonl"],
)
def test_a_hostile_notebook_is_refused_and_nothing_changes(
    kernel: KernelDriver,
    kernel_env: dict[str, str],
    tmp_path: Path,
    workdir: Path,
    record: dict[str, Any],
    name: str,
    error: str,
) -> None:
    notebook_with(workdir / "evil.ipynb", record, name)
    before = ok(kernel.run(CONVERSATION))
    projects = Path(kernel_env["HOME"]) / ".claude" / "projects"
    files_before = sorted(projects.rglob("*")) if projects.exists() else []

    run = kernel.run("%claude resume --from evil.ipynb")
    assert run.reply is not None and run.reply["status"] == "error"
    assert "UsageError" in run.texts() and error in run.texts(), run.texts()

    assert ok(kernel.run(CONVERSATION)) == before
    files_after = sorted(projects.rglob("*")) if projects.exists() else []
    assert files_after == files_before
    assert not list(tmp_path.rglob(".bashrc*"))


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "no such file"),
        (b"this is not json", "is not a notebook"),
        (b'{"cells": "nope"}', "not a notebook (no list of cells)"),
    ],
    ids=["missing", "not-json", "no-cells"],
)
def test_resume_from_something_that_is_not_a_notebook(
    kernel: KernelDriver, workdir: Path, content: bytes | None, error: str
) -> None:
    if content is not None:
        (workdir / "x.ipynb").write_bytes(content)
    before = ok(kernel.run(CONVERSATION))
    run = kernel.run("%claude resume --from x.ipynb")
    assert run.reply is not None and run.reply["status"] == "error"
    assert "UsageError" in run.texts() and error in run.texts(), run.texts()
    assert ok(kernel.run(CONVERSATION)) == before
