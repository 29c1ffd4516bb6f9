"""Benchmark 3: rendering a long streamed answer in a REAL kernel.

An ipykernel is started through jupyter_client (:class:`bench.kernel.BenchKernel`). A cell
awaits :func:`bench.inkernel.replay_render`, which feeds a recorded 10,000-delta text turn
(parsed up front) at an even pace over a fixed turn time through ``%%claude``'s widget surface:
``TurnView.apply`` → ``LiveView.update`` → ``Coalescer`` (12.5 Hz) → ipywidgets traits → comm
messages, then the final static ``update_display``. The client counts every IOPub message of
the cell by type, with approximate wire bytes (JSON of header, parent, metadata, content plus
buffers). The kernel reports its CPU time (``time.process_time()``) and the coalescer's flush
count.

The text is markdown-ish prose (``gen.text_turn_file``: code spans, emphasis, punctuation,
non-ASCII, a paragraph every 40 deltas). Two text sizes at the same delta count and pace (one
and two words per delta) show whether bytes grow linearly with the text (a whole-text resend
per delta would grow quadratically; per-flush resends at a fixed rate grow linearly).

The replay's own pacing (an ``asyncio.sleep`` per due message, up to 2,000 wake-ups a second)
costs kernel CPU too; the same replay into a surface that does nothing is measured as its
baseline, so the rendering's own share is the difference.

**Kernel CPU of a whole turn** (the goal): a real ``%%claude`` cell, the stand-in CLI
(``tests/support/standin_cli.py``) writing the 10,000-delta turn at an even pace, in a fresh
kernel with live widgets (``Claude.live = True``) and without (the Markdown draft). The kernel's
``time.process_time()`` is read in the cells just before and after the ``%%claude`` cell, so
everything the kernel does for the turn counts: pipe reads, parsing, session, view, rendering,
IOPub; the CLI's own CPU does not (another process). A short first turn starts the CLI, so the
measured turns are warm.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .common import Section, fake_cli, fmt, method_of, plan_env, summary
from .gen import text_turn_file
from .kernel import BenchKernel

__all__ = ["SURFACES", "measure", "turn_cpu"]


def _setup(cli: str, env: dict[str, str], live: bool) -> str:
    return (
        "%load_ext byre_jupyter\n"
        f"%config Claude.live = {live}\n"
        f"%config Claude.cli_path = {cli!r}\n"
        f"%config Claude.env = {env!r}\n"
        "import json, time\n"
    )


def turn_cpu(
    turn: Path | Sequence[Path],
    pace: float,
    reps: int,
    surfaces: tuple[bool, ...] = (True, False),
) -> dict[str, list[dict[str, float]]]:
    """Kernel CPU of ``%%claude`` turns replaying ``turn`` (a stream-json file; or one file
    per measured turn, ``reps`` of them) at ``pace`` lines a second, with live widgets and
    without (``surfaces``: ``Claude.live``); a fresh kernel each, one warm-up turn first."""
    small = text_turn_file(20, prose_words=1)
    turns = [turn] if isinstance(turn, Path) else list(turn)
    env = plan_env((small, 0), *((t, pace) for t in turns))
    out: dict[str, list[dict[str, float]]] = {}
    for live in surfaces:
        name = SURFACES[live]
        out[name] = []
        with BenchKernel(env={"BYRE_STATE_DIR": tempfile.mkdtemp(prefix="bench-state-")}) as k:
            k.run(_setup(fake_cli(), env, live))
            k.run("%%claude\nwarm up", timeout=120)
            for _ in range(reps):
                k.run("c0, w0 = time.process_time(), time.monotonic()")
                k.run("%%claude\ngo", timeout=120 + 3 * max(map(_lines, turns)) / pace)
                report, _ = k.run_json(
                    "print(json.dumps({'cpu': time.process_time() - c0, "
                    "'wall': time.monotonic() - w0}))"
                )
                out[name].append(report)
    return out


#: The surfaces of a %%claude cell, by ``Claude.live``.
SURFACES = {True: "live widgets", False: "no widgets (Markdown draft)"}


def _lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def measure(
    n_deltas: int = 10_000,
    duration: float = 5.0,
    reps: int = 2,
    kernel: BenchKernel | None = None,
    turn_seconds: float = 10.0,
) -> Section:
    section = Section("rendering", "3. Rendering in a real kernel", method_of(__doc__))
    sizes = {
        "1 word/delta": text_turn_file(n_deltas, prose_words=1),
        "2 words/delta": text_turn_file(n_deltas, prose_words=2),
    }
    own = kernel is None
    k = kernel or BenchKernel()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sizes}
    baseline: list[float] = []
    try:
        k.run("import bench.inkernel, json, ipywidgets")
        for _ in range(reps):
            report, _cell = k.run_json(
                "print(json.dumps(await bench.inkernel.replay_render("
                f"{str(sizes['1 word/delta'])!r}, {duration}, baseline=True)))"
            )
            baseline.append(report["cpu"])
            for name, path in sizes.items():
                report, cell = k.run_json(
                    f"print(json.dumps(await bench.inkernel.replay_render({str(path)!r}, "
                    f"{duration})))"
                )
                report["counts"] = dict(cell.counts)
                report["bytes"] = dict(cell.bytes)
                runs[name].append(report)
    finally:
        if own:
            k.close()

    table = section.table(
        f"{n_deltas:,} deltas over {duration:g} s; median of {reps} runs",
        "text",
        "text chars",
        "flushes",
        "flushes/s",
        "comm_msg",
        "comm_msg/s",
        "comm_msg bytes",
        "comm_open / close",
        "other iopub",
        "kernel CPU s",
        "CPU % of turn",
        "bytes / text char",
    )
    rows: dict[str, dict[str, float]] = {}
    for name, reports in runs.items():

        def med(fn: Any, reports: list[dict[str, Any]] = reports) -> float:
            return summary([fn(r) for r in reports])["median"]

        row = {
            "chars": med(lambda r: r["text_chars"]),
            "flushes": med(lambda r: r["flushes"]),
            "turn": med(lambda r: r["turn_wall"]),
            "comm": med(lambda r: r["counts"].get("comm_msg", 0)),
            "comm_bytes": med(lambda r: r["bytes"].get("comm_msg", 0)),
            "open": med(lambda r: r["counts"].get("comm_open", 0)),
            "close": med(lambda r: r["counts"].get("comm_close", 0)),
            "other": med(
                lambda r: sum(
                    v
                    for k2, v in r["counts"].items()
                    if k2 not in ("comm_msg", "comm_open", "comm_close")
                )
            ),
            "cpu": med(lambda r: r["cpu"]),
        }
        rows[name] = row
        table.add(
            name,
            int(row["chars"]),
            int(row["flushes"]),
            row["flushes"] / row["turn"],
            int(row["comm"]),
            row["comm"] / row["turn"],
            int(row["comm_bytes"]),
            f"{int(row['open'])} / {int(row['close'])}",
            int(row["other"]),
            row["cpu"],
            100 * row["cpu"] / row["turn"],
            row["comm_bytes"] / row["chars"],
        )
    small, large = rows["1 word/delta"], rows["2 words/delta"]
    rate = max(r["comm"] / r["turn"] for r in rows.values())
    flush_rate = max(r["flushes"] / r["turn"] for r in rows.values())
    slowest = min(r["flushes"] / r["turn"] for r in rows.values())
    section.check(
        "comm messages <= 20 per second of turn time",
        f"{fmt(rate)} comm_msg/s ({fmt(flush_rate)} coalescer flushes/s)",
        rate <= 20,
    )
    section.check(
        "streaming does not look choppy: >= 10 text updates per second",
        f"{fmt(slowest)} flushes/s",
        slowest >= 10,
    )
    growth = (large["comm_bytes"] / small["comm_bytes"]) / (large["chars"] / small["chars"])
    section.check(
        "bytes linear in the text size (2 sizes; at most linear)",
        f"{fmt(large['chars'] / small['chars'])}x text -> "
        f"{fmt(large['comm_bytes'] / small['comm_bytes'])}x comm bytes ({fmt(growth)}x linear)",
        growth <= 1.35,
    )
    base = summary(baseline)["median"]
    section.notes.append(
        f"Kernel CPU for the replay: {fmt(small['cpu'])} s (1 word/delta) and "
        f"{fmt(large['cpu'])} s (2 words/delta) for a {duration:g} s turn; the same replay into a "
        f"surface that does nothing (its pacing alone) costs {fmt(base)} s, so the rendering "
        f"pipeline's own share is about {fmt(small['cpu'] - base)} s and "
        f"{fmt(large['cpu'] - base)} s. The live view sends each finished Markdown block once "
        "and the growing one as a change to what it sent before (bench/widget_bytes.py), and "
        "renders only its last block again (markdown: mistune + nh3; render_markdown caches "
        "finished blocks)."
    )
    section.notes.append(
        "Messages: one comm_msg per flush for the growing tail (12.5/s), the header on its 1 Hz "
        "tick (sent with the next flush) or when its state changes, and one children update per "
        "frozen batch; comm_open/close count the frozen batches' widgets."
    )

    big = text_turn_file(n_deltas, prose_words=1)
    cpu = turn_cpu(big, _lines(big) / turn_seconds, reps)
    t = section.table(
        f"Kernel CPU of a whole %%claude turn: {n_deltas:,} deltas over {turn_seconds:g} s from "
        f"the fake CLI; median of {reps} warm turns",
        "surface",
        "turn s",
        "kernel CPU s",
        "CPU % of a core",
    )
    shares: dict[str, float] = {}
    for name, reports in cpu.items():
        wall = summary([r["wall"] for r in reports])["median"]
        used = summary([r["cpu"] for r in reports])["median"]
        shares[name] = 100 * used / wall
        t.add(name, wall, used, shares[name])
    section.check(
        f"kernel CPU while streaming < 10% of a core ({n_deltas:,}-delta turn, with and without "
        "widgets)",
        " / ".join(f"{fmt(share)}% {name}" for name, share in shares.items()),
        max(shares.values()) < 10,
    )
    return section
