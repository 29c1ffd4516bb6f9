"""The demo notebook opens clean in JupyterLab: its saved metadata already holds what Lab
writes on open (the kernel's ``language_info`` and its kernelspec's names), so opening it
changes nothing (the browser check: tests/integration/browser/test_highlight_browser.py)."""

from __future__ import annotations

from pathlib import Path

import comm
import nbformat
from ipykernel.kernelspec import KERNEL_NAME, get_kernel_dict

DEMO = Path(__file__).parents[2] / "notebooks" / "demo.ipynb"


def kernel_language_info() -> dict[str, object]:
    """``IPythonKernel.language_info``. Importing ipykernel.ipkernel points the ``comm``
    package's factories at ipykernel's kernel comms for the whole process, which would leave
    later widget tests in this process without their stand-in comms; they are put back."""
    saved = comm.create_comm, comm.get_comm_manager
    try:
        from ipykernel.ipkernel import IPythonKernel
    finally:
        comm.create_comm, comm.get_comm_manager = saved
    return dict(IPythonKernel.language_info)


def test_the_demo_saves_what_lab_writes_on_open() -> None:
    notebook = nbformat.read(DEMO, as_version=4)
    nbformat.validate(notebook)
    saved = dict(notebook.metadata.get("language_info", {}))
    kernel = kernel_language_info()
    # The patch version is the kernel's Python's; Lab rewrites it from whichever kernel runs.
    assert {k: v for k, v in saved.items() if k != "version"} == {
        k: v for k, v in kernel.items() if k != "version"
    }
    spec = get_kernel_dict()
    assert notebook.metadata["kernelspec"] == {
        "display_name": spec["display_name"],
        "language": spec["language"],
        "name": KERNEL_NAME,
    }
