"""Which benchmarks ``python -m bench`` runs: the browser bench (a Lab server, Chromium and
four kernels) only in the full profile, or when ``--only`` names it; the rest in every one."""

from __future__ import annotations

import pytest

import bench.__main__ as runner
from bench.common import Section


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []

    def record(name: str) -> Section:
        names.append(name)
        return Section(name, name, "")

    monkeypatch.setattr(
        runner, "_benchmarks", lambda _p: {n: lambda n=n: record(n) for n in runner.NAMES}
    )
    return names


def test_the_quick_and_smoke_profiles_leave_the_full_only_benches_out(ran: list[str]) -> None:
    for profile in ("quick", "smoke"):
        runner.run(runner.PROFILES[profile], echo=lambda _s: None)
    expected = [n for n in runner.NAMES if n not in ("browser_latency", "hostspares")]
    assert ran == expected * 2


def test_the_full_profile_and_only_run_it(ran: list[str]) -> None:
    runner.run(runner.PROFILES["full"], echo=lambda _s: None)
    assert ran == list(runner.NAMES)
    ran.clear()
    runner.run(runner.PROFILES["quick"], ["browser_latency"], echo=lambda _s: None)
    assert ran == ["browser_latency"]
