"""A session's configuration as a document: what ``GET /sessions/{id}/export`` gives and import takes."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

from ._base import Input
from ._launch import LaunchRequest
from ._session import AttachSpec
from .limits import MAX_BREAKPOINTS_PER_REQUEST, ExceptionFilter, ExceptionType, Name, TimeoutMinutes

FORMAT: Final = "debugrelay.session/1"


class ExceptionFiltersIn(Input):
    filters: list[ExceptionFilter] = msgspec.field(default_factory=list)
    exception_types: list[ExceptionType] = msgspec.field(default_factory=list)


class SessionDocument(Input):
    """``POST /sessions/import``: an export, as ``GET /sessions/{id}/export`` gave it (or written by hand)."""

    format: Literal["debugrelay.session/1"] = FORMAT
    name: Name | None = None
    timeout_minutes: TimeoutMinutes | None = None
    mode: Literal["launch", "attach"] = "launch"
    launch: LaunchRequest | None = None
    attach: AttachSpec | None = None
    # open: each in any form a breakpoint request takes (decoded one by one, with its own error)
    breakpoints: Annotated[list[dict[str, Any]], msgspec.Meta(max_length=MAX_BREAKPOINTS_PER_REQUEST)] = msgspec.field(
        default_factory=list
    )
    exception_filters: ExceptionFiltersIn | None = None
    source_session_id: str | None = None
    exported_at: str | None = None
    start: bool = False  # launch (or attach) right away with the document's spec
