"""One launch-options type (transport/launch.py) for the session, the transport and forks."""

from __future__ import annotations

import dataclasses

from byre_jupyter.session.options import FORK_INHERITS, SessionOptions
from byre_jupyter.transport import LaunchSpec
from byre_jupyter.transport.launch import launch_fields

#: A value for each kind of launch option, unlike its default.
SAMPLES = {
    "str | None": "-sample",
    "float | None": 0.5,
    "Mapping[str, str]": {"A": "1"},
    "Mapping[str, Any]": {"r": {"description": "d"}},
    "Sequence[str]": ("B",),
}
NAMED_SAMPLES = {"effort": "high"}


def test_launch_spec_and_session_options_are_the_launch_options() -> None:
    """One type: the transport's LaunchSpec and the session's options both extend it, and a
    fork inherits exactly the fields the metadata marks for forks."""
    names = {option.name for option in launch_fields()}
    assert names <= {f.name for f in dataclasses.fields(LaunchSpec)}
    assert names <= {f.name for f in dataclasses.fields(SessionOptions)}
    marked = [o.name for o in launch_fields() if o.metadata["launch"].fork]
    assert list(FORK_INHERITS) == [*marked, "transport_factory"]
    values = {
        option.name: NAMED_SAMPLES.get(option.name, SAMPLES.get(str(option.type), 7))
        for option in launch_fields()
    } | {
        "transcript": "/t.jsonl",
        "interrupt_grace": 9.0,
    }
    fork = SessionOptions(**values).forked("s1", None)
    assert fork.launch_options() == SessionOptions(**values).launch_options()
    assert fork.transcript is None and fork.interrupt_grace == 3.0  # the original's own
