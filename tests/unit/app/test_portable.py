"""The portable record (app.portable) without a CLI: folder names as the CLI makes them,
redaction, the newest record, and what a restore may and may not write."""

from __future__ import annotations

import base64
import gzip
import json
import tracemalloc
from pathlib import Path
from typing import Any

import nbformat
import pytest

from byre_jupyter.app.portable import (
    PortableError,
    find_record,
    machine_places,
    pack,
    project_folder,
    restore,
)

ID = "0b6f1b9e-3f7c-4c1e-9a53-6d2b8a4f0e11"
LINE = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}}


@pytest.mark.parametrize(
    ("cwd", "folder"),
    [
        ("/home/u/my project.d", "-home-u-my-project-d"),
        # Past 200 characters the CLI keeps the first 200 and adds its hash of the path
        # (expected values computed with the CLI 2.1.328's own function, run under node).
        ("/tmp/" + "a" * 250 + "/x", "-tmp-" + "a" * 195 + "-ou4pgw"),
        # UTF-16 code units: é is one, an emoji two.
        ("/tmp/é/😀/" + "b" * 210, "-tmp------" + "b" * 190 + "-dew24h"),
    ],
)
def test_project_folder_names_a_cwd_as_the_cli_does(cwd: str, folder: str) -> None:
    assert project_folder(cwd) == folder


def test_pack_redacts_and_leaves_out_the_api_request_records(tmp_path: Path) -> None:
    session = tmp_path / f"{ID}.jsonl"
    key = "sk-ant-api03-" + "x" * 40
    lines = [
        {**LINE, "message": {"role": "user", "content": f"my key is {key}"}},
        {"type": "api-request-shape", "shape": "y" * 1000},
    ]
    session.write_text("".join(json.dumps(line) + "\n" for line in lines) + '{"half')
    record = pack(session, ID, 10_000, secrets=())
    raw = gzip.decompress(base64.b64decode(record["data"])).decode()
    assert key not in raw and "[redacted]" in raw
    assert "api-request-shape" not in raw and '"half' not in raw
    assert [json.loads(line)["type"] for line in raw.splitlines()] == ["user"]
    size = len(record["data"])
    assert pack(session, ID, size, secrets=())["data"] == record["data"]
    with pytest.raises(PortableError, match=r"more than Claude\.portable_max_kb"):
        pack(session, ID, size - 1, secrets=())
    # A file far over the bound is refused before it is read.
    with pytest.raises(PortableError, match="too large for Claude"):
        pack(session, ID, 10, secrets=())


def _record(raw: bytes, saved_at: float = 1.0) -> dict[str, Any]:
    return {
        "format": "claude-session-jsonl+gzip+base64",
        "session_id": ID,
        "saved_at": saved_at,
        "data": base64.b64encode(gzip.compress(raw)).decode(),
    }


def test_the_newest_record_of_the_name_is_found(tmp_path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    for name, saved_at in [("default", 5.0), ("default", 9.0), ("other", 20.0), ("default", 7.0)]:
        cell = nbformat.v4.new_code_cell("%%claude\nhi")
        record = _record(json.dumps({**LINE, "at": saved_at}).encode() + b"\n", saved_at)
        cell.outputs = [
            nbformat.v4.new_output(
                "display_data",
                data={"text/plain": "x"},
                metadata={"byre": {"session_name": name, "portable": record}},
            )
        ]
        nb.cells.append(cell)
    path = tmp_path / "n.ipynb"
    nbformat.write(nb, str(path))
    assert find_record(str(path), "default", 2**20)["saved_at"] == 9.0
    assert find_record(str(path), "other", 2**20)["saved_at"] == 20.0
    with pytest.raises(PortableError, match="too large to read") as refused:
        find_record(str(path), "default", 10)
    assert "not a notebook" not in str(refused.value)


def test_a_line_with_a_raw_line_separator_survives_pack_and_restore(tmp_path: Path) -> None:
    """JSON.stringify leaves U+2028 raw in strings; it is not a line break in JSON lines."""
    line = json.dumps({**LINE, "message": {"content": "a\u2028b"}}, ensure_ascii=False)
    session = tmp_path / f"{ID}.jsonl"
    session.write_text(line + "\n", encoding="utf-8")
    record = pack(session, ID, 10_000, secrets=())
    done = restore(record, tmp_path / "projects", "/w", 2**20)
    assert json.loads(done.path.read_text(encoding="utf-8"))["message"]["content"] == "a\u2028b"


def test_a_gzip_bomb_is_never_inflated_past_the_bound(tmp_path: Path) -> None:
    bomb = _record(b"\0" * (64 << 20))  # 64 MB of zeros, about 64 kB packed
    tracemalloc.start()
    try:
        with pytest.raises(PortableError, match="larger than 1 MB once decompressed"):
            restore(bomb, tmp_path, "/w", 1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"inflating the bomb took {peak >> 20} MB"
    assert not any(tmp_path.iterdir())


def test_restore_never_overwrites_a_different_conversation(tmp_path: Path) -> None:
    first = json.dumps(LINE).encode() + b"\n"
    more = first + json.dumps({**LINE, "uuid": "u2"}).encode() + b"\n"
    done = restore(_record(first), tmp_path, "/w", 2**20)
    assert done.written and done.path == tmp_path / "-w" / f"{ID}.jsonl"
    assert done.path.stat().st_mode & 0o777 == 0o600
    # The record continues the file: replaced. The file continues the record: kept.
    assert restore(_record(more), tmp_path, "/w", 2**20).written
    assert not restore(_record(first), tmp_path, "/w", 2**20).written
    assert done.path.read_bytes() == more
    other = json.dumps({**LINE, "uuid": "evil"}).encode() + b"\n"
    with pytest.raises(PortableError, match="different conversation"):
        restore(_record(other), tmp_path, "/w", 2**20)
    assert done.path.read_bytes() == more


def _machine_session(tmp_path: Path, home: Path, cwd: Path) -> Path:
    """A session file shaped as the CLI 2.1.328 writes one (keys and line types as measured),
    holding this machine's context beside a two-message conversation with a tool call."""
    common = {"cwd": str(cwd), "gitBranch": "ada/secret-plans", "sessionId": ID, "version": "2"}
    claude_md = home / ".claude" / "CLAUDE.md"
    lines: list[dict[str, Any]] = [
        {"type": "queue-operation", "operation": "enqueue", "content": "hi", "sessionId": ID},
        {**common, **LINE, "parentUuid": None, "permissionMode": "default"},
        {
            **common,
            "type": "attachment",
            "uuid": "a1",
            "parentUuid": "u1",
            "attachment": {
                "type": "environment",
                "snapshot": f"Primary working directory: {cwd}\n - OS Version: Linux 6.1-MARK",
            },
        },
        {
            **common,
            "type": "attachment",
            "uuid": "a2",
            "parentUuid": "a1",
            "attachment": {
                "type": "instructions",
                "files": [{"path": str(claude_md), "content": "GLOBAL_CLAUDE_MD_MARKER"}],
            },
            "rendered": [{"content": f"Contents of {claude_md}: GLOBAL_CLAUDE_MD_MARKER"}],
        },
        {
            **common,
            "type": "attachment",
            "uuid": "a3",
            "parentUuid": "a2",
            "attachment": {"type": "prompt_snapshot", "systemPrompt": "SYSTEM_PROMPT_MARKER"},
        },
        {"type": "api-request-shape", "shape": "SYSTEM_PROMPT_MARKER", "sessionId": ID},
        {
            **common,
            "type": "assistant",
            "uuid": "m1",
            "parentUuid": "a3",
            "requestId": "req_1",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "Read", "input": {
                        "file_path": f"{cwd}/data.csv",
                    }},
                ],
            },
        },
        {
            **common,
            "type": "user",
            "uuid": "r1",
            "parentUuid": "m1",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a,b"}],
            },
            "toolUseResult": {"file": {"filePath": f"{cwd}/data.csv", "content": "WHOLE_FILE"}},
        },
        {"type": "last-prompt", "lastPrompt": "hi", "leafUuid": "r1", "sessionId": ID},
        {"type": "cost-state", "totalCostUSD": 0.5, "sessionId": ID},
    ]  # fmt: skip
    session = tmp_path / f"{ID}.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return session


def test_the_record_keeps_the_conversation_only(tmp_path: Path) -> None:
    home, cwd = tmp_path / "home" / "ada", tmp_path / "work" / "project"
    session = _machine_session(tmp_path, home, cwd)
    places = machine_places(str(cwd), {"HOME": str(home)})
    record = pack(session, ID, 100_000, secrets=(), places=places)
    raw = gzip.decompress(base64.b64decode(record["data"])).decode()
    for private in (
        "GLOBAL_CLAUDE_MD_MARKER", "SYSTEM_PROMPT_MARKER", "MARK", "WHOLE_FILE", "CLAUDE.md",
        "secret-plans", str(tmp_path), "ada", "Linux", "req_1", "queue-operation", "cost-state",
    ):  # fmt: skip
        assert private not in raw, private
    lines = [json.loads(line) for line in raw.splitlines()]
    assert [line["type"] for line in lines] == ["user", "assistant", "user"]
    # The chain skips the lines left out: the answer's parent is the prompt.
    assert [line["parentUuid"] for line in lines] == [None, "u1", "m1"]
    assert lines[1]["message"]["content"][0]["input"] == {"file_path": "./data.csv"}
    assert all(set(line) <= {*LINE, "parentUuid", "sessionId", "version"} for line in lines)


def test_a_folder_is_replaced_only_where_its_name_ends(tmp_path: Path) -> None:
    session = tmp_path / f"{ID}.jsonl"
    text = "see /home/ada/x, /home/adam/y, /home/ada and /home/ada-old"
    session.write_text(json.dumps({**LINE, "message": {"content": text}}) + "\n")
    record = pack(session, ID, 10_000, (), machine_places("/w", {"HOME": "/home/ada"}))
    raw = gzip.decompress(base64.b64decode(record["data"])).decode()
    assert json.loads(raw)["message"]["content"] == ("see ~/x, /home/adam/y, ~ and /home/ada-old")
