"""Smoke test of ``python -m bench``: every benchmark runs at tiny sizes and yields its figures.

No timing is asserted (this box is noisy and the sizes are tiny): only that each benchmark
completes, fills its tables, states its goals, and that the report renders. The parts that
need the real ``claude`` CLI are skipped inside the benchmark when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

pytest.importorskip("psutil")
pytest.importorskip("jupyter_client")
pytestmark = [
    # Every benchmark at smoke size: kernels, CLI processes and ~90 s.
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("claude_agent_sdk") is None,
        reason="claude-agent-sdk is not installed (pip install -e .[bench])",
    ),
]

from bench.__main__ import FULL_ONLY, NAMES, PROFILES, run  # noqa: E402
from bench.common import (  # noqa: E402
    Section,
    machine_info,
    real_cli,
    render_markdown,
)
from bench.throughput import CONSUMERS  # noqa: E402


@pytest.fixture(scope="module")
def sections() -> dict[str, Section]:
    results = run(PROFILES["smoke"], echo=lambda _s: None)
    return {s.key: s for s in results}


def numbers(section: Section) -> list[float]:
    out = []
    for table in section.tables:
        for row in table.rows:
            out += [float(v) for v in row if isinstance(v, (int, float))]
    return out


@pytest.mark.parametrize("name", [n for n in NAMES if n not in FULL_ONLY])
def test_benchmark_runs_and_fills_its_tables(sections: dict[str, Section], name: str) -> None:
    section = sections[name]
    assert section.error is None, section.error
    assert section.tables and all(t.rows for t in section.tables)
    for table in section.tables:
        assert all(len(row) == len(table.columns) for row in table.rows), table.title
    values = numbers(section)
    assert values and all(not math.isnan(v) for v in values)
    assert section.method  # the "how it is measured" text


def test_throughput_every_consumer_saw_every_line(sections: dict[str, Section]) -> None:
    table = sections["throughput"].tables[0]
    events = {row[0]: row[1] for row in table.rows}
    assert list(events) == list(CONSUMERS) and len(set(events.values())) == 1, events
    assert {c.goal for c in sections["throughput"].checks} >= {
        "byre >= 3x claude-agent-sdk (events/s)",
        "byre within 2x of the floor",
    }


def test_bigline_records_every_path(sections: dict[str, Section]) -> None:
    (table,) = sections["bigline"].tables
    assert {row[1] for row in table.rows} == {
        "json.loads",
        "stream floor",
        "byre Session",
        "claude-agent-sdk",
    }
    # Past 1 MiB the SDK fails at its default buffer size; the failure is a row, not an error.
    assert any(str(row[2]).startswith("failed") for row in table.rows if row[0] == "2 MiB")
    assert len(sections["bigline"].checks) == 3  # linearity, time and memory vs the floor


def test_rendering_counts_comm_messages_and_the_kernels_cpu(sections: dict[str, Section]) -> None:
    table, cpu = sections["rendering"].tables
    comm = table.columns.index("comm_msg")
    assert all(row[comm] > 0 for row in table.rows)
    used = cpu.columns.index("kernel CPU s")
    assert len(cpu.rows) == 2 and all(row[used] > 0 for row in cpu.rows)  # widgets, no widgets
    # comm messages/s, text updates/s, bytes linear in the text, kernel CPU
    assert len(sections["rendering"].checks) == 4


def test_latency_measures_deltas_and_the_real_cli(sections: dict[str, Section]) -> None:
    tables = sections["latency"].tables
    assert tables[0].title.startswith("A.")
    p50 = tables[0].columns.index("p50 ms")
    assert all(row[p50] >= 0 for row in tables[0].rows)
    if real_cli() is not None:
        assert [t.title[:2] for t in tables] == ["A.", "B/", "D."]


def test_memory_samples_rss_and_fds(sections: dict[str, Section]) -> None:
    tables = sections["memory"].tables
    assert len(tables) == 2  # the Session and the kernel
    fds = tables[0].columns.index("open fds")
    assert all(row[fds] > 0 for row in tables[0].rows)


def test_shapes_count_both_surfaces_bytes_and_their_cpu_in_a_kernel(
    sections: dict[str, Section],
) -> None:
    table, kernel = sections["shapes"].tables
    live, record = table.columns.index("live bytes"), table.columns.index("record bytes")
    assert {row[1] for row in table.rows} == {"widgets", "draft"}
    assert all(row[live] > 0 and row[record] > 0 for row in table.rows)
    cpu = kernel.columns.index("kernel CPU s")
    assert {row[1] for row in kernel.rows} == {"live widgets", "no widgets (Markdown draft)"}
    assert all(row[cpu] > 0 for row in kernel.rows)


def test_report_renders(sections: dict[str, Section], tmp_path: Path) -> None:
    info = machine_info()
    text = render_markdown(list(sections.values()), "smoke", info, 1.0)
    for section in sections.values():
        assert f"## {section.title}" in text
    assert "| cores |" in text and "claude-agent-sdk" in text
    (tmp_path / "RESULTS.md").write_text(text)
    json.dumps(info)  # plain strings only
