"""What a tool call looks like in one line: labels, input summaries, edit diffs, image types.

Pure helpers used by the view model and the renderers. Summaries come back with hidden
characters made visible (:mod:`byre_jupyter.ui.reveal`); diffs are raw text (their renderers
reveal them).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from byre_jupyter.protocol import sniff_image_type
from byre_jupyter.ui.reveal import reveal

__all__ = [
    "compact_json",
    "sniff_image_type",
    "summarize_tool_input",
    "tool_diff",
    "tool_label",
]

_SUMMARY_MAX = 120


# --- tool input helpers ---------------------------------------------------------------------


def tool_label(name: str) -> str:
    """Display name: ``mcp__byre__python_exec`` → ``byre.python_exec``."""
    if name.startswith("mcp__"):
        parts = name[5:].split("__", 1)
        if len(parts) == 2:
            return f"{parts[0]}.{parts[1]}"
    return name


def _shorten(text: str, limit: int = _SUMMARY_MAX) -> str:
    text = text.strip()
    first, _, rest = text.partition("\n")
    if rest.strip():
        first += " …"
    return first if len(first) <= limit else first[: limit - 1] + "…"


def compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def summarize_tool_input(name: str, tool_input: Mapping[str, Any]) -> str:
    """One short line describing a tool call (the command, the path, the description...),
    hidden characters shown as ``⟨U+202E⟩`` markers."""
    return reveal(_summary(name, tool_input))


def _summary(name: str, tool_input: Mapping[str, Any]) -> str:

    def field_(*keys: str) -> str | None:
        for key in keys:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                return value
        return None

    if name == "Bash":
        found = field_("command")
    elif name in ("Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead"):
        found = field_("file_path", "notebook_path", "path")
    elif name in ("Agent", "Task"):
        found = field_("description", "subagent_type")
    elif name in ("Grep", "Glob"):
        found = field_("pattern")
    elif name == "WebFetch":
        found = field_("url")
    elif name in ("WebSearch", "ToolSearch"):
        found = field_("query")
    elif name.startswith("mcp__"):
        code = field_("code")
        if code is not None:
            return _shorten(code)  # the first line, "…" when there is more
        found = None
    else:
        found = None
    if found is not None:
        return _shorten(found)
    return _shorten(compact_json(dict(tool_input))) if tool_input else ""


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\\n`` only: ``\\r``, U+2028 and friends stay inside their
    line (``str.splitlines`` would break there, showing a line break the file does not have)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _unified(path: str, old: str, new: str, context: int | None) -> str:
    old_lines, new_lines = _lines(old), _lines(new)
    n = max(len(old_lines), len(new_lines)) if context is None else context
    name = reveal(path, one_line=True)  # a newline in the path would fake diff lines
    diff = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile=f"a/{name}" if name else "a",
        tofile=f"b/{name}" if name else "b",
        n=n,
    )
    # As git does: a last line without a newline says so, or "x" → "x\n" would look unchanged.
    return "".join(
        ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in diff
    )


def tool_diff(name: str, tool_input: Mapping[str, Any], *, context: int | None = 3) -> str | None:
    """A unified diff for ``Edit``/``MultiEdit`` (old_string → new_string), else None.

    ``context`` lines around each change; None for the whole of both strings.
    """
    path = str(tool_input.get("file_path", ""))
    if name == "Edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return _unified(path, old, new, context)
    if name == "MultiEdit":
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            parts = [
                _unified(path, str(e.get("old_string", "")), str(e.get("new_string", "")), context)
                for e in edits
                if isinstance(e, Mapping)
            ]
            return "".join(parts)
    return None
