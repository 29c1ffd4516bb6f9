"""The unit tests' IPython shells: ``shell``, with byre_jupyter loaded, its state under the
test's tmp_path and no CLI process allowed to start (the magics and app tests); and
``fresh_shell``, a bare one with a fresh namespace and history (the kernel tools' tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import byre_jupyter.magics as magics_pkg
from byre_jupyter.transport.process import SubprocessTransport


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    async def no_process(self: Any) -> None:
        raise AssertionError("a CLI process was about to start")

    monkeypatch.setattr(SubprocessTransport, "start", no_process)
    monkeypatch.setenv("BYRE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("BYRE_CLAUDE_PATH", str(tmp_path / "no-such-claude"))  # doctor: fast
    ip = InteractiveShell.instance()
    if magics_pkg.extension() is not None:
        magics_pkg.unload_ipython_extension(magics_pkg.extension().shell)
    magics_pkg.load_ipython_extension(ip)
    try:
        yield ip
    finally:
        magics_pkg.unload_ipython_extension(ip)


@pytest.fixture
def fresh_shell() -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.reset(new_session=False)  # type: ignore[no-untyped-call]
    try:
        yield ip
    finally:
        import matplotlib.pyplot as plt

        plt.close("all")
        ip.reset(new_session=False)  # type: ignore[no-untyped-call]
