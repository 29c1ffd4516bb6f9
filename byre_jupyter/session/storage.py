"""Files byre_jupyter keeps on disk: private, atomic, locked.

Transcripts and the resume index can hold conversation ids, prompts and tool output, so they
are created ``0600`` in folders we create ``0700`` (the CLI's own history files are ``0600``
too). Modes are set with ``fchmod`` after creation, so a permissive umask cannot widen them.
Shared files are replaced atomically (a temp file of this process in the same folder, then
``os.replace``) while a lock file beside them is held with ``flock``, so writers in several
kernels never interleave and readers never see half a file.

Pure file I/O: no asyncio, IPython or widgets.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "FILE_MODE",
    "FOLDER_MODE",
    "locked",
    "make_private_dirs",
    "open_private",
    "write_atomic",
]

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def make_private_dirs(folder: str | os.PathLike[str]) -> None:
    """Create ``folder`` and any missing parents as ``0700``; folders that exist stay as they
    are (they are the user's, or were made by an earlier version)."""
    path = Path(os.path.abspath(folder))
    missing: list[Path] = []
    while not path.exists():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder_path in reversed(missing):
        try:
            os.mkdir(folder_path, FOLDER_MODE)
        except FileExistsError:
            continue  # another kernel made it first: not ours to change
        os.chmod(folder_path, FOLDER_MODE)  # mkdir's mode went through the umask


def open_private(path: str | os.PathLike[str], *, append: bool = False) -> int:
    """Open ``path`` for writing and return the descriptor.

    A file we create is ``0600`` (umask-proof). With ``append``, an existing file is opened as
    it is: its mode is left alone, since it may not be ours (a device, another user's file)."""
    flags = os.O_WRONLY | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        if not append:
            raise
        return os.open(path, flags)
    try:
        os.fchmod(fd, FILE_MODE)
    except OSError:
        os.close(fd)
        raise
    return fd


def write_atomic(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace ``path`` with ``data``: readers see the old file or the new one, never a mix.

    The temp file is this process's own (``mkstemp``, ``0600``) in the same folder, so
    ``os.replace`` is a rename within one file system."""
    target = Path(path)
    make_private_dirs(target.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), FILE_MODE)
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(lock_path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created ``0600``) for the block.

    The lock file is never removed: removing it would let two writers lock two different
    inodes of the same name."""
    make_private_dirs(Path(lock_path).parent)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
    try:
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, FILE_MODE)
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
