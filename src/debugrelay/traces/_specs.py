"""Which function a trace names: ``file:qualified name``, ``package.module:name`` or a bare name, found in the
session's sources with ``ast`` (the relay runs none of the program's code); an unknown one is refused with the
nearest names."""

from __future__ import annotations

import difflib
import itertools
import os
from dataclasses import dataclass

from debugrelay.errors import FileNotFound, FunctionNotFound
from debugrelay.models import SessionRecord
from debugrelay.sessions import SourceRoots, breakpoints
from debugrelay.sessions._source import FunctionInfo, find_functions, python_files

NEAREST = 5
NAMES_SCANNED = 100  # files read for the nearest names of an unknown bare name


@dataclass(frozen=True)
class Found:
    file: str
    qualname: str  # "Class.method", "outer.inner" (no "<locals>": the target matches either form)
    line: int
    others: tuple[str, ...] = ()  # more functions of that name ("file:qualname"), when the name was bare


def _is_path(text: str) -> bool:
    return text.endswith(".py") or "/" in text or os.sep in text


def split(function: str) -> tuple[str | None, str]:
    """(file or module, qualified name); the file part is None for a bare name."""
    where, colon, name = function.strip().rpartition(":")
    if not colon:
        return None, name.replace(".<locals>", "")
    if not name or not where:
        raise FunctionNotFound(
            f"'{function}' names no function",
            details={"function": function},
            hint="Give 'file path:Class.method', 'package.module:function' or a function's name.",
        )
    return where, name.replace(".<locals>", "")


def resolve(record: SessionRecord, roots: SourceRoots, function: str, workspace: list[str]) -> Found:
    """The function ``function`` names, in the session's sources: :class:`FunctionNotFound` with the nearest
    names when there is none (and :class:`Refused` for a file outside the session's folders). A bare or module
    name before a launch is looked for in ``workspace`` (the operator's folders), never in an interpreter's."""
    where, qualname = split(function)
    if where is not None and _is_path(where):
        path = where if os.path.isabs(where) else _relative(record, where)
        try:
            roots.check(path)  # Refused outside the folders
        except FileNotFound as exc:  # a function of a file that is not there is not found, like any other
            raise FunctionNotFound(
                f"no file '{path}'", details={"function": function, "file": path}, hint=exc.hint
            ) from exc
        info = roots.analyze(path)
        functions = list(info.functions) if info is not None else []
        hits = [f for f in functions if f.qualname == qualname]
        if not hits:
            raise _unknown(function, qualname, functions, file=path)
        return Found(file=os.path.normpath(path), qualname=qualname, line=hits[0].def_line)
    folders = breakpoints.search_roots(record)
    if folders is None:  # no launch yet: the operator's folders (not the interpreter's libraries)
        files = module_roots = roots.allowed(workspace)
    else:
        files, module_roots = (roots.allowed(group) for group in folders)
    name = f"{where}:{qualname}" if where is not None else qualname
    found = find_functions(name, files, module_roots, roots)
    if where is None:
        found = [f for f in found if f.qualname == qualname] or found
    if not found:
        nearby = [f for path in itertools.islice(python_files(files), NAMES_SCANNED) for f in _functions(roots, path)]
        raise _unknown(function, qualname, nearby)
    script = record.launch.script if record.launch is not None else None
    found.sort(key=lambda f: (f.file != script, len(f.file), f.file, f.def_line))
    first = found[0]
    return Found(
        file=first.file,
        qualname=first.qualname,
        line=first.def_line,
        others=tuple(f"{f.file}:{f.qualname}" for f in found[1:4]),
    )


def _relative(record: SessionRecord, path: str) -> str:
    launch = record.launch
    base = (launch.cwd or (os.path.dirname(launch.script) if launch.script else None)) if launch else None
    return os.path.normpath(os.path.join(base or os.getcwd(), path))


def _functions(roots: SourceRoots, path: str) -> list[FunctionInfo]:
    info = roots.analyze(path)
    return list(info.functions) if info is not None else []


def _unknown(function: str, qualname: str, functions: list[FunctionInfo], file: str | None = None) -> FunctionNotFound:
    names = sorted({f.qualname for f in functions})
    nearest = difflib.get_close_matches(qualname, names, n=NEAREST, cutoff=0.5)
    last = qualname.rsplit(".", 1)[-1]
    nearest += [n for n in names if n.rsplit(".", 1)[-1] == last and n not in nearest][: NEAREST - len(nearest)]
    where = f" in {file}" if file else ""
    details: dict[str, object] = {"function": function, "nearest": nearest}
    if file:
        details["file"] = file
        details["functions"] = names[:50]
    return FunctionNotFound(f"no function '{qualname}'{where}", details=details)
