"""Wrapping every public operation of a service class at once: redaction and the agent's trail are
applied there, so every interface (HTTP, MCP, CLI, the live view) goes through them."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
C = TypeVar("C", bound=type)


def wrap_operations(cls: C, wrap: Callable[[str, Any], Any], skip: frozenset[str] = frozenset()) -> C:
    """Replace each public ``async def`` of ``cls`` (not in ``skip``) by ``wrap(name, method)``: its own and
    those of the sections it is made of (``RelayService``'s mixins); an abstract declaration is no operation."""
    for name in dir(cls):
        member = inspect.getattr_static(cls, name)
        if name.startswith("_") or name in skip or not inspect.iscoroutinefunction(member):
            continue
        if getattr(member, "__isabstractmethod__", False):
            continue
        setattr(cls, name, wrap(name, member))
    return cls
