"""Snapshots, post-mortem, capture points, the evidence store and pattern analysis (seed 002)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, delete, get, post
from litestar.params import Body, Parameter

from debugrelay.models import (
    Analysis,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    EvidencePage,
    Input,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
)

from ._deps import Service
from ._params import PageSize, Start

_EvidenceId = Annotated[str, msgspec.Meta(pattern=r"^ev-[0-9a-f]{12}$")]
_Grep = Annotated[
    str | None,
    Parameter(description="Lines matching this RE2 regular expression (linear time; no backreferences or lookarounds)"),
]


class AnalyzeBody(Input):
    """Snapshots to analyze (one or two, oldest first), or how many new ones to take."""

    snapshot_ids: Annotated[list[_EvidenceId], msgspec.Meta(max_length=2)] = msgspec.field(default_factory=list)
    take: Annotated[int, msgspec.Meta(ge=0, le=2)] = 0
    interval: Annotated[float, msgspec.Meta(ge=0, le=30)] = 1.0


class EvidenceController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["evidence"]  # noqa: RUF012

    @post("/snapshots", status_code=201, summary="Snapshot the whole program (a running one is paused briefly)")
    async def take_snapshot(
        self, service: Service, session_id: str, data: Annotated[SnapshotBounds | None, Body()] = None
    ) -> SnapshotSummary:
        return await service.take_snapshot(session_id, data)

    @get("/snapshots", summary="The session's snapshots, in brief")
    async def snapshots(self, service: Service, session_id: str) -> SnapshotList:
        return await service.snapshots(session_id)

    @get("/snapshots/{snapshot_id:str}", summary="A whole snapshot ('post_mortem': the crash's)")
    async def snapshot(self, service: Service, session_id: str, snapshot_id: str) -> Snapshot:
        return await service.snapshot(session_id, snapshot_id)

    @post("/captures", status_code=201, summary="A capture point: values at a line on each hit, without pausing")
    async def add_capture(self, service: Service, session_id: str, data: CaptureRequest) -> CapturePoint:
        return await service.add_capture(session_id, data)

    @get("/captures", summary="The session's capture points")
    async def captures(self, service: Service, session_id: str) -> CaptureList:
        return await service.captures(session_id)

    @get("/captures/{capture_id:str}", summary="A capture point's rows, one per hit")
    async def capture_table(
        self, service: Service, session_id: str, capture_id: str, start: Start = 0, count: PageSize = 100
    ) -> CaptureTable:
        return await service.capture_table(session_id, capture_id, start, count)

    @delete("/captures/{capture_id:str}", status_code=200, summary="Remove a capture point")
    async def remove_capture(self, service: Service, session_id: str, capture_id: str) -> CapturePoint:
        return await service.remove_capture(session_id, capture_id)

    @post("/analyze", status_code=200, summary="Known patterns (deadlock, starvation, leak...) with their evidence")
    async def analyze(
        self, service: Service, session_id: str, data: Annotated[AnalyzeBody | None, Body()] = None
    ) -> Analysis:
        body = data or AnalyzeBody()
        return await service.analyze(session_id, body.snapshot_ids or None, take=body.take, interval=body.interval)


class EvidenceStoreController(Controller):
    path = "/evidence"
    tags = ["evidence"]  # noqa: RUF012

    @get("/{evidence_id:str}", summary="An evidence item's lines, paged (offset, limit) or searched (grep)")
    async def evidence(
        self, service: Service, evidence_id: str, offset: Start = 0, limit: PageSize = 200, grep: _Grep = None
    ) -> EvidencePage:
        return await service.evidence(evidence_id, offset=offset, limit=limit, grep=grep)
