"""The host's bound on idle spare CLIs (app/hostspares.py): slots held with flock in a folder
all the host's kernels share, no spare while memory is short, and the default on a hub."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from support.memory_cli import FakeCLI

from byre_jupyter.app.config import Claude
from byre_jupyter.app.hostspares import HostGate, Slot, claim_slot, memory_available_mb
from byre_jupyter.app.spare import Spares, Want, launch_key
from byre_jupyter.session import Session


def test_slots_are_held_until_released_and_the_folder_is_shared(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    a, b = claim_slot(2, folder), claim_slot(2, folder)
    assert a is not None and b is not None
    assert claim_slot(2, folder) is None  # both held (flock: even within one process)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o1777  # every user of the host locks here
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o666 for p in folder.iterdir())
    a.release()
    a.release()  # once
    c = claim_slot(2, folder)
    assert c is not None
    b.release()
    c.release()
    assert claim_slot(0, folder) is None  # 0: spares off


def test_a_planted_symlink_is_never_opened(tmp_path: Path) -> None:
    folder = tmp_path / "slots"
    folder.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    (folder / "slot-0").symlink_to(victim)
    slot = claim_slot(1, folder)
    assert slot is None  # the only slot is the symlink: no spare, rather than follow it
    slot = claim_slot(2, folder)
    assert slot is not None and (folder / "slot-1").is_file()
    assert victim.read_text() == "untouched" and stat.S_IMODE(victim.stat().st_mode) != 0o666
    slot.release()


def test_no_spare_while_memory_is_short_and_no_bound_holds_nothing(tmp_path: Path) -> None:
    short = HostGate(lambda: None, lambda: 1024, available_mb=lambda: 1023)
    assert short() is None
    unbounded = HostGate(lambda: None, lambda: 1024, available_mb=lambda: 4096)
    slot = unbounded()
    assert isinstance(slot, Slot) and not list(tmp_path.iterdir())
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:    2097152 kB\n")
    assert memory_available_mb(meminfo) == 2048
    assert memory_available_mb(tmp_path / "missing") is None  # unknown: not a reason to refuse


def test_on_a_hub_server_the_host_keeps_two_spares(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JUPYTERHUB_USER", "JUPYTERHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    assert Claude().host_spares is None
    monkeypatch.setenv("JUPYTERHUB_USER", "ann")
    assert Claude().host_spares == 2
    config = Claude()
    config.host_spares = 0  # the admin's (or the user's) choice wins
    assert config.host_spares == 0


async def test_three_kernels_bound_two_never_keep_more_than_two_spares(tmp_path: Path) -> None:
    """Three kernels' spares (one Spares each, as each kernel has), all offering two: with
    ``host_spares = 2`` at most two spare CLIs run on the host; an adopted spare frees its
    slot for another kernel's next offer."""
    folder = tmp_path / "slots"
    kernels = [
        Spares(delay=0, gate=HostGate(lambda: 2, lambda: 0, folder=lambda: folder))
        for _ in range(3)
    ]
    made: list[Session] = []

    def want(kernel: int, n: int) -> tuple[Want, object]:
        settings = {"model": f"m{kernel}-{n}", "transport_factory": FakeCLI().factory}
        session = Session(f"k{kernel}", **settings)
        made.append(session)
        return Want(None, None, launch_key(settings)), lambda: session

    for k, spares in enumerate(kernels):
        spares.offer([want(k, 0), want(k, 1)])  # type: ignore[list-item]
        await spares.settled()
        assert sum(s.running for s in made) <= 2
    assert sum(s.running for s in made) == 2
    # Kernel 0 adopts one of its spares: that CLI works now, and its slot is free again.
    held = [(w, s) for w, s in kernels[0].kept() if s.running]
    assert held, "kernel 0 started its spares first"
    adopted = kernels[0].take(held[0][0])
    assert adopted is not None
    kernels[2].offer([want(2, 2)])  # type: ignore[list-item]
    await kernels[2].settled()
    spare_clis = [s for s in made if s.running and s is not adopted]
    assert len(spare_clis) == 2
    for spares in kernels:
        await spares.close()
    await adopted.close()
    assert claim_slot(2, folder) is not None  # every slot given back
    assert not any(s.running for s in made)
