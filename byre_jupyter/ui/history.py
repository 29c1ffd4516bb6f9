"""``%claude history``: a session's turns drawn as a tree, as HTML and as plain text.

A straight run of turns (each the only follower of the one before) is a list at one depth; only
where a turn has several followers (a cell run again: README, "Re-running a cell branches") does
the drawing branch. The HTML (what JupyterLab, Notebook 7 and VS Code show) is nested lists whose
lines wrap inside their own branch, so the tree stays a tree at any width; the text/plain
fallback (a terminal, a log) draws the same shape with box characters.

Pure: the application maps its conversation tree to :class:`HistoryEntry` rows. Every string
in a row may come from a cell's source and is escaped here, at the leaf.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from byre_jupyter.session.accounting import format_cost
from byre_jupyter.ui.style import ACCENT

__all__ = ["HistoryEntry", "history_bundle"]


@dataclass(frozen=True)
class HistoryEntry:
    """One turn as the history shows it."""

    number: int
    #: The number of the turn it followed (None: the start of the conversation).
    parent: int | None
    #: ``[5]``: the cell's execution count as Jupyter shows it.
    label: str
    #: The cell id's first characters, or None for a turn run outside a cell.
    cell: str | None
    cost_usd: float | None
    prompt: str
    #: On the branch the session continues from.
    current_branch: bool
    #: "current", "running", "interrupted", "stale".
    flags: tuple[str, ...] = ()


#: The prompt's first characters on its line: the cell itself holds the rest.
PROMPT_CHARS = 48


def history_bundle(name: str, root: str, entries: Sequence[HistoryEntry]) -> dict[str, str]:
    """The mimebundle of the tree: ``text/html`` and a ``text/plain`` fallback. ``root`` is the
    first line ("(start)", or the conversation a ``%claude resume`` continued)."""
    followers: dict[int | None, list[HistoryEntry]] = {}
    for entry in entries:
        followers.setdefault(entry.parent, []).append(entry)
    head = f"session {name!r}: {len(entries)} turn(s); ● = current branch, ○ = an older branch"
    return {
        "text/plain": "\n".join([head, root, *_text_lines(followers, None, "", "")]),
        "text/html": _html(head, root, followers),
    }


def _prompt(entry: HistoryEntry) -> str:
    prompt = " ".join(entry.prompt.split())
    return prompt if len(prompt) <= PROMPT_CHARS else prompt[: PROMPT_CHARS - 1] + "…"


def _cost(entry: HistoryEntry) -> str:
    return format_cost(entry.cost_usd)


def _text_line(entry: HistoryEntry) -> str:
    mark = "●" if entry.current_branch else "○"
    where = f"cell {entry.cell}" if entry.cell else "no cell"
    flags = f"  ({', '.join(entry.flags)})" if entry.flags else ""
    return f"{mark} #{entry.number} {entry.label} {where}  {_cost(entry)}  {_prompt(entry)}{flags}"


def _run(
    followers: dict[int | None, list[HistoryEntry]], first: HistoryEntry
) -> tuple[list[HistoryEntry], list[HistoryEntry]]:
    """The straight run that starts at ``first``, and the branches that end it."""
    run = [first]
    after = followers.get(first.number, [])
    while len(after) == 1:
        run.append(after[0])
        after = followers.get(after[0].number, [])
    return run, after


def _text_lines(
    followers: dict[int | None, list[HistoryEntry]],
    parent: int | None,
    first_prefix: str,
    rest_prefix: str,
) -> list[str]:
    starts = followers.get(parent, [])
    if len(starts) == 1:  # a straight run goes on at the same depth
        run, branches = _run(followers, starts[0])
        lines = [
            (first_prefix if i == 0 else rest_prefix) + _text_line(e) for i, e in enumerate(run)
        ]
        return lines + _branch_lines(followers, branches, rest_prefix)
    return _branch_lines(followers, starts, rest_prefix)


def _branch_lines(
    followers: dict[int | None, list[HistoryEntry]],
    branches: Sequence[HistoryEntry],
    prefix: str,
) -> list[str]:
    lines: list[str] = []
    for i, start in enumerate(branches):
        last = i == len(branches) - 1
        run, more = _run(followers, start)
        first, rest = prefix + ("└─ " if last else "├─ "), prefix + ("   " if last else "│  ")
        lines += [(first if j == 0 else rest) + _text_line(e) for j, e in enumerate(run)]
        lines += _branch_lines(followers, more, rest)
    return lines


# -- HTML ---------------------------------------------------------------------------------------

_LIST = "list-style:none;margin:0;padding:0"
#: A branch: indented, with a rule down its left so its lines read as one run however they
#: wrap; apart from its sibling branches, solid on the current branch and dashed on older ones.
_BRANCH = "list-style:none;margin:0.4em 0 0.4em 0.35em;padding:0 0 0 0.9em;border-left:"
_CURRENT_RULE = f"2px solid {ACCENT}"
_OLDER_RULE = "1px dashed #999"
_ITEM = "margin:0.1em 0;overflow-wrap:anywhere"
_FAINT = "opacity:0.65;font-size:0.9em"


def _html_item(entry: HistoryEntry) -> str:
    mark = "●" if entry.current_branch else "○"
    where = f"cell {entry.cell}" if entry.cell else "no cell"
    flags = "".join(
        f' <span style="{_FAINT};border:1px solid currentColor;border-radius:0.6em;'
        f'padding:0 0.4em">{html.escape(flag)}</span>'
        for flag in entry.flags
    )
    weight = "font-weight:600;" if "current" in entry.flags else ""
    return (
        f'<li style="{_ITEM}"><span style="color:{ACCENT}">{mark}</span> '
        f'<span style="{weight}">#{entry.number} {html.escape(entry.label)}</span> '
        f"{html.escape(_prompt(entry))}{flags} "
        f'<span style="{_FAINT}">{html.escape(where)} · {html.escape(_cost(entry))}</span></li>'
    )


def _html_list(followers: dict[int | None, list[HistoryEntry]], starts: list[HistoryEntry]) -> str:
    """The items of one straight run, then its branches, each a nested list of its own."""
    if len(starts) != 1:
        return "".join(
            f'<li style="{_ITEM}"><ul style="{_BRANCH}'
            f'{_CURRENT_RULE if s.current_branch else _OLDER_RULE}">'
            f"{_html_list(followers, [s])}</ul></li>"
            for s in starts
        )
    run, branches = _run(followers, starts[0])
    return "".join(_html_item(e) for e in run) + (
        _html_list(followers, branches) if branches else ""
    )


def _html(head: str, root: str, followers: dict[int | None, list[HistoryEntry]]) -> str:
    return (
        '<div class="byre-history" style="max-width:100%;line-height:1.45">'
        f'<div style="{_FAINT}">{html.escape(head)}</div>'
        f'<div style="{_FAINT}">{html.escape(root)}</div>'
        f'<ul style="{_LIST}">{_html_list(followers, followers.get(None, []))}</ul></div>'
    )
