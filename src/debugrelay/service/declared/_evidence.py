"""The evidence operations (seed 002): snapshots, capture points, the evidence store and pattern analysis."""

from __future__ import annotations

import abc
from typing import Annotated

import msgspec

from debugrelay.models import (
    Analysis,
    CaptureList,
    CapturePoint,
    CaptureRequest,
    CaptureTable,
    EvidencePage,
    Snapshot,
    SnapshotBounds,
    SnapshotList,
    SnapshotSummary,
)
from debugrelay.models.limits import (
    Count,
    EvidenceId,
    Grep,
    Start,
)

from .._operations import declare

SESSION = "/sessions/{session_id}"


class EvidenceOperations(abc.ABC):
    """Snapshots, capture points, evidence and analysis."""

    # -- evidence (seed 002) -------------------------------------------------------------------------

    @declare(
        "POST",
        SESSION + "/snapshots",
        "Snapshot the whole program (a running one is paused briefly)",
        tag="evidence",
        status=201,
        body="bounds",
    )
    @abc.abstractmethod
    async def take_snapshot(self, session_id: str, bounds: SnapshotBounds | None = None) -> SnapshotSummary:
        """Every thread's stack with locals, tasks, locks, process facts; a running program is paused briefly."""

    @declare("GET", SESSION + "/snapshots", "The session's snapshots, in brief", tag="evidence")
    @abc.abstractmethod
    async def snapshots(self, session_id: str) -> SnapshotList:
        """The session's snapshots (post-mortem included), in brief."""

    @declare(
        "GET", SESSION + "/snapshots/{snapshot_id}", "A whole snapshot ('post_mortem': the crash's)", tag="evidence"
    )
    @abc.abstractmethod
    async def snapshot(self, session_id: str, snapshot_id: str) -> Snapshot:
        """A whole snapshot; ``post_mortem`` names the session's latest post-mortem."""

    @declare(
        "POST",
        SESSION + "/captures",
        "A capture point: values at a line on each hit, without pausing",
        tag="evidence",
        status=201,
        body="request",
        access="owner",
        current="new",
    )
    @abc.abstractmethod
    async def add_capture(self, session_id: str, request: CaptureRequest) -> CapturePoint:
        """A capture point: values recorded at a line on each hit, without pausing."""

    @declare("GET", SESSION + "/captures", "The session's capture points", tag="evidence")
    @abc.abstractmethod
    async def captures(self, session_id: str) -> CaptureList:
        """The session's capture points."""

    @declare("GET", SESSION + "/captures/{capture_id}", "A capture point's rows, one per hit", tag="evidence")
    @abc.abstractmethod
    async def capture_table(
        self, session_id: str, capture_id: str, start: Start = 0, count: Count = 100
    ) -> CaptureTable:
        """A capture point's rows, one per hit."""

    @declare("DELETE", SESSION + "/captures/{capture_id}", "Remove a capture point", tag="evidence")
    @abc.abstractmethod
    async def remove_capture(self, session_id: str, capture_id: str) -> CapturePoint:
        """Remove a capture point (its rows are answered with it one last time)."""

    @declare(
        "GET",
        "/evidence/{evidence_id}",
        "An evidence item's lines, paged (offset, limit) or searched (grep)",
        tag="evidence",
    )
    @abc.abstractmethod
    async def evidence(
        self, evidence_id: str, *, offset: Start = 0, limit: Count = 200, grep: Grep | None = None
    ) -> EvidencePage:
        """An evidence item's lines, paged or searched."""

    @declare(
        "POST",
        SESSION + "/analyze",
        "Known patterns (deadlock, starvation, leak...) with their evidence",
        tag="evidence",
        named="AnalyzeBody",
    )
    @abc.abstractmethod
    async def analyze(
        self,
        session_id: str,
        snapshot_ids: Annotated[list[EvidenceId], msgspec.Meta(max_length=2)] | None = None,
        *,
        take: Annotated[int, msgspec.Meta(ge=0, le=2)] = 0,
        interval: Annotated[float, msgspec.Meta(ge=0, le=30)] = 1.0,
    ) -> Analysis:
        """Known patterns over one or two snapshots (oldest first), or ``take`` new ones ``interval`` s apart,
        with their evidence ids."""
