"""Kernel side: every frontend gets the right surface, cells fail and stop as notebook
cells do, per-turn cost, and Stop with a pending approval card always interrupts.

Real ipykernel kernels (tests/support/kernel.py), the real CLI, the scripted API.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from support.kernel import LOAD, KernelDriver

from byre_jupyter.scripted import Error, Reply, ScriptedAPI, Text, ToolUse

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

VSCODE = {"cellId": "vscode-notebook-cell:/tmp/x.ipynb#W1sZmlsZQ%3D%3D"}


def bundle(run) -> dict:
    bundles = [o for o in run.outputs if "text/html" in o.get("data", {})]
    assert bundles, run.outputs
    return bundles[0]


def test_cell_id_without_lab_metadata_gets_widgets(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.default = Reply(Text("fine"))
    # VS Code / Positron: only cellId in the metadata, none of JupyterLab's own keys.
    live = kernel.run("%%claude\nhello from vs code", metadata=VSCODE)
    assert live.reply["status"] == "ok"
    assert live.comm_opens > 0  # the live widgets (Stop, model menu, approval cards)
    assert "fine" in bundle(live)["data"]["text/markdown"]
    # nbclient / papermill: no metadata at all.
    headless = kernel.run("%%claude\nhello from nbclient")
    assert headless.comm_opens == 0
    assert "fine" in bundle(headless)["data"]["text/markdown"]


def _nb(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def test_failing_turn_fails_nbclient_with_a_short_error_after_its_output(
    kernel_env: dict[str, str], workdir: Path, api: ScriptedAPI
) -> None:
    api.default = Error(400, "scripted bad request: the prompt is wrong")
    nb = _nb(LOAD, "%%claude\nthis fails", "print('after')")
    client = NotebookClient(nb, timeout=120, kernel_name="python3")
    with pytest.raises(CellExecutionError) as info:
        client.execute(env=kernel_env, cwd=str(workdir))
    outputs = nb.cells[1].outputs
    # The turn's record is kept, the error follows it, and the cell below never ran.
    assert "text/html" in outputs[0]["data"]
    errors = [o for o in outputs if o["output_type"] == "error"]
    assert [e["ename"] for e in errors] == ["TurnFailed"]
    assert len(errors[0]["traceback"]) == 1  # one short line, no Python traceback
    assert "scripted bad request" in errors[0]["traceback"][0]
    assert nb.cells[2].outputs == []
    assert "TurnFailed" in str(info.value)


def test_on_error_show_keeps_the_cell_ok(
    kernel_env: dict[str, str], workdir: Path, api: ScriptedAPI
) -> None:
    api.default = Error(400, "scripted bad request")
    nb = _nb(LOAD + "\n%config Claude.on_error = 'show'", "%%claude\nthis fails", "print('after')")
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(env=kernel_env, cwd=str(workdir))
    assert not [o for o in nb.cells[1].outputs if o["output_type"] == "error"]
    assert "scripted bad request" in nb.cells[1].outputs[0]["data"]["text/markdown"]
    assert nb.cells[2].outputs[0]["text"] == "after\n"


def test_not_logged_in_says_what_to_do_in_a_notebook(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.default = Error(401, "invalid x-api-key", error_type="authentication_error")
    run = kernel.run("%%claude\nhello")
    assert run.reply["status"] == "error"
    assert run.reply["ename"] == "TurnFailed"
    assert "ANTHROPIC_API_KEY" in run.reply["evalue"]
    assert "%claude doctor" in run.reply["evalue"]


def test_run_all_with_interrupt_in_the_first_claude_cell_runs_no_later_cell(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.on("long story", Reply(Text("word " * 4000, chunk=5, delay=0.01)), times=1)
    api.default = Reply(Text("should never be asked"))
    # Run All: every cell is queued at once.
    first = kernel.submit("%%claude\ntell me a long story", metadata=VSCODE)
    second = kernel.submit("%%claude\nSECOND PROMPT", metadata=VSCODE)
    third = kernel.submit("print('third ran')", metadata=VSCODE)
    api.wait_for_request("long story", timeout=60)
    kernel.wait(lambda: bool(first.outputs))  # the live view is up: the turn streams
    kernel.interrupt()
    kernel.wait(lambda: third.reply is not None and first.idle, timeout=60)
    assert first.reply["status"] == "error"
    assert first.reply["ename"] == "CellInterrupted"
    assert "nterrupted" in bundle(first)["data"]["text/markdown"]
    assert second.reply["status"] == "aborted" and third.reply["status"] == "aborted"
    assert "third ran" not in third.texts()
    assert not any("SECOND PROMPT" in json.dumps(r.body) for r in api.requests)
    # The conversation goes on in the next cell.
    api.default = Reply(Text("continued"))
    nxt = kernel.run("%%claude\nand then?")
    assert nxt.reply["status"] == "ok"
    assert "tell me a long story" in json.dumps(api.requests[-1].body["messages"])


USAGE = {"input_tokens": 1000, "output_tokens": 100}


def test_footer_shows_each_turns_own_cost_and_totals_are_the_sum(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.default = Reply(Text("ok"), usage=USAGE)
    runs = [kernel.run(f"%%claude -o r{i}\nturn {i}") for i in range(3)]
    costs = [json.loads(kernel.run(f"print(r{i}.cost_usd)").texts()) for i in range(3)]
    assert costs[0] > 0 and costs == pytest.approx([costs[0]] * 3)  # same usage, same price
    for run in runs:
        assert f"${costs[0]:.4f}" in bundle(run)["data"]["text/markdown"]
        assert bundle(run)["metadata"]["byre"]["cost_usd"] == pytest.approx(costs[0])
    usage = kernel.run("%claude usage").texts()
    assert f"{3 * costs[0]:.4f}" in usage


def _pending_cards(kernel: KernelDriver) -> int:
    code = (
        "from byre_jupyter.magics import extension as _e\n"
        "_t = _e().conversations.peek('default').active_turn\n"
        "print(len(_t.owner.surface.pending) if _t is not None and _t.owner else 0)"
    )
    return int(kernel.run(code).texts().strip() or 0)


IDLE = (
    "from byre_jupyter.magics import extension as _e\n"
    "print(_e().conversations.peek('default').busy)"
)


def test_stop_with_a_pending_card_always_interrupts(kernel: KernelDriver, api: ScriptedAPI) -> None:
    kernel.run("%config Claude.permission_mode = 'default'")
    api.default = Reply(Text("THE MODEL WAS CALLED AGAIN"))
    for i in range(20):
        api.on(
            f"tool please {i}", Reply(ToolUse("Bash", {"command": f"touch made-{i}.txt"})), times=1
        )
        run = kernel.run(f"%%claude --bg -o r\ntool please {i}", metadata=VSCODE)
        assert run.reply["status"] == "ok"
        kernel.wait(lambda: _pending_cards(kernel) == 1, timeout=60)
        asked = len(api.requests)
        stop = (
            "from byre_jupyter.magics import extension as _e\n"
            "_e().conversations.peek('default').active_turn.owner.stop()"
        )
        assert kernel.run(stop).reply["status"] == "ok"
        kernel.wait(lambda: kernel.run(IDLE).texts().strip() == "False", timeout=60)
        assert "THE MODEL WAS CALLED AGAIN" not in json.dumps(run.outputs), i
        assert len(api.requests) == asked, (
            i,
            [r.body.get("messages", [])[-1:] for r in api.requests[asked:]],
        )
        assert kernel.run("print(r.interrupted)").texts().strip() == "True", i


def test_static_surface_bytes_grow_linearly_with_the_answer(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    words = [f"word{n:05d}" for n in range(2000)]  # ~20 kB, no paragraph breaks at all
    answer = " ".join(words) + "\n\n```python\n" + "x = 1\n" * 300 + "```\n\nDONE_MARK"
    api.default = Reply(Text(answer, chunk=20, delay=0.004))
    run = kernel.run("%%claude\nlong answer please")  # no cellId: nbclient's static surface
    final = bundle(run)
    shown = [o for o in run.outputs if o.get("data")]
    assert [o["output_type"] for o in shown] == ["display_data"]  # one slot: the record
    assert set(final["data"]) == {"text/markdown", "text/html", "text/plain"}
    assert (
        words[-1] in final["data"]["text/markdown"]
        and "DONE_MARK" in final["data"]["text/markdown"]
    )
    final_bytes = len(json.dumps(final["data"]))
    assert final_bytes > 40_000
    # Every display byte the cell sent while streaming and at the end (O(n²) before: each
    # refresh resent the whole bundle).
    assert run.display_bytes < 4 * final_bytes, (run.display_bytes, final_bytes)
