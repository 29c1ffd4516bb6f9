"""Numbers users can trust, in a real kernel with the real CLI and the scripted API: after a
re-run branched the conversation, ``%claude usage`` and ``%claude sessions`` count every turn
paid for (the abandoned branch too), and the footer's input tokens are usage's."""

from __future__ import annotations

import re

import pytest
from support.kernel import CellRun, KernelDriver

from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.session.accounting import SCRIPTED_COST

pytestmark = [pytest.mark.kernel, pytest.mark.cli]

#: Every reply costs the same; cache reads and writes make the input-token definitions differ.
USAGE = {
    "input_tokens": 1000,
    "cache_creation_input_tokens": 200,
    "cache_read_input_tokens": 300,
    "output_tokens": 100,
}


def run(kernel: KernelDriver, code: str, cell: str | None = None) -> CellRun:
    result = kernel.run(code, cell_id=cell)
    assert result.reply is not None and result.reply["status"] == "ok", result.texts()
    return result


def row(table: str, name: str) -> list[str]:
    """The cells of session ``name``'s row in a Markdown table."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row for {name!r} in:\n{table}")


def paid(cost: str) -> str:
    """The figure of a cost the scripted API's turns ran up, which is marked as such."""
    assert cost.endswith(f" {SCRIPTED_COST}"), cost
    return cost.removesuffix(f" {SCRIPTED_COST}")


def test_usage_counts_every_turn_after_a_branch_and_agrees_with_the_footer(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    api.default = Reply(Text("ok"), usage=USAGE)
    run(kernel, "%%claude -o first\nPROMPT_A", "cell-a")
    price = float(run(kernel, "print(first.cost_usd)").texts())
    assert price > 0
    run(kernel, "%%claude\nPROMPT_B", "cell-b")
    run(kernel, "%%claude\nPROMPT_C", "cell-c")
    n = len(api.requests)
    run(kernel, "%%claude\nPROMPT_B again", "cell-b")  # a re-run: the session forks after A
    assert "PROMPT_C" not in str(api.wait_for_request("PROMPT_B again", 60, after=n).body)

    history = run(kernel, "%claude history").texts()
    assert "4 turn(s)" in history, history
    usage = row(run(kernel, "%claude usage").texts(), "default")
    turns, cost, tokens_in, tokens_out = usage[1:5]
    assert int(turns) == 4, usage  # before: 1 turn, the branch's own
    assert float(paid(cost)) == pytest.approx(4 * price, abs=2e-4), (usage, price)
    assert int(tokens_in) == 4 * 1500 and int(tokens_out) == 4 * 100, usage
    table = run(kernel, "%claude sessions").texts()
    header, sessions = row(table, "session"), row(table, "default")
    turns, cost = sessions[header.index("turns")], sessions[header.index("cost")]
    assert int(turns) == 4 and float(paid(cost.lstrip("\\$"))) == pytest.approx(
        4 * price, abs=2e-4
    ), sessions

    # One turn of its own: the footer's input tokens are usage's (fresh + cache writes + reads).
    solo = run(kernel, "%%claude -s solo\nPROMPT_SOLO", "cell-solo").texts()
    footer = re.search(r"([\d,]+) in / ([\d,]+) out tokens", solo)
    assert footer is not None, solo
    usage = row(run(kernel, "%claude usage").texts(), "solo")
    assert int(footer.group(1).replace(",", "")) == int(usage[3]) == 1500, (solo, usage)


def test_the_kernel_budget_stops_a_kernels_spending_and_sends_nothing(
    kernel: KernelDriver, api: ScriptedAPI
) -> None:
    """Claude.kernel_budget_usd: once the kernel's turns (every session) have cost it, a cell
    sends no API request and fails with what was spent and how to raise the cap, in Lab (a
    cell id) and headless (nbclient, papermill: none) alike; with the cap raised the same
    session goes on."""
    api.default = Reply(Text("ok"), usage=USAGE)
    run(kernel, "%%claude -o first\nPROMPT_A", "cell-a")
    price = float(run(kernel, "print(first.cost_usd)").texts())
    run(kernel, "%%claude -s other\nPROMPT_B", "cell-b")  # another session counts too
    run(kernel, "%claude close other")  # and still counts once closed
    run(kernel, f"%config Claude.kernel_budget_usd = {2 * price}")
    sent = len(api.requests)
    for cell in ("cell-c", None):  # Lab, then a headless run
        refused = kernel.run("%%claude\nPROMPT_OVER", cell_id=cell)
        assert refused.reply is not None and refused.reply["status"] == "error"
        errors = [o for o in refused.outputs if o["output_type"] == "error"]
        assert [e["ename"] for e in errors] == ["BudgetExceeded"], refused.outputs
        assert "Nothing was sent" in errors[0]["evalue"]
        assert f"{2 * price:.4f} USD" in errors[0]["evalue"]
        assert "%config Claude.kernel_budget_usd = " in refused.texts()  # the turn's output
    assert len(api.requests) == sent  # no API request for a refused turn
    assert not any("PROMPT_OVER" in str(r.body) for r in api.requests)

    run(kernel, "%config Claude.kernel_budget_usd = 100")
    after = run(kernel, "%%claude\nPROMPT_D", "cell-d")
    assert "ok" in after.texts() and len(api.requests) == sent + 1
    assert "PROMPT_A" in str(api.requests[-1].body)  # the same conversation
