"""What the frontend bridge does to the notebook on screen without a kernel call, in JupyterLab
and Notebook 7: a ``%%claude`` cell is highlighted as Markdown (labextension/src/highlight.ts)
while a Python cell stays Python, also after the first line is typed; and the demo notebook
opens clean (not dirty). One page load per frontend serves every check."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import nbformat
import pytest

from .conftest import BOTH_FRONTENDS
from .harness import LabPage, new_notebook, wait_until

pytestmark = pytest.mark.cli

DEMO = Path(__file__).parents[3] / "notebooks" / "demo.ipynb"
PROMPT = "%%claude -s tree\nsummarise **bold** with from in import df"

#: The cell's editor as tokens: its language (CodeMirror 6's ``data-language``), the words that
#: sit in a highlighted span of their own, and whether any span is bold (Markdown's **strong**).
TOKENS_JS = """
const cell = B.cell(path, a0);
const content = cell.node.querySelector('.cm-content');
if (!content) return null;
const spans = [...content.querySelectorAll('.cm-line span')];
return {
  mime: cell.model.mimeType,
  language: content.getAttribute('data-language'),
  words: spans.map(s => s.textContent.trim()).filter(Boolean),
  bold: spans.filter(s => Number(getComputedStyle(s).fontWeight) >= 600)
             .map(s => s.textContent.trim()),
};
"""


def tokens(lab: LabPage, i: int, language: str) -> dict[str, Any]:
    """Cell ``i``'s tokens once its editor has loaded ``language``."""
    got: dict[str, Any] = {}

    def loaded() -> bool:
        got.clear()
        got.update(lab._js(TOKENS_JS, i, what=f"cell {i}'s editor") or {})
        return got.get("language") == language

    wait_until(
        loaded, timeout=30, what=f"cell {i} highlighted as {language}", detail=lambda: str(got)
    )
    return got


@BOTH_FRONTENDS
def test_claude_cells_are_markdown_and_the_demo_opens_clean(lab: LabPage) -> None:
    assert lab.has_plugin("byre-jupyter-bridge:highlight")
    folder = f"highlight-{secrets.token_hex(4)}"
    lab.open_notebook(
        new_notebook(PROMPT, "x = 1 if True else 2", "print('typed next')"),
        path=f"{folder}/cells.ipynb",
    )
    claude = tokens(lab, 0, "markdown")
    assert claude["mime"] == "text/x-ipythongfm", claude
    # Python would give "with", "from", "in", "import" keyword spans of their own.
    assert not {"with", "from", "in", "import"} & set(claude["words"]), claude
    assert any("bold" in word for word in claude["bold"]), claude
    python = tokens(lab, 1, "python")
    assert "if" in python["words"] and "else" in python["words"], python
    lab.screenshot(f"highlight-{lab.frontend}.png")

    # Typing %%claude into a Python cell makes it Markdown; taking it out makes it Python again.
    lab.set_source(2, "%%claude\nwith from in")
    tokens(lab, 2, "markdown")
    lab.set_source(2, "with open('f') as f: pass")
    assert "with" in tokens(lab, 2, "python")["words"]

    # The demo saves what the frontend writes on open (its kernel's language_info).
    demo = nbformat.read(DEMO, as_version=4)
    path = lab.open_notebook(demo, path=f"{folder}/demo.ipynb")
    # The notebook's own kernel-info handler was connected first, so it has run by then.
    dirty = lab._js(
        "return B.kernel(path).info.then(() => B.panel(path).context.model.dirty);",
        what="the demo's dirty state",
    )
    assert dirty is False, f"{path} opened dirty in {lab.frontend}"
