"""What redaction costs an answer: per KB of program output, and per variables answer.

    .venv/bin/python -m bench.redaction [--crafted]

Runs in process (no relay, no target): the rules over the test corpus of debugger output (planted
secrets and look-alikes), over ordinary output (reprs of stdlib modules, nothing secret), and over
a variables answer of 50 locals as the relay sends it, with the session's table warm (its known
secrets, and their encodings, searched too). Prints JSON; ``python -m bench`` includes it with its
goal (< 0.3 ms per KB). ``--crafted`` adds text made to be slow: 64 KiB of what each rule looks for
(the slowest rule named, in CPU ms), and the 30 lines of 60 KB of ``token=`` + hex that
tests/targets/out_crafted.py prints, redacted as one output answer.
"""

from __future__ import annotations

import json
import os
import pprint
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from debugrelay.models import OutputLine, OutputPage, Variable, VariablesPage
from debugrelay.redaction import BUILTIN_RULES, Placeholders, Redactor

from ._harness import ROOT

CORPUS = (ROOT / "tests" / "data" / "redaction_corpus.txt").read_text(encoding="utf-8")


def ordinary_output() -> str:
    import asyncio
    import collections
    import datetime
    import json as json_module

    return "\n".join(pprint.pformat(vars(m)) for m in (datetime, json_module, collections, asyncio))


def variables_answer() -> VariablesPage:
    """50 locals: numbers, strings, reprs of objects and containers, five of them secret."""
    found = [
        Variable(name="password", value="'hunter2-horse'", type="str"),
        Variable(name="api_token", value="'ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234'", type="str"),
        Variable(name="customer", value="{'email': 'ada@corp.io', 'card': '4111 1111 1111 1111'}", type="dict"),
        Variable(name="db_url", value="'postgresql://svc:Tr0ub4dor3x@db:5432/app'", type="str"),
        Variable(name="headers", value="{'Authorization': 'Bearer ya29.a0AfH6SMBx3kP9qLwZ7yT2'}", type="dict"),
    ]
    for i in range(45):
        kind = i % 5
        if kind == 0:
            found.append(Variable(name=f"count_{i}", value=str(i * 7919), type="int"))
        elif kind == 1:
            found.append(Variable(name=f"label_{i}", value=f"'item {i} of the order'", type="str"))
        elif kind == 2:
            found.append(
                Variable(name=f"obj_{i}", value=f"<app.models.Order object at 0x7f3a2c1b{i:04x}>", type="Order")
            )
        elif kind == 3:
            found.append(Variable(name=f"items_{i}", value=f"[{i}, {i + 1}, {i + 2}, 'sku-{i}']", type="list"))
        else:
            found.append(Variable(name=f"request_id_{i}", value="'550e8400-e29b-41d4-a716-446655440000'", type="str"))
    return VariablesPage(variables=found, total=len(found), has_more=False)


def _time(fn: Callable[[], Any], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def measure(rounds: int = 200) -> dict[str, Any]:
    redactor = Redactor()
    table = Placeholders()
    redactor.text(CORPUS, table, "output")  # the table holds the corpus's secrets, as in a long session
    ordinary = ordinary_output()
    page = variables_answer()
    redactor.walk(page, table, "variables")
    out: dict[str, Any] = {}
    for name, text in (("corpus_with_secrets", CORPUS), ("ordinary_output", ordinary)):
        kib = len(text.encode()) / 1024
        samples = _time(lambda t=text: redactor.text(t, table, "output"), max(20, rounds // 4))
        out[name] = {
            "kib": round(kib, 1),
            "ms_per_kib_median": round(statistics.median(samples) / kib, 4),
            "ms_per_kib_max": round(max(samples) / kib, 4),
        }
    samples = _time(lambda: redactor.walk(page, table, "variables"), rounds)
    out["variables_answer_50_locals"] = {
        "ms_median": round(statistics.median(samples), 4),
        "ms_p95": round(sorted(samples)[int(0.95 * len(samples)) - 1], 4),
    }
    return out


_N = 64 * 1024
CRAFTED: dict[str, Callable[[], str]] = {
    "digits": lambda: "1" * _N,
    "@": lambda: "@" * _N,
    "a@": lambda: "a@" * (_N // 2),
    "token=": lambda: "token=" * (_N // 6),
    "token=<hex> over and over": lambda: "".join("token=" + os.urandom(4).hex() for _ in range(_N // 14)),
    "password:": lambda: "password:" * (_N // 9),
    "api_key=": lambda: "api_key=" * (_N // 8),
    "-----BEGIN RSA PRIVATE KEY-----": lambda: "-----BEGIN RSA PRIVATE KEY-----" * (_N // 31),
    "eyJ-": lambda: "eyJ-" * (_N // 4),
    "://a:": lambda: "://a:" * (_N // 5),
    "bearer ": lambda: "bearer " * (_N // 7),
    'token="': lambda: 'token="' * (_N // 7),
}


def _cpu_ms(fn: Callable[[], Any], rounds: int = 3) -> float:
    """The least CPU time of ``rounds`` runs (the machine's load left out), in ms."""
    best = float("inf")
    for _ in range(rounds):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return round(best * 1000, 1)


def crafted() -> dict[str, Any]:
    """Per crafted 64 KiB text: the whole redaction and its slowest rule, CPU ms."""
    redactor = Redactor()
    out: dict[str, Any] = {}
    for name, make in CRAFTED.items():
        text = make()
        lowered = text.lower()
        per_rule = {
            rule.name: _cpu_ms(lambda r=rule, t=text: list(r.spans(t)), 1)
            for rule in BUILTIN_RULES
            if rule.applies(text, lowered)
        }
        slowest = max(per_rule.items(), key=lambda kv: kv[1], default=("-", 0.0))
        out[name] = {
            "total_ms": _cpu_ms(lambda t=text: redactor.text(t, Placeholders(), "output"), 1),
            "slowest_rule": slowest[0],
            "slowest_rule_ms": slowest[1],
        }
    return out


def crafted_output() -> dict[str, Any]:
    """The 30 lines of tests/targets/out_crafted.py redacted as one output answer, CPU ms."""
    lines = ["".join("token=" + os.urandom(4).hex() for _ in range(4285)) + "\n" for _ in range(30)]
    page = OutputPage(
        outputs=[OutputLine(type="stdout", text=t, timestamp="2024-01-01T00:00:00Z") for t in lines],
        cursor="30",
        has_more=False,
    )
    ms = _cpu_ms(lambda: Redactor().walk(page, Placeholders(), "output"), 1)
    return {"lines": len(lines), "kib": round(sum(map(len, lines)) / 1024), "answer_ms": ms, "ms_per_line": ms / 30}


if __name__ == "__main__":
    result = measure()
    if "--crafted" in sys.argv:
        result["crafted_64kib"] = crafted()
        result["crafted_output_answer"] = crafted_output()
    print(json.dumps(result, indent=2))
