"""Seals on the stored fields a relay acts on: a session's target (ended, read, connected to) and its
launch (started again on restart). A relay seals them as it sets them and, taking a stored session
over, sets aside whichever does not carry its key's seal: the store alone cannot make a relay act."""

from __future__ import annotations

from typing import Any

import msgspec

from debugrelay.models import LaunchRequest, SessionRecord, TargetRecord
from debugrelay.trust import RelayKeys

SEALED = ("target", "launch")


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
