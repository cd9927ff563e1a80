"""Frame lifetime traces (``_boot/_debugrelay_trace.py``) in real programs, one subprocess each, on every
interpreter present among 3.11 (settrace chaining), 3.12 and 3.13 (sys.monitoring)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

BOOT = Path(__file__).resolve().parents[2] / "src" / "debugrelay" / "_boot" / "_debugrelay_trace.py"


def _pyenv_root() -> Path:
    root = os.environ.get("PYENV_ROOT")
    if root:
        return Path(root)
    try:
        out = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True, timeout=30)
        return Path(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return Path.home() / ".pyenv"


def _interpreters() -> list[Any]:
    found: dict[str, str] = {}
    if sys.version_info[:2] == (3, 11):
        found["3.11"] = sys.executable
    versions = _pyenv_root() / "versions"
    for minor in ("3.11", "3.12", "3.13"):
        if minor in found:
            continue
        candidates = sorted(
            versions.glob(minor + ".*/bin/python3"),
            key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parts[-3].split(".")],
        )
        candidates = [c for c in candidates if c.parts[-3].replace(".", "").isdigit()]
        if candidates:
            found[minor] = str(candidates[-1])
    return [pytest.param(path, id=minor) for minor, path in sorted(found.items())]


PYTHONS = _interpreters()

PRELUDE = f"""
import importlib.util as _ilu, json as _json, sys as _sys
_spec = _ilu.spec_from_file_location("_debugrelay_trace", {str(BOOT)!r})
trace = _ilu.module_from_spec(_spec)
_sys.modules["_debugrelay_trace"] = trace
_spec.loader.exec_module(trace)
trace.install()

def _add(tid, qualname, **extra):
    spec = dict(id=tid, file=__file__, qualname=qualname)
    spec.update(extra)
    return _json.loads(trace.add(_json.dumps(spec)))

def _finish(path):
    with open(path, "w") as out:
        out.write(trace.dump("{{}}"))
"""


def run(  # noqa: PLR0917
    python: str,
    tmp_path: Path,
    body: str,
    env: dict[str, str] | None = None,
    drain: socket.socket | None = None,
    received: list[bytes] | None = None,
    timeout: float = 600,
) -> tuple[dict[str, Any], str]:
    """Run PRELUDE + body as a script in tmp_path; answers (its dump, its stdout). With drain, the
    datagrams that socket receives while the program runs and once it has ended go to received; a
    program still running after ``timeout`` seconds (a deadlock) fails the test."""
    script = tmp_path / "prog.py"
    dumped = tmp_path / "dump.json"
    script.write_text(PRELUDE + textwrap.dedent(body) + f"\n_finish({str(dumped)!r})\n")
    full_env = dict(os.environ)
    full_env.pop("DEBUGRELAY_TRACES", None)
    full_env.pop("DEBUGRELAY_TRACE_SOCKET", None)
    full_env.update(env or {})
    if drain is None:
        done = subprocess.run(
            [python, str(script)],
            check=False,
            capture_output=True,
            text=True,
            env=full_env,
            cwd=tmp_path,
            timeout=timeout,
        )
    else:
        assert received is not None
        with subprocess.Popen(
            [python, str(script)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=full_env,
            cwd=tmp_path,
        ) as proc:
            drain.settimeout(0.2)
            while True:
                try:
                    received.append(drain.recv(70000))
                except TimeoutError:
                    if proc.poll() is not None:
                        break
            drain.setblocking(False)
            while True:
                try:
                    received.append(drain.recv(70000))
                except BlockingIOError:
                    break
            stdout, stderr = proc.communicate(timeout=600)
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    return json.loads(dumped.read_text()), done.stdout


def calls(dump: dict[str, Any], tid: str = "t1") -> list[dict[str, Any]]:
    return list(dump["traces"][tid]["calls"])


def line_of(tmp_path: Path, text: str) -> int:
    """The line number in prog.py of the first line containing text."""
    for number, line in enumerate((tmp_path / "prog.py").read_text().splitlines(), 1):
        if text in line:
            return number
    raise AssertionError(text)


@pytest.mark.parametrize("python", PYTHONS)
def test_the_one_wrong_call_among_ten_thousand_shows_the_line_that_went_wrong(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        assert _add("t1", "price", keep=10000) == {"found": True}   # its code is loaded with the module's

        def price(i):
            base = i * 2
            if i == 7777:
                base = base - 1   # the bug
            total = base + 0
            return total

        for i in range(10000):
            price(i)
        """,
    )
    got = calls(dump)
    assert dump["traces"]["t1"]["total"] == 10000 and len(got) == 10000
    wrong = [c for c in got if c["returned"] != str(2 * int(c["args"]["i"]))]
    assert len(wrong) == 1
    call = wrong[0]
    assert call["args"] == {"i": "7777"} and call["returned"] == "15553"
    bug = line_of(tmp_path, "# the bug")
    assert {"line": bug, "changed": {"base": "15553"}} in call["events"]
    assert call["lines"] == [bug - 2, bug - 1, bug, bug + 1, bug + 2]
    assert call["function"] == "price" and call["line"] == bug - 3 and call["running"] is False
    assert call["file"] == os.path.realpath(tmp_path / "prog.py")
    assert call["call_id"] == f"{dump['pid']}.{call['seq']}"
    assert len(json.dumps(call)) < 2048
    good = got[0]
    assert bug not in good["lines"] and all(e.get("line") != bug for e in good["events"])


@pytest.mark.parametrize("python", PYTHONS)
def test_a_raise_says_what_and_where(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        def check(n):
            doubled = n * 2
            if n > 3:
                raise ValueError("bad value %d" % n)   # raises
            return doubled

        def outer(n):
            return check(n)   # calls

        _add("t1", "check")
        _add("t2", "outer")
        for n in (1, 5):
            try:
                outer(n)
            except ValueError:
                pass
        """,
    )
    ok, bad = calls(dump)
    assert ok["returned"] == "2" and "raised" not in ok
    assert bad["raised"] == "ValueError: bad value 5" and "returned" not in bad
    assert bad["raised_line"] == line_of(tmp_path, "# raises")
    _, out_bad = calls(dump, "t2")
    assert out_bad["raised"] == "ValueError: bad value 5"
    assert out_bad["raised_line"] == line_of(tmp_path, "# calls")
    assert bad["parent"] == out_bad["call_id"] and out_bad["callees"] == [bad["call_id"]]


@pytest.mark.parametrize("python", PYTHONS)
def test_recursion_links_each_call_to_its_caller(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        def fact(n):
            if n <= 1:
                return 1
            return n * fact(n - 1)

        _add("t1", "fact")
        print(fact(5))
        """,
    )
    got = {c["args"]["n"]: c for c in calls(dump)}
    assert sorted(got) == ["1", "2", "3", "4", "5"]
    assert got["5"]["parent"] is None and got["5"]["returned"] == "120"
    for n in range(1, 5):
        child, parent = got[str(n)], got[str(n + 1)]
        assert child["parent"] == parent["call_id"] and parent["callees"] == [child["call_id"]]
    assert got["1"]["callees"] == []


@pytest.mark.parametrize("python", PYTHONS)
def test_a_method_and_nested_functions(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        class Cart:
            def __init__(self):
                self.items = []

            def add(self, item, *more, qty=1, **extra):
                self.items.append((item, qty))
                return len(self.items)

        def outer(x):
            def inner(y):
                z = y + 1
                return z
            return inner(x) + inner(x * 10)

        cart = Cart()
        assert _add("t1", "Cart.add") == {"found": True}
        assert _add("t2", "outer.<locals>.inner") == {"found": True}
        assert _add("t3", "outer.inner") == {"found": True}
        cart.add("apple", qty=3)
        outer(1)
        """,
    )
    (method,) = calls(dump)
    assert method["function"] == "Cart.add" and method["returned"] == "1"
    assert list(method["args"]) == ["self", "item", "qty", "more", "extra"]
    assert method["args"]["item"] == "'apple'" and method["args"]["qty"] == "3" and method["args"]["more"] == "()"
    # the same code under two ids: the newest spec for it wins; one of them holds both calls
    nested = calls(dump, "t2") + calls(dump, "t3")
    assert sorted(c["returned"] for c in nested) == ["11", "2"]
    assert {c["function"] for c in nested} == {"outer.<locals>.inner"}


@pytest.mark.parametrize("python", PYTHONS)
def test_a_generator_and_a_coroutine_are_one_call_each(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        import asyncio

        def squares(n):
            total = 0
            for i in range(n):
                total += i * i
                yield i * i
            return total

        async def fetch(n):
            got = []
            for i in range(n):
                await asyncio.sleep(0)
                got.append(i)
            return got

        _add("t1", "squares")
        _add("t2", "fetch")
        print(list(squares(4)))
        print(asyncio.run(fetch(3)))
        """,
    )
    (gen,) = calls(dump)
    assert gen["args"] == {"n": "4"} and gen["returned"] == "14" and gen["running"] is False
    (coro,) = calls(dump, "t2")
    assert coro["args"] == {"n": "3"} and coro["returned"] == "[0, 1, 2]"
    assert line_of(tmp_path, "got.append(i)") in coro["lines"]


@pytest.mark.parametrize("python", PYTHONS)
def test_two_threads(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        import threading

        def work(k):
            acc = 0
            for i in range(k):
                acc += i
            return acc

        _add("t1", "work")
        threads = [threading.Thread(target=work, args=(k,), name="worker-%d" % k) for k in (10, 20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        work(3)
        """,
    )
    got = {c["thread"]: c for c in calls(dump)}
    assert set(got) == {"worker-10", "worker-20", "MainThread"}
    assert got["worker-10"]["returned"] == "45" and got["worker-20"]["returned"] == "190"
    assert all(c["parent"] is None for c in got.values())


@pytest.mark.parametrize("python", PYTHONS)
def test_a_million_calls_keep_the_newest_and_memory_flat(python: str, tmp_path: Path) -> None:
    dump, out = run(
        python,
        tmp_path,
        """
        import resource

        def inc(x):
            return x + 1

        _add("t1", "inc", keep=1000)
        for i in range(20000):
            inc(i)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        for i in range(980000):
            inc(i)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("grew_kb", after - before)
        """,
    )
    t1 = dump["traces"]["t1"]
    assert t1["total"] == 1_000_000 and t1["dropped"] == 999_000 and len(t1["calls"]) == 1000
    assert t1["calls"][-1]["args"] == {"x": "979999"} and t1["calls"][-1]["returned"] == "980000"
    grew_kb = int(out.split()[-1])
    assert grew_kb < 50 * 1024


@pytest.mark.parametrize("python", PYTHONS)
def test_a_loop_is_folded_with_its_branches(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        def tally(xs):
            total = 0
            for x in xs:                 # head
                if x % 100 == 42:        # test
                    total += 1000        # rare
                else:
                    total += 1           # usual
            return total

        _add("t1", "tally")
        tally(list(range(500)))
        """,
    )
    (call,) = calls(dump)
    head, test, rare, usual = (line_of(tmp_path, "# " + w) for w in ("head", "test", "rare", "usual"))
    loops = [e for e in call["events"] if "loop" in e]
    assert len(loops) == 1
    loop = loops[0]
    assert loop["loop"] == [head, usual] and loop["iterations"] == 500
    stats = {s["line"]: s for s in loop["lines"]}
    assert stats[test]["count"] == 500 and stats[head]["count"] == 501
    assert stats[rare]["count"] == 5 and stats[usual]["count"] == 495
    assert stats[head]["first"] == {"x": "0"}
    assert stats[usual]["first"] == {"total": "1"} and stats[usual]["last"] == {"total": str(495 + 5000)}
    assert stats[rare]["first"] == {"total": "1042"}
    assert loop["usual"] == [head, test, usual]
    first_rare = [
        {"line": head, "changed": {"x": "42"}},
        {"line": test, "changed": {}},
        {"line": rare, "changed": {"total": "1042"}},
    ]
    assert loop["other"] == [
        {"lines": [head, test, rare], "iterations": [43, 143, 243, 343, 443], "count": 5, "run": first_rare}
    ]
    assert "far" not in loop  # a total that grows is no value far off
    assert call["returned"] == str(495 + 5000)
    assert len(json.dumps(call)) < 2048


@pytest.mark.parametrize("python", PYTHONS)
def test_writes_to_self_and_to_the_arguments_items_are_recorded_as_locals_are(python: str, tmp_path: Path) -> None:
    dump, out = run(
        python,
        tmp_path,
        """
        class Cart:
            def __init__(self):
                self.name, self.a, self.b, self.c, self.d, self.e = "cart", 1, 2, 3, 4, 5
                self.items = []
                self.total = 7.25

            def __eq__(self, other):          # never run by the recorder
                print("eq ran")
                return NotImplemented

            def add(self, price, quantity):
                self.items.append(price)              # append
                self.total += price * quantity        # total
                del self.e                            # forget
                return self.total

        def fill(arr, d, big):
            arr[2] = 9                 # item
            arr.append(4)              # grow
            d["k"] = 5                 # key
            big.insert(0, -1)          # shift
            arr = [0]                  # rebind
            arr[0] = 1                 # after
            return len(d)

        def show(cart):
            return 1

        _add("t1", "Cart.add")
        _add("t2", "fill")
        _add("t3", "show")
        Cart().add(0.15, 2)
        fill([1, 2, 3], {"a": 1}, list(range(10)))
        wide = Cart()
        wide.name = "a cart with a long name"
        show(wide)
        """,
    )
    (show,) = calls(dump, "t3")
    assert show["args"]["cart"].endswith(", e=5 <cut>"), show  # cut before a mark, never inside one
    assert "eq ran" not in out
    (add,) = calls(dump, "t1")
    at = {e["line"]: e["changed"] for e in add["events"]}
    assert at[line_of(tmp_path, "# append")] == {"self.items": "[0.15]"}
    assert at[line_of(tmp_path, "# total")] == {"self.total": "7.25 -> 7.55"}
    assert at[line_of(tmp_path, "# forget")] == {"self.e": "<deleted>"}
    assert add["args"]["self"].startswith("<Cart at 0x")
    (fill,) = calls(dump, "t2")
    at = {e["line"]: e["changed"] for e in fill["events"]}
    assert at[line_of(tmp_path, "# item")] == {"arr[2]": "3 -> 9"}
    assert at[line_of(tmp_path, "# grow")] == {"arr[3]": "4"}
    assert at[line_of(tmp_path, "# key")] == {"d['k']": "5"}
    assert at[line_of(tmp_path, "# shift")] == {"big": "[-1, 0, 1, 2, 3, 4, <cut: 5 more>]"}  # said whole
    assert at[line_of(tmp_path, "# rebind")] == {"arr": "[0]"}  # another object: a local's change
    assert at[line_of(tmp_path, "# after")] == {"arr[0]": "0 -> 1"}


@pytest.mark.parametrize("python", PYTHONS)
def test_a_folded_loop_keeps_whole_the_iteration_that_took_another_branch_or_wrote_a_far_off_value(
    python: str, tmp_path: Path
) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        def mirror(values):
            out = []
            for i, v in enumerate(values):     # head
                if v < 0:
                    v = -v                     # flip
                out.append(v * 2)
            return len(out)

        def tally(values):
            total = 0
            for v in values:                   # each
                step = v * 3
                total += step                  # add
            return total

        _add("t1", "mirror")
        _add("t2", "tally")
        data = [i % 7 for i in range(300)]
        data[172] = -5                         # the 173rd iteration takes the other branch
        mirror(data)
        data = [i % 5 + 10 for i in range(300)]
        data[172] = 9000                       # the 173rd iteration's value is far off the others
        tally(data)
        """,
    )
    ((loop,),) = ([e for e in c["events"] if "loop" in e] for c in calls(dump, "t1"))
    (other,) = loop["other"]
    assert other["iterations"] == [173] and other["count"] == 1
    head, flip = line_of(tmp_path, "# head"), line_of(tmp_path, "# flip")
    assert other["run"][0] == {"line": head, "changed": {"i": "172", "v": "-5"}}
    assert {"line": flip, "changed": {"v": "5"}} in other["run"]
    ((loop,),) = ([e for e in c["events"] if "loop" in e] for c in calls(dump, "t2"))
    assert "other" not in loop and loop["iterations"] == 300
    (far,) = loop["far"]
    each, add = line_of(tmp_path, "# each"), line_of(tmp_path, "# add")
    assert (far["iteration"], far["line"], far["name"], far["value"]) == (173, each, "v", "9000")
    assert {"line": add, "changed": {"total": str(sum(i % 5 + 10 for i in range(172)) * 3 + 27000)}} in far["run"]


@pytest.mark.parametrize("python", PYTHONS)
def test_a_long_loop_in_one_call_stays_bounded(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        def spin(n):
            a = b = 0
            for i in range(n):
                for j in range(3):
                    if (i + j) % 1000 == 0:
                        a += 1
                    b += j
            return a, b

        _add("t1", "spin")
        spin(100000)
        """,
    )
    (call,) = calls(dump)
    assert call["returned"] == "(300, 300000)"
    (loop,) = [e for e in call["events"] if "loop" in e]
    assert loop["iterations"] == 100000
    assert len(json.dumps(call)) < 4096


@pytest.mark.parametrize("python", PYTHONS)
def test_callees_are_recorded_under_the_trace(python: str, tmp_path: Path) -> None:
    dump, _ = run(
        python,
        tmp_path,
        """
        import json

        def helper(v):
            w = v * 3
            return w

        class Box:
            def __init__(self, v):
                self.v = v

        def main(n):
            a = helper(n)
            b = Box(a)
            text = json.dumps([a])   # the standard library: not recorded
            return b.v + len(text)

        _add("t1", "main", callees=True)
        main(2)
        helper(5)   # not called from main: not recorded
        """,
    )
    got = calls(dump)
    main = next(c for c in got if c["function"] == "main")
    others = [c for c in got if c is not main]
    assert sorted(c["function"] for c in others) == ["Box.__init__", "helper"]
    helper = next(c for c in others if c["function"] == "helper")
    assert helper["args"] == {"v": "2"} and helper["returned"] == "6" and helper["parent"] == main["call_id"]
    assert main["callees"] == [c["call_id"] for c in sorted(others, key=lambda c: c["seq"])]
    assert main["returned"] == "9"


REPRS_BODY = """
import os

class Counted:
    calls = 0

    def __init__(self, name):
        self.name = name
        self.size = 3

    def __repr__(self):
        Counted.calls += 1
        return "Counted(%r)" % self.name

def work(obj, n):
    total = n * 2
    return total

if os.environ.get("TRACE_IT"):
    _add("t1", "work", reprs=bool(os.environ.get("REPRS")))
counted = Counted("a")
print(work(counted, 1), work(counted, 2), work([counted, {"k": counted}], 3))
counted.size = 4
print(work(counted, 4), "repr calls:", Counted.calls)
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_a_counting_repr_is_not_called_by_default_and_once_per_value_when_asked(python: str, tmp_path: Path) -> None:
    _, plain = run(python, tmp_path, REPRS_BODY)
    dump, traced = run(python, tmp_path, REPRS_BODY, env={"TRACE_IT": "1"})
    assert traced == plain and plain.endswith("repr calls: 0\n")
    shown = [c["args"]["obj"] for c in calls(dump)]
    assert re.fullmatch(r"<Counted at 0x[0-9a-f]+: name='a', size=3>", shown[0]), shown
    assert shown[1] == shown[0] and shown[3] == shown[0].replace("size=3", "size=4")
    assert shown[2].startswith("[<Counted at 0x") and "Counted(" not in "".join(shown)

    dump, asked = run(python, tmp_path, REPRS_BODY, env={"TRACE_IT": "1", "REPRS": "1"})
    assert asked == plain.replace("repr calls: 0", "repr calls: 2")  # once per value: before and after the change
    shown = [c["args"]["obj"] for c in calls(dump)]
    assert shown == ["Counted('a')", "Counted('a')", "[Counted('a'), {'k': Counted('a')}]", "Counted('a')"]


LOCK_BODY = """
import os, threading

lock = threading.Lock()

class Guarded:
    def __repr__(self):
        with lock:   # the lock its caller holds
            return "Guarded()"

def work(obj, n):
    total = n * 2
    return total

if os.environ.get("TRACE_IT"):
    _add("t1", "work", reprs=bool(os.environ.get("REPRS")))
with lock:
    print("guarded", work(Guarded(), 1))
print("again", work(Guarded(), 2))
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_a_repr_taking_a_lock_the_caller_holds_does_not_deadlock_the_program(python: str, tmp_path: Path) -> None:
    _, plain = run(python, tmp_path, LOCK_BODY)
    dump, traced = run(python, tmp_path, LOCK_BODY, env={"TRACE_IT": "1"}, timeout=300)
    assert traced == plain == "guarded 2\nagain 4\n"
    assert all(re.fullmatch(r"<Guarded at 0x[0-9a-f]+>", c["args"]["obj"]) for c in calls(dump))

    dump, asked = run(python, tmp_path, LOCK_BODY, env={"TRACE_IT": "1", "REPRS": "1"}, timeout=300)
    assert asked == plain
    first, second = (c["args"]["obj"] for c in calls(dump))
    assert first.startswith("<repr still running after") and "<Guarded at 0x" in first, first
    assert second.startswith("<repr not run: it once ran past") and "<Guarded at 0x" in second, second


WAITING_BODY = """
import os, threading

go_on = threading.Event()

class Waiting:
    def __repr__(self):
        go_on.wait()   # until the program has gone on past the traced call
        return "Waiting()"

def work(obj, n):
    total = n * 2
    return total

if os.environ.get("TRACE_IT"):
    _add("t1", "work", reprs=bool(os.environ.get("REPRS")))
print("first", work(Waiting(), 1))
go_on.set()
print("second", work(Waiting(), 2))
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_a_repr_that_does_not_return_does_not_hold_the_program(python: str, tmp_path: Path) -> None:
    _, plain = run(python, tmp_path, WAITING_BODY)
    _, traced = run(python, tmp_path, WAITING_BODY, env={"TRACE_IT": "1"}, timeout=300)
    assert traced == plain == "first 2\nsecond 4\n"
    dump, asked = run(python, tmp_path, WAITING_BODY, env={"TRACE_IT": "1", "REPRS": "1"}, timeout=300)
    assert asked == plain
    first, second = (c["args"]["obj"] for c in calls(dump))
    assert first.startswith("<repr still running after") and second.startswith("<repr not run: it once ran past")


UNTOUCHED_BODY = """
import _thread, gc, os, sys, threading, warnings, weakref

seen = []   # every call of the program's own code
unraisable = []
sys.unraisablehook = lambda u: unraisable.append(u.exc_type.__name__)
warnings.simplefilter("always")
caught = []
warnings.showwarning = lambda message, *rest, **more: caught.append(str(message))

class Key:
    def __hash__(self):
        seen.append("hash")
        return 1

    def __eq__(self, other):
        seen.append("eq")
        return self is other

class Sneaky:
    def __init__(self):
        self.name = "s"

    def __repr__(self):
        seen.append("repr")
        return "Sneaky()"

    def __str__(self):
        seen.append("str")
        return "sneaky"

    def __getattr__(self, name):
        seen.append("getattr " + name)
        raise AttributeError(name)

    def __len__(self):
        seen.append("len")
        return 1

    def __call__(self, x):
        return x

    @property
    def size(self):
        seen.append("property")
        return 1

    @property
    def __class__(self):
        seen.append("__class__")
        return Sneaky

class Many(list):
    def __len__(self):
        seen.append("list len")
        return 0

    def __iter__(self):
        seen.append("list iter")
        return iter(())

    def __repr__(self):
        seen.append("list repr")
        return "Many()"

class Oops(Exception):
    def __str__(self):
        seen.append("exception str")
        return "oops"

def helper(v):
    return v

made = []   # classes made in a call: freed once the program lets them go

def work(obj, n):
    kind = type("Made", (), {})
    made.append(weakref.ref(kind))
    thing = kind()
    table = {Key(): obj}
    many = Many([obj, n])
    got = obj(n)
    helper(got)
    if n > 1:
        raise Oops(obj)
    return many, table

if os.environ.get("TRACE_IT"):
    _add("t1", "work", callees=True)
modules = set(sys.modules)
for n in range(3):
    try:
        work(Sneaky(), n)
    except Oops:
        pass
done = threading.Event()
inside = []
def other():
    work(Sneaky(), 0)
    inside.append(len(threading.enumerate()))
    done.set()
_thread.start_new_thread(other, ())
done.wait()
print(seen)
print(inside, [t.name for t in threading.enumerate()], threading.Thread(target=print).name)
print(sorted(set(sys.modules) - modules), sys.gettrace(), unraisable, caught)
thing = kind = None
gc.collect()
print([alive() for alive in made])
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_recording_runs_none_of_the_programs_code_and_leaves_no_mark(python: str, tmp_path: Path) -> None:
    _, plain = run(python, tmp_path, UNTOUCHED_BODY)
    dump, traced = run(python, tmp_path, UNTOUCHED_BODY, env={"TRACE_IT": "1"})
    assert traced == plain
    assert plain.splitlines()[0] == str(["hash"] * 4)  # the program's own dict, nothing more
    got = [c for c in calls(dump) if c["function"] == "work"]
    assert [c["thread"] for c in got[:3]] == ["MainThread"] * 3
    assert "helper" in {c["function"] for c in calls(dump)}
    assert all(re.fullmatch(r"Thread \d+", c["thread"]) for c in got[3:])  # a thread started with _thread (3.12+)
    raised = got[2]
    assert re.fullmatch(r"Oops: <Sneaky at 0x[0-9a-f]+: name='s'>", raised["raised"]), raised["raised"]
    returned = got[0]["returned"]
    assert returned.startswith("(Many([<Sneaky at 0x") and ", 0]), {<Key at 0x" in returned, returned


TOOLS_BODY = """
import sys

sys.monitoring.use_tool_id(3, "the program's own")
sys.monitoring.use_tool_id(4, "the program's own too")

def work(n):
    return n

_add("t1", "work")
work(1)
print(sys.monitoring.get_tool(1), sys.monitoring.get_tool(2))
"""


@pytest.mark.parametrize("python", [p for p in PYTHONS if p.id != "3.11"])
def test_the_tracer_never_takes_the_coverage_or_profiler_tool_id(python: str, tmp_path: Path) -> None:
    _, out = run(python, tmp_path, TOOLS_BODY)
    assert out == "None None\n"  # a coverage tool started later still gets its id


OUTPUT_BODY = """
import os

class Odd:
    def __repr__(self):
        raise RuntimeError("no repr")

class Chatty:
    def __repr__(self):
        return "Chatty(%d)" % work(-1)[1]   # a traced function called by a repr: not recorded

def work(n):
    odd = Odd()
    talk = Chatty()
    big = list(range(100000))
    text = "x" * 10000
    if n > 0:
        print("work", n, sum(big[:n]))
    return [odd, len(text)]

if os.environ.get("TRACE_IT"):
    _add("t1", "work", reprs=bool(os.environ.get("REPRS")))
for n in range(3):
    print(work(n)[1])
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_the_program_prints_the_same_and_values_stay_bounded(python: str, tmp_path: Path) -> None:
    _, plain = run(python, tmp_path, OUTPUT_BODY)
    dump, traced = run(python, tmp_path, OUTPUT_BODY, env={"TRACE_IT": "1"})
    assert traced == plain
    got = calls(dump)
    assert [c["args"]["n"] for c in got] == ["0", "1", "2"]
    call = got[0]
    changes = {name: text for e in call["events"] for name, text in e.get("changed", {}).items()}
    assert re.fullmatch(r"<Odd at 0x[0-9a-f]+>", changes["odd"]) and re.fullmatch(
        r"<Chatty at 0x[0-9a-f]+>", changes["talk"]
    )
    assert changes["big"] == "[0, 1, 2, 3, 4, 5, <cut: 99994 more>]"
    assert changes["text"] == "'" + "x" * 52 + "'<cut: 9948 more chars>"
    assert re.fullmatch(r"\[<Odd at 0x[0-9a-f]+>, 10000\]", call["returned"])

    dump, asked = run(python, tmp_path, OUTPUT_BODY, env={"TRACE_IT": "1", "REPRS": "1"})
    assert asked == plain
    got = calls(dump)
    assert [c["args"]["n"] for c in got] == ["0", "1", "2"]  # the call a repr made is not recorded
    changes = {name: text for e in got[0]["events"] for name, text in e.get("changed", {}).items()}
    assert re.fullmatch(r"<repr raised RuntimeError> <Odd at 0x[0-9a-f]+>", changes["odd"]), changes["odd"]
    assert changes["talk"] == "Chatty(10000)"
    assert changes["big"] == "[0, 1, 2, 3, 4, 5, <cut: 99994 more>]"


CHAIN_BODY = """
import sys, threading

counts = {}

def debugger(frame, event, arg):   # the debugger's global tracer
    def local(frame, event, arg):
        if event == "line":
            key = frame.f_code.co_name
            counts[key] = counts.get(key, 0) + 1
        return local
    return local

def plain(n):
    a = n + 1
    b = a * 2
    return b

def traced(n):
    a = n + 1
    b = a * 2
    return b

_add("t1", "traced")
sys.settrace(debugger)
assert sys.gettrace() is debugger
plain(1)
traced(1)
sys.settrace(None)
assert sys.gettrace() is None
print(counts.get("plain"), counts.get("traced"))
threading.settrace(debugger)
t = threading.Thread(target=traced, args=(2,))
t.start()
t.join()
threading.settrace(None)
print(counts.get("traced"))
"""


def test_the_debuggers_tracer_still_gets_every_event_on_311(tmp_path: Path) -> None:
    pythons = [p.values[0] for p in PYTHONS if p.id == "3.11"]
    if not pythons:
        pytest.skip("no Python 3.11")
    dump, out = run(pythons[0], tmp_path, CHAIN_BODY)
    first, second = out.split("\n")[:2]
    assert first == "3 3" and second == "6"
    got = calls(dump)
    assert [c["returned"] for c in got] == ["4", "6"]
    assert got[1]["thread"] != "MainThread"


PUSH_BODY = """
import multiprocessing, os

def work(n):
    return n * 2

for n in range(3):
    work(n)

def child():
    work(100)
    work(101)

if __name__ == "__main__":
    p = multiprocessing.get_context("fork").Process(target=child)
    p.start()
    p.join()
    print("child", p.pid)
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_completed_calls_are_pushed_at_exit_and_from_a_forked_child(python: str, tmp_path: Path) -> None:
    name = "debugrelay-test-" + uuid.uuid4().hex
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    try:
        spec = [{"id": "t1", "file": str(tmp_path / "prog.py"), "qualname": "work"}]
        env = {"DEBUGRELAY_TRACES": json.dumps(spec), "DEBUGRELAY_TRACE_SOCKET": "@" + name}
        received: list[bytes] = []
        dump, out = run(python, tmp_path, PUSH_BODY, env=env, drain=sock, received=received)
        batches = []
        for data in received:
            assert data[:1] == b"T" and len(data) <= 60000
            batches.append(json.loads(data[1:]))
    finally:
        sock.close()
    child_pid = int(out.split()[-1])
    pushed: dict[int, list[dict[str, Any]]] = {}
    for batch in batches:
        pushed.setdefault(batch["pid"], []).extend(batch["traces"]["t1"]["calls"])
    parent = pushed[dump["pid"]]
    assert [c["returned"] for c in parent] == ["0", "2", "4"]
    assert len({c["call_id"] for c in parent}) == 3  # each call pushed once
    child = pushed[child_pid]
    assert [c["returned"] for c in child] == ["200", "202"]
    assert [c["call_id"] for c in child] == [f"{child_pid}.1", f"{child_pid}.2"]
    assert calls(dump)[-1]["returned"] == "4" and dump["traces"]["t1"]["total"] == 3


def test_many_calls_are_split_over_datagrams(tmp_path: Path) -> None:
    python = PYTHONS[0].values[0]
    name = "debugrelay-test-" + uuid.uuid4().hex
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    try:
        spec = [{"id": "t1", "file": str(tmp_path / "prog.py"), "qualname": "work", "keep": 300}]
        env = {"DEBUGRELAY_TRACES": json.dumps(spec), "DEBUGRELAY_TRACE_SOCKET": "@" + name}
        body = """
        def work(n):
            note = "n" * 50 + str(n)
            return note

        for n in range(300):
            work(n)
        """
        received: list[bytes] = []
        run(python, tmp_path, body, env=env, drain=sock, received=received)
        sizes, seen = [], []
        for data in received:
            sizes.append(len(data))
            seen.extend(c["seq"] for c in json.loads(data[1:])["traces"]["t1"]["calls"])
    finally:
        sock.close()
    assert len(sizes) > 1 and max(sizes) <= 60000
    assert sorted(seen) == list(range(1, 301))


@pytest.mark.parametrize("python", PYTHONS)
def test_dump_shows_a_running_call_and_remove_drops_a_trace(python: str, tmp_path: Path) -> None:
    dump, out = run(
        python,
        tmp_path,
        """
        def slow(n):
            seen = n + 1
            snapshot = _json.loads(trace.dump(_json.dumps({"after": {"t1": 0}})))
            print(_json.dumps(snapshot["traces"]["t1"]["calls"]))
            return seen

        _add("t1", "slow")
        _add("t2", "slow_not_there")
        slow(1)
        print(trace.remove("t2"), trace.remove("nope"))
        print(trace.add("not json"))
        """,
    )
    lines = out.splitlines()
    (running,) = json.loads(lines[0])
    assert running["running"] is True and running["args"] == {"n": "1"} and "returned" not in running
    assert {"line": line_of(tmp_path, "seen = n + 1"), "changed": {"seen": "2"}} in running["events"]
    assert lines[1] == '{"removed": true} {"removed": false}'
    assert json.loads(lines[2])["error"].startswith("JSONDecodeError")
    assert set(dump["traces"]) == {"t1"} and calls(dump)[0]["returned"] == "2"
    after = calls(dump)[0]["seq"]
    assert after == 1


@pytest.mark.parametrize("python", PYTHONS)
def test_a_function_of_a_module_not_imported_yet_is_picked_up_when_it_runs(python: str, tmp_path: Path) -> None:
    (tmp_path / "later.py").write_text("def helper(a, b=2):\n    c = a + b\n    return c\n")
    dump, out = run(
        python,
        tmp_path,
        f"""
        spec = dict(id="t1", file={str(tmp_path / "later.py")!r}, qualname="helper")
        print(trace.add(_json.dumps(spec)))
        _sys.path.insert(0, {str(tmp_path)!r})
        import later
        later.helper(1)
        later.helper(5, b=10)
        """,
    )
    assert out.splitlines()[0] == '{"found": false}'
    got = calls(dump)
    assert [c["returned"] for c in got] == ["3", "15"]
    assert got[1]["args"] == {"a": "5", "b": "10"} and got[1]["events"][0] == {"line": 2, "changed": {"c": "15"}}
    assert got[0]["file"] == os.path.realpath(tmp_path / "later.py")


DEBUGPY_BODY = """
import json, os, sys, threading
import _debugrelay_trace

def f(n):
    a = n + 1
    return a * 2

for i in range(3):
    f(i)
worker = threading.Thread(target=f, args=(10,), name="worker")
worker.start()
worker.join()
dump = json.loads(_debugrelay_trace.dump("{}"))
print(json.dumps([[c["returned"], c["thread"]] for c in dump["traces"]["t1"]["calls"]]))
print(type(sys.gettrace()).__name__)
print(sys.version_info[1])
print(os.environ.get("PYDEVD_LOAD_NATIVE_LIB"))
"""


@pytest.mark.parametrize("python", PYTHONS)
def test_under_debugpy_started_by_the_boot_path(python: str, tmp_path: Path) -> None:
    """The program as the keeper starts it: the boot directory's sitecustomize, then debugpy."""
    debugpy = pytest.importorskip("debugpy")
    script = tmp_path / "prog.py"
    script.write_text(DEBUGPY_BODY)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(BOOT.parent), str(Path(debugpy.__file__).parents[1])])
    env["DEBUGRELAY_TRACES"] = json.dumps([{"id": "t1", "file": str(script), "qualname": "f"}])
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    env.pop("DEBUGRELAY_TRACE_SOCKET", None)
    done = subprocess.run(
        [python, "-m", "debugpy", "--listen", "127.0.0.1:0", str(script)],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert json.loads(lines[0]) == [["2", "MainThread"], ["4", "MainThread"], ["6", "MainThread"], ["22", "worker"]]
    if lines[2] == "11":
        assert lines[1] != "NoneType"  # pydevd's tracer is what the program sees, ours runs around it
    assert lines[3] == "None"  # the flag pydevd read at its import is gone from the program's environment
