"""Evidence of a Python program (seed 002): snapshots, post-mortems, capture points and the known-pattern
analyzers; the items are kept in the state store's evidence namespace."""

from debugrelay.errors import CollectFailed
from debugrelay.store import EvidenceItem, EvidenceStore, check_id, no_evidence

from . import _snapshots as snapshots
from ._captures import Captures
from ._collect import BriefPause, evaluate_helper
from ._grep import GREP_HINT, GREP_MAX_CHARS, Found, compile_grep, grep_lines
from ._hub import EvidenceHub, post_mortem, with_post_mortem

__all__ = [
    "GREP_HINT",
    "GREP_MAX_CHARS",
    "BriefPause",
    "Captures",
    "CollectFailed",
    "EvidenceHub",
    "EvidenceItem",
    "EvidenceStore",
    "Found",
    "check_id",
    "compile_grep",
    "evaluate_helper",
    "grep_lines",
    "no_evidence",
    "post_mortem",
    "snapshots",
    "with_post_mortem",
]
