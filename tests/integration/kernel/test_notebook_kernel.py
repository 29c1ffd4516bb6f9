"""%%claude on a real ipykernel, against the real CLI and the scripted API.

Driven through jupyter_client like a minimal frontend (tests/support/kernel.py) where we need
to interrupt or watch a cell after its reply, and through nbclient for the headless record.
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import LOAD, KernelDriver
from support.rig import tiny_png

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse

pytestmark = [pytest.mark.kernel, pytest.mark.cli]


def final_bundle(run) -> dict:
    bundles = [o for o in run.outputs if "text/html" in o.get("data", {})]
    assert bundles, run.outputs
    return bundles[0]


def test_streamed_answer_ends_complete_with_metadata(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer = "The answer is **42**. " * 30
    api.default = Reply(Text(answer, chunk=5, delay=0.002))
    run = kernel.run("%%claude -o r\nWhat is the answer?")
    bundle = final_bundle(run)
    assert answer.strip() in bundle["data"]["text/markdown"]
    meta = bundle["metadata"]["byre"]
    assert meta["session_id"] and meta["message_uuids"]
    assert "<strong>42</strong>" in bundle["data"]["text/html"]
    check = kernel.run(f"print(r.text == {answer!r}, r.session_id == {meta['session_id']!r})")
    assert check.texts().strip() == "True True"
    # Headless kernel client: no widget was ever shown.
    assert not any(
        "application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in run.outputs
    )


def test_conversation_carries_across_cells_and_sessions_are_separate(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.default = Reply(Text("ok"))
    kernel.run("%%claude\nFIRST_PROMPT")
    kernel.run("%%claude -s other\nOTHER_PROMPT")
    kernel.run("%%claude\nSECOND_PROMPT")
    last = api.requests[-1]
    texts = json.dumps(last.body["messages"])
    assert "FIRST_PROMPT" in texts and "SECOND_PROMPT" in texts and "OTHER_PROMPT" not in texts
    table = kernel.run("%claude sessions").texts()
    assert "default" in table and "other" in table


def test_image_from_tool_result_is_an_image_output_stored_once(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    png = tiny_png(8, 8)
    (workdir / "dot.png").write_bytes(png)
    api.on("show", Reply(ToolUse("Read", {"file_path": str(workdir / "dot.png")})), times=1)
    api.default = Reply(Text("That is a red square."))
    run = kernel.run("%%claude\nshow me dot.png")
    images = [o for o in run.outputs if "image/png" in o.get("data", {})]
    assert len(images) == 1
    assert base64.b64decode(images[0]["data"]["image/png"]) == png
    assert "iVBOR" not in final_bundle(run)["data"]["text/html"]  # not embedded a second time


def test_max_saved_images_mb_bounds_what_the_notebook_keeps(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    """The trait reaches the turn: with a budget smaller than the image, the notebook keeps a
    note (or a smaller copy) instead of the tool's picture."""
    png = tiny_png(64, 64)
    (workdir / "dot.png").write_bytes(png)
    api.on("show", Reply(ToolUse("Read", {"file_path": str(workdir / "dot.png")})), times=1)
    api.default = Reply(Text("That is a red square."))
    kernel.run(f"%config Claude.max_saved_images_mb = {len(png) / 2 / 2**20}")
    run = kernel.run("%%claude\nshow me dot.png")
    saved = [
        base64.b64decode(o["data"]["image/png"])
        for o in run.outputs
        if "image/png" in o.get("data", {})
    ]
    assert png not in saved
    assert sum(len(b) for b in saved) <= len(png) / 2


def test_dash_i_sends_an_image_block(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.default = Reply(Text("I see it."))
    png = tiny_png(3, 3, (1, 2, 3))
    kernel.run(f"img = {png!r}")
    kernel.run("%%claude -i img\nWhat is this?")
    blocks = [
        b
        for m in api.requests[-1].body["messages"]
        if m["role"] == "user"
        for b in (m["content"] if isinstance(m["content"], list) else [])
    ]
    sent = [b for b in blocks if b.get("type") == "image"]
    assert sent and base64.b64decode(sent[0]["source"]["data"]) == png


@pytest.mark.parametrize(
    "line",
    [
        "--bogus",
        "-i no_such_var_or_file",
        "-o 1bad",
        "-s 'bad name!'",
        "-i notimg",
    ],
)
def test_bad_options_are_usage_errors_and_send_nothing(
    kernel: KernelDriver, api: ScriptedAPI, line: str
) -> None:
    api.default = Reply(Text("fine"))
    kernel.run("notimg = 'just a string'")
    run = kernel.run(f"%%claude {line}\nhello")
    assert "UsageError" in run.texts() and "Traceback" not in run.texts()
    assert api.requests == []
    ok = kernel.run("%%claude\nhello")  # the session is untouched and usable
    assert "fine" in final_bundle(ok)["data"]["text/markdown"]


def test_empty_cell_is_a_usage_error(kernel: KernelDriver, api: ScriptedAPI) -> None:
    run = kernel.run("%%claude\n   \n")
    assert "UsageError" in run.texts() and "empty" in run.texts()
    assert api.requests == []


def test_kernel_interrupt_ends_turn_gracefully_and_next_cell_continues(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.on("long story", Reply(Text("word " * 4000, chunk=5, delay=0.01)), times=1)
    api.default = Reply(Text("continued"))
    run = kernel.submit("%%claude\ntell me a long story")
    api.wait_for_request("long story", timeout=60)
    # The streaming draft shows words (the record, with text/html, comes only at the end).
    kernel.wait(lambda: "word word" in run.texts())
    kernel.interrupt()
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=30)
    # The turn ends gracefully, then the cell as an interrupted cell: one short line.
    assert run.reply["status"] == "error" and run.reply["ename"] == "CellInterrupted"
    assert len(run.reply["traceback"]) == 1
    assert "nterrupted" in final_bundle(run)["data"]["text/markdown"]
    nxt = kernel.run("%%claude\nand then?")
    assert "continued" in final_bundle(nxt)["data"]["text/markdown"]
    history = json.dumps(api.requests[-1].body["messages"])
    assert "tell me a long story" in history and "and then?" in history


def test_background_turn_returns_at_once_and_updates_later(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.on("slowly", Hang(then=Reply(Text("late answer"))), times=1)
    run = kernel.run("%%claude --bg -o bg\nanswer slowly")
    assert run.reply["status"] == "ok"
    api.wait_for_request("slowly", timeout=60)  # the turn is still pending at the API
    api.release()
    kernel.wait(lambda: "late answer" in json.dumps(run.outputs), timeout=60)
    # The final record takes the place of the cell's "running in the background" line.
    kernel.wait(lambda: "(--bg)" not in json.dumps(run.outputs), timeout=30)
    assert "late answer" in json.dumps(run.outputs)
    # The -o variable appears when the background turn has ended; ask until it has.
    probe = "print(getattr(globals().get('bg'), 'text', None))"
    kernel.wait(lambda: "late answer" in kernel.run(probe).texts(), timeout=30)


def test_subcommands(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.default = Reply(Text("ok"))
    kernel.run("%%claude\nhi")
    assert "| default | 1 |" in kernel.run("%claude usage").texts()
    doctor = kernel.run("%claude doctor").texts()
    assert "Claude CLI" in doctor and "2.1.328" in doctor and "ipykernel" in doctor
    assert kernel.run("%claude model sonnet").reply["status"] == "ok"
    assert "sonnet" in kernel.run("%claude model").texts()
    kernel.run("%%claude\nagain")
    assert api.requests[-1].model != api.requests[0].model
    assert "UsageError" in kernel.run("%claude frobnicate").texts()
    assert "again" in kernel.run("%claude transcript").texts()


def test_resume_after_kernel_restart(kernels: Callable[..., Any], api: ScriptedAPI) -> None:
    api.default = Reply(Text("noted"))
    first = kernels()
    first.run("%%claude\nREMEMBER_BANANA")
    first.close()
    second = kernels()
    assert "resumes conversation" in second.run("%claude resume").texts()
    second.run("%%claude\nwhat fruit?")
    second.close()
    assert "REMEMBER_BANANA" in json.dumps(api.requests[-1].body["messages"])


def test_headless_nbclient_run_records_static_outputs_only(
    kernel_env: dict[str, str], workdir: Path, api: ScriptedAPI
) -> None:
    api.default = Reply(Text("Static <script>alert('x')</script> answer", chunk=4))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(LOAD), nbformat.v4.new_code_cell("%%claude\nhello")]
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=kernel_env, cwd=str(workdir))
    assert "widgets" not in nb.metadata
    outputs = nb.cells[1].outputs
    mimes = {k for o in outputs for k in o.get("data", {})}
    assert mimes == {"text/markdown", "text/html", "text/plain"}
    html = outputs[0]["data"]["text/html"]
    assert "<script" not in html and "&lt;script&gt;" in html


def test_a_headless_run_opens_no_bridge_comm_that_nobody_hears(
    kernel_env: dict[str, str], workdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """nbclient (and papermill) warn "No handler found for comm target 'byre.bridge'" for
    every comm the kernel opens toward a frontend they are not: the load announces the bridge
    only to a frontend that sent the cell's id (JupyterLab, Notebook 7, VS Code)."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(LOAD), nbformat.v4.new_code_cell("%claude doctor")]
    log = logging.getLogger("test.headless.nbclient")
    with caplog.at_level(logging.DEBUG, logger=log.name):
        NotebookClient(nb, timeout=120, kernel_name="python3", log=log).execute(
            env=kernel_env, cwd=str(workdir)
        )
    assert nb.cells[1].outputs, "the extension did not load"
    assert not [r for r in caplog.records if "comm target" in r.getMessage()], caplog.text


def test_reload_ext_closes_sessions_and_works_again(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.default = Reply(Text("before"))
    kernel.run("%%claude\nfirst")
    reloaded = kernel.run("%reload_ext byre_jupyter")
    assert "Error" not in reloaded.texts()
    api.default = Reply(Text("after reload"))
    run = kernel.run("%%claude\nsecond")
    assert "after reload" in final_bundle(run)["data"]["text/markdown"]
    # The reloaded extension starts a fresh session: the old conversation was closed.
    assert "first" not in json.dumps(api.requests[-1].last_user_message)
    assert "| default |" in kernel.run("%claude sessions").texts()


def test_prompt_that_interpolates_to_nothing_is_a_usage_error(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    kernel.run("blank = '   '")
    run = kernel.run("%%claude\n{blank}")
    assert "UsageError" in run.texts() and "empty" in run.texts()
    assert api.requests == []
