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
