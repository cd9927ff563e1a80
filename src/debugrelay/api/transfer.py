"""Session export, import and clone."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, get, post
from litestar.params import JSONBody

from debugrelay.models import Input, SessionDetail, SessionExport
from debugrelay.sessions import SessionDocument

from ._body import optional_body
from ._deps import Service


class CloneBody(Input):
    name: str | None = None
    start: bool = False


class TransferController(Controller):
    path = "/sessions"
    tags = ["sessions"]  # noqa: RUF012

    @get("/{session_id:str}/export", summary="Session configuration: launch spec, breakpoints, filters, name")
    async def export_session(self, service: Service, session_id: str, reveal_env: bool = False) -> SessionExport:
        return await service.export(session_id, reveal_env=reveal_env)

    @post("/import", status_code=201, summary="Create a session from an export (start it with start: true)")
    async def import_(self, service: Service, data: JSONBody[SessionDocument]) -> SessionDetail:
        return await service.import_session(data)

    @post("/{session_id:str}/clone", status_code=201, summary="A new session: same spec and breakpoints")
    async def clone_session(self, service: Service, session_id: str, request: Request[Any, Any, Any]) -> SessionDetail:
        body = await optional_body(request, CloneBody) or CloneBody()
        return await service.clone(session_id, name=body.name, start=body.start)
