"""Reading the target's source on the relay side: syntax checks and executable lines."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from types import CodeType

from debugrelay.errors import SyntaxErrorInScript


def read_source(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


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


def _walk(code: CodeType) -> list[CodeType]:
    out = [code]
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out.extend(_walk(const))
    return out


@lru_cache(maxsize=256)
def _lines_cached(path: str, mtime: float, size: int) -> frozenset[int] | None:
    source = read_source(path)
    if source is None:
        return None
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    lines: set[int] = set()
    for co in _walk(code):
        lines.update(line for _, _, line in co.co_lines() if line is not None and line > 0)
        # a def/class header line runs when the function object is built, not when it is called
    return frozenset(lines)


def executable_lines(path: str) -> frozenset[int] | None:
    """Lines with bytecode in ``path``; None when it cannot be read or compiled."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return _lines_cached(str(path), st.st_mtime, st.st_size)


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
        for candidate in (base.with_suffix(".py"), base / "__main__.py"):
            if candidate.is_file():
                return str(candidate)
    return None
