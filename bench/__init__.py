"""Benchmarks of byre_jupyter: ``python -m bench`` (``--quick`` for small sizes).

Modules, one per benchmark of the issue, each with a ``measure(...) -> Section``:

* :mod:`bench.throughput` (1): a ≥200k-line recorded stream through byre's Session, through
  claude-agent-sdk, and through the floor (blocking reads + ``json.loads``);
* :mod:`bench.bigline` (2): 1/16/64 MiB tool-result lines, time and peak RSS;
* :mod:`bench.rendering` (3): a 10,000-delta turn through the live widget in a real kernel;
* :mod:`bench.latency` (4): delta → comm message, time to first text, Stop and ■;
* :mod:`bench.memory` (5): RSS and fds over a 500-turn session, in a Session and a kernel.

Support: :mod:`bench.gen` (deterministic stream-json in the real CLI's shapes, cached in
``bench/out/``), the stand-in CLI (``tests/support/standin_cli.py``, the tests' own, run with
``python -S``), :mod:`bench.kernel` (a minimal frontend over jupyter_client),
:mod:`bench.inkernel` (code the kernel runs), :mod:`bench.worker` (one measurement per fresh
interpreter), :mod:`bench.common` (results, statistics, machine info). Results go to
``bench/RESULTS.md``.
"""
