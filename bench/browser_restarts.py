"""The restart cases of bench/browser_latency.py alone: speculate off and on interleaved.

``python -m bench.browser_restarts [ROUNDS]``: each round runs ``restarts()`` once per setting
(off first in even rounds, on first in odd ones) in one Lab tab, and notes before each timed
run which CLI processes are alive (those of older kernels too). Prints medians and spread.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from typing import Any

from byre_jupyter.scripted import ScriptedAPI

from .browser_latency import RESTARTS, Answers, Bench, lab_tab, one_kernel, restarts
from .common import real_cli


def clis() -> list[dict[str, Any]]:
    """The claude CLI processes now alive: pid, parent pid, status, age (s)."""
    import psutil

    now = time.time()
    found = []
    for p in psutil.process_iter(["pid", "ppid", "name", "status", "create_time"]):
        if p.info["name"] == "claude":
            found.append({"pid": p.info["pid"], "ppid": p.info["ppid"],
                          "status": p.info["status"],
                          "age": round(now - p.info["create_time"], 1)})  # fmt: skip
    return found


class Watched(Bench):
    """A Bench that notes the CLI processes alive before each timed run."""

    seen: list[list[dict[str, Any]]]

    def timed(self, i: int, prompt: str, command: str = "notebook:run-cell") -> float:
        self.seen.append(clis())
        return super().timed(i, prompt, command)


def main(rounds: int, full: bool = False) -> None:
    """``full``: each setting's ``one_kernel`` first, as bench/browser_latency.py orders them."""
    cli = real_cli()
    assert cli is not None
    runs: dict[bool, dict[str, list[float]]] = {s: {c: [] for c in RESTARTS} for s in (False, True)}
    log = []
    with ScriptedAPI() as api, lab_tab(api, cli) as lab:
        bench = Watched(lab, Answers(api))
        for r in range(rounds):
            for speculate in (False, True) if r % 2 == 0 else (True, False):
                bench.seen = []
                load = os.getloadavg()[0]
                if full:
                    one_kernel(bench, speculate)
                    bench.seen = [clis()]  # just after its kernel's shutdown
                times = restarts(bench, speculate)
                for case, value in times.items():
                    runs[speculate][case].append(value)
                entry = {"round": r, "speculate": speculate, "load1": round(load, 2),
                         "times": {c: round(v, 3) for c, v in times.items()},
                         "clis_before": bench.seen}  # fmt: skip
                log.append(entry)
                print(json.dumps(entry), flush=True)
    print()
    print("| case | off median | on median | rounds | off range | on range |")
    print("|---|---|---|---|---|---|")
    for case in RESTARTS:
        off, on = runs[False][case], runs[True][case]
        print(
            f"| {case} | {statistics.median(off):.3f} | {statistics.median(on):.3f} | "
            f"{len(off)} | {min(off):.3f}-{max(off):.3f} | {min(on):.3f}-{max(on):.3f} |"
        )


# --- the Run All case traced: kernel-side events beside the page's clock ----------------------

#: Run in the kernel before the load: stamps (epoch s) of each session's start and send, and
#: of each turn's end (``ClaudeExtension.speculate``), into ``_EV``.
TRACE = """\
import time as _t, byre_jupyter.session.session as _S, byre_jupyter.app.extension as _X
_EV = []
def _wrap(cls, name, tag):
    orig = getattr(cls, name)
    async def wrapped(self, *a, **k):
        _EV.append([tag, self.name, id(self) % 100000, _t.time()])
        try:
            return await orig(self, *a, **k)
        finally:
            _EV.append([tag + " done", self.name, id(self) % 100000, _t.time(), self.pid])
    setattr(cls, name, wrapped)
_wrap(_S.Session, "start", "start")
_wrap(_S.Session, "send", "send")
_o_spec = _X.ClaudeExtension.speculate
def _spec(self, name):
    _EV.append(["turn end", name, 0, _t.time()])
    return _o_spec(self, name)
_X.ClaudeExtension.speculate = _spec
"""
_EPOCH_JS = (
    "() => [performance.timeOrigin + window.__byre.latency.t0,"
    " performance.timeOrigin + window.__byre.latency.frame]"
)


def trace(rounds: int) -> None:
    from .browser_latency import _QUIET_JS, _harness, load_cell

    cli = real_cli()
    assert cli is not None
    requests: list[tuple[float, str]] = []
    with ScriptedAPI() as api, lab_tab(api, cli) as lab:
        answers = Answers(api)
        respond = api.default

        def stamped(req: Any) -> Any:
            requests.append((time.time(), req.last_user_text[:40]))
            return respond(req)

        api.default = stamped
        bench = Bench(lab, answers)
        for r in range(rounds):
            for speculate in (False, True) if r % 2 == 0 else (True, False):
                first = f"PROMPT_r_{r}_{int(speculate)}"
                lab.open_notebook(_harness().new_notebook(
                    TRACE + load_cell(speculate), f"%%claude\n{first}"))  # fmt: skip
                lab.restart_kernel()
                before = clis()
                del requests[:]
                took = bench.timed(1, first, "notebook:run-all-cells")
                t0, frame = (x / 1000 for x in lab.page.evaluate(_EPOCH_JS))
                time.sleep(3)  # let the spares start, to see them in the trace (not measured)
                _, out = lab.page.evaluate(
                    _QUIET_JS, [lab.path, "print(__import__('json').dumps(_EV))"]
                )
                events = json.loads(out)
                after = clis()
                bench.close()
                lines = [
                    f"{e[3] - t0:+.3f} {e[0]} {e[1]}#{e[2]}" + (f" pid={e[4]}" if e[4:] else "")
                    for e in events
                ]
                lines += [f"{t - t0:+.3f} API request {text!r}" for t, text in requests]
                lines.append(f"{frame - t0:+.3f} FRAME (answer shown)")
                lines.sort(key=lambda s: float(s.split()[0]))
                print(
                    f"== round {r} speculate={speculate} took={took:.3f}"
                    f" load1={os.getloadavg()[0]:.2f} clis before={before} after3s={len(after)}"
                )
                print("\n".join("   " + s for s in lines), flush=True)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--trace":
    trace(int(sys.argv[2]) if len(sys.argv) > 2 else 2)
elif __name__ == "__main__":
    full = "--full" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--full"]
    main(int(args[0]) if args else 5, full)
