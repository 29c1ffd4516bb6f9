"""The oldest pins CI tests (scripts/oldest-constraints.txt) are the lower bounds we declare."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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
