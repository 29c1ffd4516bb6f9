"""Headless runs (nbclient) save what a reader needs and nothing more.

A ``--bg`` cell says that it ran in the background: nbclient moves on as soon as the cell
returns and stops recording when the notebook ends; a turn still running then used to be
saved as an empty card. The card now carries a note from the start, so the saved notebook
says what happened.

A long answer's saved cell holds the record and no empty output: nbclient keeps every
``display_data`` a cell showed and updates it in place by its display id, so a draft slot
emptied at the end stayed in the notebook as an output with nothing in it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import kernel_env as make_kernel_env

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]


def test_headless_background_cell_is_saved_with_a_note(
    api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    api.on("slowly", Hang())  # still running when the notebook ends
    workdir = tmp_path / "work"
    workdir.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext byre_jupyter"),
        nbformat.v4.new_code_cell("%%claude --bg\nanswer slowly"),
        nbformat.v4.new_code_cell("print('after')"),
    ]
    env = make_kernel_env(api.url, cli_path, tmp_path)
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=env, cwd=str(workdir))
    assert nb.cells[2].outputs[0]["text"] == "after\n"  # the run went on past the --bg cell
    saved = nb.cells[1].outputs
    assert saved, "the --bg cell recorded nothing"
    for mime in ("text/plain", "text/markdown", "text/html"):
        text = saved[-1]["data"][mime]
        assert "answer slowly" in text  # the card itself
        assert "in the background (--bg)" in text.replace("\\", ""), (mime, text)


def test_headless_background_answer_is_saved_whole_when_a_later_cell_waits_for_it(
    api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    """nbclient records only the messages of the cell it runs: the --bg answer, published from
    the --bg cell's own context, was never saved even when the run waited for it (the demo
    ended on its placeholder). The later cell shows it again, so its slot is updated."""
    api.on("slowly", Reply(Text("STORY-" * 40 + "THE-END", chunk=8, delay=0.005)))
    api.default = Reply(Text("AFTER-ANSWER"))
    workdir = tmp_path / "work"
    workdir.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext byre_jupyter"),
        nbformat.v4.new_code_cell("%%claude --bg\nanswer slowly"),
        nbformat.v4.new_code_cell("%%claude\nand then?"),  # the same session: it waits
    ]
    env = make_kernel_env(api.url, cli_path, tmp_path)
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=env, cwd=str(workdir))
    assert "AFTER-ANSWER" in nb.cells[2].outputs[-1]["data"]["text/markdown"]
    (saved,) = nb.cells[1].outputs
    text = saved["data"]["text/markdown"]
    assert "THE-END" in text and "in the background (--bg)" not in text.replace("\\", ""), text
    assert saved["metadata"]["byre"]["session_id"], saved["metadata"]


def test_headless_long_answer_saves_no_empty_output(
    api: ScriptedAPI, cli_path: str, tmp_path: Path
) -> None:
    # Long enough for the draft to cut it (ui/draft.py) while it streams.
    answer = "\n\n".join(f"Paragraph {n}: " + "word " * 40 for n in range(20)) + "\n\nLASTLINE"
    api.on("long", Reply(Text(answer, chunk=40, delay=0.01)))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("%load_ext byre_jupyter"),
        nbformat.v4.new_code_cell("%%claude\na long answer please"),
    ]
    env = make_kernel_env(api.url, cli_path, tmp_path)
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=env, cwd=str(tmp_path))
    saved = nb.cells[1].outputs
    shown = [o for o in saved if o["output_type"] == "display_data"]
    empty = [o for o in shown if not any(str(v).strip() for v in o["data"].values())]
    assert empty == [], saved
    assert [o["output_type"] for o in saved] == ["display_data"]
    assert "LASTLINE" in saved[0]["data"]["text/markdown"]
    assert saved[0]["metadata"]["byre"]["session_name"] == "default"
