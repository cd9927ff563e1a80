"""The tool that reaches a service under the debugger: an HTTP request sent by the relay, answered with the
response or with the stop it caused (its locals, like every stop)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from debugrelay.models import HttpCall

from ._declare import ActionGroup, ContinueTimeout, SessionId, WithLocals, action


class ServiceTools(ActionGroup):
    """A program that serves requests (a web app): send one and see where it stops."""

    @action(core=False)
    async def debug_request(
        self,
        *,
        port: Annotated[int | None, Field(description="The service's (default: debug_launch port).")] = None,
        path: Annotated[str, Field(description="'/orders/7'.")] = "/",
        method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] = "GET",
        headers: dict[str, str] | None = None,
        body: str | None = None,
        session_id: SessionId = None,
        timeout: ContinueTimeout = 30,
        locals: WithLocals = True,
    ) -> dict[str, Any]:
        """An HTTP request to the service, sent by the relay: its response, or the stop it caused (the
        response then comes later, in 'requests')."""
        sid = await self._sid(session_id)
        call = HttpCall(method=method, path=path, port=port, headers=headers or {}, body=body, timeout=timeout)
        status = await self.backend.request(sid, call)
        return await self.stops.event(sid, status, with_locals=locals, waited=timeout)
