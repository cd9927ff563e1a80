"""Breakpoints checked against the source: lines that run, suggestions, functions resolved to lines."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from debugrelay.errors import InvalidLine
from debugrelay.models import BreakpointRecord, BreakpointSuggestion, SessionRecord

from .._source import SourceInfo, find_functions, module_path
from ._common import PENDING_FILE, PENDING_FUNCTION, UNCHECKED_FILE

if TYPE_CHECKING:
    from .._files import SourceRoots


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


def verify_locally(bp: BreakpointRecord, roots: SourceRoots) -> None:
    """Decide from the source whether a line breakpoint can hit; raise InvalidLine past the end. A file
    outside ``roots`` is not read: debugpy checks the line in the program instead."""
    if bp.kind != "line" or bp.file is None or bp.line is None:
        return
    bp.suggestion, bp.actual_line = None, None
    if roots.resolve(bp.file) is None:
        bp.verified, bp.pending, bp.message = True, False, UNCHECKED_FILE
        return
    info = roots.analyze(bp.file)
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


def _suggestion(info: SourceInfo, line: int) -> BreakpointSuggestion:
    content = info.lines[line - 1].strip()
    return BreakpointSuggestion(line=line, content=content, text=f"Try line {line} which contains: '{content}'")


def recheck(bp: BreakpointRecord, roots: SourceRoots) -> None:
    """verify_locally for a breakpoint already set: a line now past the end is reported, not raised."""
    try:
        verify_locally(bp, roots)
    except InvalidLine as exc:
        bp.verified, bp.pending = False, False
        bp.message = exc.message


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


def resolve_function(record: SessionRecord, bp: BreakpointRecord, roots: SourceRoots) -> None:
    """Turn a function breakpoint into a line breakpoint on the function's first body line.

    debugpy matches function breakpoints by bare ``co_name`` only (a qualified name never hits),
    so the relay finds the function in the source with ``ast`` and breaks on its first line.
    """
    name = bp.function or ""
    folders = search_roots(record)
    bp.suggestion, bp.actual_line = None, None
    if folders is None:
        bp.file, bp.line, bp.verified, bp.pending, bp.message = None, None, False, True, PENDING_FUNCTION
        return
    bp.pending = False
    files, module_roots = (roots.allowed(group) for group in folders)  # searched only where files are read
    found = [f for f in find_functions(name, files, module_roots, roots) if f.body_line is not None]
    if not found:
        bp.file, bp.line, bp.verified = None, None, False
        where = ", ".join(files[:4]) + (" ..." if len(files) > 4 else "") or "no folder this relay reads sources from"
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
