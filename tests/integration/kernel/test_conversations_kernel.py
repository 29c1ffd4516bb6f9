"""``%claude conversations`` and ``resume #N`` on real peers: two notebooks' kernels and a
terminal user's ``claude -p``, all the real CLI against the scripted API in one folder."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.session.accounting import SCRIPTED_COST

pytestmark = [pytest.mark.kernel, pytest.mark.cli]


def rows(markdown: str) -> list[list[str]]:
    """The listing's table rows (without header and rule) as cells."""
    lines = [line for line in markdown.splitlines() if re.match(r"\| \d+ \|", line)]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_conversations_lists_notebooks_and_the_terminal_and_resume_n_continues_one(
    kernels: Callable[..., KernelDriver],
    kernel_env: dict[str, str],
    cli_path: str,
    api: ScriptedAPI,
    workdir: Path,
) -> None:
    api.default = Reply(Text("noted"))
    a_path, b_path = str(workdir / "a.ipynb"), str(workdir / "b.ipynb")
    first = kernels(JPY_SESSION_NAME=a_path)
    first.run("%%claude\nNOTEBOOK_A_APPLE")
    first.close()
    # A terminal user in the same folder: `claude -p`, which byre's index never hears of.
    terminal = subprocess.run(
        [cli_path, "-p", "TERMINAL_CHERRY"],
        cwd=workdir, env=kernel_env, capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert terminal.returncode == 0, terminal.stderr
    kernel = kernels(JPY_SESSION_NAME=b_path)
    assert "noted" in kernel.run("%%claude -s review\nNOTEBOOK_B_BANANA").texts()
    listed = rows(kernel.run("%claude conversations").texts())
    assert [(r[0], r[2], r[3], r[5]) for r in listed] == [
        ("1", "NOTEBOOK\\_B\\_BANANA", "1", "this notebook, session review"),
        ("2", "TERMINAL\\_CHERRY", "1", "terminal"),
        ("3", "NOTEBOOK\\_A\\_APPLE", "1",
         f"notebook {a_path.replace('_', chr(92) + '_')}, session default"),
    ], listed  # fmt: skip
    # The CLI priced the scripted model's tokens: the figure stays, marked as nobody's money.
    assert all(r[4].startswith("\\$") and r[4].endswith(SCRIPTED_COST) for r in listed), listed

    said = kernel.run("%claude resume #2").texts()
    assert "resumes conversation" in said, said
    kernel.run("%%claude\nwhat did I ask?")
    sent = json.dumps(api.requests[-1].body["messages"])
    assert "TERMINAL_CHERRY" in sent and "APPLE" not in sent and "BANANA" not in sent

    run = kernel.run("%claude resume #4")
    assert "UsageError" in run.texts() and "#1 to #3" in run.texts(), run.texts()
    kernel.run("%%claude\nand before that?")  # the session goes on with the terminal's
    assert "TERMINAL_CHERRY" in json.dumps(api.requests[-1].body["messages"])
