"""bench/RESULTS.md takes one benchmark's new figures where its old ones stood (python -m bench
--only NAME, python -m bench.NAME): the other sections, and the order of all, stay."""

from __future__ import annotations

from pathlib import Path

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
