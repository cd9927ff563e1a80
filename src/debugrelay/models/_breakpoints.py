"""Breakpoints as agents ask for them (request bodies); the sessions' breakpoint code validates them."""

from __future__ import annotations

from ._base import Input
from .limits import Expression, FunctionName, SourcePath


class SourceRef(Input):
    path: SourcePath | None = None
    name: SourcePath | None = None


class BreakpointRequest(Input):
    """One breakpoint as an agent asks for it: a line (``source.path``/``file`` + ``line``) or a function."""

    source: SourceRef | None = None
    file: SourcePath | None = None
    path: SourcePath | None = None
    line: int | None = None
    function: FunctionName | None = None
    condition: Expression | None = None
    hit_condition: Expression | None = None
    log_message: Expression | None = None
    enabled: bool = True


class BreakpointUpdate(Input):
    condition: Expression | None = None
    hit_condition: Expression | None = None
    log_message: Expression | None = None
    enabled: bool | None = None
    line: int | None = None
