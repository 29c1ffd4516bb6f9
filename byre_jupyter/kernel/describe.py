"""Read-only views of the user's namespace: the variables table, one object's summary, history.

Pure functions of a namespace (and the shell for history), so they are cheap to test. pandas,
numpy, matplotlib and PIL are only used through objects the user already has (see ``figures``).
"""

from __future__ import annotations

import contextlib
import difflib
import inspect as pyinspect
import sys
import types
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .bounded import ToolLimits, clip, pretty_repr
from .figures import as_figure, is_instance, pil_to_png, render_figure

__all__ = ["Description", "describe_object", "history_text", "resolve", "variables_table"]

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_IPYTHON_MODULES = ("IPython", "ipykernel")


@dataclass
class Description:
    """Text (already bounded) and images for one tool result."""

    text: str
    images: list[bytes] = field(default_factory=list)
    is_error: bool = False


# --------------------------------------------------------------------------- variables


def visible_names(user_ns: Mapping[str, Any], hidden: Mapping[str, Any]) -> list[str]:
    """The user's own variables: no ``_`` names, modules, or what IPython put there itself."""
    names = []
    for name, value in user_ns.items():
        if name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if name in hidden and hidden[name] is value:
            continue
        if isinstance(value, types.ModuleType):
            continue
        if _defined_by_ipython(value):
            continue
        names.append(name)
    return sorted(names, key=str.lower)


def _defined_by_ipython(value: Any) -> bool:
    if not isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        return False
    module = getattr(value, "__module__", None) or ""
    return module.split(".")[0] in _IPYTHON_MODULES


def type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _shape(value: Any) -> str:
    if isinstance(value, (str, bytes, bytearray)):
        return f"len {len(value)}"
    shape = getattr(value, "shape", None) if hasattr(type(value), "shape") else None
    if isinstance(shape, tuple) and all(isinstance(n, int) for n in shape):
        return "x".join(str(n) for n in shape) if shape else "scalar"
    if hasattr(type(value), "__len__") and not isinstance(value, type):
        try:
            return f"len {len(value)}"
        except Exception:  # a broken or lazy __len__ only loses this column
            return ""
    return ""


def memory_bytes(value: Any) -> tuple[int, bool] | None:
    """Approximate size in bytes and whether it is deep (arrays, frames) or shallow."""
    try:
        if is_instance(value, "pandas", "DataFrame") or is_instance(value, "pandas", "Series"):
            usage = value.memory_usage(deep=False)
            return int(usage.sum() if hasattr(usage, "sum") else usage), True
        nbytes = getattr(value, "nbytes", None) if hasattr(type(value), "nbytes") else None
        if isinstance(nbytes, int):
            return nbytes, True
        return sys.getsizeof(value), False
    except Exception:  # sizes are best-effort
        return None


def human_size(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} TiB"


def _short_value(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, complex)):
        text = repr(value)
    elif isinstance(value, str):
        text = repr(value[:60])
    else:
        return ""
    return text if len(text) <= 40 else text[:39] + "…"


def variables_table(
    user_ns: Mapping[str, Any], hidden: Mapping[str, Any], limits: ToolLimits
) -> str:
    names = visible_names(user_ns, hidden)
    if not names:
        return "The user's namespace has no variables yet (modules and _names are not listed)."
    rows = [("name", "type", "shape/len", "memory", "value")]
    for name in names[: limits.max_variables]:
        value = user_ns[name]
        size = memory_bytes(value)
        memory = "" if size is None else human_size(size[0]) + ("" if size[1] else " (shallow)")
        rows.append((name, type_name(value), _shape(value), memory, _short_value(value)))
    widths = [min(max(len(row[i]) for row in rows), 40) for i in range(4)]
    lines = [
        "  ".join(
            [*(cell[:40].ljust(w) for cell, w in zip(row[:4], widths, strict=True)), row[4]]
        ).rstrip()
        for row in rows
    ]
    if len(names) > limits.max_variables:
        lines.append(f"… {len(names) - limits.max_variables} more variables not listed")
    lines.append(f"({len(names)} variables; modules, _names and IPython's own names hidden)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- inspect


class NotFound(LookupError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def resolve(name: str, user_ns: Mapping[str, Any], candidates: Iterable[str]) -> Any:
    """The object a (dotted) name refers to, found by lookups and ``getattr``, never ``eval``."""
    parts = name.strip().split(".")
    if not parts or not all(part.isidentifier() for part in parts):
        raise NotFound(
            f"{name!r} is not a variable name or dotted attribute path (like `df` or "
            "`df.columns`); indexing and calls are not supported here."
        )
    head, *attributes = parts
    if head not in user_ns:
        raise NotFound(
            f"No variable named {head!r} in the user's namespace." + _suggest(head, candidates)
        )
    value = user_ns[head]
    path = head
    for attribute in attributes:
        if attribute.startswith("__"):
            raise NotFound(f"Dunder attributes are not inspected ({path}.{attribute}).")
        try:
            value = getattr(value, attribute)
        except AttributeError:
            raise NotFound(
                f"{path} ({type_name(value)}) has no attribute {attribute!r}."
                + _suggest(attribute, [a for a in _safe_dir(value) if not a.startswith("_")])
            ) from None
        path = f"{path}.{attribute}"
    return value


def _safe_dir(value: Any) -> list[str]:
    try:
        return list(dir(value))
    except Exception:  # dir() of an exotic object may fail; suggestions are optional
        return []


def _suggest(word: str, candidates: Iterable[str]) -> str:
    matches = difflib.get_close_matches(word, list(candidates), n=5, cutoff=0.6)
    if not matches:
        return ""
    return " Did you mean: " + ", ".join(matches) + "?"


def describe_object(name: str, value: Any, limits: ToolLimits) -> Description:
    header = f"{name}: {type_name(value)}"
    figure = as_figure(value)
    if figure is not None:
        width, height = figure.get_size_inches()
        text = f"{header}\nFigure with {len(figure.axes)} axes, {width:.1f}x{height:.1f} in"
        return Description(text, [render_figure(figure, limits.figure_dpi)])
    if is_instance(value, "PIL.Image", "Image"):
        text = f"{header}\nPIL image, size {value.size[0]}x{value.size[1]}, mode {value.mode}"
        return Description(text, [pil_to_png(value)])
    if is_instance(value, "pandas", "DataFrame"):
        body = _describe_frame(value)
    elif is_instance(value, "pandas", "Series"):
        body = _describe_series(value)
    elif is_instance(value, "numpy", "ndarray"):
        body = _describe_array(value)
    else:
        body = _describe_other(value)
    return Description(clip(f"{header}\n{body}", limits.max_inspect_chars))


def _pandas_options() -> Any:
    pandas = sys.modules["pandas"]
    return pandas.option_context(
        "display.max_columns", 20, "display.width", 120, "display.max_colwidth", 40
    )


def _describe_frame(frame: Any) -> str:
    rows, columns = frame.shape
    memory = human_size(int(frame.memory_usage(deep=False).sum()))
    dtypes = [f"  {col!s}: {dtype}" for col, dtype in list(frame.dtypes.items())[:50]]
    if columns > 50:
        dtypes.append(f"  … {columns - 50} more columns")
    parts = [
        f"shape: {rows} rows, {columns} columns; memory: {memory} (shallow)",
        f"index: {type(frame.index).__name__}",
        "dtypes:",
        *dtypes,
    ]
    with _pandas_options():
        parts += _guarded("head(5):", lambda: frame.head(5).to_string())
        parts += _guarded("describe():", lambda: frame.iloc[:, :20].describe().to_string())
    return "\n".join(parts)


def _describe_series(series: Any) -> str:
    parts = [
        f"name: {series.name!r}; length: {len(series)}; dtype: {series.dtype}",
        f"index: {type(series.index).__name__}",
    ]
    with _pandas_options():
        parts += _guarded("head(5):", lambda: series.head(5).to_string())
        parts += _guarded("describe():", lambda: series.describe().to_string())
    return "\n".join(parts)


def _describe_array(array: Any) -> str:
    numpy = sys.modules["numpy"]
    parts = [f"shape: {array.shape}; dtype: {array.dtype}; size: {human_size(array.nbytes)}"]
    numeric = numpy.issubdtype(array.dtype, numpy.number) or array.dtype == numpy.bool_
    if numeric and not numpy.issubdtype(array.dtype, numpy.complexfloating) and array.size:

        def stats() -> str:
            with numpy.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                line = (
                    f"min: {numpy.nanmin(array)!r}; max: {numpy.nanmax(array)!r}; "
                    f"mean: {numpy.nanmean(array)!r}"
                )
                if numpy.issubdtype(array.dtype, numpy.floating):
                    line += f"; NaNs: {int(numpy.isnan(array).sum())}"
            return line

        parts += _guarded("", stats)
    parts += _guarded(
        "preview:",
        lambda: numpy.array2string(array, threshold=60, edgeitems=3, max_line_width=100),
    )
    return "\n".join(parts)


def _describe_other(value: Any) -> str:
    parts = []
    shape = _shape(value)
    if shape:
        parts.append(shape)
    if callable(value):
        # builtins and some extension callables have no signature
        with contextlib.suppress(TypeError, ValueError):
            signature = pyinspect.signature(value)
            parts.append(f"signature: {getattr(value, '__name__', '')}{signature}")
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType)):
        doc = pyinspect.getdoc(value)
        if doc:
            parts.append("doc: " + clip(doc, 1_500))
    if isinstance(value, types.ModuleType):
        parts.append(f"file: {getattr(value, '__file__', None)}")
    parts += _guarded("repr:", lambda: pretty_repr(value, 100))
    return "\n".join(parts)


def _guarded(title: str, render: Any) -> list[str]:
    """A section of a summary; if computing it fails, say so instead of failing the summary."""
    try:
        text = render()
    except Exception as e:
        text = f"(failed: {type(e).__name__}: {e})"
    return [title, text] if title else [text]


# --------------------------------------------------------------------------- history


def history_text(shell: Any, n: int, limits: ToolLimits) -> str:
    inputs = shell.user_ns.get("In")
    outputs = shell.user_ns.get("Out")
    if not isinstance(inputs, list):
        return "No input history in this kernel."
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if isinstance(raw, list) and len(raw) == len(inputs):
        inputs = raw  # the cells as typed (`%%claude …` rather than its transformed call)
    outputs = outputs if isinstance(outputs, Mapping) else {}
    numbered = [(i, src) for i, src in enumerate(inputs) if i > 0 and str(src).strip()]
    chosen = numbered[-n:]
    if not chosen:
        return "No cells have been run yet."
    blocks = []
    for number, source in chosen:
        block = f"In [{number}]:\n{clip(str(source).rstrip(), limits.history_input_chars)}"
        if number in outputs:
            shown = pretty_repr(outputs[number], 50)
            block += f"\nOut[{number}]:\n{clip(shown, limits.history_output_chars)}"
        blocks.append(block)
    older = len(numbered) - len(chosen)
    header = f"The last {len(chosen)} cell(s)" + (f" ({older} older not shown)" if older else "")
    return header + ":\n\n" + "\n\n".join(blocks)
