"""Keeping debugpy in step: breakpoints sent per file, hits counted, conditions that raise reported."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import os
from typing import TYPE_CHECKING, Any

from debugrelay.dap import BreakpointsBody, as_body
from debugrelay.errors import DebugpyError, RelayError
from debugrelay.models import BreakpointRecord, SessionRecord

from ._checks import recheck, resolve_function
from ._common import (
    CONDITION_ERROR,
    CONDITION_RAISED,
    NEVER_HIT,
    PENDING_POLL,
    RUNS_MARKER,
    SYNC_NOTES,
    file_exists,
    is_pending_file,
    is_runtime_note,
    live_client,
    settings_of,
    state_of,
)
from ._requests import compile_expression, log_expression, parse_hit_condition, pydevd_log_message

if TYPE_CHECKING:
    from debugrelay.dap import DapClient

    from .._files import SourceRoots
    from .._session import Session

log = logging.getLogger(__name__)


async def recheck_pending(session: Session) -> bool:
    """Verify pending breakpoints whose file now exists and send them to debugpy; True if any changed."""
    changed = [b for b in session.record.breakpoints if is_pending_file(b) and file_exists(b.file)]
    if not changed:
        return False
    roots = session.source_roots()
    for bp in changed:
        recheck(bp, roots)
    await sync_changed(session, changed)
    await session.save()
    return True


def ensure_watcher(session: Session) -> None:
    """While a target runs with pending breakpoints, look for their files and set them once they appear."""
    rt = state_of(session)
    client = live_client(session)
    if rt.watcher or client is None or not any(is_pending_file(b) for b in session.record.breakpoints):
        return
    rt.watcher = True

    async def watch() -> None:
        try:
            while session.client is client and not client.closed.is_set():
                pending = [b for b in session.record.breakpoints if is_pending_file(b)]
                if not pending:
                    return
                if any(file_exists(b.file) for b in pending):
                    async with session.lock:
                        with contextlib.suppress(RelayError):
                            await recheck_pending(session)
                await asyncio.sleep(PENDING_POLL)
        finally:
            rt.watcher = False

    session.spawn(watch())


async def sync_changed(session: Session, changed: list[BreakpointRecord]) -> None:
    if live_client(session) is None:
        return
    for path in sorted({b.file for b in changed if b.file}):
        await sync_file(session, path)
    if any(b.kind == "function" for b in changed):
        await sync_functions(session)


async def sync_all(session: Session) -> None:
    """Send every breakpoint of the session to debugpy (at configuration time of each connection)."""
    client = live_client(session)
    if client is None:
        return
    await _install(session, client)
    record = session.record
    # reads sources, looks names up: off the event loop
    await asyncio.to_thread(_recheck_all, record, session.source_roots())
    for path in sorted({b.file for b in record.breakpoints if b.file}):
        await sync_file(session, path)
    await sync_functions(session)
    ensure_watcher(session)


def _recheck_all(record: SessionRecord, roots: SourceRoots) -> None:
    for bp in record.breakpoints:
        if bp.internal or bp.unsealed:  # an unsealed one is not set: nothing to check of it
            continue
        if bp.kind == "function":
            resolve_function(record, bp, roots)
        else:
            recheck(bp, roots)


async def _install(session: Session, client: DapClient) -> None:
    """Listen to this connection's events and ask debugpy to stop (not skip) when a condition raises."""
    rt = state_of(session)
    if rt.client is client:
        return
    rt.client, rt.sent_conditions = client, {}
    client.add_listener(lambda event, body: _on_event(session, client, event, body))
    # debugpy's own default (debug mode "debugpy-dap") skips a breakpoint whose condition raises and
    # says nothing for a NameError; an empty skip list makes pydevd suspend and always warn.
    try:
        await client.request(
            "setDebuggerProperty", {"skipSuspendOnBreakpointException": [], "skipPrintBreakpointException": []}
        )
        rt.condition_stops = True
    except DebugpyError as exc:
        log.warning("session %s: debugpy refused setDebuggerProperty: %s", session.id, exc.message)
        rt.condition_stops = False


def _on_event(session: Session, client: DapClient, event: str, body: Any) -> None:
    if session.client is not client:
        return
    if event == "output" and isinstance(body, dict) and body.get("category") == "important":
        text = str(body.get("output") or "")
        if text.startswith(CONDITION_ERROR):
            _condition_failed(session, text[len(CONDITION_ERROR) :])
    elif event == "stopped" and any(is_pending_file(b) for b in session.record.breakpoints):
        session.spawn(_recheck_later(session))


async def _recheck_later(session: Session) -> None:
    async with session.lock:
        with contextlib.suppress(RelayError):
            await recheck_pending(session)


def _condition_failed(session: Session, rest: str) -> None:
    """debugpy reported a condition that raised: note it on the breakpoint and in the output."""
    rt = state_of(session)
    bp_id = next((i for sent, i in rt.sent_conditions.items() if rest.startswith(sent + "\n")), None)
    lines = [line.strip() for line in rest.splitlines() if line.strip()]
    error = lines[-1] if lines else "an exception"
    for bp in session.record.breakpoints:
        if bp.id == bp_id:
            bp.message = (
                f"{CONDITION_RAISED} {error}, so the target paused here instead of skipping the breakpoint. "
                "Fix the condition with PATCH (a condition that raises pauses every time)."
            )
            session.output.add("debugger", f"breakpoint {bp.id}: condition {bp.condition!r} raised {error}\n")
            return
    session.output.add("debugger", f"a breakpoint condition raised {error}\n")


def hit_test(record: SessionRecord, bp: BreakpointRecord) -> str | None:
    """A Python expression that counts this breakpoint's hits in the target and tests the hit condition.

    debugpy counts hits itself, but its count restarts whenever the file's breakpoints are sent
    again, and it stops when EITHER the hit condition OR the condition is true. Counting in the
    target (after the condition passed) gives AND, and a count that survives other edits.
    """
    if not bp.hit_condition:
        return None
    op, number, rest = parse_hit_condition(bp.hit_condition)
    key = _hits_key(record, bp)
    test = f"d[k] % {number} == {rest}" if op == "%" else f"d[k] {op} {number}"
    return (
        f"(lambda d, k: d.__setitem__(k, d.get(k, 0) + 1) or {test})"
        f"(__import__('sys').__dict__.setdefault('_debugrelay_hits', {{}}), {key!r})"
    )


# Defined once in the target (in a fresh namespace, kept in sys): counts a breakpoint's line runs and,
# about once a second, reports them and the hits counted so far through the debugger's console channel.
_RUNS_SOURCE = """
def _debugrelay_runs(key, hits_key, marker):
    import sys, time
    runs = sys.__dict__.setdefault('_debugrelay_runs', {})
    now = time.monotonic()
    state = runs.get(key)
    if state is None:
        state = runs[key] = [0, now, 0]
    state[0] += 1
    if now - state[1] >= 1.0:
        try:
            import pydevd
            db = pydevd.get_global_debugger()
            hits = sys.__dict__.get('_debugrelay_hits', {}).get(hits_key, 0)
            rate = (state[0] - state[2]) / (now - state[1])
            text = '%s%s %d %d %.1f\\n' % (marker, key, state[0], hits, rate)
            db.writer.add_command(db.cmd_factory.make_console_message(text))
        except Exception:
            pass
        state[1], state[2] = now, state[0]
    return True
"""


def _hits_key(record: SessionRecord, bp: BreakpointRecord) -> str:
    seed = f"{record.id}/{bp.id}/{bp.condition}/{bp.hit_condition}"
    return f"{bp.id}:{hashlib.sha1(seed.encode()).hexdigest()[:10]}"


def runs_test(record: SessionRecord, bp: BreakpointRecord) -> str | None:
    """A Python expression, always true, that counts a conditional or counted breakpoint's line runs in
    the target and reports them while it runs (see RUNS_MARKER); None for a plain breakpoint."""
    if not (bp.condition or bp.hit_condition):
        return None
    key = _hits_key(record, bp)
    define = (
        "(lambda g: (exec(" + repr(_RUNS_SOURCE) + ", g), "
        "__import__('sys').__dict__.setdefault('_debugrelay_runs_fn', g['_debugrelay_runs']))[1])({})"
    )
    fn = f"(__import__('sys').__dict__.get('_debugrelay_runs_fn') or {define})"
    return f"{fn}({key + ':runs'!r}, {key!r}, {RUNS_MARKER!r})"


def first_entry_test(bp: BreakpointRecord, roots: SourceRoots) -> str | None:
    """A Python expression, true unless the program comes back to the first line of a statement spanning
    lines from its own later lines, or None for a one-line statement.

    CPython fires a second 'line' event there (``total = compute(\n x,\n y)`` runs line 1, 2, 3, then 1
    again for the call), so debugpy would stop twice and count two hits for one execution. At that event
    the frame's next instruction follows instructions of the statement's later lines; at a real one
    (the first, or the next turn of a loop) it does not.
    """
    span = _statement_span(bp, roots)
    if span is None:
        return None
    name, line, end = span
    frame = (
        f"next((f for f, n in __import__('traceback').walk_stack(None) "
        f"if n == {line} and f.f_code.co_filename.endswith({name!r})), None)"
    )
    return (
        f"(lambda f: f is None or not any(e == f.f_lasti and {line} < (n or 0) <= {end} "
        f"for _, e, n in getattr(f.f_code, 'co_lines', tuple)()))({frame})"
    )


_COMPREHENSIONS = ("<genexpr>", "<listcomp>", "<setcomp>", "<dictcomp>")


def inner_frame_test(bp: BreakpointRecord, roots: SourceRoots) -> str | None:
    """A Python expression, false in the frame of a comprehension or generator expression at a line the
    code around it runs too, or None for a line without one (the text of ``_debugrelay_bp._inside``).

    Python 3.11 runs ``sum(f(x) for x in xs)`` and ``[f(x) for x in xs]`` in frames of their own, each
    firing a 'line' event per item on the line; 3.12+ does so for a generator expression. debugpy would
    stop there once per item after the stop in the outer frame: the line ran once.
    """
    where = _comprehension_line(bp, roots)
    if where is None:
        return None
    name, line = where
    frame = (
        f"next((f for f, n in __import__('traceback').walk_stack(None) "
        f"if n == {line} and f.f_code.co_filename.endswith({name!r})), None)"
    )
    outer = "next((o for o, _ in __import__('traceback').walk_stack(f.f_back) if f.f_code in o.f_code.co_consts), None)"
    runs_line = (
        f"(lambda o: {line} in [n for _, _, n in o.f_code.co_lines()] if o is not None "
        f"and hasattr(o.f_code, 'co_lines') else f.f_code.co_firstlineno == {line})({outer})"
    )
    return f"(lambda f: f is None or f.f_code.co_name not in {_COMPREHENSIONS!r} or not {runs_line})({frame})"


def compiled_check(record: SessionRecord, bp: BreakpointRecord, roots: SourceRoots) -> str | None:
    """What debugpy evaluates on each run of the line, for a launched target: one attribute of the builtin
    its start-up hook installs (``_boot/_debugrelay_bp.py``: the checks compiled there once), the
    breakpoint's JSON in its name. It gives whether to stop or, for a logpoint, the message (empty: none
    this time). None when the breakpoint needs no check (a plain one on a one-line statement without a
    comprehension)."""
    condition = compile_expression(bp.condition, "condition") if bp.condition else None
    hit = parse_hit_condition(bp.hit_condition) if bp.hit_condition else None
    first = _statement_span(bp, roots)
    message = log_expression(bp.log_message) if bp.log_message else None
    inner = _comprehension_line(bp, roots)
    if condition is None and hit is None and first is None and message is None and inner is None:
        return None
    fields = [_hits_key(record, bp), condition, hit, first, message, inner]
    spec = json.dumps(fields if inner is not None else fields[:5], separators=(",", ":"))
    return "_debugrelay_check._" + base64.b32encode(spec.encode()).decode().rstrip("=")


def _comprehension_line(bp: BreakpointRecord, roots: SourceRoots) -> tuple[str, int] | None:
    """(file name, line) of a line breakpoint on a line holding a comprehension or generator expression."""
    if bp.kind != "line" or bp.file is None or bp.line is None:
        return None
    info = roots.analyze(bp.file)
    line = bp.actual_line or bp.line
    return (os.path.basename(bp.file), line) if info is not None and line in info.comprehensions else None


def _statement_span(bp: BreakpointRecord, roots: SourceRoots) -> tuple[str, int, int] | None:
    """(file name, line, last line) of the statement spanning lines a line breakpoint is on, else None."""
    if bp.kind != "line" or bp.file is None or bp.line is None:
        return None
    info = roots.analyze(bp.file)
    line = bp.actual_line or bp.line
    end = info.multiline.get(line) if info is not None else None
    return (os.path.basename(bp.file), line, end) if end is not None else None


def _dap_args(record: SessionRecord, bp: BreakpointRecord, roots: SourceRoots) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if record.mode == "launch":  # the start-up folder is on the target's path: its checks, compiled once
        check = compiled_check(record, bp, roots)
        if check and bp.log_message:
            # debugpy evaluates a logpoint's message on every run, before and whatever its condition (and
            # compiles it each time): the checks come first inside it, the message only when they pass
            args["logMessage"] = "{" + check + "}"
        elif check:
            args["condition"] = check
        elif bp.log_message:
            args["logMessage"] = pydevd_log_message(bp.log_message)
        return args
    # a program someone else started has no start-up folder of ours: the checks spelled out in the text
    condition = compile_expression(bp.condition, "condition") if bp.condition else None
    hits = hit_test(record, bp)
    first = first_entry_test(bp, roots)
    inner = inner_frame_test(bp, roots)
    runs = runs_test(record, bp)
    if condition and hits:
        condition = f"({condition}) and {hits}"
    elif hits:
        condition = hits
    if runs:
        condition = f"{runs} and ({condition})"
    if inner:
        condition = f"{inner} and ({condition})" if condition else inner
    if first:
        # checked first: a second event of one execution neither stops nor counts as a hit
        condition = f"{first} and ({condition})" if condition else first
    if condition:
        args["condition"] = condition
    if bp.log_message:
        args["logMessage"] = pydevd_log_message(bp.log_message)  # pydevd adds the newline itself
    return args


def _lead_order(bp: BreakpointRecord) -> tuple[int, int, int]:
    plain = not (bp.condition or bp.hit_condition or bp.log_message)
    number = int(bp.id[3:]) if bp.id.startswith("bp_") and bp.id[3:].isdigit() else 0
    return (0 if bp.internal else 1, 0 if plain else 1, number)


async def sync_file(session: Session, path: str) -> None:
    """Send the breakpoints of one file to debugpy (it replaces that file's set each time)."""
    client = live_client(session)
    if client is None:
        return
    record = session.record
    rt = state_of(session)
    members = [
        b
        for b in record.breakpoints
        if b.file == path and b.line is not None and b.enabled and b.verified and not b.pending and not b.unsealed
    ]
    by_line: dict[int, list[BreakpointRecord]] = {}
    for bp in members:
        if bp.message and bp.message.startswith(SYNC_NOTES):  # recomputed below
            bp.message = None
    for bp in sorted(members, key=_lead_order):
        by_line.setdefault(bp.line or 0, []).append(bp)
    lines = sorted(by_line)
    sent = []
    roots = session.source_roots()
    for line in lines:
        lead = by_line[line][0]
        args = _dap_args(record, lead, roots)
        if "condition" in args:
            rt.sent_conditions[args["condition"]] = lead.id
        sent.append({"line": line, **args})
    remote = session.target.to_remote_path(path) if session.target else path
    body = await client.request("setBreakpoints", {"source": {"path": remote}, "breakpoints": sent})
    for line, answer in zip(lines, as_body(body, BreakpointsBody).breakpoints, strict=False):
        group = by_line[line]
        for bp in group:
            bp.dap_id = answer.id
            actual = answer.line
            bp.actual_line = actual if actual not in (None, line) else None
            if not answer.verified:
                bp.verified = False
                bp.message = answer.message or "debugpy could not verify this breakpoint"
            elif bp.actual_line is not None:
                bp.message = f"debugpy moved this breakpoint to line {actual}; it pauses there."
            if bp is not group[0] and settings_of(bp)[:3] != settings_of(group[0])[:3]:
                lead_name = group[0].id or "the entry stop"
                bp.message = (
                    f"Shares line {line} with {lead_name}: debugpy keeps one breakpoint per line, "
                    f"so {lead_name}'s condition/hit condition/log message apply to both."
                )


async def sync_functions(session: Session) -> None:
    """Bare function names the relay could not find go to debugpy, which matches them by name."""
    client = live_client(session)
    if client is None:
        return
    active = [
        b
        for b in session.record.breakpoints
        if b.kind == "function"
        and b.enabled
        and not b.unsealed
        and b.file is None
        and not b.pending
        and b.function
        and "." not in b.function
        and ":" not in b.function
    ]
    roots = session.source_roots()
    body = await client.request(
        "setFunctionBreakpoints",
        {"breakpoints": [{"name": b.function, **_dap_args(session.record, b, roots)} for b in active]},
    )
    for bp, answer in zip(active, as_body(body, BreakpointsBody).breakpoints, strict=False):
        bp.dap_id = answer.id


def on_runs_report(record: SessionRecord, text: str) -> bool:
    """Take a target's report of a breakpoint's line runs (see RUNS_MARKER): its runs, their rate and,
    for a counted breakpoint, its hits so far. False when ``text`` is not one."""
    if not text.startswith(RUNS_MARKER):
        return False
    try:
        key, runs, hits, rate = text[len(RUNS_MARKER) :].split()
        bp_id = key.split(":", 1)[0]
        bp = next(b for b in record.breakpoints if b.id == bp_id)
        if key != _hits_key(record, bp) + ":runs":
            return True  # a report for what the breakpoint was before an edit
        bp.runs, bp.runs_per_second = int(runs), float(rate)
        if bp.hit_condition:
            bp.hit_count = max(bp.hit_count, int(hits))
    except (ValueError, StopIteration):
        log.debug("unreadable runs report %r", text)
    return True


async def read_hits(session: Session, frame_id: int, hit: list[str]) -> None:
    """At a stop of a counted breakpoint, its hit count as the target counted it (every hit, not only
    the ones that stopped)."""
    client = live_client(session)
    record = session.record
    for bp in record.breakpoints:
        if client is None or bp.id not in hit or not bp.hit_condition:
            continue
        # launched: the start-up hook's checks count there; attached: the checks spelled out count in sys
        hits = (
            "getattr(__import__('sys').modules.get('_debugrelay_bp'), '_hits', {})"
            if record.mode == "launch"
            else "__import__('sys').__dict__.get('_debugrelay_hits', {})"
        )
        expression = f"{hits}.get({_hits_key(record, bp)!r}, 0)"
        with contextlib.suppress(RelayError, ValueError, TypeError):
            body = await client.request(
                "evaluate", {"expression": expression, "frameId": frame_id, "context": "clipboard"}
            )
            bp.hit_count = max(bp.hit_count, int(str(body.get("result", "0"))))


def on_hit(record: SessionRecord, dap_ids: list[int]) -> tuple[list[str], bool]:
    """Count hits for the breakpoints debugpy names; (their ids, whether the entry breakpoint hit)."""
    hit: list[str] = []
    entry = False
    for bp in record.breakpoints:
        if bp.dap_id is not None and bp.dap_id in dap_ids:
            if bp.internal:
                entry = True
                continue
            bp.hit_count += 1
            if bp.message == NEVER_HIT:
                bp.message = None
            if bp.kind == "function" and not bp.verified:  # a bare name debugpy matched at run time
                bp.verified = True
                bp.message = "Not found in the source, but debugpy matched the name at run time."
            hit.append(bp.id)
    return hit, entry


def reset_run(record: SessionRecord) -> None:
    """A new run starts: hit counts and the last run's notes are cleared."""
    for bp in record.breakpoints:
        bp.hit_count = 0
        bp.dap_id = None
        if is_runtime_note(bp.message):
            bp.message = None


def mark_unhit(record: SessionRecord) -> None:
    """After a run, say which verified breakpoints never hit."""
    for bp in record.breakpoints:
        if (
            bp.verified
            and bp.enabled
            and bp.hit_count == 0
            and not bp.internal
            and not bp.log_message
            and bp.message is None
        ):
            bp.message = NEVER_HIT
        bp.dap_id = None
