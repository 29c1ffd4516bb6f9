"""Redaction: ``redact_text`` on adversarial and ordinary text of n and 4n characters.

Every shape, URL, assignment and known-value pass of :mod:`byre_jupyter.redact` is written to
run in linear time (its docstring says how). Here each input of the corpus below (a unit
repeated to n characters, each aimed at one pattern's worst case: the JWT's ``-eyJ`` runs that
took 22.7 s for 100 KB in 0.1, unclosed URL authorities, names followed by spaces, quotes that
never close...) and two ordinary texts (Bash-like output with a few keys, a JSON transcript
line) are redacted at n and at 4n characters, interleaved, and the median of ``reps`` runs is
kept: linear time shows as a ratio near 4. The 0.1 JWT pattern runs beside them at a small size,
for comparison (its ratio is near 16: quadratic). Run on its own: ``python -m bench.redact
[MIB]`` (n = MIB MiB, default 1), which rewrites this section of ``bench/RESULTS.md``; ``python
-m bench`` runs it with the others.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable

from byre_jupyter.redact import redact_text

from .common import Check, Section, run_alone

__all__ = ["ADVERSARIAL", "measure"]

#: A unit per input, repeated to the size measured (tests/unit/test_redact.py runs them too).
ADVERSARIAL = {
    "jwt-runs": "-eyJ",
    "jwt-dots": "eyJabcdefgh.",
    "sk-runs": "sk-a-",
    "url-authority": "a://b:c",
    "url-schemes": "ab+",
    "assignment-spaces": "token" + " " * 15,
    "assignments": "password=",
    "name-runs": "a" * 79 + "-",
    "pem-ends": "-----BEGIN A-----" + "-----END " + "A" * 39,
    "bearer": "Bearer ",
    "escapes": "\\nsk-\\neyJ",
    "quotes": "token='\\'",
    "connection": "Pwd=;",
    "jwt-wrapped": "a.eyJ\n",
    "jwt-wrapped-runs": "eyJa\n",
    "pem-lines": "-----BEGIN A-----\nA+/\\n" + "x" * 20 + "\n",
    "words": "password = a ",
    "user-option": "-u a:",
    "commands": "mysql -p sshpass ",
    "url-token": "a://" + "b" * 20,
    "telegram": "1234567890:AA",
    "pem-one-line": "-----BEGIN A-----" + "1" * 64 + "!",
    "code-words": "token = x a( ",
    "calls": "password=os.environ.get(",
    "escapes-more": "%0Ask-\\U0001f511",
}

_KEY = "sk-ant-api03-" + "Bench" * 16
ORDINARY = {
    "bash output": (
        "total 48\ndrwxr-xr-x  5 me staff  160 Dec  1 10:00 .\n-rw-r--r--  1 me staff  "
        f"2048 Dec  1 10:00 report.csv\nANTHROPIC_API_KEY={_KEY}\nexport PATH=/usr/bin\n"
    ),
    "transcript line": json.dumps(
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "content": f"postgres://app:pw@db/x token: abc {_KEY} "
                        + "lorem ipsum dolor " * 8,
                    }
                ]
            },
        }
    )
    + "\n",
}

#: The 0.1 JWT pattern, kept here only to show what quadratic looks like beside the others.
_OLD_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}")


def _timed(fn: Callable[[str], object], text: str) -> float:
    t0 = time.perf_counter()
    fn(text)
    return time.perf_counter() - t0


def _pair(fn: Callable[[str], object], unit: str, n: int, reps: int) -> tuple[float, float]:
    small, large = unit * (n // len(unit)), unit * (4 * n // len(unit))
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(reps):  # interleaved: load changes hit both sizes alike
        times[0].append(_timed(fn, small))
        times[1].append(_timed(fn, large))
    return statistics.median(times[0]), statistics.median(times[1])


def measure(mib: float = 1.0, reps: int = 3) -> Section:
    n = int(mib * 2**20)
    section = Section(
        "redact",
        "6. Redaction in linear time",
        __doc__ or "",
    )
    table = section.table(
        f"redact_text, n = {n:,} characters (median of {reps})",
        "input", "time(n) s", "time(4n) s", "time(4n)/time(n)", "MB/s at 4n",
    )  # fmt: skip
    worst = ("", 0.0)
    inputs = {**ADVERSARIAL, **ORDINARY}
    for name, unit in inputs.items():
        t1, t4 = _pair(redact_text, unit, n, reps)
        ratio = t4 / t1 if t1 > 0 else float("nan")
        table.add(name, t1, t4, ratio, 4 * n / 1e6 / t4 if t4 > 0 else float("nan"))
        if ratio > worst[1]:
            worst = (name, ratio)
    old_n = max(1024, n // 256)
    t1, t4 = _pair(lambda text: _OLD_JWT.sub("", text), "-eyJ", old_n, 1)
    table.add(f"0.1 JWT pattern, -eyJ at n = {old_n:,}", t1, t4, t4 / t1, 4 * old_n / 1e6 / t4)
    with contextlib.suppress(OSError):
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        section.notes.append(f"Load average at the end: {load} (a shared 2-core machine).")
    section.checks.append(
        Check(
            "redact_text linear in the text on every input (time(4n)/time(n) <= 6, 1.5x linear)",
            f"worst {worst[1]:.2f} ({worst[0]})",
            worst[1] <= 6,
        )
    )
    return section


def main(mib: float = 1.0) -> None:
    run_alone(lambda: measure(mib))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
