"""One way a cost reads to the user (session/accounting.py ``format_cost``), and every
place that shows a cost uses it: the footer, the live header, the history and ``%claude
usage``'s Markdown."""

from __future__ import annotations

import pytest

from byre_jupyter.session.accounting import NO_COST, SCRIPTED_COST, format_cost


@pytest.mark.parametrize(
    ("amount", "scripted", "text"),
    [
        (0.0123, False, "$0.0123"),
        (0.0123, True, f"$0.0123 {SCRIPTED_COST}"),  # the CLI priced tokens nobody paid for
        (1.5, False, "$1.5000"),
        (0.0, False, "$0.0000"),
        (None, False, NO_COST),
        (None, True, f"{NO_COST} {SCRIPTED_COST}"),
    ],
)
def test_a_cost_reads_in_dollars_and_a_scripted_one_says_so(
    amount: float | None, scripted: bool, text: str
) -> None:
    assert format_cost(amount, scripted=scripted) == text


def test_every_cost_the_user_sees_is_written_by_the_one_formatter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A formatter that marks what it wrote: each place showing a cost must carry the mark.
    from byre_jupyter.magics import magics
    from byre_jupyter.session import accounting
    from byre_jupyter.ui import format as fmt
    from byre_jupyter.ui import history, live
    from byre_jupyter.ui.history import HistoryEntry, _cost

    def marked(amount: float | None, *, scripted: bool = False) -> str:
        return f"COST<{amount}>"

    for module in (accounting, fmt, history, live, magics):
        if hasattr(module, "format_cost"):
            monkeypatch.setattr(module, "format_cost", marked)
    assert magics.dollars(0.5) == "COST<0.5>"
    entry = HistoryEntry(1, None, "[1]", None, 0.25, "hi", True)
    assert _cost(entry) == "COST<0.25>"
