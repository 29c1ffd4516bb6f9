"""No benchmark module imports the runner (``bench/__main__.py``): the runner imports them, so
a shared piece they need lives in ``bench/common.py``, not in a circle through ``__main__``."""

from __future__ import annotations

import ast
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_no_bench_module_imports_the_runner() -> None:
    circles = []
    for path in sorted(BENCH.glob("*.py")):
        if path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("__main__"):
                circles.append(f"{path.name}:{node.lineno}")
    assert circles == []
