"""``mcp__byre__edit_notebook`` (docs/bridge.md): the batch is checked in the kernel before
anything is shown (shape, bounds, cells, ids), resolved against the cells on screen into the
review the user approves, applied through the bridge only when approved (or under acceptEdits),
and never written to the file without a bridge: VS Code's single insert, headless proposals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.frontend import FakePage
from support.toolkit import text_of

from byre_jupyter.session.mcp import ToolResult
from byre_jupyter.session.permissions import Allow, Deny
from byre_jupyter.tools import EditApproval, ToolApproval, kernel_tools
from byre_jupyter.tools.notebook import Cell
from byre_jupyter.tools.notebook_edit import (
    MAX_EDIT_CHARS,
    MAX_EDITS,
    Delete,
    Insert,
    Replace,
    change_diff,
    parse_edits,
    plan_edits,
)

from .test_notebook_tool import code, notebook_file

SECRET = "sk-ant-api03-" + "y" * 60
CELLS = [
    code("a", "x = 1\nprint(x)", 1),
    code("ask", "%%claude\nadd a plot", 2),
    {"id": "m", "cell_type": "markdown", "source": "# Notes", "metadata": {}},
]


def _cells(raw: list[dict[str, Any]]) -> list[Cell]:
    return [Cell(c["id"], c["cell_type"], c["source"], c.get("execution_count")) for c in raw]


# --- the batch, checked before anything is shown --------------------------------------------


def test_a_well_formed_batch_parses_in_order() -> None:
    edits = parse_edits(
        {
            "edits": [
                {"insert": {"after": None, "cell_type": "code", "source": "y = 2", "id": "n-1"}},
                {"replace": {"cell": "a", "old": "x = 1", "new": "x = 3"}},
                {"delete": {"cell": "m"}},
            ]
        }
    )
    assert edits == (
        Insert(None, "code", "y = 2", "n-1"),
        Replace("a", "x = 1", "x = 3"),
        Delete("m"),
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ({}, "non-empty list"),
        ({"edits": []}, "non-empty list"),
        ({"edits": [{"insert": {}, "delete": {"cell": "a"}}]}, "one key"),
        ({"edits": [{"move": {"cell": "a"}}]}, "unknown edit 'move'"),
        ({"edits": [{"insert": {"after": 3, "cell_type": "code", "source": ""}}]}, "`after`"),
        ({"edits": [{"insert": {"after": None, "cell_type": "raw", "source": ""}}]}, "cell_type"),
        ({"edits": [{"insert": {"after": None, "cell_type": "code"}}]}, "`source`"),
        ({"edits": [{"replace": {"cell": "a", "old": "", "new": "x"}}]}, "`old` must be"),
        ({"edits": [{"replace": {"cell": "a", "old": "x", "new": "x"}}]}, "the same"),
        ({"edits": [{"replace": {"cell": "a", "old": "x", "new": 1}}]}, "`new`"),
        ({"edits": [{"delete": {"cell": ["a"]}}]}, "`cell`"),
        ({"edits": ["delete a"]}, "one key"),
    ],
)
def test_a_malformed_edit_is_a_clear_error(args: dict[str, Any], words: str) -> None:
    error = parse_edits(args)
    assert isinstance(error, str) and words in error, error


@pytest.mark.parametrize(
    "bad", ["", "has space", "a/b", "x" * 65, "<img src=x>", "é", 12, "cell\n2"]
)
def test_a_new_id_that_is_not_nbformat_valid_is_refused(bad: object) -> None:
    error = parse_edits(
        {"edits": [{"insert": {"after": None, "cell_type": "code", "source": "", "id": bad}}]}
    )
    assert isinstance(error, str) and "not a valid nbformat cell id" in error, error


def test_a_batch_of_thousands_of_cells_or_megabytes_is_bounded() -> None:
    many = [{"delete": {"cell": f"c{n}"}} for n in range(5_000)]
    error = parse_edits({"edits": many})
    assert isinstance(error, str) and f"at most {MAX_EDITS}" in error and "5,000" in error
    huge = "x" * (MAX_EDIT_CHARS // 2 + 1)
    two = [
        {"insert": {"after": None, "cell_type": "code", "source": huge}},
        {"insert": {"after": None, "cell_type": "code", "source": huge}},
    ]
    error = parse_edits({"edits": two})
    assert isinstance(error, str) and f"{MAX_EDIT_CHARS:,} characters" in error
    assert len(error) < 300  # the error names the bound, not the megabytes


# --- resolved against the cells on screen ----------------------------------------------------


def test_the_plan_resolves_places_ids_and_each_cells_before_and_after() -> None:
    edits = parse_edits(
        {
            "edits": [
                {"insert": {"after": None, "cell_type": "code", "source": "plot()"}},
                {"insert": {"after": "m", "cell_type": "markdown", "source": "## B", "id": "b"}},
                {"replace": {"cell": "b", "old": "B", "new": "Bee"}},
                {"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}},
                {"delete": {"cell": "m"}},
            ]
        }
    )
    assert not isinstance(edits, str)
    planned = plan_edits(edits, _cells(CELLS), "ask", new_id=lambda taken: "gen-1")
    assert not isinstance(planned, str), planned
    resolved, changes = planned
    assert resolved[0] == Insert("ask", "code", "plot()", "gen-1")  # null: below the asking cell
    assert [(c.cell, c.action, c.before, c.after, c.below) for c in changes] == [
        ("gen-1", "insert", "", "plot()", "ask"),
        ("b", "insert", "", "## Bee", "m"),
        ("a", "replace", "x = 1\nprint(x)", "x = 2\nprint(x)", None),
        ("m", "delete", "# Notes", "", None),
    ]


@pytest.mark.parametrize(
    ("edit", "asking", "words"),
    [
        ({"replace": {"cell": "zz", "old": "a", "new": "b"}}, "ask", "no cell with id 'zz'"),
        ({"delete": {"cell": "ask"}}, "ask", "cannot be deleted"),
        ({"replace": {"cell": "a", "old": "y = 1", "new": "b"}}, "ask", "does not occur"),
        ({"replace": {"cell": "a", "old": "x", "new": "b"}}, "ask", "occurs 2 times"),
        (
            {"insert": {"after": None, "cell_type": "code", "source": ""}},
            None,
            "give a cell id",
        ),
        (
            {"insert": {"after": "a", "cell_type": "code", "source": "", "id": "m"}},
            "ask",
            "already used",
        ),
    ],
)
def test_an_edit_that_does_not_fit_the_notebook_is_refused(
    edit: dict[str, Any], asking: str | None, words: str
) -> None:
    edits = parse_edits({"edits": [edit]})
    assert not isinstance(edits, str)
    error = plan_edits(edits, _cells(CELLS), asking)
    assert isinstance(error, str) and words in error, error


def test_ids_are_unique_within_the_batch_and_deleted_cells_stay_gone() -> None:
    twice = {"insert": {"after": "a", "cell_type": "code", "source": "", "id": "new"}}
    edits = parse_edits({"edits": [twice, twice]})
    assert not isinstance(edits, str)
    error = plan_edits(edits, _cells(CELLS), "ask")
    assert isinstance(error, str) and "Edit 2" in error and "already used" in error
    edits = parse_edits({"edits": [{"delete": {"cell": "m"}}, {"delete": {"cell": "m"}}]})
    assert not isinstance(edits, str)
    error = plan_edits(edits, _cells(CELLS), "ask")
    assert isinstance(error, str) and "deleted by an earlier edit" in error


def test_a_cell_diff_holds_both_versions_whole() -> None:
    long = "".join(f"line {n}\n" for n in range(200))
    edits = parse_edits({"edits": [{"replace": {"cell": "a", "old": "line 100", "new": "LINE"}}]})
    assert not isinstance(edits, str)
    planned = plan_edits(edits, [Cell("a", "code", long, None)], None)
    assert not isinstance(planned, str)
    diff = change_diff(planned[1][0])
    assert "-line 100" in diff and "+LINE" in diff
    assert " line 0" in diff and " line 199" in diff  # every line, not 3 of context


# --- the tool --------------------------------------------------------------------------------


def edit_tool(
    shell: Any,
    *,
    approve: Any = None,
    policy: str = "ask",
    path: str | None = None,
    on_edited: Any = None,
) -> Any:
    tools = kernel_tools(
        shell,
        on_edited=on_edited,
        approve=approve,
        notebook_path=lambda: path,
        asking_cell=lambda: "ask",
        edit_policy=lambda: policy,
        provenance=lambda: {"conversation": "conv-1", "turn": 3},
    )
    return {t.name: t for t in tools}["edit_notebook"]


INSERT = {"insert": {"after": None, "cell_type": "code", "source": "plot(x)", "id": "p1"}}


async def call(tool: Any, *edits: dict[str, Any]) -> ToolResult:
    result = await tool.function({"edits": list(edits)})
    assert isinstance(result, ToolResult)
    return result


async def test_an_approved_batch_goes_to_the_bridge_with_provenance(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frontend = FakePage(cells=CELLS, edit_reply={"applied": ["p1", "a"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    asked: list[ToolApproval] = []

    def approve(request: ToolApproval) -> Allow:
        asked.append(request)
        return Allow()

    replace = {"replace": {"cell": "a", "old": "x = 1", "new": f"x = '{SECRET}'"}}
    result = await call(edit_tool(shell, approve=approve), INSERT, replace)
    assert not result.is_error, text_of(result)
    assert "inserted code cell p1 below cell ask" in text_of(result)
    assert "New cell ids: p1." in text_of(result)
    (request,) = asked
    assert isinstance(request, EditApproval)
    review = request.input["cells"]
    assert [c["cell"] for c in review] == ["p1", "a"]
    assert review[1]["before"] == "x = 1\nprint(x)"
    # The card shows what runs, whole: it is not saved (the decision's summary is, redacted).
    assert review[1]["after"] == f"x = '{SECRET}'\nprint(x)"
    (sent,) = frontend.edits
    assert sent["provenance"] == {"conversation": "conv-1", "turn": 3}
    # The replaced cell as the review showed it: the frontend refuses the batch if that cell
    # holds anything else by then (another person's typing on a shared notebook).
    assert sent["reviewed"] == {"a": "x = 1\nprint(x)"}
    assert sent["edits"][0] == {
        "insert": {"after": "ask", "cell_type": "code", "source": "plot(x)", "id": "p1"}
    }
    assert sent["edits"][1]["replace"]["new"] == f"x = '{SECRET}'"  # the edit itself, whole


async def test_only_a_batch_that_landed_goes_to_the_edit_log(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    logged: list[Any] = []
    tool = edit_tool(shell, approve=lambda r: Allow(), on_edited=lambda *a: logged.append(a))
    landed = FakePage(cells=CELLS, edit_reply={"applied": ["p1"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: landed.bridge)
    assert not (await call(tool, INSERT)).is_error
    ((provenance, changes, order),) = logged
    assert provenance == {"conversation": "conv-1", "turn": 3}
    assert [(c.cell, c.action, c.after, c.below) for c in changes] == [
        ("p1", "insert", "plot(x)", "ask")
    ]
    assert order == ("a", "ask", "m")
    refused = FakePage(
        cells=CELLS, edit_reply={"refused": "cell a changed since you read it"}, dirty=False
    ).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: refused.bridge)
    assert (await call(tool, INSERT)).is_error
    assert len(logged) == 1


async def test_the_prompt_in_the_provenance_is_redacted_like_the_record(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The turn's prompt is saved into each changed cell's metadata: a credential in it is
    redacted there as in the cell's record, and the result is still within the page's 200."""
    frontend = FakePage(cells=CELLS, edit_reply={"applied": ["p1"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    prompt = f"use key {SECRET} to plot " + "x" * 300
    tools = kernel_tools(
        shell,
        approve=lambda r: Allow(),
        asking_cell=lambda: "ask",
        provenance=lambda: {"conversation": "conv-1", "turn": 3, "prompt": prompt},
    )
    tool = {t.name: t for t in tools}["edit_notebook"]
    assert not (await call(tool, INSERT)).is_error
    (sent,) = frontend.edits
    stored = sent["provenance"]["prompt"]
    assert SECRET not in stored and stored.startswith("use key [redacted] to plot xx"), stored
    assert len(stored) <= 200


async def test_a_denied_batch_changes_nothing(shell: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    frontend = FakePage(cells=CELLS, edit_reply={"applied": []}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    result = await call(edit_tool(shell, approve=lambda r: Deny("not now")), INSERT)
    assert result.is_error and "not now" in text_of(result)
    assert frontend.edits == []


async def test_accept_edits_applies_without_asking(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frontend = FakePage(cells=CELLS, edit_reply={"applied": ["p1"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)

    def never(request: ToolApproval) -> bool:
        raise AssertionError("asked under acceptEdits")

    result = await call(edit_tool(shell, approve=never, policy="allow"), INSERT)
    assert not result.is_error and len(frontend.edits) == 1


@pytest.mark.parametrize(
    ("edit", "fields"),
    [
        # The finding: under acceptEdits this applied unseen; the next run of that cell sends
        # the whole environment.
        ({"replace": {"cell": "older", "old": "{df}", "new": "{df} {os.environ}"}},
         ["os.environ"]),
        ({"replace": {"cell": "a", "old": "x = 1", "new": "%%claude\nsay {obj.prop}"}},
         ["obj.prop"]),
        ({"insert": {"after": "a", "cell_type": "code", "source": "%%time\n%%claude\n{key}"}},
         ["key"]),
        ({"delete": {"cell": "older"}}, []),
    ],
)  # fmt: skip
async def test_an_edit_of_a_cell_that_runs_claude_asks_in_every_mode(
    shell: Any, monkeypatch: pytest.MonkeyPatch, edit: dict[str, Any], fields: list[str]
) -> None:
    cells = [*CELLS, code("older", "%%time\n%%claude\nsummarise {df}", 3)]
    frontend = FakePage(cells=cells, edit_reply={"applied": ["x"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    asked: list[ToolApproval] = []

    def deny(request: ToolApproval) -> Deny:
        asked.append(request)
        return Deny("no")

    # acceptEdits and bypassPermissions are edit_policy "allow" (app/approvals.py).
    result = await call(edit_tool(shell, approve=deny, policy="allow"), edit)
    assert result.is_error and frontend.edits == []
    (request,) = asked
    (cell,) = request.input["cells"]
    assert cell["claude"] is True and cell["fields"] == fields


async def test_a_conflict_the_frontend_found_is_refused_to_the_model(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = 'cell a changed since you read it: "x = 1" no longer occurs in it'
    frontend = FakePage(cells=CELLS, edit_reply={"refused": refused}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    replace = {"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}}
    result = await call(edit_tool(shell, approve=lambda r: True), replace)
    assert result.is_error
    assert refused in text_of(result) and "Nothing of this batch changed" in text_of(result)


async def test_a_bad_batch_is_refused_before_anything_is_shown(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frontend = FakePage(cells=CELLS, edit_reply={"applied": []}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)

    def never(request: ToolApproval) -> bool:
        raise AssertionError("a bad batch reached the card")

    tool = edit_tool(shell, approve=never)
    result = await call(tool, {"replace": {"cell": "nope", "old": "a", "new": "b"}})
    assert result.is_error and "no cell with id 'nope'" in text_of(result)
    taken = {"insert": {"after": "a", "cell_type": "code", "source": "", "id": "a"}}
    result = await call(tool, taken)
    assert result.is_error and "already used" in text_of(result)
    assert frontend.edits == []


async def test_headless_records_the_proposed_edits_and_leaves_the_file(
    shell: Any, tmp_path: Path
) -> None:
    path = notebook_file(tmp_path, CELLS)
    before = Path(path).read_bytes()

    def never(request: ToolApproval) -> bool:
        raise AssertionError("nobody can click in a headless run")

    replace = {"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}}
    result = await call(edit_tool(shell, approve=never, path=path), INSERT, replace)
    text = text_of(result)
    assert result.is_error and "Not applied" in text and "headless" in text
    assert "+plot(x)" in text and "-x = 1" in text and "+x = 2" in text
    assert Path(path).read_bytes() == before


async def test_vs_code_gets_a_single_insert_as_the_next_input(
    shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = notebook_file(tmp_path, CELLS)
    before = Path(path).read_bytes()
    shell.user_ns["__vsc_ipynb_file__"] = path
    handed: list[str] = []
    monkeypatch.setattr(shell, "set_next_input", lambda text, replace=False: handed.append(text))
    tool = edit_tool(shell, approve=lambda r: True, path=path)
    result = await call(tool, INSERT)
    assert not result.is_error and "set_next_input" in text_of(result)
    assert handed == ["plot(x)"]
    replace = {"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}}
    result = await call(tool, replace)
    assert result.is_error and "VS Code" in text_of(result) and "+x = 2" in text_of(result)
    assert "Copy button" in text_of(result)
    assert handed == ["plot(x)"] and Path(path).read_bytes() == before


async def test_a_bridge_that_does_not_answer_the_read_applies_nothing_and_says_why(
    shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = notebook_file(tmp_path, CELLS)
    failing = FakePage(path="p", error="no model").connect()
    bridge, comm = failing.bridge, failing.comm
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: bridge)
    result = await call(edit_tool(shell, approve=lambda r: True, path=path), INSERT)
    text = text_of(result)
    assert result.is_error and "Not applied" in text and "did not answer" in text, text
    assert "no model" in text and "+plot(x)" in text
    assert [m["method"] for m in comm.sent] == ["read"]  # no edit was sent


# Code between two comments that look like a PEM block. The review once showed three
# of these five lines (the redactor swallowed the rest) while Allow once inserted all five.
HIDDEN_CALL = (
    "# -----BEGIN PRIVATE KEY-----\n"
    "import urllib.request\n"
    'urllib.request.urlopen("http://127.0.0.1:9/count")\n'
    "# -----END PRIVATE KEY-----\n"
    "token = 'abc123'; print(token)"
)


async def test_the_review_shows_every_line_that_will_be_inserted(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    frontend = FakePage(cells=CELLS, edit_reply={"applied": ["h1"]}, dirty=False).connect()
    monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
    asked: list[ToolApproval] = []

    def approve(request: ToolApproval) -> Allow:
        asked.append(request)
        return Allow()

    insert = {"insert": {"after": None, "cell_type": "code", "source": HIDDEN_CALL, "id": "h1"}}
    result = await call(edit_tool(shell, approve=approve), insert)
    assert not result.is_error, text_of(result)
    (request,) = asked
    assert isinstance(request, EditApproval)
    (cell,) = request.input["cells"]
    (sent,) = frontend.edits
    assert cell["after"] == sent["edits"][0]["insert"]["source"] == HIDDEN_CALL


async def test_the_outcome_of_an_allowed_batch_is_heard_applied_or_refused(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[tuple[str, str | None]] = []

    def tool(frontend: FakePage, policy: str = "ask") -> Any:
        monkeypatch.setattr("byre_jupyter.tools.spec.bridge_of", lambda s: frontend.bridge)
        tools = kernel_tools(
            shell,
            approve=lambda r: Allow(),
            asking_cell=lambda: "ask",
            edit_policy=lambda: policy,
            edit_outcome=lambda review, decision, problem: heard.append(
                (review["cells"][0]["cell"], problem)
            ),
        )
        return {t.name: t for t in tools}["edit_notebook"]

    replace = {"replace": {"cell": "a", "old": "x = 1", "new": "x = 2"}}
    refused = "cell a changed since you read it"
    assert (
        await call(
            tool(FakePage(cells=CELLS, edit_reply={"refused": refused}, dirty=False).connect()),
            replace,
        )
    ).is_error
    assert not (
        await call(
            tool(FakePage(cells=CELLS, edit_reply={"applied": []}, dirty=False).connect()), replace
        )
    ).is_error
    assert heard == [("a", f"the notebook refused it: {refused}"), ("a", None)]
    # Under acceptEdits nobody was asked: no line is owed.
    await call(
        tool(
            FakePage(cells=CELLS, edit_reply={"applied": []}, dirty=False).connect(), policy="allow"
        ),
        replace,
    )
    assert len(heard) == 2
