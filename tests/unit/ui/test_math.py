"""Maths in answers is left for the notebook's MathJax; every other ``$`` stays a dollar."""

from __future__ import annotations

import re

from support import wire as fx

from byre_jupyter.ui.markdown import MATH_IGNORE, MATH_PROCESS, render_markdown
from byre_jupyter.ui.record import turn_html
from byre_jupyter.ui.viewmodel import TurnView


def test_inline_maths_keeps_its_tex_in_an_element_of_its_own() -> None:
    html = render_markdown("Area: $a_1 * b_2$ and $\\frac{1}{2}$.")
    assert "<span>$a_1 * b_2$</span>" in html  # no <em> from the underscores and star
    assert "<span>$\\frac{1}{2}$</span>" in html


def test_display_maths() -> None:
    html = render_markdown("$$\n\\int_0^1 x\\,dx < 1\n$$\n")
    assert "<p>$$\\int_0^1 x\\,dx &lt; 1$$</p>" in html


def test_money_stays_money() -> None:
    html = render_markdown("It costs $5 and $6, or $7.")
    # each $ alone in an element: MathJax cannot pair two of them
    assert html.count("<span>$</span>") == 3
    assert re.sub(r"<[^>]+>", "", html).strip() == "It costs $5 and $6, or $7."


def test_dollars_in_code_are_code() -> None:
    html = render_markdown("Run `echo $HOME` and\n\n```bash\necho $PATH $HOME\n```\n")
    assert "<code>echo $HOME</code>" in html and "<span>$" not in html


def test_our_own_html_is_skipped_by_mathjax_and_answers_are_typeset() -> None:
    view = TurnView("s", "what are $HOME and $PATH?", clock=lambda: 0.0)
    b = fx.Builder()
    for wire in [
        b.message_start("m"),
        b.block_start("m", 0, {"type": "text", "text": ""}),
        b.text_delta("m", 0, "Euler: $e^{i\\pi} + 1 = 0$"),
    ]:
        view.apply(fx.parse_all([wire])[0])
    html = turn_html(view)
    assert html.startswith(f'<div class="byre-turn {MATH_IGNORE}"'), html[:120]
    assert f'<div class="{MATH_PROCESS}"><p>Euler: <span>$e^{{i\\pi}} + 1 = 0$</span>' in html
    # the user's prompt with its dollars sits outside every processed element
    prompt_at = html.index("what are $HOME and $PATH?")
    assert html.rfind(MATH_PROCESS, 0, prompt_at) == -1
