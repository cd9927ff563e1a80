"""Every operation a client can ask of the relay, written once over the session manager.

The HTTP API, both MCP backends and the CLI are adapters over these methods: they parse their own
input, call one operation, and present the typed answer in their own way.

``RelayService`` holds the session operations, redaction and configuration documents itself; the other
sections are classes of their own modules it is made of: ``_running`` (running the program, output and
input), ``_breakpoints`` (breakpoints and profiles), ``_inspection`` and ``_evidence``, all over
``_core.ServiceCore``. Redaction and the trail wrap every public operation, wherever it is written.
"""

from __future__ import annotations

from typing import Any

import msgspec

from debugrelay import access
from debugrelay.dap import tell_orphan_after
from debugrelay.errors import InvalidRequest, InvalidState
from debugrelay.models import (
    AttachSpec,
    AuditPage,
    Deleted,
    LaunchRequest,
    Ping,
    Redactions,
    SessionDetail,
    SessionExport,
    SessionList,
    SessionSummary,
    Status,
    limits,
)
from debugrelay.models.limits import MAX_PAGE, MAX_WAIT, OUTPUT_PAGE_MAX
from debugrelay.sessions import SessionDocument, clone, export, import_session, status_view

from ._breakpoints import BreakpointOps
from ._core import (
    LOCALS_MAX,
    STEP_WAIT,
    VALUE_MAX,
    check_length,
    check_page,
    check_timeout_minutes,
    format_number,
    wait_seconds,
)
from ._evidence import EvidenceOps
from ._gate import gated
from ._inspection import InspectionOps
from ._running import RunningOps
from ._traces import TraceOps

__all__ = [
    "LOCALS_MAX",
    "MAX_PAGE",
    "MAX_WAIT",
    "OUTPUT_PAGE_MAX",
    "STEP_WAIT",
    "VALUE_MAX",
    "RelayService",
    "check_page",
    "format_number",
    "wait_seconds",
]


@gated
class RelayService(RunningOps, BreakpointOps, InspectionOps, EvidenceOps, TraceOps):
    """The relay's operations over this process's :class:`SessionManager`.

    ``manager`` may be a callable returning it, for adapters built before the relay has started.
    Every answer and error passes through redaction on its way out (see ``_redaction``).
    """

    async def act(self, action: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        from .actions import run_action  # the actions compose the operations below

        return await run_action(self, action, arguments or {})

    # -- sessions ------------------------------------------------------------------------------------

    async def list_sessions(self) -> SessionList:
        mgr = self.manager
        caller = access.current()
        found = [
            msgspec.convert(
                {**status_view(s, mgr.expires_in(s)), "name": s.record.name, "created_by": s.record.created_by},
                SessionSummary,
            )
            for s in await mgr.list_all()
            if access.may_see(caller, s.record.created_by, s.record.shared_with)
        ]
        return SessionList(sessions=found, total=len(found))

    async def create_session(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
        launch: LaunchRequest | None = None,
    ) -> SessionDetail:
        check_length("name", name, limits.MAX_NAME)
        check_timeout_minutes(timeout_minutes)
        session = await self.manager.create(name=name, timeout_minutes=timeout_minutes, attach=attach)
        if launch is not None:
            await session.launch(launch)
        return self._detail(session)

    async def session(self, session_id: str) -> SessionDetail:
        return self._detail(self._get(session_id))

    async def share(self, session_id: str, *, names: list[str]) -> SessionDetail:
        session = self._get(session_id)
        record = session.record
        if len(set(record.shared_with) | set(names)) > limits.MAX_SHARES:
            raise InvalidRequest(
                f"a session is shared with {limits.MAX_SHARES} names at most",
                details={"shared_with": len(record.shared_with)},
                hint="Share with a role (role:agent) instead of many names.",
            )
        record.shared_with = [*record.shared_with, *(n for n in dict.fromkeys(names) if n not in record.shared_with)]
        await session.save()
        self.manager.feed.bump(session_id)
        return self._detail(session)

    async def hand_over(self, session_id: str, *, to: str) -> SessionDetail:
        session = self._get(session_id)
        taker = self._taker(to)
        record = session.record
        session.seal()
        former = record.created_by
        shares = [n for n in record.shared_with if n != to]
        given = msgspec.structs.replace(
            record,
            created_by=to,
            made_by=record.made_by or former,  # whoever made it goes on holding a slot for it
            shared_with=shares if former is None or former in shares else [*shares, former],
        )
        if taker.max_sessions:
            await self.manager.save_within(given, to, taker.max_sessions, role="to")  # a slot of the taker's
        else:
            await self.manager.store.save_session(given)
        record.created_by, record.made_by, record.shared_with = given.created_by, given.made_by, given.shared_with
        self.manager.feed.bump(session_id)
        return self._detail(session)

    def _taker(self, to: str) -> access.Caller:
        """The credential in force named ``to``, which may own a session; else :class:`InvalidRequest`."""
        directory = self.manager.directory
        if directory is None:
            raise InvalidState(  # the relay's state, not the request's fault: the same request works on a team's relay
                "this relay has no credentials file: its sessions have no owners to hand over to",
                details={"to": to},
                hint="Sessions have owners on a team's relay (DEBUGRELAY_CREDENTIALS).",
            )
        taker = directory(to)
        if taker is None:
            raise InvalidRequest(
                f"no credential '{to}' is in force on this relay",
                details={"to": to},
                hint="Name a credential of the relay's credentials file that has not expired (admins list them: "
                "GET /credentials).",
            )
        if taker.role == "viewer":
            raise InvalidRequest(
                f"'{to}' is a viewer: a viewer owns no session",
                details={"to": to, "role": taker.role},
                hint="Hand it to an agent or an admin; share it with the viewer to let them read it.",
            )
        return taker

    async def unshare(self, session_id: str, *, names: list[str]) -> SessionDetail:
        session = self._get(session_id)
        session.record.shared_with = [n for n in session.record.shared_with if n not in names]
        await session.save()
        self.manager.feed.bump(session_id)
        return self._detail(session)

    async def audit(
        self, *, session_id: str | None = None, who: str | None = None, offset: int = 0, limit: int = 100
    ) -> AuditPage:
        return await self.manager.audit.page(session_id=session_id, who=who, offset=offset, limit=limit)

    async def update_session(
        self, session_id: str, *, name: str | None = None, timeout_minutes: float | None = None
    ) -> SessionDetail:
        session = self._get(session_id)
        check_length("name", name, limits.MAX_NAME)
        check_timeout_minutes(timeout_minutes)
        if name is not None:
            session.record.name = name
        if timeout_minutes is not None:
            session.record.timeout_minutes = timeout_minutes
            self.manager.poke()
            tell_orphan_after(session.client, timeout_minutes)  # the keeper's deadline is the session's timeout
        await session.save()
        return self._detail(session)

    async def delete_session(self, session_id: str) -> Deleted:
        await self.manager.delete(session_id)
        return Deleted(deleted=True, session_id=session_id)

    async def status(self, session_id: str) -> Status:
        return self._status(self._get(session_id))

    async def ping(self, session_id: str) -> Ping:
        session = self._get(session_id)
        expires = round(self.manager.expires_in(session), 1)
        return Ping(ok=True, status=session.record.status, expires_in_seconds=expires)

    # -- redaction -------------------------------------------------------------------------------------

    async def redactions(self, session_id: str) -> Redactions:
        """What this session's answers have had redacted: rule, placeholder, where, when; never the value."""
        self._get(session_id)
        seam = self.manager.redaction
        if not seam.enabled:
            return Redactions(
                session_id=session_id,
                enabled=False,
                redactions=[],
                total=0,
                note="redaction is off (DEBUGRELAY_REDACTION)",
            )
        found = seam.view(await seam.table(session_id))
        return Redactions(session_id=session_id, enabled=True, redactions=found, total=len(found))

    # -- configuration documents -------------------------------------------------------------------------

    async def export(self, session_id: str, *, reveal_env: bool = False) -> SessionExport:
        """The session's configuration document; environment values masked unless ``reveal_env``."""
        return msgspec.convert(export(self._get(session_id).record, reveal_env=reveal_env), SessionExport)

    async def import_session(self, document: SessionDocument) -> SessionDetail:
        session, report = await import_session(self.manager, document)
        return self._detail(session, **report)

    async def clone(self, session_id: str, *, name: str | None = None, start: bool = False) -> SessionDetail:
        session, report = await clone(self.manager, self._get(session_id), name=name, start=start)
        return self._detail(session, cloned_from=session_id, **report)
