"""``{name}`` in the user's own prompt is the user's expression: it reads attributes and
properties as a cell would, unlike Claude's read tools, which never run the user's code."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from byre_jupyter.app.attach import interpolate
from byre_jupyter.tools.describe import NotFound, resolve


class Report:
    def __init__(self) -> None:
        self.reads: list[str] = []

    @property
    def title(self) -> str:
        self.reads.append("title")
        return "Quarterly"


def test_the_users_own_prompt_reads_properties_and_attributes() -> None:
    report = Report()
    ns = {"report": report, "n": 3}
    assert interpolate("{report.title} x{n} {{literal}}", ns) == "Quarterly x3 {literal}"
    assert report.reads == ["title"]


def test_claudes_read_tools_still_refuse_the_same_property() -> None:
    report = Report()
    with pytest.raises(NotFound):
        resolve("report.title", {"report": report}, ["report"])
    assert report.reads == []


@pytest.mark.parametrize(
    ("prompt", "message"),
    [
        ("{nope}", "no variable named 'nope'"),
        ("{report.missing}", "report has no attribute 'missing'"),
    ],
)
def test_a_missing_name_is_a_usage_error(prompt: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        interpolate(prompt, {"report": Report()})
