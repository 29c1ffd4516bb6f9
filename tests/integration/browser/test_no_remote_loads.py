"""No output loads anything by itself, measured in a browser.

A scripted turn whose thinking, answer and tool output hold the whole hostile-markdown corpus
(tests/support/hostile_markdown.py) pointed at a local HTTP server that counts requests. The
real CLI runs it in JupyterLab in headless Chromium; then the saved notebook is reopened
trusted; then opened untrusted, with and without its text/html (so Lab renders the
text/markdown); then its nbconvert HTML is opened. Playwright records every request the page
makes. Each phase asserts: no request reached the counter except our own sentinels, no request
to Lab's /files/ or any URL naming a corpus file, nothing outside Lab (or, for nbconvert, outside
what the same page without our output asks for).

Sentinels keep the test honest: a cell of the notebook displays an image from the counter, so a
phase only counts once that image was requested (output images really do load in that view),
and before each check the page requests one more counter URL: a network fence after which every
request the page had started is in the record.
"""

from __future__ import annotations

import contextlib
import copy
import json
import secrets
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nbformat
import pytest
from support.hostile_markdown import corpus, corpus_text
from support.rig import tiny_png

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, Thinking, ToolUse

from .harness import ARTIFACTS, HarnessError, LabPage
from .test_claude_cells import _last_tool, assert_static_only, open_claude_notebook

pytestmark = pytest.mark.cli

PNG = tiny_png(2, 2, (0, 160, 0))


class Counter:
    """An HTTP server on 127.0.0.1 that answers every request with a small PNG and records it."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._cond = threading.Condition()
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                with counter._cond:
                    counter.paths.append(self.path)
                    counter._cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Cache-Control", "no-store")  # a reopened view asks again
                self.send_header("Access-Control-Allow-Origin", "*")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(PNG)

            do_GET = do_POST = do_HEAD = _record

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def seen(self, path: str) -> bool:
        with self._cond:
            return path in self.paths

    def wait_for(self, path: str, timeout: float, what: str) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: path in self.paths, timeout):
                raise HarnessError(f"timed out after {timeout:g}s waiting for {what}: {path}")

    def reset(self) -> None:
        with self._cond:
            self.paths.clear()

    def leaks(self) -> list[str]:
        with self._cond:
            return [p for p in self.paths if not p.startswith("/sentinel")]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def counter() -> Iterator[Counter]:
    c = Counter()
    try:
        yield c
    finally:
        c.close()


class Requests:
    """Every request a Playwright page starts (page.on("request")), in order."""

    def __init__(self, page: Any) -> None:
        self.urls: list[str] = []
        self._page = page
        page.on("request", self._on)

    def _on(self, request: Any) -> None:
        self.urls.append(request.url)

    def mark(self) -> int:
        return len(self.urls)

    def since(self, mark: int) -> list[str]:
        return self.urls[mark:]

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._page.remove_listener("request", self._on)


def fence(page: Any, counter: Counter, name: str) -> None:
    """Have the page request one more counter URL and wait until it arrived."""
    path = f"/sentinel-fence-{name.replace(' ', '-')}-{secrets.token_hex(3)}"
    page.evaluate("u => { const i = new Image(); i.src = u; }", counter.base + path)
    counter.wait_for(path, 20, f"the network fence of {name}")


def sentinel_cell(counter: Counter) -> str:
    markdown = f"![sentinel]({counter.base}/sentinel-output) Sentinel math: $x^2$"
    return f"from IPython.display import Markdown, display\ndisplay(Markdown({markdown!r}))"


def bad_requests(urls: list[str], allowed_prefixes: tuple[str, ...]) -> list[str]:
    """URLs a view must never request: a corpus file, Lab's /files/, anything unexpected."""
    bad = []
    for url in urls:
        lowered = urllib.parse.unquote(url).lower()
        if "/sentinel" in lowered:
            continue
        named = "leak" in lowered or "/files/" in lowered or lowered.startswith("file:")
        if named or not url.startswith(allowed_prefixes):
            bad.append(url)
    return bad


def lab_prefixes(lab: LabPage) -> tuple[str, ...]:
    base = lab.server.base_url
    return (base, "ws" + base[4:], "data:", "blob:", "about:")


def check_view(lab: LabPage, counter: Counter, requests: Requests, mark: int, phase: str) -> None:
    fence(lab.page, counter, phase)
    assert counter.leaks() == [], f"{phase}: the counter server was asked for {counter.leaks()}"
    assert bad_requests(requests.since(mark), lab_prefixes(lab)) == [], phase


def shoot(lab: LabPage, cell: int, name: str) -> None:
    """A screenshot of the whole output of ``cell``: the viewport grows to hold it (Lab's
    notebook scrolls inside the page, so an element screenshot alone would be cut off)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = lab.output_locator(cell)
    before = lab.page.viewport_size or {"width": 1400, "height": 1000}
    height = int(out.evaluate("e => e.scrollHeight"))
    lab.page.set_viewport_size({"width": before["width"], "height": min(height + 600, 16_000)})
    try:
        out.scroll_into_view_if_needed()
        out.screenshot(path=str(ARTIFACTS / f"no-remote-loads-{name}.png"))
    finally:
        lab.page.set_viewport_size(before)


def wait_for_sentinel_math(lab: LabPage) -> None:
    """MathJax typesets each output after it renders: wait until the sentinel cell's math is
    typeset, so a \\style{...url()} in our output would have been typeset by then too."""
    loc = lab.output_locator(2).locator("mjx-container")
    loc.first.wait_for(timeout=30_000)


def open_saved(
    lab: LabPage, nb: nbformat.NotebookNode, path: str, *, trusted: bool, sign: bool = False
) -> None:
    """Upload ``nb`` (never signed by the upload: no cell says trusted) and open it in Lab."""
    nb = copy.deepcopy(nb)
    nb.metadata["variant"] = path  # new content: the signature of the saved file does not apply
    for cell in nb.cells:
        cell.metadata.pop("trusted", None)
    if sign:
        lab.server.put_notebook(path, nb)
        done = lab.server.jupyter("trust", str(lab.server.root_dir / path))
        assert done.returncode == 0, done.stderr
        lab.reopen_notebook(path)
    else:
        lab.goto_lab()  # a new document: Chromium reuses images a document already loaded
        lab.open_notebook(nb, path=path)
    assert lab._js("return B.cell(path, 1).model.trusted;") is trusted, path


QUERY = "LEAKTEST: show me everything"


def test_no_output_loads_anything_live_saved_untrusted_nbconvert(
    lab: LabPage, api: ScriptedAPI, claude_env: dict[str, str], counter: Counter, tmp_path: Path
) -> None:
    base = counter.base
    folder = f"loads-{secrets.token_hex(4)}"
    (lab.server.root_dir / folder).mkdir()
    (lab.server.root_dir / folder / "corpus.md").write_text(corpus_text(base + "/tool"))
    api.on(
        "LEAKTEST",
        Reply(
            Thinking(corpus_text(base + "/thinking"), chunk=64),
            Text(corpus_text(base + "/answer"), chunk=64),
            ToolUse("Bash", {"command": "cat corpus.md", "description": "show the corpus"}),
        ),
    )
    final = corpus_text(base + "/final") + "\n\nLEAKDONE\n"
    api.on(lambda r: _last_tool(r) == "Bash", Hang(then=Reply(Text(final, chunk=64))))
    requests = Requests(lab.page)
    mark = requests.mark()
    open_claude_notebook(
        lab, claude_env, f"%%claude\n{QUERY}", sentinel_cell(counter), folder=folder
    )
    path = lab.path
    assert path is not None

    # 1. live: the answer, the thinking and the tool card are on screen, the turn still runs.
    lab.run_cell(2, timeout=60)
    counter.wait_for("/sentinel-output", 30, "the sentinel output image (output images load)")
    wait_for_sentinel_math(lab)
    lab.run_cell(1, wait=False)
    api.wait_for_request(lambda r: _last_tool(r) == "Bash", timeout=90)
    lab.wait_for_output_text(1, "cat corpus.md", timeout=60)
    lab.wait_for_output_text(1, "footnote-like", timeout=60)
    assert lab.cell_running(1)
    lab.output_locator(1).get_by_text("Thinking").first.click()  # open it: hidden or shown
    shoot(lab, 1, "live")
    check_view(lab, counter, requests, mark, "live")

    # 2. the turn ends: the static bundle replaces the widgets in place.
    api.release()
    assert lab.wait_for_cell(1, timeout=90)
    lab.wait_for_output_text(1, "LEAKDONE", timeout=30)
    assert_static_only(lab, 1)
    shoot(lab, 1, "static")
    check_view(lab, counter, requests, mark, "static")

    saved = lab.save()
    html = saved.cells[1].outputs[0].data["text/html"]
    assert "not loaded" in html and base in html  # blocked, and still visible

    # 3. the saved notebook reopened (trusted: Lab signed it on save).
    mark = requests.mark()
    counter.reset()
    lab.reopen_notebook(path)
    assert lab._js("return B.cell(path, 1).model.trusted;") is True
    lab.wait_for_output_text(1, "LEAKDONE", timeout=60)
    counter.wait_for("/sentinel-output", 30, "the sentinel image after reopening")
    wait_for_sentinel_math(lab)
    shoot(lab, 1, "reopened")
    check_view(lab, counter, requests, mark, "reopened trusted")

    # 4. untrusted (Lab sanitizes text/html itself), then without text/html (Lab renders the
    # text/markdown with marked), untrusted and trusted.
    markdown_only = copy.deepcopy(saved)
    del markdown_only.cells[1].outputs[0].data["text/html"]
    variants = [
        ("untrusted", saved, False, False),
        ("markdown-untrusted", markdown_only, False, False),
        ("markdown-trusted", markdown_only, True, True),
    ]
    for name, nb, trusted, sign in variants:
        mark = requests.mark()
        counter.reset()
        open_saved(lab, nb, f"{folder}/{name}.ipynb", trusted=trusted, sign=sign)
        lab.wait_for_output_text(1, "LEAKDONE", timeout=60)
        counter.wait_for("/sentinel-output", 30, f"the sentinel image ({name})")
        wait_for_sentinel_math(lab)
        shoot(lab, 1, name)
        check_view(lab, counter, requests, mark, name)
    requests.stop()

    # 5. nbconvert HTML of the saved notebook, with and without text/html, against the same
    # page without our output (the template's own requests, e.g. MathJax from a CDN).
    for name, nb in (("nbconvert", saved), ("nbconvert-markdown", markdown_only)):
        empty = copy.deepcopy(nb)
        empty.cells[1].outputs = []
        pages = {}
        for label, notebook in (("baseline", empty), ("corpus", nb)):
            nb_path = tmp_path / f"{name}-{label}.ipynb"
            nbformat.write(notebook, str(nb_path))
            done = lab.server.jupyter("nbconvert", "--to", "html", str(nb_path))
            assert done.returncode == 0, done.stderr
            pages[label] = nb_path.with_suffix(".html")
        assert "LEAKDONE" in pages["corpus"].read_text()
        seen = {}
        for label, page_path in pages.items():
            counter.reset()
            page = lab.page.context.new_page()
            record = Requests(page)
            try:
                page.goto(page_path.as_uri(), wait_until="load", timeout=60_000)
                counter.wait_for("/sentinel-output", 30, f"the sentinel image ({name} {label})")
                if label == "corpus":
                    page.screenshot(path=str(ARTIFACTS / f"no-remote-loads-{name}.png"))
                fence(page, counter, f"{name}-{label}")
                seen[label] = [u for u in record.urls if "/sentinel" not in u]
            finally:
                record.stop()
                page.close()
            assert counter.leaks() == [], f"{name} {label}: {counter.leaks()}"
        own = pages["corpus"].as_uri()
        others = [u for u in seen["corpus"] if u != own]
        assert [u for u in others if u not in seen["baseline"]] == [], name
        assert bad_requests(others, ("https://", "http://")) == [], name
        print(f"\n{name}: the template's own requests: {sorted(set(others))}")

    print(
        "\nno-remote-loads:",
        json.dumps({"corpus_snippets": len(corpus(base)), "phases": 8, "counter_leaks": 0}),
    )
