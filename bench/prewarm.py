"""Prewarm: time from a cell's execute_request to its first API request, first cell vs later.

The goal: the first ``%%claude`` cell reach the API nearly as fast as a later one
(target: within 0.1 s). For ``Claude.prewarm`` off and on, a fresh real ipykernel loads the
extension, waits as a user would before the first cell (until the warm CLI has answered
initialize, or 3 s when off), then runs ``%%claude`` cells against the real CLI and the
scripted API; the scripted API's responder stamps the arrival of each prompt's request
(``time.perf_counter`` in this process, where the execute_request was sent too).
Run: ``python -m bench.prewarm [ROUNDS]``.

Where the first cell's extra time goes (measured on the 2-core box, CLI 2.1.328, prewarm on):
the kernel writes the first message to the warm CLI's stdin 5-35 ms after the execute_request
(the same as later cells, give or take the ui modules' first use), and the CLI then takes
0.12-0.8 s (load-dependent) before its first API request against 0.03-0.1 s for later ones; a
bare ``Session`` outside any kernel shows the same gap, and strace shows no child process or
file wait in it: the CLI's own first-message work (system prompt, tool schemas, attachments).
Asking the warm CLI ``mcp_status`` first does not shorten it; ``get_context_usage`` does a
little but makes about 25 ``count_tokens`` API calls; a local ``/cost`` turn neither helps nor
stays out of the model's context.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from byre_jupyter.scripted import ScriptedAPI

from .common import cli_env, real_cli, stamper
from .kernel import BenchKernel

LOAD = "%load_ext byre_jupyter\n%config Claude.permission_mode = 'bypassPermissions'"
# Ready: the warm CLI has answered initialize (``running`` alone is true while it starts).
READY = (
    "import byre_jupyter.magics as m, json; s = m._EXTENSION.conversations.peek('default'); "
    "print(json.dumps({'ready': bool(s and s.running and s.server_info)}))"
)


def one_kernel(api: ScriptedAPI, cli: str, prewarm: bool, cells: int = 3) -> list[float]:
    arrived = stamper(api)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**cli_env(api.url, Path(tmp) / "home"), "BYRE_CLAUDE_PATH": cli}
        env["BYRE_STATE_DIR"] = str(Path(tmp) / "state")
        with BenchKernel(env, cwd=tmp) as kernel:
            kernel.run(f"get_ipython().config.Claude.prewarm = {prewarm}")
            kernel.run(LOAD)
            deadline = time.monotonic() + (60 if prewarm else 3)
            while time.monotonic() < deadline:
                if prewarm and kernel.run_json(READY)[0]["ready"]:
                    break
                time.sleep(0.2)
            times = []
            for i in range(cells):
                prompt = f"PROMPT_{i}_{time.monotonic_ns()}"
                cell = kernel.submit(f"%%claude\n{prompt}")
                kernel.wait(cell, timeout=120)
                times.append(arrived[prompt] - cell.sent_at)
            return times


def main(rounds: int = 3) -> None:
    cli = real_cli()
    if cli is None:
        sys.exit("the real claude CLI is not installed")
    with ScriptedAPI() as api:
        for prewarm in (False, True):
            firsts, laters = [], []
            for _ in range(rounds):
                times = one_kernel(api, cli, prewarm)
                firsts.append(times[0])
                laters.extend(times[1:])
            print(
                f"prewarm={prewarm!s:5}  first cell → API request: median "
                f"{statistics.median(firsts):.3f} s {[round(t, 3) for t in firsts]}; "
                f"later cells: median {statistics.median(laters):.3f} s "
                f"(n={len(laters)}, max {max(laters):.3f})"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
