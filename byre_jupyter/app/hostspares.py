"""How many idle spare CLIs a whole host keeps (``Claude.host_spares``), and none while memory
is short (``Claude.spare_min_free_mb``).

Each kernel keeps up to two spares (:mod:`.spare`), about 180 MiB each; on a hub host with a
hundred kernels that is tens of GB for latency nobody may need. So a spare starts only when it
can hold a *slot*: one of ``host_spares`` files in a folder every user of the host can write
(``$BYRE_HOST_SPARES_DIR``, else ``/tmp/byre-spares``, sticky like ``/tmp``), locked with
``flock`` for as long as the spare idles and released when it is adopted or closed. The kernel
holds the lock, so a killed kernel's slots are free at once: no count to repair, no stale file.
Where users do not share ``/tmp`` (a pod per user, systemd's PrivateTmp) the bound is theirs
alone, which is what such a host wants anyway (docs/hub.md).

Another user of the host can hold every slot (by locking the files): that costs the others
their spares, never anything else; a slot file is opened with ``O_NOFOLLOW`` and never written.

Pure file and ``/proc`` I/O: no asyncio, IPython or widgets.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["ENV_DIR", "HostGate", "Slot", "claim_slot", "memory_available_mb", "on_hub"]

log = logging.getLogger(__name__)

#: Where the slots are: one folder for every user of the host.
ENV_DIR = "BYRE_HOST_SPARES_DIR"
DEFAULT_DIR = "/tmp/byre-spares"


def on_hub(env: Mapping[str, str]) -> bool:
    """Whether this kernel runs in a JupyterHub user's server (the variables the hub gives a
    server it spawns, which its kernels inherit)."""
    return bool(env.get("JUPYTERHUB_USER") or env.get("JUPYTERHUB_API_URL"))


class Slot:
    """One held place for an idle spare; :meth:`release` gives it back (once)."""

    def __init__(self, fd: int = -1) -> None:
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)  # closing the descriptor drops its flock


def _slot_folder(folder: Path) -> bool:
    """Make ``folder`` (mode 1777, like /tmp) if missing; whether it is usable."""
    try:
        os.mkdir(folder, 0o1777)
        os.chmod(folder, 0o1777)  # mkdir's mode went through the umask
    except FileExistsError:
        pass
    except OSError as e:
        log.warning("byre: no folder for the host's spare slots (%s): %s", folder, e)
        return False
    return folder.is_dir() and not folder.is_symlink()


def _open_slot(path: Path) -> int | None:
    """Open a slot file, making it (``0666``: every user of the host locks the same files) if
    missing. An existing one is opened without ``O_CREAT``: Linux refuses ``O_CREAT`` on
    another user's file in a sticky folder (``fs.protected_regular``)."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(2):
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            pass
        except OSError:
            return None
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue  # another kernel made it meanwhile: open theirs
        except OSError:
            return None
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)  # mode went through the umask
        return fd
    return None


def claim_slot(limit: int, folder: Path) -> Slot | None:
    """Hold one of ``limit`` slots in ``folder``; None when every one is held (or none can
    be had: a spare is an optimisation, so any doubt means no spare)."""
    if limit <= 0 or not _slot_folder(folder):
        return None
    for n in range(limit):
        fd = _open_slot(folder / f"slot-{n}")
        if fd is None:
            continue  # not ours to open (another user's mode, a planted symlink): next
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue  # held by another spare, in this kernel or another
        return Slot(fd)
    return None


def memory_available_mb(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """The host's available memory (``MemAvailable``) in MiB; None where it cannot be read."""
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class HostGate:
    """Whether a spare may start now, and its slot: ``None`` (no spare) when the host has less
    than ``min_free_mb()`` MiB available, or when ``limit()`` spares of this host are already
    idle; with no limit (``None``) a slot that holds nothing."""

    def __init__(
        self,
        limit: Callable[[], int | None],
        min_free_mb: Callable[[], int],
        *,
        folder: Callable[[], Path] = lambda: Path(os.environ.get(ENV_DIR) or DEFAULT_DIR),
        available_mb: Callable[[], int | None] = memory_available_mb,
    ) -> None:
        self.limit = limit
        self.min_free_mb = min_free_mb
        self.folder = folder
        self.available_mb = available_mb

    def __call__(self) -> Slot | None:
        available = self.available_mb()
        if available is not None and available < self.min_free_mb():
            log.debug("byre: no spare CLI: %s MiB available", available)
            return None
        limit = self.limit()
        if limit is None:
            return Slot()
        return claim_slot(limit, self.folder())
