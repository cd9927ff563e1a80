"""Breakpoints: validated from the source before debugpy sees them, then reconciled per file.

debugpy answers ``verified: true`` for a blank line (moving it backwards), a line past the end,
or an unknown function; the relay checks the source itself so the agent hears the truth.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import BreakpointNotFound, FileNotFound, InvalidCondition, InvalidLine, InvalidRequest
from debugrelay.models import BreakpointRecord, Input, LaunchRequest, SessionRecord

from ._source import check_syntax, executable_lines, first_code_line, module_path, read_source

if TYPE_CHECKING:
    from ._session import Session


class SourceRef(Input):
    path: str | None = None
    name: str | None = None


class BreakpointRequest(Input):
    """One breakpoint as an agent asks for it: a line (``source.path``/``file`` + ``line``) or a function."""

    source: SourceRef | None = None
    file: str | None = None
    path: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool = True


class BreakpointUpdate(Input):
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    enabled: bool | None = None
    line: int | None = None


# -- launch ---------------------------------------------------------------------------------


def prepare_launch(spec: LaunchRequest) -> str | None:
    """Check a launch before anything starts; return the script's path (None for modules)."""
    if bool(spec.script) == bool(spec.module):
        raise InvalidRequest(
            "give exactly one of 'script' or 'module'",
            details={"script": spec.script, "module": spec.module},
            hint='e.g. {"script": "/abs/path/main.py"} or {"module": "pytest", "args": ["-x"]}',
        )
    if spec.cwd and not Path(spec.cwd).is_dir() and spec.launcher != "docker":
        raise InvalidRequest(f"working directory '{spec.cwd}' does not exist", details={"cwd": spec.cwd})
    if spec.module:
        return module_path(spec.module, spec.cwd, spec.pythonpath)
    script = spec.script or ""
    if not os.path.isabs(script):
        script = os.path.join(spec.cwd or os.getcwd(), script)
        spec.script = script
    if not Path(script).is_file():
        raise FileNotFound(f"script '{script}' not found", details={"file": script})
    check_syntax(script)
    return script


def entry_breakpoint(record: SessionRecord, spec: LaunchRequest, script: str | None) -> BreakpointRecord | None:
    """An internal breakpoint on the first line that runs, for ``stop_on_entry``."""
    if script is None:
        return None
    line = first_code_line(script)
    if line is None:
        return None
    bp = BreakpointRecord(id="entry", file=script, line=line, verified=True, internal=True)
    record.breakpoints = [b for b in record.breakpoints if not b.internal] + [bp]
    return bp


async def drop_entry(session: Session) -> None:
    entry = [b for b in session.record.breakpoints if b.internal]
    if not entry:
        return
    session.record.breakpoints = [b for b in session.record.breakpoints if not b.internal]
    for path in {b.file for b in entry if b.file}:
        await sync_file(session, path)


# -- validation -----------------------------------------------------------------------------


def _check_expression(text: str, what: str) -> None:
    try:
        compile(text, f"<{what}>", "eval")
    except SyntaxError as exc:
        raise InvalidCondition(
            f"{what} does not compile: SyntaxError: {exc.msg}",
            details={what: text, "error": f"SyntaxError: {exc.msg}", "offset": exc.offset},
        ) from None


def _check_log_message(message: str) -> None:
    """Each ``{expr}`` of a logpoint message must compile ({{ and }} are literal braces)."""
    i, n = 0, len(message)
    while i < n:
        ch = message[i]
        if ch == "{":
            if i + 1 < n and message[i + 1] == "{":
                i += 2
                continue
            end = message.find("}", i)
            if end < 0:
                raise InvalidCondition(
                    "log_message has an unclosed '{'", details={"log_message": message, "offset": i}
                )
            _check_expression(message[i + 1 : end], "log_message")
            i = end + 1
        else:
            i += 1


_HIT_FORMS = ("==", ">=", "<=", ">", "<", "%")


def normalize_hit_condition(text: str) -> str:
    """'5', '== 5', '>= 5', '% 5' or '% 5 == 0' → the form debugpy understands."""
    expr = text.strip()
    if expr.isdigit():
        return expr
    for form in _HIT_FORMS:
        if expr.startswith(form):
            rest = expr[len(form) :].strip()
            if form == "%":
                number = rest.split("==")[0].strip()
                if number.isdigit() and int(number) > 0:
                    return f"% {number}"
            elif rest.isdigit():
                return f"{form} {rest}"
    raise InvalidCondition(
        f"hit_condition '{text}' is not understood",
        details={"hit_condition": text},
        hint="Use N, '== N', '>= N', '> N' or '% N' (every Nth hit).",
    )


def validate_request(req: BreakpointRequest) -> BreakpointRequest:
    """Raise on input that can never work; nothing is changed when this raises."""
    path = req.source.path if req.source and req.source.path else (req.file or req.path)
    if req.function is None:
        if not path:
            raise InvalidRequest(
                "a breakpoint needs 'source.path' and 'line', or 'function'",
                hint='e.g. {"source": {"path": "/code/main.py"}, "line": 10}',
            )
        if req.line is None:
            raise InvalidRequest("a line breakpoint needs 'line'", details={"file": path})
        if req.line < 1:
            raise InvalidLine(f"line {req.line} is not a line number", details={"file": path, "line": req.line})
        if not os.path.isabs(path):
            raise InvalidRequest(
                f"breakpoint path '{path}' is not absolute", details={"file": path},
                hint="Give the absolute path of the source file.",
            )
    if req.condition:
        _check_expression(req.condition, "condition")
    if req.hit_condition:
        req.hit_condition = normalize_hit_condition(req.hit_condition)
    if req.log_message:
        _check_log_message(req.log_message)
    req.file = path
    return req


def verify_locally(bp: BreakpointRecord) -> None:
    """Decide from the source whether a line breakpoint can hit; raise InvalidLine past the end."""
    if bp.kind != "line" or bp.file is None or bp.line is None:
        return
    source = read_source(bp.file)
    if source is None:
        bp.verified, bp.pending = False, True
        bp.message = "Source file not found. Breakpoint pending."
        return
    lines = source.splitlines()
    if bp.line > len(lines):
        raise InvalidLine(
            f"line {bp.line} is past the end of {Path(bp.file).name} ({len(lines)} lines)",
            details={"file": bp.file, "line": bp.line, "max_line": len(lines)},
        )
    bp.pending = False
    code_lines = executable_lines(bp.file)
    if code_lines is None:
        bp.verified = False
        bp.message = "The file does not compile; the breakpoint cannot be verified."
        return
    if bp.line in code_lines:
        bp.verified, bp.message, bp.suggestion = True, None, None
        return
    content = lines[bp.line - 1]
    after = sorted(n for n in code_lines if n > bp.line)
    bp.verified = False
    what = "only whitespace" if not content.strip() else (
        "a comment" if content.strip().startswith("#") else "no executable code"
    )
    bp.message = f"No executable code at line {bp.line}: the line contains {what}."
    if after:
        nxt = after[0]
        bp.suggestion = {"line": nxt, "content": lines[nxt - 1].strip(),
                         "text": f"Try line {nxt} which contains: '{lines[nxt - 1].strip()}'"}


# -- operations on a session ------------------------------------------------------------------


def _new_id(record: SessionRecord) -> str:
    bp_id = f"bp_{record.next_breakpoint}"
    record.next_breakpoint += 1
    return bp_id


def parse_requests(body: Any) -> tuple[list[BreakpointRequest], bool]:
    """Accept one breakpoint, a list, or {"breakpoints": [...]}; return (requests, was_many)."""
    many = isinstance(body, list) or (isinstance(body, dict) and "breakpoints" in body)
    items = body if isinstance(body, list) else body.get("breakpoints") if many else [body]
    if not isinstance(items, list) or not items:
        raise InvalidRequest("no breakpoint given", hint='Send {"source": {"path": ...}, "line": N}.')
    try:
        reqs = [msgspec.convert(item, BreakpointRequest) for item in items]
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid breakpoint: {exc}", details={"validation": str(exc)}) from exc
    return [validate_request(r) for r in reqs], many


async def add(session: Session, requests: list[BreakpointRequest]) -> list[BreakpointRecord]:
    record = session.record
    created: list[BreakpointRecord] = []
    for req in requests:
        bp = BreakpointRecord(
            id="",
            kind="function" if req.function else "line",
            file=req.file if not req.function else None,
            line=req.line if not req.function else None,
            function=req.function,
            condition=req.condition or None,
            hit_condition=req.hit_condition or None,
            log_message=req.log_message or None,
            enabled=req.enabled,
        )
        verify_locally(bp)  # may raise: nothing has been changed yet
        if bp.kind == "function":
            bp.verified = True
        created.append(bp)
    for bp in created:
        bp.id = _new_id(record)
    record.breakpoints = [*record.breakpoints, *created]
    await _sync_changed(session, created)
    await session.save()
    return created


def find(record: SessionRecord, bp_id: str) -> BreakpointRecord:
    for bp in record.breakpoints:
        if bp.id == bp_id and not bp.internal:
            return bp
    raise BreakpointNotFound(f"no breakpoint '{bp_id}' in session {record.id}", details={"breakpoint_id": bp_id})


async def remove(session: Session, bp_id: str) -> BreakpointRecord:
    bp = find(session.record, bp_id)
    session.record.breakpoints = [b for b in session.record.breakpoints if b is not bp]
    await _sync_changed(session, [bp])
    await session.save()
    return bp


async def update(session: Session, bp_id: str, change: BreakpointUpdate) -> BreakpointRecord:
    bp = find(session.record, bp_id)
    if change.condition:
        _check_expression(change.condition, "condition")
    hit = normalize_hit_condition(change.hit_condition) if change.hit_condition else change.hit_condition
    if change.log_message:
        _check_log_message(change.log_message)
    if change.line is not None and bp.kind == "line":
        probe = msgspec.structs.replace(bp, line=change.line)
        verify_locally(probe)
        bp.line, bp.verified, bp.message, bp.suggestion, bp.pending = (
            probe.line, probe.verified, probe.message, probe.suggestion, probe.pending)
    if change.condition is not None:
        bp.condition = change.condition or None
    if change.hit_condition is not None:
        bp.hit_condition = hit or None
    if change.log_message is not None:
        bp.log_message = change.log_message or None
    if change.enabled is not None:
        bp.enabled = change.enabled
    await _sync_changed(session, [bp])
    await session.save()
    return bp


async def _sync_changed(session: Session, changed: list[BreakpointRecord]) -> None:
    if session.client is None or session.client.closed.is_set():
        return
    for path in {b.file for b in changed if b.kind == "line" and b.file}:
        await sync_file(session, path)
    if any(b.kind == "function" for b in changed):
        await sync_functions(session)


async def sync_all(session: Session) -> None:
    """Send every breakpoint of the session to debugpy (at configuration time)."""
    for path in {b.file for b in session.record.breakpoints if b.kind == "line" and b.file}:
        await sync_file(session, path)
    await sync_functions(session)


def _dap_args(bp: BreakpointRecord) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if bp.condition:
        args["condition"] = bp.condition
    if bp.hit_condition:
        args["hitCondition"] = bp.hit_condition
    if bp.log_message:
        args["logMessage"] = bp.log_message if bp.log_message.endswith("\n") else bp.log_message + "\n"
    return args


async def sync_file(session: Session, path: str) -> None:
    client = session.client
    if client is None:
        return
    record = session.record
    for bp in record.breakpoints:
        if bp.kind == "line" and bp.file == path and bp.pending:
            verify_locally(bp)
    active = [
        b for b in record.breakpoints
        if b.kind == "line" and b.file == path and b.enabled and b.verified and not b.pending
    ]
    remote = session.target.to_remote_path(path) if session.target else path
    body = await client.request(
        "setBreakpoints",
        {"source": {"path": remote}, "breakpoints": [{"line": b.line, **_dap_args(b)} for b in active]},
    )
    for bp, answer in zip(active, body.get("breakpoints", []), strict=False):
        bp.dap_id = answer.get("id")
        bp.actual_line = answer.get("line")
        if not answer.get("verified", False):
            bp.verified = False
            bp.message = answer.get("message") or "debugpy could not verify this breakpoint"


async def sync_functions(session: Session) -> None:
    client = session.client
    if client is None:
        return
    active = [b for b in session.record.breakpoints if b.kind == "function" and b.enabled]
    body = await client.request(
        "setFunctionBreakpoints",
        {"breakpoints": [{"name": b.function, **_dap_args(b)} for b in active]},
    )
    for bp, answer in zip(active, body.get("breakpoints", []), strict=False):
        bp.dap_id = answer.get("id")


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
            hit.append(bp.id)
    return hit, entry


def reset_run(record: SessionRecord) -> None:
    """A new run starts: hit counts and the last run's never-hit notes are cleared."""
    for bp in record.breakpoints:
        bp.hit_count = 0
        bp.dap_id = None
        if bp.message == NEVER_HIT:
            bp.message = None


NEVER_HIT = "Verified, but never hit during the run."


def mark_unhit(record: SessionRecord) -> None:
    """After a run, say which verified breakpoints never hit."""
    for bp in record.breakpoints:
        if bp.verified and bp.enabled and bp.hit_count == 0 and not bp.internal and not bp.log_message:
            bp.message = NEVER_HIT
        bp.dap_id = None
