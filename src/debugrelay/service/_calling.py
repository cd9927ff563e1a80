"""Naming the call an adapter serves (``tool debug_step_over``), for the agent's trail (:mod:`._trail`): apart
from the trail itself, so an adapter names its calls without loading the sessions it is recorded in."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass
class _Call:
    label: str
    recorded: bool = False


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("debugrelay_trail_call", default=None)


@contextlib.contextmanager
def calling(label: str) -> Iterator[None]:
    """Record the session operation run inside as one call named ``label``."""
    token = _CALL.set(_Call(label))
    try:
        yield
    finally:
        _CALL.reset(token)
