"""Fixtures of the fault, load, bad-input and security suite.

Kernel tests get the shared ``kernel_env`` and ``kernels`` fixtures (tests/conftest.py) with a
distinctive fake API key, so the security tests can look for it. Every kernel a test starts is
closed at the end, and then no CLI process (real or stand-in) with this test's HOME may remain.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.faults import SECRET_KEY, assert_no_leftovers
from support.rig import STANDIN, find_cli

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The kernels of this suite carry the recognisable secret as their API key (a marker, so
    a test's own ``kernel_env`` marker still adds to it)."""
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.kernel_env(ANTHROPIC_API_KEY=SECRET_KEY))


@pytest.fixture(autouse=True)
def no_leftover_clis(tmp_path: Path) -> Iterator[None]:
    """After every test (and its other fixtures): no CLI, real or stand-in, with this test's
    HOME is still running."""
    yield
    home = tmp_path / "home"
    cli = find_cli()
    if cli is not None:
        assert_no_leftovers(cli, home)
    assert_no_leftovers(str(STANDIN), home)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir(exist_ok=True)
    return path
