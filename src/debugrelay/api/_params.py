"""Query parameters with the bounds the operations check, so the OpenAPI document states them."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from litestar.params import Parameter, QueryParameter

from debugrelay.inspection import MAX_FRAMES, MAX_INNER, PATH_PATTERN
from debugrelay.models.limits import MAX_EXPRESSION
from debugrelay.service import MAX_PAGE, MAX_WAIT, OUTPUT_PAGE_MAX

# in request bodies
FrameNumber = Annotated[int, msgspec.Meta(ge=0, description="Frame index, 0 = top")]
Seconds = Annotated[float, msgspec.Meta(ge=0, le=MAX_WAIT, description=f"Seconds, 0-{MAX_WAIT:g}")]

# in queries

Start = Annotated[int, Parameter(ge=0, description="Index of the first item (0-based)")]
Count = Annotated[int | None, Parameter(ge=1, le=MAX_PAGE, description=f"Items per page, 1-{MAX_PAGE}")]
PageSize = Annotated[int, Parameter(ge=1, le=MAX_PAGE, description=f"Items per page, 1-{MAX_PAGE}")]
FrameIndex = Annotated[int, Parameter(ge=0, description="Frame index, 0 = top")]
OutputLimit = Annotated[int, Parameter(ge=1, le=OUTPUT_PAGE_MAX, description=f"Lines per page, 1-{OUTPUT_PAGE_MAX}")]
Line = Annotated[int, Parameter(ge=1, description="1-based line")]
ProcessId = Annotated[int, Parameter(ge=1, le=1 << 22, description="A process id of the session's program")]
Frames = Annotated[int, Parameter(ge=1, le=MAX_FRAMES, description=f"Frames shown, 1-{MAX_FRAMES}")]
FramesWithVariables = Annotated[int, Parameter(ge=0, le=MAX_FRAMES, description="Frames whose variables are shown")]
InnerDepth = Annotated[int, Parameter(ge=0, le=MAX_INNER, description="Depth of the inner exception chain")]
ScopeName = Annotated[
    Literal["locals", "arguments", "globals", "all"], QueryParameter(name="scope", description="Which variables")
]
VariablePath = Annotated[
    str | None,
    Parameter(
        min_length=1,
        max_length=MAX_EXPRESSION,
        pattern=PATH_PATTERN,
        description="A variable's path: names, dots, [index] or ['key'], e.g. self.items[0]['k']",
    ),
]
