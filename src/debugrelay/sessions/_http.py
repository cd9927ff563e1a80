"""HTTP requests the relay sends to a session's service for the agent, kept by id.

An agent cannot send a request and wait for the stop it causes at once; the relay does both. A launched
target's keeper sends it from beside the program (its loopback: a container's service needs no published
port) and passes the response on as an event, queued while no relay runs, so a relay killed while the
handler was paused still gets it when it is back. An attach session has no keeper: the relay sends it.
A request whose handler is paused stays pending; its response, once there, is reported with the next
answer that says where the session stands (``continue``, ``wait``, ``status``) and stays readable by id.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import httpx

from debugrelay.errors import InvalidRequest, InvalidState
from debugrelay.models._http import RESPONSE_BODY_SHOWN, HttpCall, HttpCallView, HttpResponse

if TYPE_CHECKING:
    from ._session import Session

HTTP_REQUEST = "debugrelay.http"  # to the keeper: send this request (see _boot/_debugrelay_keeper.py)
HTTP_RESPONSE = "debugrelay.httpResponse"  # from the keeper: how it went
KEPT = 50  # requests remembered per session; the oldest finished ones go first
CONNECT_GRACE = 5.0  # a service just launched may not listen yet: connecting is retried this long
_SERVING = ("launching", "running", "paused")  # a target is there to send to


def service_address(session: Session, port: int | None) -> tuple[str, int]:
    """Where the relay reaches the session's service: the target's address (a local target's loopback,
    a container's address on its network, a pod's) or the attached host, and the port asked for."""
    rec = session.record
    if rec.status not in _SERVING:
        raise InvalidState(
            f"session is {rec.status}: no service to send a request to",
            details={"status": rec.status},
            hint="Launch the service first (POST /sessions/{id}/launch), then send the request.",
        )
    if port is None:
        raise InvalidRequest(
            "the request needs the service's port",
            details={"field": "port"},
            hint='Give "port": the port the service listens on inside the target, e.g. 8000.',
        )
    target = session.target
    if rec.mode == "attach":  # the attached program's address as checked (a keeper's target names it)
        target = getattr(target, "attached", target)
    host = getattr(target, "host", None) if target is not None else None
    return (host or "127.0.0.1"), port


async def wait_listening(session: Session, port: int, timeout: float) -> str:
    """Until the program accepts connections on ``port`` (``listening``), or it is ``paused`` or ``ended``,
    or ``timeout`` passes; which one, as the launch answer's ``ready`` says it."""
    deadline = time.monotonic() + timeout
    while True:
        status = session.record.status
        if status == "paused":
            return "paused"
        if status not in _SERVING:
            return "ended"
        host, _ = service_address(session, port)
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 1.0)
        except (TimeoutError, OSError):
            pass
        else:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
            return "listening"
        if time.monotonic() >= deadline:
            return "timeout"
        await session.wait_for_stop(session.record.stop_count, 0.05)  # a stop or the end answers at once


class HttpCalls:
    """The requests of one session: pending ones awaited, finished ones until reported (and a while after)."""

    def __init__(self) -> None:
        self.calls: OrderedDict[str, HttpCallView] = OrderedDict()
        self.waiting: dict[str, asyncio.Future[None]] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.refused: set[str] = set()  # nothing listened: no request was sent
        self.unreported: list[str] = []  # finished after the answer that sent them: said with the next one

    async def start(self, session: Session, host: str, call: HttpCall) -> tuple[HttpCallView, asyncio.Future[None]]:
        """Send ``call``; the view (updated in place when it finishes) and a future done when it has."""
        rid = f"req_{secrets.token_hex(4)}"  # unique across relays: a response may reach the next one
        port = call.port
        assert port is not None
        view = HttpCallView(request_id=rid, method=call.method, path=call.path, port=port, state="pending")
        self.calls[rid] = view
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = done
        self._bound()
        client = session.client
        keeper = session.target is not None and session.target.keeper_secret is not None
        if keeper and client is not None and not client.closed.is_set():
            arguments = {
                "id": rid,
                # beside a launched program: its own loopback; beside the relay (an attach): its address
                "host": host if session.record.mode == "attach" else "127.0.0.1",
                "method": call.method,
                "path": call.path,
                "port": port,
                "headers": call.headers,
                "body": call.body,
                "grace": min(call.timeout / 2, CONNECT_GRACE),  # refused well within the wait
            }
            await client.request(HTTP_REQUEST, arguments)
        else:
            task = asyncio.create_task(self._send(view, host, call))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
        return view, done

    def answered(self, body: Any) -> None:
        """A keeper's ``debugrelay.httpResponse``: a request's outcome (one a relay before this one sent too)."""
        if not isinstance(body, dict) or not isinstance(body.get("id"), str):
            return
        rid = body["id"]
        view = self.calls.get(rid)
        if view is None:
            view = HttpCallView(
                request_id=rid,
                method=str(body.get("method") or "GET"),
                path=str(body.get("path") or "/"),
                port=int(body.get("port") or 0),
                state="pending",
            )
            self.calls[rid] = view
            self._bound()
        if isinstance(body.get("status"), int):
            text = str(body.get("body") or "")
            headers = body.get("headers")
            total = body.get("body_bytes")
            view.response = HttpResponse(
                status=body["status"],
                headers={str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
                body=text[:RESPONSE_BODY_SHOWN],
                body_bytes=total if isinstance(total, int) else None,
                elapsed_ms=float(body.get("elapsed_ms") or 0.0),
            )
            view.state = "answered"
        else:
            view.state, view.error = "failed", str(body.get("error") or "no response")
            if body.get("refused"):
                self.refused.add(rid)
        self._finished(rid)

    def _finished(self, rid: str) -> None:
        self.unreported.append(rid)
        done = self.waiting.pop(rid, None)
        if done is not None and not done.done():
            done.set_result(None)

    async def _send(self, view: HttpCallView, host: str, call: HttpCall) -> None:
        url = f"http://{host if ':' not in host else f'[{host}]'}:{view.port}{call.path}"
        started = time.perf_counter()
        connect_until = time.monotonic() + min(call.timeout / 2, CONNECT_GRACE)  # refused well within the wait
        try:
            # no timeout: a handler paused at a breakpoint answers when the agent continues it
            async with httpx.AsyncClient(timeout=None, trust_env=False, follow_redirects=False) as client:
                while True:
                    try:
                        response = await client.request(
                            call.method, url, headers=call.headers, content=call.body.encode() if call.body else None
                        )
                        break
                    except httpx.ConnectError:  # nothing was sent: trying again cannot send it twice
                        if time.monotonic() >= connect_until:
                            raise
                        await asyncio.sleep(0.1)
            text = response.text
            view.response = HttpResponse(
                status=response.status_code,
                headers=dict(response.headers),
                body=text[:RESPONSE_BODY_SHOWN],
                body_bytes=len(response.content) if len(text) > RESPONSE_BODY_SHOWN else None,
                elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
            )
            view.state = "answered"
        except httpx.HTTPError as exc:
            view.state = "failed"
            view.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            if isinstance(exc, httpx.ConnectError):
                self.refused.add(view.request_id)
        self._finished(view.request_id)

    def take_unreported(self, but: str | None = None) -> list[HttpCallView]:
        """Requests that finished since the last answer said so (``but``: the one this answer is about)."""
        ids = [rid for rid in self.unreported if rid != but]
        self.unreported = []
        return [self.calls[rid] for rid in ids if rid in self.calls]

    def get(self, rid: str) -> HttpCallView | None:
        return self.calls.get(rid)

    def _bound(self) -> None:
        while len(self.calls) > KEPT:
            done = next((rid for rid, v in self.calls.items() if v.state != "pending"), None)
            if done is None:
                return
            del self.calls[done]

    def cancel(self) -> None:
        """The session ends: requests still waiting for an answer are given up."""
        for task in list(self.tasks):
            task.cancel()
        for rid, view in self.calls.items():
            if view.state == "pending":
                view.state, view.error = "failed", "the session ended before the service answered"
                done = self.waiting.pop(rid, None)
                if done is not None and not done.done():
                    done.set_result(None)
