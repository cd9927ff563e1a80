"""Frame lifetime traces: what each call of a chosen function did, recorded inside the debug target.

An agent that debugs a program through the relay wants to know which call of a function went wrong
and where, without stepping through ten thousand good calls. For every call of a traced function
this module records the arguments on entry, what each line run changed in the locals, the lines run,
and the value returned or the exception raised (and on which line). Loops are folded as they run
(one item per loop: iterations, per-line counts with the first and last changes, the iterations
where a different branch was taken) and only the newest ``keep`` calls of a trace are kept, so a
million calls, or one call with a million iterations, keep memory flat.

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
import reprlib
import sys
import threading
import time

TRACES_ENV = "DEBUGRELAY_TRACES"
SOCKET_ENV = "DEBUGRELAY_TRACE_SOCKET"
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


# ---------------------------------------------------------------------------------------------- reprs


class _Repr(reprlib.Repr):
    """reprlib's bounds, without sorting a huge dict or set, and a failing ``__repr__`` named as such."""

    def repr_dict(self, x, level):
        n = len(x)
        if n == 0:
            return "{}"
        if level <= 0:
            return "{...}"
        pieces = []
        for key in itertools.islice(x, self.maxdict):
            pieces.append("%s: %s" % (self.repr1(key, level - 1), self.repr1(x[key], level - 1)))
        if n > self.maxdict:
            pieces.append("...")
        return "{%s}" % (", ".join(pieces),)

    def _unsorted(self, x, level, left, right, empty):
        n = len(x)
        if n == 0:
            return empty
        if level <= 0:
            return left + "..." + right
        pieces = [self.repr1(item, level - 1) for item in itertools.islice(x, self.maxset)]
        if n > self.maxset:
            pieces.append("...")
        return left + ", ".join(pieces) + right

    def repr_set(self, x, level):
        return self._unsorted(x, level, "{", "}", "set()")

    def repr_frozenset(self, x, level):
        return self._unsorted(x, level, "frozenset({", "})", "frozenset()")

    def repr_instance(self, x, level):
        try:
            text = repr(x)
        except Exception:
            return "<%s object (repr failed)>" % (_type_name(x),)
        if not isinstance(text, str):
            return "<%s object (repr failed)>" % (_type_name(x),)
        return _cut(text, self.maxother)


def _type_name(x):
    try:
        return type(x).__name__
    except Exception:
        return "?"


_reprs = _Repr()
_reprs.maxlevel = 2
_reprs.maxtuple = 6
_reprs.maxlist = 6
_reprs.maxarray = 6
_reprs.maxdict = 6
_reprs.maxset = 6
_reprs.maxfrozenset = 6
_reprs.maxdeque = 6
_reprs.maxstring = 60
_reprs.maxlong = 40
_reprs.maxother = 80


def _cut(text, limit):
    if len(text) > limit:
        return text[: limit - 3] + "..."
    return text


def _brepr(value, limit=ARG_CHARS):
    t = type(value)
    if t is int or t is bool or t is float or value is None:  # their own repr, short: no bounds to apply
        text = repr(value)
        if len(text) <= limit:
            return text
    elif t is str and len(value) <= 40:
        return repr(value)
    try:
        text = _reprs.repr(value)
    except Exception:
        text = "<%s object (repr failed)>" % (_type_name(value),)
    return _cut(text, limit)


_SCALARS = frozenset([int, float, str, bytes, bool, type(None), complex])


def _immutable(value):
    t = type(value)
    if t in _SCALARS:
        return True
    if t is tuple or t is frozenset:
        if len(value) > 8:
            return False
        return all(type(item) in _SCALARS for item in value)
    return False


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
        for name in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                import sysconfig

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
    thread = threading._active.get(_get_ident())  # what current_thread() reads, without its fallbacks
    if thread is None:
        return threading.current_thread().name
    return thread.name


def _key(qualname):
    return qualname.replace(".<locals>", "")


# ---------------------------------------------------------------------------------------------- state


class _Trace(object):
    __slots__ = ("id", "file", "qualname", "key", "keep", "callees", "ring", "total", "dropped", "pushed")

    def __init__(self, spec):
        self.id = str(spec["id"])
        self.file = _norm(str(spec["file"]))
        self.qualname = str(spec["qualname"])
        self.key = _key(self.qualname)
        self.keep = max(1, int(spec.get("keep") or 1000))
        self.callees = bool(spec.get("callees", False))
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


class _Loop(object):
    __slots__ = ("h", "end", "iterations", "stats", "sets", "more", "runs")

    def __init__(self, h, end):
        self.h = h
        self.end = end
        self.iterations = 0
        self.stats = {}  # line -> [count, first, last]
        self.sets = {}  # frozenset(lines) -> [count, [first 10 iteration numbers]]
        self.more = 0
        self.runs = 0

    def run(self, line, changed):
        stat = self.stats.get(line)
        if stat is None:
            self.stats[line] = [1, changed, changed]
        else:
            stat[0] += 1
            stat[2] = changed
        self.runs += 1

    def absorb_stats(self, other):
        for line, stat in sorted(other.stats.items()):
            mine = self.stats.get(line)
            if mine is None:
                self.stats[line] = list(stat)
            else:
                mine[0] += stat[0]
                mine[2] = stat[2]
        self.runs += other.runs

    def iteration(self, lines):
        self.iterations += 1
        key = frozenset(lines)
        got = self.sets.get(key)
        if got is None:
            if len(self.sets) >= MAX_SETS:
                self.more += 1
                return
            got = self.sets[key] = [0, []]
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
            if other:
                out["other"] = other
        if self.more:
            out["other_cut"] = self.more
        return out


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
        loop.iteration(lines)
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
        for name in params:
            if name in loc:
                value = loc[name]
                text = _brepr(value)
                args[name] = text
                snap[name] = (value, None) if _immutable(value) else (None, text)
        for name, value in loc.items():
            if name not in snap:
                snap[name] = (value, None) if _immutable(value) else (None, _brepr(value))
        self.args = args
        self.snap = snap
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
        for name, value in frame.f_locals.items():
            prev = old.get(name)
            if _immutable(value):
                if prev is not None and prev[1] is None:
                    before = prev[0]
                    if before is value:
                        new[name] = prev
                        continue
                    t = type(value)
                    if type(before) is t and t in _SCALARS and before == value:
                        new[name] = prev
                        continue
                new[name] = (value, None)
                text = _brepr(value)
                same_type = prev is not None and prev[1] is None and type(prev[0]) is type(value)
                if same_type and _brepr(prev[0]) == text:
                    continue
            else:
                text = _brepr(value)
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
        return changed

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
    """A traced frame starts (or resumes): answers its call."""
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
            call.raised = _cut("%s: %s" % (_type_name(exc), _safe_str(exc)), VALUE_CHARS)
            call.raised_line = line
        else:
            call.returned = _brepr(returned, VALUE_CHARS)
        _live.pop(id(frame), None)
        _pop(_stack(), call)
        call.close()
        if _state["sock"] is not False and (_state["child"] or time.monotonic() - _state["last_push"] >= PUSH_EVERY):
            _push(False)
    except Exception:
        pass


def _suspend(call):
    _pop(_stack(), call)


def _safe_str(exc):
    try:
        text = str(exc)
    except Exception:
        return "<str failed>"
    return _cut(text, VALUE_CHARS)


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
    for tool in (4, 3, 1):
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
    code = getattr(obj, "__code__", None)
    if code is None:
        func = getattr(obj, "__func__", None)
        code = getattr(func, "__code__", None)
    if code is None and isinstance(obj, type):
        init = obj.__dict__.get("__init__")
        code = getattr(init, "__code__", None)
    if code is not None and type(code).__name__ == "code":
        return code
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


_FunctionType = type(_cut)


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
    except Exception:
        pass


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
            if os.environ.get(TRACES_ENV):
                os.environ.setdefault("PYDEVD_LOAD_NATIVE_LIB", "0")
            _install_settrace()
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
