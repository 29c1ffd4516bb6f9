"""Security: hostile HTML/JS from the model, from tool output, in a file name, in an image's media
type, in a model name: inert in every output of an executed notebook (nbclient) and in its
``jupyter nbconvert --to html`` export. No API key or account email in transcripts or saved
outputs, no secret on the CLI's argv. In-kernel code does not run without approval."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import Callable, Iterable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbconvert.filters.markdown_mistune import markdown2html_mistune
from support.faults import SECRET_KEY, assert_no_leftovers, talking_cli
from support.kernel import LOAD, KernelDriver
from support.rig import STANDIN, tiny_png
from support.waiting import poll

from byre_jupyter.scripted import Hang, Reply, ScriptedAPI, Text, ToolUse

pytestmark = pytest.mark.kernel

EMAIL = "person@example.com"  # what the stand-in CLI's initialize response carries
PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1))",
    '<a href="javascript:alert(1)">link</a>',
    '"><svg onload=alert(1)>',
    '<iframe src="javascript:alert(1)"></iframe>',
    "![pic](javascript:alert(1))",
    "<details open ontoggle=alert(1)>x</details>",
    "<javascript:alert(1)>",
    "[ref link][r]\n\n[r]: javascript:alert(1)",
    "`code` <style>body{display:none}</style>",
    "<a href=' jAvAsCrIpT:alert(1)'>spaced</a>",
]
BAD_FILE = "<img src=x onerror=alert(3)>.png"
ALLOWED_MIMES = {"text/plain", "text/markdown", "text/html", "image/png", "image/jpeg",
                 "image/gif", "image/webp"}  # fmt: skip
DANGEROUS_TAGS = {"script", "iframe", "object", "embed", "svg", "math", "base", "form",
                  "meta", "link", "style", "frame", "frameset", "applet"}  # fmt: skip
URL_ATTRS = {"href", "src", "action", "formaction", "xlink:href", "data", "poster", "background"}


def _is_js_url(value: str | None) -> bool:
    cleaned = "".join(ch for ch in (value or "") if ch.isprintable() and not ch.isspace()).lower()
    return cleaned.startswith(("javascript:", "vbscript:", "data:text/html"))


class Scan(HTMLParser):
    """Finds active content. ``strict``: any dangerous tag or on* attribute at all (our own
    output); else only what carries a payload (the nbconvert page has its own scripts)."""

    def __init__(self, strict: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.strict = strict
        self.problems: list[str] = []
        self._tag: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag = tag
        if self.strict and tag in DANGEROUS_TAGS:
            self.problems.append(f"<{tag}> tag")
        for key, value in attrs:
            key = key.lower()
            if key.startswith("on") and (self.strict or "alert(" in (value or "")):
                self.problems.append(f"<{tag} {key}={value!r}>")
            if key in URL_ATTRS and _is_js_url(value):
                self.problems.append(f"<{tag} {key}={value!r}>")
            if key == "style" and "expression(" in (value or "").lower():
                self.problems.append(f"<{tag} style={value!r}>")

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        if self._tag in ("script", "style") and "alert(" in data:
            self.problems.append(f"<{self._tag}> carrying {data[:80]!r}")

    def handle_endtag(self, tag: str) -> None:
        self._tag = None


def scan(html: str, strict: bool) -> list[str]:
    parser = Scan(strict)
    parser.feed(html)
    parser.close()
    return parser.problems


def check_outputs_inert(cells: Iterable[Any]) -> int:
    """Every output of every cell: allowed MIME types only; HTML and Markdown inert."""
    checked = 0
    for index, cell in enumerate(cells):
        for out in cell.get("outputs", []):
            if out["output_type"] == "error":
                raise AssertionError(f"cell {index} failed: {out['ename']}: {out['evalue']}")
            data = out.get("data", {})
            assert set(data) <= ALLOWED_MIMES, (index, set(data))
            if "text/html" in data:
                assert not scan(data["text/html"], strict=True), (
                    index,
                    scan(data["text/html"], True),
                )
                checked += 1
            if "text/markdown" in data:
                rendered = markdown2html_mistune(data["text/markdown"])
                assert not scan(rendered, strict=True), (
                    index,
                    scan(rendered, True),
                    data["text/markdown"],
                )
                checked += 1
    return checked


def nbconvert_html(path: Path) -> str:
    jupyter = Path(sys.executable).parent / "jupyter"
    subprocess.run(
        [str(jupyter), "nbconvert", "--to", "html", str(path)],
        check=True, capture_output=True, timeout=180,
    )  # fmt: skip
    return path.with_suffix(".html").read_text(encoding="utf-8")


def execute(cells: list[str], env: dict[str, str], cwd: Path, out: Path) -> Any:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
    NotebookClient(nb, timeout=180, kernel_name="python3").execute(env=env, cwd=str(cwd))
    nbformat.write(nb, out)
    return nb


def assert_no_secrets(*texts: str) -> None:
    for text in texts:
        assert SECRET_KEY not in text and "SECRET123" not in text
        assert EMAIL not in text


@pytest.mark.cli
def test_payloads_from_model_tools_file_names_and_model_names_stay_inert(
    api: ScriptedAPI, kernel_env: dict[str, str], workdir: Path, tmp_path: Path,
    home: Path, cli_path: str,
) -> None:  # fmt: skip
    model_text = "Here you go:\n\n" + "\n\n".join(PAYLOADS) + "\n\nend of payloads"
    (workdir / BAD_FILE).write_bytes(tiny_png(6, 6))
    api.on(
        lambda r: bool(r.last_tool_results), Reply(Text("tool done <img src=x onerror=alert(9)>"))
    )
    api.on("PAYLOAD_TEXT", Reply(Text(model_text, chunk=7)), times=1)
    bash = (
        "echo '<script>alert(2)</script><img src=x onerror=alert(2)>"
        "<a href=javascript:alert(2)>b</a>'"
    )
    api.on("RUN_BASH", Reply(ToolUse("Bash", {"command": bash})), times=1)
    api.on("READ_FILE", Reply(ToolUse("Read", {"file_path": str(workdir / BAD_FILE)})), times=1)
    api.default = Reply(Text("plain answer"))
    transcripts = tmp_path / "transcripts"
    nb = execute(
        [
            f"{LOAD}\n%config Claude.transcripts = {str(transcripts)!r}",
            "%%claude\nPAYLOAD_TEXT <script>alert('prompt')</script>",
            "%%claude\nRUN_BASH",
            "%%claude\nREAD_FILE",
            "%%claude -m '<img src=x onerror=alert(4)>'\nMODEL_NAME",
            "%claude sessions",
            "%claude doctor",
            "%claude transcript",
        ],
        kernel_env, workdir, tmp_path / "hostile.ipynb",
    )  # fmt: skip
    everything = json.dumps(nb.cells[1:])
    # The payloads really went through (else the test proves nothing).
    assert "alert(1)" in everything and "alert(2)" in everything and "alert(3)" in everything
    assert "alert(4)" in everything
    assert any("image/png" in o.get("data", {}) for o in nb.cells[3].outputs)
    assert check_outputs_inert(nb.cells) >= 8
    html = nbconvert_html(tmp_path / "hostile.ipynb")
    assert "alert(1)" in html and "alert(3)" in html
    assert not scan(html, strict=False), scan(html, strict=False)
    files = sorted(transcripts.glob("*.jsonl"))
    assert files, "no transcript written"
    assert_no_secrets(
        *(f.read_text() for f in files), (tmp_path / "hostile.ipynb").read_text(), html
    )
    assert_no_leftovers(cli_path, home)


def _b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def test_hostile_image_media_types_and_account_email_from_a_cli(
    kernel_env: dict[str, str], workdir: Path, tmp_path: Path, home: Path,
    standin_cli: str, standin_script: Callable[..., str],
) -> None:  # fmt: skip
    png = tiny_png(5, 5)
    images = [
        {"type": "image", "source": {"type": "base64", "media_type": "text/html",
                                     "data": _b64("<script>alert(5)</script>")}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/svg+xml",
                                     "data": _b64('<svg xmlns="http://www.w3.org/2000/svg" '
                                                  'onload="alert(6)"/>')}},
        {"type": "image", "source": {"type": "base64", "media_type": 'image/png" onerror="alert(7)',
                                     "data": _b64(png)}},
        {"type": "image", "source": {"type": "base64", "media_type": "application/javascript",
                                     "data": _b64("alert(8)")}},
        {"type": "image", "mimeType": "text/html", "data": _b64("<img src=x onerror=alert(8)>")},
        {"type": "text", "text": "<script>alert(9)</script>"},
    ]  # fmt: skip
    script = standin_script(
        [
            [
                {"type": "assistant", "parent_tool_use_id": None, "message": {
                    "id": "m1", "model": "standin", "role": "assistant", "content": [
                        {"type": "tool_use", "id": "toolu_x", "name": "Read",
                         "input": {"file_path": f"/tmp/{BAD_FILE}"}}]}},
                {"type": "user", "parent_tool_use_id": None, "message": {
                    "role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_x", "content": images}]}},
                {"__deltas__": 2, "text": "<img src=x onerror=alert(10)> "},
            ]
        ]
    )  # fmt: skip
    transcripts = tmp_path / "transcripts"
    env = {**kernel_env, "STANDIN_SCRIPT": script}
    nb = execute(
        [
            f"{LOAD}\n%config Claude.cli_path = {standin_cli!r}\n"
            f"%config Claude.transcripts = {str(transcripts)!r}",
            "%%claude\nshow me the images",
        ],
        env, workdir, tmp_path / "images.ipynb",
    )  # fmt: skip
    outputs = nb.cells[1].outputs
    everything = json.dumps(outputs)
    assert "alert(10)" in everything  # the turn really ran
    mimes = [set(o.get("data", {})) for o in outputs]
    assert sum("image/png" in m for m in mimes) == 1, mimes  # only the real PNG is an image
    assert not any(m & {"image/svg+xml", "application/javascript"} for m in mimes)
    check_outputs_inert(nb.cells)
    html = nbconvert_html(tmp_path / "images.ipynb")
    assert not scan(html, strict=False), scan(html, strict=False)
    files = sorted(transcripts.glob("*.jsonl"))
    transcript = "".join(f.read_text() for f in files)
    assert '"account": {"email": "[redacted]"}' in transcript  # the initialize response
    assert_no_secrets(transcript, (tmp_path / "images.ipynb").read_text(), html)
    assert_no_leftovers(str(STANDIN), home)


@pytest.mark.cli
def test_no_secret_on_the_cli_argv(kernels: Callable[..., KernelDriver], api: ScriptedAPI) -> None:
    api.on("HOLD_ARGV", Hang())
    kernel = kernels()
    run = kernel.run("%%claude --bg\nHOLD_ARGV please")
    assert run.reply["status"] == "ok"
    api.wait_for_request("HOLD_ARGV", timeout=90)
    (cli,) = poll(
        lambda: talking_cli(kernel.kernel_pid(), api.port), 30, "the CLI serving the turn"
    )
    argv = Path(f"/proc/{cli.pid}/cmdline").read_bytes()
    environ = Path(f"/proc/{cli.pid}/environ").read_bytes()
    assert b"stream-json" in argv
    assert SECRET_KEY.encode() not in argv and b"SECRET" not in argv
    assert f"ANTHROPIC_API_KEY={SECRET_KEY}".encode() in environ  # it travels in the env only
    assert SECRET_KEY.encode() not in json.dumps(api.requests[-1].body).encode()
    api.release()


@pytest.mark.cli
@pytest.mark.parametrize("policy", ["ask", "allow"])
def test_in_kernel_python_needs_approval_when_headless(
    api: ScriptedAPI, kernel_env: dict[str, str], workdir: Path, policy: str
) -> None:
    code = "open('PWNED', 'w').write('x')"
    api.on("RUN_PY", Reply(ToolUse("mcp__byre__python", {"code": code})), times=1)
    api.on(lambda r: bool(r.last_tool_results), Reply(Text("python tool answered")))
    config = "" if policy == "ask" else "\n%config Claude.python_tool = 'allow'"
    nb = execute([LOAD + config, "%%claude\nRUN_PY now"], kernel_env, workdir, workdir / "py.ipynb")
    assert "python tool answered" in json.dumps(nb.cells[1].outputs)
    assert (workdir / "PWNED").exists() == (policy == "allow")
    if policy == "ask":
        results = api.requests[-1].last_tool_results
        assert results and results[0]["is_error"], results
