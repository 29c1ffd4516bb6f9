"""Packaging: one source for the version (pyproject reads it from byre_jupyter/version.py), the
oldest pins CI tests (scripts/oldest-constraints.txt) are the lower bounds we declare, for every
runtime dependency; the development lock (requirements/dev.txt) pins everything pyproject.toml
asks for, within its bounds; ./dev installs the extras it means to; the project says where it
lives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

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
    declared = {
        canonicalize_name(Requirement(r).name) for r in _pyproject()["project"]["dependencies"]
    }
    assert {canonicalize_name(name) for name in pins} == declared  # every floor is tested
    for name, pinned in pins.items():
        assert name in lower, f"{name} is pinned for the oldest tier but has no lower bound"
        assert _release(pinned) == _release(lower[name]), (name, pinned, lower[name])
    assert _release(lower["ipykernel"]) == (6, 29)  # README and doctor say 6.29


def _pyproject() -> dict[str, Any]:
    tomllib = pytest.importorskip("tomllib")
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return data


def _lock() -> dict[str, str]:
    """requirements/dev.txt: canonical name -> pinned version."""
    pins = {}
    for line in (ROOT / "requirements/dev.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"not a pin: {line!r}"
            pins[canonicalize_name(name)] = version.split(";")[0].strip()
    return pins


def test_the_lock_pins_every_dependency_and_extra_within_its_bounds() -> None:
    project = _pyproject()["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += extra
    lock = _lock()
    assert canonicalize_name("byre_jupyter") not in lock  # installed on top, editable, --no-deps
    for spec in wanted:
        req = Requirement(spec)
        name = canonicalize_name(req.name)
        assert name in lock, f"{req.name} is declared but not in requirements/dev.txt (./dev lock)"
        assert req.specifier.contains(lock[name], prereleases=True), (
            f"requirements/dev.txt pins {req.name}=={lock[name]}, outside {req.specifier}"
        )


def _dev_variable(name: str) -> str:
    found = re.findall(rf"^{name}=(\S+)$", (ROOT / "dev").read_text(), re.MULTILINE)
    assert len(found) == 1, name
    return found[0]


def test_dev_installs_every_extra_and_the_tiers_all_but_the_browser_ones() -> None:
    extras = set(_pyproject()["project"]["optional-dependencies"])
    assert set(_dev_variable("DEV_EXTRAS").split(",")) == extras
    tiers = set(_dev_variable("TIER_EXTRAS").split(","))
    assert tiers <= extras and {"test", "notebook"} <= tiers
    assert not tiers & {"browser", "servers"}  # the tiers run every test but the browser ones
