"""The demo notebook, run headless as ``./dev demo --headless`` runs it (nbclient, the scripted
demo model, the real CLI), records every exchange and carries none of the author's paths.

The notebook runs once for the module (it is the slowest kernel test); each test reads that
run: every feature's exchange whole in the saved output, nothing left unfinished."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import kernel_env as make_kernel_env

from byre_jupyter.scripted import ScriptedAPI
from byre_jupyter.scripted.demo import demo_script

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

DEMO = Path(__file__).resolve().parents[3] / "notebooks"


@dataclass(frozen=True)
class DemoRun:
    nb: nbformat.NotebookNode
    env: dict[str, str]

    def record(self, prompt: str) -> str:
        """The saved Markdown record of the one code cell whose source holds ``prompt``."""
        (cell,) = [c for c in self.nb.cells if c.cell_type == "code" and prompt in c.source]
        texts = [o.get("data", {}).get("text/markdown", "") for o in cell.outputs]
        # Markdown escapes (``edit\\_notebook``) left out: the test reads the words.
        return "\n".join(t if isinstance(t, str) else "".join(t) for t in texts).replace("\\", "")


@pytest.fixture(scope="module")
def demo(cli_path: str, tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    tmp_path = tmp_path_factory.mktemp("demo")
    workdir = tmp_path / "notebooks"
    shutil.copytree(DEMO, workdir, ignore=shutil.ignore_patterns("out"))
    nb = nbformat.read(workdir / "demo.ipynb", as_version=4)
    with ScriptedAPI(script=demo_script()) as api:
        # As ./dev demo --headless: the notebook's path, as jupyter_server would tell it.
        env = make_kernel_env(
            api.url,
            cli_path,
            tmp_path,
            IS_SANDBOX="1",
            JPY_SESSION_NAME=str(workdir / "demo.ipynb"),
        )
        NotebookClient(nb, timeout=300, kernel_name="python3").execute(env=env, cwd=str(workdir))
    return DemoRun(nb, env)


def test_the_demo_runs_headless_with_a_record_of_every_cell_and_no_home_path(
    demo: DemoRun,
) -> None:
    nb, env = demo.nb, demo.env
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        errors = [o for o in cell.outputs if o["output_type"] == "error"]
        if "raises-exception" in cell.metadata.get("tags", []):
            assert errors, f"the cell meant to fail (for Ask Claude) did not: {cell.source!r}"
            continue
        assert not errors, cell.source
        if cell.source.startswith("%%claude"):
            bundles = [o for o in cell.outputs if "text/html" in o.get("data", {})]
            assert bundles, f"no saved exchange for {cell.source!r}"
    saved = json.dumps(nb.cells)
    home = env["HOME"]
    assert home not in saved and "/.claude/projects" not in saved, "a local path was saved"


def test_the_demo_shows_the_notebook_tools_and_the_fix_ask_claude_asks_for(
    demo: DemoRun,
) -> None:
    # Only the cells that ask for them call the notebook tools (not the CLI's reminders).
    assert "byre.notebook" not in demo.record("Give me a short tour")
    read = demo.record("read the notebook")
    assert "byre.notebook" in read and "I read the notebook" in read, read
    insert = demo.record("add a cell below")
    assert "byre.notebook" in insert and "byre.edit_notebook" in insert, insert
    assert "+squares = [x * x" in insert, insert
    # Headless, nobody reviews the edit: it is denied, its diff kept; the fix reads the
    # notebook, finds the failing cell and proposes the edit of its typo.
    fix = demo.record("ended in an error")
    assert "byre.notebook" in fix and "byre.edit_notebook" in fix, fix
    assert "-print(totl)" in fix and "+print(total)" in fix, fix


def test_the_demo_shows_this_waves_cards_commands_and_compaction(demo: DemoRun) -> None:
    assert "Which chart should the report use?" in demo.record("ask me a question")
    assert "Plan: a small sales report" in demo.record("plan the sales report")
    assert "effort" in demo.record("%%claude -e low").lower()
    assert "compacted" in demo.record("/compact")
    for magic in ("%claude commands", "%claude context", "%claude conversations"):
        (cell,) = [c for c in demo.nb.cells if c.cell_type == "code" and c.source == magic]
        assert cell.outputs, f"{magic} showed nothing"


def test_the_demo_ends_with_every_background_answer_finished(demo: DemoRun) -> None:
    story = demo.record("--bg -s side")
    assert "Running in the background" not in story, story
    assert "Part 6." in story, story
