"""Tier-1 analyzers (deterministic, free): known patterns named over one or two snapshots, with their evidence.

The patterns (title, signals, explanation, next steps) come from ``patterns.json``; the detectors
that look for their signals are here, one function per pattern.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from typing import Any

from debugrelay.models import PatternMatch

Snap = tuple[str, dict[str, Any]]  # (evidence id, snapshot data)

PATTERNS: dict[str, dict[str, Any]] = {
    p["id"]: p
    for p in json.loads(resources.files("debugrelay.evidence").joinpath("patterns.json").read_text())["patterns"]
}
STORM_PER_SECOND = 200.0
LEAK_GROWTH = 1000  # items a named container (or objects of a type) must gain between two snapshots
_LOOP_FRAMES = ("run_forever", "_run_once", "run_until_complete")


def _where(frame: dict[str, Any]) -> str:
    return f"{os.path.basename(str(frame.get('file')))}:{frame.get('line')} {frame.get('function')}"


def _stack(thread: dict[str, Any], n: int = 6) -> list[str]:
    return [_where(f) for f in (thread.get("frames") or [])[:n]]


def _match(pattern: str, confidence: str, evidence: dict[str, Any], ids: list[str]) -> PatternMatch:
    p = PATTERNS[pattern]
    return PatternMatch(
        pattern=pattern,
        title=p["title"],
        confidence=confidence,
        explanation=p["explanation"],
        signals=list(p["signals"]),
        evidence=evidence,
        next_steps=list(p["next_steps"]),
        evidence_ids=ids,
    )


def deadlock(snaps: list[Snap]) -> PatternMatch | None:
    sid, data = snaps[-1]
    threads = data.get("threads") or []
    holder: dict[str, dict[str, Any]] = {}
    by_ident = {t["ident"]: t for t in threads}
    for t in threads:
        for h in t.get("holds") or []:
            holder[h["lock"]] = t
        waits = t.get("waits_for") or {}
        if waits.get("owner") in by_ident:  # an RLock names its owner even when no 'with' shows it
            holder.setdefault(waits["lock"], by_ident[waits["owner"]])
    waits = {t["ident"]: t for t in threads if t.get("waits_for")}
    for start in waits.values():
        seen: list[dict[str, Any]] = []
        cur: dict[str, Any] | None = start
        while cur is not None and cur.get("waits_for") and cur not in seen:
            seen.append(cur)
            cur = holder.get(cur["waits_for"]["lock"])
        if cur is not None and cur is start and len(seen) >= 2:
            cycle = [
                {
                    "thread": t["name"],
                    "holds": [h["expression"] for h in t.get("holds") or []]
                    or [w["waits_for"]["expression"] for w in seen if holder.get(w["waits_for"]["lock"]) is t],
                    "waits_for": t["waits_for"]["expression"],
                    "lock": t["waits_for"]["lock"],
                    "stack": _stack(t),
                }
                for t in seen
            ]
            return _match("deadlock", "high", {"threads": cycle}, [sid])
    return None


def _program_threads(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in data.get("threads") or [] if t.get("frames")]


def starvation(snaps: list[Snap]) -> PatternMatch | None:
    sid, data = snaps[-1]
    threads = _program_threads(data)
    if len(threads) < 3 or not all(t.get("waiting") for t in threads):
        return None
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for t in threads:
        top = (t.get("frames") or [{}])[0]
        groups.setdefault((t["waiting"]["kind"], _where(top)), []).append(t)
    (kind, where), workers = max(groups.items(), key=lambda kv: len(kv[1]))
    if len(workers) < 2 or kind not in ("queue", "lock", "condition", "future"):
        return None
    others = [
        {"thread": t["name"], "waiting": t["waiting"], "stack": _stack(t, 3)} for t in threads if t not in workers
    ]
    evidence = {
        "blocked_workers": [t["name"] for t in workers],
        "waiting_on": kind,
        "at": where,
        "worker_stack": _stack(workers[0]),
        "other_threads": others,
    }
    return _match("starvation", "high" if len(workers) >= 3 else "medium", evidence, [sid])


def busy_loop(snaps: list[Snap]) -> PatternMatch | None:
    if len(snaps) < 2:
        return None
    (first_id, first), (last_id, last) = snaps[-2], snaps[-1]
    before = {t["ident"]: t for t in _program_threads(first)}
    for t in _program_threads(last):
        old = before.get(t["ident"])
        if old is None or t.get("waiting") or old.get("waiting"):
            continue
        now, then = t["frames"][0], old["frames"][0]
        same_place = (now["file"], now["function"]) == (then["file"], then["function"])
        if not same_place or abs(now["line"] - then["line"]) > 3:
            continue
        # the values that keep it going: a spin's stay as they were; a loop that counts (retries, polls)
        # changes some every time round while the ones its condition waits on stay
        before_values, after_values = then.get("locals") or {}, now.get("locals") or {}
        changing = {
            name: [before_values.get(name), value]
            for name, value in after_values.items()
            if before_values.get(name) != value
        }
        steady = {name: value for name, value in after_values.items() if name not in changing}
        evidence = {"thread": t["name"], "at": [_where(then), _where(now)], "stack": _stack(t)}
        if steady:
            evidence["unchanged"] = steady
        if changing:
            evidence["changing"] = changing  # [first snapshot's value, last one's]
        return _match("busy_loop", "low" if changing else "medium", evidence, [first_id, last_id])
    return None


def exception_storm(snaps: list[Snap]) -> PatternMatch | None:
    counted = [(sid, d) for sid, d in snaps if d.get("raises")]
    if len(counted) < 2:
        return None
    (a_id, a), (b_id, b) = counted[-2], counted[-1]
    seconds = float(b["taken_at"]) - float(a["taken_at"])
    raised = int(b["raises"]["total"]) - int(a["raises"]["total"])
    if seconds <= 0 or raised / seconds < STORM_PER_SECOND:
        return None
    top = b["raises"]["counts"]
    evidence = {
        "raised": raised,
        "seconds": round(seconds, 2),
        "per_second": round(raised / seconds),
        "most_raised": top,
    }
    return _match("exception_storm", "high", evidence, [a_id, b_id])


def async_stuck(snaps: list[Snap]) -> PatternMatch | None:
    def stuck(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {
            t["name"]: t
            for t in data.get("tasks") or []
            if str(t.get("awaits", "")).startswith("<Future pending")
            and "cb=[" in str(t.get("awaits", ""))
            and "Task" not in str(t.get("awaits", "")).split("cb=[")[0]
        }

    sid, data = snaps[-1]
    now = stuck(data)
    if not now:
        return None
    ids = [sid]
    confidence = "medium"
    if len(snaps) >= 2:
        earlier = stuck(snaps[-2][1])
        still = {n: t for n, t in now.items() if n in earlier and earlier[n].get("at") == t.get("at")}
        if still:
            now, confidence, ids = still, "high", [snaps[-2][0], sid]
    tasks = [{"task": n, "coro": t.get("coro"), "at": t.get("at"), "awaits": t.get("awaits")} for n, t in now.items()]
    return _match("async_stuck", confidence, {"tasks": tasks[:10]}, ids)


def loop_blocked(snaps: list[Snap]) -> PatternMatch | None:
    sid, data = snaps[-1]
    by_ident = {t["ident"]: t for t in data.get("threads") or []}
    for loop in data.get("loops") or []:
        t = by_ident.get(loop.get("thread_ident"))
        if t is None or not loop.get("running"):
            continue
        frames = t.get("frames") or []
        waiting = t.get("waiting") or {}
        in_select = "select" in str(waiting.get("in", "")) or (
            frames and frames[0].get("function") in ("select", "poll")
        )
        if in_select or not frames:
            continue
        if waiting.get("kind") in ("sleep", "lock", "queue", "condition", "io", "join"):
            evidence = {
                "thread": t["name"],
                "blocked_in": waiting,
                "stack": _stack(t),
                "ready_callbacks": loop.get("ready"),
            }
            return _match("loop_blocked", "high", evidence, [sid])
    return None


def leak(snaps: list[Snap]) -> PatternMatch | None:
    if len(snaps) < 2:
        return None
    (a_id, a), (b_id, b) = snaps[-2], snaps[-1]
    pa, pb = a.get("process") or {}, b.get("process") or {}
    grew = []
    before = {c["id"]: c for c in pa.get("largest") or []}
    for c in pb.get("largest") or []:
        old = before.get(c["id"])
        if old is not None and c["len"] - old["len"] >= LEAK_GROWTH:
            grew.append({"name": c.get("name"), "type": c["type"], "len": [old["len"], c["len"]]})
    types = []
    ta, tb = pa.get("gc_top") or {}, pb.get("gc_top") or {}
    for name, count in tb.items():
        if count - int(ta.get(name, 0)) >= LEAK_GROWTH:
            types.append({"type": name, "count": [ta.get(name, 0), count]})
    if not grew and not types:
        return None
    evidence: dict[str, Any] = {"seconds": round(float(b["taken_at"]) - float(a["taken_at"]), 2)}
    if grew:
        evidence["containers"] = grew
    if types:
        evidence["types"] = types
    if "rss_bytes" in pa and "rss_bytes" in pb:
        evidence["rss_bytes"] = [pa["rss_bytes"], pb["rss_bytes"]]
    return _match("leak", "high" if grew else "medium", evidence, [a_id, b_id])


def crash(snaps: list[Snap]) -> PatternMatch | None:
    for sid, data in reversed(snaps):
        autopsy = data.get("autopsy") or {}
        exc = autopsy.get("exception") or {}
        if not exc.get("unhandled"):
            continue
        thread = (data.get("stop") or {}).get("thread_name")
        frames = autopsy.get("frames") or []
        evidence: dict[str, Any] = {
            "exception": f"{exc.get('type')}: {exc.get('message')}",
            "thread": thread,
            "stack": [_where(f) for f in frames[:6]],
        }
        if frames and frames[0].get("locals") is not None:
            evidence["locals"] = {
                v["name"]: v.get("value") for v in [*frames[0].get("arguments", []), *frames[0]["locals"]]
            }
        if thread not in (None, "MainThread"):
            evidence["note"] = (
                "a thread that dies of an exception ends alone: the rest of the program goes on without it"
            )
        return _match("crash", "high", evidence, [sid])
    return None


DETECTORS = {
    "crash": crash,
    "deadlock": deadlock,
    "starvation": starvation,
    "busy_loop": busy_loop,
    "exception_storm": exception_storm,
    "async_stuck": async_stuck,
    "loop_blocked": loop_blocked,
    "leak": leak,
}


def analyze(snaps: list[Snap]) -> list[PatternMatch]:
    """Every known pattern whose signals the snapshots show (oldest snapshot first)."""
    found = []
    for _name, detect in DETECTORS.items():
        match = detect(snaps)
        if match is not None:
            found.append(match)
    return found
