"""Wide tables: what a Markdown table costs to render, bounded and not (``python -m bench.tables``).

A model can write a table of thousands of columns; mistune's table costs grow with rows times
columns, on the kernel's event loop, at every re-render of a streaming block. ``render_markdown``
shows a table wider than ``MAX_TABLE_COLUMNS`` as text (docs/security.md). Printed: the median
of 5 renders, in seconds, of the bounded renderer and of mistune's table without the bound, and
of the record's inert Markdown. Figures go to bench/RESULTS.md ("Wide tables"); no test asserts
on them.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from byre_jupyter.ui.markdown import MAX_TABLE_COLUMNS, _markdown, inert_markdown, render_markdown


def _table(columns: int, rows: int) -> str:
    def row(cell: str) -> str:
        return "|" + "|".join(cell for _ in range(columns)) + "|"

    return "\n".join([row("h"), row("-"), *(row("x") for _ in range(rows))]) + "\n"


def _median(fn: Callable[[str], object], text: str, repeat: int = 5) -> float:
    times = []
    for n in range(repeat):
        # Another table each time (its first header cell): render_markdown caches finished
        # blocks, and the same table again would be measured as a cache hit.
        variant = text.replace("h", f"h{n}", 1)
        start = time.perf_counter()
        fn(variant)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print("| columns x rows | bounded render s | unbounded mistune s | inert Markdown s |")
    print("|---|---|---|---|")
    for columns, rows in ((MAX_TABLE_COLUMNS, 50), (5000, 3), (5000, 50)):
        text = _table(columns, rows)
        bounded = _median(lambda t: render_markdown(t), text)
        unbounded = _median(_markdown, text)
        inert = _median(inert_markdown, text)
        print(f"| {columns} x {rows} | {bounded:.3f} | {unbounded:.3f} | {inert:.4f} |")


if __name__ == "__main__":
    main()
