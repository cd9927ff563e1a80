"""The redaction audit: what a session's answers have had hidden, never the values."""

from __future__ import annotations

from litestar import Controller, get

from debugrelay.models import Redactions

from ._deps import Service


class RedactionController(Controller):
    path = "/sessions/{session_id:str}"
    tags = ["redaction"]  # noqa: RUF012

    @get("/redactions", summary="What was redacted from this session's answers: rule, placeholder, where, when")
    async def redactions(self, service: Service, session_id: str) -> Redactions:
        return await service.redactions(session_id)
