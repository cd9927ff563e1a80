"""Read-only helpers evaluated inside a debug target by debugrelay (on the target's PYTHONPATH).

They touch only builtins (``type``, ``id``, ``len`` of builtin containers, ``sys.getsizeof``):
no user ``__repr__``, property or ``__len__`` runs here.
"""

import json
import sys

_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray)


def _length(obj):
    for kind in _SIZED:
        if type(obj) is kind:
            return len(obj)
    return None


def meta(values, chain):
    """For each value: [id, length or None, circular]; ``chain`` holds the ids of its ancestors."""
    seen = set(chain)
    return json.dumps([[id(v), _length(v), id(v) in seen] for v in values])


def size(obj):
    try:
        return sys.getsizeof(obj)
    except Exception:
        return None
