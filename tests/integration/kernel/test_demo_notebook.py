"""The demo notebook, run headless as ``./dev demo --headless`` runs it (nbclient, the scripted
demo model, the real CLI), records every exchange and carries none of the author's paths."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from support.kernel import kernel_env as make_kernel_env

from byre_jupyter.scripted import ScriptedAPI
from byre_jupyter.scripted.demo import demo_script

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

DEMO = Path(__file__).resolve().parents[3] / "notebooks"


def test_the_demo_runs_headless_with_a_record_of_every_cell_and_no_home_path(
    cli_path: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "notebooks"
    shutil.copytree(DEMO, workdir, ignore=shutil.ignore_patterns("out"))
    nb = nbformat.read(workdir / "demo.ipynb", as_version=4)
    with ScriptedAPI(script=demo_script()) as api:
        env = make_kernel_env(api.url, cli_path, tmp_path, IS_SANDBOX="1")
        NotebookClient(nb, timeout=300, kernel_name="python3").execute(env=env, cwd=str(workdir))

    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert not [o for o in cell.outputs if o["output_type"] == "error"], cell.source
        if cell.source.startswith("%%claude"):
            bundles = [o for o in cell.outputs if "text/html" in o.get("data", {})]
            assert bundles, f"no saved exchange for {cell.source!r}"
    saved = json.dumps(nb.cells)
    home = env["HOME"]
    assert home not in saved and "/.claude/projects" not in saved, "a local path was saved"
