"""Which cells run Claude (tools/claude_cells.py): the one test run_cells refuses a cell by and
the edit_notebook guard asks by, through IPython's own transforms, magics and aliases."""

from __future__ import annotations

from typing import Any

import pytest
from support.shells import shell as loaded  # the shell with byre_jupyter loaded

from byre_jupyter.tools.claude_cells import (
    asks_always,
    mark_claude_cells,
    new_fields,
    prompt_fields,
    runs_claude,
)

__all__ = ["loaded"]

CLAUDE = [
    "%%claude\nhi",
    "%%claude -n other\nhi",
    "\n\n%%claude\nhi",  # leading blank lines
    "%%time\n%%claude\nhi",
    "%%capture out\n%%time\n%%claude\nhi",
    "%%capture\n\n%%claude\nhi",
    "get_ipython().run_cell_magic('claude', '', 'hi')",
    'ip = get_ipython()\nip.run_cell_magic("claude", "", "hi")',
    "get_ipython().run_line_magic('claude', 'new')",
    "%claude new",
    "x = 1\n%claude permissions",
    "%time %claude new",
    "get_ipython().run_line_magic('time', '%claude new')",
    "name = 'claude'\nget_ipython().run_line_magic(name, 'new')",  # a computed name
    "%alias_magic ask claude\n%ask new",
    "get_ipython().magic('claude new')",
    'await __import__("byre_jupyter.magics", fromlist=["cell"]).cell("", "hi")',
    # top-level await elsewhere in the cell: still read as code, not as text
    "await asyncio.sleep(0)\nget_ipython().run_cell_magic('claude', '', 'hi')",
]
NOT_CLAUDE = [
    "x = 1",
    "%%time\nx = 1",
    "%time x = 1",
    "# %%claude in a comment\nx = 1",
    "s = '%%claude'\nprint(s)",
    "%%claude?",
    "%claudette",
    "print('get_ipython().run_cell_magic(\"claude\")')",
    "%%bash\necho claude",
    "",
]


@pytest.mark.parametrize("source", CLAUDE)
def test_every_spelling_of_the_magic_runs_claude(loaded: Any, source: str) -> None:
    assert runs_claude(source, loaded)


@pytest.mark.parametrize("source", NOT_CLAUDE)
def test_other_cells_do_not(loaded: Any, source: str) -> None:
    assert not runs_claude(source, loaded)


def test_an_alias_of_the_magic_runs_claude(loaded: Any) -> None:
    assert not runs_claude("%%ask\nhi", loaded) and not runs_claude("%ask new", loaded)
    loaded.run_line_magic("alias_magic", "ask claude")
    loaded.run_line_magic("alias_magic", "ask2 ask")  # an alias of the alias
    for source in ("%%ask\nhi", "%ask new", "%%time\n%%ask2\nhi", "%ask2 new"):
        assert runs_claude(source, loaded), source
    assert not runs_claude("%%time\nx = 1", loaded)


def test_without_a_shell_ipythons_default_transforms_decide() -> None:
    assert runs_claude("%%time\n%%claude\nhi") and not runs_claude("%%time\nx = 1")


def test_fields() -> None:
    assert prompt_fields("use {df} and {os.environ}, {{literal}}, {df} again") == [
        "df",
        "os.environ",
    ]
    assert new_fields("about {df}", "about {df} {os.environ} {obj.prop}") == [
        "os.environ",
        "obj.prop",
    ]


def test_a_review_marks_the_cells_that_run_claude(loaded: Any) -> None:
    def cell(before: str, after: str, cell_type: str = "code") -> dict[str, Any]:
        return {"cell": "c", "cell_type": cell_type, "action": "replace",
                "before": before, "after": after, "below": None}  # fmt: skip

    review = mark_claude_cells(
        {
            "cells": [
                cell("x = 1", "x = 2"),
                cell("%%claude\nplot {df}", "%%claude\nplot {df} {os.environ}"),
                cell("x = 1", "%%time\n%%claude\n{secret}"),  # turned into one
                cell("%%claude\nhi", "", "markdown"),
            ]
        },
        loaded,
    )
    marks = [(c.get("claude"), c.get("fields")) for c in review["cells"]]
    assert marks == [(None, None), (True, ["os.environ"]), (True, ["secret"]), (None, None)]
    assert asks_always("mcp__byre__edit_notebook", review)
    assert not asks_always("mcp__byre__edit_notebook", {"cells": [review["cells"][0]]})
    assert not asks_always("mcp__byre__python", review)
