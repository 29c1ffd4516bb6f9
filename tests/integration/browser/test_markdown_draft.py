"""The draft without widgets (``Claude.live = False``) runs no script and loads nothing, in
JupyterLab, with the hostile corpus as answer, thinking, a Bash command and its output.

JupyterLab renders a trusted ``text/markdown`` output with marked and does not sanitize it; the
draft used to be one, and raw HTML the escaper misjudged ran (``<img onerror>``). Proof of
script is a ``window`` side effect (``window.__pwned``, set by every ``script-*`` corpus item
of tests/support/hostile_markdown.py); proof of loading, the counting server. A sentinel text
at the end of the answer proves the page did render it. Phases: the draft while the turn waits
on its tool, the record at the end, and the saved record reopened without its ``text/html``
(so Lab renders the ``text/markdown`` with marked), trusted.
"""

from __future__ import annotations

import copy
import secrets
from typing import Any

import pytest
from support.hostile_markdown import PWNED, corpus_text

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, Thinking, ToolUse

from . import test_no_remote_loads as loads
from .harness import LabPage
from .test_claude_cells import _last_tool, assert_static_only, open_claude_notebook
from .test_no_remote_loads import Counter, Requests, check_view, open_saved, shoot

pytestmark = pytest.mark.cli

# The counting server, as the loading test has it.
counter = loads.counter

QUERY = "DRAFTTEST: show me everything"


def _pwned(page: Any) -> object:
    return page.evaluate("() => window.__pwned")


def test_the_draft_and_the_record_run_no_script_and_load_nothing(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], counter: Counter
) -> None:
    base = counter.base
    assert PWNED == "window.__pwned=1"
    folder = f"draft-{secrets.token_hex(4)}"
    (lab.server.root_dir / folder).mkdir()
    (lab.server.root_dir / folder / "corpus.md").write_text(corpus_text(base + "/tool"))
    # The tool card's title is the command's first line: the code span an escaper unmade.
    command = f'cat corpus.md # `<img src="{base}/bash-title" onerror="{PWNED}">`'
    api.on(
        "DRAFTTEST",
        Reply(
            Thinking(corpus_text(base + "/thinking"), chunk=64),
            Text(corpus_text(base + "/answer") + "\n\nDRAFTSENTINEL\n", chunk=64),
            ToolUse("Bash", {"command": command, "description": "show the corpus"}),
        ),
    )
    final = corpus_text(base + "/final") + "\n\nDRAFTDONE\n"
    api.on(lambda r: _last_tool(r) == "Bash", Hang(then=Reply(Text(final, chunk=64))))
    requests = Requests(lab.page)
    mark = requests.mark()
    open_claude_notebook(lab, claude_env, "%config Claude.live = False", f"%%claude\n{QUERY}")
    path = lab.path
    assert path is not None
    lab.run_cell(1, timeout=30)

    # 1. the draft, while the turn waits for its tool's result.
    lab.run_cell(2, wait=False)
    api.wait_for_request(lambda r: _last_tool(r) == "Bash", timeout=90)
    lab.wait_for_output_text(2, "DRAFTSENTINEL", timeout=60)
    lab.wait_for_output_text(2, "cat corpus.md", timeout=60)
    assert lab.cell_running(2)
    shoot(lab, 2, "draft")
    check_view(lab, counter, requests, mark, "draft")
    assert _pwned(lab.page) is None
    assert lab.output_locator(2).locator(".byre-draft").count() == 1  # one window, as HTML

    # 2. the record replaces the draft.
    api.release()
    assert lab.wait_for_cell(2, timeout=90)
    lab.wait_for_output_text(2, "DRAFTDONE", timeout=30)
    assert_static_only(lab, 2)
    shoot(lab, 2, "draft-record")
    check_view(lab, counter, requests, mark, "draft record")
    assert _pwned(lab.page) is None

    # 3. the saved record's text/markdown, rendered by Lab's marked, trusted.
    saved = lab.save()
    markdown_only = copy.deepcopy(saved)
    del markdown_only.cells[2].outputs[0].data["text/html"]
    mark = requests.mark()
    counter.reset()
    open_saved(lab, markdown_only, f"{folder}/markdown.ipynb", trusted=True, sign=True)
    lab.wait_for_output_text(2, "DRAFTDONE", timeout=60)
    shoot(lab, 2, "draft-markdown")
    check_view(lab, counter, requests, mark, "markdown trusted")
    assert _pwned(lab.page) is None
    requests.stop()
