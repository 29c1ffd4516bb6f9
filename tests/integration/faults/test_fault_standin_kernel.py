"""Garbage on the CLI's stdout, through a kernel cell: non-JSON lines, invalid UTF-8, a JSON
non-object, a line over ``Claude.max_line_mb``. The cell still shows the good text, and the
session survives for the next cell. The stand-in CLI (tests/support/standin_cli.py) plays the
CLI, since the real one cannot be made to misbehave on demand."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from support.kernel import KernelDriver

pytestmark = pytest.mark.kernel

MIB = 1024 * 1024


def markdown(run) -> str:
    return "\n".join(
        o["data"]["text/markdown"] for o in run.outputs if "text/markdown" in o.get("data", {})
    )


def test_garbage_invalid_utf8_and_an_overlong_line_in_a_kernel_cell(
    kernels: Callable[..., KernelDriver],
    kernel_env: dict[str, str],
    standin_cli: str,
    standin_script: Callable[..., str],
) -> None:
    script = standin_script(
        [
            [
                {"__raw__": "npm WARN deprecated something <b>not json</b>"},
                {"__bytes_hex__": "7b2261223a22ff227d"},  # {"a":"\xff"}: invalid UTF-8
                {"__bytes_hex__": "c328e282a1"},  # bare invalid UTF-8, not JSON either
                {"__raw__": "[1, 2, 3]"},  # JSON, but not an object
                {"__big_text__": 2 * MIB},  # one line over the 1 MiB limit
                {"__deltas__": 3, "text": "GOOD_TEXT "},
            ],
            [{"__raw__": "\x00\x01 more garbage"}, {"__deltas__": 2, "text": "SECOND_OK "}],
        ]
    )
    kernel = kernels(env={**kernel_env, "STANDIN_SCRIPT": script})
    kernel.run(f"%config Claude.cli_path = {standin_cli!r}\n%config Claude.max_line_mb = 1")

    first = kernel.run("%%claude -o r1\nplease misbehave")
    assert first.reply["status"] == "ok", first.texts()
    text = markdown(first)
    assert "GOOD_TEXT GOOD_TEXT GOOD_TEXT" in text, text[:2000]
    assert "x" * 1000 not in json.dumps(first.outputs)  # the over-long line was dropped
    check = kernel.run(
        "from byre_jupyter.magics import extension\n"
        "s = extension().conversations.peek('default')\n"
        "kinds = [type(e).__name__ for _, e in s.bad_lines]\n"
        "print(r1.is_error, r1.text == 'GOOD_TEXT ' * 3, len(kinds),"
        " kinds.count('LineTooLongError'))"
    )
    assert check.texts().split() == ["False", "True", "5", "1"], check.texts()

    second = kernel.run("%%claude -o r2\nagain")
    assert second.reply["status"] == "ok", second.texts()
    assert "SECOND_OK SECOND_OK" in markdown(second)
    assert kernel.run("print(r2.is_error, len(s.bad_lines), s.restarts)").texts().split() == [
        "False",
        "6",
        "0",
    ]
