"""A minimal Jupyter frontend for the benchmarks: a real ipykernel over jupyter_client.

:class:`BenchKernel` starts ``python3`` (this venv's ipykernel) with the repo on
``PYTHONPATH``, runs cells and accounts for every IOPub message a cell produced (by type, with
approximate wire bytes: JSON of header, parent header, metadata and content, plus binary
buffers), with the client-side arrival time of each ``comm_msg`` (and of the first one whose
widget state contains a given marker text). A cell reports back by
printing one JSON line, returned by :meth:`run_json`.
"""

from __future__ import annotations

import json
import os
import queue
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .common import REPO

__all__ = ["BenchKernel", "CellStats"]


def _wire_size(msg: Mapping[str, Any]) -> int:
    parts = (msg.get("header"), msg.get("parent_header"), msg.get("metadata"), msg.get("content"))
    size = sum(len(json.dumps(p, default=str)) for p in parts)
    return size + sum(len(memoryview(b).cast("B")) for b in msg.get("buffers") or ())


@dataclass
class CellStats:
    msg_id: str
    sent_at: float
    counts: Counter[str] = field(default_factory=Counter)
    bytes: Counter[str] = field(default_factory=Counter)
    comm_times: list[float] = field(default_factory=list)
    stdout: str = ""
    errors: list[str] = field(default_factory=list)
    reply: dict[str, Any] | None = None
    idle_at: float | None = None
    #: If set: the arrival time of the first comm_msg whose widget state holds this text.
    marker: str | None = None
    marker_at: float | None = None

    def json(self) -> dict[str, Any]:
        for line in reversed(self.stdout.splitlines()):
            if line.startswith("{"):
                return json.loads(line)  # type: ignore[no-any-return]
        raise RuntimeError(f"the cell printed no JSON; errors={self.errors} out={self.stdout!r}")


class BenchKernel:
    def __init__(self, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        from jupyter_client.manager import KernelManager

        full = dict(os.environ)
        full["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p
        )
        full.update(env or {})
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(env=full, cwd=cwd or str(REPO))
        self.kc = self.km.blocking_client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    @property
    def pid(self) -> int:
        return int(self.km.provisioner.process.pid)  # type: ignore[union-attr]

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=False)

    def __enter__(self) -> BenchKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def submit(self, code: str, marker: str | None = None) -> CellStats:
        sent_at = time.perf_counter()
        msg_id = self.kc.execute(code)
        return CellStats(msg_id, sent_at, marker=marker)

    def wait(self, cell: CellStats, timeout: float = 300) -> CellStats:
        deadline = time.monotonic() + timeout
        while cell.idle_at is None or cell.reply is None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"cell did not finish: {cell.stdout[-500:]!r} {cell.errors}")
            self.pump(cell, 0.2)
        return cell

    def pump(self, cell: CellStats, timeout: float) -> None:
        try:
            msg = self.kc.get_iopub_msg(timeout=timeout)
        except queue.Empty:
            msg = None
        if msg is not None and msg["parent_header"].get("msg_id") == cell.msg_id:
            now = time.perf_counter()
            kind = msg["msg_type"]
            cell.counts[kind] += 1
            cell.bytes[kind] += _wire_size(msg)
            content = msg["content"]
            if kind == "comm_msg":
                cell.comm_times.append(now)
                if cell.marker is not None and cell.marker_at is None:
                    # Anywhere in the update: the live view sends its text as pieces
                    # (docs/kernel.md, section 5), the draft as a display's HTML.
                    state = content.get("data", {}).get("state", {})
                    if cell.marker in json.dumps(state):
                        cell.marker_at = now
            elif kind == "stream":
                cell.stdout += content.get("text", "")
            elif kind == "error":
                cell.errors.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                cell.idle_at = now
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=0)
            except queue.Empty:
                break
            if reply["parent_header"].get("msg_id") == cell.msg_id:
                cell.reply = reply["content"]

    def run(self, code: str, timeout: float = 300, marker: str | None = None) -> CellStats:
        cell = self.wait(self.submit(code, marker), timeout)
        if cell.errors:
            raise RuntimeError(f"cell failed: {cell.errors}\n{code[:200]}")
        return cell

    def run_json(self, code: str, timeout: float = 300) -> tuple[dict[str, Any], CellStats]:
        cell = self.run(code, timeout)
        return cell.json(), cell

    def interrupt(self) -> None:
        self.km.interrupt_kernel()
