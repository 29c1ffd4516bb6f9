"""Portable notebooks: a saved notebook that another machine can continue.

The CLI keeps each conversation in its own session file,
``<config dir>/projects/<munged cwd>/<session id>.jsonl`` (the config dir is
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``). Copied into another machine's projects folder for *its*
cwd, ``--resume=ID`` continues there with the whole history. With ``Claude.portable`` on, a
turn's final output carries that file's conversation (redacted like transcripts, gzipped,
base64) under ``metadata.byre.portable``; only the newest turn of a conversation keeps it (the
turn before loses its copy when the next one is saved), so a notebook holds one copy per session
name.

A notebook is made to be shared, and the session file holds this machine's context too: the
instruction files the CLI loaded (the user's own ``~/.claude/CLAUDE.md`` among them), the
environment snapshot (paths, OS version), the whole system prompt, API request records. The
record keeps the conversation only (:func:`conversation_lines`, listed in docs/security.md):
the messages and a compaction's summary, with the keys the chain needs, and this machine's cwd
and home folder written as ``.`` and ``~`` wherever they appear.

``%claude resume --from NOTEBOOK`` reads the newest record for a session name back. The notebook
is untrusted input: the session id must be a UUID (it becomes a file name), the decompressed size
is bounded (a gzip bomb stops at the bound), every line must be a JSON object, and the only file
written is ``<this machine's projects folder for this cwd>/<uuid>.jsonl``, never over a different
conversation of the same id.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
import re
import time
import uuid
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..redact import redact_json
from ..session.storage import make_private_dirs, write_atomic
from ..transport.launch import cli_projects_dir

__all__ = [
    "PortableError",
    "Restored",
    "conversation_lines",
    "find_record",
    "machine_places",
    "pack",
    "project_folder",
    "projects_root",
    "restore",
    "session_file",
]

#: What ``metadata.byre.portable.format`` says: the CLI's session file, gzipped, in base64.
FORMAT = "claude-session-jsonl+gzip+base64"

#: The CLI shortens project folder names longer than this (and adds a hash of the path).
_MAX_FOLDER = 200

#: The lines of the session file that are the conversation: its messages, a compaction's
#: summary and boundary. Everything else is this machine's context (attachments: instruction
#: files, the environment and prompt snapshots, tool, agent and skill listings; API request
#: records; queue, prompt and cost bookkeeping): the CLI builds its own again where it resumes.
_CONVERSATION = frozenset({"user", "assistant", "summary"})
_SYSTEM_KEPT = frozenset({"compact_boundary"})

#: What of a kept line travels: the message, its place in the chain, and the flags that say
#: how the CLI reads it. Not kept: ``cwd``, ``gitBranch``, ``toolUseResult`` (the CLI's own
#: record of a tool's result: whole file contents an edit started from, which the model never
#: saw), request ids, permission mode, prompt sources.
_KEPT_KEYS = frozenset(
    {
        "type", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "sessionId",
        "timestamp", "message", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly",
        "summary", "leafUuid", "subtype", "content", "compactMetadata", "userType", "version",
    }
)  # fmt: skip


class PortableError(ValueError):
    """A notebook, or its record, that cannot be restored; the message says why."""


def projects_root(env: Mapping[str, str]) -> Path:
    """The CLI's ``projects`` folder under the environment it is launched with."""
    return cli_projects_dir(env)


def _java_hash(text: str) -> int:
    """The CLI's string hash (Java's ``hashCode`` over UTF-16 code units, 32-bit signed)."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i : i + 2], "little")) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def project_folder(cwd: str) -> str:
    """The CLI's folder name for a working directory: every character that is not an ASCII
    letter or digit becomes ``-``; past 200 characters, the first 200 and a hash of the path
    (as the CLI 2.1 names them)."""
    # The CLI replaces UTF-16 code units: a character outside the BMP is two of them.
    name = "".join(
        c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-" for c in cwd
    )
    if len(name) <= _MAX_FOLDER:
        return name
    return f"{name[:_MAX_FOLDER]}-{_base36(abs(_java_hash(cwd)))}"


def session_file(env: Mapping[str, str], cwd: str, session_id: str) -> Path | None:
    """The CLI's session file for ``session_id``: in the folder for ``cwd``, else in whichever
    project folder holds it (the CLI may have resolved the cwd differently)."""
    root = projects_root(env)
    for folder in (project_folder(cwd), project_folder(os.path.realpath(cwd))):
        path = root / folder / f"{session_id}.jsonl"
        if path.is_file():
            return path
    found = sorted(root.glob(f"*/{session_id}.jsonl"))
    return found[0] if found else None


def _kept(entry: Mapping[str, Any]) -> bool:
    kind = entry.get("type")
    return kind in _CONVERSATION or (kind == "system" and entry.get("subtype") in _SYSTEM_KEPT)


def _place_pattern(places: Mapping[str, str]) -> tuple[re.Pattern[str], dict[str, str]] | None:
    """One pattern for this machine's folders, longest first, each ending where a name ends
    (``/home/ada`` is not the start of ``/home/adam``)."""
    named = {path: name for path, name in places.items() if len(path.rstrip("/")) > 1}
    if not named:
        return None
    alternatives = "|".join(re.escape(path) for path in sorted(named, key=len, reverse=True))
    return re.compile(f"(?:{alternatives})(?![\\w-])"), named


def _replace_places(value: Any, pattern: re.Pattern[str], named: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(lambda m: named[m.group()], value) if "/" in value else value
    if isinstance(value, dict):
        return {k: _replace_places(v, pattern, named) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_places(v, pattern, named) for v in value]
    return value


def conversation_lines(
    entries: Sequence[Mapping[str, Any]], places: Mapping[str, str]
) -> list[dict[str, Any]]:
    """The conversation of a session file's lines: the kept lines (:data:`_CONVERSATION`)
    with the kept keys (:data:`_KEPT_KEYS`), each line's ``parentUuid`` pointing past the lines
    left out to its nearest kept ancestor, and every path in ``places`` (this machine's cwd,
    home folder...) replaced by its name there, wherever it appears."""
    dropped = {
        entry["uuid"]: entry.get("parentUuid")
        for entry in entries
        if not _kept(entry) and isinstance(entry.get("uuid"), str)
    }
    found = _place_pattern(places)
    lines = []
    for entry in entries:
        if not _kept(entry):
            continue
        line = {key: value for key, value in entry.items() if key in _KEPT_KEYS}
        parent, seen = line.get("parentUuid"), 0
        while isinstance(parent, str) and parent in dropped and seen <= len(dropped):
            parent, seen = dropped[parent], seen + 1  # ``seen``: a cycle cannot hold us
        if "parentUuid" in line:
            line["parentUuid"] = parent
        lines.append(line if found is None else _replace_places(line, *found))
    return lines


def machine_places(cwd: str, env: Mapping[str, str]) -> dict[str, str]:
    """This machine's folders a record must not name, and what it says instead: the cwd as
    ``.``, the CLI's config folder as ``~/.claude``, the home folder as ``~``."""
    home = env.get("HOME") or os.path.expanduser("~")
    places = {}
    for path, name in (
        (home, "~"),
        (str(projects_root(env).parent), "~/.claude"),
        (cwd, "."),
    ):
        for form in (path, os.path.realpath(path)):
            places[form.rstrip("/") or form] = name
    return places


def pack(
    path: Path,
    session_id: str,
    max_bytes: int,
    secrets: Iterable[str],
    places: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The portable record of a session file: its conversation (:func:`conversation_lines`,
    with this machine's folders in ``places`` replaced), redacted, gzipped, base64. Raises
    :class:`PortableError` when the packed record would be larger than ``max_bytes``."""
    known = set(secrets)
    try:
        # JSON lines pack to less than a tenth (gzip, then base64's 4/3): a file far larger
        # than the bound is refused before it is read and redacted on the kernel's loop.
        on_disk = path.stat().st_size
        if on_disk > max_bytes * 16:
            raise PortableError(
                f"the conversation's session file is {on_disk >> 20} MB, too large for "
                f"Claude.portable_max_kb ({max_bytes / 1024:.0f} kB)"
            )
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise PortableError(f"cannot read {path}: {e.strerror or e}") from None
    entries = []
    # Lines end at "\n" only: JSON.stringify leaves U+2028 and U+2029 raw inside strings, and
    # str.splitlines would cut the line there.
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a line the CLI was still writing: resume reads whole lines only
        if isinstance(entry, dict):
            entries.append(entry)
    lines = [
        json.dumps(redact_json(line, known), ensure_ascii=False)
        for line in conversation_lines(entries, places or {})
    ]
    raw = ("\n".join(lines) + "\n").encode()
    data = base64.b64encode(gzip.compress(raw, mtime=0)).decode("ascii")
    if len(data) > max_bytes:
        raise PortableError(
            f"the conversation's session file packs to {len(data) / 1024:.0f} kB, more than "
            f"Claude.portable_max_kb ({max_bytes / 1024:.0f} kB)"
        )
    return {
        "format": FORMAT,
        "session_id": session_id,
        "saved_at": time.time(),
        "size": len(raw),
        "data": data,
    }


# -- reading a notebook back ----------------------------------------------------------------


def _outputs(notebook: Any) -> Iterator[Mapping[str, Any]]:
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        raise PortableError("not a notebook (no list of cells)")
    for cell in cells:
        outputs = cell.get("outputs") if isinstance(cell, dict) else None
        for output in outputs if isinstance(outputs, list) else ():
            if isinstance(output, dict):
                yield output


def find_record(notebook_path: str, name: str, max_file_bytes: int) -> dict[str, Any]:
    """The newest portable record of session ``name`` in the notebook (by its ``saved_at``;
    between equals, the later output)."""
    try:
        size = os.path.getsize(notebook_path)
        if size > max_file_bytes:
            raise PortableError(f"{notebook_path} is {size >> 20} MB, too large to read")
        with open(notebook_path, "rb") as f:
            notebook = json.loads(f.read())
    except FileNotFoundError:
        raise PortableError(f"no such file: {notebook_path}") from None
    except PortableError:
        raise
    except (OSError, ValueError, RecursionError) as e:
        # ValueError covers UnicodeDecodeError and JSONDecodeError.
        raise PortableError(f"{notebook_path} is not a notebook: {e}") from None
    best: dict[str, Any] | None = None
    others: set[str] = set()
    for output in _outputs(notebook):
        metadata = output.get("metadata")
        byre = metadata.get("byre") if isinstance(metadata, dict) else None
        if not isinstance(byre, dict) or not isinstance(byre.get("portable"), dict):
            continue
        record = byre["portable"]
        if byre.get("session_name") != name:
            others.add(repr(byre.get("session_name"))[:40])  # the notebook's text: kept short
            continue
        saved = record.get("saved_at")
        if not isinstance(saved, (int, float)):
            saved = 0.0
        if best is None or saved >= best["saved_at"]:
            best = {**record, "saved_at": saved}
    if best is None:
        hint = f" (it has one for {', '.join(sorted(others)[:5])})" if others else ""
        raise PortableError(
            f"{notebook_path} holds no portable record for session {name!r}{hint}; it is saved "
            "only by turns run with `%config Claude.portable = True`"
        )
    return best


@dataclass(frozen=True)
class Restored:
    session_id: str
    path: Path
    written: bool


def _session_id(value: Any) -> str:
    """The record's session id as a canonical UUID: it becomes a file name."""
    try:
        parsed = uuid.UUID(value) if isinstance(value, str) and len(value) == 36 else None
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != value.lower():
        raise PortableError(f"the record's session id {str(value)[:80]!r} is not a UUID")
    return str(parsed)


def _inflate(data: Any, max_bytes: int) -> bytes:
    """The record's session file, decompressed to at most ``max_bytes`` (a gzip bomb stops
    there); each line must be a JSON object, as the CLI writes them."""
    if not isinstance(data, str):
        raise PortableError("the record holds no data")
    try:
        packed = base64.b64decode(data.encode("ascii"), validate=True)
        inflater = zlib.decompressobj(wbits=31)  # gzip framing
        raw = inflater.decompress(packed, max_bytes + 1)
    except (ValueError, binascii.Error, zlib.error) as e:
        raise PortableError(f"the record's data is corrupt: {e}") from None
    if len(raw) > max_bytes or inflater.unconsumed_tail:
        raise PortableError(
            f"the record's session file is larger than {max_bytes >> 20} MB once decompressed; "
            "not restored"
        )
    if not inflater.eof:
        raise PortableError("the record's data is corrupt: truncated gzip stream")
    try:
        text = raw.decode("utf-8")
        lines = [json.loads(line) for line in text.split("\n") if line.strip()]
    except (ValueError, RecursionError) as e:
        raise PortableError(f"the record's session file is corrupt: {e}") from None
    if not lines or not all(isinstance(line, dict) for line in lines):
        raise PortableError("the record's session file is corrupt: not the CLI's JSON lines")
    return raw


def restore(record: Mapping[str, Any], projects: Path, cwd: str, max_bytes: int) -> Restored:
    """Write the record's session file where the CLI looks for it when run in ``cwd``.

    A file of that id already there is kept when the record only repeats it or is older (the
    file begins with the record), replaced when the record continues it, and otherwise left
    alone with an error: a notebook cannot overwrite a different conversation.
    """
    if record.get("format") != FORMAT:
        raise PortableError(f"unknown portable record format {str(record.get('format'))[:80]!r}")
    session_id = _session_id(record.get("session_id"))
    raw = _inflate(record.get("data"), max_bytes)
    folder = projects / project_folder(os.path.realpath(cwd))
    path = folder / f"{session_id}.jsonl"
    if path.parent != folder:  # the UUID check above already rules this out
        raise PortableError(f"refusing to write outside {folder}")
    try:
        existing = path.read_bytes() if path.exists() else None
    except OSError as e:
        raise PortableError(f"cannot read {path}: {e.strerror or e}") from None
    if existing is not None:
        if existing.startswith(raw):
            return Restored(session_id, path, written=False)
        if not raw.startswith(existing):
            raise PortableError(
                f"{path} already holds a different conversation with this id; move it away "
                "to restore the notebook's"
            )
    try:
        make_private_dirs(folder)
        write_atomic(path, raw)
    except OSError as e:
        raise PortableError(f"cannot write {path}: {e.strerror or e}") from None
    return Restored(session_id, path, written=True)
