"""Stop diffs: which locals of the top frame changed since the previous stop in that same frame.

At every stop the relay keeps the top frame's locals (as debugpy shows them) keyed by thread, file,
function, stack depth and the frame object's id, so that stepping through a loop shows only what moved.
"""

from __future__ import annotations

import contextlib
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from debugrelay.dap import StackFrame
from debugrelay.errors import RelayError

from ._frames import is_chained
from ._probe import ProbeUnavailable, call_probe, dap
from ._variables import GROUPS_AND_SPECIAL, gather_limited

if TYPE_CHECKING:
    from debugrelay.models import Stop
    from debugrelay.sessions import Session

SNAPSHOT_TIMEOUT = 2.0  # taken while the stop is being recorded: keep it short
MAX_FRAMES_KEPT = 128  # frames remembered per session (least recently stopped in are dropped)

Key = tuple[Any, ...]


@dataclass(frozen=True)
class Snapshot:
    seq: int
    line: int | None
    values: dict[str, tuple[str | None, str]]  # name -> (type, value)


_store: weakref.WeakKeyDictionary[Session, OrderedDict[Key, list[Snapshot]]] = weakref.WeakKeyDictionary()


Values = dict[str, tuple[str | None, str]]


Read = tuple[Key, dict[str, Any], Values]


async def _read_top(session: Session, frames: list[StackFrame]) -> Read | None:
    real = [f for f in frames if not is_chained(f)]
    if not real:
        return None
    top = real[0]
    fid = top.id

    async def frame_object_id() -> int | None:
        try:
            info = await call_probe(session, fid, "frame_info()", SNAPSHOT_TIMEOUT)
        except ProbeUnavailable:
            return None
        return int(info["id"]) if isinstance(info, dict) and "id" in info else None

    async def locals_values() -> Values:
        scopes = await dap(session, "scopes", {"frameId": fid}, SNAPSHOT_TIMEOUT, stable=True)
        named = {s.get("name"): s.get("variablesReference") for s in scopes.get("scopes", [])}
        ref = named.get("Locals") or 0
        if not ref:
            return {}
        body = await dap(session, "variables", {"variablesReference": ref}, SNAPSHOT_TIMEOUT)
        return {
            str(v.get("name")): (v.get("type"), str(v.get("value", "")))
            for v in body.get("variables", [])
            if v.get("name") not in GROUPS_AND_SPECIAL
        }

    obj_id, values = await gather_limited([frame_object_id(), locals_values()])
    source = top.source
    where = {
        "function": top.name,
        "file": (session.to_local(source.path) or source.name) if source else None,
        "line": top.line,
    }
    key: Key = (where["file"], where["function"], len(real), obj_id)
    return key, where, values


async def remember_stop(session: Session, stop: Stop, frames: list[StackFrame]) -> None:
    """Keep the top frame's locals of this stop (called by the session as it records a stop)."""
    with contextlib.suppress(RelayError, KeyError, TypeError, ValueError):
        read = await _read_top(session, frames)
        if read is None:
            return
        key, where, values = read
        kept = _store.setdefault(session, OrderedDict())
        history = kept.pop((stop.thread_id, *key), [])
        kept[(stop.thread_id, *key)] = [*history[-1:], Snapshot(stop.seq, where["line"], values)]
        while len(kept) > MAX_FRAMES_KEPT:
            kept.popitem(last=False)


async def changes(session: Session) -> dict[str, Any]:
    """``{frame, since, changed: [{name, type, old, new}], added, removed, unchanged}`` for the top frame
    of the stopped thread, against the previous stop in the same frame."""
    session.require_paused()
    stop = session.record.stop
    assert stop is not None
    _, frames, _ = await session.frames(stop.thread_id, 1)
    read = await _read_top(session, frames)
    if read is None:
        return {"changed": [], "note": "no frame to compare"}
    key, where, now = read
    history = _store.get(session, OrderedDict()).get((stop.thread_id, *key), [])
    previous = next((s for s in reversed(history) if s.seq < stop.seq), None)
    out: dict[str, Any] = {"frame": where, "stop": stop.seq}
    if previous is None:
        out["changed"] = []
        out["first_stop_in_frame"] = True
        out["locals"] = len(now)
        return out
    limit = session.settings.value_max_chars
    out["since"] = {"stop": previous.seq, "line": previous.line}
    changed, added = [], []
    for name, (vtype, value) in now.items():
        if name not in previous.values:
            added.append({"name": name, "type": vtype, "value": _cut(value, limit)})
            continue
        old_type, old = previous.values[name]
        if (old_type, old) != (vtype, value):
            item: dict[str, Any] = {"name": name, "type": vtype}
            item.update(old=_cut(old, limit), new=_cut(value, limit))
            if old_type != vtype:
                item["old_type"] = old_type
            changed.append(item)
    removed = [name for name in previous.values if name not in now]
    out["changed"] = changed
    if added:
        out["added"] = added
    if removed:
        out["removed"] = removed
    out["unchanged"] = len(now) - len(changed) - len(added)
    return out


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit] + "..."
