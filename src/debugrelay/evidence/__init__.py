"""Evidence of a Python program (seed 002): snapshots, post-mortems, capture points, the evidence store
and the known-pattern analyzers."""

from debugrelay.errors import CollectFailed

from . import _snapshots as snapshots
from ._captures import Captures
from ._collect import BriefPause
from ._grep import GREP_HINT, GREP_MAX_CHARS, Found, compile_grep, grep_lines
from ._hub import EvidenceHub, hub_for, hub_of, post_mortem, with_post_mortem
from ._store import (
    EvidenceItem,
    EvidenceStore,
    FileEvidence,
    MemoryEvidence,
    RedisEvidence,
    check_id,
    no_evidence,
)

__all__ = [
    "GREP_HINT",
    "GREP_MAX_CHARS",
    "BriefPause",
    "Captures",
    "CollectFailed",
    "EvidenceHub",
    "EvidenceItem",
    "EvidenceStore",
    "FileEvidence",
    "Found",
    "MemoryEvidence",
    "RedisEvidence",
    "check_id",
    "compile_grep",
    "grep_lines",
    "hub_for",
    "hub_of",
    "no_evidence",
    "post_mortem",
    "snapshots",
    "with_post_mortem",
]
