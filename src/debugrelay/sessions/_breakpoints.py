"""Breakpoints: validated from the source before debugpy sees them, then reconciled per file.

debugpy 1.8 answers ``verified: true`` for a blank line (moving it backwards), a line past the end,
or any function name, and never stops (nor says why) when a condition raises. The relay checks the
source itself, resolves function names to lines, counts hit conditions in the target and turns a
failing condition into a stop with a note, so the agent hears the truth.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import hashlib
import logging
import os
import re
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import (
    BreakpointNotFound,
    DebugpyError,
    FileNotFound,
    InvalidCondition,
    InvalidLine,
    InvalidRequest,
    InvalidState,
    RelayError,
)
from debugrelay.models import (
    BreakpointRecord,
    ExceptionFilters,
    ExceptionInfo,
    Input,
    LaunchRequest,
    SessionRecord,
)

from ._source import SourceInfo, analyze, check_syntax, find_functions, first_code_line, module_path

if TYPE_CHECKING:
    from debugrelay.dap import DapClient

    from ._session import Session

log = logging.getLogger(__name__)

NEVER_HIT = "Verified, but never hit during the run."
PENDING_FILE = "Source file not found. Breakpoint pending: it is verified and set as soon as the file appears."
PENDING_FUNCTION = (
    "Resolved when the program is launched: the relay looks the name up in the launched script, "
    "its folder, the working directory and PYTHONPATH."
)
CONDITION_RAISED = "The condition raised"
PENDING_POLL = 0.25  # seconds between looks for a pending breakpoint's file while a target runs
MAX_LINE = 2**31 - 1  # DAP line numbers are 32-bit
LISTING_LOCK_WAIT = 5.0  # seconds a listing waits for a busy session before answering as it is
EXCEPTION_FILTERS = ("raised", "uncaught", "userUnhandled")
BREAK_MODES = {"raised": "always", "uncaught": "unhandled", "userUnhandled": "userUnhandled"}
BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)
# debugpy's warning when a condition raises (pydevd.py, handle_breakpoint_condition)
_CONDITION_ERROR = "pydevd: Error while evaluating expression in conditional breakpoint: "
_RUNTIME_NOTES = (NEVER_HIT, CONDITION_RAISED)
_SYNC_NOTES = ("Shares line", "debugpy moved")


class BreakpointExists(InvalidState):
    code = "breakpoint_exists"
    default_hint = "Change the existing breakpoint, or remove it first."


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


@dataclass
class _Runtime:
    """Per-session state that lives only as long as the relay process (not stored)."""

    client: DapClient | None = None  # the connection our event listener is on
    sent_conditions: dict[str, str] = field(default_factory=dict)  # condition sent to debugpy → bp id
    watcher: bool = False
    filter_types: tuple[str, ...] = ()  # exception types the relay filters itself (debugpy cannot)
    condition_stops: bool = False  # debugpy agreed to stop when a condition raises


_RUNTIME: weakref.WeakKeyDictionary[Session, _Runtime] = weakref.WeakKeyDictionary()


def _runtime(session: Session) -> _Runtime:
    rt = _RUNTIME.get(session)
    if rt is None:
        rt = _RUNTIME[session] = _Runtime()
    return rt


def _live(session: Session) -> DapClient | None:
    client = session.client
    return client if client is not None and not client.closed.is_set() else None


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


def _compile_expression(text: str, what: str) -> str:
    """The expression as one normalized line (comments dropped); InvalidCondition if it does not compile."""
    try:
        tree = ast.parse(text.strip(), f"<{what}>", "eval")
        compile(tree, f"<{what}>", "eval")
    except SyntaxError as exc:
        raise InvalidCondition(
            f"{what} does not compile: SyntaxError: {exc.msg}",
            details={what: text, "error": f"SyntaxError: {exc.msg}", "offset": exc.offset},
        ) from None
    except ValueError as exc:  # e.g. a NUL byte
        raise InvalidCondition(f"{what} does not compile: {exc}", details={what: text, "error": str(exc)}) from None
    return ast.unparse(tree)


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
                    "log_message has an unclosed '{'",
                    details={"log_message": message, "offset": i},
                    hint="Write {expression} to interpolate a value, {{ and }} for literal braces.",
                )
            if not message[i + 1 : end].strip():
                raise InvalidCondition("log_message has an empty '{}'", details={"log_message": message, "offset": i})
            _compile_expression(message[i + 1 : end], "log_message")
            i = end + 1
        elif ch == "}" and i + 1 < n and message[i + 1] == "}":
            i += 2
        else:
            i += 1


_HIT_SIMPLE = re.compile(r"^(==|>=|<=|!=|>|<)?\s*(\d+)$")
_HIT_MODULO = re.compile(r"^%\s*(\d+)(?:\s*==\s*(\d+))?$")


def _parse_hit_condition(text: str) -> tuple[str, int, int]:
    """(operator, number, remainder) of a hit condition; InvalidCondition if not understood or never true."""
    expr = text.strip()
    simple, modulo = _HIT_SIMPLE.match(expr), _HIT_MODULO.match(expr)
    if simple:
        op, number = simple.group(1) or "==", int(simple.group(2))
        if (op in ("==", "<=") and number == 0) or (op == "<" and number <= 1):
            raise InvalidCondition(
                f"hit_condition '{text}' can never be true (hits count from 1)", details={"hit_condition": text}
            )
        return op, number, 0
    if modulo:
        number, rest = int(modulo.group(1)), int(modulo.group(2) or 0)
        if number == 0 or rest >= number:
            raise InvalidCondition(
                f"hit_condition '{text}' can never be true",
                details={"hit_condition": text},
                hint="Use '% N' or '% N == R' with 0 <= R < N.",
            )
        return "%", number, rest
    raise InvalidCondition(
        f"hit_condition '{text}' is not understood",
        details={"hit_condition": text},
        hint="Use N or '== N' (the Nth hit), '>= N', '> N', '<= N', '< N', '!= N', or '% N' / '% N == 0' "
        "(every Nth hit).",
    )


def normalize_hit_condition(text: str) -> str:
    """'5', '== 5', '>= 5', '% 5' or '% 5 == 0' → a canonical spelling; raises when not understood."""
    op, number, rest = _parse_hit_condition(text)
    if op == "%":
        return f"% {number}" + (f" == {rest}" if rest else "")
    return str(number) if text.strip().isdigit() else f"{op} {number}"


def validate_request(req: BreakpointRequest) -> BreakpointRequest:
    """Raise on input that can never work; nothing is changed when this raises."""
    path = req.source.path if req.source and req.source.path else (req.file or req.path)
    if req.function is not None:
        if not re.fullmatch(r"[\w.<>]+(:[\w.<>]+)?", req.function.strip()):
            raise InvalidRequest(
                f"'{req.function}' is not a function name",
                details={"function": req.function},
                hint="Use name, Class.method or package.module:function.",
            )
        if path or req.line is not None:
            raise InvalidRequest(
                "give either 'function', or 'source.path' and 'line', not both",
                details={"function": req.function, "file": path, "line": req.line},
            )
        req.function = req.function.strip()
    else:
        if not path:
            raise InvalidRequest(
                "a breakpoint needs 'source.path' and 'line', or 'function'",
                hint='e.g. {"source": {"path": "/code/main.py"}, "line": 10}',
            )
        if req.line is None:
            raise InvalidRequest("a line breakpoint needs 'line'", details={"file": path})
        if not 1 <= req.line <= MAX_LINE:
            raise InvalidLine(f"line {req.line} is not a line number", details={"file": path, "line": req.line})
        if "\0" in path:
            raise InvalidRequest("the path contains a NUL character", details={"file": path})
        if not os.path.isabs(path):
            raise InvalidRequest(
                f"breakpoint path '{path}' is not absolute",
                details={"file": path},
                hint="Give the absolute path of the source file.",
            )
        if os.path.isdir(path):
            raise InvalidRequest(f"'{path}' is a directory, not a source file", details={"file": path})
        path = os.path.normpath(path)
    req.condition = req.condition if req.condition and req.condition.strip() else None
    req.hit_condition = req.hit_condition if req.hit_condition and req.hit_condition.strip() else None
    req.log_message = req.log_message or None
    if req.condition:
        _compile_expression(req.condition, "condition")
    if req.hit_condition:
        req.hit_condition = normalize_hit_condition(req.hit_condition)
    if req.log_message:
        _check_log_message(req.log_message)
    req.file = path
    return req


def _describe(info: SourceInfo, line: int) -> str:
    text = info.lines[line - 1].strip()
    if not text:
        return "the line contains only whitespace"
    if text.startswith("#"):
        return "the line is a comment"
    if line in info.docstrings:
        return "the line is part of a docstring"
    code = text.split("#", 1)[0].strip()
    if code in ("else:", "finally:"):
        return f"a bare '{code}' has no code of its own (the first line of its block does)"
    return "the line has no code that runs (e.g. a continuation line, or code Python drops as unreachable)"


def verify_locally(bp: BreakpointRecord) -> None:
    """Decide from the source whether a line breakpoint can hit; raise InvalidLine past the end."""
    if bp.kind != "line" or bp.file is None or bp.line is None:
        return
    info = analyze(bp.file)
    bp.suggestion, bp.actual_line = None, None
    if info is None:
        bp.verified, bp.pending, bp.message = False, True, PENDING_FILE
        return
    if bp.line > len(info.lines):
        raise InvalidLine(
            f"line {bp.line} is past the end of {Path(bp.file).name} ({len(info.lines)} lines)",
            details={"file": bp.file, "line": bp.line, "max_line": len(info.lines)},
        )
    bp.pending = False
    if info.code_lines is None:
        bp.verified = False
        bp.message = f"The file does not compile ({info.error}); the breakpoint cannot be verified."
        return
    if bp.line in info.code_lines:
        bp.verified, bp.message = True, None
        fn = info.definition_of(bp.line)
        if fn is not None and fn.body_line is not None and fn.body_line > fn.header_end:
            bp.message = (
                f"Line {bp.line} runs when '{fn.qualname}' is defined (e.g. at import), "
                "not each time it is called. "
                f'To stop on every call use line {fn.body_line} or {{"function": "{fn.qualname}"}}.'
            )
            bp.suggestion = _suggestion(info, fn.body_line)
        return
    bp.verified = False
    bp.message = f"No executable code at line {bp.line}: {_describe(info, bp.line)}."
    nxt = info.suggest(bp.line)
    if nxt is not None:
        bp.suggestion = _suggestion(info, nxt)


def _suggestion(info: SourceInfo, line: int) -> dict[str, Any]:
    content = info.lines[line - 1].strip()
    return {"line": line, "content": content, "text": f"Try line {line} which contains: '{content}'"}


def _recheck(bp: BreakpointRecord) -> None:
    """verify_locally for a breakpoint already set: a line now past the end is reported, not raised."""
    try:
        verify_locally(bp)
    except InvalidLine as exc:
        bp.verified, bp.pending = False, False
        bp.message = exc.message


# -- function breakpoints ---------------------------------------------------------------------


def search_roots(record: SessionRecord) -> tuple[list[str], list[str]] | None:
    """(files and folders to search for functions, folders modules are found in); None before a launch."""
    spec = record.launch
    if spec is not None:
        cwd = spec.cwd or (os.path.dirname(spec.script) if spec.script else None) or os.getcwd()
        first: list[str] = []
        if spec.script:
            first.append(spec.script)
        elif spec.module:
            found = module_path(spec.module, cwd, spec.pythonpath)
            if found:
                first.append(found)
        folders = [cwd, *(os.path.dirname(f) for f in first), *spec.pythonpath]
        module_roots = _unique([cwd, *spec.pythonpath, *(os.path.dirname(f) for f in first)])
        return _unique([*first, *folders]), module_roots
    if record.attach is not None and record.attach.path_mappings:
        roots = _unique([m.local_root for m in record.attach.path_mappings])
        return roots, roots
    return None


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(os.path.normpath(i) for i in items if i))


def resolve_function(record: SessionRecord, bp: BreakpointRecord) -> None:
    """Turn a function breakpoint into a line breakpoint on the function's first body line.

    debugpy matches function breakpoints by bare ``co_name`` only (a qualified name never hits),
    so the relay finds the function in the source with ``ast`` and breaks on its first line.
    """
    name = bp.function or ""
    roots = search_roots(record)
    bp.suggestion, bp.actual_line = None, None
    if roots is None:
        bp.file, bp.line, bp.verified, bp.pending, bp.message = None, None, False, True, PENDING_FUNCTION
        return
    bp.pending = False
    files, module_roots = roots
    found = [f for f in find_functions(name, files, module_roots) if f.body_line is not None]
    if not found:
        bp.file, bp.line, bp.verified = None, None, False
        where = ", ".join(files[:4]) + (" ..." if len(files) > 4 else "")
        bp.message = f"No function '{name}' found in {where}."
        if "." not in name and ":" not in name:
            bp.message += (
                f" It is passed to debugpy by name: it pauses if any function called '{name}' is called "
                "(e.g. one in a library, or defined at run time)."
            )
        else:
            bp.message += " Check the name: Class.method, outer.inner or package.module:function."
        return
    script = files[0] if files and files[0].endswith(".py") else None
    found.sort(key=lambda f: (f.file != script, len(f.file), f.file, f.def_line))
    chosen = found[0]
    bp.file, bp.line, bp.verified = chosen.file, chosen.body_line, True
    bp.message = None
    if len(found) > 1:
        others = ", ".join(f"{f.qualname} ({f.file}:{f.def_line})" for f in found[1:4])
        bp.message = (
            f"'{name}' matches {len(found)} functions; set on {chosen.qualname} in {chosen.file}. "
            f"Qualify the name (Class.method or package.module:function) to pick another: {others}"
        )


# -- operations on a session ------------------------------------------------------------------


def _new_id(record: SessionRecord) -> str:
    bp_id = f"bp_{record.next_breakpoint}"
    record.next_breakpoint += 1
    return bp_id


def parse_requests(body: Any) -> tuple[list[BreakpointRequest], bool]:
    """Accept one breakpoint, a list, or {"breakpoints": [...]}; return (valid requests, was_many)."""
    reqs, many = decode_requests(body)
    return validate_all(reqs), many


def decode_requests(body: Any) -> tuple[list[BreakpointRequest], bool]:
    """Accept one breakpoint, a list, or {"breakpoints": [...]}; return (requests, was_many), unvalidated."""
    if not isinstance(body, list | dict):
        raise InvalidRequest(
            "a breakpoint must be a JSON object, or a list of them", hint='Send {"source": {"path": ...}, "line": N}.'
        )
    many = isinstance(body, list) or "breakpoints" in body
    items = body if isinstance(body, list) else body.get("breakpoints") if many else [body]
    if not isinstance(items, list) or not items:
        raise InvalidRequest("no breakpoint given", hint='Send {"source": {"path": ...}, "line": N}.')
    reqs: list[BreakpointRequest] = []
    for index, item in enumerate(items):
        try:
            reqs.append(msgspec.convert(item, BreakpointRequest))
        except msgspec.ValidationError as exc:
            raise InvalidRequest(
                f"invalid breakpoint{f' #{index + 1}' if many else ''}: {exc}",
                details={"index": index, "validation": str(exc)},
            ) from exc
    return reqs, many


def validate_all(reqs: list[BreakpointRequest]) -> list[BreakpointRequest]:
    """Every request checked (conditions compile, a line or a function given); the first bad one names
    its index and that none was set."""
    if not reqs:
        raise InvalidRequest("no breakpoint given", hint='Send {"source": {"path": ...}, "line": N}.')
    out = []
    for index, req in enumerate(reqs):
        try:
            out.append(validate_request(req))
        except RelayError as exc:
            if len(reqs) > 1:
                exc.details = {"index": index, **exc.details}
                exc.message = f"breakpoint #{index + 1}: {exc.message} (none of the {len(reqs)} was set)"
            raise
    return out


def record_from(req: BreakpointRequest) -> BreakpointRecord:
    return BreakpointRecord(
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


def _settings(bp: BreakpointRecord) -> tuple[Any, ...]:
    return (bp.condition, bp.hit_condition, bp.log_message, bp.enabled)


def _same_place(existing: list[BreakpointRecord], bp: BreakpointRecord) -> BreakpointRecord | None:
    for other in existing:
        if other.internal or other is bp or other.kind != bp.kind:
            continue
        if bp.kind == "line" and other.file == bp.file and other.line == bp.line:
            return other
        if bp.kind == "function" and other.function == bp.function:
            return other
    return None


def _conflict(existing: BreakpointRecord, bp: BreakpointRecord) -> BreakpointExists:
    where = f"{bp.file}:{bp.line}" if bp.kind == "line" else f"function '{bp.function}'"
    return BreakpointExists(
        f"{existing.id or 'another breakpoint in this request'} is already set at {where} with other settings",
        details={"breakpoint_id": existing.id, "file": bp.file, "line": bp.line, "function": bp.function},
    )


async def add(session: Session, requests: list[BreakpointRequest]) -> list[BreakpointRecord]:
    """Set breakpoints all-or-nothing; an identical breakpoint already set is returned as it is."""
    record = session.record
    result: list[BreakpointRecord] = []
    new: list[BreakpointRecord] = []
    for index, req in enumerate(requests):
        bp = record_from(req)
        try:
            verify_locally(bp)  # may raise: nothing has been changed yet
        except RelayError as exc:
            if len(requests) > 1:
                exc.details = {"index": index, **exc.details}
                exc.message = f"breakpoint #{index + 1}: {exc.message} (none of the {len(requests)} was set)"
            raise
        same = _same_place([*record.breakpoints, *new], bp)
        if same is not None:
            if _settings(same) != _settings(bp):
                raise _conflict(same, bp)
            result.append(same)
            continue
        new.append(bp)
        result.append(bp)
    for bp in new:
        if bp.kind == "function":
            resolve_function(record, bp)
    before, next_id = list(record.breakpoints), record.next_breakpoint
    for bp in new:
        bp.id = _new_id(record)
    record.breakpoints = [*record.breakpoints, *new]
    try:
        await _sync_changed(session, new)
    except BaseException:
        record.breakpoints, record.next_breakpoint = before, next_id
        with contextlib.suppress(RelayError):
            await _sync_changed(session, new)
        raise
    await session.save()
    _ensure_watcher(session)
    return result


def find(record: SessionRecord, bp_id: str) -> BreakpointRecord:
    for bp in record.breakpoints:
        if bp.id == bp_id and not bp.internal:
            return bp
    raise BreakpointNotFound(f"no breakpoint '{bp_id}' in session {record.id}", details={"breakpoint_id": bp_id})


async def remove(session: Session, bp_id: str) -> BreakpointRecord:
    bp = find(session.record, bp_id)
    before = list(session.record.breakpoints)
    session.record.breakpoints = [b for b in session.record.breakpoints if b is not bp]
    try:
        await _sync_changed(session, [bp])
    except BaseException:
        session.record.breakpoints = before
        raise
    await session.save()
    return bp


async def update(session: Session, bp_id: str, change: BreakpointUpdate) -> BreakpointRecord:
    """Change condition, hit condition, log message, enabled or line; all-or-nothing."""
    bp = find(session.record, bp_id)
    new = msgspec.structs.replace(bp)
    if change.condition is not None:
        new.condition = change.condition if change.condition.strip() else None
        if new.condition:
            _compile_expression(new.condition, "condition")
    if change.hit_condition is not None:
        text = change.hit_condition
        new.hit_condition = normalize_hit_condition(text) if text.strip() else None
    if change.log_message is not None:
        new.log_message = change.log_message or None
        if new.log_message:
            _check_log_message(new.log_message)
    if change.enabled is not None:
        new.enabled = change.enabled
    if change.line is not None:
        if bp.kind != "line":
            raise InvalidRequest(
                "only line breakpoints can move to another line",
                details={"breakpoint_id": bp_id},
                hint="Delete it and set a line breakpoint instead.",
            )
        if not 1 <= change.line <= MAX_LINE:
            raise InvalidLine(f"line {change.line} is not a line number", details={"line": change.line})
        new.line = change.line
        verify_locally(new)
        same = _same_place(session.record.breakpoints, new)
        if same is not None and same is not bp:
            raise _conflict(same, new)
    changed_test = (new.condition, new.hit_condition) != (bp.condition, bp.hit_condition)
    if changed_test and _is_runtime_note(new.message):
        new.message = None
    old = msgspec.structs.replace(bp)
    _copy_into(bp, new)
    try:
        await _sync_changed(session, [bp, old])
    except BaseException:
        _copy_into(bp, old)
        with contextlib.suppress(RelayError):
            await _sync_changed(session, [bp])
        raise
    await session.save()
    return bp


def _copy_into(target: BreakpointRecord, source: BreakpointRecord) -> None:
    for name in target.__struct_fields__:
        setattr(target, name, getattr(source, name))


def _is_runtime_note(message: str | None) -> bool:
    return bool(message) and any((message or "").startswith(n) for n in _RUNTIME_NOTES)


async def listing(session: Session) -> list[BreakpointRecord]:
    """The session's breakpoints, after re-checking pending ones (a missing file may have appeared)."""
    if any(_is_pending_file(b) for b in session.record.breakpoints):
        try:
            await asyncio.wait_for(session.lock.acquire(), LISTING_LOCK_WAIT)
        except TimeoutError:  # a long launch holds it; it re-checks pending breakpoints itself
            return [b for b in session.record.breakpoints if not b.internal]
        try:
            await recheck_pending(session)
        finally:
            session.lock.release()
    return [b for b in session.record.breakpoints if not b.internal]


def _exists(path: str | None) -> bool:
    return bool(path) and os.path.exists(path or "")


def _is_pending_file(bp: BreakpointRecord) -> bool:
    return bp.pending and bp.kind == "line" and bp.file is not None


async def recheck_pending(session: Session) -> bool:
    """Verify pending breakpoints whose file now exists and send them to debugpy; True if any changed."""
    changed = [b for b in session.record.breakpoints if _is_pending_file(b) and _exists(b.file)]
    if not changed:
        return False
    for bp in changed:
        _recheck(bp)
    await _sync_changed(session, changed)
    await session.save()
    return True


def _ensure_watcher(session: Session) -> None:
    """While a target runs with pending breakpoints, look for their files and set them once they appear."""
    rt = _runtime(session)
    client = _live(session)
    if rt.watcher or client is None or not any(_is_pending_file(b) for b in session.record.breakpoints):
        return
    rt.watcher = True

    async def watch() -> None:
        try:
            while session.client is client and not client.closed.is_set():
                pending = [b for b in session.record.breakpoints if _is_pending_file(b)]
                if not pending:
                    return
                if any(_exists(b.file) for b in pending):
                    async with session.lock:
                        with contextlib.suppress(RelayError):
                            await recheck_pending(session)
                await asyncio.sleep(PENDING_POLL)
        finally:
            rt.watcher = False

    session._spawn(watch())


# -- talking to debugpy -------------------------------------------------------------------------


async def _sync_changed(session: Session, changed: list[BreakpointRecord]) -> None:
    if _live(session) is None:
        return
    for path in sorted({b.file for b in changed if b.file}):
        await sync_file(session, path)
    if any(b.kind == "function" for b in changed):
        await sync_functions(session)


async def sync_all(session: Session) -> None:
    """Send every breakpoint of the session to debugpy (at configuration time of each connection)."""
    client = _live(session)
    if client is None:
        return
    await _install(session, client)
    record = session.record
    for bp in record.breakpoints:
        if bp.internal:
            continue
        if bp.kind == "function":
            resolve_function(record, bp)
        else:
            _recheck(bp)
    for path in sorted({b.file for b in record.breakpoints if b.file}):
        await sync_file(session, path)
    await sync_functions(session)
    _ensure_watcher(session)


async def _install(session: Session, client: DapClient) -> None:
    """Listen to this connection's events and ask debugpy to stop (not skip) when a condition raises."""
    rt = _runtime(session)
    if rt.client is client:
        return
    rt.client, rt.sent_conditions = client, {}
    client.add_listener(lambda event, body: _on_event(session, client, event, body))
    # debugpy's own default (debug mode "debugpy-dap") skips a breakpoint whose condition raises and
    # says nothing for a NameError; an empty skip list makes pydevd suspend and always warn.
    try:
        await client.request(
            "setDebuggerProperty",
            {"skipSuspendOnBreakpointException": [], "skipPrintBreakpointException": []},
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
        if text.startswith(_CONDITION_ERROR):
            _condition_failed(session, text[len(_CONDITION_ERROR) :])
    elif event == "stopped" and any(_is_pending_file(b) for b in session.record.breakpoints):
        session._spawn(_recheck_later(session))


async def _recheck_later(session: Session) -> None:
    async with session.lock:
        with contextlib.suppress(RelayError):
            await recheck_pending(session)


def _condition_failed(session: Session, rest: str) -> None:
    """debugpy reported a condition that raised: note it on the breakpoint and in the output."""
    rt = _runtime(session)
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


def _hit_test(record: SessionRecord, bp: BreakpointRecord) -> str | None:
    """A Python expression that counts this breakpoint's hits in the target and tests the hit condition.

    debugpy counts hits itself, but its count restarts whenever the file's breakpoints are sent
    again, and it stops when EITHER the hit condition OR the condition is true. Counting in the
    target (after the condition passed) gives AND, and a count that survives other edits.
    """
    if not bp.hit_condition:
        return None
    op, number, rest = _parse_hit_condition(bp.hit_condition)
    seed = f"{record.id}/{bp.id}/{bp.condition}/{bp.hit_condition}"
    key = f"{bp.id}:{hashlib.sha1(seed.encode()).hexdigest()[:10]}"
    test = f"d[k] % {number} == {rest}" if op == "%" else f"d[k] {op} {number}"
    return (
        f"(lambda d, k: d.__setitem__(k, d.get(k, 0) + 1) or {test})"
        f"(__import__('sys').__dict__.setdefault('_debugrelay_hits', {{}}), {key!r})"
    )


def _dap_args(record: SessionRecord, bp: BreakpointRecord) -> dict[str, Any]:
    args: dict[str, Any] = {}
    condition = _compile_expression(bp.condition, "condition") if bp.condition else None
    hits = _hit_test(record, bp)
    if condition and hits:
        args["condition"] = f"({condition}) and {hits}"
    elif condition or hits:
        args["condition"] = condition or hits
    if bp.log_message:
        args["logMessage"] = bp.log_message  # pydevd adds the newline itself
    return args


def _lead_order(bp: BreakpointRecord) -> tuple[int, int, int]:
    plain = not (bp.condition or bp.hit_condition or bp.log_message)
    number = int(bp.id[3:]) if bp.id.startswith("bp_") and bp.id[3:].isdigit() else 0
    return (0 if bp.internal else 1, 0 if plain else 1, number)


async def sync_file(session: Session, path: str) -> None:
    """Send the breakpoints of one file to debugpy (it replaces that file's set each time)."""
    client = _live(session)
    if client is None:
        return
    record = session.record
    rt = _runtime(session)
    members = [
        b
        for b in record.breakpoints
        if b.file == path and b.line is not None and b.enabled and b.verified and not b.pending
    ]
    by_line: dict[int, list[BreakpointRecord]] = {}
    for bp in members:
        if bp.message and bp.message.startswith(_SYNC_NOTES):  # recomputed below
            bp.message = None
    for bp in sorted(members, key=_lead_order):
        by_line.setdefault(bp.line or 0, []).append(bp)
    lines = sorted(by_line)
    sent = []
    for line in lines:
        lead = by_line[line][0]
        args = _dap_args(record, lead)
        if "condition" in args:
            rt.sent_conditions[args["condition"]] = lead.id
        sent.append({"line": line, **args})
    remote = session.target.to_remote_path(path) if session.target else path
    body = await client.request("setBreakpoints", {"source": {"path": remote}, "breakpoints": sent})
    for line, answer in zip(lines, body.get("breakpoints", []), strict=False):
        group = by_line[line]
        for bp in group:
            bp.dap_id = answer.get("id")
            actual = answer.get("line")
            bp.actual_line = actual if actual not in (None, line) else None
            if not answer.get("verified", False):
                bp.verified = False
                bp.message = answer.get("message") or "debugpy could not verify this breakpoint"
            elif bp.actual_line is not None:
                bp.message = f"debugpy moved this breakpoint to line {actual}; it pauses there."
            if bp is not group[0] and _settings(bp)[:3] != _settings(group[0])[:3]:
                lead_name = group[0].id or "the entry stop"
                bp.message = (
                    f"Shares line {line} with {lead_name}: debugpy keeps one breakpoint per line, "
                    f"so {lead_name}'s condition/hit condition/log message apply to both."
                )


async def sync_functions(session: Session) -> None:
    """Bare function names the relay could not find go to debugpy, which matches them by name."""
    client = _live(session)
    if client is None:
        return
    active = [
        b
        for b in session.record.breakpoints
        if b.kind == "function"
        and b.enabled
        and b.file is None
        and not b.pending
        and b.function
        and "." not in b.function
        and ":" not in b.function
    ]
    body = await client.request(
        "setFunctionBreakpoints",
        {"breakpoints": [{"name": b.function, **_dap_args(session.record, b)} for b in active]},
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
        if _is_runtime_note(bp.message):
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


def never_hit(bp: BreakpointRecord, ended: bool) -> bool:
    """Verified, enabled, not a logpoint, and the run that has ended never paused on it."""
    ran_through = bp.verified and bp.enabled and not bp.log_message and not bp.internal
    return ended and ran_through and bp.hit_count == 0


def view(bp: BreakpointRecord, ended: bool = False) -> dict[str, Any]:
    """The API's shape of a breakpoint: ``breakpoint_id``, ``verified`` and ``hit_count`` always present."""
    data = msgspec.to_builtins(bp)
    data.pop("dap_id", None)
    data.pop("internal", None)
    out = {
        "breakpoint_id": data.pop("id"),
        "kind": bp.kind,
        "verified": bp.verified,
        "enabled": bp.enabled,
        "hit_count": bp.hit_count,
    }
    out.update(data)
    if never_hit(bp, ended):
        out["never_hit"] = True
    return out


# -- exception breakpoints ----------------------------------------------------------------------


async def set_exception_filters(session: Session, filters: list[str], exception_types: list[str]) -> ExceptionFilters:
    """Validate, store and (when a target runs) apply exception breakpoints; all-or-nothing."""
    bad = [f for f in filters if f not in EXCEPTION_FILTERS]
    if bad:
        raise InvalidRequest(
            f"unknown exception filter(s): {', '.join(bad)}",
            details={"filters": bad, "allowed": list(EXCEPTION_FILTERS)},
            hint="Use raised, uncaught or userUnhandled.",
        )
    bad_types = [t for t in exception_types if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", t.strip())]
    if bad_types:
        raise InvalidRequest(
            "exception_types must be class names",
            details={"exception_types": bad_types},
            hint='e.g. ["KeyError", "myapp.errors.RetryableError"]',
        )
    wanted = ExceptionFilters(
        filters=list(dict.fromkeys(filters or (["raised"] if exception_types else []))),
        exception_types=[t.strip() for t in exception_types],
    )
    async with session.lock:
        previous = session.record.exception_filters
        session.record.exception_filters = wanted
        if _live(session) is not None:
            try:
                await apply_exception_filters(session)
            except BaseException:
                session.record.exception_filters = previous
                raise
        await session.save()
    return wanted


async def apply_exception_filters(session: Session) -> None:
    """Send the session's exception filters to debugpy.

    With ``exception_types`` that are all builtins, debugpy filters by ``issubclass`` itself
    (``exceptionOptions``). Other names are resolved by pydevd once, when they are set, by importing
    them, which fails for a class of the script being run (``__main__`` is not run yet); then the
    relay asks debugpy for every exception and lets through only the matching ones.
    """
    client = _live(session)
    if client is None:
        raise InvalidState(
            f"session is {session.status}: there is no running target", details={"status": session.status}
        )
    wanted = session.record.exception_filters or ExceptionFilters()
    rt = _runtime(session)
    types = [t.removeprefix("builtins.") for t in wanted.exception_types]
    args: dict[str, Any]
    if types and all(t in BUILTIN_EXCEPTIONS for t in types):
        args = {
            "filters": [],
            "exceptionOptions": [
                {"path": [{"names": ["Python Exceptions"]}, {"names": types}], "breakMode": BREAK_MODES[f]}
                for f in wanted.filters
            ],
        }
        filter_types: tuple[str, ...] = ()
    else:
        args = {"filters": list(wanted.filters)}
        filter_types = tuple(wanted.exception_types)
    await client.request("setExceptionBreakpoints", args)
    rt.filter_types = filter_types


async def exception_wanted(session: Session, frames: list[dict[str, Any]], info: ExceptionInfo) -> bool:
    """Whether an exception stop is one the agent asked for.

    debugpy's "raised" pauses again in every frame the same exception passes through on its way
    up (measured with debugpy 1.8.22); the relay pauses once per exception object. With
    ``exception_types`` the relay cannot hand to debugpy, it also checks the class and its bases.
    """
    rt = _runtime(session)
    if not rt.filter_types and info.break_mode != "always":
        return True
    facts = await _exception_facts(session, frames)
    if facts is None:
        return not rt.filter_types or any(_type_matches(t, [("", info.type)]) for t in rt.filter_types)
    seen_before, classes = facts
    if info.break_mode == "always" and seen_before:
        return False
    return not rt.filter_types or any(_type_matches(t, classes) for t in rt.filter_types)


# One flat string, because evaluate results abbreviate nested values as "(...)". The target keeps
# the last exception the relay looked at in sys.__dict__ (like sys.last_value): exceptions take no
# weak references, and ids are reused at once, so only the object itself tells "the same one".
_FACTS = (
    "'%d ' % (lambda d, e: (d.get('_debugrelay_last_exception') is e, "
    "d.__setitem__('_debugrelay_last_exception', e))[0])(__import__('sys').__dict__, __exception__[1])"
    " + ' '.join(c.__module__ + ':' + c.__qualname__ for c in __exception__[0].__mro__)"
)


async def _exception_facts(session: Session, frames: list[dict[str, Any]]) -> tuple[bool, list[tuple[str, str]]] | None:
    """(whether the relay already looked at this exception object, (module, qualname) of its classes)."""
    client = _live(session)
    if client is None or not frames:
        return None
    try:
        body = await client.request(
            "evaluate", {"expression": _FACTS, "frameId": frames[0]["id"], "context": "clipboard"}
        )
        seen, *classes = str(ast.literal_eval(body.get("result", ""))).split(" ")
    except (RelayError, ValueError, SyntaxError, TypeError):
        return None
    pairs = [c.partition(":") for c in classes]
    return seen == "1", [(module, qualname) for module, _, qualname in pairs]


def _type_matches(wanted: str, classes: list[tuple[str, str]]) -> bool:
    """``KeyError``, ``builtins.KeyError``, ``AppError`` or ``app.errors.AppError`` name a class or base."""
    for module, qualname in classes:
        if wanted in (qualname, qualname.rsplit(".", 1)[-1], f"{module}.{qualname}"):
            return True
    return False


# -- profiles -------------------------------------------------------------------------------------


def profile_entry(bp: BreakpointRecord, index: int) -> BreakpointRecord:
    """What a profile keeps of a breakpoint: the request, not what a run made of it."""
    return BreakpointRecord(
        id=f"p{index}",
        kind=bp.kind,
        file=bp.file if bp.kind == "line" else None,
        line=bp.line if bp.kind == "line" else None,
        function=bp.function,
        condition=bp.condition,
        hit_condition=bp.hit_condition,
        log_message=bp.log_message,
        enabled=bp.enabled,
    )


def requests_from_saved(saved: list[Any]) -> tuple[list[BreakpointRequest], list[dict[str, Any]]]:
    """Saved breakpoints (records or raw dicts) → valid requests, and a warning for each one skipped."""
    reqs: list[BreakpointRequest] = []
    skipped: list[dict[str, Any]] = []
    for index, item in enumerate(saved):
        try:
            bp = item if isinstance(item, BreakpointRecord) else msgspec.convert(item, BreakpointRecord)
            req = validate_request(
                BreakpointRequest(
                    file=bp.file if bp.kind == "line" else None,
                    line=bp.line if bp.kind == "line" else None,
                    function=bp.function if bp.kind == "function" else None,
                    condition=bp.condition,
                    hit_condition=bp.hit_condition,
                    log_message=bp.log_message,
                    enabled=bp.enabled,
                )
            )
            probe = record_from(req)
            verify_locally(probe)
            reqs.append(req)
        except (RelayError, msgspec.ValidationError, TypeError) as exc:
            plain = {"code": "invalid_data", "message": str(exc)}
            error = exc.to_dict() if isinstance(exc, RelayError) else plain
            log.warning("skipping saved breakpoint #%d: %s", index, error["message"])
            skipped.append({"index": index, "error": error})
    return reqs, skipped


async def apply_saved(session: Session, saved: list[Any]) -> tuple[list[BreakpointRecord], list[dict[str, Any]]]:
    """Set a profile's breakpoints; invalid or conflicting entries are skipped with a warning each."""
    reqs, skipped = requests_from_saved(saved)
    kept: list[BreakpointRequest] = []
    for req in reqs:
        probe = record_from(req)
        same = _same_place(session.record.breakpoints, probe)
        if same is not None and _settings(same) != _settings(probe):
            skipped.append({"index": None, "error": _conflict(same, probe).to_dict()})
            continue
        kept.append(req)
    created = await add(session, kept) if kept else []
    return created, skipped
