"""The ``python`` tool on a real IPython shell: namespace, outputs, images, limits, approval."""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable

import pytest
from IPython.core.displaypub import CapturingDisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from support.toolkit import PNG_MAGIC, Kit, images_of, text_of

from byre_jupyter.session import Allow, Decision, Deny
from byre_jupyter.session.mcp import McpServer
from byre_jupyter.tools import PythonApproval, ToolLimits

TINY_PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
    b"\x90wS\xde\x00\x00\x00\x0cIDATx\x9cc\xf8\xcf\xc0\x00\x00\x03\x01\x01\x00\xc9\xfe\x92\xef"
    b"\x00\x00\x00\x00IEND\xaeB`\x82"
)


async def test_code_runs_in_the_user_namespace_and_variables_shows_it(kit: Kit) -> None:
    history_before = len(kit.shell.user_ns["In"])
    result = await kit.python("x = 41 + 1")
    assert not result.is_error
    assert kit.shell.user_ns["x"] == 42
    table = text_of(await kit.call("variables"))
    assert re.search(r"^x\s+int\s+.*\b42$", table, re.MULTILINE), table
    # not a cell: no history entry, no Out/_ update
    assert len(kit.shell.user_ns["In"]) == history_before
    assert kit.shell.user_ns["Out"] == {}
    assert kit.shell.user_ns.get("_") != 42


async def test_stdout_stderr_and_the_last_value(kit: Kit) -> None:
    kit.shell.user_ns["seed"] = 5
    result = await kit.python(
        "import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n[seed * 2, 'y']"
    )
    text = text_of(result)
    assert not result.is_error
    assert "[stdout]\nto out" in text
    assert "[stderr]\nto err" in text
    assert "[result]\n[10, 'y']" in text
    run = kit.runs[-1]
    assert (run.stdout, run.stderr, run.result, run.status) == (
        "to out\n",
        "to err\n",
        "[10, 'y']",
        "ok",
    )


async def test_a_trailing_semicolon_hides_the_value(kit: Kit) -> None:
    result = await kit.python("y = 3\ny * 2;")
    assert kit.runs[-1].result is None
    assert text_of(result) == "(ran without output)"


async def test_exception_gives_type_message_and_a_plain_traceback(kit: Kit) -> None:
    result = await kit.python("def f(v):\n    return 1 / v\n\nprint('before')\nf(0)")
    text = text_of(result)
    assert result.is_error
    assert "[stdout]\nbefore" in text
    run = kit.runs[-1]
    assert run.status == "error"
    assert run.error == "ZeroDivisionError: division by zero"
    assert run.traceback is not None
    assert run.traceback.startswith("Traceback (most recent call last):")
    assert re.search(r'File "<byre-python-\d+>", line 5, in <module>\n    f\(0\)', run.traceback)
    assert re.search(r'File "<byre-python-\d+>", line 2, in f\n    return 1 / v', run.traceback)
    assert "\x1b[" not in text  # no ANSI colour
    assert "runner.py" not in run.traceback  # the runner's own frames are trimmed


async def test_a_syntax_error_is_reported_without_running_anything(kit: Kit) -> None:
    result = await kit.python("z = 1\ndef broken(:\n    pass")
    assert result.is_error
    assert "SyntaxError" in text_of(result)
    assert "z" not in kit.shell.user_ns


async def test_ipython_syntax_works(kit: Kit) -> None:
    result = await kit.python("%time total = sum(range(10))\ntotal")
    assert not result.is_error, text_of(result)
    assert "[result]\n45" in text_of(result)
    assert "Wall time" in kit.runs[-1].stdout


async def test_top_level_await(kit: Kit) -> None:
    result = await kit.python(
        "import asyncio\nawait asyncio.sleep(0)\nfirst = await asyncio.sleep(0, result=6)\n"
        "first * await asyncio.sleep(0, result=7)"
    )
    assert not result.is_error, text_of(result)
    assert kit.runs[-1].result == "42"
    assert kit.shell.user_ns["first"] == 6


async def test_a_matplotlib_figure_comes_back_as_png_and_is_closed(kit: Kit) -> None:
    import matplotlib.pyplot as plt

    untouched = plt.figure()  # open before the run, not used by it: not sent, stays open
    result = await kit.python(
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\nax.plot([1, 2, 3], [3, 1, 2])\nax.set_title('t');"
    )
    assert not result.is_error, text_of(result)
    images = images_of(result)
    assert len(images) == 1
    assert images[0].startswith(PNG_MAGIC)
    assert tuple(image.data for image in kit.runs[-1].images) == tuple(images)
    assert plt.get_fignums() == [untouched.number]  # the run's figure was closed


async def test_a_changed_figure_of_the_user_is_sent_but_left_open(kit: Kit) -> None:
    import matplotlib.pyplot as plt

    kit.shell.user_ns["user_fig"], ax = plt.subplots()
    ax.plot([0, 1])
    user_fig = kit.shell.user_ns["user_fig"]
    user_fig.canvas.draw()  # no longer stale: only the run's change can make it count
    result = await kit.python("user_fig.axes[0].set_title('changed by Claude')")
    images = images_of(result)
    assert len(images) == 1 and images[0].startswith(PNG_MAGIC)
    assert plt.fignum_exists(user_fig.number)

    result = await kit.python("len(user_fig.axes)")  # reading it is not changing it
    assert images_of(result) == []


async def test_displayed_images_come_back_and_nothing_leaks_to_the_cell(
    kit: Kit, capsys: pytest.CaptureFixture[str]
) -> None:
    cell_pub = CapturingDisplayPublisher()  # type: ignore[no-untyped-call]
    kit.shell.display_pub = cell_pub
    kit.shell.user_ns["png"] = TINY_PNG
    result = await kit.python(
        "from IPython.display import Image, Markdown, display\n"
        "print('captured-print')\n"
        "display(Image(data=png))\n"
        "display(Markdown('**bold**'))"
    )
    assert not result.is_error, text_of(result)
    assert images_of(result) == [TINY_PNG]
    assert "[displayed image #1]" in text_of(result)
    assert "**bold**" in text_of(result)
    assert cell_pub.outputs == []
    assert kit.shell.display_pub is cell_pub  # restored
    assert "captured-print" not in capsys.readouterr().out


async def test_a_value_with_an_image_repr_comes_back_as_an_image(kit: Kit) -> None:
    kit.shell.user_ns["png"] = TINY_PNG
    result = await kit.python("from IPython.display import Image\nImage(data=png)")
    assert images_of(result) == [TINY_PNG]


async def test_huge_output_is_truncated_with_a_note(kit: Kit) -> None:
    result = await kit.python("print('a' * 30000 + 'b' * 30000)")
    text = text_of(result)
    assert len(text) < 20_500
    match = re.search(r"… (\d+) more characters truncated …", text)
    assert match and int(match.group(1)) == 60_001 - 20_000
    stdout = kit.runs[-1].stdout
    assert stdout.startswith("aaaa") and stdout.rstrip().endswith("bbbb")


async def test_the_budget_is_shared_and_configurable(make_kit: Callable[..., Kit]) -> None:
    kit = make_kit(limits=ToolLimits(max_output_chars=300))
    result = await kit.python("import sys\nprint('o' * 1000)\nprint('e' * 1000, file=sys.stderr)")
    run = kit.runs[-1]
    assert len(run.stdout) + len(run.stderr) < 300 + 2 * 60  # two notes
    assert "more characters truncated" in run.stdout and "more characters truncated" in run.stderr
    assert "more characters truncated" in text_of(result)


async def test_at_most_four_images(kit: Kit) -> None:
    import matplotlib.pyplot as plt

    result = await kit.python(
        "import matplotlib.pyplot as plt\nfor i in range(6):\n    plt.figure(); plt.plot([i])"
    )
    assert len(images_of(result)) == 4
    assert "2 more image(s) not shown" in text_of(result)
    assert plt.get_fignums() == []


async def test_policy_deny_refuses_and_says_how_to_enable(make_kit: Callable[..., Kit]) -> None:
    kit = make_kit(policy="deny")
    result = await kit.python("ran = True")
    assert result.is_error
    text = text_of(result)
    assert "disabled" in text
    assert '%config Claude.python_tool = "ask"' in text and '"allow"' in text
    assert "ran" not in kit.shell.user_ns
    assert kit.runs == []


async def test_ask_without_an_approver_denies(make_kit: Callable[..., Kit]) -> None:
    kit = make_kit(policy="ask")
    result = await kit.python("ran = True")
    assert result.is_error
    assert "no approver" in text_of(result)
    assert '%config Claude.python_tool = "allow"' in text_of(result)
    assert "ran" not in kit.shell.user_ns


async def test_ask_with_an_approver_that_allows(make_kit: Callable[..., Kit]) -> None:
    asked: list[PythonApproval] = []

    async def approve(request: PythonApproval) -> Decision:
        asked.append(request)
        return Allow(approved_by="alice")

    kit = make_kit(policy="ask", approve=approve)
    result = await kit.python("ran = True")
    assert not result.is_error
    assert asked == [PythonApproval(code="ran = True")]
    assert kit.shell.user_ns["ran"] is True
    assert kit.runs[-1].approved_by == "alice"


async def test_ask_with_an_approver_that_denies_with_a_reason(
    make_kit: Callable[..., Kit],
) -> None:
    kit = make_kit(policy="ask", approve=lambda request: Deny("too risky"))
    result = await kit.python("ran = True")
    assert result.is_error
    assert "too risky" in text_of(result)
    assert "ran" not in kit.shell.user_ns
    assert kit.runs == []


async def test_a_plain_bool_approver_and_the_policy_is_read_per_call(
    make_kit: Callable[..., Kit],
) -> None:
    mode = ["ask"]

    async def approve(request: PythonApproval) -> bool:
        return False

    kit = make_kit(policy=lambda: mode[0], approve=approve)
    assert (await kit.python("ran = 1")).is_error
    mode[0] = "allow"
    assert not (await kit.python("ran = 2")).is_error
    assert kit.shell.user_ns["ran"] == 2
    assert kit.runs[-1].approved_by == "policy"


async def test_on_python_run_gets_a_full_record(kit: Kit) -> None:
    await kit.python("import matplotlib.pyplot as plt\nprint('p')\nplt.plot([1])\n1 / 0")
    (run,) = kit.runs
    assert run.code.endswith("1 / 0")
    assert run.stdout == "p\n"
    assert run.error == "ZeroDivisionError: division by zero"
    assert run.traceback and "ZeroDivisionError" in run.traceback
    assert len(run.images) == 1 and run.images[0].data.startswith(PNG_MAGIC)
    assert run.duration > 0
    assert run.approved_by == "policy"
    assert run.status == "error"


async def test_a_run_cancelled_during_approval_never_starts(make_kit: Callable[..., Kit]) -> None:
    asked = asyncio.Event()

    async def approve(request: PythonApproval) -> bool:
        asked.set()
        await asyncio.Event().wait()  # the user never answers
        return True

    kit = make_kit(policy="ask", approve=approve)
    task = asyncio.ensure_future(kit.python("ran = True"))
    await asked.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "ran" not in kit.shell.user_ns
    assert kit.runs == []


@pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="a swallowed cancel is seen through Task.cancelling(), new in Python 3.11",
)
async def test_a_run_refuses_to_start_if_its_cancellation_was_swallowed(
    make_kit: Callable[..., Kit],
) -> None:
    asked = asyncio.Event()

    async def approve(request: PythonApproval) -> bool:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            return True  # a sloppy approver: the call is still being cancelled
        return True

    kit = make_kit(policy="ask", approve=approve)
    task = asyncio.ensure_future(kit.python("ran = True"))
    await asked.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "ran" not in kit.shell.user_ns
    assert kit.runs == []


async def test_the_tools_through_the_mcp_server(kit: Kit, shell: InteractiveShell) -> None:
    server = McpServer("byre")
    server.add_tools(list(kit.tools.values()))
    listed = await server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    specs = {t["name"]: t for t in listed["result"]["tools"]}
    assert set(specs) == {
        "python",
        "variables",
        "inspect",
        "history",
        "notebook",
        "edit_notebook",
        "run_cells",
    }
    assert specs["run_cells"]["inputSchema"]["required"] == ["cells"]
    assert specs["python"]["inputSchema"]["required"] == ["code"]
    assert specs["inspect"]["inputSchema"]["required"] == ["name"]
    assert specs["history"]["inputSchema"]["properties"]["n"]["maximum"] == 50
    assert specs["variables"]["annotations"]["readOnlyHint"] is True
    assert all(len(s["description"]) > 80 for s in specs.values())

    answer = await server.handle(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "python", "arguments": {"code": "6 * 7"}},
        }
    )
    assert answer["result"] == {
        "content": [{"type": "text", "text": "[result]\n42"}],
        "isError": False,
    }

    started = asyncio.Event()
    shell.user_ns["started"] = started
    call = asyncio.ensure_future(
        server.handle(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {
                    "name": "python",
                    "arguments": {
                        "code": "import asyncio\nstarted.set()\nawait asyncio.sleep(600)"
                    },
                },
            }
        )
    )
    await started.wait()
    await server.handle(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3}}
    )
    answer = await call
    assert answer["result"]["isError"] is True
    assert "cancelled" in answer["result"]["content"][0]["text"]
    assert kit.runs[-1].status == "cancelled"


async def test_runs_on_one_shell_take_turns_across_runners(make_kit: Callable[..., Kit]) -> None:
    first, second = make_kit(), make_kit()  # e.g. two named sessions in one kernel
    started, go = asyncio.Event(), asyncio.Event()
    first.shell.user_ns.update(started=started, go=go, order=[])
    a = asyncio.ensure_future(first.python("started.set()\nawait go.wait()\norder.append('a')"))
    await started.wait()
    b = asyncio.ensure_future(second.python("order.append('b')"))  # scheduled before a resumes
    go.set()
    await asyncio.gather(a, b)
    assert first.shell.user_ns["order"] == ["a", "b"]


@pytest.mark.parametrize(
    "code",
    ["get_ipython().run_cell_magic('claude', '', 'hi')", "%%time\n%%claude\nhi", "%claude new"],
)
async def test_code_that_runs_claude_is_refused_unrun(kit: Kit, code: str) -> None:
    result = await kit.call("python", code=code)
    assert result.is_error and "a turn inside this turn" in text_of(result)
    assert kit.runs == []
