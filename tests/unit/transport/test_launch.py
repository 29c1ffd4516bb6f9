"""argv, environment and CLI discovery (pure; nothing is started)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from byre_jupyter.errors import CLINotFoundError
from byre_jupyter.transport import (
    LaunchSpec,
    build_argv,
    build_env,
    find_cli,
    subprocess_transport,
)
from byre_jupyter.transport.launch import Setting, launch_fields


def test_argv_has_stream_json_partial_messages_and_sdk_server() -> None:
    argv = build_argv(LaunchSpec(cli_path="/bin/claude", model="sonnet", session_id="abc"))
    assert argv[0] == "/bin/claude"
    joined = " ".join(argv)
    for flag in (
        "--output-format stream-json",
        "--input-format stream-json",
        "--verbose",
        "--include-partial-messages",
        "--model=sonnet",
        "--session-id=abc",
    ):
        assert flag in joined
    mcp = json.loads(argv[argv.index("--mcp-config") + 1])
    assert mcp == {"mcpServers": {"byre": {"type": "sdk", "name": "byre", "alwaysLoad": True}}}
    settings = json.loads(argv[argv.index("--settings") + 1])
    assert settings["attribution"] == {"commit": "", "pr": ""}
    assert "--print" not in argv and "-p" not in argv


@pytest.mark.parametrize("mode", [None, "default", "acceptEdits", "plan"])
def test_prompt_tool_stdio_unless_bypass(mode: str | None) -> None:
    argv = build_argv(LaunchSpec(cli_path="c", permission_mode=mode))
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"


def test_bypass_has_no_prompt_tool() -> None:
    argv = build_argv(LaunchSpec(cli_path="c", permission_mode="bypassPermissions"))
    assert "--permission-prompt-tool" not in argv
    assert "--allow-dangerously-skip-permissions" in argv


def test_resume_and_fork_use_equals_form() -> None:
    argv = build_argv(
        LaunchSpec(
            cli_path="c",
            resume="-odd-id",
            resume_session_at="u1",
            fork_session=True,
            session_id="new",
        )
    )
    assert "--resume=-odd-id" in argv and "--resume-session-at=u1" in argv
    assert "--fork-session" in argv and "--session-id=new" in argv
    plain = build_argv(LaunchSpec(cli_path="c", resume="old", session_id="old"))
    assert "--resume=old" in plain and not any(a.startswith("--session-id") for a in plain)


def test_env_drops_claudecode_adds_identity_and_extra() -> None:
    spec = LaunchSpec(cli_path="c", env={"EXTRA": "1"}, commit_name="Ada", commit_email="a@x")
    env = build_env(
        spec, base={"CLAUDECODE": "1", "PATH": "/bin", "ANTHROPIC_API_KEY": "sk-secret"}
    )
    assert "CLAUDECODE" not in env and env["EXTRA"] == "1" and env["PATH"] == "/bin"
    assert env["GIT_AUTHOR_NAME"] == env["GIT_COMMITTER_NAME"] == "Ada"


def test_no_secret_on_argv() -> None:
    spec = LaunchSpec(cli_path="c", env={"ANTHROPIC_API_KEY": "sk-secret-123"})
    assert not any("sk-secret" in a for a in build_argv(spec))


def test_find_cli_order(tmp_path: Path) -> None:
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    other = tmp_path / "other"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    assert find_cli(str(exe), env={"BYRE_CLAUDE_PATH": str(other)}) == str(exe)
    assert find_cli(None, env={"BYRE_CLAUDE_PATH": str(other)}) == str(other)
    assert find_cli(None, env={"PATH": str(tmp_path)}) == str(exe)


def test_find_cli_errors_say_how_to_install(tmp_path: Path) -> None:
    with pytest.raises(CLINotFoundError, match="npm install -g @anthropic-ai/claude-code"):
        find_cli(None, env={"PATH": str(tmp_path)})
    with pytest.raises(CLINotFoundError, match="configured cli_path"):
        find_cli(str(tmp_path / "missing"), env={})
    plain = tmp_path / "notexec"
    plain.write_text("x")
    os.chmod(plain, 0o644)
    with pytest.raises(CLINotFoundError, match="BYRE_CLAUDE_PATH"):
        find_cli(None, env={"BYRE_CLAUDE_PATH": str(plain)})


def test_allow_bypass_keeps_prompts_and_adds_the_launch_flag() -> None:
    argv = build_argv(LaunchSpec(cli_path="c", permission_mode="default", allow_bypass=True))
    assert "--allow-dangerously-skip-permissions" in argv  # a later switch to bypass is accepted
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"  # prompts still come
    assert "--allow-dangerously-skip-permissions" not in build_argv(LaunchSpec(cli_path="c"))


# --------------------------------------------------------------------------- launch options

#: A value for each kind of launch option, unlike its default.
SAMPLES: dict[str, Any] = {
    "str | None": "-sample",
    "float | None": 0.25,
    "Mapping[str, str]": {"BYRE_SAMPLE": "1"},
    "Mapping[str, Any]": {"-sample": {"description": "d"}},
    "Sequence[str]": ("PATH",),  # an argument, or a variable to drop
    "int": 12_345,
}
#: Fields whose values are one of a few words.
NAMED_SAMPLES: dict[str, Any] = {"effort": "xhigh"}


def sample(name: str, kind: object) -> Any:
    return NAMED_SAMPLES.get(name, SAMPLES[str(kind)])


def _built(spec: LaunchSpec) -> dict[str, Any]:
    """What the real transport factory builds from ``spec``: argv, environment, cwd, bound."""
    transport = subprocess_transport(spec)
    return {
        "argv": transport.argv,
        "environment": transport.env,
        "process": (transport.argv[0], transport.cwd, transport.max_line_bytes),
    }


def test_every_launch_option_reaches_the_cli_where_its_metadata_says(tmp_path: Path) -> None:
    """A new CLI flag is one field of LaunchOptions (and one trait): build_argv, build_env and
    the transport read the fields from their metadata, so setting any field changes what is
    launched, in the place the field says, and a flag field becomes its flag."""
    exe = tmp_path / "claude"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    other = tmp_path / "other-claude"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    base = LaunchSpec(cli_path=str(exe))
    before = _built(base)
    for option in launch_fields():
        setting: Setting = option.metadata["launch"]
        value = str(other) if option.name == "cli_path" else sample(option.name, option.type)
        after = _built(dataclasses.replace(base, **{option.name: value}))
        changed = [place for place in before if after[place] != before[place]]
        assert setting.reaches in changed or (setting.reaches == "flag" and "argv" in changed), (
            option.name,
            changed,
        )
        if setting.reaches == "flag":
            word = json.dumps(value, separators=(",", ":")) if isinstance(value, dict) else value
            words = (
                [f"{setting.flag}={item}" for item in value]
                if isinstance(value, tuple)
                else [f"{setting.flag}={word}"]
            )
            assert all(w in after["argv"] for w in words), (option.name, words)


def test_the_clis_folders_are_made_private_before_it_makes_them(tmp_path: Path) -> None:
    """On a shared host the CLI made ~/.claude/projects 0755 under the usual umask, listing a
    user's conversation ids and working folders to every other user (the hub tier found it)."""
    from byre_jupyter.transport.launch import cli_projects_dir, make_cli_folders_private

    home = tmp_path / "home"
    home.mkdir()
    old = os.umask(0o022)
    try:
        make_cli_folders_private({"HOME": str(home)})
    finally:
        os.umask(old)
    assert cli_projects_dir({"HOME": str(home)}) == home / ".claude" / "projects"
    for folder in (home / ".claude", home / ".claude" / "projects"):
        assert folder.stat().st_mode & 0o777 == 0o700, folder

    config = tmp_path / "config"  # CLAUDE_CONFIG_DIR moves both
    make_cli_folders_private({"HOME": str(home), "CLAUDE_CONFIG_DIR": str(config)})
    assert (config / "projects").stat().st_mode & 0o777 == 0o700

    mine = tmp_path / "mine"  # a folder the user made is theirs: left as it is
    (mine / "projects").mkdir(parents=True, mode=0o755)
    (mine / "projects").chmod(0o755)
    make_cli_folders_private({"CLAUDE_CONFIG_DIR": str(mine)})
    assert (mine / "projects").stat().st_mode & 0o777 == 0o755


def test_launch_settings_flags_each_once_in_the_equals_form() -> None:
    """effort, the fallback model, the budget cap, more directories, tool rules, subagents and
    plugins reach the CLI as its own flags (checked against 2.1.328's --help and by launching
    it: tests/integration/cli/test_launch_settings_cli.py); a dash-leading value stays a value,
    a tool rule with a space stays one word, each list item is its own flag."""
    argv = build_argv(
        LaunchSpec(
            cli_path="c",
            effort="High",
            fallback_model="sonnet,haiku",
            max_budget_usd=0.5,
            add_dirs=("/data", "-odd dir"),
            allowed_tools=("Bash(git *)", "Read"),
            disallowed_tools=("Write",),
            agents={"reviewer": {"description": "Reviews code", "prompt": "Review."}},
            plugin_dirs=("/p/one", "/p/two.zip"),
        )
    )
    assert "--effort=high" in argv
    assert "--fallback-model=sonnet,haiku" in argv
    assert "--max-budget-usd=0.5" in argv
    assert [a for a in argv if a.startswith("--add-dir")] == [
        "--add-dir=/data",
        "--add-dir=-odd dir",
    ]
    assert [a for a in argv if a.startswith("--allowedTools")] == [
        "--allowedTools=Bash(git *)",
        "--allowedTools=Read",
    ]
    assert "--disallowedTools=Write" in argv
    agents = [a for a in argv if a.startswith("--agents=")]
    assert len(agents) == 1
    assert json.loads(agents[0].removeprefix("--agents=")) == {
        "reviewer": {"description": "Reviews code", "prompt": "Review."}
    }
    assert [a for a in argv if a.startswith("--plugin-dir")] == [
        "--plugin-dir=/p/one",
        "--plugin-dir=/p/two.zip",
    ]


def test_unset_launch_settings_add_no_flag() -> None:
    argv = " ".join(build_argv(LaunchSpec(cli_path="c")))
    for flag in ("--effort", "--fallback-model", "--max-budget-usd", "--add-dir", "--allowedTools",
                 "--disallowedTools", "--agents", "--plugin-dir"):  # fmt: skip
        assert flag not in argv


def test_effort_is_one_of_the_cli_levels() -> None:
    assert LaunchSpec(effort="default").effort is None
    with pytest.raises(ValueError, match="low, medium, high, xhigh, max"):
        LaunchSpec(effort="extreme")


def test_launch_settings_are_plain_data_that_compare_by_value() -> None:
    """A spare CLI is adopted when its launch settings equal the cell's: lists and dicts the
    caller passes are copied into tuples and plain dicts (the caller's later change does not
    reach a started CLI's settings), so equal settings compare equal."""
    agents = {"r": {"description": "d", "tools": ["Read"]}}
    dirs = ["/a"]
    first = LaunchSpec(add_dirs=dirs, agents=agents, allowed_tools=["Read"])
    dirs.append("/b")
    agents["r"]["tools"].append("Bash")
    assert first.add_dirs == ("/a",) and first.allowed_tools == ("Read",)
    assert first.agents == {"r": {"description": "d", "tools": ["Read"]}}
    same = {"r": {"description": "d", "tools": ["Read"]}}
    assert first == LaunchSpec(add_dirs=("/a",), agents=same, allowed_tools=("Read",))
