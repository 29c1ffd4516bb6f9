"""Benchmark 5: memory and file descriptors over a 500-turn session.

Two host processes are watched with psutil at turns 0/100/250/500 (turn 0 = the CLI started,
no turn yet; a ``gc.collect()`` runs before each sample so the figures are what stays
referenced, not garbage waiting for the collector):

* **Session**: a fresh interpreter (``bench.worker``) runs one :class:`~byre_jupyter.Session`
  for 500 tiny turns (``send("hi")``, every event consumed) against the real ``claude`` CLI
  and the scripted fake API started as a separate process (``python -m byre_jupyter.scripted
  --script ok``, so the server's request log does not count). If the real CLI is not
  installed or its warm turns are slower than 0.3 s, the fake CLI is used instead.
* **Kernel**: a real ipykernel runs the same number of ``%%claude hi`` cells with live widgets
  (``Claude.live = True``: a widget tree per turn, replaced by the static bundle and closed at
  the end), against the same CLI; the kernel process is sampled from outside.

Reported: RSS, growth from turn 100 to the last turn per turn (the steady-state slope, after
imports and first-turn caches), open fds, threads, and the CLI's own RSS (not ours to fix,
shown for scale). The kernel's CLI processes are counted too: after a turn an idle spare CLI
(``Claude.speculate``) may be running, three pipes of the kernel's, so fd growth is counted
without three fds per CLI process.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .common import Section, cli_env, fake_cli, fmt, method_of, plan_env, real_cli, run_worker
from .gen import text_turn_file
from .kernel import BenchKernel

__all__ = ["kernel_run", "measure", "session_run"]

MiB = 2**20


@contextmanager
def scripted_api_process() -> Iterator[str]:
    """``python -m byre_jupyter.scripted --script ok`` in its own process; yields its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "byre_jupyter.scripted", "--script", "ok"],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise RuntimeError(f"scripted API did not start: {url!r}")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _proc_sample(pid: int, cli_pid: int | None) -> dict[str, Any]:
    import psutil

    p = psutil.Process(pid)
    sample = {"rss": p.memory_info().rss, "fds": p.num_fds(), "threads": p.num_threads()}
    if cli_pid:
        try:
            sample["cli_rss"] = psutil.Process(cli_pid).memory_info().rss
        except psutil.Error:
            sample["cli_rss"] = None
    return sample


def session_run(
    n_turns: int,
    checkpoints: list[int],
    cli: str,
    api_url: str | None,
    max_turn_s: float | None = None,
) -> dict[str, Any]:
    """Worker: one Session, ``n_turns`` tiny turns; samples at ``checkpoints``. With
    ``max_turn_s``, gives up after 10 turns (``{"too_slow": median}``) if the median warm turn
    is slower than that."""

    async def main() -> dict[str, Any]:
        from byre_jupyter import Session

        home = Path(tempfile.mkdtemp(prefix="bench-mem-"))
        if api_url:
            env = cli_env(api_url, home / "home")
        else:
            env = plan_env((text_turn_file(5, token_prefix="m"), 0))
        session = Session(cli_path=cli, env=env, cwd=str(home))
        samples: dict[int, dict[str, Any]] = {}
        times: list[float] = []
        try:
            await session.start()
            gc.collect()
            samples[0] = _proc_sample(os.getpid(), session.pid)
            for i in range(1, n_turns + 1):
                t0 = time.perf_counter()
                turn = await session.send("hi")
                async for _message in turn.events():
                    pass
                result = await turn.result()
                if result.is_error:
                    raise RuntimeError(f"turn {i} failed: {result.error_message}")
                times.append(time.perf_counter() - t0)
                if max_turn_s is not None and i == 10:
                    warm = sorted(times[1:])[len(times[1:]) // 2]
                    if warm > max_turn_s:
                        return {"too_slow": warm}
                if i in checkpoints:
                    gc.collect()
                    samples[i] = _proc_sample(os.getpid(), session.pid)
            restarts = session.restarts
        finally:
            await session.close()
        return {"samples": samples, "turn_times": times, "restarts": restarts}

    return asyncio.run(main())


def kernel_run(
    n_turns: int, checkpoints: list[int], cli: str, api_url: str | None
) -> dict[str, Any]:
    """``n_turns`` ``%%claude hi`` cells in a real kernel; samples the kernel from outside."""
    with tempfile.TemporaryDirectory() as tmp:
        if api_url:
            env = cli_env(api_url, Path(tmp) / "home")
        else:
            env = plan_env((text_turn_file(5, token_prefix="m"), 0))
        samples: dict[int, dict[str, Any]] = {}
        times: list[float] = []
        with BenchKernel(env={"BYRE_STATE_DIR": str(Path(tmp) / "state")}, cwd=tmp) as k:
            k.run(
                "%load_ext byre_jupyter\n%config Claude.live = True\n"
                f"%config Claude.cli_path = {cli!r}\n%config Claude.env = {env!r}\n"
                "import gc, json\n"
            )

            def clis() -> list[int]:
                import psutil

                # The CLIs themselves, below their /bin/sh supervisors (transport/process.py):
                # the session's, and the idle spares' (Claude.speculate).
                kids = psutil.Process(k.pid).children(recursive=True)
                return [p.pid for p in kids if p.cmdline()[:1] != ["/bin/sh"]]

            def sample() -> dict[str, Any]:
                pids = clis()
                return {**_proc_sample(k.pid, pids[0] if pids else None), "clis": len(pids)}

            # Baseline: what plain cells cost the kernel (IPython's own history and caches).
            k.run("gc.collect()")
            before = _proc_sample(k.pid, None)
            for _ in range(n_turns):
                k.run("x = 1")
            k.run("gc.collect()")
            after = _proc_sample(k.pid, None)
            baseline = (after["rss"] - before["rss"]) / n_turns
            samples[0] = sample()
            for i in range(1, n_turns + 1):
                t0 = time.perf_counter()
                cell = k.run("%%claude\nhi", timeout=120)
                times.append(time.perf_counter() - t0)
                if i == 1 and not cell.counts.get("comm_open"):
                    raise RuntimeError(f"no widgets were shown: {dict(cell.counts)}")
                if i in checkpoints:
                    k.run("gc.collect()")
                    samples[i] = sample()
            widgets, _ = k.run_json(
                "import ipywidgets\nprint(json.dumps({'widgets': len(ipywidgets.Widget.widgets)}))"
            )
    return {
        "samples": samples,
        "turn_times": times,
        "widgets_alive": widgets["widgets"],
        "plain_cell_slope": baseline,
    }


def measure(n_turns: int = 500, kernel_turns: int | None = None) -> Section:
    section = Section("memory", "5. Memory over a long session", method_of(__doc__))
    kernel_turns = n_turns if kernel_turns is None else kernel_turns
    marks = sorted(
        {0, 1, *(c for c in (100, 250, 500) if c < n_turns), n_turns}
        | ({max(1, n_turns // 5), max(1, n_turns // 2)} if n_turns < 500 else set())
    )
    cli = real_cli()
    which = "real CLI"
    with scripted_api_process() as url:
        result: dict[str, Any] | None = None
        if cli is not None:
            result = run_worker(
                "memory:session_run",
                {
                    "n_turns": n_turns,
                    "checkpoints": marks,
                    "cli": cli,
                    "api_url": url,
                    "max_turn_s": 0.3,
                },
                timeout=900,
            )
            if "too_slow" in result:
                section.notes.append(
                    f"Real CLI warm turns take {fmt(result['too_slow'])} s: fake CLI used."
                )
                result = None
        if result is None:
            which = "fake CLI"
            cli_used: str = fake_cli()
            result = run_worker(
                "memory:session_run",
                {"n_turns": n_turns, "checkpoints": marks, "cli": cli_used, "api_url": None},
            )
        else:
            assert cli is not None
            cli_used = cli
        kernel: dict[str, Any] | None = None
        if kernel_turns:
            kmarks = [m for m in marks if m <= kernel_turns] + (
                [kernel_turns] if kernel_turns not in marks else []
            )
            kernel = kernel_run(
                kernel_turns, kmarks, cli_used, url if which == "real CLI" else None
            )

    def add_table(title: str, data: dict[str, Any], fd_base: int = 0) -> tuple[float, int, str]:
        samples = {int(k): v for k, v in data["samples"].items()}
        procs = "clis" in samples[0]  # the kernel's: its CLI processes, spares included
        columns = ["RSS MiB", "Δ from turn 0 MiB", "open fds", "threads", "CLI RSS MiB"]
        t = section.table(title, "turn", *columns, *(["CLI processes"] if procs else []))
        base = samples[0]
        for turn in sorted(samples):
            s = samples[turn]
            cli_rss = s.get("cli_rss")
            t.add(
                turn,
                s["rss"] / MiB,
                (s["rss"] - base["rss"]) / MiB,
                s["fds"],
                s["threads"],
                cli_rss / MiB if cli_rss else "n/a",
                *([s["clis"]] if procs else []),
            )
        last = max(samples)
        ref = 100 if 100 in samples and last > 100 else min(k for k in samples if k > 0)
        slope = (samples[last]["rss"] - samples[ref]["rss"]) / max(1, last - ref)
        # Each CLI process is three pipes of the kernel's (stdin, stdout, stderr): an idle
        # spare that is there at one sample and not at another is no leak.
        fds = {n: s["fds"] - 3 * s.get("clis", 0) for n, s in samples.items()}
        fd_growth = fds[last] - fds[fd_base]
        times = data["turn_times"]
        section.notes.append(
            f"{title}: median turn {fmt(sorted(times)[len(times) // 2])} s; RSS slope from turn "
            f"{ref} to {last}: {fmt(slope / 1024)} KiB/turn; fds {samples[fd_base]['fds']} -> "
            f"{samples[last]['fds']}"
            + (
                f" ({samples[fd_base]['clis']} -> {samples[last]['clis']} CLI processes, three "
                "pipes each; the growth is counted without them)."
                if procs
                else "."
            )
        )
        return slope, fd_growth, f"turns {ref}-{last}"

    slope, fds, span = add_table(f"Session ({which}), {n_turns} turns", result)
    section.check(
        "Session: no per-turn memory or fd growth",
        f"{fmt(slope / 1024)} KiB/turn over {span}; fds {'+' if fds >= 0 else ''}{fds}",
        slope < 20 * 1024 and fds <= 0,
    )
    if kernel is not None:
        # Turn 0 is before the first %%claude (no CLI yet): fds count from turn 1.
        kslope, kfds, kspan = add_table(
            f"Kernel, %%claude with live widgets ({which}), {kernel_turns} cells", kernel, fd_base=1
        )
        plain = kernel["plain_cell_slope"]
        section.check(
            "Kernel: per-turn growth near a plain cell's, no fd growth, no widget left",
            f"{fmt(kslope / 1024)} KiB/turn over {kspan} (a plain `x = 1` cell: "
            f"{fmt(plain / 1024)} KiB); fds {'+' if kfds >= 0 else ''}{kfds} after turn 1; "
            f"{kernel['widgets_alive']} widget models alive at the end",
            kfds <= 0 and kernel["widgets_alive"] == 0 and kslope - plain < 20 * 1024,
        )
    return section
