"""One source for the version: pyproject reads it from byre_jupyter/__init__.py."""

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
