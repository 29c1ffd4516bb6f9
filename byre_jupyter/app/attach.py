"""Data hand-off in the prompt: ``--with df,fig,arr`` and ``{var}`` interpolation.

``--with`` attaches variables as context blocks, described by the same bounded summaries the
``inspect`` tool gives Claude (DataFrame: schema and head; array: shape, dtype and stats;
figure or PIL image: a PNG image block; text: the text itself). ``{name}`` in the prompt is
replaced by ``str(value)`` (dotted names allowed); ``{{`` and ``}}`` are literal braces, and any
brace group that is not a plain name (``{"a": 1}``, ``{x + 1}``) is left as written. An unknown
name is a :class:`~IPython.core.error.UsageError`, raised before anything is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from IPython.core.error import UsageError

from ..protocol import Image
from ..tools import ToolLimits
from ..tools.claude_cells import FIELD
from ..tools.describe import NotFound, describe_object, resolve, visible_names
from ..tools.kinds import suggest

__all__ = ["attach_variables", "interpolate"]

_MAX_INTERPOLATED = 20_000
_MAX_TEXT = 20_000


def interpolate(prompt: str, namespace: Mapping[str, Any]) -> str:
    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        try:
            value = _users_value(name, namespace)
        except NotFound as e:
            raise UsageError(
                f"{{{name}}} in the prompt: {e.message} (write {{{{{name}}}}} for literal braces)"
            ) from None
        except Exception as e:  # a property of the user's object raised: still bad input
            raise UsageError(f"{{{name}}} in the prompt: reading it raised {e!r}") from None
        try:
            text = str(value)
        except Exception as e:  # a __str__ that raises
            raise UsageError(f"{{{name}}} in the prompt: str() of it raised {e!r}") from None
        if len(text) > _MAX_INTERPOLATED:
            text = (
                text[:_MAX_INTERPOLATED] + f"… ({len(text) - _MAX_INTERPOLATED:,} more characters)"
            )
        return text

    return FIELD.sub(replace, prompt)


def _users_value(name: str, namespace: Mapping[str, Any]) -> Any:
    """What ``{a.b.c}`` in the user's own prompt names: plain attribute access, as in a cell.

    Unlike Claude's read tools (tools/describe.py ``resolve``, which never run the user's
    code), this is the user's own expression, so ``{df.shape}`` and properties work.
    """
    head, *attributes = name.split(".")
    if head not in namespace:
        raise NotFound(f"no variable named {head!r}" + suggest(head, visible_names(namespace, {})))
    value = namespace[head]
    for i, attribute in enumerate(attributes):
        try:
            value = getattr(value, attribute)
        except AttributeError:
            path = ".".join([head, *attributes[:i]])
            raise NotFound(f"{path} has no attribute {attribute!r}") from None
    return value


def attach_variables(
    spec: str, namespace: Mapping[str, Any], limits: ToolLimits | None = None
) -> tuple[list[dict[str, Any]], list[Image], list[str]]:
    """``(text blocks, images, names)`` for ``--with a,b,c``."""
    limits = limits or ToolLimits()
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        raise UsageError("--with needs variable names, e.g. --with df,fig")
    blocks: list[dict[str, Any]] = []
    images: list[Image] = []
    candidates = visible_names(namespace, {})
    for name in names:
        try:
            value = resolve(name, namespace, candidates)
        except NotFound as e:
            raise UsageError(f"--with {name}: {e.message}") from None
        except Exception as e:  # a property of the user's object raised: still bad input
            raise UsageError(f"--with {name}: reading it raised {e!r}") from None
        if isinstance(value, str):
            text = value if len(value) <= _MAX_TEXT else value[:_MAX_TEXT] + "…"
            blocks.append({"type": "text", "text": f"Variable `{name}` (str):\n{text}"})
            continue
        if isinstance(value, (bytes, bytearray)):
            image = Image.sniffed(bytes(value))
            if image is None:
                raise UsageError(f"--with {name}: bytes that are not an image are not supported")
            images.append(image)
            blocks.append({"type": "text", "text": f"Variable `{name}`: the image attached."})
            continue
        if callable(value) and not hasattr(value, "savefig"):
            raise UsageError(
                f"--with {name}: a {type(value).__name__} cannot be attached; use data, "
                "figures, images or text"
            )
        description = describe_object(name, value, limits)
        if description.is_error:
            raise UsageError(f"--with {name}: {description.text}")
        blocks.append(
            {
                "type": "text",
                "text": f"Variable `{name}` (attached from the notebook):\n{description.text}",
            }
        )
        images.extend(description.images)
    return blocks, images, names
