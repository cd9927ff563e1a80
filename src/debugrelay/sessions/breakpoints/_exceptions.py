"""Exception breakpoints: filters sent to debugpy, exception types the relay filters itself."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any

from debugrelay.dap import StackFrame
from debugrelay.errors import InvalidRequest, InvalidState, RelayError
from debugrelay.models import ExceptionFilters, ExceptionInfo
from debugrelay.models.limits import EXCEPTION_TYPE

from ._common import BREAK_MODES, BUILTIN_EXCEPTIONS, EXCEPTION_FILTERS, live_client, state_of

if TYPE_CHECKING:
    from .._session import Session


async def set_exception_filters(session: Session, filters: list[str], exception_types: list[str]) -> ExceptionFilters:
    """Validate, store and (when a target runs) apply exception breakpoints; all-or-nothing. They are the
    session's own: each later launch that gives no ``stop_on_exception`` runs with them."""
    bad = [f for f in filters if f not in EXCEPTION_FILTERS]
    if bad:
        raise InvalidRequest(
            f"unknown exception filter(s): {', '.join(bad)}",
            details={"filters": bad, "allowed": list(EXCEPTION_FILTERS)},
            hint="Use raised, uncaught or userUnhandled.",
        )
    bad_types = [t for t in exception_types if not re.match(EXCEPTION_TYPE, t)]
    if bad_types:
        raise InvalidRequest(
            "exception_types must be class names",
            details={"exception_types": bad_types},
            hint='e.g. ["KeyError", "myapp.errors.RetryableError"]',
        )
    wanted = ExceptionFilters(
        filters=list(dict.fromkeys(filters or (["raised"] if exception_types else []))),
        exception_types=[t.strip() for t in exception_types],
    )
    async with session.lock:
        previous = session.record.exception_filters, session.record.exception_setting
        session.record.exception_filters = session.record.exception_setting = wanted
        if live_client(session) is not None:
            try:
                await apply_exception_filters(session)
            except BaseException:
                session.record.exception_filters, session.record.exception_setting = previous
                raise
        await session.save()
    return wanted


async def apply_exception_filters(session: Session) -> None:
    """Send the session's exception filters to debugpy.

    With ``exception_types`` that are all builtins, debugpy filters by ``issubclass`` itself
    (``exceptionOptions``). Other names are resolved by pydevd once, when they are set, by importing
    them, which fails for a class of the script being run (``__main__`` is not run yet); then the
    relay asks debugpy for every exception and lets through only the matching ones.
    """
    client = live_client(session)
    if client is None:
        raise InvalidState(
            f"session is {session.status}: there is no running target", details={"status": session.status}
        )
    wanted = session.record.exception_filters or ExceptionFilters()
    rt = state_of(session)
    types = [t.removeprefix("builtins.") for t in wanted.exception_types]
    args: dict[str, Any]
    if types and all(t in BUILTIN_EXCEPTIONS for t in types):
        args = {
            "filters": [],
            "exceptionOptions": [
                {"path": [{"names": ["Python Exceptions"]}, {"names": types}], "breakMode": BREAK_MODES[f]}
                for f in wanted.filters
            ],
        }
        filter_types: tuple[str, ...] = ()
    else:
        args = {"filters": list(wanted.filters)}
        filter_types = tuple(wanted.exception_types)
    await client.request("setExceptionBreakpoints", args)
    rt.filter_types = filter_types


async def exception_wanted(session: Session, frames: list[StackFrame], info: ExceptionInfo) -> bool:
    """Whether an exception stop is one the agent asked for (``SystemExit`` only when named).

    debugpy's "raised" pauses again in every frame the same exception passes through on its way
    up (measured with debugpy 1.8.22); the relay pauses once per exception object. With
    ``exception_types`` the relay cannot hand to debugpy, it also checks the class and its bases.
    """
    rt = state_of(session)
    if info.type.removeprefix("builtins.") == "SystemExit":
        # sys.exit(n) is how a program ends, not a crash: it answers 'terminated' with the exit code,
        # unless the agent asked for SystemExit by name
        asked = session.record.exception_filters or ExceptionFilters()
        return any(type_matches(t, [("builtins", "SystemExit")]) for t in asked.exception_types)
    if not rt.filter_types and info.break_mode != "always":
        return True
    facts = await _exception_facts(session, frames)
    if facts is None:
        return not rt.filter_types or any(type_matches(t, [("", info.type)]) for t in rt.filter_types)
    seen_before, classes = facts
    if info.break_mode == "always" and seen_before:
        return False
    return not rt.filter_types or any(type_matches(t, classes) for t in rt.filter_types)


# One flat string, because evaluate results abbreviate nested values as "(...)". The target keeps
# the last exception the relay looked at in sys.__dict__ (like sys.last_value): exceptions take no
# weak references, and ids are reused at once, so only the object itself tells "the same one".
_FACTS = (
    "'%d ' % (lambda d, e: (d.get('_debugrelay_last_exception') is e, "
    "d.__setitem__('_debugrelay_last_exception', e))[0])(__import__('sys').__dict__, __exception__[1])"
    " + ' '.join(c.__module__ + ':' + c.__qualname__ for c in __exception__[0].__mro__)"
)


async def _exception_facts(session: Session, frames: list[StackFrame]) -> tuple[bool, list[tuple[str, str]]] | None:
    """(whether the relay already looked at this exception object, (module, qualname) of its classes)."""
    client = session.channel  # the process that stopped
    if client is None or not frames:
        return None
    try:
        body = await client.request("evaluate", {"expression": _FACTS, "frameId": frames[0].id, "context": "clipboard"})
        seen, *classes = str(ast.literal_eval(body.get("result", ""))).split(" ")
    except (RelayError, ValueError, SyntaxError, TypeError):
        return None
    pairs = [c.partition(":") for c in classes]
    return seen == "1", [(module, qualname) for module, _, qualname in pairs]


def type_matches(wanted: str, classes: list[tuple[str, str]]) -> bool:
    """``KeyError``, ``builtins.KeyError``, ``AppError`` or ``app.errors.AppError`` name a class or base."""
    for module, qualname in classes:
        if wanted in (qualname, qualname.rsplit(".", 1)[-1], f"{module}.{qualname}"):
            return True
    return False
