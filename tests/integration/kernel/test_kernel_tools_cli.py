"""Claude working with the live kernel: the byre MCP tools through the real CLI, in a real
kernel, against the scripted API (the model's calls are scripted, everything else is real)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.kernel import KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse

# Agg: the figures the tools capture come from a known backend. The permission mode stays
# "default": the tools' own approval policy is under test.
pytestmark = [
    pytest.mark.kernel,
    pytest.mark.cli,
    pytest.mark.kernel_env(MPLBACKEND="Agg"),
    pytest.mark.kernel_setup("%load_ext byre_jupyter"),
]


def call_tool(api: ScriptedAPI, keyword: str, tool: str, args: dict) -> None:
    api.on(keyword, Reply(ToolUse(f"mcp__byre__{tool}", args)), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("done with the tool")))


def test_python_tool_changes_namespace_and_returns_text_and_figure(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    code = (
        "import matplotlib.pyplot as plt\n"
        "answer = 6 * 7\n"
        "print('computed', answer)\n"
        "fig, ax = plt.subplots(); ax.plot([1, 2, 3])\n"
    )
    call_tool(api, "compute", "python", {"code": code})
    kernel.run("%config Claude.python_tool = 'allow'")
    run = kernel.run("%%claude\ncompute it")
    assert kernel.run("print(answer)").texts().strip() == "42"  # the user's namespace changed
    result = api.requests[-1].last_tool_results[0]
    assert not result["is_error"] and "computed 42" in result["text"] and result["has_image"]
    assert "image/png" in run.mimetypes()  # the figure shows in the cell too
    assert "answer = 6 * 7" in run.texts()  # the code Claude ran is recorded in the card


def test_python_tool_denied_by_config_reaches_the_model_as_an_error(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    call_tool(api, "try", "python", {"code": "open('PWNED', 'w').write('x')"})
    kernel.run("%config Claude.python_tool = 'deny'")
    kernel.run("%%claude\ntry it")
    assert not (workdir / "PWNED").exists()
    result = api.requests[-1].last_tool_results[0]
    assert result["is_error"] and "python_tool" in result["text"]


def test_python_tool_asks_and_a_headless_run_denies_without_hanging(
    kernel: KernelDriver, api: ScriptedAPI, workdir: Path
) -> None:
    call_tool(api, "try", "python", {"code": "open('PWNED', 'w').write('x')"})
    run = kernel.run("%%claude\ntry it")  # default python_tool="ask", no frontend to click
    assert not (workdir / "PWNED").exists()
    result = api.requests[-1].last_tool_results[0]
    assert result["is_error"] and "nobody can click" in result["text"]
    assert "done with the tool" in run.texts()


def test_oversize_output_is_truncated(kernel: KernelDriver, api: ScriptedAPI) -> None:
    call_tool(api, "flood", "python", {"code": "print('x' * 200_000)"})
    kernel.run("%config Claude.python_tool = 'allow'")
    kernel.run("%%claude\nflood it")
    text = api.requests[-1].last_tool_results[0]["text"]
    assert 1_000 < len(text) < 30_000 and "truncated" in text


def test_variables_and_inspect_tools(kernel: KernelDriver, api: ScriptedAPI) -> None:
    kernel.run("import pandas as pd\ndf = pd.DataFrame({'price': [1.5, 2.5], 'city': ['a', 'b']})")
    call_tool(api, "list", "variables", {})
    kernel.run("%%claude\nlist variables")
    listing = api.requests[-1].last_tool_results[0]["text"]
    assert "df" in listing and "DataFrame" in listing and "pd" not in listing.split()
    call_tool(api, "look", "inspect", {"name": "df"})
    kernel.run("%%claude\nlook at df")
    summary = api.requests[-1].last_tool_results[0]["text"]
    assert "price" in summary and "float64" in summary


def test_interrupt_stops_a_running_python_call_and_the_session_goes_on(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    code = "import asyncio\nawait asyncio.sleep(60)\nfinished_sleeping = True"
    call_tool(api, "wait", "python", {"code": code})
    kernel.run("%config Claude.python_tool = 'allow'")
    run = kernel.submit("%%claude\nwait a minute")
    kernel.wait(
        lambda: "asyncio.sleep(60)" in run.texts() or "byre.python" in run.texts(), timeout=60
    )
    kernel.interrupt()
    kernel.wait(lambda: run.idle and run.reply is not None, timeout=30)
    assert "nterrupted" in run.texts()
    assert "False" in kernel.run("print('finished_sleeping' in dir())").texts()
    api.on("are you there", Reply(Text("still here")))
    assert "still here" in kernel.run("%%claude\nare you there?").texts()


def test_with_variables_and_interpolation(kernel: KernelDriver, api: ScriptedAPI) -> None:
    api.default = Reply(Text("thanks"))
    kernel.run(
        "import pandas as pd, numpy as np\n"
        "df = pd.DataFrame({'price': [1.5, 2.5]})\narr = np.arange(12).reshape(3, 4)\ncity = 'Lyon'"
    )
    kernel.run("%%claude --with df,arr\nWhat about {city}? Literal {{braces}} stay.")
    body = json.dumps(api.requests[-1].last_user_message)
    assert "price" in body and "(3, 4)" in body
    assert "What about Lyon? Literal {braces} stay." in body
    before = len(api.requests)
    bad = kernel.run("%%claude --with nope\nhi")
    assert "UsageError" in bad.texts() and "nope" in bad.texts()
    bad = kernel.run("%%claude\nhi {missing_name}")
    assert "UsageError" in bad.texts() and "missing_name" in bad.texts()
    assert len(api.requests) == before  # nothing sent
