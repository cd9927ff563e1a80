"""Reading the target's source on the relay side: syntax checks, executable lines, functions.

Everything here parses or compiles source text; nothing imports or runs the target's code.
"""

from __future__ import annotations

import ast
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import CodeType
from typing import Protocol

from debugrelay.errors import SyntaxErrorInScript

MAX_SOURCE_BYTES = 8 << 20  # no Python source is larger; /dev/zero is


def read_source(path: str, exact: bool = False) -> str | None:
    """The text of a regular file of at most MAX_SOURCE_BYTES, else None: a FIFO, a device or a huge
    file is never opened (one would block the relay, the other grow it without end).

    With ``exact``, ``path`` is already resolved (and checked by the caller): the file opened must be the
    one it names, so a folder swapped for a symlink between the check and the open leads nowhere else.
    """
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
            return None
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags | (getattr(os, "O_NOFOLLOW", 0) if exact else 0))
    except (OSError, ValueError):
        return None
    with os.fdopen(fd, "rb") as fh:
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode) or (exact and not _opened_is(fd, path)):
                return None
            data = fh.read(MAX_SOURCE_BYTES + 1)
        except OSError:
            return None
    return None if len(data) > MAX_SOURCE_BYTES else data.decode("utf-8", errors="replace")


def _opened_is(fd: int, path: str) -> bool:
    """Whether open file ``fd`` is the file at ``path`` (Linux says so in /proc/self/fd; elsewhere the
    opened file's device and inode are compared with the path's)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}") == path
    except OSError:
        try:
            a, b = os.fstat(fd), os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_syntax(path: str) -> None:
    """Raise :class:`SyntaxErrorInScript` with file, line, offset and text when ``path`` does not compile."""
    source = read_source(path)
    if source is None:
        return
    try:
        compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise SyntaxErrorInScript(
            f"{exc.__class__.__name__}: {exc.msg} ({Path(path).name}, line {exc.lineno})",
            details={
                "file": path,
                "line": exc.lineno,
                "offset": exc.offset,
                "message": exc.msg,
                "text": (exc.text or "").rstrip("\n"),
            },
        ) from None


@dataclass(frozen=True)
class FunctionInfo:
    """A ``def`` found in a file: where it is defined and where its body starts running."""

    qualname: str  # "Class.method", "outer.inner" (no "<locals>")
    file: str
    first_line: int  # first decorator, else the def line
    def_line: int
    header_end: int  # last line of the signature (default values run at definition time)
    body_line: int | None  # first line that runs when it is called
    end_line: int

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class SourceInfo:
    """What the relay knows about one file; ``code_lines`` is None when it does not compile."""

    lines: tuple[str, ...]
    code_lines: frozenset[int] | None
    error: str | None
    functions: tuple[FunctionInfo, ...]
    scopes: tuple[tuple[int, int], ...]  # (first_line, end_line) of every def and class
    docstrings: frozenset[int] = frozenset()  # lines inside a module/class/def docstring
    # first line -> last line of each statement (of a compound one, its header) spanning several lines
    multiline: dict[int, int] = field(default_factory=dict)
    comprehensions: frozenset[int] = frozenset()  # lines of a comprehension or generator expression

    def definition_of(self, line: int) -> FunctionInfo | None:
        """The function whose decorator/def/signature line ``line`` is: it runs at definition time."""
        for fn in self.functions:
            if fn.first_line <= line <= fn.header_end:
                return fn
        return None

    def suggest(self, line: int) -> int | None:
        """The executable line a breakpoint meant for ``line`` most likely wants.

        The next one in the innermost def/class around it; for a blank or comment line just after a
        function's last statement, that statement (the line belongs to the function above it, not to
        what follows); else the next one in the file, else the last one before it (e.g. a comment at
        the end of the file).
        """
        code = self.code_lines or frozenset()
        above = self._function_just_above(line)
        if above is not None:
            return above
        inner = [s for s in self.scopes if s[0] <= line <= s[1]]
        if inner:
            end = max(inner, key=lambda s: s[0])[1]
            after = [n for n in code if line < n <= end]
            if after:
                return min(after)
        after = [n for n in code if n > line]
        if after:
            return min(after)
        before = [n for n in code if n < line]
        return max(before) if before else None

    def _function_just_above(self, line: int) -> int | None:
        """The last statement of the function that ends right above ``line`` (a blank or comment line
        with only blank or comment lines in between), or None."""
        code = self.code_lines or frozenset()

        def quiet(n: int) -> bool:
            text = self.lines[n - 1].strip() if 0 < n <= len(self.lines) else ""
            return not text or text.startswith("#")

        if not quiet(line) or any(f.first_line <= line <= f.end_line for f in self.functions):
            return None
        prev = line - 1
        while prev > 0 and quiet(prev):
            prev -= 1
        ended = [f for f in self.functions if f.end_line == prev]
        if not ended:
            return None
        fn = max(ended, key=lambda f: f.first_line)  # the innermost one ending there
        body = [n for n in code if fn.header_end < n <= fn.end_line]
        return max(body) if body else None


def _walk(code: CodeType) -> Iterator[CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _walk(const)


def _code_lines(code: CodeType) -> frozenset[int]:
    # Every line with bytecode can fire a 'line' trace event when it runs, which is where debugpy
    # stops. Lines without bytecode (blank, comment, docstring continuation, a bare `else:` or
    # `finally:`, a closing bracket, code the compiler dropped as unreachable) never stop, and
    # debugpy would silently move such a breakpoint to the line before.
    lines: set[int] = set()
    for co in _walk(code):
        lines.update(line for _, _, line in co.co_lines() if line is not None and line > 0)
    return frozenset(lines)


def _is_docstring(stmt: ast.stmt) -> bool:
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _multiline_statements(tree: ast.Module) -> dict[int, int]:
    """First line -> last line of every statement that spans lines; a compound statement's span is its
    header (``if (a and\n b):``), its body being statements of their own."""
    spans: dict[int, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            first = min([body[0].lineno, *(d.lineno for d in getattr(body[0], "decorator_list", []))])
            end = max(node.lineno, first - 1)
        else:
            end = node.end_lineno or node.lineno
        if end > node.lineno:
            spans[node.lineno] = max(end, spans.get(node.lineno, 0))
    return spans


def _comprehension_lines(tree: ast.Module) -> frozenset[int]:
    """Lines holding part of a comprehension or generator expression: code of its own that Python 3.11 runs
    in a frame of its own (3.12+ for a generator expression), a 'line' event there per item."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return frozenset(lines)


def _docstring_lines(tree: ast.Module) -> frozenset[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if node.body and _is_docstring(node.body[0]):
            doc = node.body[0]
            lines.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    return frozenset(lines)


def _functions(tree: ast.Module, path: str, code: frozenset[int]) -> tuple[list[FunctionInfo], list[tuple[int, int]]]:
    functions: list[FunctionInfo] = []
    scopes: list[tuple[int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                scopes.append((first, end))
                qualname = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    body = child.body
                    start = body[1].lineno if len(body) > 1 and _is_docstring(body[0]) else body[0].lineno
                    header_end = max(child.lineno, body[0].lineno - 1)
                    runs = [n for n in code if start <= n <= end]
                    body_line = min(runs) if runs else (child.lineno if child.lineno in code else None)
                    functions.append(FunctionInfo(qualname, path, first, child.lineno, header_end, body_line, end))
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return functions, scopes


@lru_cache(maxsize=512)
def _analyze_cached(path: str, real: str | None, mtime: float, size: int) -> SourceInfo | None:
    source = read_source(real, exact=True) if real else read_source(path)
    if source is None:
        return None
    lines = tuple(source.splitlines())
    try:
        code = compile(source, path, "exec", dont_inherit=True)
        tree = ast.parse(source, path)
    except (SyntaxError, ValueError) as exc:
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        return SourceInfo(lines, None, f"{exc.__class__.__name__}: {exc}{where}", (), ())
    code_lines = _code_lines(code)
    functions, scopes = _functions(tree, path, code_lines)
    return SourceInfo(
        lines,
        code_lines,
        None,
        tuple(functions),
        tuple(scopes),
        _docstring_lines(tree),
        _multiline_statements(tree),
        _comprehension_lines(tree),
    )


def analyze(path: str, real: str | None = None) -> SourceInfo | None:
    """Lines, executable lines and functions of ``path`` (cached until it changes); None if unreadable.
    ``real``: ``path`` resolved and checked by the caller, the file actually read."""
    try:
        st = Path(real or path).stat()
    except OSError:
        return None
    if not os.path.isfile(real or path):
        return None
    return _analyze_cached(str(path), real, st.st_mtime_ns, st.st_size)


def executable_lines(path: str) -> frozenset[int] | None:
    """Lines with bytecode in ``path``; None when it cannot be read or compiled."""
    info = analyze(path)
    return None if info is None else info.code_lines


def first_code_line(path: str) -> int | None:
    """The first line of ``path`` that executes when it runs as a script."""
    source = read_source(path)
    if source is None:
        return None
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    lines = [line for _, _, line in code.co_lines() if line is not None and line > 0]
    return min(lines) if lines else None


def module_path(module: str, cwd: str | None, extra: list[str] | None = None) -> str | None:
    """Where ``python -m module`` would find the module's code, searched in ``cwd`` and ``extra``.

    Found by walking folders, never by importing: the relay runs no code of the target.
    """
    parts = module.split(".")
    for root in [p for p in [cwd, *(extra or [])] if p]:
        base = Path(root).joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__main__.py", base / "__init__.py"):
            if os.path.isfile(candidate):  # False for a name too long, as for a missing one
                return str(candidate)
    return None


# -- function lookup ----------------------------------------------------------------------------

SKIP_DIRS = {"__pycache__", "site-packages", "dist-packages", "node_modules", "build", "dist"}
MAX_FILES = 5000
MAX_DEPTH = 8


def python_files(roots: list[str]) -> Iterator[str]:
    """``*.py`` files under ``roots`` (a root may be a file), skipping virtualenvs, caches, hidden dirs."""
    seen: set[str] = set()
    count = 0
    for root in roots:
        if os.path.isfile(root):
            if root not in seen:
                seen.add(root)
                count += 1
                yield root
            continue
        base_depth = root.rstrip(os.sep).count(os.sep)
        for folder, dirs, files in os.walk(root):
            if folder.count(os.sep) - base_depth >= MAX_DEPTH:
                dirs[:] = []
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".")
                and d not in SKIP_DIRS
                and not os.path.exists(os.path.join(folder, d, "pyvenv.cfg"))
            )
            for name in sorted(files):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(folder, name)
                if path in seen:
                    continue
                seen.add(path)
                count += 1
                if count > MAX_FILES:
                    return
                yield path


def _matches(qualname: str, wanted: str) -> bool:
    return qualname == wanted or qualname.endswith("." + wanted)


class SourceReader(Protocol):
    """Reads files only where it allows (a session's folders): ``None`` for a file it does not."""

    def read(self, path: str) -> str | None: ...

    def analyze(self, path: str) -> SourceInfo | None: ...


def find_functions(
    name: str, roots: list[str], cwd_roots: list[str] | None = None, reader: SourceReader | None = None
) -> list[FunctionInfo]:
    """Functions called ``name`` in the files under ``roots`` (read through ``reader`` when given).

    ``name`` is ``func``, ``Class.method``, ``outer.inner`` or ``package.module:func``; a dotted name
    with no match is also tried as ``package.module.func``. Module paths are searched in
    ``cwd_roots`` (the launch's cwd, its script's folder and PYTHONPATH).
    """
    read = reader.read if reader is not None else read_source
    look = reader.analyze if reader is not None else analyze
    wanted = name.replace(".<locals>", "").strip()
    if ":" in wanted:
        module, _, qualname = wanted.partition(":")
        return _in_module(module, qualname, cwd_roots or roots, look)
    last = wanted.rsplit(".", 1)[-1]
    found: list[FunctionInfo] = []
    for path in python_files(roots):
        text = read(path)
        if text is None or f"def {last}" not in text:
            continue
        info = look(path)
        if info is not None:
            found.extend(fn for fn in info.functions if _matches(fn.qualname, wanted))
    if found or "." not in wanted:
        return found
    parts = wanted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        hits = _in_module(".".join(parts[:cut]), ".".join(parts[cut:]), cwd_roots or roots, look)
        if hits:
            return hits
    return []


def _in_module(
    module: str, qualname: str, roots: list[str], look: Callable[[str], SourceInfo | None]
) -> list[FunctionInfo]:
    for root in roots:
        if not os.path.isdir(root):
            continue
        path = module_path(module, root)
        if path is None:
            continue
        info = look(path)
        if info is not None:
            return [fn for fn in info.functions if fn.qualname == qualname]
    return []
