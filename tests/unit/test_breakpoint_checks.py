"""The condition a launched target's debugpy evaluates for a conditional or counted breakpoint: the text the
relay sends, evaluated as debugpy does (``eval`` in the frame's globals and locals) against the start-up
hook's builtin. No debugpy here: the contract between the two halves."""

from __future__ import annotations

import ast
import builtins
import importlib.util
import sys
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import pytest

from debugrelay.models import BreakpointRecord, SessionRecord
from debugrelay.sessions import SourceRoots
from debugrelay.sessions.breakpoints._sync import _dap_args, compiled_check

BOOT = Path(__file__).resolve().parents[2] / "src" / "debugrelay" / "_boot" / "_debugrelay_bp.py"


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """The target's half, loaded fresh, its builtin installed for this test only, its counts kept apart."""
    spec = importlib.util.spec_from_file_location("_debugrelay_bp_under_test", BOOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(builtins, "_debugrelay_check", module.Checks(), raising=False)
    return module


def sent(tmp_path: Path, **fields: Any) -> str:
    """What the relay sends debugpy as the condition of a line breakpoint with ``fields``."""
    source = tmp_path / "loop.py"
    source.write_text("for i in range(10):\n    total = i\n")
    bp = BreakpointRecord(id="bp_1", file=str(source), line=2, verified=True, **fields)
    text = compiled_check(SessionRecord(id="sess_unit"), bp, SourceRoots((str(tmp_path),)))
    assert text is not None
    return text


def stops(text: str, **local: Any) -> Any:
    """One run of the line, as debugpy evaluates the condition."""
    return eval(text, {"__name__": "loop"}, local)


def test_the_condition_debugpy_compiles_is_one_attribute_read(tmp_path: Path) -> None:
    text = sent(tmp_path, condition="i > 3 and i % 2 == 0", hit_condition="% 2")
    tree = ast.parse(text, mode="eval").body
    assert isinstance(tree, ast.Attribute) and isinstance(tree.value, ast.Name)
    assert tree.value.id == "_debugrelay_check"
    assert "i > 3" not in text  # carried inside the name, not as code debugpy compiles on every run


def test_the_condition_decides_and_every_run_of_the_line_is_counted(checks: ModuleType, tmp_path: Path) -> None:
    text = sent(tmp_path, condition="i > 6")
    assert [i for i in range(10) if stops(text, i=i)] == [7, 8, 9]
    runs = checks._runs
    assert [state[0] for key, state in runs.items() if key.startswith("bp_1:")] == [10]


def test_the_hit_count_counts_only_runs_where_the_condition_held(checks: ModuleType, tmp_path: Path) -> None:
    text = sent(tmp_path, condition="i % 3 == 0", hit_condition="% 2")
    # the condition holds at 0, 3, 6, 9: hits 1-4; every second hit stops
    assert [i for i in range(10) if stops(text, i=i)] == [3, 9]
    hits = checks._hits
    assert list(hits.values()) == [4]


def test_a_hit_count_alone_stops_at_its_hit(checks: ModuleType, tmp_path: Path) -> None:
    text = sent(tmp_path, hit_condition=">= 9")
    assert [i for i in range(10) if stops(text, i=i)] == [8, 9]


def test_a_condition_that_raises_reaches_debugpy_as_its_own_error(checks: ModuleType, tmp_path: Path) -> None:
    text = sent(tmp_path, condition="missing_name > 1")
    with pytest.raises(NameError, match="missing_name"):
        stops(text, i=1)
    text = sent(tmp_path, condition="i.no_such_attribute")
    with pytest.raises(AttributeError, match="no_such_attribute"):
        stops(text, i=1)


def test_a_logpoints_message_is_made_only_when_it_is_printed(checks: ModuleType, tmp_path: Path) -> None:
    made: list[int] = []
    text = sent(tmp_path, condition="i > 7", log_message="i={note(i)}")
    # debugpy evaluates a logpoint's message on every run and prints it unless it is empty
    printed = [stops(text, i=i, note=lambda i: made.append(i) or i) for i in range(10)]
    assert printed == [""] * 8 + ["i=8", "i=9"]
    assert made == [8, 9]  # not made (nor its side effects run) where the condition failed


def test_a_logpoint_without_condition_says_its_message_every_run(checks: ModuleType, tmp_path: Path) -> None:
    text = sent(tmp_path, log_message="total is {total!r:>4}")
    assert stops(text, total=7) == "total is    7"
    assert str(eval(text, {}, {"total": 8})) == "total is    8"


PIPELINE = """\
def main(items):
    total = sum(x * 2 for x in items)  # comprehensions
    return total, [x for x in items], {x: {y for y in items if y < x} for x in items}


for run in range(2):
    main([1, 2, 3])
"""


def stopped_frames(text: str, source: Path, line: int) -> list[str]:
    """Run ``source`` under a line tracer standing in for debugpy: at each 'line' event of ``line`` it
    evaluates ``text`` in the frame's globals and locals; the frames (by name) where it said stop."""
    code = compile(source.read_text(), str(source), "exec")
    stopped = []

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        at = event == "line" and frame.f_lineno == line and frame.f_code.co_filename == str(source)
        if at and eval(text, frame.f_globals, frame.f_locals):  # as debugpy evaluates a condition
            stopped.append(frame.f_code.co_name)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        exec(code, {"__name__": "pipeline"})
    finally:
        sys.settrace(previous)
    return stopped


@pytest.mark.parametrize("mode", ["launch", "attach"])
def test_a_line_with_comprehensions_stops_once_per_execution_in_the_frame_that_runs_it(
    checks: ModuleType, tmp_path: Path, mode: str
) -> None:
    # launched: the start-up hook's checks; attached: the same checks spelled out in the condition's text
    source = tmp_path / "pipeline.py"
    source.write_text(PIPELINE)
    bp = BreakpointRecord(id="bp_1", file=str(source), line=2, verified=True)
    roots = SourceRoots((str(tmp_path),))
    text = _dap_args(SessionRecord(id="sess_unit", mode=mode), bp, roots)["condition"]
    assert stopped_frames(text, source, 2) == ["main", "main"]  # not once more per item in <genexpr>
    bp = BreakpointRecord(id="bp_2", file=str(source), line=3, verified=True)
    text = _dap_args(SessionRecord(id="sess_unit", mode=mode), bp, roots)["condition"]
    assert stopped_frames(text, source, 3) == ["main", "main"]  # nor in <listcomp>, <dictcomp>, <setcomp> (3.11)


def test_a_generator_run_after_its_maker_returned_stops_only_where_it_was_made(
    checks: ModuleType, tmp_path: Path
) -> None:
    source = tmp_path / "later.py"
    source.write_text("def make(items):\n    return (x * 2 for x in items)\n\n\nprint(list(make([1, 2])))\n")
    bp = BreakpointRecord(id="bp_1", file=str(source), line=2, verified=True)
    text = compiled_check(SessionRecord(id="sess_unit"), bp, SourceRoots((str(tmp_path),)))
    assert text is not None
    assert stopped_frames(text, source, 2) == ["make"]


def test_a_plain_breakpoint_on_a_line_without_a_comprehension_needs_no_check(tmp_path: Path) -> None:
    source = tmp_path / "plain.py"
    source.write_text("items = [1, 2]\ntotal = sum(items)\n")
    bp = BreakpointRecord(id="bp_1", file=str(source), line=2, verified=True)
    assert compiled_check(SessionRecord(id="sess_unit"), bp, SourceRoots((str(tmp_path),))) is None
