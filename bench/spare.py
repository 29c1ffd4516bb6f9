"""Spare CLIs: re-run, new session and restart vs a warm cell, execute_request → API request.

For ``Claude.speculate`` off (today's behaviour without spares) and on, a fresh real ipykernel
loads the extension and waits for the prewarm, then runs ``%%claude`` cells against the real CLI
and the scripted API, each execute_request carrying a ``cellId`` as JupyterLab's does: cell A,
cell B, a warm cell C (the anchor), a re-run of C (the newest cell: a branch), a re-run of the
earlier cell B (a branch no spare is made for), then, after a cell D and with the
``byre.bridge`` comm opened as the labextension opens it, the ``editing`` event for B (the
user's first keystroke in it), a wait until the spares are ready again, and a re-run of B
("re-run earlier, after editing"), a first cell of a new named session (``-s``) and
``--new``. Before each measured cell the bench waits as a user reading the answer
would: until the spares are ready (at most 20 s; 3 s with speculation off). The scripted API's
responder stamps each prompt's first request (``time.perf_counter`` in this process, where the
execute_request was sent too). "restart" is a new kernel whose first cell is sent right after
``%load_ext`` (Run All: it waits for the prewarm in progress) and, in another kernel, once the
prewarm is ready. Memory: the RSS of each spare CLI (psutil, its process tree) once idle.
Run: ``python -m bench.spare [ROUNDS]`` or ``python -m bench --only spare``.

Measured on the 2-core box (CLI 2.1.328, load average 10-13 from other work, 2 kernels per
setting, medians): a warm cell 0.46-0.51 s; re-running the newest cell 7.51 s without spares,
2.01 s with; a new session (``-s``) 7.40 → 2.24 s; ``--new`` 8.21 → 2.31 s; re-running an
earlier cell (no spare for it) 10.4 / 8.14 s; the first cell after a restart 7.45 s right after
``%load_ext`` (it waits for the prewarm in progress), 1.58 s once the prewarm is ready. main
(before spares) in the same conditions: warm 0.30 s, re-run 5.31 s, new session 4.57 s,
``--new`` 6.30 s. An adopted spare still pays the CLI's first-message work of a new process
(bench/prewarm.py), which is what separates it from a warm cell. Two idle spares: 162 and
173 MiB RSS.

With the ``editing`` event (one kernel per setting, load average 1.4-2.4, a faster day: warm
cell 0.031 s): re-running an earlier cell 0.919 s with spares but no event (0.786 s off),
0.143 s after the event (0.582 s off), as fast as re-running the newest cell (0.149 s).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from byre_jupyter.bridge import PROTOCOL, TARGET
from byre_jupyter.scripted import ScriptedAPI

from .common import Section, cli_env, method_of, real_cli, render_text, stamper
from .kernel import BenchKernel, CellStats

LOAD = "%load_ext byre_jupyter\n%config Claude.permission_mode = 'bypassPermissions'"
SPARES = (
    "import byre_jupyter.magics as m, json; x = m._EXTENSION; s = x.conversations.peek('default');"
    " sp = x.spares.sessions() if hasattr(x, 'spares') else [];"  # main before spares: none
    " print(json.dumps({'ready': bool(s and s.running and s.server_info), 'spares': ["
    "bool(p.running and p.server_info) for p in sp], 'pids': [p.pid for p in sp]}))"
)
BRIDGE_COMM = "bench-bridge"
CASES = ("warm cell", "re-run newest", "re-run earlier", "re-run earlier, after editing",
         "new session -s", "--new")  # fmt: skip


class CellKernel(BenchKernel):
    """A bench kernel whose execute_requests carry JupyterLab's ``cellId``."""

    def submit_cell(self, code: str, cell_id: str) -> CellStats:
        content = {"code": code, "silent": False, "store_history": True,
                   "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}  # fmt: skip
        msg = self.kc.session.msg("execute_request", content, metadata={"cellId": cell_id})
        sent_at = time.perf_counter()
        self.kc.shell_channel.send(msg)
        return CellStats(msg["header"]["msg_id"], sent_at)

    def open_bridge(self) -> None:
        """Open the ``byre.bridge`` comm as the labextension does, hello included."""
        hello = {"type": "hello", "protocol": PROTOCOL, "version": "bench", "frontend": "lab",
                 "path": "bench.ipynb"}  # fmt: skip
        self._shell("comm_open", {"comm_id": BRIDGE_COMM, "target_name": TARGET, "data": hello})

    def editing(self, cell_id: str) -> None:
        """What the labextension sends at the first keystroke in a %%claude cell that ran."""
        event = {"type": "event", "name": "editing", "cell": cell_id}
        self._shell("comm_msg", {"comm_id": BRIDGE_COMM, "data": event})

    def _shell(self, msg_type: str, content: dict[str, Any]) -> None:
        self.kc.shell_channel.send(self.kc.session.msg(msg_type, content))


@contextmanager
def kernel_for(api: ScriptedAPI, cli: str, speculate: bool) -> Iterator[CellKernel]:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**cli_env(api.url, Path(tmp) / "home"), "BYRE_CLAUDE_PATH": cli}
        env["BYRE_STATE_DIR"] = str(Path(tmp) / "state")
        with CellKernel(env, cwd=tmp) as kernel:
            kernel.run(f"get_ipython().config.Claude.speculate = {speculate}")
            yield kernel


def settle(
    kernel: CellKernel, speculate: bool, limit: float = 20.0, replacing: tuple[int, ...] = ()
) -> dict[str, Any]:
    """Wait until the spares are ready (and, with ``replacing``, no longer those pids)."""
    deadline = time.monotonic() + (limit if speculate else 3.0)
    state: dict[str, Any] = {}
    while time.monotonic() < deadline:
        state = kernel.run_json(SPARES)[0]
        new = tuple(state["pids"]) != replacing
        if speculate and state["ready"] and all(state["spares"]) and new:
            break
        time.sleep(0.2)
    return state


def ask(kernel: CellKernel, arrived: dict[str, float], cell: str, head: str = "") -> float:
    prompt = f"PROMPT_{cell}_{time.monotonic_ns()}"
    run = kernel.wait(kernel.submit_cell(f"%%claude {head}\n{prompt}", cell), timeout=120)
    if run.errors:
        raise RuntimeError(f"cell failed: {run.errors}")
    return arrived[prompt] - run.sent_at


def one_kernel(api: ScriptedAPI, cli: str, speculate: bool) -> tuple[dict[str, float], list[int]]:
    arrived = stamper(api)
    times: dict[str, float] = {}
    with kernel_for(api, cli, speculate) as kernel:
        kernel.run(LOAD)
        settle(kernel, True, 60)  # the prewarm
        ask(kernel, arrived, "a")
        settle(kernel, speculate)
        ask(kernel, arrived, "b")
        settle(kernel, speculate)
        times["warm cell"] = ask(kernel, arrived, "c")
        spares = settle(kernel, speculate)
        times["re-run newest"] = ask(kernel, arrived, "c")
        settle(kernel, speculate)
        times["re-run earlier"] = ask(kernel, arrived, "b")
        kernel.open_bridge()
        ask(kernel, arrived, "d")  # B is earlier again
        before = settle(kernel, speculate)
        kernel.editing("b")  # the user starts typing in B, reads, then re-runs it
        settle(kernel, speculate, replacing=tuple(before.get("pids", ())))
        times["re-run earlier, after editing"] = ask(kernel, arrived, "b")
        settle(kernel, speculate)
        times["new session -s"] = ask(kernel, arrived, "n", f"-s s{time.monotonic_ns()}")
        settle(kernel, speculate)
        times["--new"] = ask(kernel, arrived, "w", "--new")
    return times, [p for p in spares.get("pids", []) if p]


def restart(api: ScriptedAPI, cli: str, wait: bool) -> float:
    arrived = stamper(api)
    with kernel_for(api, cli, True) as kernel:
        kernel.run(LOAD)
        if wait:
            settle(kernel, True, 60)
        return ask(kernel, arrived, "first")


def spare_rss(api: ScriptedAPI, cli: str) -> list[int]:
    """RSS of each idle spare (its whole process tree), in bytes."""
    import psutil

    arrived = stamper(api)
    with kernel_for(api, cli, True) as kernel:
        kernel.run(LOAD)
        settle(kernel, True, 60)
        ask(kernel, arrived, "a")
        ask(kernel, arrived, "b")
        pids = [p for p in settle(kernel, True)["pids"] if p]
        sizes = []
        for pid in pids:
            proc = psutil.Process(pid)
            tree = [proc, *proc.children(recursive=True)]
            sizes.append(sum(p.memory_info().rss for p in tree))
        return sizes


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def measure(
    rounds: int = 2, echo: Callable[[str], Any] = lambda s: None, *, smoke: bool = False
) -> Section:
    """``smoke``: one kernel with spares on, no restart or memory rows (the bench smoke test)."""
    section = Section("spare", "Spare CLIs: re-run, new session, restart", method_of(__doc__))
    cli = real_cli()
    if cli is None:
        section.error = "the real claude CLI is not installed"
        return section
    with ScriptedAPI() as api:
        results: dict[bool, dict[str, list[float]]] = {}
        for speculate in (True,) if smoke else (False, True):
            runs: dict[str, list[float]] = {case: [] for case in CASES}
            for _ in range(rounds):
                times, _pids = one_kernel(api, cli, speculate)
                for case, value in times.items():
                    runs[case].append(value)
            results[speculate] = runs
            echo(f"speculate={speculate}: {runs}")
        waits = () if smoke else (False, True)
        firsts = {wait: [restart(api, cli, wait) for _ in range(rounds)] for wait in waits}
        rss = [] if smoke else spare_rss(api, cli)
    table = section.table(
        "execute_request → the CLI's first API request (median s; the warm cell is the anchor)",
        "situation", "speculate off", "speculate on", "on - warm cell (on)",
    )  # fmt: skip
    warm_on = _median(results[True]["warm cell"])
    for case in CASES:
        on = _median(results[True][case])
        off = round(_median(results[False][case]), 3) if False in results else ""
        table.add(case, off, round(on, 3), round(on - warm_on, 3))
    for wait, label in ((False, "restart, first cell right after %load_ext"),
                        (True, "restart, first cell once the prewarm is ready")):  # fmt: skip
        if wait not in firsts:
            continue
        value = _median(firsts[wait])
        table.add(label, "", round(value, 3), round(value - warm_on, 3))
    mib = [round(size / 2**20) for size in rss]
    section.notes.append(f"{rounds} kernel(s) per setting; all runs: {results}")
    if rss:
        section.notes.append(f"idle spare CLIs after the second turn: {len(rss)}, RSS MiB {mib}")
    return section


def main(rounds: int = 2) -> None:
    print(render_text(measure(rounds, echo=print)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
