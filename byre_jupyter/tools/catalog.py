"""What the kernel tools share about results: the secrets to redact, a result or a run redacted,
and the result Claude sees for a run (``python`` and ``run_cells``). The tools themselves are
records, one module each under ``tools/specs/``, listed in ``tools/registry.py``.

Every result's text is redacted (``redact``): a secret-named value, a credential-shaped string,
or the exact value of a secret the user or the environment holds never reaches the model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from ..redact import Secrets, redact_text
from ..session.mcp import ToolResult
from .describe import known_secrets
from .runner import PythonRun

__all__ = ["known_secrets_of", "redact_result", "redact_run", "run_result"]


def known_secrets_of(shell: Any, env: Mapping[str, str] | None = None) -> Secrets:
    """Exact secret values to redact wherever they appear: secret-named variables of the
    environment with ``env`` (``Claude.env``) over it, the user's secret-named variables, dict
    entries and attributes, the kernel's signing key."""
    known = Secrets.of_process(env) | known_secrets(shell.user_ns, shell.user_ns_hidden)
    signing_key = getattr(getattr(getattr(shell, "kernel", None), "session", None), "key", None)
    if isinstance(signing_key, bytes) and signing_key:  # ipykernel's shell; its HMAC key
        known |= {signing_key.decode("ascii", "replace")}
    return known


def redact_result(result: ToolResult, known: Iterable[str]) -> ToolResult:
    """``result`` with credentials in its text replaced (``redact_text``: shapes, secret-named
    assignments, and the ``known`` values)."""
    for item in result.content:
        if item.get("type") == "text":
            item["text"] = redact_text(item["text"], known)
    return result


def redact_run(run: PythonRun, known: Iterable[str]) -> PythonRun:
    """``run`` with credentials replaced in what it printed, displayed, returned and raised."""

    def clean(text: str | None) -> str | None:
        return None if text is None else redact_text(text, known)

    return dataclasses.replace(
        run,
        stdout=redact_text(run.stdout, known),
        stderr=redact_text(run.stderr, known),
        displayed=redact_text(run.displayed, known),
        result=clean(run.result),
        error=clean(run.error),
        traceback=clean(run.traceback),
    )


def run_result(run: PythonRun) -> ToolResult:
    """The tool result Claude sees for a run: labelled sections, then the images."""
    sections = []
    if run.stdout:
        sections.append(f"[stdout]\n{run.stdout.rstrip()}")
    if run.stderr:
        sections.append(f"[stderr]\n{run.stderr.rstrip()}")
    if run.displayed:
        sections.append(f"[displayed]\n{run.displayed.rstrip()}")
    if run.result is not None:
        sections.append(f"[result]\n{run.result}")
    if run.traceback:
        label = "[interrupted]" if run.status == "interrupted" else "[error]"
        sections.append(f"{label}\n{run.traceback.rstrip()}")
    elif run.error:
        sections.append(f"[error]\n{run.error}")
    if run.images:
        sections.append(f"[images] {len(run.images)} attached below")
    for note in run.notes:
        sections.append(f"[note] {note}")
    if not sections:
        sections.append("(ran without output)")
    result = ToolResult.text("\n\n".join(sections), is_error=run.status != "ok")
    for image in run.images:
        result.add_image(image)
    return result
