"""Claude knows it is in a notebook: a system prompt addition and a guard.

Without it, the CLI starts with nothing about where it runs (only the tool descriptions say it),
so a model may reach for Bash ``python -c`` instead of the kernel's ``python`` tool, or rewrite
the ``.ipynb`` that is open, unsaved, in the user's editor (JupyterLab then reports a conflict
and the user's edits or Claude's are lost). The prompt says where it is (``--append-system-
prompt``, ``Claude.notebook_prompt``); a PreToolUse hook denies Write/Edit/MultiEdit/NotebookEdit
of the open notebook with a reason the model reads (``Claude.guard_notebook``).

The notebook's path: VS Code sets ``__vsc_ipynb_file__`` in the namespace, jupyter_server sets
``JPY_SESSION_NAME`` in the kernel's environment (a path relative to the server's root, or
absolute in recent versions).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..session import HookCallback
from ..session.index import NOTEBOOK_ENV
from ..tools import KERNEL_TOOLS, KernelTool
from ..tools.registry import prompt_lines

__all__ = ["GUARDED_TOOLS", "guard_hook", "notebook_path", "system_prompt"]

GUARDED_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})

PROMPT = """\
You are running inside a Jupyter kernel, called from a %%claude cell of a notebook{where}. \
The user reads your answer in the cell's output.
- The user's live Python session is this kernel, and the mcp__byre__ tools work in it. Prefer \
them over Bash `python -c`, which starts a separate interpreter that has none of the user's \
state.
{tools}
- Never use Read, Write, Edit or NotebookEdit on the open .ipynb file: it is open in the \
user's editor and unsaved changes there would conflict. Use the notebook tools instead, or run \
code with mcp__byre__python."""

DENY_REASON = (
    "byre_jupyter: {path} is the notebook open in the user's editor; writing it would conflict "
    "with their unsaved changes. Change its cells with mcp__byre__edit_notebook (the user "
    "reviews the edit), or run the code in the kernel with mcp__byre__python."
)


def notebook_path(user_ns: Mapping[str, Any], cwd: str) -> str | None:
    """The open notebook's absolute path, when the frontend tells the kernel."""
    # A plain dict lookup of a str: nothing of the user's runs (docs/ trust boundary).
    vsc = user_ns.get("__vsc_ipynb_file__")
    path = vsc if type(vsc) is str and vsc else os.environ.get(NOTEBOOK_ENV)
    if not path:
        return None
    if os.path.isabs(path):
        return os.path.normpath(path)
    # Relative to the server's root, which we do not know; the kernel usually starts in the
    # notebook's folder, so try the path and then its file name there.
    for candidate in (os.path.join(cwd, path), os.path.join(cwd, os.path.basename(path))):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    return os.path.normpath(os.path.join(cwd, path))


def system_prompt(path: str | None, tools: Sequence[KernelTool] = KERNEL_TOOLS) -> str:
    """The prompt for the notebook at ``path``: one line per kernel tool, from its record."""
    where = f" ({path})" if path else ""
    lines = "\n".join(f"- {line}" for line in prompt_lines(tools))
    return PROMPT.format(where=where, tools=lines)


def guard_hook(path: Callable[[], str | None]) -> HookCallback:
    """A PreToolUse hook that denies writes to the notebook ``path()`` names."""

    async def guard(hook_input: Mapping[str, Any]) -> Mapping[str, Any]:
        notebook = path()
        tool = hook_input.get("tool_name")
        args = hook_input.get("tool_input")
        if notebook is None or tool not in GUARDED_TOOLS or not isinstance(args, Mapping):
            return {}
        target = args.get("notebook_path") or args.get("file_path")
        if not isinstance(target, str) or not target:
            return {}
        base = hook_input.get("cwd")
        base = base if isinstance(base, str) and base else os.getcwd()
        if not _same_file(os.path.join(base, target), notebook):
            return {}
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": DENY_REASON.format(path=notebook),
            }
        }

    return guard


def _same_file(a: str, b: str) -> bool:
    # realpath: a symlink or ../ spelling of the notebook is the notebook.
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
