"""``mcp__byre__notebook`` in a real kernel through the real CLI and the scripted API
(docs/bridge.md): without a bridge the saved file is read and the result says it may lag; with
a frontend on the ``byre.bridge`` comm (this test client plays the extension's part, message
for message) the reply comes back while the ``%%claude`` cell awaits, unsaved edits included,
and ``%claude doctor`` says connected."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ipykernel
import pytest
from support.frontend import PageModel, hello_of
from support.kernel import KernelDriver

from byre_jupyter.app.doctor import IPYKERNEL_LIVE_WIDGETS
from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

# The kernel is told which notebook it runs (the saved file the no-bridge path reads).
pytestmark = [
    pytest.mark.kernel,
    pytest.mark.cli,
    pytest.mark.kernel_env(JPY_SESSION_NAME="work/analysis.ipynb"),
]

SAVED_CELL = "saved = 'what the file holds'"
UNSAVED_CELL = "unsaved = 'typed on screen, never saved'"


def notebook(cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def code(cell_id: str, source: str) -> dict[str, Any]:
    return {
        "id": cell_id,
        "cell_type": "code",
        "source": source,
        "execution_count": None,
        "metadata": {},
        "outputs": [],
    }


@pytest.fixture(autouse=True)
def saved_notebook(workdir: Path) -> Path:
    """The notebook on disk in the shared workdir, before the kernel starts in it."""
    cells = [code("first", SAVED_CELL), code("asking", "%%claude\nread the notebook")]
    path = workdir / "analysis.ipynb"
    path.write_text(json.dumps(notebook(cells)))
    return path


def ask_for_the_notebook(api: ScriptedAPI) -> None:
    api.on("read the notebook", Reply(ToolUse("mcp__byre__notebook", {}, id="toolu_nb")), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("read it")))


def notebook_result(api: ScriptedAPI) -> dict[str, Any]:
    results = {r["tool_use_id"]: r for r in api.requests[-1].last_tool_results}
    result = results["toolu_nb"]
    assert isinstance(result, dict)
    return result


def test_without_a_bridge_the_saved_file_is_read_and_said_to_lag(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    ask_for_the_notebook(api)
    run = kernel.run("%%claude\nread the notebook", cell_id="asking")
    assert "read it" in run.texts()
    result = notebook_result(api)
    assert not result["is_error"], result
    assert SAVED_CELL in result["text"]
    assert "from the saved file" in result["text"]
    assert "may lag behind the screen" in result["text"]
    assert "id asking" in result["text"] and "the %%claude cell asking you" in result["text"]
    doctor = kernel.run("%claude doctor", cell_id="doctor").texts()
    assert "Frontend bridge" in doctor and "not connected" in doctor


class FakeFrontend(PageModel):
    """The extension's side of the comm (tests/support/frontend.py's page), over the test
    client's channels."""

    def __init__(self, kernel: KernelDriver, cells: list[dict[str, Any]]) -> None:
        super().__init__(cells, path="work/analysis.ipynb")
        self.kernel = kernel
        self.comm_id = "bridge-test-comm"
        handle = kernel._handle

        def intercept(msg: dict[str, Any]) -> None:
            content = msg["content"]
            if msg["msg_type"] == "comm_msg" and content.get("comm_id") == self.comm_id:
                reply = self.handle(content["data"])
                if reply is not None:
                    self._send("comm_msg", {"comm_id": self.comm_id, "data": reply})
            handle(msg)

        kernel._handle = intercept  # type: ignore[method-assign]

    def _send(self, msg_type: str, content: dict[str, Any]) -> None:
        client = self.kernel.kc
        client.shell_channel.send(client.session.msg(msg_type, content))

    def open(self) -> None:
        hello = hello_of(self.path)
        self._send(
            "comm_open", {"comm_id": self.comm_id, "target_name": "byre.bridge", "data": hello}
        )


@pytest.mark.skipif(
    tuple(int(p) for p in ipykernel.__version__.split(".")[:2]) < IPYKERNEL_LIVE_WIDGETS,
    reason="before ipykernel 7.4 a comm message reaches the kernel only after the cell ends, "
    "so the bridge cannot answer while the %%claude cell awaits (docs/bridge.md)",
)
def test_through_the_bridge_the_unsaved_screen_is_read_while_the_cell_awaits(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    frontend = FakeFrontend(kernel, [code("first", UNSAVED_CELL), code("asking", "%%claude")])
    frontend.open()
    doctor = kernel.run("%claude doctor", cell_id="doctor").texts()
    assert "connected: JupyterLab" in doctor and "work/analysis.ipynb" in doctor
    ask_for_the_notebook(api)
    run = kernel.run("%%claude\nread the notebook", cell_id="asking")
    assert "read it" in run.texts()
    # One read; a ping at the turn's end asks whether a page took the answer (docs/bridge.md,
    # "Pending answers").
    assert [r["method"] for r in frontend.requests if r["method"] != "ping"] == ["read"]
    result = notebook_result(api)
    assert not result["is_error"], result
    assert UNSAVED_CELL in result["text"] and SAVED_CELL not in result["text"]
    assert "live from the notebook on screen" in result["text"]
    assert "may lag" not in result["text"]
