"""Which cells run Claude: one test for ``run_cells`` and the ``edit_notebook`` guard.

A cell that runs the ``claude`` magic starts a turn: run by Claude (``run_cells``) it would be a
turn inside a turn, and edited by Claude (``edit_notebook``) its prompt, and the ``{name}``
fields that read the user's variables into it when it runs, would be Claude's words. A test on
the first characters (``startswith("%%claude")``) misses ``%%time`` above it, a blank line or
a comment first, a ``%%capture`` stack, ``get_ipython().run_cell_magic('claude', ...)``, the
``%claude`` line magic and an alias made with ``%alias_magic``. So :func:`runs_claude` asks
IPython how the cell will run: the shell's own input transformation (``transform_cell``, byre's
``%%claude`` transformer included), then the calls in the resulting code: a line or cell magic
whose name is ``claude``, or an alias that leads to it, or byre's own cell entry. A cell magic's
body and a line magic's argument are cells too (``%%time`` runs its body), so they are tested
the same way. A magic called with a name that is not written out is counted as claude: what it
runs cannot be known before it runs. What a cell runs by ``exec`` or ``eval`` of a string built
at run time no reading can see (docs/security.md).

:func:`prompt_fields` lists the ``{name}`` fields of a prompt (``app/attach.py`` fills them in);
:func:`mark_claude_cells` puts both facts on an ``edit_notebook`` review, for the card and for
:func:`asks_always`, which no permission mode or standing allowance answers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, MutableMapping
from typing import Any

__all__ = [
    "EDIT_TOOL",
    "FIELD",
    "asks_always",
    "mark_claude_cells",
    "new_fields",
    "prompt_fields",
    "runs_claude",
]

#: A ``{name}`` field of a prompt (dotted names allowed); ``{{`` and ``}}`` are literal braces.
FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")
_MAGIC = "claude"
#: The tool name a review of ``edit_notebook`` is asked under (approvals, the card table).
EDIT_TOOL = "mcp__byre__edit_notebook"
#: The module byre's ``%%claude`` transformer calls (magics/transform.py).
_ENTRY = "byre_jupyter.magics"
#: Magics whose argument names an object to show help about, and is not run (``%%claude?``).
_HELP = frozenset({"pinfo", "pinfo2", "pdoc", "pdef", "psource", "pfile", "psearch"})
#: A cell nested in magics this deep is refused unread (``%%time`` of ``%%time`` of ...).
_MAX_DEPTH = 8


def prompt_fields(text: str) -> list[str]:
    """The ``{name}`` fields of ``text``, in order, each once (not ``{{literal}}``)."""
    names = [m.group(1) for m in FIELD.finditer(text) if m.group(1)]
    return list(dict.fromkeys(names))


def new_fields(before: str, after: str) -> list[str]:
    """The fields ``after`` has that ``before`` had not."""
    old = set(prompt_fields(before))
    return [name for name in prompt_fields(after) if name not in old]


def runs_claude(source: str, shell: Any = None) -> bool:
    """Whether running ``source`` as a cell in ``shell`` would run the ``claude`` magic, however
    it is written (see the module docstring). Without a shell, IPython's default transforms."""
    return _runs_claude(source, shell, 0)


def _transform(source: str, shell: Any) -> str | None:
    try:
        if shell is not None:
            return str(shell.transform_cell(source))
        from IPython.core.inputtransformer2 import TransformerManager

        return str(TransformerManager().transform_cell(source))  # type: ignore[no-untyped-call]
    except Exception:  # an input transformer of the user's failed: judged by the text below
        return None


def _runs_claude(source: str, shell: Any, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return True
    code = _transform(source, shell)
    tree = None
    if code is not None:
        try:
            tree = ast.parse(code)
        except SyntaxError:  # IPython would not run it either; the text decides below
            tree = None
    if tree is None:
        # Unreadable: any line that starts with the magic counts.
        return any(
            line.lstrip().lstrip("%").startswith(_MAGIC) and line.lstrip().startswith("%")
            for line in source.splitlines()
        )
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _calls_claude(node, shell, depth):
            return True
    return False


def _calls_claude(call: ast.Call, shell: Any, depth: int) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    # byre's transformer: __import__("byre_jupyter.magics", ...).cell(line, body)
    if func.attr == "cell" and isinstance(func.value, ast.Call):
        inner = func.value
        if isinstance(inner.func, ast.Name) and inner.func.id == "__import__":
            first = inner.args[0] if inner.args else None
            if not isinstance(first, ast.Constant) or str(first.value).startswith(_ENTRY):
                return True
    kind = {"run_line_magic": "line", "run_cell_magic": "cell", "magic": "line"}.get(func.attr)
    if kind is None:
        return False
    args = call.args
    if not args or not isinstance(args[0], ast.Constant) or not isinstance(args[0].value, str):
        return True  # a magic whose name is computed: it may be claude
    name = args[0].value.lstrip("%").strip()
    if func.attr == "magic":  # get_ipython().magic("claude new"): the name is the first word
        name = name.split(" ", 1)[0]
    if _is_claude(shell, kind, name):
        return True
    if name == "alias_magic":  # %alias_magic ask claude, then %ask in the same cell
        line = _string(args[1]) if len(args) > 1 else None
        return line is None or _MAGIC in line.replace("%", " ").split()
    if name in _HELP:
        return False
    # The magic's cell body (%%time, %%capture) or its line (%time %claude x) runs as a cell.
    for arg in args[1:]:
        text = _string(arg)
        if text is None or (text.strip() and _runs_claude(text, shell, depth + 1)):
            return True
    return False


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_claude(shell: Any, kind: str, name: str) -> bool:
    """Whether magic ``name`` of ``kind`` is byre's claude magic: by name, through an alias
    (``%alias_magic``, followed to its end), or registered under another name."""
    from IPython.core.magic import MagicAlias

    table = getattr(getattr(shell, "magics_manager", None), "magics", None)
    seen: set[tuple[str, str]] = set()
    while (kind, name) not in seen:
        seen.add((kind, name))
        if name == _MAGIC:
            return True
        if not isinstance(table, Mapping):
            return False
        magic = table.get(kind, {}).get(name)
        if isinstance(magic, MagicAlias):
            kind, name = str(magic.magic_kind), str(magic.magic_name).lstrip("%")
            continue
        own = table.get(kind, {}).get(_MAGIC)
        return magic is not None and own is not None and magic == own
    return False


def mark_claude_cells(review: Mapping[str, Any], shell: Any = None) -> Mapping[str, Any]:
    """An ``edit_notebook`` review (``notebook_edit.review_input``) with each cell that runs
    Claude, before or after the edit, marked ``claude: True`` and its new fields listed
    (``fields``); the card shows both, and :func:`asks_always` reads the mark."""
    cells = review.get("cells")
    if not isinstance(cells, list):
        return review
    for cell in cells:
        if not isinstance(cell, MutableMapping):
            continue
        before, after = str(cell.get("before", "")), str(cell.get("after", ""))
        if cell.get("cell_type") != "code":
            continue
        if runs_claude(before, shell) or runs_claude(after, shell):
            cell["claude"] = True
            cell["fields"] = new_fields(before, after)
    return review


def asks_always(tool_name: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether a kernel tool's request is asked at every call, whatever the permission mode
    or the standing allowances: an ``edit_notebook`` batch that touches a ``%%claude`` cell."""
    if tool_name != EDIT_TOOL:
        return False
    cells = tool_input.get("cells")
    return isinstance(cells, list) and any(
        isinstance(cell, Mapping) and cell.get("claude") is True for cell in cells
    )
