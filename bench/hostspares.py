"""Memory of N idle kernels: spares off, on, and bounded per host (``Claude.host_spares``).

For each setting, N real ipykernels start side by side (the real CLI, the scripted API), each
loads the extension, runs one ``%%claude`` turn and waits until its spares have started
(``spares.settled()``), as N notebooks left open on a hub host after their first answer. Then
the bench counts every CLI process under the N kernels and sums the RSS of the CLIs and of the
kernels themselves (psutil, whole process trees). Settings: ``speculate = False``;
``speculate = True`` with no host bound (each kernel keeps two); and ``host_spares = 2`` for
the whole host (the default on a JupyterHub server), the slots in a folder of the bench's own.
Run: ``python -m bench.hostspares [N]`` or ``python -m bench --only hostspares``.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from byre_jupyter.scripted import ScriptedAPI

from .common import Section, cli_env, method_of, real_cli, render_text
from .kernel import BenchKernel

SETTINGS: dict[str, str] = {
    "spares off": "%config Claude.speculate = False",
    "spares on, no host bound": "%config Claude.host_spares = None",
    "host_spares = 2": "%config Claude.host_spares = 2",
}
SETTLED = "import byre_jupyter.magics as m\nawait m._EXTENSION.spares.settled()"


def tree_rss(pid: int) -> tuple[int, int, int]:
    """RSS of ``pid``'s own process, RSS of its CLI descendants, and how many CLIs."""
    import psutil

    proc = psutil.Process(pid)
    own = proc.memory_info().rss
    clis = [p for p in proc.children(recursive=True) if "claude" in p.name()]
    return own, sum(p.memory_info().rss for p in clis), len(clis)


def one_setting(api: ScriptedAPI, cli: str, setting: str, kernels: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        env = {**cli_env(api.url, Path(tmp) / "home"), "BYRE_CLAUDE_PATH": cli}
        env["BYRE_STATE_DIR"] = str(Path(tmp) / "state")
        env["BYRE_HOST_SPARES_DIR"] = str(Path(tmp) / "slots")
        started = [stack.enter_context(BenchKernel(env, cwd=tmp)) for _ in range(kernels)]
        for n, kernel in enumerate(started):
            kernel.run(f"%load_ext byre_jupyter\n{SETTINGS[setting]}\n"
                       "%config Claude.spare_min_free_mb = 0")  # fmt: skip
            kernel.run(f"%%claude\nPROMPT_{n}", timeout=120)
        for kernel in started:
            kernel.run(SETTLED)
        sizes = [tree_rss(kernel.pid) for kernel in started]
    return {
        "clis": sum(s[2] for s in sizes),
        "cli_mib": sum(s[1] for s in sizes) / 2**20,
        "kernel_mib": sum(s[0] for s in sizes) / 2**20,
    }


def measure(kernels: int = 4, echo: Callable[[str], Any] = lambda s: None) -> Section:
    section = Section("hostspares", "Memory of N idle kernels: spares off, on, bounded",
                      method_of(__doc__))  # fmt: skip
    cli = real_cli()
    if cli is None:
        section.error = "the real claude CLI is not installed"
        return section
    table = section.table(
        f"{kernels} kernels after one turn each, spares settled",
        "setting", "CLI processes", "CLIs' RSS (MiB)", "kernels' RSS (MiB)", "total (MiB)",
    )  # fmt: skip
    results = {}
    with ScriptedAPI() as api:
        for setting in SETTINGS:
            results[setting] = got = one_setting(api, cli, setting, kernels)
            echo(f"{setting}: {got}")
            table.add(setting, int(got["clis"]), round(got["cli_mib"]), round(got["kernel_mib"]),
                      round(got["cli_mib"] + got["kernel_mib"]))  # fmt: skip
    bounded, unbounded = results["host_spares = 2"], results["spares on, no host bound"]
    section.check(
        "host_spares = 2 keeps at most N + 2 CLIs",
        f"{int(bounded['clis'])} CLIs for {kernels} kernels",
        bounded["clis"] <= kernels + 2,
    )
    section.notes.append(
        f"the bound saves {round(unbounded['cli_mib'] - bounded['cli_mib'])} MiB of "
        f"{round(unbounded['cli_mib'])} MiB of CLIs at {kernels} kernels"
    )
    return section


def main(kernels: int = 4) -> None:
    print(render_text(measure(kernels, echo=print)))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 4)
