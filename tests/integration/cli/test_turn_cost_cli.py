"""Each turn's own cost, from the CLI's running ``total_cost_usd``.

Measured with CLI 2.1.328 (this test pins it): the total grows over the turns of a process, and
a process that resumes the conversation starts from the total the CLI saved for it (0.006,
0.012, then 0.018 after a resume, for three equal turns). Summing the totals counted the same
spend again and again (4-5x too high in the demo).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, Text
from byre_jupyter.session import Session

pytestmark = [pytest.mark.cli]


async def test_each_turn_costs_its_own_price_across_resume(
    make_session: Callable[..., Session], api: ScriptedAPI
) -> None:
    api.default = Reply(Text("ok"), usage={"input_tokens": 1000, "output_tokens": 100})
    first = make_session(name="a")
    costs: list[float] = []
    raw_totals: list[Any] = []

    async def turn(session: Session, prompt: str) -> None:
        result = await (await session.send(prompt)).result()
        assert result.cost_usd is not None and result.raw is not None
        costs.append(result.cost_usd)
        raw_totals.append(result.raw.total_cost_usd)

    await turn(first, "one")
    await turn(first, "two")
    await first.close()
    resumed = make_session(name="b", resume=first.session_id)
    await turn(resumed, "three")
    await turn(resumed, "four")

    price = costs[0]
    assert price > 0
    assert costs == pytest.approx([price] * 4)  # equal usage, equal price, every turn
    # The CLI's own figure is cumulative, also after the resume: what this test guards against.
    assert raw_totals == pytest.approx([price, 2 * price, 3 * price, 4 * price])
    assert first.total_cost_usd == pytest.approx(2 * price)
    assert resumed.total_cost_usd == pytest.approx(2 * price)
