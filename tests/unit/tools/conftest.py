"""A real IPython shell for the kernel tools, with a fresh namespace and history per test
(``fresh_shell``, tests/support/shells.py), and the tools on it."""

from __future__ import annotations

from collections.abc import Callable

import matplotlib
import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.shells import fresh_shell as shell
from support.toolkit import Kit

from byre_jupyter.tools import ApproveFn, PythonRun, PythonRunner, ToolLimits, kernel_tools
from byre_jupyter.tools.bounded import DEFAULT_LIMITS

matplotlib.use("Agg")

__all__ = ["shell"]


@pytest.fixture
def make_kit(shell: InteractiveShell) -> Callable[..., Kit]:
    def make(
        *,
        policy: str | Callable[[], str] = "allow",
        approve: ApproveFn | None = None,
        limits: ToolLimits = DEFAULT_LIMITS,
        read_policy: str | None = None,
    ) -> Kit:
        runner = PythonRunner(shell, limits=limits)
        runs: list[PythonRun] = []
        tools = kernel_tools(
            shell,
            approve=approve,
            policy=policy if callable(policy) else (lambda: policy),
            on_python_run=runs.append,
            limits=limits,
            runner=runner,
            **({} if read_policy is None else {"read_policy": lambda: read_policy}),
        )
        return Kit(shell, runner, {t.name: t for t in tools}, runs)

    return make


@pytest.fixture
def kit(make_kit: Callable[..., Kit]) -> Kit:
    return make_kit()
