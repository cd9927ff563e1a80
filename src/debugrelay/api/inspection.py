"""The reads worded by hand: one thread's stack, and a variable's children by two pagings."""

from __future__ import annotations

from litestar import Controller, get

from debugrelay.models import (
    ChildrenPage,
    StackTrace,
)

from ._deps import Service
from ._params import Count, PageSize, Start


class InspectionController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["inspection"]  # noqa: RUF012

    @get("/threads/{thread_id:int}/stacktrace", summary="Call stack of one thread")
    async def thread_stacktrace(
        self,
        service: Service,
        session_id: str,
        thread_id: int,
        start_frame: Start = 0,
        max_frames: PageSize = 20,
        *,
        library: bool = False,
    ) -> StackTrace:
        return await service.stacktrace(session_id, thread_id, start_frame, max_frames, library=library)

    @get(
        "/frames/{frame_id:int}/variables/{reference:int}/children",
        summary="Children of a variable, paged by offset/limit (same as /variables/{reference})",
    )
    async def children(
        self,
        service: Service,
        session_id: str,
        frame_id: int,
        reference: int,
        *,
        offset: Start = 0,
        limit: PageSize = 100,
    ) -> ChildrenPage:
        return await service.children(session_id, reference, offset, limit, by_offset=True)

    @get("/variables/{reference:int}", summary="Children of an expandable variable, paged by start/count")
    async def expand(
        self, service: Service, session_id: str, reference: int, start: Start = 0, count: Count = 100
    ) -> ChildrenPage:
        return await service.children(session_id, reference, start, count)
