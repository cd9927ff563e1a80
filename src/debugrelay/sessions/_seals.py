"""Seals on the stored fields a relay acts on: a session's target (ended, read, connected to), its
launch (started again on restart), and the code a target runs for it (each watch, each trace, and each
breakpoint's condition, hit condition and log message: capture points' too). A relay seals the target and launch as it
sets them and the code as it saves the record; a record read back from the store (a restart, a take-over)
has whatever does not carry its key's seal set aside (the target, the launch) or marked ``unsealed``
(shown, never run): the store alone cannot make a relay act, nor a target run code."""

from __future__ import annotations

from typing import Any

import msgspec

from debugrelay.models import (
    BreakpointRecord,
    LaunchRequest,
    SessionRecord,
    StoredProfile,
    TargetRecord,
    TraceRecord,
    Watch,
)
from debugrelay.trust import RelayKeys

SEALED = ("target", "launch")
UNSEALED_HINT = (
    "It was read back from the state store without the seal of a relay sharing this relay's key "
    "(DEBUGRELAY_TOKEN): it is shown but never run. Remove it, and set it again if it is yours."
)


def _value(record: SessionRecord, field: str) -> Any:
    value = getattr(record, field)
    return msgspec.to_builtins(value) if isinstance(value, msgspec.Struct) else value


def set_target(keys: RelayKeys, record: SessionRecord, target: TargetRecord | None) -> None:
    """Keep ``target`` (a live target's record, ``Target.describe()``) in the record, with its seal over
    the record's builtins form: the mapping the store keeps."""
    record.target = target
    _reseal(keys, record, "target")


def set_launch(keys: RelayKeys, record: SessionRecord, spec: LaunchRequest | None) -> None:
    """Keep ``spec`` (a launch a client asked for) in the record, with its seal."""
    record.launch = spec
    _reseal(keys, record, "launch")


def _reseal(keys: RelayKeys, record: SessionRecord, field: str) -> None:
    seals = {k: v for k, v in record.seals.items() if k != field}
    value = _value(record, field)
    if value is not None:
        seals[field] = keys.seal(record.id, field, value)
    record.seals = seals


def unsealed(keys: RelayKeys, record: SessionRecord) -> list[str]:
    """The fields of a stored record that hold something without this key's seal over it (and its session)."""
    return [
        field
        for field in SEALED
        if (value := _value(record, field)) is not None
        and not keys.sealed(record.id, field, value, record.seals.get(field))
    ]


# -- code a target runs --------------------------------------------------------------------------------------


def _watch_key(watch: Watch) -> str:
    return f"watch:{watch.id}"


def _breakpoint_key(bp: BreakpointRecord) -> str:
    return f"breakpoint:{bp.id}"


def _trace_key(trace: TraceRecord) -> str:
    return f"trace:{trace.id}"


def _traced(trace: TraceRecord) -> dict[str, Any]:
    """What a trace makes the program do (record a function's calls, maybe with its own reprs)."""
    fields = ("file", "qualname", "line", "keep", "callees", "reprs")
    return {f: getattr(trace, f) for f in fields}


def _code(bp: BreakpointRecord) -> dict[str, Any] | None:
    """What a breakpoint makes the target run, and where (None: it runs no code)."""
    if not (bp.condition or bp.hit_condition or bp.log_message):
        return None
    fields = ("kind", "file", "line", "function", "condition", "hit_condition", "log_message", "capture", "internal")
    return {f: getattr(bp, f) for f in fields}


def seal_code(keys: RelayKeys, record: SessionRecord) -> None:
    """Seal each watch, trace and breakpoint that runs code as the record holds them now (bound to the session
    and the item), except those read back unsealed; the target and launch seals stay as they are."""
    seals = {k: v for k, v in record.seals.items() if k in SEALED}
    for watch in record.watches:
        if not watch.unsealed:
            key = _watch_key(watch)
            seals[key] = keys.seal(record.id, key, watch.expression)
    for bp in record.breakpoints:
        code = _code(bp)
        if code is not None and not bp.unsealed:
            key = _breakpoint_key(bp)
            seals[key] = keys.seal(record.id, key, code)
    for trace in record.traces:
        if not trace.unsealed:
            key = _trace_key(trace)
            seals[key] = keys.seal(record.id, key, _traced(trace))
    record.seals = seals


def check_code(keys: RelayKeys, record: SessionRecord) -> list[str]:
    """Mark ``unsealed`` each watch, trace and breakpoint running code of a record read back from the store
    that does not carry this key's seal (for this session and this item). Returns their ids."""
    found: list[str] = []
    for watch in record.watches:
        key = _watch_key(watch)
        watch.unsealed = not keys.sealed(record.id, key, watch.expression, record.seals.get(key))
        if watch.unsealed:
            found.append(watch.id)
    for bp in record.breakpoints:
        code = _code(bp)
        key = _breakpoint_key(bp)
        bp.unsealed = code is not None and not keys.sealed(record.id, key, code, record.seals.get(key))
        if bp.unsealed:
            bp.verified, bp.dap_id, bp.message = False, None, "not sealed by this relay: never sent to the target"
            found.append(bp.id)
    for trace in record.traces:
        key = _trace_key(trace)
        trace.unsealed = not keys.sealed(record.id, key, _traced(trace), record.seals.get(key))
        if trace.unsealed:
            found.append(trace.id)
    return found


# -- breakpoint profiles ---------------------------------------------------------------------------------------


def _profile_value(profile: StoredProfile) -> dict[str, Any]:
    return {"breakpoints": msgspec.to_builtins(profile.breakpoints), "saved_by": profile.saved_by}


def seal_profile(keys: RelayKeys, name: str, profile: StoredProfile) -> StoredProfile:
    """``profile`` with its seal, bound to its name."""
    return msgspec.structs.replace(profile, seal=keys.seal(f"profile:{name}", "profile", _profile_value(profile)))


def profile_sealed(keys: RelayKeys, name: str, profile: StoredProfile) -> bool:
    """Whether ``profile``, read from the store as ``name``, carries this key's seal."""
    return keys.sealed(f"profile:{name}", "profile", _profile_value(profile), profile.seal)
