"""``mcp__byre__run_cells`` in a real kernel through the real CLI and the scripted API
(docs/bridge.md): the test client plays the extension's part on the ``byre.bridge`` comm; a
long run streams into its cell while the ``%%claude`` cell awaits, ■ interrupts it (the cell
shows the KeyboardInterrupt, Claude is told), and the kernel goes on."""

from __future__ import annotations

import ipykernel
import pytest
from support.kernel import KernelDriver
from test_notebook_tool_kernel import FakeFrontend, code  # this folder is on sys.path

from byre_jupyter.app.doctor import IPYKERNEL_LIVE_WIDGETS
from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.cli,
    pytest.mark.skipif(
        tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < IPYKERNEL_LIVE_WIDGETS,
        reason="before ipykernel 7.4 a comm message reaches the kernel only after the cell "
        "ends, so the bridge cannot answer while the %%claude cell awaits (docs/bridge.md)",
    ),
]

LONG = "import time\nprint('started the long run', flush=True)\ntime.sleep(120)\nfinished = True"


def test_the_kernels_interrupt_stops_a_long_run_in_place_and_the_kernel_goes_on(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    frontend = FakeFrontend(kernel, [code("long", LONG), code("asking", "%%claude")])
    frontend.open()
    kernel.run("%config Claude.python_tool = 'allow'")
    api.on("run the long one", Reply(ToolUse("mcp__byre__run_cells", {"cells": ["long"]})))
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("it was interrupted")))
    run = kernel.submit("%%claude\nrun the long one", cell_id="asking")
    # The run streams to its cell while the %%claude cell awaits: the print is there first.
    kernel.wait(
        lambda: any("started the long run" in o.get("text", "") for o in frontend.outputs("long")),
        timeout=90,
    )
    assert not run.idle
    kernel.interrupt()
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=60)
    error = frontend.outputs("long")[-1]
    assert error["output_type"] == "error" and error["ename"] == "KeyboardInterrupt", error
    runs = [method for method, _ in frontend.notified("run.")]
    assert runs[-1] == "run.end", runs
    # The %%claude cell's turn was announced to the page around it, ■ or not (docs/bridge.md).
    turns = frontend.notified("turn.")
    assert turns == [("turn.begin", {"cell": "asking"}), ("turn.end", {"cell": "asking"})], turns
    assert "False" in kernel.run("print('finished' in dir())").texts()
    api.on("are you there", Reply(Text("still here")))
    assert "still here" in kernel.run("%%claude\nare you there?", cell_id="next").texts()


def test_the_counts_the_user_sees_follow_on_without_a_gap(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    """The %%claude cell keeps the count it started with, the cells it ran take the next ones,
    and the next cell follows them: ipykernel's reply gave the asking cell the count after
    the cells it ran, so the count it started with was seen by nobody (In [5], [7], [8], [9])."""
    frontend = FakeFrontend(
        kernel, [code("a", "first = 1"), code("b", "second = 2"), code("asking", "%%claude")]
    )
    frontend.open()
    kernel.run("%config Claude.python_tool = 'allow'")
    api.on("run both", Reply(ToolUse("mcp__byre__run_cells", {"cells": ["a", "b"]})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("ran them")))
    asking = kernel.run("%%claude\nrun both", cell_id="asking")
    assert asking.reply is not None
    counts = {
        params["cell"]: params["execution_count"] for _, params in frontend.notified("run.end")
    }
    shown = asking.reply["execution_count"]
    after = kernel.run("second + first").reply
    assert after is not None
    assert [shown, counts["a"], counts["b"], after["execution_count"]] == [
        shown,
        shown + 1,
        shown + 2,
        shown + 3,
    ]
    # Each count holds its own cell's source (In[n], %history): the %%claude cell once.
    raw = kernel.run("print(get_ipython().history_manager.input_hist_raw[-5:-2])").texts()
    assert raw.strip() == repr(["%%claude\nrun both", "first = 1", "second = 2"]), raw
