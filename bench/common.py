"""Shared pieces of the benchmarks: the fake CLI wrapper, statistics, results, subprocesses.

Every benchmark returns a :class:`Section`: a title, a paragraph on what is measured and how, one
or more tables (lists of rows), and :class:`Check` lines (goal, figure, met or missed). The
runner (``bench/__main__.py``) prints them and writes ``bench/RESULTS.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from byre_jupyter.scripted import (
    Reply,
    ScriptedAPI,
    ScriptedRequest,
    Text,
    cli_env,  # the CLI env for the scripted API
)

__all__ = [
    "OUT",
    "REPO",
    "Check",
    "Section",
    "Table",
    "cli_env",
    "fake_cli",
    "fmt",
    "machine_info",
    "method_of",
    "pct",
    "plan_env",
    "real_cli",
    "render_text",
    "rss_bytes",
    "run_alone",
    "run_worker",
    "stamper",
    "summary",
    "update_results",
]

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "bench" / "out"


# --- the fake CLI ---------------------------------------------------------------------------


def method_of(doc: str | None) -> str:
    """A benchmark module's docstring minus its title line: the "how it is measured" text."""
    return (doc or "").split("\n\n", 1)[-1].strip()


def fake_cli() -> str:
    """An executable that runs the stand-in CLI (``tests/support/standin_cli.py``, its
    ``STANDIN_PLAN`` mode) with this interpreter (``-S``: fast start)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "claude-fake"
    standin = REPO / "tests" / "support" / "standin_cli.py"
    script = f'#!/bin/sh\nexec {sys.executable} -S {standin} "$@"\n'
    if not path.exists() or path.read_text() != script:
        path.write_text(script)
        path.chmod(0o755)
    return str(path)


def plan_env(*turns: tuple[Path | str, float]) -> dict[str, str]:
    """``STANDIN_PLAN`` for the fake CLI: (file, lines per second or 0 for as fast as
    possible)."""
    plan = {"turns": [{"file": str(Path(f).resolve()), "pace": pace} for f, pace in turns]}
    return {"STANDIN_PLAN": json.dumps(plan)}


def real_cli() -> str | None:
    """The pinned real CLI (``BYRE_CLAUDE_PATH`` or ``.byre/cli``), if installed."""
    candidates = [os.environ.get("BYRE_CLAUDE_PATH", "")]
    candidates += [
        str(p)
        for p in (REPO / ".byre/cli/node_modules/@anthropic-ai").glob("claude-code-linux-*/claude")
    ]
    for path in candidates:
        if path and os.access(path, os.X_OK):
            return path
    return None


# --- statistics -----------------------------------------------------------------------------


def pct(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation."""
    if not values:
        return float("nan")
    data = sorted(values)
    k = (len(data) - 1) * q / 100.0
    lo, hi = int(k), min(int(k) + 1, len(data) - 1)
    return data[lo] + (data[hi] - data[lo]) * (k - lo)


def summary(values: Sequence[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values) if values else float("nan"),
        "best": min(values) if values else float("nan"),
        "worst": max(values) if values else float("nan"),
        "n": len(values),
    }


def fmt(value: Any, digits: int = 3) -> str:
    """Compact number formatting for tables."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:
            return "n/a"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    return str(value)


def rss_bytes(pid: int | None = None) -> int:
    import psutil

    return int(psutil.Process(pid or os.getpid()).memory_info().rss)


# --- results --------------------------------------------------------------------------------


@dataclass
class Check:
    """One goal of the issue: what was asked, what we measured, met or not."""

    goal: str
    figure: str
    met: bool | None  # None: not measured (skipped)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]] = field(default_factory=list)

    def add(self, *row: Any) -> None:
        if len(row) != len(self.columns):
            raise ValueError(f"{self.title}: {len(row)} cells for {len(self.columns)} columns")
        self.rows.append(list(row))

    def markdown(self) -> str:
        lines = [f"**{self.title}**", "", "| " + " | ".join(self.columns) + " |"]
        lines.append("|" + "|".join("---" for _ in self.columns) + "|")
        for row in self.rows:
            lines.append("| " + " | ".join(fmt(v) for v in row) + " |")
        return "\n".join(lines)

    def text(self) -> str:
        cells = [self.columns] + [[fmt(v) for v in row] for row in self.rows]
        widths = [max(len(str(r[i])) for r in cells) for i in range(len(self.columns))]
        out = [self.title]
        for k, row in enumerate(cells):
            out.append("  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))
            if k == 0:
                out.append("  " + "  ".join("-" * w for w in widths))
        return "\n".join(out)


@dataclass
class Section:
    key: str
    title: str
    method: str
    tables: list[Table] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    def table(self, title: str, *columns: str) -> Table:
        t = Table(title, list(columns))
        self.tables.append(t)
        return t

    def check(self, goal: str, figure: str, met: bool | None) -> None:
        self.checks.append(Check(goal, figure, met))


# --- machine --------------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    def ver(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    info = {
        "cores": str(os.cpu_count()),
        "cpu": _cpu_name(),
        "memory": _mem_total(),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "claude CLI": "not installed",
        "claude-agent-sdk": ver("claude-agent-sdk"),
        "anyio": ver("anyio"),
        "ipykernel": ver("ipykernel"),
        "ipywidgets": ver("ipywidgets"),
        "jupyter_client": ver("jupyter_client"),
        "byre_jupyter": ver("byre_jupyter"),
    }
    cli = real_cli()
    if cli:
        try:
            out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30)
            info["claude CLI"] = out.stdout.strip() or out.stderr.strip()
        except (OSError, subprocess.SubprocessError) as e:
            info["claude CLI"] = f"error: {e}"
    with contextlib.suppress(OSError):
        info["load average (start)"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return info


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    except OSError:
        pass
    return "unknown"


# --- subprocess workers -----------------------------------------------------------------------


def run_worker(
    name: str, args: Mapping[str, Any], timeout: float = 300, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Run ``bench.<module>.<func>(**args)`` (``name`` = ``"module:func"``) in a fresh
    interpreter (:mod:`bench.worker`); return its JSON answer.

    A fresh process per case keeps peak-memory figures (VmHWM, tracemalloc) from bleeding into
    each other and gives every case the same cold start.
    """
    cmd = [sys.executable, "-m", "bench.worker", name, json.dumps(dict(args))]
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    proc = subprocess.run(
        cmd, cwd=str(REPO), env=full_env, capture_output=True, text=True, timeout=timeout
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {name} failed (rc {proc.returncode}): {proc.stderr[-2000:]}")
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    value = fn()
    return time.perf_counter() - t0, value


def flatten(items: Iterable[Iterable[Any]]) -> list[Any]:
    return [x for xs in items for x in xs]


#: Sphinx roles in docstrings (":class:`~a.B`") become plain code spans in the report.
_ROLE = re.compile(r":\w+:`~?([^`]+)`")


def mark(met: bool | None) -> str:
    return {True: "met", False: "MISSED", None: "-"}[met]


def render_markdown(
    sections: Sequence[Section], profile: str, info: dict[str, str], total: float
) -> str:
    """bench/RESULTS.md for ``sections``, run with the sizes of ``profile`` (its name)."""
    lines = [
        "# byre_jupyter benchmarks",
        "",
        f"Generated by `python -m bench{' --quick' if profile == 'quick' else ''}` "
        f"(profile `{profile}`, {time.strftime('%Y-%m-%d %H:%M')}, {total:.0f} s in all). "
        "The code and how each figure is measured: `bench/` (module docstrings).",
        "",
        "Noise: a shared 2-core machine. Each figure is repeated (the tables say how often) and "
        "reported as the median, with the best run where useful; every ratio is between "
        "figures measured side by side in this run, interleaved.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in info.items()),
        "",
        "## Goals",
        "",
        "| benchmark | goal | figure | |",
        "|---|---|---|---|",
    ]
    for s in sections:
        if s.error:
            lines.append(
                f"| {s.title} | (benchmark failed) | `{s.error.splitlines()[0]}` | error |"
            )
        for c in s.checks:
            lines.append(f"| {s.title} | {c.goal} | {c.figure} | {mark(c.met)} |")
    lines.append("")
    for s in sections:
        method = _ROLE.sub(lambda m: f"`{m.group(1).rsplit('.', 1)[-1]}`", s.method)
        method = method.replace("``", "`")
        lines += [f"## {s.title}", "", method, "", f"*Run time: {s.seconds:.0f} s.*", ""]
        if s.error:
            lines += ["```", s.error.strip(), "```", ""]
        for t in s.tables:
            lines += [t.markdown(), ""]
        if s.checks:
            lines += ["Goals:", ""]
            lines += [f"* **{mark(c.met)}**: {c.goal}: {c.figure}" for c in s.checks]
            lines.append("")
        if s.notes:
            lines += ["Notes:", ""]
            lines += [f"* {n}" for n in s.notes]
            lines.append("")
    return "\n".join(lines)


def kept_sections(path: Path, written: Collection[str]) -> list[str]:
    """The lines of the sections of ``path`` (an earlier bench/RESULTS.md) that are not among
    the ``written`` titles: those run by hand (``python -m bench.tables``'s "Wide tables"),
    or by a benchmark this run left out. A run that writes the whole file keeps them, after
    its own."""
    if not path.exists():
        return []
    kept: list[str] = []
    keep = False
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            keep = line[3:] not in {*written, "Machine", "Goals"}
        if keep:
            kept.append(line)
    return kept


def update_results(section: Section, path: Path | None = None) -> None:
    """Put this section and its goal rows into ``path`` (bench/RESULTS.md) where the old ones
    stood (a new section at the end, its goal rows at the end of the goals table); the rest
    stays as it is."""
    body = render_markdown([section], "full", {}, section.seconds).splitlines()
    mine = f"| {section.title} |"
    goals = [line for line in body if line.startswith(mine)]
    text = body[body.index(f"## {section.title}") :]
    path = path or REPO / "bench" / "RESULTS.md"
    lines = path.read_text().splitlines()
    old_goals = [i for i, line in enumerate(lines) if line.startswith(mine)]
    if old_goals:
        lines[old_goals[0] : old_goals[-1] + 1] = [
            *goals,
            *(
                line
                for line in lines[old_goals[0] : old_goals[-1] + 1]
                if not line.startswith(mine)
            ),
        ]
    elif "## Goals" in lines:  # the goal rows go at the end of the goals table
        row = lines.index("## Goals") + 1
        while row < len(lines) and not lines[row].startswith("|"):
            row += 1
        while row < len(lines) and lines[row].startswith("|"):
            row += 1
        lines[row:row] = goals
    if f"## {section.title}" in lines:  # the section's old figures, up to the next section
        start = lines.index(f"## {section.title}")
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        lines[start:end] = [*text, ""] if end < len(lines) else text
    else:
        while lines and not lines[-1].strip():
            lines.pop()
        lines += ["", *text]
    path.write_text("\n".join(lines).rstrip() + "\n")


def stamper(api: ScriptedAPI) -> dict[str, float]:
    """Make ``api`` answer "ok" to everything and stamp when each ``PROMPT_...`` word first
    reached it (``time.perf_counter`` in this process): the latency benches' clock."""
    arrived: dict[str, float] = {}

    def stamp(req: ScriptedRequest) -> Reply:
        for word in req.last_user_text.split():
            if word.startswith("PROMPT_"):
                arrived.setdefault(word, time.perf_counter())
        return Reply(Text("ok"))

    api.default = stamp
    return arrived


def render_text(section: Section) -> str:
    """A section as plain text, for the terminal (the runner's and a benchmark's own)."""
    out = [f"## {section.title}  ({section.seconds:.0f} s)"]
    if section.error:
        out.append(f"ERROR: {section.error}")
    for table in section.tables:
        out += [table.text(), ""]
    for check in section.checks:
        out.append(f"  [{mark(check.met)}] {check.goal}: {check.figure}")
    for note in section.notes:
        out.append(f"  note: {note}")
    return "\n".join(out)


def run_alone(make: Callable[[], Section]) -> None:
    """One benchmark on its own (``python -m bench.NAME``): run it, print its tables and
    goals, and put its section into bench/RESULTS.md."""
    t0 = time.perf_counter()
    section = make()
    section.seconds = time.perf_counter() - t0
    for table in section.tables:
        print(table.markdown(), "\n")
    for check in section.checks:
        print(f"[{'met' if check.met else 'MISSED'}] {check.goal}: {check.figure}")
    update_results(section)
    print("wrote bench/RESULTS.md")
