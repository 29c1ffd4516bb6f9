"""``mcp__byre__run_cells`` (docs/bridge.md) over a stand-in frontend: a cell's source on screen
runs in the user's namespace, its outputs go to that cell with an execution count and into the
history, Claude gets them back bounded and redacted; every refusal runs nothing."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.frontend import FakePage
from support.toolkit import PNG_MAGIC, Kit, images_of, text_of

from byre_jupyter.bridge import Bridge
from byre_jupyter.tools import registry, spec
from byre_jupyter.tools.bounded import ToolLimits
from byre_jupyter.tools.notebook_run import MAX_CELL_CHARS, MAX_CELLS

from .test_notebook_tool import code

SECRET = "sk-ant-api03-" + "q" * 60


@pytest.fixture
def frontend(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakePage]:
    def make(*cells: dict[str, Any]) -> FakePage:
        front = FakePage(cells=list(cells), path="live.ipynb").connect()
        monkeypatch.setattr(spec, "bridge_of", lambda shell: front.bridge)
        return front

    return make


async def test_a_cell_runs_in_place_and_claude_gets_what_it_showed(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    source = (
        "from IPython.display import display, Markdown\n"
        "here = %pwd\n"  # IPython syntax works as in a cell
        "print('printed', len(here) > 0)\n"
        "display(Markdown('**shown**'))\n"
        "21 * 2"
    )
    front = frontend(code("c1", source, None), code("asking", "%%claude\nrun it"))
    count = kit.shell.execution_count
    result = await kit.call("run_cells", cells=["c1"])
    text = text_of(result)
    assert not result.is_error, text
    assert f"--- cell c1 · [{count}] · ok ---" in text
    assert "printed True" in text and "**shown**" in text and "[result]\n42" in text
    assert front.methods() == ["read", "run.begin", *["run.output"] * 3, "run.end"]
    begin = front.messages[1]["params"]
    assert begin == {"cell": "c1", "execution_count": count}
    outputs = front.outputs("c1")
    assert outputs[0] == {"output_type": "stream", "name": "stdout", "text": "printed True\n"}
    assert outputs[1]["output_type"] == "display_data"
    assert outputs[1]["data"]["text/markdown"] == "**shown**"
    assert outputs[2] == {
        "output_type": "execute_result",
        "data": {"text/plain": "42"},
        "metadata": {},
        "execution_count": count,
    }
    assert front.cell("c1")["execution_count"] == count
    # The history holds it under its count, as a cell the user ran; the next cell comes after.
    assert kit.shell.history_manager.input_hist_raw[count] == source  # type: ignore[union-attr]
    assert "run_line_magic" in kit.shell.user_ns["In"][count]
    assert kit.shell.execution_count == count + 1
    assert kit.shell.user_ns["here"]


async def test_a_cell_run_in_place_is_no_longer_marked_edited(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    ran = kit.shell.run_cell("x = 'as it ran'", store_history=True).execution_count
    frontend(code("c1", "x = 'typed since'", ran), code("asking", "%%claude\nq"))
    before = text_of(await kit.call("notebook", cell="c1"))
    assert "edited since it ran" in before
    await kit.call("run_cells", cells=["c1"])
    after = text_of(await kit.call("notebook", cell="c1"))
    assert "edited since it ran" not in after and "typed since" in after


async def test_an_error_goes_to_the_cell_and_to_claude_and_stops_the_rest(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    front = frontend(code("bad", "print('before')\n1 / 0"), code("next", "ran_next = True"))
    result = await kit.call("run_cells", cells=["bad", "next"])
    text = text_of(result)
    assert result.is_error
    assert "ZeroDivisionError: division by zero" in text and "before" in text
    error = front.outputs("bad")[-1]
    assert error["output_type"] == "error" and error["ename"] == "ZeroDivisionError"
    assert any("1 / 0" in line for line in error["traceback"])
    assert any('File "<cell In[' in line for line in error["traceback"])  # named as a cell
    assert "ran_next" not in kit.shell.user_ns
    assert front.outputs("next") == [] and "--- cell next" not in text


async def test_figures_reach_the_cell_and_claude_as_images(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    front = frontend(code("plot", "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2]);"))
    result = await kit.call("run_cells", cells=["plot"])
    assert [image[:8] for image in images_of(result)] == [PNG_MAGIC]
    shown = [o for o in front.outputs("plot") if o["output_type"] == "display_data"]
    assert base64.b64decode(shown[0]["data"]["image/png"])[:8] == PNG_MAGIC


async def test_credentials_are_redacted_in_the_cell_and_in_the_result(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    front = frontend(code("leak", f"token = {SECRET!r}\nprint(token)\nraise ValueError(token)"))
    result = await kit.call("run_cells", cells=["leak"])
    assert SECRET not in str(result.content) and "[redacted]" in text_of(result)
    assert SECRET not in str(front.messages[1:])


# Every kind of output run_cells puts in a cell passes the same redaction: SVG and
# JSON went in as they were. JSON keeps its structure, its strings redacted.
EVERY_KIND = f"""
from IPython.display import HTML, JSON, SVG, Markdown, display
display(SVG('<svg xmlns="http://www.w3.org/2000/svg"><text>{SECRET}</text></svg>'))
display(JSON({{"nested": {{"note": "key {SECRET}", "n": 3}}, "items": ["{SECRET}"]}}))
display(HTML('<b>{SECRET}</b>'))
display(Markdown('*{SECRET}*'))
"""


async def test_every_output_kind_is_redacted_in_the_cell(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    front = frontend(code("kinds", EVERY_KIND))
    result = await kit.call("run_cells", cells=["kinds"])
    assert not result.is_error, text_of(result)
    outputs = front.outputs("kinds")
    kinds = {mime for out in outputs for mime in out.get("data", {})}
    assert {"image/svg+xml", "application/json", "text/html", "text/markdown"} <= kinds
    assert SECRET not in str(front.messages[1:])
    (shown,) = [out["data"]["application/json"] for out in outputs
                if "application/json" in out.get("data", {})]  # fmt: skip
    assert shown == {"nested": {"note": "key [redacted]", "n": 3}, "items": ["[redacted]"]}


async def test_output_is_bounded_in_the_cell_and_in_the_result(
    make_kit: Callable[..., Kit], frontend: Callable[..., FakePage]
) -> None:
    kit = make_kit(limits=ToolLimits(max_output_chars=5_000))
    front = frontend(
        code("loud", f"for _ in range(3):\n    print('x' * {MAX_CELL_CHARS // 2})"),
        code("quiet", "print('fine')"),
    )
    result = await kit.call("run_cells", cells=["loud", "quiet"])
    assert len(text_of(result)) < 6_000 and "fine" in text_of(result)
    sent = "".join(o.get("text", "") for o in front.outputs("loud"))
    assert len(sent) <= MAX_CELL_CHARS + 200 and "is not shown" in sent


@pytest.mark.parametrize(
    "cells, why",
    [
        (["nope"], "There is no cell with id 'nope'; the ids are: c1, md, asking, other"),
        (["md"], "is a markdown cell"),
        (["asking"], "is the %%claude cell asking you"),
        (["other"], "runs Claude (a %%claude cell)"),
        (["c1"] * (MAX_CELLS + 1), f"at most {MAX_CELLS} per call"),
        ([], "non-empty list of cell ids"),
        ("c1", "non-empty list of cell ids"),
        ([1], "non-empty list of cell ids"),
    ],
)
async def test_refusals_run_nothing(
    make_kit: Callable[..., Kit], frontend: Callable[..., FakePage], cells: Any, why: str
) -> None:
    front = frontend(
        code("c1", "ran = True"),
        {"id": "md", "cell_type": "markdown", "source": "# notes", "metadata": {}},
        code("asking", "%%claude\nrun them"),
        code("other", "%%claude\nan older question"),
    )
    kit = make_kit()
    kit.tools["run_cells"] = registry.kernel_tools(
        kit.shell, policy=lambda: "allow", runner=kit.runner, asking_cell=lambda: "asking"
    )[-1]
    count = kit.shell.execution_count
    result = await kit.call("run_cells", cells=cells)
    assert result.is_error and why in text_of(result), text_of(result)
    assert "ran" not in kit.shell.user_ns and kit.shell.execution_count == count
    assert "run.begin" not in front.methods()


@pytest.mark.parametrize(
    "source",
    [
        "%%time\n%%claude\nq",  # the finding: startswith("%%claude") let this start a turn
        "\n\n%%claude\nq",
        "# first a comment\n%%claude\nq",
        "%%capture out\n%%time\n%%claude\nq",
        "get_ipython().run_cell_magic('claude', '', 'q')",
        "%claude new",
        "ran = True\n%claude permissions",
        "%alias_magic ask claude\n%ask new",
    ],
)
async def test_a_cell_that_runs_claude_however_written_is_refused(
    make_kit: Callable[..., Kit], frontend: Callable[..., FakePage], source: str
) -> None:
    front = frontend(code("sneaky", source), code("asking", "%%claude\nrun it"))
    kit = make_kit()
    count = kit.shell.execution_count
    result = await kit.call("run_cells", cells=["sneaky"])
    assert result.is_error and "runs Claude" in text_of(result), text_of(result)
    assert "ran" not in kit.shell.user_ns and kit.shell.execution_count == count
    assert "run.begin" not in front.methods() and kit.runs == []


async def test_without_the_bridge_nothing_runs(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    for bridge in (None, Bridge()):  # none, or one no frontend said hello on
        monkeypatch.setattr(spec, "bridge_of", lambda shell, bridge=bridge: bridge)
        result = await kit.call("run_cells", cells=["c1"])
        assert result.is_error and "needs the notebook frontend's bridge" in text_of(result)
    assert kit.runs == []


@pytest.mark.parametrize("policy", ["deny", "ask"])
async def test_the_python_policy_gates_each_cell(
    make_kit: Callable[..., Kit], frontend: Callable[..., FakePage], policy: str
) -> None:
    asked: list[Any] = []

    def approve(request: Any) -> bool:
        asked.append(request)
        return False

    kit = make_kit(policy=policy, approve=approve)
    front = frontend(code("c0", "x = 1"), code("c1", "ran = True"))
    result = await kit.call("run_cells", cells=["c1"])
    assert result.is_error and "ran" not in kit.shell.user_ns
    assert "run.begin" not in front.methods()
    # The card names the cell as the user sees it: its place in the notebook, its source.
    assert [(r.tool, dict(r.input)) for r in asked] == (
        [("run_cells", {"cell": "c1", "position": 2, "code": "ran = True"})]
        if policy == "ask"
        else []
    )


async def test_the_runner_interrupt_stops_a_long_cell(
    kit: Kit, frontend: Callable[..., FakePage], shell: InteractiveShell
) -> None:
    started = threading.Event()
    shell.user_ns["started"] = started
    front = frontend(code("long", "import time\nprint('working')\nstarted.set()\ntime.sleep(600)"))

    def stop() -> None:
        if started.wait(30):
            kit.runner.interrupt()

    threading.Thread(target=stop, daemon=True).start()
    result = await kit.call("run_cells", cells=["long"])
    assert result.is_error and "KeyboardInterrupt" in text_of(result)
    assert "· interrupted ---" in text_of(result)
    assert front.outputs("long")[-1]["ename"] == "KeyboardInterrupt"
    assert front.methods()[-1] == "run.end"


async def test_the_cells_run_take_the_counts_after_the_asking_cells_own(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    """The %%claude cell keeps its count, the cells it ran take the next ones, each source in
    the history under its count (without a kernel there is no reply to keep at the cell's
    own count: tests/integration/kernel/test_run_cells_kernel.py has the kernel's side)."""
    shell, asking = kit.shell, "%%claude\nrun both"
    claude = shell.execution_count  # as IPython does when the %%claude cell starts
    shell.history_manager.store_inputs(claude, asking)  # type: ignore[union-attr]
    shell.execution_count = claude + 1
    front = frontend(code("a", "first = 1"), code("b", "second = 2"), code("asking", asking))
    tool = registry.kernel_tools(
        shell, policy=lambda: "allow", runner=kit.runner, asking_cell=lambda: "asking"
    )[-1]
    await tool.function({"cells": ["a", "b"]})
    assert [front.cell(i)["execution_count"] for i in ("a", "b")] == [claude + 1, claude + 2]
    raw = shell.history_manager.input_hist_raw  # type: ignore[union-attr]
    assert raw[claude:] == [asking, "first = 1", "second = 2"]
    assert len(raw) == shell.execution_count  # the next cell's source lands at its count


async def test_a_cell_run_in_place_is_kept_with_its_turn_when_the_page_goes(
    kit: Kit, frontend: Callable[..., FakePage]
) -> None:
    from byre_jupyter.tools.pending_answers import pending_answers

    front = frontend(code("c1", "print('RAN-HERE')", None), code("asking", "%%claude\nrun it"))
    answers = pending_answers(front.bridge)
    assert answers is not None
    answers.showing("asking", None)  # the turn that runs it, as its surface says
    assert not (await kit.call("run_cells", cells=["c1"])).is_error
    assert answers.kept == {}  # the page that showed the run may well have it
    assert front.comm.close_handler is not None
    front.comm.close_handler({})  # the page goes before the turn ends
    answers.finished("asking", [])
    ran = answers.kept["c1"]
    assert ran == [{"output_type": "stream", "name": "stdout", "text": "RAN-HERE\n"}], ran
