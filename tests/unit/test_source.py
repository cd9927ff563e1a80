"""What the relay reads from source without running it: executable lines, definitions, functions."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from debugrelay.sessions._source import analyze, executable_lines, find_functions, python_files
from tests.conftest import line_of, target

LINES = target("bp_lines.py")
COUNTER = target("bp_counter.py")
TARGETS = str(Path(LINES).parent)


def traced_lines(path: str) -> set[int]:
    """Lines of ``path`` that fire a 'line' trace event when it runs: where a debugger can stop."""
    seen: set[int] = set()
    code = compile(Path(path).read_text(), path, "exec")

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == path and event == "line":
            seen.add(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        exec(code, {"__name__": "__main__"})
    finally:
        sys.settrace(previous)
    return seen


def test_every_line_that_stops_is_executable() -> None:
    code = executable_lines(LINES)
    assert code is not None
    assert traced_lines(LINES) <= code


@pytest.mark.parametrize(
    "marker",
    ["comment-line", "bare-else", "docstring-end", "closing-bracket", "last-comment", "only-docstring"],
)
def test_lines_without_code_are_not_executable(marker: str) -> None:
    code = executable_lines(LINES)
    assert code is not None
    assert line_of(LINES, marker) not in code


@pytest.mark.parametrize(
    "marker",
    ["decorator-line", "def-line", "first-body-line", "if-body", "else-body", "open-bracket", "return-line"],
)
def test_lines_with_code_are_executable(marker: str) -> None:
    code = executable_lines(LINES)
    assert code is not None
    assert line_of(LINES, marker) in code


def test_blank_lines_and_docstring_continuations_are_not_executable() -> None:
    code = executable_lines(LINES)
    assert code is not None
    text = Path(LINES).read_text().splitlines()
    blank = {n for n, line in enumerate(text, 1) if not line.strip()}
    assert blank
    assert not blank & code
    assert 2 not in code
    assert 3 not in code


def test_definition_lines_point_at_the_body() -> None:
    info = analyze(LINES)
    assert info is not None
    for marker in ("decorator-line", "def-line"):
        fn = info.definition_of(line_of(LINES, marker))
        assert fn is not None
        assert fn.qualname == "decorated"
        assert fn.body_line == line_of(LINES, "first-body-line")
    assert info.definition_of(line_of(LINES, "first-body-line")) is None


def test_suggestion_is_the_next_line_in_the_same_function() -> None:
    info = analyze(LINES)
    assert info is not None
    assert info.suggest(line_of(LINES, "bare-else")) == line_of(LINES, "else-body")
    assert info.suggest(line_of(LINES, "docstring-end")) == line_of(LINES, "first-body-line")
    assert info.suggest(line_of(LINES, "last-comment")) == line_of(LINES, "call-decorated") + 1
    # a blank line right after a function belongs to it: its last statement, not what follows
    assert info.suggest(line_of(LINES, "return-line") + 2) == line_of(LINES, "return-line")
    assert info.suggest(line_of(LINES, "area-body") + 1) == line_of(LINES, "area-body")


def test_docstring_lines_are_known() -> None:
    info = analyze(LINES)
    assert info is not None
    assert {1, 2, 3, line_of(LINES, "docstring-end"), line_of(LINES, "only-docstring")} <= info.docstrings


def test_a_file_that_does_not_compile_has_no_code_lines(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def broken(:\n    return 1\n")
    info = analyze(str(broken))
    assert info is not None
    assert info.code_lines is None
    assert info.error
    assert "SyntaxError" in info.error


def test_missing_or_directory_is_none(tmp_path: Path) -> None:
    assert analyze(str(tmp_path / "nope.py")) is None
    assert analyze(str(tmp_path)) is None


def test_analysis_follows_edits(tmp_path: Path) -> None:
    script = tmp_path / "edited.py"
    script.write_text("a = 1\n\nb = 2\n")
    assert executable_lines(str(script)) == {1, 3}
    script.write_text("a = 1\nc = 3\nb = 2\n# done\n")
    assert executable_lines(str(script)) == {1, 2, 3}


@pytest.mark.parametrize(
    ("name", "qualname", "marker"),
    [
        ("Point.__init__", "Point.__init__", "point-init"),
        ("Point.norm", "Point.norm", "point-norm"),
        ("norm", "Point.norm", "point-norm"),
        ("step", "step", "step-body"),
        ("bp_counter:Point.norm", "Point.norm", "point-norm"),
        ("bp_counter.step", "step", "step-body"),
    ],
)
def test_find_functions_resolves_names_to_the_first_body_line(name: str, qualname: str, marker: str) -> None:
    found = find_functions(name, [COUNTER, TARGETS], [TARGETS])
    expected = [(qualname, COUNTER, line_of(COUNTER, marker))]
    assert [(f.qualname, f.file, f.body_line) for f in found] == expected


def test_find_functions_skips_the_docstring_and_finds_nested_defs() -> None:
    found = find_functions("decorated", [LINES], [TARGETS])
    assert [f.body_line for f in found] == [line_of(LINES, "first-body-line")]
    inner = find_functions("deco.inner", [LINES], [TARGETS])
    assert [f.qualname for f in inner] == ["deco.inner"]
    assert find_functions("deco.<locals>.inner", [LINES], [TARGETS]) == inner
    only_doc = find_functions("only_docstring", [LINES], [TARGETS])
    assert [f.body_line for f in only_doc] == [only_doc[0].def_line]  # the call's only line event


@pytest.mark.parametrize("name", ["Point.nope", "nowhere", "pkg.helpers:nope", "no.such.module:f", "Shape"])
def test_find_functions_unknown(name: str) -> None:
    assert find_functions(name, [COUNTER, TARGETS], [TARGETS]) == []


def test_find_functions_in_a_package_module() -> None:
    found = find_functions("pkg.helpers:double", [TARGETS], [TARGETS])
    assert [(f.file, f.body_line) for f in found] == [
        (target("pkg/helpers.py"), line_of(target("pkg/helpers.py"), "double-body"))
    ]


def test_python_files_skips_virtualenvs_caches_and_hidden_folders(tmp_path: Path) -> None:
    for rel in (
        "app/main.py",
        "app/sub/util.py",
        ".git/hook.py",
        "venv/lib/x.py",
        "app/__pycache__/c.py",
        "node_modules/n.py",
        "README.md",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("def f():\n    return 1\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr\n")
    found = {str(Path(p).relative_to(tmp_path)) for p in python_files([str(tmp_path)])}
    assert found == {"app/main.py", "app/sub/util.py"}
