"""The README's trait table (Configuration) is the ``Claude`` configurable's: a row for every
configurable trait, none for a trait that does not exist, and every value of a choice trait
named in its row (the table had lost ``env_drop`` while the traits grew)."""

from __future__ import annotations

import re
from pathlib import Path

from traitlets import Enum

from byre_jupyter.app.config import Claude

README = Path(__file__).resolve().parents[2] / "README.md"


def _rows() -> dict[str, str]:
    text = README.read_text()
    table = text.split("### Configuration (traitlets)", 1)[1].split("\n### ", 1)[0]
    rows = {}
    for line in table.splitlines():
        found = re.match(r"\| `(\w+)` \|", line)
        if found:
            rows[found.group(1)] = line
    return rows


def _traits() -> dict[str, object]:
    return dict(Claude.class_traits(config=True))


def test_every_configurable_trait_has_a_row_and_every_row_a_trait() -> None:
    rows, traits = _rows(), _traits()
    assert sorted(set(traits) - set(rows)) == []  # traits the README does not name
    assert sorted(set(rows) - set(traits)) == []  # rows for traits that do not exist


def test_a_choice_traits_row_names_every_value() -> None:
    rows = _rows()
    missing = {
        name: [v for v in trait.values if v is not None and f"`{v}`" not in rows.get(name, "")]
        for name, trait in _traits().items()
        if isinstance(trait, Enum) and trait.values
    }
    assert {name: values for name, values in missing.items() if values} == {}
