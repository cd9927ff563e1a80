"""Deep inspection: exception autopsy, object inspection, variables by scope/path, stop diffs."""

from ._autopsy import autopsy
from ._changes import changes, remember_stop
from ._objects import object_inspect
from ._variables import frame_variables

__all__ = ["autopsy", "changes", "frame_variables", "object_inspect", "remember_stop"]
