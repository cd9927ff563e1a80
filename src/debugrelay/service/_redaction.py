"""The one place answers leave the relay: every operation's answer and error passes through redaction.

``redacting`` wraps each public operation of a service class: placeholders in what the agent sends
(expressions, conditions, logpoint messages, values, program input) are put back, the operation runs,
and every string of its answer (or of its error) is redacted against the session's table. Operations
added later are covered without a line of their own. Nested calls (``wait`` asking ``autopsy``) are
redacted once, by the outermost.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import logging
import weakref
from collections.abc import Callable
from typing import Any

import msgspec

from debugrelay.errors import RelayError, SessionNotFound, StoreUnavailable
from debugrelay.models import RedactionView, SessionList
from debugrelay.redaction import (
    OFF_LOOP_CHARS,
    Budget,
    Entry,
    Placeholders,
    Redactor,
    SubstituteMode,
    secret_expression,
    text_size,
)
from debugrelay.sessions import SessionManager

from ._wrapping import C, F, wrap_operations

log = logging.getLogger("debugrelay.redaction")

_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("debugrelay_redacting", default=False)
_UNWRAPPED = frozenset({"close", "redactions", "evidence"})  # evidence: redacted as its session's
# What an agent sends that may carry placeholders, and how each is read.
_INPUTS: dict[str, SubstituteMode] = {"expression": "expression", "value": "expression", "object_ref": "expression"}
_TEXT_INPUTS: dict[str, SubstituteMode] = {"text": "text"}
_BREAKPOINT_FIELDS: dict[str, SubstituteMode] = {
    "condition": "expression",
    "hit_condition": "expression",
    "log_message": "log_message",
}
_NAMED_BY = ("expression", "object_ref")  # an answer named by what was asked for: os.environ['API_KEY']
_entry_decoder = msgspec.json.Decoder(Entry)
_entry_encoder = msgspec.json.Encoder()


class RedactionSeam:
    """A relay's redaction: its rules, and the placeholder tables of its sessions (store-backed)."""

    def __init__(self, manager: SessionManager, redactor: Redactor | None) -> None:
        self.manager = manager
        self.redactor = redactor
        self.tables: dict[str, Placeholders] = {}
        self.relay_table = Placeholders()  # answers that belong to no session (profiles); never stored

    @property
    def enabled(self) -> bool:
        return self.redactor is not None

    async def table(self, session_id: str) -> Placeholders:
        """The session's table, read from the store once; a throwaway one for an unknown session."""
        found = self.tables.get(session_id)
        if found is not None:
            return found
        try:
            self.manager.get(session_id)
        except RelayError:
            return Placeholders()
        raw = await self.manager.store.get_redactions(session_id)
        entries = []
        for value in raw.values():
            try:
                entries.append(_entry_decoder.decode(value))
            except msgspec.DecodeError:
                log.warning("skipping an unreadable placeholder entry of session %s", session_id)
        found = self.tables.setdefault(session_id, Placeholders(entries))
        if len(self.tables) > 2 * len(self.manager.sessions) + 16:
            for sid in [s for s in self.tables if s not in self.manager.sessions]:
                del self.tables[sid]
        return found

    async def persist(self, session_id: str | None, table: Placeholders) -> None:
        """Write the table's new entries; while the store is away they wait for the next answer."""
        pending = table.take_pending()
        if not pending or session_id is None or self.tables.get(session_id) is not table:
            return
        for entry in pending:
            log.info("redacted %s as %s in %s of session %s", entry.rule, entry.placeholder, entry.where, session_id)
        try:
            await self.manager.store.add_redactions(
                session_id, {e.placeholder: _entry_encoder.encode(e) for e in pending}
            )
        except StoreUnavailable:
            table.put_back(pending)

    def forget(self, session_id: str) -> None:
        self.tables.pop(session_id, None)

    def inputs(self, arguments: dict[str, Any], table: Placeholders) -> None:
        """Placeholders in what the agent sent, put back in place (``arguments`` of a bound call)."""
        assert self.redactor is not None
        put = self.redactor.substitute
        for name, value in arguments.items():
            mode = _INPUTS.get(name) or _TEXT_INPUTS.get(name)
            if mode is not None and isinstance(value, str):
                arguments[name] = put(value, table, mode)
            elif name in ("requests", "change") and value:
                items = value if isinstance(value, list) else [value]
                done = [_put_back_fields(item, table, put) for item in items]
                arguments[name] = done if isinstance(value, list) else done[0]

    async def answer(self, answer: Any, table: Placeholders, where: str, arguments: dict[str, Any]) -> Any:
        """The answer redacted, up to what one answer may have redacted; a large one in a worker thread,
        so that the event loop answers others (``/health``) meanwhile."""
        assert self.redactor is not None
        secret, budget = _named_by(arguments), Budget()
        if text_size(answer, OFF_LOOP_CHARS) < OFF_LOOP_CHARS:
            return self.redactor.walk(answer, table, where, secret=secret, budget=budget)
        return await asyncio.to_thread(self.redactor.walk, answer, table, where, secret=secret, budget=budget)

    def error(self, exc: RelayError, table: Placeholders, where: str, arguments: dict[str, Any]) -> None:
        """The error's message, details and hint redacted in place (the MCP SDK forwards exception text);
        about an expression touching a secret-named value, every quoted value in its message is hidden."""
        assert self.redactor is not None
        text = self.redactor.quoted if _named_by(arguments) else self.redactor.text
        exc.message = text(exc.message, table, where)
        exc.hint = self.redactor.text(exc.hint, table, where)
        exc.details = self.redactor.walk(exc.details, table, where)
        exc.args = (exc.message,)

    def view(self, table: Placeholders) -> list[RedactionView]:
        return [RedactionView(placeholder=e.placeholder, rule=e.rule, where=e.where, at=e.at) for e in table.entries()]


def _named_by(arguments: dict[str, Any]) -> bool:
    return any(isinstance(v := arguments.get(k), str) and secret_expression(v) for k in _NAMED_BY)


def _put_back_fields(item: Any, table: Placeholders, put: Callable[[str, Placeholders, SubstituteMode], str]) -> Any:
    if not isinstance(item, msgspec.Struct):
        return item
    changes = {
        f: put(v, table, mode)
        for f, mode in _BREAKPOINT_FIELDS.items()
        if isinstance(v := getattr(item, f, None), str) and "[" in v
    }
    return msgspec.structs.replace(item, **changes) if changes else item


_seams: weakref.WeakKeyDictionary[SessionManager, RedactionSeam] = weakref.WeakKeyDictionary()


def seam_for(manager: SessionManager) -> RedactionSeam:
    """The manager's redaction (one per relay, shared by the HTTP API, /mcp and every service over it)."""
    seam = _seams.get(manager)
    if seam is None:
        from debugrelay.redaction import load_patterns

        settings = manager.settings
        redactor = Redactor(load_patterns(settings.redaction_patterns)) if settings.redaction else None
        seam = _seams.setdefault(manager, RedactionSeam(manager, redactor))
    return seam


def _wrap(name: str, fn: F) -> F:
    signature = inspect.signature(fn)
    by_session = "session_id" in signature.parameters

    @functools.wraps(fn)
    async def redacted(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE.get():
            return await fn(self, *args, **kwargs)
        seam = seam_for(self.manager)
        if not seam.enabled:
            return await fn(self, *args, **kwargs)
        bound = signature.bind(self, *args, **kwargs)
        session_id = bound.arguments.get("session_id") if by_session else None
        table = await seam.table(session_id) if isinstance(session_id, str) else seam.relay_table
        seam.inputs(bound.arguments, table)
        token = _INSIDE.set(True)
        try:
            answer = await fn(*bound.args, **bound.kwargs)
        except RelayError as exc:
            if not isinstance(exc, SessionNotFound):
                seam.error(exc, table, name, bound.arguments)
                await seam.persist(session_id, table)
            raise
        finally:
            _INSIDE.reset(token)
        if isinstance(answer, SessionList):
            return await _session_list(seam, answer, name)
        answer = await seam.answer(answer, table, name, bound.arguments)
        if name == "delete_session" and isinstance(session_id, str):
            seam.forget(session_id)  # the store forgot its table with the session
        else:
            await seam.persist(session_id, table)
        return answer

    return redacted  # type: ignore[return-value]


async def _session_list(seam: RedactionSeam, found: SessionList, where: str) -> SessionList:
    assert seam.redactor is not None
    sessions = []
    for summary in found.sessions:
        table = await seam.table(summary.session_id)
        sessions.append(seam.redactor.walk(summary, table, where))
        await seam.persist(summary.session_id, table)
    return SessionList(sessions=sessions, total=found.total)


def redacting(cls: C) -> C:
    """Every public ``async def`` of ``cls`` answers through redaction (see the module's docstring)."""
    return wrap_operations(cls, _wrap, _UNWRAPPED)
