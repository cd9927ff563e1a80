"""Read-only helpers evaluated inside a debug target by debugrelay (on the target's PYTHONPATH).

They touch only builtins (``type``, ``id``, ``len`` of builtin containers, ``sys.getsizeof``, C-level
descriptors found on the type, ``issubclass`` of the type, never ``isinstance``, which reads an object's
``__class__``): no user ``__repr__``, ``__str__``, property, ``__getattribute__``, ``__len__`` or
``__sizeof__`` runs here.
Every public function answers with a JSON string and never raises: debugrelay tells a failing helper
from a failing user expression by that.

Kept compatible with old interpreters (a target may run any Python 3): no walrus, no match.
"""

import builtins
import contextlib
import json
import os
import sys

_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)
_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_BASE = BaseException.__dict__
_GROUP = getattr(builtins, "BaseExceptionGroup", None)
_VALUE_CHARS = 120
_MESSAGE_CHARS = 500


def _length(obj):
    for kind in _SIZED:
        if type(obj) is kind:
            return len(obj)
    return None


def meta(values, chain):
    """For each value: [id, length or None, circular]; ``chain`` holds the ids of its ancestors."""
    seen = set(chain)
    return json.dumps([[id(v), _length(v), id(v) in seen] for v in values])


def size(obj):
    """``sys.getsizeof(obj)``, or None where the program wrote the type's ``__sizeof__`` (never run here)."""
    if type(_find(type(obj), "__sizeof__")).__name__ == "function":
        return None
    try:
        return sys.getsizeof(obj)
    except Exception:
        return None


# -- safe names and values ------------------------------------------------------------------------


def _qualname(cls):
    try:
        module = type.__dict__["__module__"].__get__(cls)
        name = type.__dict__["__qualname__"].__get__(cls)
    except Exception:
        return "?"
    if module in (None, "builtins"):
        return "builtins." + name if module == "builtins" else name
    return f"{module}.{name}"


def _type_name(cls):
    """``str``, ``list`` for builtins, ``module.Qualname`` for the rest."""
    name = _qualname(cls)
    return name[9:] if name.startswith("builtins.") else name


def _short_type(cls):
    try:
        return type.__dict__["__qualname__"].__get__(cls)
    except Exception:
        return "?"


def _cut(text, limit):
    if len(text) > limit:
        return text[:limit] + "...", True
    return text, False


def _scalar_repr(obj, limit):
    """repr of a builtin scalar through the builtin's own method (a subclass's __repr__ is skipped)."""
    for kind in (bool, int, float, complex):
        if issubclass(type(obj), kind):
            try:
                return kind.__repr__(obj), False
            except ValueError:  # an int too long to print
                return f"<int of {int.bit_length(obj)} bits>", True
    if issubclass(type(obj), str):
        text = str.__repr__(str.__getitem__(obj, slice(0, limit)))
        return (text[:-1] + "..." + text[-1], True) if str.__len__(obj) > limit else (text, False)
    if issubclass(type(obj), (bytes, bytearray)):
        kind = bytes if issubclass(type(obj), bytes) else bytearray
        text = kind.__repr__(kind.__getitem__(obj, slice(0, limit)))
        return (text + "...", True) if kind.__len__(obj) > limit else (text, False)
    if obj is None:
        return "None", False
    return None, False


def _is_scalar(obj):
    return type(obj) in _SCALARS


def _describe(obj):
    """A short text for any object without running its code: scalars by value, the rest by type."""
    text, cut = _scalar_repr(obj, _VALUE_CHARS)
    if text is not None:
        return text, cut
    cls = type(obj)
    length = _container_len(obj)
    name = _short_type(cls)
    if length is not None:
        literal = _small_literal(obj, length)
        return (literal, False) if literal is not None else (f"<{name} of {length}>", False)
    for attr in ("__qualname__", "__name__"):
        desc = _find(cls, attr)
        if desc is not None and type(desc).__name__ == "getset_descriptor":
            try:
                return f"<{name} {desc.__get__(obj)}>", False
            except Exception:
                break
    return f"<{name} object at {hex(id(obj))}>", False


_SMALL_ITEMS = 8


def _small_literal(obj, length):
    """A small container of scalars written out whole (``{'a': 1}``, ``[1, 2]``), through the builtins'
    own methods (no code of the program runs); None when it is bigger, holds other objects, or the text
    would pass the value budget."""
    if length > _SMALL_ITEMS or type(obj) not in (list, tuple, dict, set, frozenset):
        return None
    if issubclass(type(obj), dict):
        pairs = list(dict.items(obj))
        if not all(_is_scalar(k) and _is_scalar(v) for k, v in pairs):
            return None
        parts = [f"{_scalar_repr(k, _VALUE_CHARS)[0]}: {_scalar_repr(v, _VALUE_CHARS)[0]}" for k, v in pairs]
        text = "{" + ", ".join(parts) + "}"
    else:
        items = list(type(obj).__iter__(obj))
        if not all(_is_scalar(v) for v in items):
            return None
        inner = ", ".join(_scalar_repr(v, _VALUE_CHARS)[0] for v in items)
        if issubclass(type(obj), list):
            text = f"[{inner}]"
        elif issubclass(type(obj), tuple):
            text = f"({inner},)" if length == 1 else f"({inner})"
        elif length == 0:
            text = f"{type(obj).__name__}()"
        else:
            text = "{" + inner + "}" if issubclass(type(obj), set) else "frozenset({" + inner + "})"
    return text if len(text) <= _VALUE_CHARS else None


def _container_len(obj):
    for kind in (list, tuple, dict, set, frozenset):
        if issubclass(type(obj), kind):
            return kind.__len__(obj)
    return None


def _find(cls, name):
    """The attribute ``name`` as defined on ``cls`` or a base, without running descriptors."""
    try:
        mro = type.__dict__["__mro__"].__get__(cls)
    except Exception:
        return None
    for klass in mro:
        try:
            found = type.__dict__["__dict__"].__get__(klass).get(name)
        except Exception:
            continue
        if found is not None:
            return found
    return None


def custom_repr(values):
    """For each value: does its class define ``__repr__`` in Python? (debugpy shows the default
    ``<Class object at 0x...>`` when such a ``__repr__`` raises, so the two together mean it failed.)"""
    out = []
    for v in values:
        method = _find(type(v), "__repr__")
        out.append(method is not None and type(method).__name__ == "function")
    return json.dumps(out)


# -- exceptions ---------------------------------------------------------------------------------


def _args_text(args):
    parts = []
    for arg in args:
        if issubclass(type(arg), str) and len(args) == 1:
            return str.__str__(arg)
        text, _ = _scalar_repr(arg, _MESSAGE_CHARS) if _is_scalar(arg) else _describe(arg)
        parts.append(text)
    if len(parts) == 1:
        return parts[0]
    return "(" + ", ".join(parts) + ")"


def _message(exc):
    """The exception's text like str(exc), but never through a __str__ written in Python."""
    try:
        args = _BASE["args"].__get__(exc)
    except Exception:
        args = ()
    if _GROUP is not None and issubclass(type(exc), _GROUP):
        try:
            text = _GROUP.__dict__["message"].__get__(exc)
            count = len(_GROUP.__dict__["exceptions"].__get__(exc))
            plural = "" if count == 1 else "s"
            return _cut(f"{text} ({count} sub-exception{plural})", _MESSAGE_CHARS)[0]
        except Exception:
            pass
    method = _find(type(exc), "__str__")
    builtin = method is not None and type(method).__name__ in ("wrapper_descriptor", "method_descriptor")
    if builtin and all(_is_scalar(a) for a in args) and method is not _BASE.get("__str__"):
        try:
            text = method(exc)
            if type(text) is str:
                return _cut(text, _MESSAGE_CHARS)[0]
        except Exception:
            pass
    return _cut(_args_text(args), _MESSAGE_CHARS)[0]


def _raised_at(exc):
    try:
        tb = _BASE["__traceback__"].__get__(exc)
    except Exception:
        return None
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    return {"file": code.co_filename, "line": tb.tb_lineno, "function": code.co_name}


def _summary(exc, depth, max_members):
    out = {"type": _type_name(type(exc)), "message": _message(exc)}
    where = _raised_at(exc)
    if where is not None:
        out["location"] = where
    if _GROUP is not None and issubclass(type(exc), _GROUP):
        try:
            members = _GROUP.__dict__["exceptions"].__get__(exc)
        except Exception:
            members = ()
        out["members_total"] = len(members)
        if depth > 0:
            out["members"] = [_summary(m, depth - 1, max_members) for m in members[:max_members]]
        if len(members) > max_members or (depth <= 0 and members):
            out["members_truncated"] = True
    return out


def _next_in_chain(exc):
    try:
        cause = _BASE["__cause__"].__get__(exc)
        if cause is not None:
            return cause, "direct cause"
        context = _BASE["__context__"].__get__(exc)
        if context is not None and not _BASE["__suppress_context__"].__get__(exc):
            return context, "during handling"
    except Exception:
        pass
    return None, None


def _current_exception():
    """debugpy puts ``(type, value, traceback)`` as ``__exception__`` in the locals of the stopped frame;
    an evaluation sees the frame's locals merged into its globals."""
    try:
        caller = sys._getframe(2)
        info = caller.f_globals.get("__exception__")
        if info is None:
            frame = _eval_frame()
            info = frame.f_locals.get("__exception__") if frame is not None else None
    except Exception:
        return None
    if type(info) is tuple and len(info) >= 2 and issubclass(type(info[1]), BaseException):
        return info[1]
    return None


def left_by(function, filename):
    """``{type, message, location}`` of the exception being handled in the evaluated frame when it came
    through ``function`` of the file named ``filename`` (a step that left that frame by it); else None."""
    try:
        exc = sys.exc_info()[1]
        tb = _BASE["__traceback__"].__get__(exc) if exc is not None else None
        while tb is not None:
            code = tb.tb_frame.f_code
            if code.co_name == function and os.path.basename(code.co_filename) == filename:
                return json.dumps(_summary(exc, 0, 0))
            tb = tb.tb_next
        return json.dumps(None)
    except Exception as err:
        return json.dumps({"probe_error": f"{type(err).__name__}: {err}"})


def exception(max_depth=5, max_members=10):
    """The exception the target is stopped at: qualified type, text, where raised, its cause/context
    chain (capped at ``max_depth``, ``more`` when longer) and ExceptionGroup members."""
    try:
        exc = _current_exception()
        if exc is None:
            return json.dumps(None)
        out = _summary(exc, max_depth, max_members)
        chain = []
        seen = {id(exc)}
        current = exc
        while True:
            nxt, relation = _next_in_chain(current)
            if nxt is None or id(nxt) in seen:
                break
            if len(chain) >= max_depth:
                more = 0
                while nxt is not None and id(nxt) not in seen:
                    seen.add(id(nxt))
                    more += 1
                    nxt, _ = _next_in_chain(nxt)
                out["inner_more"] = more
                break
            seen.add(id(nxt))
            item = _summary(nxt, max_depth, max_members)
            item["relation"] = relation
            chain.append(item)
            current = nxt
        out["inner"] = chain
        return json.dumps(out)
    except Exception as exc:  # never raise into the debugger
        return json.dumps({"probe_error": f"{type(exc).__name__}: {exc}"})


# -- frames -------------------------------------------------------------------------------------


def _eval_frame():
    """The frame an evaluation was asked for: pydevd's ``evaluate_expression(py_db, frame, ...)`` holds it
    on the evaluating thread's stack (the stopped thread itself runs the evaluation)."""
    frame_type = type(sys._getframe())
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "evaluate_expression" and "frame" in f.f_code.co_varnames:
            found = f.f_locals.get("frame")
            if type(found) is frame_type:
                return found
        f = f.f_back
    return None


def frame_info():
    """``{id, args, function, line}`` of the frame the evaluation runs in: ``id`` tells one frame object
    from another across stops, ``args`` are the parameters as the code object declares them."""
    try:
        frame = _eval_frame()
        if frame is None:
            return json.dumps(None)
        code = frame.f_code
        count = code.co_argcount + code.co_kwonlyargcount
        count += (1 if code.co_flags & 0x04 else 0) + (1 if code.co_flags & 0x08 else 0)
        return json.dumps(
            {"id": id(frame), "args": list(code.co_varnames[:count]), "function": code.co_name, "line": frame.f_lineno}
        )
    except Exception as exc:
        return json.dumps({"probe_error": f"{type(exc).__name__}: {exc}"})


# -- object inspection --------------------------------------------------------------------------


class _Walk:
    def __init__(self, max_items, max_nodes):
        self.max_items = max_items
        self.max_nodes = max_nodes
        self.nodes = 0
        self.truncated = False
        self.circular = False


def _fields(obj):
    """(name, value) of an object's instance attributes: its ``__dict__`` and filled ``__slots__``,
    read through the C-level descriptors only."""
    out = []
    cls = type(obj)
    desc = _find(cls, "__dict__")
    if desc is not None and type(desc).__name__ == "getset_descriptor":
        try:
            namespace = desc.__get__(obj)
        except Exception:
            namespace = None
        if type(namespace) is dict:
            out.extend((k, v) for k, v in dict.items(namespace) if type(k) is str)
    try:
        mro = type.__dict__["__mro__"].__get__(cls)
    except Exception:
        mro = ()
    for klass in mro:
        slots = type.__dict__["__dict__"].__get__(klass).get("__slots__")
        if slots is None:
            continue
        for name in (slots,) if issubclass(type(slots), str) else slots:
            member = type.__dict__["__dict__"].__get__(klass).get(name)
            if member is None or type(member).__name__ != "member_descriptor":
                continue
            try:
                out.append((name, member.__get__(obj)))
            except AttributeError:
                continue
    if issubclass(type(obj), BaseException):
        with contextlib.suppress(Exception):
            out.insert(0, ("args", _BASE["args"].__get__(obj)))
    return out


def _children(obj, walk):
    """(kind, [(key, value)], total) where kind is 'items' for containers and 'fields' for objects."""
    limit = walk.max_items
    if issubclass(type(obj), dict):
        total = dict.__len__(obj)
        pairs = []
        for key, value in dict.items(obj):
            if len(pairs) >= limit:
                break
            pairs.append((_describe(key)[0], value))
        return "items", pairs, total
    for kind in (list, tuple):
        if issubclass(type(obj), kind):
            total = kind.__len__(obj)
            return "items", [(i, kind.__getitem__(obj, i)) for i in range(min(total, limit))], total
    for kind in (set, frozenset):
        if issubclass(type(obj), kind):
            total = kind.__len__(obj)
            pairs = []
            for value in kind.__iter__(obj):
                if len(pairs) >= limit:
                    break
                pairs.append((len(pairs), value))
            return "items", pairs, total
    if _is_scalar(obj):
        return None, [], 0
    fields = _fields(obj)
    return "fields", fields[:limit], len(fields)


def _node(obj, depth, walk, ancestors, path):
    walk.nodes += 1
    out = {"type": _type_name(type(obj))}
    text, cut = _describe(obj)
    out["value"] = text
    if cut:
        out["truncated"] = True
        walk.truncated = True
    length = _length(obj) if type(obj) in _SIZED else _container_len(obj)
    if length is not None:
        out["length"] = length
    found = size(obj)
    if found is not None:
        out["size"] = found
    kind, pairs, total = _children(obj, walk)
    if kind is None or total == 0:
        return out
    if depth <= 0 and kind == "items" and not text.startswith("<"):
        return out  # a small container of scalars at the depth asked for: written out whole in its value
    if depth <= 0:
        out["expandable"] = True
        return out
    if walk.nodes >= walk.max_nodes:
        out["expandable"] = True
        walk.truncated = True
        return out
    here = (*ancestors, (id(obj), path))
    children = []
    for key, value in pairs:
        child_path = f"{path}[{key}]" if kind == "items" else f"{path}.{key}"
        loop = [p for (i, p) in here if i == id(value)]
        if loop and not _is_scalar(value):
            walk.circular = True
            child = {"type": _type_name(type(value)), "value": f"<circular: {loop[0]}>", "circular": True}
        else:
            child = _node(value, depth - 1, walk, here, child_path)
        label = "index" if kind == "items" and type(key) is int else "name"
        child = {label: key, **child}
        children.append(child)
    out[kind] = children
    if total > len(pairs):
        out["total"] = total
        out["has_more"] = True
        walk.truncated = True
    return out


def inspect(thunk, depth=1, max_items=100, max_nodes=2000, name="obj"):
    """The object ``thunk()`` returns, walked ``depth`` levels: id, type, size, fields or items with
    their types and values, circular references marked. A failing ``thunk`` is reported, not raised."""
    try:
        obj = thunk()
    except BaseException as exc:
        return json.dumps({"error": f"{_type_name(type(exc))}: {_message(exc)}"})
    try:
        walk = _Walk(max_items, max_nodes)
        node = _node(obj, depth, walk, (), name)
        out = {"id": hex(id(obj))}
        out.update(node)
        out["is_none"] = obj is None
        out["has_circular_ref"] = walk.circular
        out["truncated"] = walk.truncated
        return json.dumps(out)
    except Exception as exc:
        return json.dumps({"probe_error": f"{type(exc).__name__}: {exc}"})
