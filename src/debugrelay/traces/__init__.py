"""Function traces: every call of a traced function, with its arguments, what each line changed and its
result, recorded inside the program (``_boot/_debugrelay_trace.py``) and kept here per session."""

from debugrelay.sessions._calls import ENV, CallBook, for_target, outcome, spec_of

from ._origin import events_with, writers_in, writes_of
from ._specs import Found, resolve
from ._target import EVENT, call, paused_calls

__all__ = [
    "ENV",
    "EVENT",
    "CallBook",
    "Found",
    "call",
    "events_with",
    "for_target",
    "outcome",
    "paused_calls",
    "resolve",
    "spec_of",
    "writers_in",
    "writes_of",
]
