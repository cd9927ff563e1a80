"""What debugrelay runs inside a paused target to take a snapshot or record a capture-point row.

The relay sends this file's text in an evaluate request and keeps the module in ``sys.modules``
(works in attach mode too, where nothing of the relay is on the target's path). Every public
function answers with a JSON string and never raises. Values are bounded (items, characters, depth)
and every cut is marked with ``"..."`` or a ``truncated`` entry: nothing is silently dropped.

No code of the program runs here: containers are read through the builtins' own methods, an object
whose ``__repr__`` the program wrote shows its type, address and a few attributes of its instance
``__dict__`` (as a stop shows an object without a ``__repr__`` of its own), and the locks a frame holds
are found without running a property or ``__getattr__``.

Kept compatible with old interpreters (a target may run any Python 3): no walrus, no match.
"""

import ast
import collections
import gc
import json
import linecache
import os
import sys
import threading
import time

_OWN = ("pydevd", "debugpy", "_debugrelay_", "<debugrelay", "/threading.py")
_WAITS = {
    "wait": "condition",
    "acquire": "lock",
    "get": "queue",
    "put": "queue",
    "join": "join",
    "sleep": "sleep",
    "select": "io",
    "poll": "io",
    "recv": "io",
    "accept": "io",
    "read": "io",
    "readline": "io",
    "result": "future",
}
_STDLIB = os.path.dirname(os.__file__) + os.sep
_with_cache = {}
_raises = collections.Counter()
_raise_state = {"since": time.time(), "on": False}


class _Budget:
    def __init__(self, opts):
        self.items = int(opts.get("items", 25))
        self.chars = int(opts.get("chars", 256))
        self.depth = int(opts.get("depth", 5))
        self.left = int(opts.get("max_bytes", 32768))
        self.cut = 0


def _own_file(path):
    return any(part in path for part in _OWN[:4])


def _cut(text, limit):
    if len(text) > limit:
        return text[:limit] + "..."
    return text


def _safe_repr(value, budget):
    return _cut(_text(value, budget, 3), budget.chars)


_PLAIN = (bool, int, float, complex, str, bytes, bytearray, type(None))
_SEQUENCES = (
    (list, "[", "]"),
    (tuple, "(", ")"),
    (set, "{", "}"),
    (frozenset, "frozenset({", "})"),
    (collections.deque, "deque([", "])"),
)
_ATTRIBUTES = (10, 4)  # shown of an object at the top, and inside another value


def _find(cls, name):
    """The attribute ``name`` as defined on ``cls`` or a base, without running descriptors."""
    try:
        mro = type.__dict__["__mro__"].__get__(cls)
    except Exception:
        return None
    for klass in mro:
        found = type.__dict__["__dict__"].__get__(klass).get(name)
        if found is not None:
            return found
    return None


def _type_name(cls):
    try:
        return type.__dict__["__qualname__"].__get__(cls)
    except Exception:
        return "?"


def _library(filename):
    return filename.startswith(_STDLIB) or "-packages" + os.sep in filename or _own_file(filename)


def _programs_repr(cls):
    """True when the type's ``__repr__`` is Python code of the program's (not the standard library's or
    an installed package's): never run from here."""
    method = _find(cls, "__repr__")
    if type(method).__name__ != "function":
        return False
    try:
        return not _library(method.__code__.co_filename)
    except Exception:
        return True


def _instance_dict(value):
    found = _find(type(value), "__dict__")
    if type(found).__name__ != "getset_descriptor":
        return None
    try:
        fields = found.__get__(value)
    except Exception:
        return None
    return fields if type(fields) is dict else None


def _items_text(parts, total):
    if total > len(parts):
        parts.append("<cut: %d more>" % (total - len(parts)))
    return ", ".join(parts)


def _text(value, budget, nest):
    """``repr(value)`` as far as no code of the program runs: builtin values as Python writes them,
    containers through the builtins' methods (a subclass named around them), an object whose ``__repr__``
    the program wrote as ``<Type at 0x...: name=value, ...>``; ``nest`` levels of values inside."""
    kind = type(value)
    if kind in _PLAIN:
        try:
            return repr(value)
        except ValueError:  # an int too long to print
            return "<int of %d bits>" % int.bit_length(value)
    for base, head, tail in _SEQUENCES:
        if issubclass(type(value), base):
            items = list(base.__iter__(value))
            if nest <= 0:
                return "<%s of %d>" % (_type_name(kind), len(items))
            parts = [_text(v, budget, nest - 1) for v in items[: budget.items]]
            text = head + _items_text(parts, len(items)) + ("," if base is tuple and len(items) == 1 else "") + tail
            return text if kind is base else "%s(%s)" % (_type_name(kind), text)
    if issubclass(type(value), dict):
        pairs = list(dict.items(value))
        if nest <= 0:
            return "<%s of %d>" % (_type_name(kind), len(pairs))
        parts = ["%s: %s" % (_text(k, budget, nest - 1), _text(v, budget, nest - 1)) for k, v in pairs[: budget.items]]
        text = "{" + _items_text(parts, len(pairs)) + "}"
        return text if kind is dict else "%s(%s)" % (_type_name(kind), text)
    if not _programs_repr(kind):
        try:
            return repr(value)
        except Exception as exc:
            return "<repr failed: %s>" % type(exc).__name__
    head = "<%s at %s" % (_type_name(kind), hex(id(value)))
    fields = _instance_dict(value)
    if not fields or nest <= 0:
        return head + ">"
    shown = _ATTRIBUTES[0 if nest >= 3 else 1]
    pairs = list(dict.items(fields))
    parts = ["%s=%s" % (k, _text(v, budget, nest - 1)) for k, v in pairs[:shown]]
    return head + ": " + _items_text(parts, len(pairs)) + ">"


def _render(value, budget, depth):
    """A bounded JSON-able rendering: scalars as repr, containers as lists/dicts with a marker when cut."""
    kind = type(value)
    if kind in (bool, float, type(None)) or (kind is int and -(2**53) < value < 2**53):
        return value
    if kind is int or depth >= budget.depth:
        return _safe_repr(value, budget)
    if kind in (str, bytes, bytearray):
        return _safe_repr(value, budget)
    if kind in (list, tuple, set, frozenset, collections.deque):
        items = list(value)[: budget.items] if kind is not list and kind is not tuple else value[: budget.items]
        out = [_render(v, budget, depth + 1) for v in items]
        if len(value) > budget.items:
            out.append("... %d more" % (len(value) - budget.items))
        return out
    if kind is dict:
        out = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= budget.items:
                out["..."] = "%d more" % (len(value) - budget.items)
                break
            out[_cut(str(k) if type(k) is str else _safe_repr(k, budget), budget.chars)] = _render(v, budget, depth + 1)
        return out
    return _safe_repr(value, budget)


def _fits(budget, data):
    size = len(json.dumps(data, default=str))
    if size > budget.left:
        budget.cut += 1
        return False
    budget.left -= size
    return True


# -- locks: what a frame holds (an enclosing ``with X:``) and waits on (the ``with``/``acquire`` it is at)


def _withs(code):
    """[(first_line, last_line, expression source)] of the ``with`` blocks of a code object, cached."""
    found = _with_cache.get(code)
    if found is not None:
        return found
    found = []
    if code.co_filename.startswith(_STDLIB):
        _with_cache[code] = found
        return found
    try:
        lines = linecache.getlines(code.co_filename)
        tree = ast.parse("".join(lines))
        for node in ast.walk(tree):
            if isinstance(node, (ast.With, getattr(ast, "AsyncWith", ast.With))):
                for item in node.items:
                    src = ast.get_source_segment("".join(lines), item.context_expr)
                    if src and _simple(item.context_expr):
                        found.append((node.lineno, getattr(node, "end_lineno", node.lineno), src))
    except Exception:
        found = []
    _with_cache[code] = found
    return found


def _simple(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _attribute(obj, name):
    """``obj.name`` from its instance ``__dict__`` or a plain class attribute: no property, descriptor or
    ``__getattr__`` of the program runs (None when it would take one)."""
    fields = _instance_dict(obj)
    if fields is not None and name in fields:
        return fields[name]
    found = _find(type(obj), name)
    if found is None or _find(type(found), "__get__") is not None:
        return None
    return found


def _lookup(frame, src):
    parts = src.split(".")
    scope = frame.f_locals
    if parts[0] in scope:
        obj = scope[parts[0]]
    elif parts[0] in frame.f_globals:
        obj = frame.f_globals[parts[0]]
    else:
        return None
    for name in parts[1:]:
        obj = _attribute(obj, name)
        if obj is None:
            return None
    return obj


def _lockish(obj):
    name = type(obj).__name__
    return name in ("lock", "RLock", "_RLock", "Lock", "Condition", "Semaphore", "BoundedSemaphore") or (
        _find(type(obj), "acquire") is not None and _find(type(obj), "release") is not None
    )


def _lock_view(obj, src):
    view = {"lock": "%s@%x" % (type(obj).__name__, id(obj)), "expression": src}
    if type(_find(type(obj), "locked")).__name__ == "method_descriptor":  # the C locks' own
        try:
            view["locked"] = bool(obj.locked())
        except Exception:
            pass
    if type(obj).__name__ in ("RLock", "_RLock"):
        owner = _attribute(obj, "_owner")  # the pure-Python RLock
        if owner is None:
            text = object.__repr__(obj) if type(obj).__name__ == "_RLock" or _programs_repr(type(obj)) else repr(obj)
            found = text.split("owner=")[1].split()[0] if "owner=" in text else ""
            owner = int(found) if found.isdigit() else None
        if owner:
            view["owner"] = owner  # the holder's thread ident: Python can tell for an RLock
    return view


def _locks_of(frames):
    """What a thread holds and what it waits on, from the ``with`` blocks of its frames (Python can tell that much)."""
    holds, waits = [], None
    for index, frame in enumerate(frames):
        line = frame.f_lineno
        for first, last, src in _withs(frame.f_code):
            if not first <= line <= last:
                continue
            obj = _lookup(frame, src)
            if obj is None or not _lockish(obj):
                continue
            if first == line and index == 0:
                waits = _lock_view(obj, src)
            else:
                holds.append(_lock_view(obj, src))
    if waits is None and frames:
        top = frames[0]
        text = linecache.getline(top.f_code.co_filename, top.f_lineno).strip()
        if ".acquire(" in text:
            src = text.split(".acquire(")[0].split("=")[-1].split("(")[-1].strip()
            obj = _lookup(top, src) if src.replace(".", "").replace("_", "").isalnum() else None
            if obj is not None and _lockish(obj):
                waits = _lock_view(obj, src)
    return holds, waits


def _waiting(frames, raw):
    """What a thread is blocked in, when its calls name it (lock, queue, condition, io, sleep...): the
    outermost library call of the innermost run of library frames (``queue.get`` over ``Condition.wait``)."""
    found = None
    for frame in raw:
        name = frame.f_code.co_filename
        if _own_file(name) or name == "<string>" or frame.f_code.co_name == "_debugrelay_nudge":
            continue
        if not name.startswith(_STDLIB):
            break
        kind = _WAITS.get(frame.f_code.co_name)
        if kind is not None:
            found = {"kind": kind, "in": "%s:%d %s" % (os.path.basename(name), frame.f_lineno, frame.f_code.co_name)}
    if found is not None:
        return found
    if frames:
        text = linecache.getline(frames[0].f_code.co_filename, frames[0].f_lineno).strip()
        for call, kind in (
            ("sleep(", "sleep"),
            (".acquire(", "lock"),
            (".wait(", "condition"),
            (".get(", "queue"),
            (".join(", "join"),
            ("with ", "lock"),
        ):
            if call in text:
                return {"kind": kind, "in": text[:120]}
    return None


# -- threads, tasks, process ------------------------------------------------------------------


def _thread_frames(frame, current, known):
    """(program frames, all frames) innermost first; (None, ...) for a thread of the debugger itself.

    The thread the relay evaluates in has the debugger's frames (and the evaluated expression's) on
    top of the program's; the main thread has the debugger's launcher and runpy below them.
    """
    raw = []
    while frame is not None:
        raw.append(frame)
        frame = frame.f_back

    def own(f):
        name = f.f_code.co_filename
        return _own_file(name) or name == "<string>" or "runpy" in name or f.f_code.co_name == "_debugrelay_nudge"

    if not known and any(own(f) for f in raw):
        return None, raw
    start = 0
    if current:
        while start < len(raw) and own(raw[start]):
            start += 1
    return [f for f in raw[start:] if not own(f)], raw


def _frame_view(frame, budget, with_locals):
    view = {"function": frame.f_code.co_name, "file": frame.f_code.co_filename, "line": frame.f_lineno}
    if with_locals:
        rendered = {}
        for name, value in list(frame.f_locals.items()):
            if name.startswith("__") and name.endswith("__"):
                continue
            item = _render(value, budget, 1)
            if not _fits(budget, item):
                rendered["..."] = "cut: the snapshot's size bound was reached"
                break
            rendered[name] = item
        view["locals"] = rendered
    return view


def _threads(opts, budget):
    max_frames = int(opts.get("frames", 20))
    names = {}
    for t in threading.enumerate():
        names[t.ident] = t
    out = []
    current = threading.get_ident()
    for ident, top in sorted(sys._current_frames().items()):
        t = names.get(ident)
        if t is not None and (getattr(t, "is_pydev_daemon_thread", False) or t.name.startswith(("pydevd.", "debugpy"))):
            continue
        user, raw = _thread_frames(top, ident == current, t is not None)
        if not user:
            continue
        holds, waits = _locks_of(user)
        view = {
            "ident": ident,
            "name": t.name if t is not None else "thread-%d" % ident,
            "daemon": bool(t.daemon) if t is not None else None,
            "total_frames": len(user),
            "frames": [],
        }
        waiting = _waiting(user, raw)
        if waiting is not None:
            view["waiting"] = waiting
        if holds:
            view["holds"] = holds
        if waits is not None:
            view["waits_for"] = waits
        for frame in user[:max_frames]:
            if budget.left <= 0:
                break
            view["frames"].append(_frame_view(frame, budget, True))
            budget.left -= 80  # the frame's own line (function, file, line) counts too
        if len(user) > len(view["frames"]):
            view["frames_truncated"] = len(user) - len(view["frames"])
            if len(view["frames"]) < min(len(user), max_frames):
                budget.cut += 1
        out.append(view)
    return out


def _all_tasks():
    tasks_mod = sys.modules.get("asyncio.tasks")
    if tasks_mod is None:
        return []
    found = []
    for name in ("_scheduled_tasks", "_all_tasks"):
        pool = getattr(tasks_mod, name, None)
        if pool is not None:
            found.extend(list(pool))
    eager = getattr(tasks_mod, "_eager_tasks", None)
    if eager:
        found.extend(list(eager))
    return found


def _tasks(budget):
    out = []
    loops = {}
    for task in _all_tasks()[:200]:
        try:
            if task.done():
                continue
            view = {"name": task.get_name(), "coro": getattr(task.get_coro(), "__qualname__", "?")}
            stack = task.get_stack(limit=1)
            if stack:
                f = stack[-1]
                view["at"] = "%s:%d %s" % (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
            waiter = getattr(task, "_fut_waiter", None)
            if waiter is not None:
                view["awaits"] = _cut(repr(waiter), 160)
            loop = task.get_loop()
            loops[id(loop)] = loop
            out.append(view)
        except Exception:
            continue
    loop_views = []
    for loop in loops.values():
        tid = getattr(loop, "_thread_id", None)
        loop_views.append(
            {"thread_ident": tid, "running": loop.is_running(), "ready": len(getattr(loop, "_ready", ()))}
        )
    return out, loop_views


def _process(top_n):
    facts = {"pid": os.getpid(), "threads": threading.active_count()}
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    facts["rss_bytes"] = int(line.split()[1]) * 1024
    except Exception:
        pass
    try:
        facts["open_files"] = len(os.listdir("/proc/self/fd"))
    except Exception:
        pass
    counts = collections.Counter()
    big = []
    for obj in gc.get_objects():
        kind = type(obj)
        counts[
            "%s.%s" % (kind.__module__, kind.__qualname__) if kind.__module__ != "builtins" else kind.__qualname__
        ] += 1
        if kind is dict or kind is list or kind is set or kind is collections.deque:
            size = len(obj)
            if size >= 1000:
                big.append((size, id(obj), kind.__name__))
    facts["gc_objects"] = sum(counts.values())
    facts["gc_top"] = dict(counts.most_common(top_n))
    facts["gc_counts"] = list(gc.get_count())
    big.sort(reverse=True)
    facts["largest"] = _name_containers(big[:10])
    return facts


_CONTAINERS = (dict, list, set, collections.deque)


def _name_containers(big):
    """The largest containers, named where a module global (or a global's attribute) holds them.

    CPython does not track dicts of plain strings and numbers in gc, so module globals are walked too.
    """
    found = {ident: [size, kind, None] for size, ident, kind in big}

    def see(value, name):
        if type(value) in _CONTAINERS:
            size = len(value)
            if size >= 1000:
                entry = found.setdefault(id(value), [size, type(value).__name__, None])
                if entry[2] is None:
                    entry[2] = name

    for mod_name, module in list(sys.modules.items()):
        if mod_name.startswith(("_debugrelay", "pydevd", "_pydev", "debugpy")):
            continue
        space = getattr(module, "__dict__", None)
        if type(space) is not dict:
            continue
        for var, value in list(space.items()):
            see(value, "%s.%s" % (mod_name, var))
            inner = None if issubclass(type(value), type(sys)) else _instance_dict(value)
            if type(inner) is dict:
                for attr, sub in list(inner.items()):
                    see(sub, "%s.%s.%s" % (mod_name, var, attr))
    ranked = sorted(found.items(), key=lambda kv: -kv[1][0])[:10]
    return [{"id": ident, "type": kind, "len": size, "name": name} for ident, (size, kind, name) in ranked]


def _count_raises():
    """Count raised exceptions by type and line (sys.monitoring, Python 3.12+), for the exception-storm pattern."""
    mon = getattr(sys, "monitoring", None)
    if mon is None or _raise_state["on"]:
        return
    for tool in (5, 4, 3):
        try:
            mon.use_tool_id(tool, "debugrelay-raises")
        except ValueError:
            continue

        def on_raise(code, offset, exc):
            if _own_file(code.co_filename) or getattr(threading.current_thread(), "is_pydev_daemon_thread", False):
                return
            _raises["%s %s:%s" % (type(exc).__qualname__, os.path.basename(code.co_filename), code.co_name)] += 1

        mon.register_callback(tool, mon.events.RAISE, on_raise)
        mon.set_events(tool, mon.events.RAISE)
        _raise_state["on"] = True
        _raise_state["since"] = time.time()
        return


def snapshot(opts_json):
    """Every thread's stack with locals, asyncio tasks, locks and process facts, bounded (see ``opts``)."""
    tracer = sys.gettrace()
    settrace = _plain_settrace()
    settrace(None)  # the debugger's tracing would make the walk over every object ~10x slower
    try:
        return _snapshot(opts_json)
    finally:
        settrace(tracer)


def _plain_settrace():
    """``sys.settrace`` as it was before debugpy wrapped it: its wrapper writes a warning into the
    program's stderr on every call, which would show up as the program's output."""
    holder = getattr(sys.modules.get("pydevd_tracing"), "TracingFunctionHolder", None)
    return getattr(holder, "_original_tracing", None) or sys.settrace


def _snapshot(opts_json):
    try:
        opts = json.loads(opts_json)
        budget = _Budget(opts)
        started = time.time()
        data = {"taken_at": started, "python": sys.version.split()[0]}
        data["threads"] = _threads(opts, budget)
        tasks, loops = _tasks(budget)
        data["tasks"] = tasks
        data["loops"] = loops
        data["process"] = _process(int(opts.get("gc_top", 15)))
        _count_raises()
        if _raise_state["on"]:
            data["raises"] = {
                "since": _raise_state["since"],
                "counts": dict(_raises.most_common(10)),
                "total": sum(_raises.values()),
            }
        if budget.cut:
            data["truncated"] = {"values_cut": budget.cut, "reason": "max_bytes reached"}
        data["collect_ms"] = round((time.time() - started) * 1000, 1)
        return json.dumps(data, default=str)
    except Exception as exc:
        return json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)})


def row(frame_locals, frame_globals, spec_hex):
    """One capture-point row: each expression's bounded value (or its error), or every local for ``locals``.

    ``spec_hex`` is the hex of a JSON object (expressions and bounds): a logpoint message cannot hold braces.
    """
    try:
        opts = json.loads(bytes.fromhex(spec_hex).decode())
        expressions = opts.get("expressions", [])
        budget = _Budget(opts)
        values = {}
        for expr in expressions:
            if expr == "locals":
                for name, value in list(frame_locals.items()):
                    if not (name.startswith("__") and name.endswith("__")):
                        values[name] = _render(value, budget, 1)
                continue
            try:
                values[expr] = _render(eval(expr, frame_globals, frame_locals), budget, 1)
            except Exception as exc:
                values[expr] = {"error": "%s: %s" % (type(exc).__name__, _cut(str(exc), 120))}
        text = json.dumps({"t": time.time(), "thread": threading.current_thread().name, "values": values}, default=str)
        if len(text) > budget.left:
            cut = {k: "... cut: the row was %d bytes" % len(text) for k in values}
            text = json.dumps({"t": time.time(), "thread": threading.current_thread().name, "values": cut})
    except Exception as exc:
        text = json.dumps({"error": "%s: %s" % (type(exc).__name__, exc)})
    return text
