"""The python tool in a real ipykernel, run from an async cell as during a ``%%claude`` turn.

Checks what a stand-in shell cannot: nothing Claude's code prints, displays or plots lands in the
user's cell (the inline backend's post-execute flush included), and the kernel's ■ (SIGINT to
the kernel's process group) interrupts Claude's busy code, cancels the running cell through
ipykernel's own handler, and leaves the kernel usable.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.kernel import KernelDriver

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(120)]

SETUP = """
from byre_jupyter.tools import PythonRunner, kernel_tools
_runner = PythonRunner(get_ipython())
_tools = {t.name: t for t in kernel_tools(get_ipython(), policy=lambda: "allow", runner=_runner)}
"""


@pytest.fixture
def kernel(kernels: Callable[..., Any], tmp_path: Path) -> KernelDriver:
    """A kernel with its own environment (no CLI, no scripted API) and the python tool."""
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)  # the kernel's default: the inline backend
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    driver: KernelDriver = kernels(env, load=False)
    setup = driver.run(SETUP)
    assert setup.reply and setup.reply["status"] == "ok", setup.outputs
    return driver


def test_claudes_output_stays_out_of_the_users_cell(kernel: KernelDriver) -> None:
    code = (
        "print('claude-print')\n"
        "from IPython.display import display, Markdown\n"
        "display(Markdown('claude-display'))\n"
        "import matplotlib.pyplot as plt\n"
        "plt.plot([1, 2, 3])\n"
        "6 * 7"
    )
    cell = kernel.run(
        f"_r = await _tools['python'].function({{'code': {code!r}}})\n"
        "print('TOOL', _r.is_error, [c['type'] for c in _r.content])\n"
        "print(_r.content[0]['text'])"
    )
    assert cell.reply and cell.reply["status"] == "ok", cell.outputs
    text = cell.texts()
    assert "TOOL False ['text', 'image']" in text
    assert "[stdout]\nclaude-print" in text and "[result]\n42" in text
    assert "claude-display" in text  # only inside the printed tool result
    assert cell.mimetypes() == set()  # no display_data: no Markdown, no inline figure
    streams = [o["text"] for o in cell.outputs if o["output_type"] == "stream"]
    assert not any(s.startswith("claude-print") for s in streams)


def test_the_kernel_interrupt_stops_claudes_code_and_the_cell(
    kernel: KernelDriver, tmp_path: Path
) -> None:
    flag = tmp_path / "started"
    code = f"open({str(flag)!r}, 'w').close()\nwhile True:\n    pass"
    cell = kernel.submit(
        f"_r = await _tools['python'].function({{'code': {code!r}}})\n"
        "print('TOOL', _r.is_error, _r.content[0]['text'].splitlines()[-1])\n"
        "import asyncio\nawait asyncio.sleep(30)\nprint('not cancelled')"
    )
    kernel.wait(flag.exists, timeout=60)
    kernel.interrupt()
    kernel.wait(lambda: cell.idle and cell.reply is not None, timeout=60)

    text = cell.texts()
    assert "TOOL True KeyboardInterrupt" in text  # Claude's code got the KeyboardInterrupt
    assert "not cancelled" not in text  # and ipykernel's handler cancelled the cell
    assert cell.reply is not None and cell.reply["status"] == "error"

    after = kernel.run("print('alive', await _tools['python'].function({'code': '1 + 1'}))")
    assert "alive" in after.texts() and "[result]\\n2" in after.texts()
