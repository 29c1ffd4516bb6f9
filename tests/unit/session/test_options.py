"""SessionOptions: one frozen value for a session's set-up; forks are dataclasses.replace."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter import Session, SessionOptions
from byre_jupyter.transport import build_argv


async def test_keywords_and_an_options_object_build_the_same_session(tmp_path: Path) -> None:
    options = SessionOptions(model="opus", cwd=str(tmp_path), extra_args=["--x"])
    by_keywords = Session("a", model="opus", cwd=tmp_path, extra_args=("--x",))
    assert by_keywords.options == Session("a", options).options == options
    assert Session("b", options, model="sonnet").options.model == "sonnet"
    with pytest.raises(TypeError, match="modle"):
        Session("c", modle="opus")
    with pytest.raises(TypeError, match="SessionOptions"):
        Session("d", "opus")  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.model = "x"  # type: ignore[misc]


async def test_a_fork_inherits_where_the_cli_runs_not_the_originals_callbacks(
    tmp_path: Path,
) -> None:
    async def hook(_: Any) -> Any:
        return {}

    original = Session(
        "orig",
        model="opus",
        cwd=tmp_path,
        env={"K": "v"},
        resume="old-id",
        hooks={"Stop": [hook]},
        transcript=str(tmp_path / "t.jsonl"),
        interrupt_grace=9.0,
    )
    original.model = "sonnet"  # as set_model leaves it
    fork = original.fork(at="uuid-1", name="f", control_timeout=5.0)
    assert (fork.name, fork.model, fork.options.cwd, fork.options.env) == (
        "f", "sonnet", str(tmp_path), {"K": "v"}
    )  # fmt: skip
    assert (fork.options.resume, fork.options.fork_at) == ("old-id", "uuid-1")
    assert fork.options.hooks == {} and fork.options.transcript is None
    assert (fork.interrupt_grace, fork.options.control_timeout) == (3.0, 5.0)
    assert fork.session_id != original.session_id
    argv = build_argv(fork._launch_spec())
    assert "--fork-session" in argv and "--resume=old-id" in argv
    assert "--resume-session-at=uuid-1" in argv
    assert original.options.fork_at is None  # the original is untouched
