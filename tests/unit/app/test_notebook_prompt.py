"""The system prompt sends Claude to the notebook tool for cells, not to Read on the .ipynb."""

from __future__ import annotations

from byre_jupyter.app.context import system_prompt
from byre_jupyter.tools import kernel_tools


def test_the_prompt_names_the_notebook_tool_instead_of_reading_the_file() -> None:
    prompt = system_prompt("/work/analysis.ipynb")
    assert "mcp__byre__notebook" in prompt
    assert "not Read on the .ipynb" in prompt


def test_the_tool_the_prompt_names_exists() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    names = {tool.name for tool in kernel_tools(InteractiveShell.instance())}
    assert "notebook" in names


def test_the_prompt_sends_cell_changes_to_the_edit_tool() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    prompt = system_prompt("/work/analysis.ipynb")
    assert "mcp__byre__edit_notebook" in prompt
    assert "Never use Read, Write, Edit or NotebookEdit on the open .ipynb" in prompt
    names = {tool.name for tool in kernel_tools(InteractiveShell.instance())}
    assert "edit_notebook" in names


def test_the_prompt_names_run_cells_and_the_tool_exists() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    assert "mcp__byre__run_cells" in system_prompt("/work/analysis.ipynb")
    assert "run_cells" in {tool.name for tool in kernel_tools(InteractiveShell.instance())}
