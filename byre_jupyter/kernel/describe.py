"""Read-only views of the user's namespace: the variables table, one object's summary, history.

Reading never runs the user's code (issue 8: a property, ``__getattr__`` or ``__repr__`` of the
user's object ran with side effects). Only the known types registered in :data:`KINDS` are asked
anything (builtins, and numpy arrays, pandas objects, matplotlib figures and PIL images when the
user already imported them); they are matched by exact class, since a subclass of ``dict`` may
override ``__len__`` or ``__repr__``. Every other object is shown from static facts: its class,
its instance attributes (``static``), its properties and methods by name, never evaluated.

Secrets: a value whose name says it is a secret (``is_secret_name``) is shown as ``[redacted]``
here; the tools then pass every text through ``redact_text`` (``tools``).
"""

from __future__ import annotations

import difflib
import sys
import types
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..redact import REDACTED, is_secret_name
from .bounded import ToolLimits, clip
from .figures import lazy_class, pil_to_png, render_figure
from .static import (
    class_dict,
    class_lookup,
    instance_attributes,
    is_a,
    mro,
    off_limits,
    type_module,
    type_name,
    type_qualname,
)

__all__ = [
    "KINDS",
    "Description",
    "Kind",
    "Kinds",
    "NotFound",
    "describe_object",
    "history_text",
    "known_secrets",
    "resolve",
    "variables_table",
    "visible_names",
]

_IPYTHON_NAMES = frozenset({"In", "Out", "exit", "quit", "get_ipython"})
_SECRET_NOTE = f"{REDACTED} (its name says it holds a secret)"


@dataclass
class Description:
    """Text (already bounded) and images for one tool result."""

    text: str
    images: list[bytes] = field(default_factory=list)
    is_error: bool = False


class NotFound(LookupError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# --------------------------------------------------------------------------- kinds


def _blank(value: Any) -> str:
    return ""


def _no_memory(value: Any) -> tuple[int, bool] | None:
    return None


def _no_attributes(value: Any, name: str) -> Any:
    raise NotFound(f"a {type_name(value)} has no attributes to read here (methods are not called).")


@dataclass(frozen=True)
class Kind:
    """How the read tools handle one known-safe type; only these are asked anything."""

    text: Callable[[Any, int], str]
    """A repr-like text of about this many characters (our own, bounded)."""
    details: Callable[[Any, ToolLimits], Description] | None = None
    """``inspect``'s body; None: ``text`` with a larger budget."""
    size: Callable[[Any], str] = _blank
    """The variables table's shape/len column."""
    memory: Callable[[Any], tuple[int, bool] | None] = _no_memory
    """Bytes and whether that is deep (arrays, frames) or shallow."""
    attribute: Callable[[Any, str], Any] = _no_attributes
    """The dotted-path attributes this kind answers (like ``df.columns``); raises NotFound."""
    inline: bool = True
    """Show its ``text`` inside containers and in the value column (scalars, strings)."""


class Kinds:
    """A registry of known-safe types, by exact class (as IPython's formatters ``for_type``).

    Classes of optional libraries are named by module (``for_type_by_name``,
    ``for_types_by_name``) and resolved only once the user imported that module, so nothing
    heavy is imported here. ``family=True`` also accepts the library's own subclasses
    (``RangeIndex`` for ``Index``): classes defined inside that package, never a user's subclass.
    """

    def __init__(self) -> None:
        self._exact: dict[int, tuple[type, Kind]] = {}  # by id: hashing a class may run code
        self._pending: list[tuple[str, Callable[[Any], Iterable[type]], Kind]] = []
        self._families: list[tuple[str, str, Kind]] = []

    def for_type(self, cls: type, kind: Kind) -> None:
        self._exact[id(cls)] = (cls, kind)

    def for_type_by_name(self, module: str, name: str, kind: Kind, *, family: bool = False) -> None:
        if family:
            self._families.append((module, name, kind))
        else:
            self.for_types_by_name(module, lambda loaded: [getattr(loaded, name)], kind)

    def for_types_by_name(
        self, module: str, types_of: Callable[[Any], Iterable[type]], kind: Kind
    ) -> None:
        """Register ``types_of(module)`` once ``module`` has been imported by the user."""
        self._pending.append((module, types_of, kind))

    def lookup(self, value: object) -> Kind | None:
        """The kind for ``value``'s exact class (or library family), or None: not to be read."""
        if self._pending:
            self._resolve_imported()
        cls = type(value)
        entry = self._exact.get(id(cls))
        if entry is not None and entry[0] is cls:
            return entry[1]
        for module, name, kind in self._families:
            base = lazy_class(module, name)
            if base is None or not issubclass(cls, base):
                continue
            if cls is base or type_module(cls).split(".")[0] == module.split(".")[0]:
                return kind
        return None

    def _resolve_imported(self) -> None:
        pending = []
        for module, types_of, kind in self._pending:
            loaded = sys.modules.get(module)
            if loaded is None:
                pending.append((module, types_of, kind))
                continue
            for cls in types_of(loaded):
                self.for_type(cls, kind)
        self._pending = pending


KINDS = Kinds()


# --------------------------------------------------------------------------- small texts


def opaque(value: object) -> str:
    """What an object the tools do not read looks like: ``<module.Class object>``."""
    if issubclass(type(value), type):
        return f"<class {type_module(value).split('.')[0]}.{type_qualname(value)}>"  # type: ignore[arg-type]
    return f"<{type_name(value)} object>"


def render(value: object, width: int = 80, depth: int = 0) -> str:
    """A bounded, repr-like text of ``value`` built by us: known kinds render themselves
    (containers recurse), everything else is :func:`opaque`."""
    kind = KINDS.lookup(value)
    if kind is None:
        return opaque(value)
    if not kind.inline and depth > 0:
        size = kind.size(value)
        return f"<{type_name(value)}{' ' + size if size else ''}>"
    return kind.text(value, max(width, 8)) if depth < 4 else "…"


def _ellipsis(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def _number_text(value: Any, width: int) -> str:
    if type(value) is int and value.bit_length() > 4_000:  # str(int) refuses > 4300 digits
        return f"<int of {value.bit_length()} bits>"
    return _ellipsis(repr(value), max(width, 40))


def _string_text(value: Any, width: int) -> str:
    if len(value) > width:
        return repr(value[:width]) + f"… ({len(value)} total)"
    return repr(value)


def _length(value: Any) -> str:
    return f"len {len(value)}"


def _shallow(value: Any) -> tuple[int, bool]:
    return sys.getsizeof(value), False


def _label(value: object, width: int = 40) -> str:
    """A key or column label: strings bare, other known scalars as repr, the rest opaque."""
    if type(value) is str:
        return _ellipsis(value, width)
    return render(value, width, depth=1)


def _container_text(value: Any, width: int, depth: int = 0) -> str:
    cls = type(value)
    if cls is dict:
        opening, closing = "{", "}"
    elif cls is list:
        opening, closing = "[", "]"
    elif cls is tuple:
        opening, closing = "(", ",)" if len(value) == 1 else ")"
    elif cls is set:
        opening, closing = ("{", "}") if value else ("set(", ")")
    else:
        opening, closing = ("frozenset({", "})") if value else ("frozenset(", ")")
    parts: list[str] = []
    used = len(opening) + len(closing)
    items = iter(value.items()) if cls is dict else iter(value)
    for count, item in enumerate(items):
        if cls is dict:
            key, element = item
            shown = render(key, 40, depth + 1) + ": "
            if type(key) is str and is_secret_name(key):
                shown += REDACTED
            else:
                shown += _element(element, width - used, depth + 1)
        else:
            shown = _element(item, width - used, depth + 1)
        if used + len(shown) > width and parts:
            parts.append(f"… {len(value) - count} more")
            break
        parts.append(shown)
        used += len(shown) + 2
    return opening + ", ".join(parts) + closing


def _element(value: object, width: int, depth: int) -> str:
    if depth >= 4:
        return "…"
    kind = KINDS.lookup(value)
    if kind is _CONTAINER:
        return _container_text(value, max(width, 20), depth)
    return render(value, min(max(width, 20), 200), depth)


def _container_details(value: Any, limits: ToolLimits) -> Description:
    text = _container_text(value, min(limits.max_inspect_chars - 200, 1_500))
    return Description(f"len {len(value)}\nvalue: {text}")


_cls: type
for _cls in (type(None), bool, int, float, complex):
    KINDS.for_type(_cls, Kind(_number_text, memory=_shallow))
for _cls in (str, bytes, bytearray):
    KINDS.for_type(_cls, Kind(_string_text, size=_length, memory=_shallow))
KINDS.for_type(range, Kind(_number_text, size=_length, memory=_shallow))
_CONTAINER = Kind(_container_text, _container_details, size=_length, memory=_shallow, inline=False)
for _cls in (list, tuple, dict, set, frozenset):
    KINDS.for_type(_cls, _CONTAINER)


# --------------------------------------------------------------------------- numpy


def _numpy_scalar_text(value: Any, width: int) -> str:
    return _ellipsis(repr(value), max(width, 40))


def _numpy_scalar_types(numpy: Any) -> Iterable[type]:
    # numpy's own scalars (np.float64(1.5)); void and object_ may hold arbitrary objects
    return set(numpy.sctypeDict.values()) - {numpy.void, numpy.object_}


KINDS.for_types_by_name("numpy", _numpy_scalar_types, Kind(_numpy_scalar_text, memory=_shallow))

_PLAIN_DTYPES = "biufcmMUS"  # numbers, dates and strings: numpy formats them itself


def _array_size(array: Any) -> str:
    return "x".join(str(n) for n in array.shape) if array.shape else "scalar"


def _array_memory(array: Any) -> tuple[int, bool]:
    return int(array.nbytes), True


def _array_text(array: Any, width: int) -> str:
    numpy = sys.modules["numpy"]
    if array.dtype.kind in _PLAIN_DTYPES:
        text = numpy.array2string(array, threshold=60, edgeitems=3, max_line_width=100)
    else:  # objects: their own reprs would run; show what we can read
        text = _container_text(array.ravel()[:20].tolist(), width)
    return _ellipsis(text, max(width, 200))


def _array_details(array: Any, limits: ToolLimits) -> Description:
    numpy = sys.modules["numpy"]
    parts = [f"shape: {array.shape}; dtype: {array.dtype}; size: {human_size(array.nbytes)}"]
    kind = array.dtype.kind
    if kind in "biuf" and array.size:

        def stats() -> str:
            with numpy.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                line = (
                    f"min: {numpy.nanmin(array)!r}; max: {numpy.nanmax(array)!r}; "
                    f"mean: {numpy.nanmean(array)!r}"
                )
                if kind == "f":
                    line += f"; NaNs: {int(numpy.isnan(array).sum())}"
            return line

        parts += _guarded("", stats)
    if kind not in _PLAIN_DTYPES:
        parts.append(f"({array.dtype} elements are shown by type, not evaluated)")
    parts += _guarded("preview:", lambda: _array_text(array, 2_000))
    return Description("\n".join(parts))


def _array_attribute(array: Any, name: str) -> Any:
    if name in ("T", "shape", "dtype", "size", "ndim"):
        return getattr(array, name)
    raise NotFound(f"numpy arrays answer .T, .shape, .dtype, .size and .ndim here, not .{name}.")


KINDS.for_type_by_name(
    "numpy",
    "ndarray",
    Kind(
        _array_text,
        _array_details,
        size=_array_size,
        memory=_array_memory,
        attribute=_array_attribute,
        inline=False,
    ),
)


# --------------------------------------------------------------------------- pandas


def _pandas() -> Any:
    return sys.modules["pandas"]


def _labels_plain(index: Any) -> bool:
    """Whether an Index holds only labels we can print without running the user's code."""
    if index.dtype.kind != "O":
        return True
    return all(_plain_label(label) for label in index.tolist())


def _plain_label(value: object) -> bool:
    if type(value) is tuple:
        return all(_plain_label(v) for v in value)
    kind = KINDS.lookup(value)
    return kind is not None and kind.inline


def _needs_rendering(dtype: Any) -> bool:
    """Columns whose cells pandas would format by calling their own ``__str__``/``__repr__``."""
    if type_module(type(dtype)).startswith("numpy"):
        return bool(dtype.kind in "OV")
    categories = getattr(dtype, "categories", None)  # a pandas dtype (a library class)
    return categories is not None and not _labels_plain(categories)


def _plain_cell(value: object) -> object:
    return value if _plain_label(value) and type(value) is not tuple else render(value, 40, 1)


def _frame_for_printing(frame: Any) -> Any | None:
    """``frame`` (a few rows) with every non-plain cell replaced by our own text; None when
    its labels are not plain values."""
    if not (_labels_plain(frame.columns) and _labels_plain(frame.index)):
        return None
    safe = frame.copy()
    for position, dtype in enumerate(frame.dtypes.tolist()):
        if _needs_rendering(dtype):
            cells = [_plain_cell(v) for v in frame.iloc[:, position].tolist()]
            safe.isetitem(position, _pandas().Series(cells, index=frame.index, dtype=object))
    return safe


def _pandas_options() -> Any:
    return _pandas().option_context(
        "display.max_columns", 20, "display.width", 120, "display.max_colwidth", 40
    )


def _frame_text(frame: Any, width: int) -> str:
    head = _frame_for_printing(frame.head(5))
    if head is None:
        return f"<DataFrame {_array_size(frame)}; labels not shown>"
    with _pandas_options():
        return clip(head.to_string(), max(width, 400))


def _frame_memory(frame: Any) -> tuple[int, bool]:
    return int(frame.memory_usage(deep=False).sum()), True


def _frame_details(frame: Any, limits: ToolLimits) -> Description:
    rows, columns = frame.shape
    dtypes = [
        f"  {_label(col)}: {dtype}"
        for col, dtype in zip(frame.columns.tolist()[:50], frame.dtypes.tolist()[:50], strict=True)
    ]
    if columns > 50:
        dtypes.append(f"  … {columns - 50} more columns")
    parts = [
        f"shape: {rows} rows, {columns} columns; "
        f"memory: {human_size(_frame_memory(frame)[0])} (shallow)",
        f"index: {type_qualname(type(frame.index))}",
        "dtypes:",
        *dtypes,
    ]
    head = _frame_for_printing(frame.head(5))
    if head is None:
        parts.append("(row or column labels are not plain values: rows not shown)")
        return Description("\n".join(parts))
    numeric = frame.select_dtypes(include="number").iloc[:, :20]
    with _pandas_options():
        parts += _guarded("head(5):", head.to_string)
        if numeric.shape[1]:
            parts += _guarded("describe():", lambda: numeric.describe().to_string())
    return Description("\n".join(parts))


def _frame_attribute(frame: Any, name: str) -> Any:
    if name in ("columns", "index", "dtypes"):
        return getattr(frame, name)
    for position, column in enumerate(frame.columns.tolist()):
        if type(column) is str and column == name:
            return frame.iloc[:, position]
    raise NotFound(
        f"The DataFrame has no column {name!r} (here it answers its columns by name, and "
        ".columns, .index and .dtypes)."
        + _suggest(name, [c for c in frame.columns.tolist() if type(c) is str])
    )


def _series_for_printing(series: Any) -> Any | None:
    frame = _frame_for_printing(series.head(5).to_frame(name="value"))
    return None if frame is None else frame.iloc[:, 0]


def _series_text(series: Any, width: int) -> str:
    head = _series_for_printing(series)
    if head is None:
        return f"<Series len {len(series)}; labels not shown>"
    return clip(head.to_string(), max(width, 400))


def _series_details(series: Any, limits: ToolLimits) -> Description:
    parts = [
        f"name: {_label(series.name)}; length: {len(series)}; dtype: {series.dtype}",
        f"index: {type_qualname(type(series.index))}",
    ]
    head = _series_for_printing(series)
    if head is None:
        parts.append("(labels are not plain values: rows not shown)")
        return Description("\n".join(parts))
    with _pandas_options():
        parts += _guarded("head(5):", head.to_string)
        if _pandas().api.types.is_numeric_dtype(series.dtype):
            parts += _guarded("describe():", lambda: series.describe().to_string())
    return Description("\n".join(parts))


def _series_attribute(series: Any, name: str) -> Any:
    if name in ("index", "dtype"):
        return getattr(series, name)
    raise NotFound(f"Series answer .index and .dtype here, not .{name}.")


def _index_text(index: Any, width: int) -> str:
    labels = [_label(v) if _plain_label(v) else render(v, 40, 1) for v in index[:20].tolist()]
    more = f", … {len(index) - 20} more" if len(index) > 20 else ""
    return _ellipsis(f"{type_qualname(type(index))}([{', '.join(labels)}{more}])", width)


def _index_details(index: Any, limits: ToolLimits) -> Description:
    text = _index_text(index, 4_000)
    return Description(f"length: {len(index)}; dtype: {index.dtype}\n{text}")


def _series_memory(series: Any) -> tuple[int, bool]:
    return int(series.memory_usage(deep=False)), True


KINDS.for_type_by_name(
    "pandas",
    "DataFrame",
    Kind(
        _frame_text,
        _frame_details,
        size=_array_size,
        memory=_frame_memory,
        attribute=_frame_attribute,
        inline=False,
    ),
)
KINDS.for_type_by_name(
    "pandas",
    "Series",
    Kind(
        _series_text,
        _series_details,
        size=_array_size,
        memory=_series_memory,
        attribute=_series_attribute,
        inline=False,
    ),
)
KINDS.for_type_by_name(
    "pandas", "Index", Kind(_index_text, _index_details, size=_length, inline=False), family=True
)


# --------------------------------------------------------------------------- images


def _figure_of(value: Any) -> Any:
    return value if lazy_class("matplotlib.figure", "Figure") is type(value) else value.figure


def _figure_text(value: Any, width: int) -> str:
    figure = _figure_of(value)
    width_in, height_in = figure.get_size_inches()
    return f"<{type_qualname(type(value))}: figure with {len(figure.axes)} axes, " \
        f"{width_in:.1f}x{height_in:.1f} in>"  # fmt: skip


def _figure_details(value: Any, limits: ToolLimits) -> Description:
    figure = _figure_of(value)
    width_in, height_in = figure.get_size_inches()
    text = f"Figure with {len(figure.axes)} axes, {width_in:.1f}x{height_in:.1f} in"
    return Description(text, [render_figure(figure, limits.figure_dpi)])


def _image_text(image: Any, width: int) -> str:
    return f"<PIL image {image.size[0]}x{image.size[1]} {image.mode}>"


def _image_details(image: Any, limits: ToolLimits) -> Description:
    text = f"PIL image, size {image.size[0]}x{image.size[1]}, mode {image.mode}"
    return Description(text, [pil_to_png(image)])


_FIGURE = Kind(_figure_text, _figure_details, inline=False)
KINDS.for_type_by_name("matplotlib.figure", "Figure", _FIGURE)
KINDS.for_type_by_name("matplotlib.axes", "Axes", _FIGURE, family=True)
KINDS.for_type_by_name("PIL.Image", "Image", Kind(_image_text, _image_details), family=True)


# --------------------------------------------------------------------------- variables


def visible_names(user_ns: Mapping[str, Any], hidden: Mapping[str, Any]) -> list[str]:
    """The user's own variables: no ``_`` names, modules, or what IPython put there itself."""
    names = []
    for name, value in list(user_ns.items()):
        if type(name) is not str or name.startswith("_") or name in _IPYTHON_NAMES:
            continue
        if name in hidden and hidden[name] is value:
            continue
        if off_limits(value) is not None:
            continue
        if _defined_by_ipython(value):
            continue
        names.append(name)
    return sorted(names, key=str.lower)


def _defined_by_ipython(value: Any) -> bool:
    if type(value) is types.FunctionType:
        module = value.__module__
    elif issubclass(type(value), type):
        module = type_module(value)
    else:
        return False
    return type(module) is str and module.split(".")[0] in ("IPython", "ipykernel")


def human_size(size: int) -> str:
    amount = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if amount < 1024 or unit == "GiB":
            return f"{amount:.0f} {unit}" if unit == "B" else f"{amount:.1f} {unit}"
        amount /= 1024
    return f"{amount:.1f} TiB"


def _row(name: str, value: Any) -> tuple[str, str, str, str, str]:
    kind = KINDS.lookup(value)
    if kind is None:
        return name, type_name(value), "", "", ""
    try:
        size = kind.size(value)
        memory = kind.memory(value)
    except Exception:  # a library object in a broken state only loses these columns
        size, memory = "", None
    shown = ""
    if is_secret_name(name):
        shown = REDACTED
    elif kind.inline:
        shown = _ellipsis(kind.text(value, 60), 40)
    used = "" if memory is None else human_size(memory[0]) + ("" if memory[1] else " (shallow)")
    return name, type_name(value), size, used, shown


def variables_table(
    user_ns: Mapping[str, Any], hidden: Mapping[str, Any], limits: ToolLimits
) -> str:
    names = visible_names(user_ns, hidden)
    if not names:
        return "The user's namespace has no variables yet (modules and _names are not listed)."
    rows = [("name", "type", "shape/len", "memory", "value")]
    rows += [_row(name, user_ns[name]) for name in names[: limits.max_variables]]
    widths = [min(max(len(row[i]) for row in rows), 40) for i in range(4)]
    lines = [
        "  ".join(
            [*(cell[:40].ljust(w) for cell, w in zip(row[:4], widths, strict=True)), row[4]]
        ).rstrip()
        for row in rows
    ]
    if len(names) > limits.max_variables:
        lines.append(f"… {len(names) - limits.max_variables} more variables not listed")
    lines.append(
        f"({len(names)} variables; modules, _names and IPython's own names hidden; "
        "objects of other types are listed by type only)"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- inspect


def resolve(
    name: str,
    user_ns: Mapping[str, Any],
    candidates: Iterable[str],
    hidden: Mapping[str, Any] | None = None,
) -> Any:
    """The object a (dotted) name refers to, found by static lookups only (never ``eval``,
    properties or ``__getattr__``); raises :class:`NotFound` with a message for Claude."""
    parts = name.strip().split(".")
    if not all(part.isidentifier() for part in parts):
        raise NotFound(
            f"{name!r} is not a variable name or dotted attribute path (like `df` or "
            "`df.columns`); indexing and calls are not supported here."
        )
    head, *attributes = parts
    if head.startswith("_") or head in _IPYTHON_NAMES:
        raise NotFound(f"{head} is not inspected: _names and IPython's own names are private.")
    if head not in user_ns:
        raise NotFound(
            f"No variable named {head!r} in the user's namespace." + _suggest(head, candidates)
        )
    value = user_ns[head]
    if hidden is not None and head in hidden and hidden[head] is value:
        raise NotFound(f"{head} is not inspected: it is IPython's own, not the user's.")
    path = head
    _check(path, value)
    for attribute in attributes:
        if attribute.startswith("_"):
            raise NotFound(f"{path}.{attribute} is not inspected: _attributes are private.")
        value = _attribute(path, value, attribute)
        path = f"{path}.{attribute}"
        _check(path, value)
    return value


def _check(path: str, value: object) -> None:
    refusal = off_limits(value)
    if refusal is not None:
        raise NotFound(f"{path} is not inspected: {refusal}.")


def _attribute(path: str, value: Any, attribute: str) -> Any:
    kind = KINDS.lookup(value)
    if kind is not None:
        try:
            return kind.attribute(value, attribute)
        except NotFound as e:
            names = [n for n in _public_names(value) if not n.startswith("_")]
            raise NotFound(f"{path}: {e.message}" + _suggest(attribute, names)) from None
    if issubclass(type(value), type):  # a class: its own namespace, read raw
        found, raw = class_lookup(value, attribute)
        if found:
            return raw
    else:
        for own, item in instance_attributes(value):
            if own == attribute:
                return item
        found, raw = class_lookup(type(value), attribute)
        if found:
            what = _class_member_kind(raw)
            if what is None:
                return raw  # plain data on the class
            raise NotFound(
                f"{path}.{attribute} is {what} of {type_name(value)}; it is not evaluated "
                "(reading it would run the user's code). Use the python tool if it is needed."
            )
    names = [n for n in _public_names(value) if not n.startswith("_")]
    raise NotFound(
        f"{path} ({type_name(value)}) has no attribute {attribute!r} that can be read "
        "without running code." + _suggest(attribute, names)
    )


_METHODS = (
    types.FunctionType,
    staticmethod,
    classmethod,
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    types.WrapperDescriptorType,
)


def _class_member_kind(raw: object) -> str | None:
    """What a class attribute is, if reading it through an instance would run code."""
    cls = type(raw)
    if cls is property:
        return "a property"
    if any(cls is method for method in _METHODS):
        return "a method"
    if class_lookup(cls, "__get__")[0]:
        return "a computed attribute (a descriptor)"
    return None


def _public_names(value: object) -> list[str]:
    names = [name for name, _ in instance_attributes(value)] if not is_a(value, type) else []
    owner = value if issubclass(type(value), type) else type(value)
    for klass in mro(owner):  # type: ignore[arg-type]
        if klass is object:
            continue
        names += [n for n in class_dict(klass) if type(n) is str]
    return names


def _suggest(word: str, candidates: Iterable[str]) -> str:
    matches = difflib.get_close_matches(word, list(candidates), n=5, cutoff=0.6)
    if not matches:
        return ""
    return " Did you mean: " + ", ".join(matches) + "?"


def describe_object(name: str, value: Any, limits: ToolLimits) -> Description:
    """``inspect``'s answer for ``value`` (found at ``name``): kinds we know describe
    themselves; other objects are described from static facts only."""
    header = f"{name}: {type_name(value)}"
    last = name.strip().split(".")[-1]
    if is_secret_name(last):
        return Description(f"{header}\nvalue: {_SECRET_NOTE}")
    kind = KINDS.lookup(value)
    if kind is None:
        body = Description(_static_summary(value))
    elif kind.details is not None:
        try:
            body = kind.details(value, limits)
        except Exception as e:  # a library object in a broken state: say so, keep the header
            body = Description(f"(summary failed: {type(e).__name__}: {e})")
    else:
        text = kind.text(value, min(limits.max_inspect_chars - 200, 4_000))
        size = kind.size(value)
        body = Description((f"{size}\n" if size else "") + f"value: {text}")
    text = clip(f"{header}\n{body.text}", limits.max_inspect_chars)
    return Description(text, body.images, body.is_error)


def _static_summary(value: Any) -> str:
    cls = type(value)
    if cls is types.FunctionType:
        return _function_summary(value)
    if cls is types.MethodType:
        function = value.__func__
        summary = _function_summary(function) if type(function) is types.FunctionType else ""
        return f"method bound to {opaque(value.__self__)}\n{summary}".rstrip()
    if cls is types.BuiltinFunctionType:
        doc = value.__doc__
        return f"builtin function {value.__name__}" + (
            f"\ndoc: {clip(doc, 1_500)}" if type(doc) is str else ""
        )
    if issubclass(cls, type):
        return _class_summary(value)
    parts = [
        f"{opaque(value)}: not a type the tools read, so only its class and attributes are "
        "shown; nothing of it was evaluated."
    ]
    attributes = [
        f"  {own}: {REDACTED if is_secret_name(own) else render(item, 100, 1)}"
        for own, item in instance_attributes(value)
        if not own.startswith("_")
    ]
    if attributes:
        parts += ["attributes:", *attributes[:100]]
        if len(attributes) > 100:
            parts.append(f"  … {len(attributes) - 100} more")
    parts += _members(cls)
    return "\n".join(parts)


def _members(cls: type) -> list[str]:
    properties: list[str] = []
    methods: list[str] = []
    for klass in mro(cls):
        if klass is object:
            continue
        for member, raw in list(class_dict(klass).items()):
            if type(member) is not str or member.startswith("_"):
                continue
            what = _class_member_kind(raw)
            if what is None or member in methods or member in properties:
                continue
            (methods if what == "a method" else properties).append(member)
    parts = [f"class: {type_name_of_class(cls)}"]
    if properties:
        parts.append("properties (not evaluated): " + ", ".join(properties[:60]))
    if methods:
        parts.append("methods: " + ", ".join(methods[:60]))
    return parts


def type_name_of_class(cls: type) -> str:
    bases = [type_qualname(base) for base in mro(cls)[1:] if base is not object]
    return f"{type_module(cls)}.{type_qualname(cls)}" + (
        f" (bases: {', '.join(bases[:10])})" if bases else ""
    )


def _class_summary(cls: type) -> str:
    parts = [f"class {type_name_of_class(cls)}"]
    found, init = class_lookup(cls, "__init__")
    if found and type(init) is types.FunctionType:
        parts.append(f"signature: {type_qualname(cls)}{_signature(init, skip_first=True)}")
    found, doc = class_lookup(cls, "__doc__")
    if found and type(doc) is str:
        parts.append("doc: " + clip(doc.strip(), 1_500))
    parts += _members(cls)[1:]
    return "\n".join(parts)


def _function_summary(function: types.FunctionType) -> str:
    parts = [f"signature: {function.__name__}{_signature(function)}"]
    doc = function.__doc__
    if type(doc) is str and doc.strip():
        parts.append("doc: " + clip(doc.strip(), 1_500))
    return "\n".join(parts)


def _signature(function: types.FunctionType, *, skip_first: bool = False) -> str:
    """``(a, b: int = 1, *rest, key=None) -> str`` from the code object, with defaults and
    annotations rendered by us (``inspect.signature`` would call their ``__repr__``)."""
    code = function.__code__
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    defaults = function.__defaults__ or ()
    kwdefaults = function.__kwdefaults__ or {}
    # 3.14 evaluates annotations lazily on first access (user code): read them only before.
    annotations = function.__annotations__ if sys.version_info < (3, 14) else {}
    if type(annotations) is not dict:
        annotations = {}

    def param(name: str, default: tuple[object] | None) -> str:
        text = name
        if name in annotations:
            text += f": {_annotation(annotations[name])}"
        if default is not None:
            text += (" = " if name in annotations else "=") + render(default[0], 40, 1)
        return text

    params: list[str] = []
    first_default = positional - len(defaults)
    for i in range(positional):
        default = (defaults[i - first_default],) if i >= first_default else None
        params.append(param(names[i], default))
        if i + 1 == code.co_posonlyargcount:
            params.append("/")
    index = positional + keyword_only
    if code.co_flags & 0x04:  # CO_VARARGS
        params.append("*" + param(names[index], None))
        index += 1
    elif keyword_only:
        params.append("*")
    for name in names[positional : positional + keyword_only]:
        params.append(param(name, (kwdefaults[name],) if name in kwdefaults else None))
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        params.append("**" + param(names[index], None))
    if skip_first and params and params[0] not in ("/", "*"):
        params = params[1:]
        if params[:1] == ["/"]:
            params = params[1:]
    text = f"({', '.join(params)})"
    if "return" in annotations:
        text += f" -> {_annotation(annotations['return'])}"
    return text


def _annotation(value: object) -> str:
    if type(value) is str:
        return value
    if issubclass(type(value), type):
        module = type_module(value)  # type: ignore[arg-type]
        qualname = type_qualname(value)  # type: ignore[arg-type]
        return qualname if module == "builtins" else f"{module}.{qualname}"
    return opaque(value)


def _guarded(title: str, render_section: Callable[[], str]) -> list[str]:
    """A section of a summary; if computing it fails, say so instead of failing the summary."""
    try:
        text = render_section()
    except Exception as e:
        text = f"(failed: {type(e).__name__}: {e})"
    return [title, text] if title else [text]


# --------------------------------------------------------------------------- history


def history_text(shell: Any, n: int, limits: ToolLimits) -> str:
    inputs = shell.user_ns.get("In")
    outputs = shell.user_ns.get("Out")
    if type(inputs) is not list:
        return "No input history in this kernel."
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    if type(raw) is list and len(raw) == len(inputs):
        inputs = raw  # the cells as typed (`%%claude …` rather than its transformed call)
    outputs = outputs if type(outputs) is dict else {}
    numbered = [(i, src) for i, src in enumerate(inputs) if i > 0 and type(src) is str]
    numbered = [(i, src) for i, src in numbered if src.strip()]
    chosen = numbered[-n:]
    if not chosen:
        return "No cells have been run yet."
    blocks = []
    for number, source in chosen:
        block = f"In [{number}]:\n{clip(source.rstrip(), limits.history_input_chars)}"
        if number in outputs:
            shown = render(outputs[number], limits.history_output_chars)
            block += f"\nOut[{number}]:\n{clip(shown, limits.history_output_chars)}"
        blocks.append(block)
    older = len(numbered) - len(chosen)
    header = f"The last {len(chosen)} cell(s)" + (f" ({older} older not shown)" if older else "")
    return header + ":\n\n" + "\n\n".join(blocks)


# --------------------------------------------------------------------------- secrets


def known_secrets(user_ns: Mapping[str, Any], hidden: Mapping[str, Any]) -> set[str]:
    """Exact values the user keeps under secret names (``api_key``, ``cfg["token"]``,
    ``creds.password``), read statically, so they are redacted wherever they show up."""
    found: set[str] = set()

    def add(name: object, value: object) -> None:
        if type(name) is str and is_secret_name(name):
            if type(value) is str:
                found.add(value)
            elif type(value) is bytes:
                found.add(value.decode("utf-8", "replace"))

    for name in visible_names(user_ns, hidden):
        value = user_ns[name]
        add(name, value)
        if type(value) is dict:
            for key, item in list(value.items())[:1_000]:
                add(key, item)
        elif KINDS.lookup(value) is None and not issubclass(type(value), type):
            for attribute, item in list(instance_attributes(value))[:1_000]:
                add(attribute, item)
    return found
