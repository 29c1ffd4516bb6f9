"""Re-running a %%claude cell branches: a real kernel driven with execute_requests
that carry ``cellId`` as JupyterLab, Notebook 7 and VS Code send it, the real CLI and the
scripted API. What the model saw is read from the API requests themselves."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from support.kernel import CellRun, KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, ScriptedRequest, Text

pytestmark = [pytest.mark.kernel, pytest.mark.cli]


def ask(kernel: KernelDriver, api: ScriptedAPI, cell: str | None, prompt: str) -> str:
    """Run ``%%claude`` with ``prompt`` as cell ``cell``; returns the history the API saw."""
    return history(ask_run(kernel, api, cell, prompt)[1])


def ask_run(
    kernel: KernelDriver, api: ScriptedAPI, cell: str | None, prompt: str
) -> tuple[CellRun, ScriptedRequest]:
    n = len(api.requests)
    run = kernel.run(f"%%claude\n{prompt}", cell_id=cell)
    assert run.reply is not None and run.reply["status"] == "ok", run.texts()
    return run, api.wait_for_request(prompt, timeout=60, after=n)


def history(request: ScriptedRequest) -> str:
    return json.dumps(request.body["messages"])


def answer_each(api: ScriptedAPI, *prompts: str) -> None:
    for prompt in prompts:
        api.on(prompt, Reply(Text(f"answer to {prompt}")))


#: How a stale answer's record begins (ui/record.py, ``stale_text``).
MARK = "⚠ Out of date:"


def marks(run: CellRun) -> str:
    """The stale marks in the cell's outputs (each at the top of its answer's record)."""
    return " ".join(
        o["data"]["text/plain"]
        for o in run.outputs
        if o["data"].get("text/plain", "").startswith(MARK)
    )


def test_rerun_branches_from_the_cell_before_and_later_cells_follow(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW")
    ask(kernel, api, "cell-a", "PROMPT_A")
    ask(kernel, api, "cell-b", "PROMPT_B_OLD")
    ask(kernel, api, "cell-c", "PROMPT_C")

    seen = ask(kernel, api, "cell-b", "PROMPT_B_NEW")
    assert "PROMPT_A" in seen and "answer to PROMPT_A" in seen
    assert "PROMPT_B_OLD" not in seen and "PROMPT_C" not in seen

    seen = ask(kernel, api, "cell-c", "PROMPT_C")
    assert "PROMPT_A" in seen and "PROMPT_B_NEW" in seen and "answer to PROMPT_B_NEW" in seen
    assert "PROMPT_B_OLD" not in seen
    assert seen.count("PROMPT_C") == 1  # C's old turn is not in its new context

    # The session goes on from C' (linear again), and the conversation is remembered.
    seen = ask(kernel, api, "cell-d", "PROMPT_D")
    assert "PROMPT_B_NEW" in seen and "PROMPT_C" in seen and "PROMPT_B_OLD" not in seen


def test_rerun_append_keeps_one_linear_conversation(kernel: KernelDriver, api: ScriptedAPI) -> None:
    assert "Error" not in kernel.run("%config Claude.rerun = 'append'").texts()
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW")
    ask(kernel, api, "cell-a", "PROMPT_A")
    ask(kernel, api, "cell-b", "PROMPT_B_OLD")
    ask(kernel, api, "cell-c", "PROMPT_C")
    seen = ask(kernel, api, "cell-b", "PROMPT_B_NEW")
    assert all(p in seen for p in ("PROMPT_A", "PROMPT_B_OLD", "PROMPT_C"))


def test_without_cell_ids_the_conversation_stays_linear(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B", "PROMPT_C")
    ask(kernel, api, None, "PROMPT_A")
    ask(kernel, api, None, "PROMPT_B")
    ask(kernel, api, None, "PROMPT_C")
    seen = ask(kernel, api, None, "PROMPT_B again")
    assert all(p in seen for p in ("PROMPT_A", "PROMPT_B", "PROMPT_C"))


def test_cells_left_on_the_old_branch_are_marked_until_run_again(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW")
    a, _ = ask_run(kernel, api, "cell-a", "PROMPT_A")
    ask_run(kernel, api, "cell-b", "PROMPT_B_OLD")
    c, _ = ask_run(kernel, api, "cell-c", "PROMPT_C")
    assert marks(c) == ""
    # No slot is kept for a mark: every output of the cell has something to show.
    assert all(any(o["data"].values()) for o in c.outputs if "data" in o)
    answer_index = next(
        i
        for i, o in enumerate(c.outputs)
        if "text/html" in o["data"] and "answer to PROMPT_C" in o["data"].get("text/markdown", "")
    )
    answer_before = c.outputs[answer_index]["data"]

    b2, _ = ask_run(kernel, api, "cell-b", "PROMPT_B_NEW")
    count = b2.reply["execution_count"]
    marked = c.outputs[answer_index]["data"]  # the answer's own record, marked in place
    assert marked["text/plain"].startswith(f"{MARK} cell [{count}] was run again")
    assert marked["text/plain"].endswith(answer_before["text/plain"])  # the answer, below
    html = marked["text/html"]
    assert html.index('data-byre-rerun="cell-c"') < html.index("answer to PROMPT_C")
    assert 'class="byre-stale-answer" style="opacity:0.55"' in html  # dimmed
    assert marks(a) == "" and marks(b2) == ""  # before the branch point: fine

    c2, _ = ask_run(kernel, api, "cell-c", "PROMPT_C")
    assert marks(c2) == ""
    # The old output, where it still shows, is unmarked and undimmed again.
    assert marks(c) == "" and c.outputs[answer_index]["data"] == answer_before


ALIVE = """
import gc
from byre_jupyter.app.turns import TurnController
from byre_jupyter.ui import TurnView
from byre_jupyter.ui.live import LiveView
gc.collect()
alive = gc.get_objects()
print(*(sum(isinstance(o, kind) for o in alive) for kind in (TurnView, TurnController, LiveView)))
"""


def test_a_finished_turn_keeps_its_record_not_its_live_view(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    """What marks a turn's answer stale later (its view and output slot) stays as long as the
    tree; the turn's controller and live view, with its widgets, go when it ends. Kept by the
    node, they were about 50 KiB a short turn, every turn (bench/RESULTS.md, memory)."""
    prompts = [f"PROMPT_{n}" for n in range(4)]
    answer_each(api, *prompts, "PROMPT_0 again")
    runs = [ask_run(kernel, api, f"cell-{n}", prompt)[0] for n, prompt in enumerate(prompts)]
    views, controllers, live_views = map(int, kernel.run(ALIVE).texts().split())
    assert views >= len(prompts)
    assert controllers <= 1 and live_views <= 1, (controllers, live_views)
    # and each record can still be marked: re-running the first cell leaves the rest behind
    ask_run(kernel, api, "cell-0", "PROMPT_0 again")
    assert all(marks(run) for run in runs[1:]), [marks(run) for run in runs]


def test_branching_after_an_interrupted_turn(kernel: KernelDriver, api: ScriptedAPI) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_C", "PROMPT_B_NEW")
    api.on("PROMPT_B_LONG", Reply(Text("word " * 4000, chunk=5, delay=0.01)), times=1)
    ask(kernel, api, "cell-a", "PROMPT_A")
    run = kernel.submit("%%claude\nPROMPT_B_LONG", cell_id="cell-b")
    api.wait_for_request("PROMPT_B_LONG", timeout=60)
    kernel.wait(lambda: bool(run.outputs), timeout=60)  # the live view is up: the turn streams
    kernel.interrupt()
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=30)
    assert run.reply["ename"] == "CellInterrupted", run.texts()  # ■ ended the turn early
    seen = ask(kernel, api, "cell-c", "PROMPT_C")
    assert "PROMPT_B_LONG" in seen  # the interrupted turn is part of the conversation

    seen = ask(kernel, api, "cell-b", "PROMPT_B_NEW")
    assert "PROMPT_A" in seen and "PROMPT_B_LONG" not in seen and "PROMPT_C" not in seen


def test_branching_after_a_kernel_restart_and_resume(
    kernels: Callable[..., Any], api: ScriptedAPI
) -> None:
    """The tree lives in the kernel: after a restart and ``%claude resume`` the resumed
    conversation is the root, cells run then are first runs, and re-running them branches
    from the resumed conversation (never from nothing)."""
    answer_each(api, "PROMPT_A", "PROMPT_B", "PROMPT_C", "PROMPT_D", "PROMPT_D_NEW", "PROMPT_C2")
    first = kernels()  # runs LOAD, which may not fail
    ask(first, api, "cell-a", "PROMPT_A")
    ask(first, api, "cell-b", "PROMPT_B")
    first.close()
    kernel = kernels()
    assert "resumes conversation" in kernel.run("%claude resume").texts()
    ask(kernel, api, "cell-c", "PROMPT_C")
    ask(kernel, api, "cell-d", "PROMPT_D")
    seen = ask(kernel, api, "cell-d", "PROMPT_D_NEW")
    assert all(p in seen for p in ("PROMPT_A", "PROMPT_B", "PROMPT_C"))
    assert 'PROMPT_D"' not in seen and "PROMPT_D\\n" not in seen
    assert seen.count("PROMPT_D") == 1
    seen = ask(kernel, api, "cell-c", "PROMPT_C2")  # C was the first cell after resume
    assert "PROMPT_A" in seen and "PROMPT_B" in seen
    assert 'PROMPT_C"' not in seen and "PROMPT_D" not in seen


def test_history_shows_the_tree_and_checkout_continues_from_an_earlier_turn(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    answer_each(api, "PROMPT_A", "PROMPT_B_OLD", "PROMPT_C", "PROMPT_B_NEW", "PROMPT_E")
    a, _ = ask_run(kernel, api, "cell-a", "PROMPT_A")
    ask(kernel, api, "cell-b", "PROMPT_B_OLD")
    ask(kernel, api, "cell-c", "PROMPT_C")
    ask(kernel, api, "cell-b", "PROMPT_B_NEW")
    lines = kernel.run("%claude history").texts().splitlines()
    line = {n: next(x for x in lines if f"#{n} " in x) for n in (1, 2, 3, 4)}
    assert "○" in line[2] and "○" in line[3] and "stale" in line[3]
    assert "●" in line[1] and "●" in line[4] and "current" in line[4]
    assert "cell cell-b" in line[4] and "PROMPT_B_NEW" in line[4] and "$" in line[4]

    count = a.reply["execution_count"]
    out = kernel.run(f"%claude checkout [{count}]").texts()
    assert "continues after turn #1" in out
    seen = ask(kernel, api, "cell-e", "PROMPT_E")
    assert "PROMPT_A" in seen
    assert not any(p in seen for p in ("PROMPT_B_OLD", "PROMPT_B_NEW", "PROMPT_C"))
    assert "UsageError" in kernel.run("%claude checkout #99").texts()
