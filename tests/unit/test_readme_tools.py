"""The README's list of Claude's kernel tools is the records' rendering (tools/registry.py),
between the ``<!-- tools:start -->`` and ``<!-- tools:end -->`` markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from byre_jupyter.tools.registry import tools_markdown

README = Path(__file__).resolve().parents[2] / "README.md"
START, END = "<!-- tools:start -->", "<!-- tools:end -->"


def test_the_readme_lists_the_registered_tools() -> None:
    text = README.read_text(encoding="utf-8")
    if START not in text or END not in text:
        pytest.skip(f"README.md has no {START} … {END} markers around a list of tools yet")
    listed = text.split(START, 1)[1].split(END, 1)[0]
    assert listed.strip("\n") == tools_markdown().strip("\n")
