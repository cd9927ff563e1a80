"""Values an agent reads at a stop, the program watching for any trace of it: a config too large to show
whole (60 sections of 20 long strings), an object that loads what it is asked for and counts its
sizeof() calls, a list that counts its len() calls. It prints what it saw; run plain, it prints the same."""

import gc
import sys

unraisable = []
sys.unraisablehook = lambda u: unraisable.append(f"{u.exc_type.__name__}: {u.exc_value} in {u.object!r}")
calls = []


class Config:
    def __init__(self):
        self.sections = {f"section{i}": [f"value {i}.{j} " + "x" * 200 for j in range(20)] for i in range(60)}


class Lazy:
    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        calls.append(attr)
        raise AttributeError(attr)

    def __sizeof__(self):
        calls.append("sizeof")
        return object.__sizeof__(self)


class Rows(list):
    def __len__(self):
        calls.append("len")
        return list.__len__(self)


def check(config, lazy, rows):
    deep = [[[[[rows]]]]]
    return len(config.sections), lazy.name, len(deep)  # values-read


print(check(Config(), Lazy("orders"), Rows(range(100))))
gc.collect()
print("calls", calls)
print("unraisable", unraisable)
