"""The CLI's conversations in a folder, for ``%claude conversations`` and ``%claude resume #N``.

The CLI keeps one session file per conversation, ``<projects>/<folder of the cwd>/<id>.jsonl``
(:func:`.portable.project_folder` names the folder). Those files come from byre's sessions,
other notebooks and the terminal alike; their content (prompts, tool output) is untrusted and
their size unbounded. So each file is read by a streaming line scan under a byte budget, a line
longer than :data:`LINE_CAP` is not parsed (its head still yields a prompt preview), and a file
that cannot be read is listed with what could be.

Where a conversation came from is byre's resume index (:mod:`byre_jupyter.session.index`),
which names the notebook and session that last ran each conversation; one it does not know is
the terminal's (or an earlier conversation of a byre session, which the index no longer names).

Pure file I/O: no asyncio, IPython or widgets.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..protocol import SCRIPTED_MESSAGE_ID
from .portable import project_folder, projects_root

__all__ = ["LINE_CAP", "SCAN_BUDGET", "CliConversation", "Origin", "find_conversations"]

#: The most of a session file one listing reads (turns past it are counted as "at least").
SCAN_BUDGET = 8 * 2**20
#: A line longer than this is not parsed (a pasted file in a prompt, a huge tool output).
LINE_CAP = 256 * 2**10
#: How much of the file's end is read for the CLI's last cost figure when the scan stopped early.
TAIL_BYTES = 64 * 2**10
#: Of an oversized line, the head searched for a prompt preview.
_HEAD = 4096
#: A user entry's prompt as the CLI writes it (``"type":"user","message":{"role":"user",
#: "content":"…``): how the head of an oversized line still gives a preview.
_PROMPT_HEAD = re.compile(
    r'"type"\s*:\s*"user"\s*,\s*"message"\s*:\s*\{\s*"role"\s*:\s*"user"\s*,\s*"content"\s*:\s*"((?:[^"\\]|\\.)*)'
)


_COMMAND_NAME = re.compile(r"\s*<command-name>([^<]*)</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>([^<]*)</command-args>")


@dataclass(frozen=True)
class Origin:
    """Who ran a conversation: a byre session (``notebook`` None: a kernel without one) or,
    ``session`` None, the terminal (byre's index does not know it)."""

    session: str | None = None
    notebook: str | None = None
    here: bool = False  # this kernel's notebook (or this kernel, without a notebook)


@dataclass(frozen=True)
class CliConversation:
    """One session file as far as it could be read."""

    session_id: str
    path: Path
    mtime: float
    first_prompt: str | None
    turns: int
    complete: bool  # the whole file was scanned (else ``turns`` is a lower bound)
    cost_usd: float | None  # the CLI's own total (its last ``cost-state`` entry), if any
    scripted: bool  # answered by byre's scripted API: the CLI's cost is not a real one
    origin: Origin


def find_conversations(
    env: Mapping[str, str],
    cwd: str,
    index: Mapping[str, str],
    here_keys: tuple[str, ...],
    live: Mapping[str, str],
    limit: int | None,
) -> list[CliConversation]:
    """The CLI's conversations for ``cwd``, newest first (by the file's last write), at most
    ``limit`` of them. ``index`` is the resume index (key → id), ``here_keys`` a key prefix per
    place that means this kernel, ``live`` this kernel's sessions (id → name)."""
    root = projects_root(env)
    folders = dict.fromkeys((project_folder(cwd), project_folder(os.path.realpath(cwd))))
    files: dict[str, tuple[float, Path]] = {}
    for folder in folders:
        try:
            entries = list(os.scandir(root / folder))
        except OSError:  # no folder yet (nothing run here), or unreadable
            continue
        for entry in entries:
            if not entry.name.endswith(".jsonl"):
                continue
            try:
                if not entry.is_file():
                    continue
                mtime = entry.stat().st_mtime
            except OSError:
                continue
            files.setdefault(entry.name[: -len(".jsonl")], (mtime, Path(entry.path)))
    newest = sorted(files.items(), key=lambda item: item[1][0], reverse=True)
    origins = _origins(index, here_keys, live)
    return [
        _read(sid, path, mtime, origins.get(sid, Origin())) for sid, (mtime, path) in newest[:limit]
    ]


def _origins(
    index: Mapping[str, str], here_keys: tuple[str, ...], live: Mapping[str, str]
) -> dict[str, Origin]:
    origins: dict[str, Origin] = {}
    for key, sid in index.items():
        place, sep, name = key.rpartition("::")
        if not sep:
            continue
        notebook = None
        if place.startswith("notebook:"):
            # An absolute path, or "<folder>::<path from the server root>" (resume_keys).
            notebook = place.removeprefix("notebook:").rpartition("::")[2]
        here = any(key.startswith(prefix) for prefix in here_keys)
        # Several keys may name one conversation (a notebook's and its folder's fallback): the
        # notebook's own key wins, this kernel's most of all.
        old = origins.get(sid)
        if old is None or (here, notebook is not None) > (old.here, old.notebook is not None):
            origins[sid] = Origin(name, notebook, here)
    for sid, name in live.items():  # running here now, whatever the index says
        origins[sid] = Origin(name, origins.get(sid, Origin()).notebook, here=True)
    return origins


def _read(sid: str, path: Path, mtime: float, origin: Origin) -> CliConversation:
    first: str | None = None
    turns = 0
    cost: float | None = None
    scripted = False
    complete = False
    try:
        with open(path, "rb") as f:
            try:
                for line, whole in _scan(f):
                    entry = _entry(line) if whole else None
                    if entry is None:
                        if first is None and not whole:
                            first = _prompt_head(line)
                            turns += first is not None
                        continue
                    kind = entry.get("type")
                    if kind == "user":
                        prompt = _prompt(entry)
                        if prompt is not None:
                            turns += 1
                            first = prompt if first is None else first
                    elif kind == "assistant":
                        scripted = scripted or _scripted(entry)
                    elif kind == "cost-state":
                        cost = _cost(entry, cost)
                complete = True
            except _OverBudget:
                cost = _tail_cost(f)
    except OSError as e:
        # Listed with what was read: one unreadable file must not fail the listing.
        first = first or f"(unreadable: {e.strerror or e})"
    return CliConversation(sid, path, mtime, first, turns, complete, cost, scripted, origin)


class _OverBudget(Exception):
    """The scan reached :data:`SCAN_BUDGET`."""


def _scan(f: IO[bytes]) -> Iterator[tuple[bytes, bool]]:
    """The file's lines under :data:`SCAN_BUDGET`, each with whether it is whole: of a line
    longer than :data:`LINE_CAP` only the head comes (the rest is skipped unread). Raises
    :class:`_OverBudget` when the budget runs out."""
    read = 0
    while True:
        line = f.readline(LINE_CAP)
        if not line:
            return
        read += len(line)
        if len(line) == LINE_CAP and not line.endswith(b"\n"):
            yield line[:_HEAD], False  # first: a line past the budget still gives its head
            while True:  # skip the rest of the long line, within the budget
                if read >= SCAN_BUDGET:
                    raise _OverBudget
                rest = f.readline(LINE_CAP)
                read += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        else:
            yield line, True
        if read >= SCAN_BUDGET:
            raise _OverBudget


def _entry(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except ValueError:  # invalid JSON or UTF-8: a damaged line is skipped
        return None
    return entry if isinstance(entry, dict) else None


def _scripted(entry: Mapping[str, Any]) -> bool:
    message = entry.get("message")
    return isinstance(message, dict) and str(message.get("id", "")).startswith(SCRIPTED_MESSAGE_ID)


def _prompt(entry: Mapping[str, Any]) -> str | None:
    """A user entry's prompt text, or None when it is no prompt (a tool result, a compaction
    summary, the CLI's own meta lines)."""
    if entry.get("isMeta") or entry.get("isSidechain") or entry.get("isCompactSummary"):
        return None
    message = entry.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        return _slash_command(content) or content
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") == "tool_result":
            return None if not texts else " ".join(texts)
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return " ".join(texts) if texts else "(an image)" if content else None


def _slash_command(text: str) -> str | None:
    """A slash command as typed (``/compact keep the plan``): the CLI records it as
    ``<command-name>/compact</command-name> <command-message>…</command-message>
    <command-args>keep the plan</command-args>``."""
    name = _COMMAND_NAME.match(text)
    if name is None:
        return None
    args = _COMMAND_ARGS.search(text)
    return f"{name.group(1)} {args.group(1) if args else ''}".strip()


def _prompt_head(line: bytes) -> str | None:
    """The start of the prompt in an oversized user line (what a preview needs)."""
    match = _PROMPT_HEAD.search(line[:_HEAD].decode("utf-8", "replace"))
    if match is None:
        return None
    text = match.group(1)
    text = text[: len(text) - 6] if len(text) > 6 else text  # no cut \uXXXX escape at the end
    try:
        return str(json.loads(f'"{text.rstrip(chr(92))}"')) + " …"
    except ValueError:
        return None


def _cost(entry: Mapping[str, Any], old: float | None) -> float | None:
    value = entry.get("totalCostUSD")
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return old


def _tail_cost(f: IO[bytes]) -> float | None:
    """The last ``cost-state`` in the file's last :data:`TAIL_BYTES` (the scan stopped early)."""
    try:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read(TAIL_BYTES)
    except OSError:
        return None
    cost: float | None = None
    for line in tail.split(b"\n"):
        if b'"cost-state"' in line:
            entry = _entry(line)
            if entry is not None and entry.get("type") == "cost-state":
                cost = _cost(entry, cost)
    return cost
