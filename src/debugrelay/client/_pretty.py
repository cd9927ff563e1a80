"""Readable renderings of API answers for ``debugrelay ... --pretty`` (people, not parsers)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def where(loc: dict[str, Any] | None) -> str:
    if not loc:
        return ""
    text = f"{loc.get('file')}:{loc.get('line')}"
    return f"{text} in {loc['function']}" if loc.get("function") else text


def status(data: dict[str, Any]) -> str:
    sid, state = data.get("session_id", ""), data.get("status", "?")
    line = f"{sid} {state}"
    if state == "paused":
        why = data.get("reason", "")
        if data.get("breakpoint_ids"):
            why += " " + ",".join(data["breakpoint_ids"])
        line += f" ({why}) at {where(data.get('location'))}"
    elif state in ("terminated", "failed"):
        line += f" ({data.get('reason', '')}), exit code {data.get('exit_code')}"
    if data.get("timed_out"):
        line += " - still running (timed out waiting for a stop)"
    out = [line]
    exc = data.get("exception")
    if exc:
        out.append(f"  {'uncaught ' if exc.get('unhandled') else ''}{exc.get('type')}: {exc.get('message', '')}")
    if data.get("error"):
        err = data["error"]
        out.append(f"  error {err.get('code')}: {err.get('message')}")
    if data.get("warning"):
        out.append(f"  {data['warning']}")
    if data.get("autopsy"):
        out.append(autopsy(data["autopsy"]))
    if data.get("output"):  # what the program printed since the last answer (at its end)
        cut = f"  ({data['output_truncated']})\n" if data.get("output_truncated") else ""
        out.append(cut + "\n".join(f"  | {line}" for line in data["output"].rstrip("\n").split("\n")))
    if data.get("hint"):
        out.append(f"  {data['hint']}")
    return "\n".join(out)


def sessions(data: dict[str, Any]) -> str:
    rows = []
    for s in data.get("sessions", []):
        place = (
            where(s.get("location"))
            if s.get("status") == "paused"
            else (f"exit {s.get('exit_code')}" if s.get("status") == "terminated" else "")
        )
        rows.append([s.get("session_id"), s.get("status"), s.get("reason", ""), place, s.get("name") or ""])
    return table(["SESSION", "STATUS", "REASON", "WHERE", "NAME"], rows) if rows else "no sessions"


def breakpoints(data: dict[str, Any]) -> str:
    items = data.get("breakpoints", [data] if "breakpoint_id" in data else [])
    rows = []
    for b in items:
        place = b.get("function") or f"{b.get('file')}:{b.get('line')}"
        extra = "; ".join(f"{k}={b[k]}" for k in ("condition", "hit_condition", "log_message") if b.get(k))
        rows.append(
            [
                b.get("breakpoint_id"),
                place,
                "yes" if b.get("verified") else "no",
                b.get("hit_count", 0),
                extra or b.get("message") or "",
            ]
        )
    return table(["ID", "WHERE", "VERIFIED", "HITS", "NOTES"], rows) if rows else "no breakpoints"


def stack(data: dict[str, Any]) -> str:
    rows = [
        [
            f"#{f.get('id')}",
            f.get("name"),
            f"{f.get('file')}:{f.get('line')}",
            f"+{f['collapsed'] - 1} library frames to #{f.get('through')} (--library)"
            if f.get("collapsed")
            else f"x{f['repeated']} ({f.get('arguments')} .. {f.get('last_arguments')}) to #{f.get('through')}"
            if f.get("repeated")
            else ("external" if f.get("is_external") else ""),
        ]
        for f in data.get("frames", [])
    ]
    head = f"thread {data.get('thread_id')}, {data.get('total_frames')} frames"
    return head + "\n" + table(["FRAME", "FUNCTION", "WHERE", ""], rows)


def variables(data: dict[str, Any]) -> str:
    items = data.get("variables", data.get("items", []))
    rows = [
        [v.get("name"), v.get("type") or "", v.get("value"), v.get("ref") or v.get("variable_reference") or ""]
        for v in items
    ]
    out = table(["NAME", "TYPE", "VALUE", "REF"], rows) if rows else "no variables"
    if data.get("has_more"):
        out += f"\n... {data.get('total')} in all (page with --start/--count)"
    return out


def evaluation(data: dict[str, Any]) -> str:
    text = f"{data.get('result')}  ({data.get('type')})"
    ref = data.get("ref") or data.get("variable_reference")
    return text + (f"  ref {ref}" if ref else "")


def evaluations(data: dict[str, Any]) -> str:
    lines = []
    for item in data.get("results", []):
        error = item.get("error")
        shown = f"error: {error.get('message')}" if error else evaluation(item)
        lines.append(f"{item.get('expression')} = {shown}")
    return "\n".join(lines)


def output(data: dict[str, Any]) -> str:
    """The program's output as it printed it; ``[stderr]`` marks where it switches to stderr (a unittest
    run writes each dot as a chunk of its own: one mark, not one per dot)."""
    parts, previous = [], None
    for e in data.get("outputs", []):
        kind = e.get("type")
        parts.append(
            f"[stderr] {e.get('text', '')}" if kind == "stderr" and previous != "stderr" else e.get("text", "")
        )
        previous = kind
    text = "".join(parts).rstrip("\n") or "(no output)"
    more = " (more: pass it to --since)" if data.get("has_more") else ""
    return f"{text}\n-- cursor {data.get('cursor')}{more}"


def threads(data: dict[str, Any]) -> str:
    rows = [
        [t.get("id"), t.get("name"), t.get("state", ""), "*" if t.get("is_current") else ""]
        for t in data.get("threads", [])
    ]
    return table(["ID", "NAME", "STATE", "CURRENT"], rows)


def processes(data: dict[str, Any]) -> str:
    rows = [
        [
            p.get("pid"),
            p.get("ppid", ""),
            p.get("state", ""),
            "root" if p.get("root") else ("yes" if p.get("debugged", True) else "no"),
            p.get("exit_code", ""),
            (p.get("command") or "")[:60],
        ]
        for p in data.get("processes", [])
    ]
    note = f"\n{data['undebugged_note']}" if data.get("undebugged_note") else ""
    return table(["PID", "PPID", "STATE", "DEBUGGED", "EXIT", "COMMAND"], rows) + note


def autopsy(data: dict[str, Any]) -> str:
    exc = data.get("exception") or {}
    lines = [f"{'uncaught ' if exc.get('unhandled') else ''}{exc.get('type')}: {exc.get('message', '')}"]
    for frame in data.get("frames", []):
        lines.append(f"  #{frame.get('index')} {frame.get('function')}  {frame.get('file')}:{frame.get('line')}")
        if (frame.get("source") or {}).get("text"):
            lines.append(f"      > {frame['source']['text']}")
        for var in [*(frame.get("arguments") or []), *(frame.get("locals") or [])]:
            lines.append(f"      {var.get('name')} = {var.get('value')}")
    return "\n".join(lines)


def _outcome(call: dict[str, Any]) -> str:
    if call.get("running"):
        return "(running)"
    if call.get("raised") is not None:
        line = f" at line {call['raised_line']}" if call.get("raised_line") else ""
        return f"raised {call['raised']}{line}"
    return f"-> {call.get('returned')}"


def _args(call: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in (call.get("args") or {}).items())


def calls(data: dict[str, Any]) -> str:
    rows = [
        [c.get("call_id"), f"{c.get('function')}({_args(c)})", _outcome(c), c.get("thread", "")]
        for c in data.get("calls", [])
    ]
    out = table(["CALL", "CALL OF", "OUTCOME", "THREAD"], rows) if rows else data.get("message") or "no calls"
    more = []
    if data.get("has_more"):
        more.append(f"{data.get('total')} match in all (page with --offset/--limit)")
    if data.get("dropped"):
        more.append(f"{data['dropped']} older calls not kept")
    return out + "".join(f"\n... {m}" for m in more)


def _changes(changed: dict[str, Any] | None) -> str:
    return ", ".join(f"{k} = {v}" for k, v in (changed or {}).items())


def call(data: dict[str, Any]) -> str:
    """One call's run: each line with what it changed, loops as their per-line counts and first/last values."""
    lines = [f"{data.get('function')}({_args(data)})  {data.get('file')}:{data.get('line')}"]
    for event in data.get("events", []):
        if "loop" in event:
            first, last = event["loop"]
            lines.append(f"  loop {first}-{last}: {event.get('iterations')} iterations")
            for item in event.get("lines", []):
                ends = f"first {_changes(item.get('first'))}; last {_changes(item.get('last'))}"
                lines.append(f"    {item.get('line'):>5} x{item.get('count')}  {ends}")
            for other in event.get("other", []):
                lines.append(f"    other path {other.get('lines')} at iterations {other.get('iterations')}")
        elif "line" in event:
            lines.append(f"  {event['line']:>5}  {_changes(event.get('changed'))}".rstrip())
        else:
            lines.append(f"  ... {event}")
    lines.append(f"  {_outcome(data)}")
    if data.get("callees"):
        lines.append(f"  calls made: {', '.join(data['callees'])}")
    if data.get("cut"):
        lines.append(f"  cut: {data['cut']}")
    return "\n".join(lines)


def generic(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


RENDERERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "status": status,
    "sessions": sessions,
    "breakpoints": breakpoints,
    "stack": stack,
    "variables": variables,
    "evaluation": evaluation,
    "evaluations": evaluations,
    "output": output,
    "threads": threads,
    "processes": processes,
    "autopsy": autopsy,
    "calls": calls,
    "call": call,
}


def render(kind: str, data: Any) -> str:
    renderer = RENDERERS.get(kind)
    if renderer is None or not isinstance(data, dict):
        return generic(data)
    return renderer(data)
