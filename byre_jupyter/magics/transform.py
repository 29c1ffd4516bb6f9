"""The input transformer that makes ``%%claude`` cells async cells.

A cell starting with ``%%claude`` becomes one line,
``await __import__("byre_jupyter.magics", fromlist=["cell"]).cell(LINE, BODY)``, before IPython's
own cell-magic handling sees it. ipykernel then runs it on its async-cell path, where comm
messages (widget clicks) are still dispatched and ■ arrives as ``CancelledError``
(docs/kernel.md, section 1). ``%%claude?`` is left alone so help still works.
"""

from __future__ import annotations

import re

__all__ = ["transform_claude_cell"]

_PREFIX = "%%claude"
#: ``%claude undo [ARGS]`` alone in its cell: it awaits the review of its batch, so it too
#: becomes an async cell (labextension/src/claudecell.ts knows the same shape).
_UNDO = re.compile(r"%claude[ \t]+undo(?:[ \t][^\n]*)?")


def transform_claude_cell(lines: list[str]) -> list[str]:
    if not lines:
        return lines
    whole = "".join(lines).strip()
    if _UNDO.fullmatch(whole):
        line = whole.split(None, 2)[2] if len(whole.split(None, 2)) > 2 else ""
        return [f'await __import__("byre_jupyter.magics", fromlist=["undo"]).undo({line!r})\n']
    first = lines[0]
    if not first.startswith(_PREFIX):
        return lines
    rest = first[len(_PREFIX) :]
    if rest and not rest[0].isspace():  # %%claude? (help) or %%claudesomething (another magic)
        return lines
    line = rest.strip()
    body = "".join(lines[1:])
    return [
        f'await __import__("byre_jupyter.magics", fromlist=["cell"]).cell({line!r}, {body!r})\n'
    ]
