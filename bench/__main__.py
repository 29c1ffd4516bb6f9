"""``python -m bench [--quick] [--only NAME ...] [--out PATH]``: run the benchmarks.

Runs the benchmarks (throughput, bigline, rendering, latency, memory, redact, shapes, spare,
widget_bytes, and, in the full profile only, browser_latency: JupyterLab in Chromium), prints
each table and goal, and writes ``bench/RESULTS.md`` (machine info, every figure, every ratio,
goal met or missed). ``--quick`` uses small sizes (a minute or so); the full run is sized to
stay under about ten minutes on a 2-core machine. Generated data lives in ``bench/out/``
(gitignored) and is reused across runs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import (
    REPO,
    Section,
    kept_sections,
    machine_info,
    render_markdown,
    render_text,
    update_results,
)

__all__ = ["PROFILES", "Profile", "main", "render_markdown", "render_text", "run"]


@dataclass(frozen=True)
class Profile:
    """Sizes for one run of every benchmark."""

    name: str
    throughput_lines: int
    throughput_reps: int
    bigline_mib: tuple[int, ...]
    bigline_reps: int
    render_deltas: int
    render_seconds: float
    render_reps: int
    latency_quick: bool
    import_times: bool
    memory_turns: int
    memory_kernel_turns: int
    redact_mib: float
    shapes_scale: float
    shapes_reps: int


PROFILES = {
    "full": Profile(
        "full", 200_000, 5, (1, 16, 64), 3, 10_000, 5.0, 2, False, True, 500, 500, 1, 1.0, 1
    ),
    "quick": Profile(
        "quick", 20_000, 2, (1, 8), 2, 2_000, 2.0, 1, True, True, 50, 30, 0.25, 0.2, 1
    ),
    # For tests/integration/kernel/test_bench_smoke.py: every benchmark, tiny.
    "smoke": Profile("smoke", 1_000, 1, (1, 2), 1, 200, 0.3, 1, True, False, 3, 2, 0.01, 0.01, 1),
}


def _benchmarks(p: Profile) -> dict[str, Callable[[], Section]]:
    from . import (
        bigline,
        browser_latency,
        hostspares,
        latency,
        memory,
        redact,
        rendering,
        shapes,
        spare,
        throughput,
        widget_bytes,
    )

    return {
        "throughput": lambda: throughput.measure(
            p.throughput_lines, p.throughput_reps, p.import_times
        ),
        "bigline": lambda: bigline.measure(p.bigline_mib, p.bigline_reps),
        "rendering": lambda: rendering.measure(p.render_deltas, p.render_seconds, p.render_reps),
        "latency": lambda: latency.measure(quick=p.latency_quick, smoke=p.name == "smoke"),
        "memory": lambda: memory.measure(p.memory_turns, p.memory_kernel_turns),
        "redact": lambda: redact.measure(p.redact_mib),
        "spare": lambda: spare.measure(1 if p.latency_quick else 3, smoke=p.name == "smoke"),
        "shapes": lambda: shapes.measure(
            p.shapes_scale,
            p.shapes_reps,
            shapes.SHAPES if p.name != "smoke" else ("code",),
            kernel_reps=1 if p.name == "smoke" else 3,
        ),
        "widget_bytes": lambda: widget_bytes.measure(),
        "browser_latency": lambda: browser_latency.measure(1 if p.latency_quick else 2),
        "hostspares": lambda: hostspares.measure(4),
    }


NAMES = (
    "throughput",
    "bigline",
    "rendering",
    "latency",
    "memory",
    "redact",
    "spare",
    "shapes",
    "widget_bytes",
    "browser_latency",
    "hostspares",
)
# Too slow for the quick and smoke profiles (a Lab server, Chromium, four kernels; twelve
# kernels with their CLIs): only the full run, or --only, runs these.
FULL_ONLY = ("browser_latency", "hostspares")


def run(
    profile: Profile, only: Sequence[str] = (), echo: Callable[[str], Any] = print
) -> list[Section]:
    sections = []
    for name, bench in _benchmarks(profile).items():
        wanted = name in only if only else profile.name == "full" or name not in FULL_ONLY
        if not wanted:
            continue
        echo(f"== {name} ...")
        t0 = time.perf_counter()
        try:
            section = bench()
        except Exception as e:
            section = Section(name, name, "", error=f"{e!r}\n{traceback.format_exc()}")
        section.seconds = time.perf_counter() - t0
        echo(render_text(section))
        sections.append(section)
    return sections


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--profile", choices=sorted(PROFILES), help="sizes (default: full)")
    parser.add_argument("--only", nargs="+", choices=NAMES, default=(), help="run only these")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS.md")
    args = parser.parse_args(argv)
    profile = PROFILES[args.profile or ("quick" if args.quick else "full")]
    t0 = time.perf_counter()
    info = machine_info()
    print("\n".join(f"{k}: {v}" for k, v in info.items()), flush=True)
    sections = run(profile, args.only, echo=lambda s: print(s, flush=True))
    total = time.perf_counter() - t0
    with contextlib.suppress(OSError):
        info["load average (end)"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.only and args.out.exists():  # the other sections' figures stay
        for section in sections:
            update_results(section, args.out)
    else:
        kept = kept_sections(args.out, {section.title for section in sections})
        text = render_markdown(sections, profile.name, info, total)
        args.out.write_text("\n".join([text.rstrip(), "", *kept]).rstrip() + "\n")
    print(f"\nwrote {args.out} ({total:.0f} s)")
    return 1 if any(s.error for s in sections) else 0


if __name__ == "__main__":
    sys.exit(main())
