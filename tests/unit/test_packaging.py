"""Packaging: one source for the version (pyproject reads it from byre_jupyter/version.py),
and the oldest pins CI tests (scripts/oldest-constraints.txt) are the lower bounds we declare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import byre_jupyter

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_is_declared_once() -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"]
    assert "version" in pyproject["project"]["dynamic"]
    source = ROOT / pyproject["tool"]["hatch"]["version"]["path"]
    assert re.findall(r'^__version__ = "([^"]+)"$', source.read_text(), re.M) == [
        byre_jupyter.__version__
    ]
    from byre_jupyter.session import McpServer

    assert McpServer().version == byre_jupyter.__version__


def _release(version: str) -> tuple[int, ...]:
    parts = [int(p) for p in version.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_oldest_constraints_are_the_declared_lower_bounds() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    deps = pyproject.split("dependencies = [", 1)[1].split("]", 1)[0]
    lower = dict(re.findall(r'"([A-Za-z0-9_.-]+)>=([0-9.]+)', deps))
    pins = dict(
        re.findall(
            r"^([A-Za-z0-9_.-]+)==([0-9.]+)\s*$",
            (ROOT / "scripts/oldest-constraints.txt").read_text(),
            re.MULTILINE,
        )
    )
    assert {"ipykernel", "ipython", "ipywidgets", "traitlets"} <= pins.keys()
    for name, pinned in pins.items():
        assert name in lower, f"{name} is pinned for the oldest tier but has no lower bound"
        assert _release(pinned) == _release(lower[name]), (name, pinned, lower[name])
    assert _release(lower["ipykernel"]) == (6, 29)  # README and doctor say 6.29
