"""Base classes of the public wire models."""

from __future__ import annotations

import msgspec


class Model(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Output models: compact (defaults omitted), keyword-only."""


class Input(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Request bodies: unknown fields are an error the agent hears about, never silently ignored."""


class Answer(Model, kw_only=True):
    """The answer to a change: ``persisted`` is false when the change was made (in the target and in the
    relay's memory) while the state store was unreachable; the relay writes it once the store answers."""

    persisted: bool | msgspec.UnsetType = msgspec.UNSET
