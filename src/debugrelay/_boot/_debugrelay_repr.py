"""Values as debugpy shows them, without marks that read as Python: small nested values whole, and
every cut said as a cut.

debugpy's ``SafeRepr`` shows two levels of nesting and writes a deeper container as ``{...}`` or
``[...]``, Python's own mark for a container that refers to itself, and a long one as ``[1, 2, ...]``
(a valid Python ``Ellipsis``): an agent reads a cycle, or the program's data. Once the module is
imported, :func:`install` patches it: four levels, a deeper container as ``<cut: dict of 3>``, the
items past the limit as ``<cut: 40 more>``, a whole value past :data:`BUDGET` characters ending in
``<cut>``; an object without a ``__repr__`` of its own shows a few attributes. A container that
holds itself keeps Python's mark. The variable keeps its reference, so the relay marks it
``truncated`` and an agent expands it from there.
"""

from __future__ import annotations

import sys
from typing import Any

from _debugrelay_patch import when_imported

TARGET = "_pydevd_bundle.pydevd_safe_repr"
LEVELS = (60, 20, 10, 10)  # items shown per nesting level (debugpy: 60, 20)
BUDGET = 4096  # characters of one value; the relay shows fewer
SELF = 100  # the level debugpy gives a container found inside itself


def _length(obj: Any) -> str:
    try:
        return str(len(obj))
    except Exception:
        return "?"


def _cut(obj: Any) -> str:
    return f"<cut: {type(obj).__name__} of {_length(obj)}>"


def _more(obj: Any, shown: int) -> str:
    try:
        return f"<cut: {len(obj) - shown} more>"
    except Exception:
        return "<cut: more>"


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


PREVIEW_ATTRIBUTES = (10, 4)  # of an object without a repr of its own: the value itself, one inside another


def _repr_other(self: Any, obj: Any, level: int) -> Any:
    """An object without a ``__repr__`` of its own shows a few attributes: ``<Cat name='Tom', hunger=3>``.

    Only the instance ``__dict__`` is read (no property or ``__getattr__`` runs); the address is kept
    (it tells two objects apart)."""
    cls = type(obj)
    try:
        own = cls.__repr__ is object.__repr__
        fields = object.__getattribute__(obj, "__dict__") if own and level < len(self.maxcollection) else None
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


def _call(self: Any, obj: Any) -> str:
    parts: list[str] = []
    size = 0
    budget = 0 if self.raw_value or isinstance(obj, (str, bytes)) else BUDGET  # a string keeps debugpy's limit
    try:
        for part in self._repr(obj, 0):
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


def patch(module: Any) -> None:
    cls = module.SafeRepr
    if getattr(cls, "_debugrelay", False):
        return
    global _plain_other  # noqa: PLW0603 (debugpy's own method, kept for what the preview does not cover)
    _plain_other = cls._repr_other
    cls._repr_other = _repr_other
    cls.maxcollection = LEVELS
    cls._repr_iter = _repr_iter
    cls._repr_dict = _repr_dict
    cls.__call__ = _call
    cls._debugrelay = True


def install() -> None:
    """Patch SafeRepr now if debugpy is loaded, else when it is."""
    when_imported(TARGET, patch, "values keep debugpy's marks")
