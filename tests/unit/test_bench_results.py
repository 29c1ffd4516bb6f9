"""bench/RESULTS.md takes one benchmark's new figures where its old ones stood (python -m bench
--only NAME, python -m bench.NAME): the other sections, and the order of all, stay."""

from __future__ import annotations

from pathlib import Path

import pytest

import bench.__main__ as bench_main
from bench.common import Section, update_results

RESULTS = """# results

## Goals

| benchmark | goal | figure | |
|---|---|---|---|
| 1. One | fast | 1x | met |
| 2. Two | faster | 2x | met |

## 1. One

old one

## 2. Two

old two
"""


def section(title: str, figure: str) -> Section:
    made = Section("x", title, "How it is measured.")
    made.table("figures", "a").add(figure)
    made.check("fast", figure, True)
    return made


def test_a_section_is_replaced_where_it_stands_and_a_new_one_goes_last(tmp_path: Path) -> None:
    path = tmp_path / "RESULTS.md"
    path.write_text(RESULTS)
    update_results(section("1. One", "9x"), path)
    text = path.read_text()
    assert "old one" not in text and "old two" in text
    assert text.index("| 1. One | fast | 9x | met |") < text.index("| 2. Two |")
    assert text.index("## 1. One") < text.index("## 2. Two")
    assert text.count("## 1. One") == 1 and text.count("| 1. One |") == 1
    update_results(section("3. Three", "3x"), path)
    text = path.read_text()
    assert text.index("## 2. Two") < text.index("## 3. Three")
    assert text.index("| 2. Two |") < text.index("| 3. Three | fast | 3x | met |")


def test_a_whole_run_keeps_the_sections_it_does_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that writes the whole file (``python -m bench``) keeps a section run by hand, such
    as ``python -m bench.tables``'s, after its own, whose figures it writes anew."""
    path = tmp_path / "RESULTS.md"
    path.write_text(RESULTS + "\n## 7. By hand\n\nhand figures\n")
    monkeypatch.setattr(bench_main, "run", lambda *a, **k: [section("1. One", "9x")])
    monkeypatch.setattr(bench_main, "machine_info", lambda: {"cores": "2"})
    assert bench_main.main(["--out", str(path)]) == 0
    text = path.read_text()
    assert "old one" not in text and "| 1. One | fast | 9x | met |" in text
    assert text.index("## 1. One") < text.index("## 2. Two") < text.index("## 7. By hand")
    assert "hand figures" in text and text.count("## 2. Two") == 1
