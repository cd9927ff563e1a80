"""Inspection of a paused target: plain reads, exception autopsy, object inspection, variables by
scope/path, stop diffs and watch values."""

from debugrelay.models.limits import MAX_INNER

from ._autopsy import MAX_FRAMES, autopsy
from ._changes import changes, remember_stop
from ._objects import object_inspect
from ._reads import completions, evaluate, scopes, set_variable, stacktrace, threads, variables
from ._variables import frame_variables
from ._watches import watch_value, watch_values

__all__ = [
    "MAX_FRAMES",
    "MAX_INNER",
    "autopsy",
    "changes",
    "completions",
    "evaluate",
    "frame_variables",
    "object_inspect",
    "remember_stop",
    "scopes",
    "set_variable",
    "stacktrace",
    "threads",
    "variables",
    "watch_value",
    "watch_values",
]
