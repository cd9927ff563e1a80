"""Exception autopsy, variables by scope/path, object inspection and stop diffs."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, get, post
from litestar.params import JSONBody

from debugrelay.models import Autopsy, Changes, Input, ObjectInspection, ScopedVariables
from debugrelay.models.limits import Expression

from ._deps import Service
from ._params import (
    Count,
    FrameIndex,
    FrameNumber,
    Frames,
    FramesWithVariables,
    InnerDepth,
    ScopeName,
    Start,
    VariablePath,
)


class ObjectInspectBody(Input):
    object_ref: Expression
    # 1..10; outside that the answer is DEPTH_EXCEEDED (the service's own check), not a schema refusal
    depth: Annotated[int, msgspec.Meta(description="Levels to expand, 1 to 10 (else DEPTH_EXCEEDED).")] = 1
    frame_id: FrameNumber | None = None
    frame_index: FrameNumber | None = None
    thread_id: int | None = None


class AutopsyController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["inspection"]  # noqa: RUF012

    @get("/autopsy", summary="Everything about the exception the session is stopped at, in one call")
    async def autopsy(
        self,
        service: Service,
        session_id: str,
        max_frames: Frames = 10,
        include_variables_for_frames: FramesWithVariables = 1,
        max_inner_depth: InnerDepth = 5,
    ) -> Autopsy:
        return await service.autopsy(
            session_id,
            max_frames=max_frames,
            include_variables_for_frames=include_variables_for_frames,
            max_inner_depth=max_inner_depth,
        )

    @get("/variables", summary="A frame's variables by scope, or the children of a path")
    async def variables(  # noqa: PLR0917 - query parameters
        self,
        service: Service,
        session_id: str,
        which: ScopeName = "all",
        frame_id: FrameIndex = 0,
        thread_id: int | None = None,
        expand: VariablePath = None,
        start: Start = 0,
        count: Count = None,
    ) -> ScopedVariables:
        return await service.scoped_variables(
            session_id,
            scope=which,
            frame_index=frame_id,
            thread_id=thread_id,
            expand=expand,
            start=start,
            count=count,
        )

    @post("/object-inspect", status_code=200, summary="Walk one object: fields, sizes, cycles")
    async def object_inspect(
        self, service: Service, session_id: str, data: JSONBody[ObjectInspectBody]
    ) -> ObjectInspection:
        frame = data.frame_id if data.frame_id is not None else data.frame_index
        return await service.object_inspect(
            session_id, data.object_ref, depth=data.depth, frame_index=frame or 0, thread_id=data.thread_id
        )

    @get("/changes", summary="Locals of the top frame that changed since the previous stop in that frame")
    async def changes(self, service: Service, session_id: str) -> Changes:
        return await service.changes(session_id)
