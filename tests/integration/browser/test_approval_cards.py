"""An approval card shows exactly what will run, in a real JupyterLab.

The real ``claude`` CLI asks for a 20 kB Bash command (a bidi override hidden in it, a unique
marker at its very end). On 0.1 the card cut it at 8,000 characters, so the end, what would
actually run last, was nowhere in the page. Here the whole command is in the card's box, the
box has a bounded height and scrolls, its end can be scrolled into view, the hidden character
shows as a ⟨U+202E⟩ marker, nothing clips at 700 px, and after *Allow once* the command that
ran is the one shown (it counts its own payload into a file).

Screenshots: tests/artifacts/approval-card-20k-*.png (the page at 1400 and 700 px; the card
at 700 px scrolled to the end and to the start).
"""

from __future__ import annotations

import secrets

import pytest

from byre_jupyter.scripted import Reply, ScriptedAPI, Text, ToolUse
from byre_jupyter.ui.reveal import reveal

from .harness import ARTIFACTS, LabPage, new_notebook
from .test_approvals import ALLOW, static_data, wait_for_card

pytestmark = pytest.mark.cli

BODY = "pre.byre-approval-body"


# Scroll the body box to its end; then where the tail marker's text is, relative to the box.
_TAIL_GEOMETRY = """(pre, tail) => {
    pre.scrollTop = pre.scrollHeight;
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    let node, found = null;
    while ((node = walker.nextNode())) {
        const at = node.data.indexOf(tail);
        if (at >= 0) { found = [node, at]; }
    }
    if (!found) return null;
    const range = document.createRange();
    range.setStart(found[0], found[1]);
    range.setEnd(found[0], found[1] + tail.length);
    const r = range.getBoundingClientRect(), b = pre.getBoundingClientRect();
    const style = getComputedStyle(pre);
    return {
        tail: [r.top, r.bottom, r.left, r.right], box: [b.top, b.bottom, b.left, b.right],
        scrollHeight: pre.scrollHeight, clientHeight: pre.clientHeight,
        scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth,
        overflowY: style.overflowY,
        hit: document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2) === pre,
    };
}"""

# Every part of the card lies inside the card, and nothing in it overflows sideways.
_CLIPPING = """(card) => {
    const c = card.getBoundingClientRect();
    const out = [];
    for (const el of card.querySelectorAll('button, input, .widget-html, pre, b')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0) continue;
        if (r.left < c.left - 1 || r.right > c.right + 1) {
            const where = `${r.left}-${r.right} outside ${c.left}-${c.right}`;
            out.push(`${el.tagName}.${el.className}: ${where}`);
        }
    }
    for (const el of [card, ...card.querySelectorAll('.widget-html, .widget-hbox')]) {
        if (el.scrollWidth > el.clientWidth + 1) {
            out.push(`${el.className} overflows: ${el.scrollWidth} > ${el.clientWidth}`);
        }
    }
    return {problems: out, right: c.right, viewport: window.innerWidth};
}"""


def test_a_20kb_bash_command_is_whole_scrollable_and_what_runs(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str]
) -> None:
    folder = f"cards-{secrets.token_hex(4)}"
    lab.open_notebook(
        new_notebook("%load_ext byre_jupyter", "%%claude\nLONGCMD: count the bytes"),
        path=f"{folder}/cards.ipynb",
        kernel_env=claude_env,
    )
    lab.run_cell(0, timeout=60)
    out = lab.server.root_dir / folder / "count.txt"
    tail = f"TAIL-{secrets.token_hex(6)}"
    payload = "".join(f"{n:05d}" for n in range(4_000))  # 20,000 characters, no quotes
    command = f"# note \u202eevil\u202c done\nprintf %s '{payload}' | wc -c > {out}; echo {tail}"
    assert 20_000 < len(command) < 20_400
    api.on("LONGCMD", Reply(ToolUse("Bash", {"command": command, "description": "ls"})), times=1)
    api.on(lambda r: tail in r.last_user_text, Reply(Text("Counted: LONGDONE")))

    lab.run_cell(1, wait=False)
    box = wait_for_card(lab, 1)
    text = box.inner_text()
    assert "Claude asks: Run a shell command" in text and "Claude says: “ls”" in text, text[:400]
    assert "20,1" in box.locator(".byre-approval-size").inner_text()  # the size is shown

    body = box.locator(BODY)
    assert body.count() == 1
    # Every character is in the page (the hidden one as its marker), not just the first 8,000.
    assert body.evaluate("el => el.textContent") == reveal(command)
    assert body.locator(".byre-hidden-char").all_inner_texts() == ["⟨U+202E⟩", "⟨U+202C⟩"]

    def check_geometry(width: int) -> None:
        lab.page.set_viewport_size({"width": width, "height": 900})
        box.scroll_into_view_if_needed()
        body.scroll_into_view_if_needed()
        geo = body.evaluate(_TAIL_GEOMETRY, tail)
        assert geo is not None, "the tail of the command is not in the card"
        # A bounded box that scrolls, and at its end the tail is in view (not clipped).
        assert geo["overflowY"] in ("auto", "scroll"), geo
        assert geo["scrollHeight"] > 2 * geo["clientHeight"], geo
        assert geo["clientHeight"] < 700, geo
        top, bottom, left, right = geo["tail"]
        btop, bbottom, bleft, bright = geo["box"]
        assert btop <= top and bottom <= bbottom and bleft <= left and right <= bright, geo
        assert geo["hit"], geo  # nothing covers it
        assert geo["scrollWidth"] <= geo["clientWidth"] + 1, geo  # wrapped, not cut sideways
        clip = box.evaluate(_CLIPPING)
        assert clip["problems"] == [] and clip["right"] <= clip["viewport"], clip
        # Every answer is visible and clickable at this width.
        for name in ("Allow once", "Always allow (session)", "Deny"):
            assert box.locator(f'button.widget-button:has-text("{name}")').is_visible(), name

    check_geometry(1400)
    lab.screenshot("approval-card-20k-1400px.png")
    check_geometry(700)
    lab.screenshot("approval-card-20k-700px.png")
    box.screenshot(path=str(ARTIFACTS / "approval-card-20k-700px-end.png"))
    body.evaluate("el => { el.scrollTop = 0; }")  # the start, with its styled markers
    box.screenshot(path=str(ARTIFACTS / "approval-card-20k-700px-start.png"))
    assert not out.exists(), "the command ran before anyone clicked"

    box.locator(ALLOW).click()
    assert lab.wait_for_cell(1, timeout=90)
    assert out.read_text().strip() == str(len(payload))  # the whole command ran, as shown
    assert "LONGDONE" in lab.output_text(1)

    data = static_data(lab, 1)
    for mime in ("text/markdown", "text/html", "text/plain"):
        assert "\u202e" not in data[mime], mime
    md = data["text/markdown"]
    assert "Approved: Run a shell command: " in md and "(allowed once)" in md, md
    assert "# note ⟨U+202E⟩evil⟨U+202C⟩ done" in data["text/markdown"]  # the saved tool card
