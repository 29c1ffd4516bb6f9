"""Run one measurement in a fresh interpreter: ``python -m bench.worker MODULE:FUNC '{json}'``.

The function gets the JSON object as keyword arguments and returns a JSON-ready dict, which is
printed as the last stdout line (see :func:`bench.common.run_worker`). Besides isolation this
gives every case its own peak-RSS counter (``VmHWM``) and garbage-collector statistics.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["GcClock", "main", "reset_hwm", "vm_hwm", "vm_rss"]


def vm_hwm() -> int:
    """Peak resident set size of this process so far, in bytes (Linux ``VmHWM``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def reset_hwm() -> bool:
    """Reset ``VmHWM`` to the current RSS (``/proc/self/clear_refs`` ← 5); False if refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def vm_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class GcClock:
    """Time spent in the cyclic garbage collector while installed (via ``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.collections = [0, 0, 0]
        self._start = 0.0

    def _cb(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._start
            self.collections[info["generation"]] += 1

    def __enter__(self) -> GcClock:
        gc.callbacks.append(self._cb)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._cb)


def main() -> None:
    target, args = sys.argv[1], json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    module_name, func_name = target.split(":")
    module = importlib.import_module(f"bench.{module_name}")
    result = getattr(module, func_name)(**args)
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
