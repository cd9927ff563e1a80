"""Session export, import and clone."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post

from debugrelay.models import Input
from debugrelay.sessions import SessionManager, session_view
from debugrelay.sessions._transfer import SessionDocument, clone, export, import_session

from ._body import optional_body


class CloneBody(Input):
    name: str | None = None
    start: bool = False


class TransferController(Controller):
    path = "/sessions"
    tags = ["sessions"]  # noqa: RUF012

    @get("/{session_id:str}/export", summary="Session configuration: launch spec, breakpoints, filters, name")
    async def export_session(self, manager: SessionManager, session_id: str) -> dict[str, Any]:
        return export(manager.get(session_id).record)

    @post("/import", status_code=201, summary="Create a session from an export (start it with start: true)")
    async def import_(self, manager: SessionManager, data: SessionDocument) -> dict[str, Any]:
        session, report = await import_session(manager, data)
        return {"session_id": session.id, **session_view(session, manager.expires_in(session)), **report}

    @post("/{session_id:str}/clone", status_code=201, summary="A new session: same spec and breakpoints")
    async def clone_session(
        self, manager: SessionManager, session_id: str, request: Request[Any, Any, Any]
    ) -> dict[str, Any]:
        body = await optional_body(request, CloneBody) or CloneBody()
        session, report = await clone(manager, manager.get(session_id), name=body.name, start=body.start)
        return {
            "session_id": session.id,
            "cloned_from": session_id,
            **session_view(session, manager.expires_in(session)),
            **report,
        }
