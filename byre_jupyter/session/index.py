"""The resume index: which conversation each notebook's sessions had, for ``%claude resume``.

One JSON object ``{key: conversation id}`` in ``sessions.json`` under ``Claude.state_dir``
(default ``$BYRE_STATE_DIR``, else ``~/.byre_jupyter``), shared by every kernel of the user. So
that several kernels can write it at once without losing entries, each change is a read-modify-
write under a lock file beside it, and the new content replaces the old atomically
(:mod:`.storage`). A file that does not parse (written by hand, a full disk under an old
version) is moved aside to a timestamped backup with a warning; every entry that can still be
read from it is kept.

Keys name the notebook: jupyter_server puts the notebook's path in each kernel's environment as
``JPY_SESSION_NAME``, so two notebooks in one folder never resume each other's conversation.
Without it (a terminal IPython, an old server) the key is the working folder, as 0.1 wrote it;
such entries are still read as the fallback of a notebook that has none of its own.

Pure file I/O: no asyncio, IPython or widgets.
"""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Iterable
from pathlib import Path

from ..errors import ByreWarning
from .storage import FILE_MODE, locked, write_atomic

__all__ = ["NOTEBOOK_ENV", "ResumeIndex", "resume_keys"]

NOTEBOOK_ENV = "JPY_SESSION_NAME"

# One "key": "value" pair of JSON strings: what can be salvaged from a damaged file.
_PAIR = re.compile(r'"((?:[^"\\\n]|\\.)*)"\s*:\s*"((?:[^"\\\n]|\\.)*)"')
_warned_unwritable: set[Path] = set()


def resume_keys(name: str, cwd: str, notebook: str | None) -> tuple[str, ...]:
    """The keys of session ``name``, the one to write first, then the fallbacks to read.

    ``notebook`` is ``$JPY_SESSION_NAME``: an absolute path from JupyterLab / Notebook 7, or a
    path relative to the server root from other clients (then the folder disambiguates)."""
    folder_key = f"{cwd}::{name}"
    if not notebook:
        return (folder_key,)
    where = notebook if os.path.isabs(notebook) else f"{cwd}::{notebook}"
    return (f"notebook:{where}::{name}", folder_key)


def _parse(raw: bytes) -> dict[str, str] | None:
    """The entries of a well-formed index, or None if it is damaged."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and JSONDecodeError both
        return None
    if not isinstance(data, dict):
        return None
    return {str(k): v for k, v in data.items() if isinstance(v, str)}


def _salvage(raw: bytes) -> dict[str, str]:
    """Every ``"key": "value"`` string pair still readable in a damaged index."""
    entries: dict[str, str] = {}
    for match in _PAIR.finditer(raw.decode("utf-8", "replace")):
        try:
            key, value = json.loads(f'["{match.group(1)}", "{match.group(2)}"]')
        except ValueError:
            continue
        entries[key] = value
    return entries


class ResumeIndex:
    """The index file at ``path``; its lock is ``path`` + ``.lock``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def read(self) -> dict[str, str]:
        """All entries. A damaged file is recovered first (backup, warning, salvage)."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        except OSError as e:
            self._warn_unusable(e)
            return {}
        entries = _parse(raw)
        if entries is not None:
            return entries
        try:
            with locked(self.lock_path):
                return self._load_locked()
        except OSError as e:
            self._warn_unusable(e)
            return _salvage(raw)

    def find(self, keys: Iterable[str]) -> str | None:
        """The conversation id of the first of ``keys`` that has one."""
        entries = self.read()
        return next((entries[k] for k in keys if k in entries), None)

    def set(self, key: str, session_id: str) -> None:
        """Remember ``session_id`` under ``key``. Best effort: the index is a convenience, so a
        read-only or full disk warns once and the turn goes on."""
        try:
            with locked(self.lock_path):
                entries = self._load_locked()
                if entries.get(key) == session_id:
                    return
                entries[key] = session_id
                write_atomic(self.path, self._encode(entries))
        except OSError as e:
            self._warn_unusable(e)

    # -- under the lock ---------------------------------------------------------------------

    def _load_locked(self) -> dict[str, str]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        entries = _parse(raw)
        if entries is not None:
            return entries
        entries = _salvage(raw)
        backup = self._backup()
        write_atomic(self.path, self._encode(entries))
        warnings.warn(
            f"byre_jupyter: {self.path} was damaged; it was moved to {backup} and the "
            f"{len(entries)} entries still readable in it were kept. `%claude resume` may not "
            "find conversations remembered only in the damaged part.",
            ByreWarning,
            stacklevel=4,
        )
        return entries

    def _backup(self) -> Path:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        count = 1
        while backup.exists():
            count += 1
            backup = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{count}")
        os.rename(self.path, backup)
        if backup.stat().st_uid == os.geteuid():
            os.chmod(backup, FILE_MODE)  # an 0.1 file was 0644
        return backup

    @staticmethod
    def _encode(entries: dict[str, str]) -> bytes:
        return (json.dumps(entries, indent=1, ensure_ascii=False) + "\n").encode("utf-8")

    def _warn_unusable(self, error: OSError) -> None:
        if self.path in _warned_unwritable:
            return
        _warned_unwritable.add(self.path)
        warnings.warn(
            f"byre_jupyter: cannot use {self.path} ({error.strerror or error}); conversations "
            "are not remembered for `%claude resume` until this is fixed.",
            ByreWarning,
            stacklevel=3,
        )
