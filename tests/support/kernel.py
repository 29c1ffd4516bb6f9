"""A small driver for a real ipykernel over jupyter_client, acting like a minimal frontend.

It executes cells, collects their iopub outputs, applies ``update_display_data`` to outputs with
the same ``display_id`` (as JupyterLab does), can interrupt the kernel, and keeps listening after
a cell's reply (for ``--bg`` turns that update their cell later).
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from byre_jupyter.scripted import cli_env

#: What a %%claude kernel test runs first (the shared ``kernel`` fixture too): the extension,
#: and no approval cards, since no one is there to click them.
LOAD = "%load_ext byre_jupyter\n%config Claude.permission_mode = 'bypassPermissions'"


@dataclass
class CellRun:
    msg_id: str
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    idle: bool = False
    iopub_count: int = 0
    comm_opens: int = 0
    #: Bytes of the data of every display_data/update_display_data for this cell's outputs.
    display_bytes: int = 0
    #: The state each widget of the cell was opened with (its comm_open's data).
    widget_states: list[dict[str, Any]] = field(default_factory=list)

    def texts(self) -> str:
        parts = []
        for out in self.outputs:
            if out["output_type"] == "stream":
                parts.append(out["text"])
            elif out["output_type"] in ("display_data", "execute_result"):
                parts.append(out["data"].get("text/markdown") or out["data"].get("text/plain", ""))
            elif out["output_type"] == "error":
                parts.append(f"{out['ename']}: {out['evalue']}")
        return "\n".join(parts)

    def mimetypes(self) -> set[str]:
        return {k for o in self.outputs for k in o.get("data", {})}


def kernel_env(api_url: str, cli_path: str, tmp: Path, **extra: str) -> dict[str, str]:
    """A kernel's environment for %%claude tests: ours, plus the CLI's, with state under tmp."""
    env = dict(os.environ)
    env.update(cli_env(api_url, tmp / "home"))
    env.update(BYRE_CLAUDE_PATH=cli_path, BYRE_STATE_DIR=str(tmp / "state"), **extra)
    env.pop("BYRE_LIVE", None)
    return env


class KernelDriver:
    def __init__(self, env: Mapping[str, str], cwd: str) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=dict(env), cwd=cwd)
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)
        self.runs: dict[str, CellRun] = {}
        self._display_owner: dict[str, CellRun] = {}
        #: Whether the newest cell that ran (not aborted) failed.
        self._failed = False

    def close(self) -> None:
        """Stop the channels and shut the kernel down, skipping what the test already did
        (closed the driver, or shut the kernel down through ``km``)."""
        if self.kc.channels_running:
            self.kc.stop_channels()
        if self.km.has_kernel:
            self.km.shutdown_kernel(now=False)

    def kernel_pid(self) -> int:
        provisioner = self.km.provisioner
        assert provisioner is not None
        return provisioner.process.pid  # type: ignore[attr-defined,no-any-return]

    def submit(
        self,
        code: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        cell_id: str | None = None,
    ) -> CellRun:
        """Send an execute_request; ``metadata`` is what a frontend puts in the request's
        metadata (JupyterLab, Notebook 7 and VS Code: ``{"cellId": ...}``, which ``cell_id``
        adds; nbclient: nothing)."""
        if cell_id is not None:
            metadata = {**(metadata or {}), "cellId": cell_id}
        if metadata is None:
            msg_id = self.kc.execute(code)
        else:
            content = {
                "code": code,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            msg = self.kc.session.msg("execute_request", content, metadata=dict(metadata))
            self.kc.shell_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
        run = CellRun(msg_id)
        self.runs[msg_id] = run
        return run

    def run(
        self,
        code: str,
        timeout: float = 120,
        metadata: Mapping[str, Any] | None = None,
        *,
        cell_id: str | None = None,
    ) -> CellRun:
        """Run one cell, as a user does after the previous one has finished.

        After a failed cell the kernel aborts what arrives until it has finished aborting its
        queue (``stop_on_error``); ipykernel 6.29 ends that on a later loop turn, a while on a
        loaded machine. A user's next cell comes later than that, so a cell aborted then is
        sent again (an aborted request ran nothing)."""
        deadline = time.monotonic() + timeout
        while True:
            after_failure = self._failed
            run = self.submit(code, metadata, cell_id=cell_id)
            self._finish(run, deadline, code)
            if not (after_failure and run.reply["status"] == "aborted"):  # type: ignore[index]
                return run
            self.pump(0.05)

    def _finish(self, run: CellRun, deadline: float, code: str) -> None:
        try:
            self.wait(lambda: run.idle and run.reply is not None, deadline - time.monotonic())
        except TimeoutError:
            raise TimeoutError(
                f"cell did not finish in time: {code[:60]!r}; "
                f"outputs so far: {run.texts()[-2000:]!r}"
            ) from None

    def wait(self, condition: Callable[[], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("kernel condition not met in time")
            self.pump(min(remaining, 0.5))

    def pump(self, timeout: float) -> None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            msg = None
        if msg is not None:
            self._handle(msg)
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                break
            run = self.runs.get(reply["parent_header"].get("msg_id"))
            if run is not None:
                run.reply = reply["content"]
                if run.reply["status"] != "aborted":
                    self._failed = run.reply["status"] == "error"

    def _handle(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        run = self.runs.get(msg["parent_header"].get("msg_id"))
        if kind == "update_display_data":
            owner = self._display_owner.get(content.get("transient", {}).get("display_id", ""))
            if owner is not None:
                owner.iopub_count += 1
                owner.display_bytes += len(json.dumps(content["data"]))
                display_id = content["transient"]["display_id"]
                for out in owner.outputs:
                    if out.get("display_id") == display_id:
                        out["data"], out["metadata"] = content["data"], content.get("metadata", {})
            return
        if run is None:
            return
        run.iopub_count += 1
        if kind == "status" and content["execution_state"] == "idle":
            run.idle = True
        elif kind == "stream":
            run.outputs.append(
                {"output_type": "stream", "name": content["name"], "text": content["text"]}
            )
        elif kind in ("display_data", "execute_result"):
            out = {
                "output_type": kind,
                "data": content["data"],
                "metadata": content.get("metadata", {}),
            }
            run.display_bytes += len(json.dumps(content["data"]))
            display_id = content.get("transient", {}).get("display_id")
            if display_id:
                out["display_id"] = display_id
                self._display_owner[display_id] = run
            run.outputs.append(out)
        elif kind == "error":
            run.outputs.append(
                {"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]}
            )
        elif kind == "clear_output":
            run.outputs.clear()
        elif kind == "comm_open":
            run.comm_opens += 1
            run.widget_states.append(content.get("data", {}).get("state", {}))

    def interrupt(self) -> None:
        self.km.interrupt_kernel()
