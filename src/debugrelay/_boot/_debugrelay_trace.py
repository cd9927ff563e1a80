"""Frame lifetime traces: what each call of a chosen function did, recorded inside the debug target.

An agent that debugs a program through the relay wants to know which call of a function went wrong
and where, without stepping through ten thousand good calls. For every call of a traced function
this module records the arguments on entry, what each line run changed in the locals, the lines run,
and the value returned or the exception raised (and on which line). Loops are folded as they run
(one item per loop: iterations, per-line counts with the first and last changes, the iterations
where a different branch was taken) and only the newest ``keep`` calls of a trace are kept, so a
million calls, or one call with a million iterations, keep memory flat. Values are written by the
recorder itself and run none of the program's code (see "values" below; a trace's ``reprs`` option is
the one way a program's ``__repr__`` runs, on a thread of the recorder's, waited for at most REPR_WAIT).

Two mechanisms, the same records:

* Python 3.12+: ``sys.monitoring`` with a tool id of its own (never debugpy's 0). Local events on the
  traced code objects only; PY_UNWIND and PY_THROW globally, filtered by code identity; PY_START
  globally while a trace waits for code not loaded yet (each other code object answers DISABLE once).
* Python <= 3.11: ``sys.settrace`` chaining. :func:`install` runs before debugpy is imported and wraps
  ``sys.settrace``/``threading.settrace``/``sys.gettrace``: the debugger's trace function is kept and
  called from ours, and every event of a traced frame is forwarded to the debugger's local tracer.

Public functions answer a JSON string and never raise (``{"error": "Type: message"}``). :func:`dump`
is called by the relay through debugpy's evaluate while the program is paused: it takes no lock a
paused thread could hold. Completed calls are also pushed to the keeper (``DEBUGRELAY_TRACE_SOCKET``,
an abstract datagram socket) as ``b"T" + json`` datagrams at most once a second, at exit, and before
``os._exit`` (a forked multiprocessing child).

Standard library only; imports on any Python 3.8+ (no walrus, no match); never raises into the program.
"""

import atexit
import collections
import gc
import itertools
import json
import os
import sys
import threading
import time
from _weakref import ref as _weak

TRACES_ENV = "DEBUGRELAY_TRACES"
SOCKET_ENV = "DEBUGRELAY_TRACE_SOCKET"
NATIVE_FLAG = "PYDEVD_LOAD_NATIVE_LIB"  # set to "0" for debugpy's import only (<= 3.11, traces at start)
DATAGRAM = 60000
PUSH_EVERY = 1.0
FOLD_AT = 200  # raw events in a call before its loops are folded
MAX_ITEMS = 100  # folded events kept per call (head and tail)
MAX_NAMES = 20  # names of one "changed"
MAX_CALLEES = 50
MAX_SETS = 20  # distinct iteration line sets kept per loop
ARG_CHARS = 80
VALUE_CHARS = 200

_GEN_FLAGS = 0x20 | 0x80 | 0x200  # CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR
_VARARGS = 0x04
_VARKEYWORDS = 0x08
_MONITORING = getattr(sys, "monitoring", None) if sys.version_info >= (3, 12) else None
_get_ident = threading.get_ident


# ---------------------------------------------------------------------------------------------- values
#
# A value is written by the recorder itself, the way a stop shows an object without a __repr__ of its own:
# builtin values as they are (containers walked here, bounded, each cut marked with "<cut: ...>"), any other
# object as its type, address and a few attributes read from its instance __dict__ and __slots__ through the
# C-level descriptors. None of the program's code runs: no __repr__, __str__, __eq__, __hash__, __len__,
# __iter__, property or __getattr__ of its types (a builtin's own method is called on a subclass).
#
# A trace with "reprs" runs the program's __repr__ (and an exception's __str__) of its own types, once per
# value (an object as its attributes are), on a daemon thread of the recorder's: the traced call waits at
# most REPR_WAIT for it, holding no lock of the recorder's. A __repr__ still running then keeps that thread
# (later ones are not run until it ends) and its type is not asked again: the program is held at most
# REPR_WAIT per such type.

STR_CHARS = 60  # of one string inside a value
ITEMS = (6, 4)  # items shown per nesting level; a container deeper down is named, not written out
ATTRIBUTES = (6, 3)  # attributes shown of an object: a value itself, one inside another
REPR_WAIT = 0.25  # s: the longest a traced call waits for one __repr__ of the program (reprs on)
REPR_CHARS = 1000  # of the text a __repr__ of the program gave, as kept
CUT = " <cut>"  # a value's text past its budget
_KEPT = 4096  # types described, reprs remembered (then forgotten all at once)

_FunctionType = type(lambda: None)
_MethodType = type(_FunctionType.__get__(lambda self: None, 1))
_ModuleType = type(sys)
_OBJECT_REPR = object.__dict__["__repr__"]
_type_dict = type.__dict__["__dict__"].__get__  # a class's own namespace, whatever its metaclass says
_type_mro = type.__dict__["__mro__"].__get__
_type_name_of = type.__dict__["__name__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_type_module = type.__dict__["__module__"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_EXACT = {id(t): t for t in (int, float, complex, bool, type(None), type(Ellipsis), type(NotImplemented))}
_deque = collections.deque
_BASES = (str, bytes, bytearray, list, tuple, dict, set, frozenset, _deque, int, float, complex, BaseException, type)
_C_SAFE = frozenset(  # C types whose repr reads only their own fields: run as they are
    [
        ("builtins", "function"),
        ("builtins", "builtin_function_or_method"),
        ("builtins", "method-wrapper"),
        ("builtins", "method_descriptor"),
        ("builtins", "wrapper_descriptor"),
        ("builtins", "getset_descriptor"),
        ("builtins", "member_descriptor"),
        ("builtins", "generator"),
        ("builtins", "coroutine"),
        ("builtins", "async_generator"),
        ("builtins", "code"),
        ("builtins", "frame"),
        ("builtins", "traceback"),
        ("builtins", "cell"),
        ("builtins", "range"),
        ("builtins", "memoryview"),
        ("datetime", "date"),
        ("datetime", "timedelta"),
        ("datetime", "timezone"),
        ("decimal", "Decimal"),
        ("re", "Pattern"),
        ("re", "Match"),
        ("_thread", "lock"),
        ("_thread", "RLock"),
        ("zoneinfo", "ZoneInfo"),
    ]
)
_C_ZONED = frozenset([("datetime", "datetime"), ("datetime", "time")])  # safe while their tzinfo is


class _Full(Exception):
    """The text of a value has reached its budget: the walk stops there."""


class _Out(object):
    __slots__ = ("parts", "size", "limit", "reprs", "inside")

    def __init__(self, limit, reprs):
        self.parts = []
        self.size = 0
        self.limit = limit
        self.reprs = reprs
        self.inside = []  # ids of the containers being written (a container inside itself)

    def add(self, text):
        self.parts.append(text)
        self.size += len(text)
        if self.size > self.limit:
            raise _Full()


def _cut(text, limit):
    """``text`` within ``limit`` characters, ended by CUT when longer; never inside a ``<cut: ...>`` mark."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    mark = head.rfind("<cut:")
    if mark >= 0 and head.find(">", mark) < 0:
        head = head[:mark].rstrip(", ")
    return head + CUT


def _show(value, limit=ARG_CHARS, reprs=False):
    """``value`` as the recorder writes it, within ``limit`` characters (a longer one ends in ``<cut>``)."""
    t = type(value)
    if t is int or t is bool or t is float or value is None:
        if t is not int or -(10**30) < value < 10**30:
            return repr(value)
    elif t is str and len(value) <= 40:
        return repr(value)
    out = _Out(limit, reprs)
    try:
        _walk(value, 0, out)
    except _Full:
        pass
    except Exception:  # a container changed size as another thread ran: what was written so far, said as cut
        out.parts.append("<cut: changed while read>")
    return _cut("".join(out.parts), limit)


def _find(cls, name):
    """The attribute ``name`` as ``cls`` or its first base defining it has it, no descriptor run."""
    try:
        mro = _type_mro(cls)
    except Exception:
        return None
    for klass in mro:
        try:
            found = _type_dict(klass).get(name)
        except Exception:
            continue
        if found is not None:
            return found
    return None


def _is_c(method):
    return method is not None and type(method) is not _FunctionType


_kinds = {}  # id(type) -> (weak reference to the type, (base, special, own repr, name, attribute readers))


def _kind(t):
    """What the recorder knows of a type, worked out once: the builtin it derives from, how it is written,
    whether it has a __repr__ of its own (neither object's nor that builtin's), its name, and where its
    instances' attributes are (a ``__dict__``, the names of its ``__slots__``)."""
    got = _kinds.get(id(t))
    if got is not None and got[0]() is t:
        return got[1]
    try:
        mro = _type_mro(t)
    except Exception:
        mro = (t,)
    base = None
    for klass in mro:
        for candidate in _BASES:
            if klass is candidate:
                base = candidate
                break
        if base is not None:
            break
    try:
        name = _type_name_of(t)
        module = _type_module(t)
        qualname = _type_qualname(t)
    except Exception:
        name, module, qualname = "?", None, "?"
    method = _find(t, "__repr__")
    own = method is not None and method is not _OBJECT_REPR
    if own and base is not None and method is _type_dict(base).get("__repr__"):
        own = False
    special = None
    if type(module) is not str:
        module = None
    if (module, qualname) in _C_SAFE and _is_c(method):
        special = "c"
    elif (module, qualname) in _C_ZONED and _is_c(method):
        special = "zoned"
    elif t is _MethodType:
        special = "method"
    elif t is _ModuleType or _has(mro, _ModuleType):
        special = "module"
    elif base is tuple and type(_type_dict(t).get("_fields")) is tuple:
        special = "namedtuple"
    else:
        enum = sys.modules.get("enum")
        enum_base = getattr(enum, "Enum", None) if type(enum) is _ModuleType else None
        if enum_base is not None and _has(mro, enum_base):
            special = "enum"
    facts = (base, special, own, name, _readers(t, mro))
    if len(_kinds) > _KEPT:
        _kinds.clear()
    _kinds[id(t)] = (_weak(t), facts)  # a class the program lets go is freed as without the recorder
    return facts


def _has(mro, cls):
    return any(klass is cls for klass in mro)


def _readers(t, mro):
    """Whether a type's instances have a ``__dict__`` read through a C-level descriptor, and the names of their
    ``__slots__`` (names only: a descriptor kept would keep the class alive)."""
    desc = _find(t, "__dict__")
    has_dict = desc is not None and type(desc).__name__ in ("getset_descriptor", "member_descriptor")
    slots = []
    for klass in mro:
        try:
            names = _type_dict(klass).get("__slots__")
        except Exception:
            continue
        if names is None:
            continue
        for slot in (names,) if type(names) is str else names:
            if type(slot) is str and slot not in ("__dict__", "__weakref__") and slot not in slots:
                slots.append(slot)
    return has_dict, tuple(slots)


def _fields(value, facts):
    """(name, value) of an object's instance attributes: its ``__dict__``, then its filled ``__slots__``, read
    through the C-level descriptors only (looked up again each time: nothing of the class is kept)."""
    out = []
    has_dict, slots = facts[4]
    t = type(value)
    if has_dict:
        desc = _find(t, "__dict__")
        namespace = None
        if type(desc).__name__ in ("getset_descriptor", "member_descriptor"):
            try:
                namespace = desc.__get__(value)
            except Exception:
                namespace = None
        if type(namespace) is dict:
            for key, item in namespace.items():
                if type(key) is str:
                    out.append((key, item))
    for slot in slots:
        member = _find(t, slot)
        if type(member).__name__ != "member_descriptor":
            continue
        try:
            out.append((slot, member.__get__(value)))
        except Exception:
            continue
    return out


def _walk(value, level, out):
    """Write ``value`` into ``out``: nothing of the program's runs (but its __repr__ with reprs on)."""
    t = type(value)
    exact = _EXACT.get(id(t))
    if exact is not None and exact is t:
        _scalar(value, t, out)
        return
    if t is str or t is bytes:
        _text(value, out)
        return
    if t is list or t is tuple or t is dict or t is set or t is frozenset:
        _container(value, t, level, out)
        return
    facts = _kind(t)
    base, special, own = facts[0], facts[1], facts[2]
    if out.reprs and own:
        text, note = _program_text(value, t, repr)
        if text is not None:
            out.add(text)
            return
        out.add(note + " ")
    if special is not None:
        _special(value, t, facts, level, out)
    elif base is None:
        _object(value, facts, level, out)
    elif base is BaseException:
        _exception(value, facts, level, out)
    elif base is type:
        out.add("<class '%s'>" % (_safe_qualname(value),))
    else:
        out.add(facts[3] + "(")
        if base is str or base is bytes or base is bytearray:  # their first characters, as the builtin type
            piece = base.__getitem__(value, slice(0, STR_CHARS + 1))
            _text(bytes(piece) if base is bytearray else piece, out, base.__len__(value))
        elif base is int or base is float or base is complex:
            _scalar(value, base, out)
        else:
            _container(value, base, level, out, True)
        out.add(")")


def _safe_qualname(cls):
    try:
        return _type_qualname(cls)
    except Exception:
        return "?"


def _leaf(value):
    """The text of a small int, a float, a bool, None or a short string (most values), else None."""
    t = type(value)
    if t is str:
        return repr(value) if len(value) <= 40 else None
    if t is int:
        return repr(value) if -(10**30) < value < 10**30 else None
    if t is bool or t is float or value is None:
        return repr(value)
    return None


def _scalar(value, base, out):
    """A number (or None, ..., a bool) through its builtin type's own repr."""
    if base is int and int.bit_length(value) > 1000:
        out.add("<int of %d bits>" % (int.bit_length(value),))
    elif type(value) is base:
        out.add(repr(value))
    else:
        out.add(base.__repr__(value))


def _text(value, out, length=None):
    """An exact str or bytes (of ``length`` when it is the start of a longer one): its first characters
    (STR_CHARS, fewer when the value's budget is nearly spent), the rest counted."""
    n = len(value) if length is None else length
    if n <= STR_CHARS and out.size + n + 3 <= out.limit:
        out.add(repr(value))
        return
    shown = min(STR_CHARS, max(10, out.limit - out.size - 28))
    if n <= shown:
        out.add(repr(value))
        return
    out.add(repr(value[:shown]))
    out.add("<cut: %d more chars>" % (n - shown,))


_BRACKETS = {
    "list": ("[", "]"),
    "tuple": ("(", ")"),
    "dict": ("{", "}"),
    "set": ("{", "}"),
    "frozenset": ("{", "}"),
    "deque": ("[", "]"),
}
_EMPTY = {"list": "[]", "tuple": "()", "dict": "{}", "set": "set()", "frozenset": "frozenset()", "deque": "[]"}


def _container(value, base, level, out, inside_type=False):
    """A list, tuple, dict, set or frozenset (or a subclass's builtin part), through the builtin's methods."""
    exact = type(value) is base
    n = len(value) if exact else base.__len__(value)
    kind = base.__name__
    if n == 0:
        out.add(_EMPTY[kind])
        return
    mark = id(value)
    if mark in out.inside:
        out.add("[...]" if base is list else "{...}" if base is dict else "(...)")
        return
    if level >= len(ITEMS):
        out.add("<cut: %s of %d>" % (kind, n))
        return
    left, right = _BRACKETS[kind]
    if base is frozenset and not inside_type:
        left, right = "frozenset({", "})"
    shown = ITEMS[level]
    out.inside.append(mark)
    out.add(left)
    if base is dict:
        items = itertools.islice(value.items() if exact else dict.items(value), shown)
        for i, (key, item) in enumerate(items):
            sep = ", " if i else ""
            head = _leaf(key)
            text = _leaf(item) if head is not None else None
            if text is not None:
                out.add(sep + head + ": " + text)
                continue
            out.add(sep)
            _walk(key, level + 1, out)
            out.add(": ")
            _walk(item, level + 1, out)
    else:
        if base is list or base is tuple:
            items = value[:shown] if exact else base.__getitem__(value, slice(0, shown))
        else:
            items = list(itertools.islice(iter(value) if exact else base.__iter__(value), shown))
        for i, item in enumerate(items):
            text = _leaf(item)
            if text is not None:
                out.add(", " + text if i else text)
                continue
            if i:
                out.add(", ")
            _walk(item, level + 1, out)
        if base is tuple and n == 1:
            out.add(",")
    if n > shown:
        out.add(", <cut: %d more>" % (n - shown,))
    out.add(right)
    out.inside.pop()


def _object(value, facts, level, out):
    """``<Cat at 0x7f..: name='Nono', hunger=21>``: its type, address and first attributes."""
    name = facts[3]
    fields = _fields(value, facts) if level < len(ATTRIBUTES) else ()
    if not fields:
        out.add("<%s at %s>" % (name, hex(id(value))))
        return
    out.add("<%s at %s: " % (name, hex(id(value))))
    _attributes(value, fields, level, out)
    out.add(">")


def _attributes(value, fields, level, out):
    shown = ATTRIBUTES[min(level, len(ATTRIBUTES) - 1)]
    for i, (key, item) in enumerate(fields[:shown]):
        label = ", " + key + "=" if i else key + "="
        text = _leaf(item)
        if text is not None:
            out.add(label + text)
        elif item is value:
            out.add(label + "<itself>")
        else:
            out.add(label)
            _walk(item, level + 1, out)
    if len(fields) > shown:
        out.add(", <cut: %d more>" % (len(fields) - shown,))


def _exception(value, facts, level, out):
    """``ValueError('bad', 3)``, then its attributes: ``ValidationError(field='age')``."""
    try:
        args = _exc_args(value)
    except Exception:
        args = ()
    out.add(facts[3] + "(")
    for i, arg in enumerate(args[: ITEMS[min(level, len(ITEMS) - 1)]]):
        if i:
            out.add(", ")
        _walk(arg, level + 1, out)
    fields = _fields(value, facts) if level < len(ATTRIBUTES) else ()
    if fields:
        if args:
            out.add(", ")
        _attributes(value, fields, level, out)
    out.add(")")


def _special(value, t, facts, level, out):
    """A value of a kind written its own way: a C type's safe repr, a bound method, a module, a named tuple, an
    enum's member."""
    special, name = facts[1], facts[3]
    if special == "c":
        out.add(repr(value))
    elif special == "zoned":
        zone = _type_dict(t)["tzinfo"].__get__(value)
        if zone is None or _kind(type(zone))[1] == "c":
            out.add(repr(value))
        else:
            out.add(repr(t.replace(value, tzinfo=None))[:-1] + ", tzinfo=")
            _walk(zone, level + 1, out)
            out.add(")")
    elif special == "method":
        func = _MethodType.__dict__["__func__"].__get__(value)
        owner = _MethodType.__dict__["__self__"].__get__(value)
        label = _FunctionType.__dict__["__qualname__"].__get__(func) if type(func) is _FunctionType else "?"
        out.add("<bound method %s of " % (label,))
        _walk(owner, len(ITEMS), out)
        out.add(">")
    elif special == "module":
        namespace = _ModuleType.__dict__["__dict__"].__get__(value)
        label = namespace.get("__name__") if type(namespace) is dict else None
        out.add("<module %s>" % (str.__repr__(label) if type(label) is str else "?",))
    elif special == "namedtuple":
        names = _type_dict(t)["_fields"]
        out.add(name + "(")
        n = tuple.__len__(value)
        shown = min(n, ITEMS[min(level, len(ITEMS) - 1)])
        for i in range(shown):
            if i:
                out.add(", ")
            label = names[i] if i < len(names) and type(names[i]) is str else "?"
            out.add(label + "=")
            _walk(tuple.__getitem__(value, i), level + 1, out)
        if n > shown:
            out.add(", <cut: %d more>" % (n - shown,))
        out.add(")")
    else:  # an enum's member: <Color.RED: 1>
        fields = _fields(value, facts)
        member = None
        number = None
        for key, item in fields:
            if key == "_name_":
                member = item
            elif key == "_value_":
                number = item
        out.add("<%s%s: " % (name, "." + member if type(member) is str else ""))
        _walk(number, level + 1, out)
        out.add(">")


_SCALAR_IDS = frozenset(id(t) for t in (int, str, float, bool, bytes, complex, type(None)))  # builtins: ids stay


def _immutable(value):
    t = type(value)
    if id(t) in _SCALAR_IDS:
        return True
    if t is tuple or t is frozenset:
        return len(value) <= 8 and all(id(type(item)) in _SCALAR_IDS for item in value)
    return False


# ------------------------------------------------------------------------------------------------ writes
#
# A call's writes to the attributes and items of ``self`` and of its other arguments are recorded as its locals
# are: at each line, shallowly (the attribute or key rebound, or a container in it that grew or shrank), as
# ``"self.total": "7.25 -> 7.55"`` (the old value where it was a scalar, else the new one alone). What is looked
# at: an object's instance attributes (its __dict__ and __slots__, read as values are), a list's first
# WATCH_ITEMS items and its length, a dict's first WATCH_ITEMS keys that are strings or numbers and its length.
# Only ids, lengths and scalar values are kept: no object of the program is kept alive by a look.

WATCH_ITEMS = 64  # items of a list or dict argument looked at
WATCH_FIELDS = 40  # attributes of an object argument looked at
_KEY_IDS = frozenset((id(str), id(int)))
_LEN = " len"  # the look's entry for a list's or dict's length


def _look_kind(value):
    """How writes to ``value`` are seen: "fields", "list", "dict", or None (nothing to look at)."""
    t = type(value)
    if t is list:
        return "list"
    if t is dict:
        return "dict"
    if id(t) in _SCALAR_IDS or t is tuple or t is frozenset or t is set or t is _FunctionType:
        return None
    facts = _kind(t)
    if facts[0] is None and facts[1] is None and (facts[4][0] or facts[4][1]):
        return "fields"
    return None


def _slot(item):
    """What is kept of one attribute's or item's value: (id, whether a scalar, the scalar, its length if a
    builtin container); an id alone could be reused by a new object once the old one is freed."""
    t = type(item)
    if id(t) in _SCALAR_IDS:
        return (id(item), True, item, -1)
    if t is list or t is dict or t is set:
        return (id(item), False, None, len(item))
    return (id(item), False, None, -1)


def _namespace(value):
    """The instance ``__dict__`` of an object without ``__slots__`` (read once a call: it stays the object's), or
    None."""
    has_dict, slots = _kind(type(value))[4]
    if slots or not has_dict:
        return None
    desc = _find(type(value), "__dict__")
    try:
        namespace = desc.__get__(value)
    except Exception:
        return None
    return namespace if type(namespace) is dict else None


def _look(value, kind, namespace=None):
    """{label: slot} of ``value``'s attributes or items (label ``.name``, ``[3]``, ``['key']``)."""
    got = {}
    if kind == "fields":
        if namespace is not None:
            for key, item in itertools.islice(namespace.items(), WATCH_FIELDS):
                if type(key) is str:
                    got["." + key] = _slot(item)
            return got
        for key, item in _fields(value, _kind(type(value)))[:WATCH_FIELDS]:
            got["." + key] = _slot(item)
        return got
    if kind == "list":
        for i, item in enumerate(value[:WATCH_ITEMS]):
            got["[%d]" % (i,)] = _slot(item)
    else:
        for key, item in itertools.islice(value.items(), WATCH_ITEMS):
            if id(type(key)) in _KEY_IDS:
                head = _leaf(key)
                if head is not None:
                    got["[" + head + "]"] = _slot(item)
    got[_LEN] = (len(value), True, len(value), -1)
    return got


def _same(old, new):
    if old[0] == new[0]:
        return old[3] == new[3]
    return old[1] and new[1] and type(old[2]) is type(new[2]) and old[2] == new[2]


def _item(value, kind, label):
    """The attribute or item ``label`` names in ``value`` now."""
    if kind == "list":
        return value[int(label[1:-1])]
    if kind == "fields":
        key = label[1:]
        for name, item in _fields(value, _kind(type(value))):
            if name == key:
                return item
        return None
    for key, item in itertools.islice(value.items(), WATCH_ITEMS):
        if id(type(key)) in _KEY_IDS and "[" + str(_leaf(key)) + "]" == label:
            return item
    return None


def _writes(name, value, kind, before, after):
    """The writes between two looks at ``value`` (the local ``name``): {"name.attr": text}; a list or dict
    whose length changed other than by added items (an insert, a pop, a removed key past the looked-at
    ones) is said whole."""
    grew = after.get(_LEN) != before.get(_LEN)
    out = {}
    for label, slot in after.items():
        if label == _LEN:
            continue
        old = before.get(label)
        if old is not None and _same(old, slot):
            continue
        if old is not None and kind == "list" and grew:
            return {name: _show(value)}
        text = _show(_item(value, kind, label))
        out[name + label] = _show(old[2]) + " -> " + text if old is not None and old[1] else text
    gone = [label for label in before if label != _LEN and label not in after]
    if gone and (kind == "fields" or (kind == "dict" and before[_LEN][2] <= WATCH_ITEMS)):  # else: past the window
        for label in gone:
            out[name + label] = "<deleted>"
    if grew and not out:
        return {name: _show(value)}
    return out


def _is_scalar(t):
    """One of the builtin scalar types (by identity: a metaclass's __eq__ or __hash__ is never called)."""
    return id(t) in _SCALAR_IDS


def _name_of(t):
    try:
        return _type_name_of(t)
    except Exception:
        return "?"


def _exception_text(exc, reprs):
    """``Type: message`` of an exception, as ``str`` would give it when no code of the program is needed for
    it; else from its arguments and attributes (with reprs on, its own ``__str__``)."""
    t = type(exc)
    name = _name_of(t)
    method = _find(t, "__str__")
    if reprs and type(method) is _FunctionType:
        text, note = _program_text(exc, t, str)
        if text is not None:
            return _cut("%s: %s" % (name, text), VALUE_CHARS)
        return _cut("%s: %s %s" % (name, note, _show(exc, VALUE_CHARS)), VALUE_CHARS)
    try:
        args = _exc_args(exc)
    except Exception:
        args = ()
    if _is_c(method) and _plain_fields(exc, t, args):
        try:
            text = method(exc)
            if type(text) is str:
                return _cut("%s: %s" % (name, text), VALUE_CHARS)
        except Exception:
            pass
    if len(args) == 1 and type(args[0]) is str:
        message = args[0]
    elif len(args) == 1:
        message = _show(args[0], VALUE_CHARS)
    elif args:
        message = _show(args, VALUE_CHARS)
    else:
        fields = _fields(exc, _kind(t))
        message = _show(exc, VALUE_CHARS) if fields else ""
    return _cut("%s: %s" % (name, message), VALUE_CHARS)


def _plain_fields(exc, t, args):
    """An exception whose builtin ``__str__`` reads only scalars (its arguments, an OSError's file names)."""
    for arg in args:
        if not _is_scalar(type(arg)):
            return False
    if issubclass(t, OSError):
        for field in ("filename", "filename2"):
            try:
                if not _is_scalar(type(OSError.__dict__[field].__get__(exc))):
                    return False
            except Exception:
                return False
    return True


# ---------------------------------------------------------------------------------------------- the program's reprs

_QUEUED, _RUNNING, _DONE, _DROPPED = 0, 1, 2, 3


class _Job(object):
    __slots__ = ("value", "how", "done", "text", "error", "state")

    def __init__(self, value, how):
        self.value = value
        self.how = how
        self.done = _allocate_lock()
        self.done.acquire()
        self.text = None
        self.error = None
        self.state = _QUEUED


_allocate_lock = threading.Lock
_jobs = collections.deque()
_teller = {"thread": None, "ident": None, "since": None, "wake": _allocate_lock(), "start": _allocate_lock()}
_slow = {}  # id(type) -> (weak reference to) a type whose __repr__ once ran past REPR_WAIT: not asked again
_told = {}  # (id(value), id(how)) -> (weak reference to its type, the value as the recorder writes it, its text)


def _program_text(value, t, how):
    """The program's ``repr`` (or ``str``) of ``value``: (text, None), or (None, a note saying why not)."""
    shape = _show(value, 300)  # the value as it is now: its text is asked again only when this changes
    key = (id(value), id(how))
    got = _told.get(key)
    if got is not None and got[0]() is t and got[1] == shape:
        return got[2], None
    slow = _slow.get(id(t))
    if slow is not None and slow() is t:
        return None, "<repr not run: it once ran past %g s>" % (REPR_WAIT,)
    since = _teller["since"]
    if since is not None and time.monotonic() - since > REPR_WAIT:
        return None, "<repr not run: another is still running>"
    if not _teller_running():
        return None, "<repr not run: no thread for it>"
    job = _Job(value, how)
    _jobs.append(job)
    _wake()
    finished = job.done.acquire(True, REPR_WAIT)
    if not finished:
        if job.state == _QUEUED:
            job.state = _DROPPED
            job.value = None
            return None, "<repr not run within %g s>" % (REPR_WAIT,)
        finished = job.done.acquire(False)
        if not finished:
            if len(_slow) > _KEPT:
                _slow.clear()
            _slow[id(t)] = _weak(t)
            return None, "<repr still running after %g s>" % (REPR_WAIT,)
    if job.error is not None:
        return None, "<repr raised %s>" % (job.error,)
    if len(_told) > _KEPT:
        _told.clear()
    _told[key] = (_weak(t), shape, job.text)
    return job.text, None


def _wake():
    try:
        _teller["wake"].release()
    except RuntimeError:  # already awake, or woken and not yet back to sleep: it looks at the jobs again
        pass


def _teller_running():
    """The thread that runs the program's reprs, started at the first one (and again in a forked child)."""
    if _teller["thread"] is not None:
        return True
    starting = _teller["start"]
    if not starting.acquire(True, REPR_WAIT):
        return False
    try:
        if _teller["thread"] is None:
            thread = threading.Thread(target=_tell, name="debugrelay-repr")
            thread.daemon = True
            thread.is_pydev_daemon_thread = True  # debugpy neither traces it nor lists it
            _teller["wake"].acquire(False)
            thread.start()
            _teller["thread"] = thread
    except Exception:
        return False
    finally:
        starting.release()
    return True


def _tell():
    """The reprs thread: runs each job asked for, untraced, and never raises."""
    try:
        _teller["ident"] = _get_ident()
        if "settrace" in _real:
            _real["settrace"](None)
    except Exception:
        pass
    while True:
        try:
            _teller["wake"].acquire()
            while _jobs:
                job = _jobs.popleft()
                if job.state != _QUEUED:
                    continue
                job.state = _RUNNING
                _teller["since"] = time.monotonic()
                try:
                    text = job.how(job.value)
                    job.text = str.__getitem__(text, slice(0, REPR_CHARS))
                except BaseException as exc:  # the program's code raised: said in the value, never raised here
                    job.error = _name_of(type(exc))
                job.value = None
                job.state = _DONE
                _teller["since"] = None
                job.done.release()
        except BaseException:
            pass


def _is_teller():
    return _teller["ident"] is not None and _teller["ident"] == _get_ident()


def _error(exc):
    return json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)})


# ---------------------------------------------------------------------------------------------- files

_norm_cache = {}
_user_cache = {}
_STD_DIRS = []


def _norm(path):
    """normcase(realpath(path)), once per distinct path."""
    got = _norm_cache.get(path)
    if got is None:
        try:
            got = os.path.normcase(os.path.realpath(path))
        except Exception:
            got = path
        _norm_cache[path] = got
    return got


def _std_dirs():
    if not _STD_DIRS:
        dirs = set()
        sysconfig = sys.modules.get("sysconfig")  # when the program or the debugger has it: never imported here
        for name in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                dirs.add(_norm(sysconfig.get_paths()[name]))
            except Exception:
                pass
        dirs.add(_norm(os.path.dirname(os.__file__)))
        for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix):
            dirs.add(_norm(os.path.join(prefix, "lib")))
        _STD_DIRS.extend(sorted(d for d in dirs if d))
    return _STD_DIRS


def _user_file(raw):
    """The program's own code: not the standard library, an installed package, the debugger or ours."""
    got = _user_cache.get(raw)
    if got is None:
        got = True
        if not raw or raw.startswith("<"):
            got = False
        else:
            path = _norm(raw)
            base = os.path.basename(path)
            own = base.startswith("_debugrelay_") or base == "sitecustomize.py"
            if own or any(part in path for part in ("site-packages", "dist-packages", "pydevd", "debugpy")):
                got = False
            else:
                for d in _std_dirs():
                    if path.startswith(d + os.sep):
                        got = False
                        break
        _user_cache[raw] = got
    return got


def _qualname(code):
    return getattr(code, "co_qualname", None) or code.co_name


_facts = {}  # id(code) -> (code, (qualified name, file, first line, parameter names)): once per function


def _code_facts(code):
    """What every call of ``code`` shares, worked out at its first call."""
    got = _facts.get(id(code))
    if got is not None and got[0] is code:
        return got[1]
    count = code.co_argcount + code.co_kwonlyargcount
    if code.co_flags & _VARARGS:
        count += 1
    if code.co_flags & _VARKEYWORDS:
        count += 1
    facts = (_qualname(code), _norm(code.co_filename), code.co_firstlineno, code.co_varnames[:count])
    _facts[id(code)] = (code, facts)
    return facts


def _thread_name():
    """The thread's name; a thread threading does not know (started with ``_thread``) is named by its ident, not
    registered as current_thread() would (the program would see one more thread, and a number taken)."""
    ident = _get_ident()
    thread = threading._active.get(ident)
    if thread is None:
        return "Thread %d" % (ident,)
    return thread.name


def _key(qualname):
    return qualname.replace(".<locals>", "")


# ---------------------------------------------------------------------------------------------- state


class _Trace(object):
    __slots__ = ("id", "file", "qualname", "key", "keep", "callees", "reprs", "ring", "total", "dropped", "pushed")

    def __init__(self, spec):
        self.id = str(spec["id"])
        self.file = _norm(str(spec["file"]))
        self.qualname = str(spec["qualname"])
        self.key = _key(self.qualname)
        self.keep = max(1, int(spec.get("keep") or 1000))
        self.callees = bool(spec.get("callees", False))
        self.reprs = spec.get("reprs") is True  # the program's own __repr__ writes its values
        self.ring = collections.deque(maxlen=self.keep)
        self.total = 0
        self.dropped = 0
        self.pushed = 0  # completion number of the last call pushed


_traces = {}  # id -> _Trace
_by_file = {}  # normalised file -> {qualname key -> _Trace}
_live = {}  # id(frame) -> _Call, the calls running or suspended
_stacks = {}  # thread ident -> [_Call] of active traced calls
_state = {"pid": os.getpid(), "installed": False, "sock": None, "last_push": 0.0, "callees": 0, "child": False}
_seq = [itertools.count(1), itertools.count(1)]  # call ids, completion numbers
_push_lock = threading.Lock()


def _match(code):
    """The trace a code object belongs to, or None (a dict by file, then by qualname)."""
    table = _by_file.get(_norm(code.co_filename))
    if not table:
        return None
    trace = table.get(_key(_qualname(code)))
    if trace is None and not hasattr(code, "co_qualname"):
        for key, candidate in table.items():
            if key.rsplit(".", 1)[-1] == code.co_name:
                return candidate
    return trace


# ---------------------------------------------------------------------------------------------- loops


KEPT_RUNS = 4  # iterations a loop keeps whole: the first of each other branch, a value far off the others
KEPT_EVENTS = 30  # events of one kept iteration
OUTLIER = 6.0  # standard deviations from the mean of the others: a value "far outside"
OUTLIER_AFTER = 8  # values of a line's local before one can be far outside them


def _number(text):
    """The float a written int or float value is (the new one of a write ``old -> new``), or None."""
    if " -> " in text:
        text = text.rsplit(" -> ", 1)[1]
    if not text or text[0] not in "-0123456789" or len(text) > 40:
        return None
    try:
        return float(text)
    except ValueError:
        return None


class _Loop(object):
    __slots__ = ("h", "end", "iterations", "stats", "sets", "more", "runs", "kept", "values", "extreme")

    def __init__(self, h, end):
        self.h = h
        self.end = end
        self.iterations = 0
        self.stats = {}  # line -> [count, first, last]
        self.sets = {}  # frozenset(lines) -> [count, [first 10 iteration numbers]]
        self.more = 0
        self.runs = 0
        self.kept = {}  # iteration number -> its events, whole (KEPT_RUNS at most)
        self.values = {}  # (line, name) -> [n, mean, m2, (high, iteration), (low, iteration)]: numbers written
        self.extreme = []  # (line, name) whose highest or lowest value the iteration under way wrote

    def run(self, line, changed):
        stat = self.stats.get(line)
        if stat is None:
            self.stats[line] = [1, changed, changed]
        else:
            stat[0] += 1
            stat[2] = changed
        self.runs += 1
        if changed:
            for name, text in changed.items():
                value = _number(text)
                if value is not None:
                    self._value((line, name), value, text)

    def _value(self, key, value, text):
        at = self.iterations + 1
        got = self.values.get(key)
        if got is None:
            if len(self.values) >= MAX_NAMES:
                return
            self.values[key] = [1, value, 0.0, (value, at, text), (value, at, text)]
            return
        n = got[0] + 1
        delta = value - got[1]
        got[0], got[1] = n, got[1] + delta / n
        got[2] += delta * (value - got[1])
        if value > got[3][0]:
            got[3] = (value, at, text)
            self.extreme.append(key)
        elif value < got[4][0]:
            got[4] = (value, at, text)
            self.extreme.append(key)

    def keep(self, number, segment):
        """Keep iteration ``number``'s events (``segment``) whole, while there is room or in place of an
        extreme's iteration no longer extreme."""
        if number in self.kept:
            return
        if len(self.kept) >= KEPT_RUNS:
            wanted = self._wanted()
            stale = [k for k in self.kept if k not in wanted]
            if not stale:
                return
            del self.kept[stale[0]]
        self.kept[number] = _items_record(segment[:KEPT_EVENTS])

    def _wanted(self):
        """The iterations a kept run still stands for: the first of each other line set, the extremes."""
        wanted = set()
        for _count, firsts in self.sets.values():
            if firsts:
                wanted.add(firsts[0])
        for got in self.values.values():
            wanted.add(got[3][1])
            wanted.add(got[4][1])
        return wanted

    def absorb_stats(self, other):
        for line, stat in sorted(other.stats.items()):
            mine = self.stats.get(line)
            if mine is None:
                self.stats[line] = list(stat)
            else:
                mine[0] += stat[0]
                mine[2] = stat[2]
        self.runs += other.runs

    def iteration(self, lines, segment):
        self.iterations += 1
        extreme, self.extreme = self.extreme, []
        key = frozenset(lines)
        got = self.sets.get(key)
        if got is None:
            if len(self.sets) >= MAX_SETS:
                self.more += 1
                return
            got = self.sets[key] = [0, []]
            if self.iterations > 1:  # a line set not seen before: another branch; its first iteration, whole
                self.keep(self.iterations, segment)
        elif extreme and self.iterations > OUTLIER_AFTER:
            self.keep(self.iterations, segment)
        got[0] += 1
        if len(got[1]) < 10:
            got[1].append(self.iterations)

    def absorb(self, other):
        """Another folding of the same loop, run after this one."""
        offset = self.iterations
        self.end = max(self.end, other.end)
        self.absorb_stats(other)
        for key, (count, firsts) in other.sets.items():
            got = self.sets.get(key)
            if got is None:
                if len(self.sets) >= MAX_SETS:
                    self.more += count
                    continue
                got = self.sets[key] = [0, []]
            got[0] += count
            for number in firsts:
                if len(got[1]) < 10:
                    got[1].append(number + offset)
        self.more += other.more
        for number, events in other.kept.items():
            if len(self.kept) < KEPT_RUNS:
                self.kept[number + offset] = events
        for key, theirs in other.values.items():
            mine = self.values.get(key)
            high = (theirs[3][0], theirs[3][1] + offset, theirs[3][2])
            low = (theirs[4][0], theirs[4][1] + offset, theirs[4][2])
            if mine is None:
                if len(self.values) < MAX_NAMES:
                    self.values[key] = [theirs[0], theirs[1], theirs[2], high, low]
                continue
            n = mine[0] + theirs[0]
            delta = theirs[1] - mine[1]
            mine[2] += theirs[2] + delta * delta * mine[0] * theirs[0] / n
            mine[1] += delta * theirs[0] / n
            mine[0] = n
            if high[0] > mine[3][0]:
                mine[3] = high
            if low[0] < mine[4][0]:
                mine[4] = low
        self.iterations += other.iterations

    def record(self):
        lines = []
        for line in sorted(self.stats):
            count, first, last = self.stats[line]
            item = {"line": line, "count": count}
            if first:
                item["first"] = first
            if last:
                item["last"] = last
            lines.append(item)
        out = {"loop": [self.h, self.end], "iterations": self.iterations, "lines": lines}
        if self.sets:
            usual = max(self.sets.items(), key=lambda kv: kv[1][0])[0]
            out["usual"] = sorted(usual)
            other = []
            for key, (count, firsts) in self.sets.items():
                if key != usual:
                    other.append({"lines": sorted(key), "iterations": list(firsts), "count": count})
            other.sort(key=lambda o: o["iterations"][:1])
            for item in other:
                run = self.kept.get(item["iterations"][0]) if item["iterations"] else None
                if run is not None:
                    item["run"] = run
            if other:
                out["other"] = other
        if self.more:
            out["other_cut"] = self.more
        far = self._far()
        if far:
            out["far"] = far
        return out

    def _far(self):
        """The iterations that wrote a value far outside the others a line wrote to the same local, whole."""
        far = []
        for (line, name), (n, mean, m2, high, low) in sorted(self.values.items()):
            if n <= OUTLIER_AFTER:
                continue
            for value, number, text in (high, low):
                # the others' mean and spread, without the value itself
                rest_mean = (mean * n - value) / (n - 1)
                rest_m2 = m2 - (value - mean) * (value - rest_mean)
                spread = (max(rest_m2, 0.0) / (n - 2)) ** 0.5 if n > 2 else 0.0
                off = abs(value - rest_mean)
                far_off = off > OUTLIER * spread and off > 1e-9 * max(1.0, abs(rest_mean))
                fresh = len(far) < KEPT_RUNS and all(f["iteration"] != number for f in far)
                if far_off and fresh and number in self.kept:
                    far.append(
                        {"iteration": number, "line": line, "name": name, "value": text, "run": self.kept[number]}
                    )
        return far


class _Cut(object):
    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n


def _lo(item):
    if type(item) is tuple:
        return item[0]
    return item.h


def _hi(item):
    if type(item) is tuple:
        return item[0]
    return item.end


def _fold(items, final):
    """Fold the loops of a call's events in place (innermost first); answers the new list."""
    i = 1
    while i < len(items):
        cur = items[i]
        prev = items[i - 1]
        if type(cur) is not tuple or type(prev) is _Cut or cur[0] > _hi(prev):
            i += 1
            continue
        h = cur[0]
        s = None
        k = i - 1
        while k >= 0:
            it = items[k]
            if type(it) is _Cut or _lo(it) < h:
                break
            if _lo(it) == h and (type(it) is tuple or it.h == h):
                s = k
            k -= 1
        if s is None:
            i += 1
            continue
        folded = _fold_at(items, s, h, final)
        if folded is None:
            i += 1
            continue
        items = folded[0]
        i = folded[1]
    return items


def _starts(item, h):
    """An item that starts an iteration of the loop headed at line h."""
    t = type(item)
    if t is tuple:
        return item[0] == h
    return t is _Loop and item.h == h


def _fold_at(items, s, h, final):  # noqa: PLR0915
    """Fold the iterations of the loop headed at h from items[s]; answers (items, next index) or None."""
    n = len(items)
    segs = []  # [start, stop) index ranges, each starting at an item that starts at h
    p = s
    while p < n:
        q = p + 1
        if type(items[p]) is not _Loop:
            while q < n:
                it = items[q]
                if type(it) is _Cut or _lo(it) < h or _starts(it, h):
                    break
                q += 1
        segs.append((p, q))
        if q < n and _starts(items[q], h):
            p = q
            continue
        break
    complete = segs[:-1]
    a, b = segs[-1]
    end = h
    iterations = 0
    for a2, b2 in segs:
        first = items[a2]
        if type(first) is _Loop:
            end = max(end, first.end)
            iterations += first.iterations
        elif (a2, b2) != (a, b):
            iterations += 1
            for it in items[a2:b2]:
                end = max(end, _hi(it))
    based = type(items[s]) is _Loop
    if iterations < 2 and not based:
        return None
    # the last segment: cut at the first item out of [h, end]; still open while the call runs
    stop = a + 1
    while stop < b and _hi(items[stop]) <= end:
        stop += 1
    open_tail = stop == b == n and not final and type(items[a]) is not _Loop
    consumed = complete if open_tail else complete + [(a, stop)]
    if not consumed or (len(consumed) == 1 and based):
        return None
    loop = _Loop(h, end)
    last = len(consumed) - 1
    for index, (a2, b2) in enumerate(consumed):
        first = items[a2]
        if type(first) is _Loop:
            loop.absorb(first)
            continue
        lines = set()
        for it in items[a2:b2]:
            if type(it) is tuple:
                loop.run(it[0], it[1])
                lines.add(it[0])
            else:
                loop.absorb_stats(it)
                lines.update(it.stats)
        if index == last and not open_tail and b2 - a2 == 1:
            continue  # the loop's test that leaves it: a line run, no iteration
        loop.iteration(lines, items[a2:b2])
    upto = consumed[-1][1]
    return items[:s] + [loop] + items[upto:], s + 1


def _items_record(items):
    out = []
    for it in items:
        t = type(it)
        if t is tuple:
            out.append({"line": it[0], "changed": it[1] or {}})
        elif t is _Loop:
            out.append(it.record())
        else:
            out.append({"cut": it.n})
    return out


def _runs(item):
    t = type(item)
    if t is tuple:
        return 1
    if t is _Loop:
        return item.runs
    return 0


# ---------------------------------------------------------------------------------------------- calls


class _Call(object):
    __slots__ = (
        "trace",
        "n",
        "end",
        "function",
        "file",
        "line",
        "args",
        "returned",
        "raised",
        "raised_line",
        "lines",
        "parent",
        "callees",
        "thread",
        "pid",
        "items",
        "fold_at",
        "cut",
        "snap",
        "looks",
        "prev",
        "frame",
        "code",
        "exc",
        "done",
        "record_",
    )

    def __init__(self, trace, frame, parent):
        code = frame.f_code
        self.trace = trace
        self.n = next(_seq[0])
        self.end = 0
        self.function, self.file, self.line, params = _code_facts(code)
        self.returned = None
        self.raised = None
        self.raised_line = None
        self.lines = set()
        self.parent = parent.call_id() if parent is not None else None
        self.callees = []
        self.thread = _thread_name()
        self.pid = _state["pid"]
        self.items = []
        self.fold_at = FOLD_AT
        self.cut = None
        self.prev = None
        self.frame = frame
        self.code = code
        self.exc = None
        self.done = False
        self.record_ = None
        loc = frame.f_locals
        args = {}
        snap = {}
        reprs = trace.reprs
        for name in params:
            if name in loc:
                value = loc[name]
                text = _show(value, ARG_CHARS, reprs)
                args[name] = text
                snap[name] = (value, None) if _immutable(value) else (None, text)
        for name, value in loc.items():
            if name not in snap:
                snap[name] = (value, None) if _immutable(value) else (None, _show(value, ARG_CHARS, reprs))
        self.args = args
        self.snap = snap
        looks = []
        for name in params:
            value = loc.get(name)
            kind = _look_kind(value) if name in loc else None
            if kind is not None:
                namespace = _namespace(value) if kind == "fields" else None
                looks.append([name, id(value), kind, _look(value, kind, namespace), namespace])
        self.looks = looks
        if parent is not None:
            if len(parent.callees) < MAX_CALLEES:
                parent.callees.append(self.call_id())
            else:
                parent.cut_count("callees", 1)

    def call_id(self):
        return "%d.%d" % (self.pid, self.n)

    def cut_count(self, what, n):
        if self.cut is None:
            self.cut = {}
        self.cut[what] = self.cut.get(what, 0) + n

    def diff(self, frame):
        """What changed in the locals since the last look: {name: repr}, or None."""
        old = self.snap
        new = {}
        changed = None
        reprs = self.trace.reprs
        loc = frame.f_locals
        for name, value in loc.items():
            prev = old.get(name)
            if _immutable(value):
                if prev is not None and prev[1] is None:
                    before = prev[0]
                    if before is value:
                        new[name] = prev
                        continue
                    t = type(value)
                    if type(before) is t and id(t) in _SCALAR_IDS and before == value:
                        new[name] = prev
                        continue
                new[name] = (value, None)
                text = _show(value)
                same_type = prev is not None and prev[1] is None and type(prev[0]) is type(value)
                if same_type and _show(prev[0]) == text:
                    continue
            else:
                text = _show(value, ARG_CHARS, reprs)
                new[name] = (None, text)
                if prev is not None and prev[1] == text:
                    continue
            if changed is None:
                changed = {}
            if len(changed) < MAX_NAMES:
                changed[name] = text
            else:
                self.cut_count("names", 1)
        for name in old:
            if name not in new:
                if changed is None:
                    changed = {}
                changed[name] = "<deleted>"
        self.snap = new
        return self.writes(loc, changed)

    def writes(self, loc, changed):
        """``changed`` with the writes to the arguments' attributes and items since the last look."""
        for look in self.looks:
            try:
                written = self.written(look, loc)
            except Exception:  # a dict another thread changed as it was read: compared again at the next line
                continue
            if written:
                if changed is None:
                    changed = {}
                changed.pop(look[0], None)  # the local's own text: its writes say it better
                for key, text in written.items():
                    if len(changed) < MAX_NAMES:
                        changed[key] = text
                    else:
                        self.cut_count("names", 1)
        return changed

    def written(self, look, loc):
        """The writes to the attributes or items of the argument ``look`` is of, since the last look."""
        name, ident, kind, before, namespace = look
        value = loc.get(name)
        if id(value) != ident or value is None:  # the local names another object now: the locals say so
            kind = _look_kind(value)
            namespace = _namespace(value) if kind == "fields" else None
            look[1], look[2], look[4] = id(value), kind, namespace
            look[3] = _look(value, kind, namespace) if kind is not None else {}
            return None
        if kind is None:
            return None
        after = _look(value, kind, namespace)
        if after == before:  # slots of ints, bools and builtin scalars: nothing of the program's compares
            return None
        look[3] = after
        return _writes(name, value, kind, before, after)

    def event(self, line, changed):
        self.items.append((line, changed))
        if len(self.items) >= self.fold_at:
            self.fold(False)

    def fold(self, final):
        items = _fold(self.items, final)
        if len(items) > MAX_ITEMS:
            head = MAX_ITEMS // 2
            tail = len(items) - MAX_ITEMS // 2
            middle = items[head:tail]
            n = 0
            for it in middle:
                n += _runs(it)
                if type(it) is _Cut:
                    n += it.n
            items = items[:head] + [_Cut(n)] + items[tail:]
            self.cut_count("events", n)
        self.items = items
        self.fold_at = len(items) + FOLD_AT

    def on_line(self, frame, line):
        changed = self.diff(frame)
        if self.prev is not None:
            self.event(self.prev, changed)
        self.prev = line
        self.lines.add(line)
        self.exc = None

    def finish(self, frame):
        """The last line's event, at return or raise."""
        changed = self.diff(frame)
        if self.prev is not None:
            self.event(self.prev, changed)
            self.prev = None

    def close(self):
        """A completed call: folded, in its trace's ring, its frame let go."""
        self.done = True
        self.fold(True)
        self.frame = None
        self.looks = None
        self.exc = None  # the exception that left it (3.11): its traceback would keep the call's locals alive
        self.snap = None
        self.end = next(_seq[1])
        trace = self.trace
        ring = trace.ring
        if len(ring) == ring.maxlen:
            trace.dropped += 1
        ring.append(self)
        trace.total += 1

    def record(self):
        if self.record_ is not None:
            return self.record_
        items = list(self.items)
        lines = sorted(self.lines)
        rec = {
            "call_id": self.call_id(),
            "trace_id": self.trace.id,
            "function": self.function,
            "file": self.file,
            "line": self.line,
            "seq": self.n,
            "end": self.end or None,
            "args": self.args,
        }
        if self.done and self.raised is None:
            rec["returned"] = self.returned
        if self.raised is not None:
            rec["raised"] = self.raised
            rec["raised_line"] = self.raised_line
        rec["lines"] = lines
        rec["parent"] = self.parent
        rec["callees"] = list(self.callees)
        rec["thread"] = self.thread
        rec["pid"] = self.pid
        rec["events"] = _items_record(items)
        rec["running"] = not self.done
        if self.cut:
            rec["cut"] = dict(self.cut)
        if self.done:
            self.record_ = rec
            self.items = None
        return rec


def _stack():
    ident = _get_ident()
    stack = _stacks.get(ident)
    if stack is None:
        stack = _stacks[ident] = []
    return stack


def _pop(stack, call):
    if stack and stack[-1] is call:
        stack.pop()
    else:
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is call:
                del stack[i]
                break


def _start(trace, frame):
    """A traced frame starts (or resumes): answers its call (None on the thread running the program's reprs)."""
    if _teller["ident"] is not None and _is_teller():
        return None
    call = _live.get(id(frame))
    stack = _stack()
    if call is None or call.frame is not frame:
        parent = stack[-1] if stack else None
        call = _Call(trace, frame, parent)
        _live[id(frame)] = call
    stack.append(call)
    return call


def _callee_trace(frame):
    """The trace a direct callee of a traced call with callees on belongs to, or None."""
    stack = _stacks.get(_get_ident())
    if not stack:
        return None
    top = stack[-1]
    if not top.trace.callees or top.frame is not frame.f_back or top.done:
        return None
    if not _user_file(frame.f_code.co_filename):
        return None
    return top.trace


def _end(call, frame, returned, raised):
    try:
        call.finish(frame)
        if raised is not None:
            exc, line = raised
            call.raised = _exception_text(exc, call.trace.reprs)
            call.raised_line = line
        else:
            call.returned = _show(returned, VALUE_CHARS, call.trace.reprs)
        _live.pop(id(frame), None)
        _pop(_stack(), call)
        call.close()
        if _state["sock"] is not False and (_state["child"] or time.monotonic() - _state["last_push"] >= PUSH_EVERY):
            _push(False)
    except Exception:
        pass


def _suspend(call):
    _pop(_stack(), call)


# ------------------------------------------------------------------------- Python <= 3.11: settrace chaining

_real = {}
_thread_wanted = [None]


def _is_yield(frame):
    try:
        code = frame.f_code.co_code
        i = frame.f_lasti
        if 0 <= i < len(code) and code[i] in _YIELD_OPS:
            return True
        return i + 2 < len(code) and code[i + 2] in _YIELD_OPS
    except Exception:
        return False


def _yield_ops():
    try:
        import dis

        return frozenset(dis.opmap[name] for name in ("YIELD_VALUE", "YIELD_FROM") if name in dis.opmap)
    except Exception:
        return frozenset()


_YIELD_OPS = _yield_ops() if _MONITORING is None else frozenset()


class _Local(object):
    """A traced frame's local tracer: records, then forwards every event to the debugger's."""

    __slots__ = ("call", "inner")

    def __init__(self, call, inner):
        self.call = call
        self.inner = inner

    def __call__(self, frame, event, arg):
        call = self.call
        if not call.done:
            try:
                if event == "line":
                    call.on_line(frame, frame.f_lineno)
                elif event == "exception":
                    call.exc = (arg[1], frame.f_lineno)
                elif event == "return":
                    if call.exc is not None and arg is None:
                        _end(call, frame, None, call.exc)
                    elif call.code.co_flags & _GEN_FLAGS and _is_yield(frame):
                        _suspend(call)
                    else:
                        _end(call, frame, arg, None)
            except Exception:
                pass
        inner = self.inner
        if inner is not None:
            got = inner(frame, event, arg)
            if got is not None and got is not self:
                self.inner = got
        return self


def _keep_traced_frames(module):
    """pydevd puts its own tracer on every frame of every thread whenever breakpoints are set (and as it
    steps), replacing ours on a traced call's frame, whose end would then never be recorded: ours goes
    back around what pydevd put there."""
    pydb = getattr(module, "PyDB", None)
    original = getattr(pydb, "set_trace_for_frame_and_parents", None)
    if original is None or getattr(original, "_debugrelay_keeps", False):
        return

    def set_trace_for_frame_and_parents(self, thread_ident, frame, **kwargs):
        kept = []
        back = frame
        while back is not None:
            local = getattr(back, "f_trace", None)
            if type(local) is _Local:
                kept.append((back, local))
            back = getattr(back, "f_back", None)
        try:
            return original(self, thread_ident, frame, **kwargs)
        finally:
            for back, local in kept:
                try:
                    now = back.f_trace
                    if now is not local:
                        local.inner = now
                        back.f_trace = local
                except Exception:
                    pass

    set_trace_for_frame_and_parents._debugrelay_keeps = True
    pydb.set_trace_for_frame_and_parents = set_trace_for_frame_and_parents


def _keep_traced_frames_of_pydevd():
    try:
        from _debugrelay_patch import when_imported
    except ImportError:  # loaded apart from the boot directory
        return
    when_imported("pydevd", _keep_traced_frames, "a traced call in flight as breakpoints change is lost")


def _make_dispatch(inner):
    def _debugrelay_dispatch(frame, event, arg):
        if event == "call":
            if _live:
                back = frame.f_back
                if back is not None:
                    parent = _live.get(id(back))
                    if parent is not None and parent.frame is back:
                        local = back.f_trace
                        if type(local) is not _Local:
                            try:
                                back.f_trace = _Local(parent, local)
                            except Exception:
                                pass
            trace = None
            try:
                trace = _match(frame.f_code) if _by_file else None
                if trace is None and _state["callees"]:
                    trace = _callee_trace(frame)
            except Exception:
                trace = None
            if trace is not None:
                try:
                    call = _start(trace, frame)
                except Exception:
                    call = None
                local = inner(frame, event, arg) if inner is not None else None
                if call is None:
                    return local
                return _Local(call, local)
        if inner is None:
            return None
        return inner(frame, event, arg)

    _debugrelay_dispatch._debugrelay_inner = inner
    return _debugrelay_dispatch


def _wanted_active():
    return bool(_traces)


def _settrace(func):
    """sys.settrace as the program and the debugger see it: their function runs, ours around it."""
    if func is _thread_boot:
        func = _thread_wanted[0]
    if func is None and not _wanted_active():
        _real["settrace"](None)
        return
    _real["settrace"](_make_dispatch(func))


def _gettrace():
    got = _real["gettrace"]()
    return getattr(got, "_debugrelay_inner", got)


def _thread_boot(frame, event, arg):  # a marker: the new thread's sys.settrace swaps it for ours
    return None


def _threading_settrace(func):
    _thread_wanted[0] = func
    _real["threading_settrace"](_thread_boot if (func is not None or _wanted_active()) else None)


def _threading_gettrace():
    return _thread_wanted[0]


def _install_settrace():
    _real["settrace"] = sys.settrace
    _real["gettrace"] = sys.gettrace
    _real["threading_settrace"] = threading.settrace
    sys.settrace = _settrace
    sys.gettrace = _gettrace
    threading.settrace = _threading_settrace
    if hasattr(threading, "gettrace"):
        threading.gettrace = _threading_gettrace


def _activate_settrace():
    """Traces exist: this thread and threads started from now on run our dispatcher."""
    if "settrace" not in _real:
        return
    _no_native_tracer()
    current = _real["gettrace"]()
    if getattr(current, "_debugrelay_inner", False) is False:
        _real["settrace"](_make_dispatch(current))
    _real["threading_settrace"](_thread_boot)


def _no_native_tracer():
    """A debugger started before any trace set its tracer through its native helper, past ``sys.settrace``: from
    now on it goes through ``sys.settrace`` (ours), so threads it traces later run our dispatcher too."""
    tracing = sys.modules.get("pydevd_tracing")
    loader = getattr(tracing, "_load_python_helper_lib", None)
    if loader is not None:
        try:
            loader.__lib__ = None
        except Exception:
            pass


# ------------------------------------------------------------------------- Python 3.12+: sys.monitoring

_mon = {"tool": None, "codes": {}, "callee_codes": {}, "global": 0}


def _m_events():
    ev = _MONITORING.events
    local = ev.PY_START | ev.PY_RESUME | ev.PY_RETURN | ev.PY_YIELD | ev.LINE
    return ev, local


def _m_install():
    mon = _MONITORING
    for tool in (4, 3):  # the ids PEP 669 leaves free: never a coverage tool's or a profiler's
        try:
            if mon.get_tool(tool) is None:
                mon.use_tool_id(tool, "debugrelay-trace")
                _mon["tool"] = tool
                break
        except Exception:
            continue
    tool = _mon["tool"]
    if tool is None:
        return
    ev = mon.events
    mon.register_callback(tool, ev.PY_START, _m_start)
    mon.register_callback(tool, ev.PY_RESUME, _m_resume)
    mon.register_callback(tool, ev.PY_THROW, _m_throw)
    mon.register_callback(tool, ev.PY_RETURN, _m_return)
    mon.register_callback(tool, ev.PY_YIELD, _m_yield)
    mon.register_callback(tool, ev.LINE, _m_line)
    mon.register_callback(tool, ev.PY_UNWIND, _m_unwind)
    mon.register_callback(tool, ev.CALL, _m_call)
    _m_global()


def _m_global():
    tool = _mon["tool"]
    if tool is None:
        return
    ev = _MONITORING.events
    want = ev.PY_UNWIND | ev.PY_THROW
    if _pending():
        want |= ev.PY_START
    if want != _mon["global"]:
        _MONITORING.set_events(tool, want)
        _mon["global"] = want


def _m_watch(code, trace):
    """Local events on a traced code object (kept alive by the table)."""
    tool = _mon["tool"]
    if tool is None:
        return
    ev, local = _m_events()
    if trace.callees:
        local |= ev.CALL
    _mon["codes"][id(code)] = (code, trace)
    _MONITORING.set_local_events(tool, code, local)


def _m_unwatch(code):
    tool = _mon["tool"]
    _mon["codes"].pop(id(code), None)
    if tool is not None and id(code) not in _mon["callee_codes"]:
        try:
            _MONITORING.set_local_events(tool, code, 0)
        except Exception:
            pass


def _m_trace_of(code, frame):
    got = _mon["codes"].get(id(code))
    if got is not None and got[0] is code:
        return got[1]
    if id(code) in _mon["callee_codes"]:
        return _callee_trace(frame)
    return None


def _m_start(code, offset):
    try:
        got = _mon["codes"].get(id(code))
        if got is not None and got[0] is code:
            _start(got[1], sys._getframe(1))
            return None
        if id(code) in _mon["callee_codes"]:
            frame = sys._getframe(1)
            trace = _callee_trace(frame)
            if trace is not None:
                _start(trace, frame)
            return None
        if _pending():
            trace = _match(code)
            if trace is not None:
                _found(trace, code)
                _start(trace, sys._getframe(1))
                return None
    except Exception:
        return None
    _mon["disabled"] = True
    return _MONITORING.DISABLE


def _m_resume(code, offset):
    try:
        frame = sys._getframe(1)
        call = _live.get(id(frame))
        if call is not None and call.frame is frame:
            _stack().append(call)
    except Exception:
        pass


def _m_throw(code, offset, exc):
    if id(code) in _mon["codes"] or id(code) in _mon["callee_codes"]:
        _m_resume(code, offset)


def _m_line(code, line):
    try:
        frame = sys._getframe(1)
        call = _live.get(id(frame))
        if call is not None and call.frame is frame and not call.done:
            call.on_line(frame, line)
    except Exception:
        pass


def _m_return(code, offset, retval):
    try:
        frame = sys._getframe(1)
        call = _live.get(id(frame))
        if call is not None and call.frame is frame and not call.done:
            _end(call, frame, retval, None)
    except Exception:
        pass


def _m_yield(code, offset, retval):
    try:
        frame = sys._getframe(1)
        call = _live.get(id(frame))
        if call is not None and call.frame is frame:
            _suspend(call)
    except Exception:
        pass


def _m_unwind(code, offset, exc):
    if id(code) not in _mon["codes"] and id(code) not in _mon["callee_codes"]:
        return
    try:
        frame = sys._getframe(1)
        call = _live.get(id(frame))
        if call is not None and call.frame is frame and not call.done:
            _end(call, frame, None, (exc, frame.f_lineno))
    except Exception:
        pass


def _m_call(code, offset, callable_, arg0):
    try:
        target = _callee_code(callable_)
        if target is None or id(target) in _mon["callee_codes"] or id(target) in _mon["codes"]:
            return
        if not _user_file(target.co_filename):
            return
        _mon["callee_codes"][id(target)] = target
        ev, local = _m_events()
        _MONITORING.set_local_events(_mon["tool"], target, local)
    except Exception:
        pass


def _callee_code(obj):
    """The code a call of ``obj`` runs first: a function's, a bound method's, a class's own ``__init__``; read
    without running anything of the program's (no ``__getattr__``, no ``__class__`` property)."""
    t = type(obj)
    func = None
    if t is _FunctionType:
        func = obj
    elif t is _MethodType:
        func = _MethodType.__dict__["__func__"].__get__(obj)
    elif issubclass(t, type):
        func = _type_dict(obj).get("__init__")
    if type(func) is _FunctionType:
        return _FunctionType.__dict__["__code__"].__get__(func)
    return None


# ---------------------------------------------------------------------------------------------- traces


_pending_ids = set()


def _pending():
    return bool(_pending_ids)


def _found(trace, code):
    _pending_ids.discard(trace.id)
    if _MONITORING is not None:
        _m_watch(code, trace)
        _m_global()


def _codes_in(code):
    yield code
    for const in code.co_consts:
        if type(const) is type(code):
            for inner in _codes_in(const):
                yield inner


def _loaded(trace):
    """The code objects of a trace already loaded (functions alive in the heap)."""
    found = []
    seen = set()
    checked = {}
    for obj in gc.get_objects():
        code = obj.__code__ if type(obj) is _FunctionType else None
        if code is None or id(code) in seen:
            continue
        raw = code.co_filename
        hit = checked.get(raw)
        if hit is None:
            hit = checked[raw] = _norm(raw) == trace.file
        if not hit:
            continue
        for inner in _codes_in(code):
            if id(inner) in seen:
                continue
            seen.add(id(inner))
            if _key(_qualname(inner)) == trace.key or (
                not hasattr(inner, "co_qualname") and trace.key.rsplit(".", 1)[-1] == inner.co_name
            ):
                found.append(inner)
    return found


def _add(spec):
    trace = _Trace(spec)
    _drop(trace.id)
    table = dict(_by_file.get(trace.file) or {})
    table[trace.key] = trace
    _by_file[trace.file] = table
    _traces[trace.id] = trace
    if trace.callees:
        _state["callees"] += 1
    codes = _loaded(trace)
    if _MONITORING is not None:
        if _mon["tool"] is None:
            _m_install()
        _pending_ids.add(trace.id)  # a code object of it not loaded yet may still come
        for code in codes:
            _m_watch(code, trace)
        if codes:
            _pending_ids.discard(trace.id)
            if _mon.get("disabled"):
                try:
                    _MONITORING.restart_events()  # a PY_START answered DISABLE before counts again
                except Exception:
                    pass
        _m_global()
    else:
        _activate_settrace()
    return bool(codes)


def _drop(trace_id):
    trace = _traces.pop(trace_id, None)
    if trace is None:
        return False
    _pending_ids.discard(trace_id)
    if trace.callees:
        _state["callees"] -= 1
    table = dict(_by_file.get(trace.file) or {})
    if table.get(trace.key) is trace:
        del table[trace.key]
    if table:
        _by_file[trace.file] = table
    else:
        _by_file.pop(trace.file, None)
    if _MONITORING is not None:
        for code, owner in list(_mon["codes"].values()):
            if owner is trace:
                _m_unwatch(code)
        _m_global()
    return True


def add(spec_json):
    """Add or replace a trace: ``{"id", "file", "qualname", "keep", "callees"}``; answers ``{"found"}``."""
    try:
        spec = json.loads(spec_json) if isinstance(spec_json, (str, bytes)) else spec_json
        return json.dumps({"found": _add(spec)})
    except Exception as exc:
        return _error(exc)


def remove(trace_id):
    """Stop a trace and drop its calls; answers ``{"removed"}``."""
    try:
        return json.dumps({"removed": _drop(str(trace_id))})
    except Exception as exc:
        return _error(exc)


def _snapshot(after=None, after_end=None):
    traces = {}
    running = {}
    for call in list(_live.values()):
        if not call.done:
            running.setdefault(call.trace.id, []).append(call)
    for tid, trace in list(_traces.items()):
        calls = []
        low = (after or {}).get(tid)
        low_end = (after_end or {}).get(tid)
        for call in list(trace.ring):
            if low is not None and call.n <= low:
                continue
            if low_end is not None and call.end <= low_end:
                continue
            calls.append(call)
        for call in running.get(tid, ()):
            if call.trace is trace:
                calls.append(call)
        traces[tid] = (trace, calls)
    return traces


def _records(calls):
    out = []
    for call in calls:
        for _attempt in range(3):
            try:
                out.append(call.record())
                break
            except RuntimeError:  # a set or dict changed as another thread ran: read it again
                continue
    return out


def dump(opts_json="{}"):
    """The calls kept and running: ``{"pid", "traces": {tid: {"total", "dropped", "calls"}}}``."""
    try:
        opts = json.loads(opts_json or "{}") if isinstance(opts_json, (str, bytes)) else (opts_json or {})
        out = {}
        for tid, (trace, calls) in _snapshot(opts.get("after"), opts.get("after_end")).items():
            out[tid] = {"total": trace.total, "dropped": trace.dropped, "calls": _records(calls)}
        return json.dumps({"pid": _state["pid"], "traces": out})
    except Exception as exc:
        return _error(exc)


# ---------------------------------------------------------------------------------------------- pushes


def _socket():
    sock = _state["sock"]
    if sock is None:
        where = os.environ.get(SOCKET_ENV, "")
        if not where.startswith("@"):
            _state["sock"] = False
            return None
        import socket

        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.settimeout(1.0)
        _state["sock"] = sock
    return sock or None


def _fit(rec):
    """One call's JSON within a datagram: its events (then its lines) cut and marked."""
    text = json.dumps(rec)
    if len(text) <= DATAGRAM - 500:
        return text
    rec = dict(rec)
    cut = dict(rec.get("cut") or {})
    events = list(rec.get("events") or [])
    while events and len(json.dumps(rec)) > DATAGRAM - 500:
        keep = len(events) // 2
        cut["events"] = cut.get("events", 0) + len(events) - keep
        events = events[:keep]
        rec["events"] = events
        rec["cut"] = cut
    if len(json.dumps(rec)) > DATAGRAM - 500:
        cut["lines"] = len(rec["lines"])
        rec["lines"] = rec["lines"][:1000]
        rec["cut"] = cut
    return json.dumps(rec)


def _datagrams(batch):
    """``b"T" + json`` datagrams of at most DATAGRAM bytes, the calls of a batch spread over them."""
    pid = _state["pid"]
    out = []
    parts = {}
    size = [0]

    def flush():
        if parts:
            body = ", ".join(
                '%s: {"total": %d, "dropped": %d, "calls": [%s]}' % (json.dumps(tid), total, dropped, ", ".join(texts))
                for tid, (total, dropped, texts) in parts.items()
            )
            out.append(b"T" + ('{"pid": %d, "traces": {%s}}' % (pid, body)).encode())
            parts.clear()
            size[0] = 0

    for tid, (trace, recs) in batch.items():
        for rec in recs:
            text = _fit(rec)
            if size[0] + len(text) + 200 + len(tid) > DATAGRAM:
                flush()
            slot = parts.get(tid)
            if slot is None:
                slot = parts[tid] = (trace.total, trace.dropped, [])
                size[0] += 100 + len(tid)
            slot[2].append(text)
            size[0] += len(text) + 2
    flush()
    return out


def _push(wait):
    """Send the completed calls not pushed before (silently dropped if the keeper cannot take them)."""
    got = _push_lock.acquire(True, 2.0) if wait else _push_lock.acquire(False)
    if not got:
        return
    try:
        _state["last_push"] = time.monotonic()
        sock = _socket()
        if sock is None:
            return
        batch = {}
        for tid, trace in list(_traces.items()):
            fresh = [call for call in list(trace.ring) if call.end > trace.pushed]
            if fresh:
                trace.pushed = max(call.end for call in fresh)
                batch[tid] = (trace, _records(fresh))
        if not batch:
            return
        where = "\0" + os.environ.get(SOCKET_ENV, "")[1:]
        for data in _datagrams(batch):
            try:
                sock.sendto(data, where)
            except Exception:
                pass
    except Exception:
        pass
    finally:
        _push_lock.release()


def _at_exit():
    try:
        _push(True)
    except Exception:
        pass


def _wrap_exit():
    real = os._exit

    def _exit(code):
        try:
            _push(True)
        except Exception:
            pass
        real(code)

    _exit._debugrelay_real = real
    os._exit = _exit


def _is_child():
    """A child process of the program (not the keeper's own child): a pool's worker may be ended by a signal any
    time after it answered, so its calls are pushed as each one ends, not once a second."""
    name = os.environ.get(SOCKET_ENV, "")  # "@debugrelay-traces-<keeper pid>-<random>"
    parts = name.split("-")
    if len(parts) < 4 or not parts[2].isdigit():
        return False
    return os.getppid() != int(parts[2])


def _after_fork_in_child():
    """A forked child traces on as its own process: its pid, fresh call numbers, rings and sockets."""
    global _push_lock
    try:
        _state["pid"] = os.getpid()
        _seq[0] = itertools.count(1)
        _seq[1] = itertools.count(1)
        for call in list(_live.values()):
            call.done = True  # the parent's: its record is the parent's to keep
        _live.clear()
        _stacks.clear()
        _push_lock = threading.Lock()
        sock = _state["sock"]
        if sock:
            try:
                sock.close()
            except Exception:
                pass
        _state["sock"] = None
        _state["last_push"] = time.monotonic()
        _state["child"] = True
        for trace in _traces.values():
            trace.ring = collections.deque(maxlen=trace.keep)
            trace.total = 0
            trace.dropped = 0
            trace.pushed = 0
        _jobs.clear()  # the reprs thread is the parent's: a child starts its own when it needs one
        _teller.update(thread=None, ident=None, since=None, wake=_allocate_lock(), start=_allocate_lock())
    except Exception:
        pass


def _forget_native_flag():
    """pydevd reads its native-helper flag once, as its constants load: the environment is the program's again
    from then on (a child process is given the flag by its own start-up hook)."""
    try:
        from _debugrelay_patch import when_imported
    except ImportError:  # loaded apart from the boot directory: the flag stays
        return
    when_imported("_pydevd_bundle.pydevd_constants", _drop_native_flag, "PYDEVD_LOAD_NATIVE_LIB left set")


def _drop_native_flag(module):
    if os.environ.get(NATIVE_FLAG) == "0":
        del os.environ[NATIVE_FLAG]


def install():
    """Once, from sitecustomize, before debugpy is imported: hooks, then the traces of the environment."""
    try:
        if _state["installed"]:
            return json.dumps({"installed": True})
        _state["installed"] = True
        if _MONITORING is None:
            # pydevd sets its tracer through a native helper when it can, past sys.settrace: asked
            # not to, it calls the sys.settrace it found at its import, ours (only when traces are
            # given at start: the native helper is debugpy's faster path)
            if os.environ.get(TRACES_ENV) and NATIVE_FLAG not in os.environ:
                os.environ[NATIVE_FLAG] = "0"
                _forget_native_flag()
            _install_settrace()
            _keep_traced_frames_of_pydevd()
        atexit.register(_at_exit)
        _wrap_exit()
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=_after_fork_in_child)
        _state["child"] = _is_child()
        found = {}
        specs = json.loads(os.environ.get(TRACES_ENV) or "[]")
        for spec in specs:
            found[str(spec.get("id"))] = _add(spec)
        return json.dumps({"installed": True, "found": found})
    except Exception as exc:
        return _error(exc)
