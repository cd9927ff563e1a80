"""Values as debugpy shows them, without marks that read as Python: small nested values whole, and
every cut said as a cut (a named tuple field by field, a long ``repr`` by its start and the count of the rest).

debugpy's ``SafeRepr`` shows two levels of nesting and writes a deeper container as ``{...}`` or
``[...]``, Python's own mark for a container that refers to itself, and a long one as ``[1, 2, ...]``
(a valid Python ``Ellipsis``): an agent reads a cycle, or the program's data. Once the module is
imported, :func:`install` patches it: four levels, a deeper container as ``<cut: dict of 3>``, the
items past the limit as ``<cut: 40 more>``, a whole value past :data:`BUDGET` characters ending in
``<cut>``; an object without a ``__repr__`` of its own shows a few attributes. A container that
holds itself keeps Python's mark. The variable keeps its reference, so the relay marks it
``truncated`` and an agent expands it from there.

A value cut at the budget leaves the printer's generators suspended: they are closed where they are
left, and debugpy's string printer (a bare ``except:`` around its ``yield``s, which would swallow the
``GeneratorExit`` and make the program's ``sys.unraisablehook`` report it) is run to its end first.
"""

from __future__ import annotations

import sys
from typing import Any

from _debugrelay_patch import when_imported
from _debugrelay_probe import _find

TARGET = "_pydevd_bundle.pydevd_safe_repr"
LEVELS = (60, 20, 10, 10)  # items shown per nesting level (debugpy: 60, 20)
BUDGET = 4096  # characters of one value; the relay shows fewer
SELF = 100  # the level debugpy gives a container found inside itself


def _size(obj: Any) -> int | None:
    """``len(obj)`` by the nearest ``__len__`` the program did not write (a list subclass's own one never runs)."""
    try:
        mro = type.__dict__["__mro__"].__get__(type(obj))
        for klass in mro:
            method = type.__dict__["__dict__"].__get__(klass).get("__len__")
            if method is not None and type(method).__name__ != "function":
                return int(method(obj))
    except Exception:
        pass
    return None


def _length(obj: Any) -> str:
    size = _size(obj)
    return "?" if size is None else str(size)


def _cut(obj: Any) -> str:
    return f"<cut: {type(obj).__name__} of {_length(obj)}>"


def _more(obj: Any, shown: int) -> str:
    size = _size(obj)
    return "<cut: more>" if size is None else f"<cut: {size - shown} more>"


def _too_deep(self: Any, obj: Any, level: int, prefix: str, suffix: str) -> str | None:
    """What stands for a container at ``level`` when it is not written out: itself again, or too deep."""
    if level >= SELF:
        return prefix + "..." + suffix
    if level >= len(self.maxcollection):
        return _cut(obj)
    return None


def _repr_iter(  # noqa: PLR0917 (debugpy's signature)
    self: Any, obj: Any, level: int, prefix: str, suffix: str, comma_after_single_element: bool = False
) -> Any:
    stop = _too_deep(self, obj, level, prefix, suffix)
    if stop is not None:
        yield stop
        return
    yield prefix
    for shown, item in enumerate(obj):
        if shown:
            yield ", "
        if shown >= self.maxcollection[level] - 1:
            yield _more(obj, shown)
            break
        yield from self._repr(item, SELF if item is obj else level + 1)
    else:
        if comma_after_single_element and _length(obj) == "1":  # (x,)
            yield ","
    yield suffix


def _repr_dict(  # noqa: PLR0917 (debugpy's signature)
    self: Any, obj: Any, level: int, prefix: str, suffix: str, item_prefix: str, item_sep: str, item_suffix: str
) -> Any:
    if not obj:
        yield prefix + suffix
        return
    stop = _too_deep(self, obj, level, prefix, suffix)
    if stop is not None:
        yield stop
        return
    yield prefix
    for shown, key in enumerate(list(obj)):
        if shown:
            yield ", "
        if shown >= self.maxcollection[level] - 1:
            yield _more(obj, shown)
            break
        yield item_prefix
        yield from self._repr(key, level + 1)
        yield item_sep
        try:
            item = obj[key]
        except Exception:
            yield "<?>"
        else:
            yield from self._repr(item, SELF if item is obj else level + 1)
        yield item_suffix
    yield suffix


_OBJECT_REPR = object.__dict__["__repr__"]
PREVIEW_ATTRIBUTES = (10, 4)  # of an object without a repr of its own: the value itself, one inside another


def _named_fields(cls: Any) -> tuple[str, ...] | None:
    """A named tuple's field names, when its ``__repr__`` is the one ``collections.namedtuple`` wrote."""
    try:
        if not issubclass(cls, tuple):
            return None
        names = _find(cls, "_fields")
        method = _find(cls, "__repr__")
        code = getattr(method, "__code__", None) if type(method).__name__ == "function" else None
        generated = code is not None and code.co_filename.replace("\\", "/").endswith("collections/__init__.py")
        if generated and type(names) is tuple and all(type(n) is str for n in names):
            return names
    except Exception:
        pass
    return None


def _repr_named(self: Any, obj: Any, level: int, names: tuple[str, ...]) -> Any:
    """``P(x=1, y=[1, 2, <cut: 48 more>])``: a named tuple as its own repr writes it, within the levels."""
    if level >= len(self.maxcollection):
        yield _cut(obj)
        return
    yield f"{type(obj).__name__}("
    values = tuple.__iter__(obj)
    for shown, (name, value) in enumerate(zip(names, values)):  # noqa: B905 (any Python 3)
        if shown:
            yield ", "
        if shown >= self.maxcollection[level] - 1 and shown < len(names) - 1:
            yield _more(obj, shown)
            break
        yield f"{name}="
        yield from self._repr(value, SELF if value is obj else level + 1)
    yield ")"


def _repr_long_iter(self: Any, obj: Any) -> Any:
    """A collection too long or too deep to write out: said as a cut (debugpy: ``<P, len() = 3>``)."""
    yield _cut(obj)


def _repr_obj(self: Any, obj: Any, level: int, limit_inner: int, limit_outer: int) -> Any:  # noqa: PLR0917
    """A value's own repr, its end past the limit counted (debugpy cuts its middle out with ``...``)."""
    if self.raw_value or (self.convert_to_hex and isinstance(obj, self.int_types)):
        yield from _plain_repr_obj(self, obj, level, limit_inner, limit_outer)
        return
    try:
        text = repr(obj)
    except Exception:
        try:
            text = object.__repr__(obj)
        except Exception:
            text = "<no repr available>"
    limit = limit_inner if level > 0 else limit_outer
    if len(text) > limit:
        text = f"{text[:limit]}<cut: {len(text) - limit} more chars>"
    yield self._convert_to_unicode_or_bytes_repr(text)


def _repr_other(self: Any, obj: Any, level: int) -> Any:
    """An object without a ``__repr__`` of its own shows a few attributes: ``<Cat name='Tom', hunger=3>``.

    Only the instance ``__dict__`` is read (no property or ``__getattr__`` runs); the address is kept
    (it tells two objects apart)."""
    cls = type(obj)
    names = _named_fields(cls)
    if names is not None:
        yield from _repr_named(self, obj, level, names)
        return
    fields = None
    try:
        if _find(cls, "__repr__") is _OBJECT_REPR and level < len(self.maxcollection):
            found = _find(cls, "__dict__")
            fields = found.__get__(obj) if type(found).__name__ == "getset_descriptor" else None
    except Exception:
        fields = None
    if type(fields) is not dict or not fields:
        yield from _plain_other(self, obj, level)
        return
    yield f"<{cls.__name__} at {hex(id(obj))}: "
    for shown, (name, value) in enumerate(list(fields.items())):
        if shown:
            yield ", "
        if shown >= PREVIEW_ATTRIBUTES[0 if level == 0 else 1]:
            yield f"<cut: {len(fields) - shown} more>"
            break
        yield f"{name}="
        yield from self._repr(value, SELF if value is obj else level + 1)
    yield ">"


_plain_other: Any = None
_plain_str: Any = None
_plain_is_long_iter: Any = None
_plain_repr_obj: Any = None


def _is_long_iter(self: Any, obj: Any, level: int = 0) -> bool:
    """debugpy's answer, without its ``hasattr(obj, "__iter__")`` (a program's ``__getattr__``) where the
    answer is False whatever it finds: a value neither a string nor one of the builtin collections."""
    if not issubclass(type(obj), self.string_types) and not issubclass(type(obj), self.long_iter_types):
        return False
    if _named_fields(type(obj)) is not None:  # written field by field, each cut where it is too long
        return False
    return bool(_plain_is_long_iter(self, obj, level))


def _repr_str(self: Any, obj: Any, level: int) -> list[str]:
    """debugpy's parts of a string, all made before any is used (at most three, or the whole raw value); a
    long one inside a value is its start and the count of the rest (debugpy: start, ``...``, end)."""
    parts = list(_plain_str(self, obj, level))
    if len(parts) != 3 or parts[1] != "..." or type(obj) not in (str, bytes):
        return parts
    limit = self.maxother_inner if level > 0 else self.maxother_outer
    head = repr(obj[:limit])
    return [head[:-1], f"<cut: {len(obj) - limit} more chars>"]  # its closing quote goes with the cut


def _close(parts: Any) -> None:
    """Close a printer left before its end, here rather than when the program's collector finds it."""
    close = getattr(parts, "close", None)
    if close is not None:
        try:
            close()
        except Exception:  # the printer's own failure: never the program's
            pass


def _call(self: Any, obj: Any) -> str:
    parts: list[str] = []
    size = 0
    budget = 0 if self.raw_value or issubclass(type(obj), (str, bytes)) else BUDGET  # a string keeps debugpy's limit
    pieces: Any = None
    try:
        pieces = self._repr(obj, 0)
        for part in pieces:
            parts.append(part)
            size += len(part)
            if budget and size > budget:
                parts.append(" <cut>")
                break
        return "".join(parts)
    except Exception:
        try:
            return f"An exception was raised: {sys.exc_info()[1]!r}"
        except Exception:
            return "An exception was raised"
    finally:
        _close(pieces)


def patch(module: Any) -> None:
    cls = module.SafeRepr
    if getattr(cls, "_debugrelay", False):
        return
    global _plain_other, _plain_str, _plain_is_long_iter, _plain_repr_obj  # noqa: PLW0603 (debugpy's own methods)
    _plain_other, _plain_str, _plain_is_long_iter = cls._repr_other, cls._repr_str, cls._is_long_iter
    _plain_repr_obj = cls._repr_obj
    cls._repr_obj = _repr_obj
    cls._repr_long_iter = _repr_long_iter
    cls._repr_other = _repr_other
    cls._repr_str = _repr_str
    cls._is_long_iter = _is_long_iter
    cls.maxcollection = LEVELS
    cls._repr_iter = _repr_iter
    cls._repr_dict = _repr_dict
    cls.__call__ = _call
    cls._debugrelay = True


def install() -> None:
    """Patch SafeRepr now if debugpy is loaded, else when it is."""
    when_imported(TARGET, patch, "values keep debugpy's marks")
