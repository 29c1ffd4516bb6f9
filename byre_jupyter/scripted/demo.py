"""The scripted model behind the offline demo notebook.

``demo_script()`` returns a :class:`~byre_jupyter.scripted.script.Script` for
``ScriptedAPI(script=demo_script())`` or ``python -m byre_jupyter.scripted --script demo``.
Every reply's text starts with ``*(scripted model: offline demo)*`` so nobody mistakes it for
Claude.

How a request is answered, checked top to bottom (keywords are case-insensitive and match at
the start of a word in the text of the last ``role == "user"`` message):

======================================  ===================================================
request                                 reply
======================================  ===================================================
the CLI asks for a summary (compaction) a short ``<summary>`` (``/compact``'s notice)
a notebook step answered (the ``fix``   the next step, as Claude does it: read → insert;
and ``add a cell`` prompts below)       or read → ``edit_notebook`` replace → ``run_cells``
last user message carries tool results  the follow-up for that tool (never the tool call
                                        again, otherwise the CLI would loop):
                                        Bash → quotes the output; in a subagent → "Found the
                                        files."; Read → describes the image / error;
                                        python tool → quotes the result text; Agent →
                                        summarises the subagent's report; other → quotes it
first user message has SUBAGENT_TASK    (the subagent's own request) ToolUse Bash ``ls``
user attached image blocks             "I can see the N image(s) you attached"
``Variable ``` context (``--with``)     quotes the attached variable summaries
``create`` / ``file``                   ToolUse Bash writing made_by_claude.txt (needs
                                        permission in the default mode)
``agent`` / ``subagent``                ToolUse Agent (general-purpose, foreground) with
                                        prompt ``SUBAGENT_TASK: list files``
``fix`` / ``error``                     (what *Ask Claude* asks) ToolUse ``notebook`` on
                                        the whole notebook, then the steps above: the cell
                                        whose source holds ``BROKEN`` is fixed and run again
``read the notebook`` / ``cells``       ToolUse ``mcp__byre__notebook`` (whole notebook)
``add a cell`` / ``insert``             ToolUse ``notebook``, then ``edit_notebook``: one
                                        code cell below the asking cell (a reviewed edit)
``python`` / ``kernel``                 ToolUse ``mcp__byre__python`` (``python_tool``)
                                        with a snippet: ``sum(range(10))`` and a matplotlib
                                        plot
``image`` / ``png``                     ToolUse Read on the first ``*.png`` path in the
                                        prompt, else ``plot.png``
``bash`` / ``shell``                    ToolUse Bash ``echo hello from bash && uname -s``
``question`` / ``choose``               ToolUse AskUserQuestion: one single-choice question
                                        and one multi-select (the question card)
``plan``                                in plan mode: ToolUse Write of ``PLAN_MD`` to the plan
                                        file the CLI's reminder names, then ExitPlanMode
                                        (the plan card); otherwise ToolUse EnterPlanMode
``think``                               a thinking block, then text
``slow`` / ``long``                     ~2000 characters at 20 ms per 4-char chunk (~10 s)
``hello`` / anything else               Markdown: heading, list, code block, table; 2 ms
                                        per 4-char chunk so the streaming is visible
======================================  ===================================================

The kernel tool's API name depends on how byre names its SDK MCP tool; pass
``demo_script(python_tool=...)`` (or ``--python-tool``) if it is not ``mcp__byre__python``.
The CLI runs a directly called MCP tool even when it is deferred behind ToolSearch
(measured with CLI 2.1.328), so the demo needs no ToolSearch round trip.
"""

from __future__ import annotations

import re
import textwrap

from ..protocol.messages import without_image_notes
from .script import Action, Reply, Script, ScriptedRequest, Text, Thinking, ToolResultInfo, ToolUse

__all__ = ["BANNER", "BROKEN", "DEFAULT_PYTHON_TOOL", "SUBAGENT_MARKER", "demo_script"]

BANNER = "*(scripted model: offline demo)*"
SUBAGENT_MARKER = "SUBAGENT_TASK"
# The API-side name of byre's kernel tool: "mcp__<server>__<tool>".
DEFAULT_PYTHON_TOOL = "mcp__byre__python"

# The notebook tools' API names (tools/catalog.py registers them on the same server).
NOTEBOOK_TOOL = "mcp__byre__notebook"
EDIT_TOOL = "mcp__byre__edit_notebook"
RUN_TOOL = "mcp__byre__run_cells"
#: The typo in the demo notebook's failing cell, and its fix: what the scripted ``fix`` edits.
BROKEN = "totl"
FIXED = "total"
#: The cell ``add a cell`` inserts below the asking cell.
NEW_CELL = "squares = [x * x for x in range(10)]\nsquares"

# Streaming pace: 4-character deltas, 2 ms apart (visible streaming) or 20 ms apart (~10 s).
CHUNK = 4
FAST_DELAY = 0.002
SLOW_DELAY = 0.02

PYTHON_SNIPPET = textwrap.dedent(
    """\
    total = sum(range(10))
    print("sum(range(10)) =", total)

    import matplotlib.pyplot as plt
    xs = list(range(10))
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot(xs, [x * x for x in xs], marker="o")
    ax.set_title("x squared")
    plt.show()
    """
)

HELLO_MD = textwrap.dedent(
    """\
    ## Hello from the offline demo

    This answer comes from a **scripted** fake model on your own machine; no request left it.
    The `claude` CLI is real, though: it streams these words into the cell as they arrive.

    Things to try in the next cell:

    - `bash`: run a shell command through the Bash tool
    - `python`: run code in this notebook's kernel
    - `image plot.png`: read a picture with the Read tool
    - `agent`: hand work to a subagent
    - `think`: show a thinking block
    - `slow`: a long answer you can stop with the ■ button

    ```python
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    print(greet("notebook"))
    ```

    | keyword | tool        | what you see            |
    |---------|-------------|-------------------------|
    | bash    | Bash        | command and its output  |
    | python  | kernel      | stdout and a plot       |
    | image   | Read        | the picture inline      |
    | agent   | Agent       | a nested subagent run   |

    That is all: a few paragraphs, a list, a code block and a table.
    """
)

#: The scripted model's answer to a compaction (``/compact``): the CLI keeps it as the summary.
COMPACT_SUMMARY = (
    "<summary>The user toured byre_jupyter's features with a scripted model.</summary>"
)

LONG_PARAGRAPH = (
    "This is a deliberately long answer from the scripted model, streamed slowly so that "
    "you can watch it arrive and try the stop button while it is still going. "
)


def _banner(body: str) -> str:
    return f"{BANNER}\n\n{body}"


_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def _word(req: ScriptedRequest, *words: str) -> bool:
    # Only the user's own words: the CLI adds <system-reminder> blocks (CLAUDE.md files, skills)
    # to the same message, and their words must not trigger a scripted tool call.
    text = _REMINDER.sub("", req.last_user_text)
    return any(re.search(rf"\b{re.escape(w)}", text, re.IGNORECASE) for w in words)


def _attached_images(req: ScriptedRequest) -> int:
    """How many image blocks the user attached to the last message (not tool results)."""
    message = req.last_user_message or {}
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("type") == "image")


def _png_path(text: str) -> str:
    m = re.search(r"""([^\s'"`<>()\[\]]+\.png)\b""", text, re.IGNORECASE)
    return m.group(1) if m else "plot.png"


def _fence(text: str) -> str:
    # A model quoting tool output leaves out the CLI's image-source notes.
    body = without_image_notes(text).strip("\n") or "(no output)"
    return f"```\n{body}\n```"


def _subagent_report(text: str) -> str:
    """The subagent's own words from the Agent tool_result.

    The CLI wraps them: ``<tools-used-before-summary>…`` and a "[Subagent hand-back] … The
    report follows:" frame, the report indented by two spaces, then ``agentId: …`` and a
    ``<usage>`` block (seen with CLI 2.1.328).
    """
    _, found, rest = text.partition("The report follows:\n")
    body = rest if found else text
    body = body.split("\nagentId:", 1)[0]
    body = textwrap.dedent(body).replace(BANNER, "").strip()
    return body or "(empty report)"


def _follow_up(req: ScriptedRequest, results: list[ToolResultInfo], python_tool: str) -> Action:
    """The text that answers tool results (one reply, even for several results)."""
    parts: list[str] = []
    in_subagent = SUBAGENT_MARKER in req.first_user_text
    for r in results:
        name = r["tool_name"] or "the tool"
        if r["is_error"]:
            parts.append(f"`{name}` reported an error:\n\n{_fence(r['text'])}")
        elif name == "Bash" and in_subagent:
            parts.append("Found the files.")
        elif name == "Bash":
            parts.append(f"The command ran. It printed:\n\n{_fence(r['text'])}")
        elif name == "Read":
            what = "an image, shown above" if r["has_image"] else "this"
            parts.append(f"I read the file; it is {what}.")
            if r["text"].strip():
                parts.append(_fence(r["text"]))
        elif name == python_tool:
            extra = " It also drew a plot." if r["has_image"] else ""
            parts.append(f"The kernel ran the code and answered:\n\n{_fence(r['text'])}\n{extra}")
        elif name == NOTEBOOK_TOOL:
            cells = len(_CELL_HEAD.findall(r["text"]))
            head = r["text"].split("\n", 1)[0]
            parts.append(f"I read the notebook: {cells} code cells. Its first line:\n\n> {head}")
        elif name == EDIT_TOOL:
            parts.append(f"The edit's result:\n\n{_fence(r['text'])}")
        elif name == RUN_TOOL:
            parts.append(f"The cell ran in place. What it showed:\n\n{_fence(r['text'])}")
        elif name == "Agent":
            report = _subagent_report(r["text"])
            quoted = "\n".join(f"> {line}" for line in report.splitlines())
            parts.append(f"The subagent is done. Its report:\n\n{quoted}")
        else:
            parts.append(f"`{name}` returned:\n\n{_fence(r['text'])}")
    return Reply(Text(_banner("\n\n".join(parts)), chunk=CHUNK, delay=FAST_DELAY))


def _tool_call(intro: str, name: str, tool_input: dict[str, object]) -> Reply:
    return Reply(Text(_banner(intro), chunk=CHUNK, delay=FAST_DELAY), ToolUse(name, tool_input))


#: The demo's questions: one single choice (one click answers it alone) and one multi-select.
QUESTIONS: dict[str, object] = {
    "questions": [
        {
            "question": "Which chart should the report use?",
            "header": "Chart",
            "multiSelect": False,
            "options": [
                {"label": "Line", "description": "a trend over time"},
                {"label": "Bar", "description": "compare the cities"},
            ],
        },
        {
            "question": "What should the report include?",
            "header": "Sections",
            "multiSelect": True,
            "options": [
                {"label": "Summary", "description": "three sentences"},
                {"label": "Table", "description": "the raw numbers"},
                {"label": "Caveats", "description": "what the data cannot say"},
            ],
        },
    ]
}
PLAN_MD = """# Plan: a small sales report

1. **Load** the `sales` table and check the columns.
2. **Plot** units per city as a bar chart.
3. **Write** `report.md` with a summary and the chart.

| Step | Touches |
|---|---|
| 1 | nothing |
| 3 | `report.md` |
"""


_CELL_HEAD = re.compile(r"^--- cell \d+ · id (\S+) · code\b.*---$", re.MULTILINE)


def _cell_with(notebook_text: str, needle: str, *, claude: bool = False) -> str | None:
    """The id of the first code cell whose source holds ``needle`` (a ``%%claude`` cell when
    ``claude``, else any other), in the notebook tool's result (each cell opens with
    ``--- cell N · id ID · code · [n] ---``)."""
    heads = list(_CELL_HEAD.finditer(notebook_text))
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        body = notebook_text[head.end() : after.start() if after else None]
        source = body.split("\n[", 1)[0]  # outputs follow as "[stream]", "[error]", ...
        if needle in source and source.lstrip().startswith("%%claude") == claude:
            return head.group(1)
    return None


def _turn_prompt(req: ScriptedRequest) -> str:
    """The prompt that started the current turn: the last user message with text of its own
    (the tool results that follow it in the same turn carry none)."""
    for message in reversed(req.user_messages):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            continue
        texts = [
            _REMINDER.sub("", str(b.get("text", "")))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        if any(t.strip() for t in texts):
            return "\n".join(texts)
    return ""


_ADD_CELL = re.compile(r"\b(add a cell|insert)", re.IGNORECASE)


def _notebook_step(req: ScriptedRequest, results: list[ToolResultInfo]) -> Action | None:
    """The next step of a turn that works on the notebook, one per request, as Claude does:

    * adding a cell: the notebook read → an insert below the asking ``%%claude`` cell (found
      by its prompt, which a headless run's saved file holds too);
    * the fix *Ask Claude* asks for: the notebook read → an edit that replaces ``BROKEN`` in
      its cell → a run of that cell in place.

    The summary after the last step is ``_follow_up``'s."""
    prompt = _turn_prompt(req)
    (result, *_) = results
    if result["is_error"]:
        return None
    name = result["tool_name"]
    if _ADD_CELL.search(prompt) and name == NOTEBOOK_TOOL:
        first = next((line for line in prompt.splitlines() if line.strip()), "")
        asking = _cell_with(result["text"], first.strip(), claude=True)
        if asking is None:
            return None
        insert = {"after": asking, "cell_type": "code", "source": NEW_CELL}
        return _tool_call(
            "Adding a cell below this one (you review the edit).",
            EDIT_TOOL,
            {"edits": [{"insert": insert}]},
        )
    if not re.search(r"\b(fix|error)", prompt, re.IGNORECASE):
        return None
    if name == NOTEBOOK_TOOL:
        cell = _cell_with(result["text"], BROKEN)
        if cell is None:
            return None
        return _tool_call(
            f"Cell `{cell}` uses `{BROKEN}`, a typo for `{FIXED}`: fixing it (you review the "
            "edit).",
            EDIT_TOOL,
            {"edits": [{"replace": {"cell": cell, "old": BROKEN, "new": FIXED}}]},
        )
    if name == EDIT_TOOL:
        edited = _edited_cell(req)
        if edited is None:
            return None
        return _tool_call("Running the fixed cell in place.", RUN_TOOL, {"cells": [edited]})
    return None


def _edited_cell(req: ScriptedRequest) -> str | None:
    """The cell of this conversation's last ``replace`` edit (the one just answered)."""
    for message in reversed(req.messages):
        content = message.get("content") if message.get("role") == "assistant" else None
        for block in reversed(content if isinstance(content, list) else []):
            if not isinstance(block, dict) or block.get("name") != EDIT_TOOL:
                continue
            edits = (block.get("input") or {}).get("edits") or []
            for edit in reversed(edits):
                if isinstance(edit, dict) and isinstance(edit.get("replace"), dict):
                    return str(edit["replace"].get("cell"))
    return None


def _plan_step(req: ScriptedRequest, results: list[ToolResultInfo]) -> Action | None:
    """Plan as Claude does: a Write of the plan file is followed by ExitPlanMode; an accepted
    EnterPlanMode by writing the plan file the CLI's reminder names."""
    names = {r["tool_name"] for r in results}
    plan_file = req.plan_file
    if "Write" in names and any("/plans/" in r["text"] for r in results):
        return _tool_call("The plan is written: here it is.", "ExitPlanMode", {})
    if "EnterPlanMode" in names and plan_file and not results[0]["is_error"]:
        return _tool_call(
            "Writing the plan.", "Write", {"file_path": plan_file, "content": PLAN_MD}
        )
    return None


def demo_script(python_tool: str = DEFAULT_PYTHON_TOOL) -> Script:
    """A fresh rule set for the offline demo (see the module docstring for the table)."""

    def answer(req: ScriptedRequest) -> Action:
        results = req.last_tool_results
        if req.is_compaction:
            return Reply(Text(COMPACT_SUMMARY))
        if results:
            return (
                _plan_step(req, results)
                or _notebook_step(req, results)
                or _follow_up(req, results, python_tool)
            )
        if SUBAGENT_MARKER in req.last_user_text:
            return _tool_call(
                "Listing the files.", "Bash", {"command": "ls", "description": "List files"}
            )
        if _attached_images(req):
            count = _attached_images(req)
            return Reply(
                Text(
                    _banner(
                        f"I can see the {count} image{'s' if count > 1 else ''} you attached. "
                        "(A real model would describe it here.)"
                    ),
                    chunk=CHUNK,
                    delay=FAST_DELAY,
                )
            )
        attached = _REMINDER.sub("", req.last_user_text)
        if "Variable `" in attached:
            lines = [ln for ln in attached.splitlines() if ln.strip()][:8]
            quoted = "\n".join(f"> {ln}" for ln in lines)
            return Reply(
                Text(
                    _banner(f"Here is the data you handed over, as I received it:\n\n{quoted}"),
                    chunk=CHUNK,
                    delay=FAST_DELAY,
                )
            )
        if _word(req, "create", "file"):
            return _tool_call(
                "Creating a file (this needs your permission).",
                "Bash",
                {
                    "command": "echo made by the demo > made_by_claude.txt && echo created",
                    "description": "Create made_by_claude.txt",
                },
            )
        if _word(req, "agent", "subagent"):
            return _tool_call(
                "Handing this to a subagent.",
                "Agent",
                {
                    "description": "List files",
                    "prompt": f"{SUBAGENT_MARKER}: list files",
                    "subagent_type": "general-purpose",
                    "run_in_background": False,
                },
            )
        if _word(req, "fix", "error"):
            return _tool_call("Reading the notebook first.", NOTEBOOK_TOOL, {})
        if _ADD_CELL.search(attached):  # the user's words: the CLI's reminders left out
            return _tool_call("Reading the notebook to find this cell.", NOTEBOOK_TOOL, {})
        if _word(req, "cells") or re.search(r"\bread the notebook", attached, re.I):
            return _tool_call("Reading the notebook.", NOTEBOOK_TOOL, {})
        if _word(req, "python", "kernel"):
            return _tool_call(
                "Running some Python in the kernel.", python_tool, {"code": PYTHON_SNIPPET}
            )
        if _word(req, "image", "png"):
            path = _png_path(req.last_user_text)
            return _tool_call(f"Reading `{path}`.", "Read", {"file_path": path})
        if _word(req, "bash", "shell"):
            return _tool_call(
                "Running a shell command.",
                "Bash",
                {"command": "echo hello from bash && uname -s", "description": "Say hello"},
            )
        if _word(req, "question", "choose"):
            return _tool_call("A question before I start.", "AskUserQuestion", dict(QUESTIONS))
        if _word(req, "plan"):
            if req.plan_file:
                return _tool_call(
                    "Writing the plan.", "Write", {"file_path": req.plan_file, "content": PLAN_MD}
                )
            return _tool_call("Let me plan first.", "EnterPlanMode", {})
        if _word(req, "think"):
            return Reply(
                Thinking(
                    "The user asked me to think. Let me reason in small steps: this is a scripted "
                    "model, so the thought is fixed, but it streams like a real one.",
                    chunk=CHUNK,
                    delay=FAST_DELAY,
                ),
                Text(
                    _banner("I thought about it; the thinking block is above this answer."),
                    chunk=CHUNK,
                    delay=FAST_DELAY,
                ),
            )
        if _word(req, "slow", "long"):
            paragraphs = [f"**Part {i}.** {LONG_PARAGRAPH * 2}" for i in range(1, 7)]
            return Reply(Text(_banner("\n\n".join(paragraphs)), chunk=CHUNK, delay=SLOW_DELAY))
        return Reply(Text(_banner(HELLO_MD), chunk=CHUNK, delay=FAST_DELAY))

    return Script(default=answer)
