"""What the UI knows about each tool: one table, keyed by tool name, with a generic fallback.
The CLI's own tools are written here; the kernel tools' entries are their records' cards
(``tools/registry.py``), and :class:`ToolInfo` itself lives beside them (``tools/card.py``).

:data:`TOOLS` holds, per tool, what its card's one-line summary shows, which input is the
card's body, whether it has a diff, how an approval card describes it (``ui/approval_card.py``
builds the description from the entry's ``approval`` kind), what an "Always allow" of it covers
(docs/security.md, "What the allowances cover") and whether its result is a subagent's report.
:func:`tool_info` finds the entry of any tool name. Pure helpers used by the view model and the
renderers. Summaries come back with hidden characters made visible (:mod:`byre_jupyter.ui.reveal`);
diffs are raw text (their renderers reveal them).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from byre_jupyter.session.permissions import Allowance, Scope
from byre_jupyter.tools.card import ApprovalKind, ToolInfo, read_only_card
from byre_jupyter.tools.registry import cards
from byre_jupyter.ui.edit_card import input_diff, input_summary
from byre_jupyter.ui.reveal import reveal

__all__ = [
    "SCOPE_WORDS",
    "TOOLS",
    "ApprovalKind",
    "ToolInfo",
    "allowance_choices",
    "allowance_lines",
    "allowance_text",
    "allowance_words",
    "compact_json",
    "input_lines",
    "shows_rule",
    "summarize_tool_input",
    "tool_diff",
    "tool_info",
    "tool_label",
]

_SUMMARY_MAX = 120

_FILE_KEYS = ("file_path", "notebook_path", "path")
_AGENT = ToolInfo(
    summary_keys=("description", "subagent_type"),
    body_key="prompt",
    body_prefix="Asked: ",
    approval="agent",
    subagent=True,
)


_read_only = read_only_card


TOOLS: dict[str, ToolInfo] = {
    "Bash": ToolInfo(
        summary_keys=("command",),
        body_key="command",
        body_prefix="$ ",
        approval="bash",
        allow="command",
        allow_key="command",
    ),
    "Read": _read_only("Read", "file_path", summary_keys=_FILE_KEYS),
    "NotebookRead": ToolInfo(summary_keys=_FILE_KEYS, allow="tool"),
    "Write": ToolInfo(
        summary_keys=_FILE_KEYS,
        body_key="content",
        approval="write",
        allow="file",
        allow_key="file_path",
    ),
    "Edit": ToolInfo(
        summary_keys=_FILE_KEYS, diff="edit", approval="edit", allow="file", allow_key="file_path"
    ),
    "MultiEdit": ToolInfo(
        summary_keys=_FILE_KEYS,
        diff="multi_edit",
        approval="multi_edit",
        allow="file",
        allow_key="file_path",
    ),
    "NotebookEdit": ToolInfo(
        summary_keys=_FILE_KEYS,
        approval="notebook_edit",
        allow="file",
        allow_key="notebook_path",
    ),
    "Agent": _AGENT,
    "Task": _AGENT,
    "Grep": _read_only("Search file contents for", "pattern", summary_keys=("pattern",)),
    "Glob": _read_only("List files matching", "pattern", summary_keys=("pattern",)),
    "WebFetch": ToolInfo(summary_keys=("url",), approval="titled", action="Fetch", named="url"),
    "WebSearch": ToolInfo(
        summary_keys=("query",), approval="titled", action="Search the web for", named="query"
    ),
    "ToolSearch": ToolInfo(summary_keys=("query",)),
    # Claude asks the user: its questions and its plan have cards of their own
    # (ui/cards.py); EnterPlanMode is the generic card in plain words.
    "ExitPlanMode": ToolInfo(summary_keys=("planFilePath",)),
    "EnterPlanMode": ToolInfo(
        approval="titled",
        action="Claude wants to plan before changing anything: switch to plan mode?",
    ),
    # The kernel tools' cards come with their records (tools/registry.py).
    **cards(),
}
"""Every tool the UI knows by name; :func:`tool_info` falls back to a generic entry."""

_GENERIC = ToolInfo(body_key="code")
# An MCP tool's ``code`` is its one-line summary (our python tool's and any look-alike's).
_MCP = ToolInfo(summary_keys=("code",), body_key="code")


def tool_info(name: str) -> ToolInfo:
    """The entry for ``name``: its own, or the generic one (MCP tools: by their code)."""
    return TOOLS.get(name) or (_MCP if name.startswith("mcp__") else _GENERIC)


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
    if tool_info(name).diff == "notebook":
        summary = input_summary(tool_input)
        if summary is not None:
            return _shorten(summary)
    listed = tool_input.get(tool_info(name).summary_list or "")
    if isinstance(listed, list) and listed and all(isinstance(item, str) for item in listed):
        return _shorten(", ".join(listed))
    for key in tool_info(name).summary_keys:
        value = tool_input.get(key)
        if isinstance(value, str) and value.strip():
            return _shorten(value)  # the first line, "…" when there is more
    return _shorten(compact_json(dict(tool_input))) if tool_input else ""


_KEY = re.compile(r"[A-Za-z_][\w.-]*")


def _key_text(key: object) -> str:
    text = str(key)
    return text if _KEY.fullmatch(text) else json.dumps(text, ensure_ascii=False)


def value_text(value: Any) -> str:
    """An input value as a person reads it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, indent=2, default=str)
    except (TypeError, ValueError):
        return repr(value)


def input_lines(tool_input: Mapping[str, Any], skip: tuple[str, ...] = ()) -> str:
    """Every key of ``tool_input`` but ``skip`` as ``key: value``, readable and complete.

    A multi-line value starts on the next line, indented, so no value can fake a key line.
    """
    out: list[str] = []
    for key, value in tool_input.items():
        if key in skip:
            continue
        text = value_text(value)
        if "\n" in text:
            out.append(f"{_key_text(key)}:")
            out.extend(f"    {line}" for line in text.split("\n"))
        else:
            out.append(f"{_key_text(key)}: {text}")
    return "\n".join(out)


# --- what "Always allow" covers ------------------------------------------------------------


def allowance_choices(name: str, tool_input: Mapping[str, Any]) -> tuple[Allowance, ...]:
    """The allowances a card offers for this call, the narrowest (its default) first: the
    exact command and then prefix rules of its first words; the file; the tool; else the
    exact input. Paths resolve against this process's folder (the caller rebinds them)."""
    info = tool_info(name)
    value = tool_input.get(info.allow_key) if info.allow_key else None
    if info.allow == "tool":
        return (Allowance.for_tool(name),)
    if info.allow == "command" and isinstance(value, str) and value.strip():
        prefixes = Allowance.prefixes(value)
        exact = Allowance.for_command(name, info.allow_key, value)
        return (exact, *(Allowance.for_prefix(name, info.allow_key, p) for p in prefixes))
    if info.allow == "file" and isinstance(value, str) and value.strip():
        return (Allowance.for_file(name, info.allow_key, value),)
    return (Allowance.for_input(name, tool_input),)


def _clip(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, the cut marked."""
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def allowance_text(allowance: Allowance, limit: int | None = None) -> str:
    """The allowance as a rule (``Bash(npm test:*)``, ``Write(/p/f.py)``, ``Read``), hidden
    and look-alike characters as markers; ``limit`` clips a long command."""
    label = tool_label(allowance.tool)
    if allowance.scope == "tool":
        return label
    value = reveal(allowance.value, one_line=True)
    if allowance.scope == "prefix":
        return f"{label}({_clip(value, limit)}:*)"
    return f"{label}({_clip(value, limit)})"


def allowance_words(allowance: Allowance) -> str:
    """What the allowance covers, in words, for the card (its rule follows them there, but
    for a whole tool or an exact input, which the words and the body above already say)."""
    label = tool_label(allowance.tool)
    own = tool_info(allowance.tool).covers
    if own and allowance.scope in ("tool", "input"):
        return reveal(own.format_map(_fields(allowance)), one_line=True)
    if allowance.scope == "tool":
        return f"every {label} call, whatever its input"
    if allowance.scope == "command":
        return "only this exact command"
    if allowance.scope == "prefix":
        prefix = reveal(allowance.value, one_line=True)
        return (
            f"every command that starts with “{prefix}” and runs nothing else "
            "(no ; && | $( ) ` redirection or second line)"
        )
    if allowance.scope == "file":
        return f"{label} of this file only"
    return f"only this exact {label} call (the same input)"


class _Fields(dict[str, str]):
    """An input allowance's fields for :attr:`ToolInfo.covers`; a missing one reads "?"."""

    def __missing__(self, key: str) -> str:
        return "?"


def _fields(allowance: Allowance) -> _Fields:
    try:
        values = json.loads(allowance.value) if allowance.scope == "input" else {}
    except ValueError:
        values = {}
    if not isinstance(values, dict):
        return _Fields()
    return _Fields({str(k): str(v) for k, v in values.items() if isinstance(v, (str, int))})


def shows_rule(allowance: Allowance) -> bool:
    """Whether the card adds the rule after the words: not for a whole tool (the words name
    it) nor an exact input (the body above is that input)."""
    return allowance.scope not in ("tool", "input")


#: What each kind of allowance covers, in a few words (``%claude permissions``).
SCOPE_WORDS: dict[Scope, str] = {
    "tool": "every call of this tool",
    "command": "this exact command only",
    "prefix": "commands starting with this, none chained or redirected",
    "file": "this file only",
    "input": "this exact input only",
}


def allowance_lines(allowances: list[Allowance]) -> list[str]:
    """One line per allowance, the rule whole: ``Bash(touch /p/ok)  (this exact command
    only)``."""
    return [f"  {allowance_text(a)}  ({SCOPE_WORDS[a.scope]})" for a in allowances]


# --- diffs ----------------------------------------------------------------------------------


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
    kind = tool_info(name).diff
    if kind == "edit":
        old, new = tool_input.get("old_string"), tool_input.get("new_string")
        if isinstance(old, str) and isinstance(new, str):
            return _unified(path, old, new, context)
    if kind == "notebook":
        return input_diff(tool_input)
    if kind == "multi_edit":
        edits = tool_input.get("edits")
        if isinstance(edits, list):
            parts = [
                _unified(path, str(e.get("old_string", "")), str(e.get("new_string", "")), context)
                for e in edits
                if isinstance(e, Mapping)
            ]
            return "".join(parts)
    return None
