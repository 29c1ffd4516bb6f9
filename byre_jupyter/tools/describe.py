"""Read-only views of the user's namespace: the variables table, one object's summary, history.

Reading never runs the user's code (docs/security.md: a property, ``__getattr__`` or
``__repr__`` of the user's object could run with side effects, and a dotted path could reach the
kernel's signing key). Known
types summarise themselves (``kinds``); every other object is shown from static facts only
(``lookup``): its class, its own attributes, the names of its properties and methods. Dotted
paths follow only stored attributes, never properties, ``_names``, modules or internals.

Secrets: a value whose name says it is a secret (``is_secret_name``) is shown as ``[redacted]``
here; the tools then pass every text through ``redact_text`` (``tools``).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterable, Mapping
from typing import Any

from ..redact import REDACTED, is_secret_name
from .bounded import ToolLimits, clip
from .kinds import (
    KINDS,
    Description,
    NotFound,
    hidden_by_name,
    human_size,
    opaque,
    render,
    shorten,
    suggest,
)
from .lookup import (
    class_dict,
    class_lookup,
    instance_attributes,
    is_class,
    mro,
    off_limits,
    type_module,
    type_name,
    type_qualname,
)

__all__ = [
    "Description",
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
    elif is_class(value):
        module = type_module(value)
    else:
        return False
    return type(module) is str and module.split(".")[0] in ("IPython", "ipykernel")


def _row(name: str, value: Any) -> tuple[str, str, str, str, str]:
    kind = KINDS.lookup(value)
    if kind is None:
        return name, type_name(value), "", "", ""
    shown = ""
    try:
        size = kind.size(value)
        memory = kind.memory(value)
        if hidden_by_name(name, value):
            shown = REDACTED
        elif kind.inline:
            shown = shorten(kind.text(value, 60), 40)
    except Exception:  # a library object in a broken state only loses these columns
        size, memory = "", None
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
            f"No variable named {head!r} in the user's namespace." + suggest(head, candidates)
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
            raise NotFound(f"{path}: {e.message}" + suggest(attribute, names)) from None
    if is_class(value):  # a class: its own namespace, read raw
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
        "without running code." + suggest(attribute, names)
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
    names = [name for name, _ in instance_attributes(value)] if not is_class(value) else []
    owner = value if is_class(value) else type(value)
    for klass in mro(owner):  # type: ignore[arg-type]
        if klass is object:
            continue
        names += [n for n in class_dict(klass) if type(n) is str]
    return names


def describe_object(name: str, value: Any, limits: ToolLimits) -> Description:
    """``inspect``'s answer for ``value`` (found at ``name``): kinds we know describe
    themselves; other objects are described from static facts only."""
    header = f"{name}: {type_name(value)}"
    last = name.strip().split(".")[-1]
    if hidden_by_name(last, value):
        return Description(f"{header}\nvalue: {_SECRET_NOTE}")
    kind = KINDS.lookup(value)
    try:
        if kind is None:
            body = Description(_static_summary(value))
        elif kind.details is not None:
            body = kind.details(value, limits)
        else:
            text = kind.text(value, min(limits.max_inspect_chars - 200, 4_000))
            size = kind.size(value)
            body = Description((f"{size}\n" if size else "") + f"value: {text}")
    except Exception as e:  # a library object in a broken state: say so, keep the header
        body = Description(f"(summary failed: {type(e).__name__})")
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
    if is_class(value):
        return _class_summary(value)
    parts = [
        f"{opaque(value)}: not a type the tools read, so only its class and attributes are "
        "shown; nothing of it was evaluated."
    ]
    attributes = [
        f"  {own}: {REDACTED if hidden_by_name(own, item) else render(item, 100, 1)}"
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
    parts = [f"class: {_class_title(cls)}"]
    if properties:
        parts.append("properties (not evaluated): " + ", ".join(properties[:60]))
    if methods:
        parts.append("methods: " + ", ".join(methods[:60]))
    return parts


def _class_title(cls: type) -> str:
    bases = [type_qualname(base) for base in mro(cls)[1:] if base is not object]
    return f"{type_module(cls)}.{type_qualname(cls)}" + (
        f" (bases: {', '.join(bases[:10])})" if bases else ""
    )


def _class_summary(cls: type) -> str:
    parts = [f"class {_class_title(cls)}"]
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
    if is_class(value):
        module = type_module(value)  # type: ignore[arg-type]
        qualname = type_qualname(value)  # type: ignore[arg-type]
        return qualname if module == "builtins" else f"{module}.{qualname}"
    return opaque(value)


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
        elif KINDS.lookup(value) is None and not is_class(value):
            for attribute, item in list(instance_attributes(value))[:1_000]:
                add(attribute, item)
    return found
