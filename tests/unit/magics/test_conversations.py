"""``%claude conversations`` and ``%claude resume [NAME] #N`` over session files in a tmp HOME.

The files are written here the way CLI 2.1.328 writes them (one JSON entry a line: ``user``,
``assistant``, ``cost-state`` ...), and hostile ones besides: prompts with pipes, backticks and
HTML, a 5 MB line, invalid JSON, an empty file. A plain InteractiveShell; no CLI starts.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from support.hostile_markdown import loaders

import byre_jupyter.magics as magics_pkg
from byre_jupyter.app import picker
from byre_jupyter.app.portable import project_folder, projects_root
from byre_jupyter.session.accounting import SCRIPTED_COST
from byre_jupyter.session.index import ResumeIndex, resume_keys


def user(text: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, **extra}


def assistant(text: str, msg_id: str = "msg_01abc") -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    return {"type": "assistant", "message": {"id": msg_id, "role": "assistant", "content": content}}


def cost(usd: float) -> dict[str, Any]:
    return {"type": "cost-state", "totalCostUSD": usd}


TOOL_RESULT = user([{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])


@pytest.fixture
def folder(shell: InteractiveShell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI's projects folder for the extension's cwd, under a tmp HOME."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    magics_pkg.extension().config.cwd = str(work)
    path = projects_root(os.environ) / project_folder(str(work))
    path.mkdir(parents=True)
    return path


def write(folder: Path, sid: str, age: float, lines: list[Any]) -> Path:
    """A session file last written ``age`` seconds ago, its entries as compact as the CLI writes
    them (``bytes`` lines go in as they are)."""
    path = folder / f"{sid}.jsonl"
    with open(path, "wb") as f:
        for line in lines:
            if not isinstance(line, bytes):
                line = json.dumps(line, separators=(",", ":")).encode() + b"\n"
            f.write(line)
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def table(markdown: str) -> list[list[str]]:
    """The rendered table's rows as cell texts (what a notebook shows)."""
    html = markdown2html_mistune(markdown)
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.S)
    return [re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, re.S) for row in rows]


def listing(shell: InteractiveShell, capsys: pytest.CaptureFixture[str], line: str = "") -> str:
    shell.run_line_magic("claude", f"conversations {line}".strip())
    return capsys.readouterr().out


def test_lists_newest_first_with_prompt_turns_cost_and_origin(
    shell: InteractiveShell, folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ext = magics_pkg.extension()
    cwd = ext.cwd()
    write(folder, "mine", 7200, [user("plot the sales"), assistant("done"), TOOL_RESULT,
                                 user("now by month"), assistant("ok"), cost(0.05)])  # fmt: skip
    write(folder, "theirs", 60, [user("clean the data"), assistant("x", "msg_scripted_1"),
                                 cost(0.049)])  # fmt: skip
    caveat = user("<local-command-caveat>The command below was run …</local-command-caveat>",
                  isMeta=True)  # fmt: skip
    command = user("<command-name>/compact</command-name>\n  <command-message>compact"
                   "</command-message>\n  <command-args>keep the plan</command-args>")  # fmt: skip
    write(folder, "terminal", 3 * 86400, [caveat, command, user("fix the tests"), assistant("ok")])
    write(folder, "relative", 4 * 86400, [user("from a client without absolute paths")])
    index = ResumeIndex(ext.state_file())
    index.set(resume_keys("default", cwd, None)[0], "mine")  # this kernel (no notebook)
    index.set(resume_keys("review", cwd, "/home/u/other.ipynb")[0], "theirs")
    index.set(resume_keys("default", cwd, "sub/rel.ipynb")[0], "relative")
    header, *rows = table(listing(shell, capsys))
    assert header == ["#", "when", "first prompt", "turns", "cost", "from"]
    assert [r[2] for r in rows][:3] == [
        "clean the data",
        "plot the sales",
        "/compact keep the plan",
    ]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert [r[3] for r in rows][:3] == ["1", "2", "2"]  # tool results and meta lines are none
    # The scripted model's figure is the CLI pricing tokens nobody paid for: no dollars.
    assert [r[4] for r in rows][:3] == [f"$0.0490 {SCRIPTED_COST}", "$0.0500", ""]
    assert rows[0][5] == "notebook /home/u/other.ipynb, session review"
    assert rows[1][5] == "this notebook, session default"
    assert rows[2][5] == "terminal"
    assert rows[3][5] == "notebook sub/rel.ipynb, session default"
    assert "1 min ago" in rows[0][1] and "2 h ago" in rows[1][1] and "3 days ago" in rows[2][1]


def test_hostile_files_are_listed_inert_and_never_fail_the_magic(
    shell: InteractiveShell,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    parsed: list[int] = []  # the length of every line the listing parses

    def loads(line: bytes) -> Any:
        parsed.append(len(line))
        return json.loads(line)

    monkeypatch.setattr(picker, "json", SimpleNamespace(loads=loads))
    hostile = "a | b `code` <img src=x onerror=alert(1)> <b>bold</b> [l](http://e.x) $x$"
    huge = user("A" * (5 * 2**20))
    write(folder, "hostile", 10, [user(hostile), b"{not json\n", b"\xff\xfe garbage\n",
                                  b"[1, 2]\n", user("second | prompt")])  # fmt: skip
    write(folder, "huge", 20, [huge, user("after the huge one")])
    write(folder, "empty", 30, [])
    write(folder, "blocks", 40, [user([{"type": "text", "text": "from blocks\nwith <i>lines</i>"},
                                       {"type": "image", "source": {}}])])  # fmt: skip
    markdown = listing(shell, capsys)
    header, *rows = table(markdown)
    assert len(rows) == 4 and all(len(r) == len(header) for r in rows), markdown
    by_id = dict(zip(["hostile", "huge", "empty", "blocks"], rows, strict=True))
    assert by_id["hostile"][3] == "2"  # the damaged lines are skipped, the rest counted
    assert "&lt;b&gt;bold&lt;/b&gt;" in by_id["hostile"][2]  # text, not a tag
    assert "`code`" in by_id["hostile"][2] and "a | b" in by_id["hostile"][2]
    assert loaders(markdown2html_mistune(markdown)) == []
    # The 5 MB prompt is not parsed, only previewed from its head, on one short line.
    assert (
        by_id["huge"][2].startswith("AAAA")
        and len(by_id["huge"][2]) <= magics_pkg.magics.PREVIEW_CHARS
    )
    assert by_id["huge"][2].endswith("…") and by_id["huge"][3] == "2"
    assert parsed and max(parsed) < 2**20  # the 5 MB line was never parsed
    assert by_id["empty"][2:4] == ["<em>(none read)</em>", "0"]
    assert by_id["blocks"][2] == "from blocks with &lt;i&gt;lines&lt;/i&gt;"


def test_a_file_past_the_scan_budget_shows_what_was_read(
    shell: InteractiveShell,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(picker, "SCAN_BUDGET", 4096)
    write(folder, "long", 10, [user(f"prompt {i}") for i in range(500)] + [cost(1.25)])
    write(folder, "one long line", 20, [user("B" * 2 * picker.LINE_CAP)])
    row, long_line = table(listing(shell, capsys))[1:]
    assert long_line[2].startswith("BBB") and long_line[3] == "≥ 1"
    assert row[2] == "prompt 0"
    turns = row[3]
    assert turns.startswith("≥ ") and 0 < int(turns[2:]) < 500
    assert row[4] == "$1.2500"  # the CLI's last figure, from the file's tail


def test_the_list_is_capped_and_all_lists_every_one(
    shell: InteractiveShell, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(magics_pkg.magics.LISTED + 3):
        write(folder, f"c{i:02}", i * 60, [user(f"number {i}")])
    out = listing(shell, capsys)
    assert len(table(out)) == 1 + magics_pkg.magics.LISTED and "--all" in out
    assert len(table(listing(shell, capsys, "--all"))) == 1 + magics_pkg.magics.LISTED + 3


def test_resume_hash_n_takes_the_numbered_conversation(
    shell: InteractiveShell, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for age, sid in enumerate(["newest", "middle", "oldest"]):
        write(folder, sid, age * 60, [user(sid)])
    ext = magics_pkg.extension()
    # Without a listing, a fresh one is numbered the same way.
    shell.run_line_magic("claude", "resume #3")
    assert ext.conversations.peek("default").session_id == "oldest"
    listing(shell, capsys)
    write(folder, "newer still", 0, [user("x")])  # the last listing's numbers hold
    shell.run_line_magic("claude", "resume review #2")
    assert ext.conversations.peek("review").session_id == "middle"
    assert "resumes conversation middle" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("resume #0", "no conversation #0 in the listing (#1 to #2)"),
        ("resume #3", "no conversation #3"),
        ("resume review #x", "is no number"),
        ("resume #1 #2", "the session comes first"),
        ("resume #1 --from nb.ipynb", "not both"),
    ],
)
def test_a_bad_number_is_a_usage_error_and_the_session_stays(
    shell: InteractiveShell,
    folder: Path,
    capsys: pytest.CaptureFixture[str],
    line: str,
    message: str,
) -> None:
    for age, sid in enumerate(["one", "two"]):
        write(folder, sid, age * 60, [user(sid)])
    ext = magics_pkg.extension()
    session = ext.session("default")
    listing(shell, capsys)
    with pytest.raises(UsageError, match=re.escape(message)):
        shell.run_line_magic("claude", line)
    assert ext.conversations.peek("default") is session and not session.closed
    shell.run_line_magic("claude", "resume #1")  # still usable
    assert ext.conversations.peek("default").session_id == "one"


def test_an_empty_folder_says_so(
    shell: InteractiveShell, folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no conversation" in listing(shell, capsys)
    with pytest.raises(UsageError, match=re.escape("(none)")):
        shell.run_line_magic("claude", "resume #1")
