"""Who is calling, for the length of one request: set by the adapter that checked the credential,
read by the service's gate. No caller set means the relay's own code (in-process use, the view's
rendering, recovery): it may do everything."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass

from ._credentials import Credential, Role


@dataclass(frozen=True, slots=True)
class Caller:
    """A checked credential's name and role, with its limits."""

    name: str
    role: Role
    max_sessions: int = 0  # 0: no limit of its own
    requests_per_minute: int = 0

    @classmethod
    def of(cls, credential: Credential) -> Caller:
        return cls(credential.name, credential.role, credential.max_sessions, credential.requests_per_minute)


SCOPE_KEY = "debugrelay.caller"  # where an ASGI scope carries the caller its credential was checked as

_CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("debugrelay_caller", default=None)


def current() -> Caller | None:
    return _CALLER.get()


@contextlib.contextmanager
def acting_as(caller: Caller | None) -> Iterator[None]:
    """Run the block as ``caller``'s request."""
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)
