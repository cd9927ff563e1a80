"""Wire models of snapshots, post-mortems, capture points, evidence and pattern analysis."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from ._base import Answer, Input, Model
from ._inspection import AutopsyException

_Frames = Annotated[int, msgspec.Meta(ge=1, le=200)]
_Depth = Annotated[int, msgspec.Meta(ge=1, le=10)]
_Items = Annotated[int, msgspec.Meta(ge=1, le=1000)]
_Chars = Annotated[int, msgspec.Meta(ge=16, le=65_536)]
_Bytes = Annotated[int, msgspec.Meta(ge=1024, le=4 * 1024 * 1024)]
_Expression = Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]


class SnapshotBounds(Input):
    """How much a snapshot keeps; each cut is marked (``...``, ``frames_truncated``, ``truncated``)."""

    frames: _Frames = 20  # per thread
    depth: _Depth = 5  # nesting of a value
    items: _Items = 25  # per collection
    chars: _Chars = 256  # per value
    max_bytes: _Bytes = 32_768  # locals of the whole snapshot


class ThreadBrief(Model, kw_only=True):
    name: str
    ident: int
    top: str | None = None  # "file:line function" of the innermost frame of the program
    frames: int = 0
    waiting: str | None = None  # "lock: with lock_b:" when Python can tell
    holds: list[str] = msgspec.field(default_factory=list)
    waits_for: str | None = None


class SnapshotCut(Model, kw_only=True):
    """A snapshot that reached its size bound: how many values were cut, and why."""

    values_cut: int
    reason: str


class SnapshotSummary(Answer, kw_only=True):
    """What a snapshot holds, in brief; the whole is ``GET .../snapshots/{id}`` (or the evidence id, paged)."""

    snapshot_id: str
    session_id: str
    reason: str  # on_demand | post_mortem
    taken_at: float
    program: str  # paused | running (the state it was in, and is left in)
    paused_ms: float | None = None  # how long a running program was paused for the read
    threads: list[ThreadBrief]
    tasks: int = 0
    # open: what the target's collector could read of its process (rss, fds, gc) and what it cut, by name
    process: dict[str, Any] = msgspec.field(default_factory=dict)
    size_bytes: int = 0
    truncated: SnapshotCut | None = None
    exception: AutopsyException | None = None  # a post-mortem's exception


class SnapshotList(Model, kw_only=True):
    snapshots: list[SnapshotSummary]
    total: int


class Snapshot(Model, kw_only=True):
    """A whole snapshot: threads with frames and locals, tasks, loops, process facts (and a post-mortem's autopsy)."""

    snapshot_id: str
    session_id: str
    reason: str
    data: dict[str, Any]  # open: the collector's document as the target wrote it (paged through the evidence id)


class CaptureRequest(Input):
    """A capture point: at ``file:line`` record ``expressions`` (or every local: ``["locals"]``) on each hit."""

    file: Annotated[str, msgspec.Meta(min_length=1, max_length=4096)]
    line: Annotated[int, msgspec.Meta(ge=1)]
    expressions: Annotated[list[_Expression], msgspec.Meta(min_length=1, max_length=20)] = msgspec.field(
        default_factory=lambda: ["locals"]
    )
    condition: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)] | None = None
    hit_limit: Annotated[int, msgspec.Meta(ge=1, le=10_000)] = 100
    expires_in_seconds: Annotated[float, msgspec.Meta(gt=0, le=86_400)] = 3600.0


class CapturePoint(Answer, kw_only=True):
    capture_id: str
    file: str
    line: int
    expressions: list[str]
    condition: str | None = None
    hit_limit: int
    hits: int = 0
    state: str  # active | done (hit limit) | expired | removed | ended (the program ended)
    verified: bool = False
    expires_at: float
    message: str | None = None


class CaptureTable(Model, kw_only=True):
    """One row per hit: columns are the expressions (``t`` the time, ``thread`` the thread's name)."""

    capture: CapturePoint
    columns: list[str]
    rows: list[list[Any]]  # open: each expression's value at a hit, as JSON the target made of it
    total: int
    start: int = 0
    has_more: bool = False
    evidence_id: str | None = None  # every row, whole, when the table is long


class CaptureList(Model, kw_only=True):
    captures: list[CapturePoint]


class EvidencePage(Model, kw_only=True):
    """Lines ``offset``..``offset+limit`` of an evidence item (or the lines matching ``grep``)."""

    evidence_id: str
    kind: str
    title: str = ""
    total_lines: int
    offset: int = 0
    lines: list[str]
    has_more: bool = False
    matches: int | None = None  # with grep: how many lines match in all


class PatternMatch(Model, kw_only=True):
    pattern: str
    title: str
    confidence: str  # high | medium
    explanation: str
    signals: list[str]
    evidence: dict[str, Any]  # open: each pattern names the facts of its own case
    next_steps: list[str]
    evidence_ids: list[str]


class Analysis(Answer, kw_only=True):
    session_id: str
    snapshots: list[str]
    matches: list[PatternMatch]
    checked: list[str]  # every pattern looked for
    note: str | None = None
