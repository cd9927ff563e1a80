"""What the relay needs about each variable, in debugpy's own ``variables`` answer.

The relay marks a container's length, a value found inside itself and a ``__repr__`` that failed;
without this it asks the target a second time (``_debugrelay_probe.meta``) after every listing. Once
debugpy's frames module is imported, :func:`install` adds ``"debugrelay": [id, length, repr_failed]``
to each variable: the object's ``id``, ``len`` of a builtin container (else null), and whether its
class defines a ``__repr__`` in Python while debugpy shows the default ``<Class object at 0x...>``
(debugpy falls back to that silently when the class's own one raises). Only builtins run here, as in
the probe: no user ``__len__`` or property.
"""

from __future__ import annotations

import re
from typing import Any

from _debugrelay_patch import when_imported
from _debugrelay_probe import _find, _length

TARGET = "_pydevd_bundle.pydevd_suspended_frames"
KEY = "debugrelay"
_DEFAULT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")


def _repr_failed(value: Any, shown: Any) -> bool:
    if not isinstance(shown, str) or not _DEFAULT_REPR.match(shown):
        return False
    method = _find(type(value), "__repr__")
    return method is not None and type(method).__name__ == "function"


def patch(module: Any) -> None:
    cls = module._AbstractVariable
    if getattr(cls, "_debugrelay", False):
        return
    plain = cls.get_var_data

    def get_var_data(self: Any, *args: Any, **kwargs: Any) -> Any:
        data = plain(self, *args, **kwargs)
        try:
            value = self.value
            data[KEY] = [id(value), _length(value), _repr_failed(value, data.get("value"))]
        except Exception:  # the relay then asks the probe, as without this patch
            pass
        return data

    cls.get_var_data = get_var_data
    cls._debugrelay = True


def install() -> None:
    """Patch debugpy's variables now if it is loaded, else when it is."""
    when_imported(TARGET, patch, "the relay reads lengths with a second request")
