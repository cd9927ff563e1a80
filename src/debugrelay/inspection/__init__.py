"""Inspection of a paused target: plain reads, exception autopsy, object inspection, variables by
scope/path, stop diffs and watch values."""

from ._autopsy import MAX_FRAMES, MAX_INNER, autopsy
from ._changes import changes, remember_stop
from ._objects import object_inspect
from ._reads import completions, evaluate, scopes, set_variable, stacktrace, threads, variables
from ._variables import PATH_PATTERN, frame_variables
from ._watches import watch_value, watch_values

__all__ = [
    "MAX_FRAMES",
    "MAX_INNER",
    "PATH_PATTERN",
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
