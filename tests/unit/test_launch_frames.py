"""A stack as the relay shows it starts at the program's first frame: the runpy frames `python -m debugpy`
started it with (seen since 3.11+ targets run without frozen modules) are not the program's."""

from __future__ import annotations

from debugrelay.dap import StackFrame
from debugrelay.dap._bodies import Source
from debugrelay.sessions._reads import without_launch_frames

RUNPY = "/usr/lib/python3.11/runpy.py"


def frame(n: int, name: str, path: str) -> StackFrame:
    return StackFrame(id=n, name=name, source=Source(path=path))


def test_the_runpy_frames_under_the_program_are_left_out_chained_frames_stay() -> None:
    stack = [
        frame(1, "total", "/app/cart.py"),
        frame(2, "<module>", "/app/cart.py"),
        frame(3, "_run_code", RUNPY),
        frame(4, "_run_module_as_main", RUNPY),
        frame(5, "[Chained Exc: boom] load", "/app/cart.py"),
    ]
    frames, total = without_launch_frames(stack, 5)
    assert [f.id for f in frames] == [1, 2, 5]
    assert total == 3


def test_runpy_called_by_the_program_itself_stays() -> None:
    stack = [frame(1, "_run_code", RUNPY), frame(2, "main", "/app/tool.py"), frame(3, "<module>", "/app/tool.py")]
    assert without_launch_frames(stack, 3) == (stack, 3)


def test_a_stack_whose_bottom_was_not_read_is_kept() -> None:
    stack = [frame(1, "f", "/app/deep.py"), frame(2, "_run_code", RUNPY)]
    assert without_launch_frames(stack, 40) == (stack, 40)
