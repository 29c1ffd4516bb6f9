"""What a tool call will do, in words a person checks before allowing it (pure).

What is approved must be what is seen (a card that cut the command at 8,000 characters, titled
itself with the model's own description and passed U+202E through let a user approve something
other than what they read), so :func:`describe_request` says what the tool will do in a
:class:`ToolRequest`: a title in our own words built from the tool's name and input ("Run a
shell command", "Write /p/f.py (1,234 lines)"), and the *whole* command, code, file content or
diff, never cut. Input keys it does not lay out itself are listed too, so nothing sent is left
out. Free text from the model about its own call (Bash's ``description``) is never the title:
it is kept apart as a claim, which the card quotes.

One describer per ``ToolInfo.approval`` kind (ui/toolinfo.py says which tool has which). The
widget that shows a :class:`ToolRequest` is ui/approval_card.py; the approvals (app/approvals.py)
use the same words for the record of a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from byre_jupyter.ui.edit_card import review_text
from byre_jupyter.ui.reveal import count_hidden, count_lookalikes, reveal
from byre_jupyter.ui.toolinfo import (
    ApprovalKind,
    input_lines,
    tool_diff,
    tool_info,
    tool_label,
    value_text,
)

__all__ = [
    "CLAIM_KEYS",
    "BodyKind",
    "ToolRequest",
    "counted",
    "describe_request",
    "describe_tool_request",
    "line_count",
]

BodyKind = Literal["command", "code", "cell", "content", "diff", "prompt", "input"]

#: Input keys holding the model's own words about its call: shown only as a quoted claim.
CLAIM_KEYS = ("description",)


@dataclass(frozen=True)
class ToolRequest:
    """What one tool call will do, laid out for a person. Model text is kept raw here;
    :attr:`title`, :attr:`detail` and the card reveal hidden characters when they show it."""

    tool_name: str
    #: The title before revealing: our words, plus the path/URL/name the call acts on.
    heading: str
    #: The model's own words about the call (its ``description``): only ever shown quoted.
    claim: str = ""
    kind: BodyKind = "input"
    #: Everything that will run, whole: the command, the code, the file content, the diff.
    body: str = ""
    #: The other input keys, one ``key: value`` each (multi-line values indented).
    extra: str = ""

    @property
    def title(self) -> str:
        """The title as plain text, hidden characters (newlines too) as ``⟨U+202E⟩`` markers."""
        return reveal(self.heading, one_line=True)

    @property
    def detail(self) -> str:
        """Body and other input as plain text, hidden characters as markers."""
        return reveal("\n".join(part for part in (self.body, self.extra) if part))

    @property
    def summary(self) -> str:
        """One line for the record of a decision: the title, and for a command or code its
        first line (clipped), so the saved notebook says what was allowed or denied."""
        if self.kind not in ("command", "code") or not self.body.strip():
            return self.title
        lines = self.body.strip().split("\n")
        first = lines[0] if len(lines[0]) <= _SUMMARY_CHARS else lines[0][:_SUMMARY_CHARS] + "…"
        more = f" (+{counted(len(lines) - 1, 'line')})" if len(lines) > 1 else ""
        return f"{self.title}: {reveal(first, one_line=True)}{more}"

    @property
    def hidden_count(self) -> int:
        return count_hidden(self.heading, one_line=True) + sum(
            count_hidden(t) for t in (self.claim, self.body, self.extra)
        )

    @property
    def lookalike_count(self) -> int:
        """Letters passing for Latin ones: another script's (a Cyrillic i in github.com, a
        Lisu I), a Latin one drawn like another (a dotless i, a small capital), a stray mark."""
        return sum(count_lookalikes(t) for t in (self.heading, self.claim, self.body, self.extra))


_SUMMARY_CHARS = 160


def counted(n: int, word: str) -> str:
    """``1 line``, ``1,234 lines``."""
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def line_count(text: str) -> int:
    """Lines as an editor counts them: a final newline does not start another line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _claim(tool_input: Mapping[str, Any]) -> str:
    return "\n".join(value_text(tool_input[k]) for k in CLAIM_KEYS if k in tool_input)


def _heading(*parts: str) -> str:
    return " ".join(part for part in parts if part)


def _generic(tool_name: str, tool_input: Mapping[str, Any], heading: str) -> ToolRequest:
    return ToolRequest(
        tool_name,
        heading,
        claim=_claim(tool_input),
        kind="input",
        body=input_lines(tool_input, CLAIM_KEYS),
    )


def _string_body(
    tool_name: str,
    tool_input: Mapping[str, Any],
    heading: str,
    key: str,
    kind: BodyKind,
    consumed: tuple[str, ...] = (),
) -> ToolRequest:
    """The common shape: one key is the body, the rest is listed beneath it."""
    value = tool_input.get(key)
    if not isinstance(value, str):
        return _generic(tool_name, tool_input, heading)
    return ToolRequest(
        tool_name,
        heading,
        claim=_claim(tool_input),
        kind=kind,
        body=value,
        extra=input_lines(tool_input, (key, *consumed, *CLAIM_KEYS)),
    )


Describer = Callable[[str, Mapping[str, Any]], ToolRequest]
#: One describer per ``ToolInfo.approval`` kind (ui/toolinfo.py says which tool has which).
_DESCRIBERS: dict[ApprovalKind, Describer] = {}


def _describes(kind: ApprovalKind) -> Callable[[Describer], Describer]:
    def register(fn: Describer) -> Describer:
        _DESCRIBERS[kind] = fn
        return fn

    return register


def _text(tool_input: Mapping[str, Any], key: str) -> str:
    value = tool_input.get(key)
    return value if isinstance(value, str) else ""


@_describes("bash")
def _bash(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    where = " in the background" if tool_input.get("run_in_background") is True else ""
    return _string_body(name, tool_input, f"Run a shell command{where}", "command", "command")


@_describes("python")
def _python(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Run Python in your kernel", "code", "code")


@_describes("write")
def _write(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    content = tool_input.get("content")
    size = ""
    if isinstance(content, str):
        size = f"({counted(line_count(content), 'line')})" if content else "(empty file)"
    heading = _heading("Write", _text(tool_input, "file_path"), size)
    return _string_body(name, tool_input, heading, "content", "content", ("file_path",))


@_describes("edit")
def _edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    every = "(every occurrence)" if tool_input.get("replace_all") is True else ""
    heading = _heading("Edit", _text(tool_input, "file_path"), every)
    diff = tool_diff(name, tool_input, context=None)
    if diff is None:
        return _generic(name, tool_input, heading)
    # replace_all is in the title when true; anything but a bool is listed as it came.
    flag = ("replace_all",) if isinstance(tool_input.get("replace_all"), bool) else ()
    consumed = ("file_path", "old_string", "new_string", *flag, *CLAIM_KEYS)
    return ToolRequest(
        name,
        heading,
        claim=_claim(tool_input),
        kind="diff",
        body=diff,
        extra=input_lines(tool_input, consumed),
    )


@_describes("multi_edit")
def _multi_edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    path = _text(tool_input, "file_path")
    edits = tool_input.get("edits")
    valid = isinstance(edits, list) and all(
        isinstance(e, Mapping)
        and isinstance(e.get("old_string"), str)
        and isinstance(e.get("new_string"), str)
        for e in edits
    )
    if not isinstance(edits, list) or not valid:
        return _generic(name, tool_input, _heading("Edit", path))
    parts: list[str] = []
    for n, edit in enumerate(edits, start=1):
        every = " (every occurrence)" if edit.get("replace_all") is True else ""
        parts.append(f"Change {n} of {len(edits)}{every}:")
        parts.append(tool_diff("Edit", {**edit, "file_path": path}, context=None) or "")
        flag = ("replace_all",) if isinstance(edit.get("replace_all"), bool) else ()
        rest = input_lines(edit, ("old_string", "new_string", *flag))
        if rest:
            parts.append(rest)
    return ToolRequest(
        name,
        _heading("Edit", path, f"({counted(len(edits), 'change')})"),
        claim=_claim(tool_input),
        kind="diff",
        body="\n".join(parts),
        extra=input_lines(tool_input, ("file_path", "edits", *CLAIM_KEYS)),
    )


@_describes("notebook_edit")
def _notebook_edit(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    heading = _heading("Edit notebook", _text(tool_input, "notebook_path"))
    return _string_body(name, tool_input, heading, "new_source", "code", ("notebook_path",))


@_describes("notebook_edits")
def _notebook_edits(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """One review card per edit_notebook batch: every touched cell's diff, whole."""
    review = review_text(tool_input)
    if review is None:
        return _generic(name, tool_input, "Edit the notebook")
    heading, body = review
    return ToolRequest(name, heading, kind="diff", body=body)


#: A cell's first line in its card's title is clipped here (the body holds it whole).
_FIRST_LINE_CHARS = 60


@_describes("run_cell")
def _run_cell(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """One cell run_cells runs: named as the user sees it, by its place and its first line
    ("Run cell 4: `df = load(...)`"); the source whole below."""
    position = tool_input.get("position")
    where = f"cell {position}" if type(position) is int else "a cell"
    source = _text(tool_input, "code")
    lines = [line for line in source.strip().split("\n") if line.strip()]
    first = lines[0].strip() if lines else ""
    if len(first) > _FIRST_LINE_CHARS or len(lines) > 1:
        first = first[:_FIRST_LINE_CHARS].rstrip() + "…"
    heading = f"Run {where}" + (f": `{first}`" if first else "")
    return _string_body(name, tool_input, heading, "code", "cell", ("position", "cell"))


@_describes("agent")
def _agent(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _string_body(name, tool_input, "Start a subagent", "prompt", "prompt")


@_describes("titled")
def _titled(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """A tool whose title may name one input value; all of its input is listed below."""
    info = tool_info(name)
    named = _text(tool_input, info.named) if info.named else ""
    return _generic(name, tool_input, _heading(info.action, named, info.after))


@_describes("generic")
def _any(name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    return _generic(name, tool_input, f"Use {tool_label(name)}")


def describe_request(tool_name: str, tool_input: Mapping[str, Any]) -> ToolRequest:
    """What the tool call will do, in full (pure)."""
    return _DESCRIBERS[tool_info(tool_name).approval](tool_name, tool_input)


def describe_tool_request(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, str]:
    """``(title, detail)`` in plain text, hidden characters as markers: what the tool is about
    to do. The title is ours (never the model's description); the detail is complete."""
    request = describe_request(tool_name, tool_input)
    return request.title, request.detail
