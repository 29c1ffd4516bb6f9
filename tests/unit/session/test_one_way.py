"""One way for each idea: a user's model name, the permission modes."""

from __future__ import annotations

import asyncio

import pytest
from support.memory_cli import FakeCLI

from byre_jupyter import Session
from byre_jupyter.protocol import PERMISSION_MODES, model_option
from byre_jupyter.transport import build_argv


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (None, None),
        ("", None),
        ("default", None),
        (" Default ", None),
        ("sonnet", "sonnet"),
        (" claude-opus-4-1 ", "claude-opus-4-1"),
    ],
)
def test_model_option_maps_what_a_user_types(name: str | None, expected: str | None) -> None:
    assert model_option(name) == expected


async def test_default_never_reaches_the_cli_as_a_model_name() -> None:
    """`%config Claude.model = "default"` went to Session and set_model as the literal name."""
    fake = FakeCLI()
    session = Session("m", model="default", transport_factory=fake.factory)
    try:
        assert session.model is None
        assert not any(a.startswith("--model") for a in build_argv(session._launch_spec()))
        await asyncio.wait_for(session.start(), 5)
        await asyncio.wait_for(session.set_model("default"), 5)
        request = [m["request"] for m in fake.received if m["type"] == "control_request"][-1]
        assert request == {"subtype": "set_model"} and session.model is None
    finally:
        await session.close()


def test_the_config_offers_exactly_the_protocols_permission_modes() -> None:
    from byre_jupyter.app.config import Claude

    assert tuple(Claude.class_traits()["permission_mode"].values) == PERMISSION_MODES
