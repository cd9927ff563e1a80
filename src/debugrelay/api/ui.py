"""``/ui``: a live, read-only view of the relay's sessions for the people who run agents.

Pages are rendered by the relay (``ui_render``) from the same redacting service the API answers
with; a server-sent event stream per page re-renders what changed, woken by the sessions' change
feed (a stop, a step, an end, output, a call in the agent's trail), never by polling. With a token,
the page asks for it once and keeps a cookie derived from it (HttpOnly, SameSite=Strict, path /ui):
accepted for /ui only, where every route is a read (the login aside, which the browser guard's Origin
check covers).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

import msgspec
from litestar import Request, Response, Router, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, ResponseHeader
from litestar.enums import MediaType, ScopeType
from litestar.handlers.base import BaseRouteHandler
from litestar.response import ServerSentEvent
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.config import Settings
from debugrelay.errors import NotFound, RelayError, SessionNotFound, Unauthorized
from debugrelay.models import Input, OutputLine, SessionRecord
from debugrelay.service import RelayService, calling, trail_for
from debugrelay.service._redaction import seam_for
from debugrelay.sessions import SessionManager

from . import ui_render as render
from ._deps import Config, Manager, Service

COOKIE = "debugrelay_ui"
# scripts and styles from the relay only (/ui/static), no inline script, nothing from elsewhere
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
OUTPUT_TAIL = 200  # lines a page shows (and keeps as more arrive); older ones are marked as not shown
STREAM_SECONDS = 300.0  # an event stream ends after this and the browser reconnects (never a stuck shutdown)
CLUSTER_REFRESH = 10.0  # other replicas' sessions change without telling this one: the list re-reads them
FRAMES, LOCALS, SOURCE_AROUND = 20, 100, 10
_STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
_json = msgspec.json.Encoder()


class Login(Input):
    token: str


def cookie_value(token: str) -> str:
    """What the cookie holds: derived from the token, good for /ui only (it is not the API token)."""
    return hmac.new(token.encode(), b"debugrelay /ui view", hashlib.sha256).hexdigest()


def _allowed(connection: ASGIConnection[Any, Any, Any, Any], token: str | None) -> bool:
    if not token:
        return True
    cookie = connection.cookies.get(COOKIE, "")
    if cookie and hmac.compare_digest(cookie.encode(), cookie_value(token).encode()):
        return True
    scheme, _, value = connection.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), token.encode())


def trail_middleware(app: ASGIApp) -> ASGIApp:
    """Name each API call on a session for its trail: ``POST /sessions/…/step``."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        if scope["type"] != ScopeType.HTTP or not path.startswith("/sessions"):
            await app(scope, receive, send)
            return
        parts = path.split("/")
        if len(parts) > 2 and parts[2].startswith("sess_"):
            parts[2] = "…"
        query = scope.get("query_string", b"").decode("latin-1")
        label = f"{scope['method']} {'/'.join(parts)}{'?' + query if query else ''}"
        with calling(render.clip_label(label)):
            await app(scope, receive, send)

    return middleware


@contextmanager
def _unobserved(manager: SessionManager, session_id: str) -> Iterator[None]:
    """A person looking does not keep a session alive: its idle clock is left as it was."""
    session = manager.sessions.get(session_id)
    before = session.record.last_activity if session is not None else None
    try:
        yield
    finally:
        if session is not None and before is not None:
            session.record.last_activity = before


def _program(launch: dict[str, Any] | None, attach: dict[str, Any] | None) -> str:
    if launch:
        what = launch.get("script") or (f"-m {launch['module']}" if launch.get("module") else "?")
        return " ".join([str(what), *(str(a) for a in launch.get("args") or [])])
    if attach:
        return "attached to " + ", ".join(f"{k}={v}" for k, v in attach.items() if k in ("host", "port", "pid", "pod"))
    return "(not started)"


async def _record_program(manager: SessionManager, record: SessionRecord) -> str:
    """The program of a session, from its record (another replica's too), redacted like an answer."""
    launch = msgspec.to_builtins(record.launch) if record.launch is not None else None
    attach = msgspec.to_builtins(record.attach) if record.attach is not None else None
    text = _program(launch, attach)
    seam = seam_for(manager)
    if seam.redactor is not None:
        table = await seam.table(record.id)
        text = seam.redactor.text(text, table, "ui")
        await seam.persist(record.id, table)
    return text


async def list_rows(service: RelayService, manager: SessionManager) -> list[render.ListRow]:
    listed = await service.list_sessions()
    records = {s.id: s.record for s in await manager.list_all()}
    rows = []
    for summary in listed.sessions:
        record = records.get(summary.session_id)
        if record is None:
            continue
        stop = record.stop
        rows.append(
            render.ListRow(
                summary=summary,
                program=await _record_program(manager, record),
                created_at=record.created_at,
                stop_at=stop.at if stop is not None else None,
                stop_seq=stop.seq if stop is not None else 0,
                owner=record.owner or "",
                here=summary.session_id in manager.sessions,
            )
        )
    return rows


async def session_view(service: RelayService, manager: SessionManager, sid: str) -> render.SessionView:
    """Everything the session page shows, read through the redacting service; a part that fails says why."""
    with _unobserved(manager, sid):
        detail = await service.session(sid)
        record = manager.sessions[sid].record
        view = render.SessionView(
            detail=detail,
            program=_program(detail.launch, detail.attach),
            owner=record.owner or "",
            stop_at=record.stop.at if record.stop is not None else None,
            stop_seq=record.stop.seq if record.stop is not None else 0,
            trail=trail_for(manager).entries(sid),
        )
        try:
            view.breakpoints = (await service.breakpoints(sid)).breakpoints
            view.watches = (await service.watches(sid)).watches
        except RelayError:
            pass
        if detail.status != "paused":
            view.locals_note = "shown while the program is paused"
            return view
        try:
            stack = await service.stacktrace(sid, count=FRAMES)
            view.frames, view.total_frames = stack.frames, stack.total_frames
            found = await service.scoped_variables(sid, scope="all", count=LOCALS)  # arguments, then locals
            view.local_vars, view.locals_total = found.variables, found.total
        except RelayError as exc:
            view.locals_note = exc.message
        loc = detail.location
        if loc is not None and loc.file and loc.line:
            try:
                view.source = await service.source(
                    sid, loc.file, max(1, loc.line - SOURCE_AROUND), loc.line + SOURCE_AROUND
                )
            except RelayError as exc:
                view.source_note = exc.message
        return view


async def output_tail(
    service: RelayService, manager: SessionManager, sid: str
) -> tuple[list[OutputLine], str | None, bool]:
    """The last :data:`OUTPUT_TAIL` lines, the cursor after them, and whether earlier ones are not shown."""
    lines: list[OutputLine] = []
    cursor: str | None = None
    earlier = False
    with _unobserved(manager, sid):
        while True:
            page = await service.output(sid, since=cursor, limit=1000)
            lines.extend(page.outputs)
            earlier = earlier or bool(page.dropped)
            cursor = page.cursor or cursor
            if not page.has_more:
                break
    if len(lines) > OUTPUT_TAIL:
        lines, earlier = lines[-OUTPUT_TAIL:], True
    return lines, cursor, earlier


def _html(body: str, status: int = 200) -> Response[str]:
    return Response(body, media_type=MediaType.HTML, status_code=status, headers={"Cache-Control": "no-store"})


@get("/", opt={"ui_page": True})
async def sessions_page(request: Request[Any, Any, Any], service: Service, manager: Manager) -> Response[str]:
    if not request.state.ui_allowed:
        return _html(render.login_page(), 401)
    return _html(render.list_page(await list_rows(service, manager)))


@get("/sessions/{session_id:str}", opt={"ui_page": True})
async def session_page(
    request: Request[Any, Any, Any], session_id: str, service: Service, manager: Manager
) -> Response[str]:
    if not request.state.ui_allowed:
        return _html(render.login_page(), 401)
    if session_id not in manager.sessions:
        for row in await list_rows(service, manager):
            if row.summary.session_id == session_id:
                return _html(render.elsewhere_page(row.summary, row.owner))
        return _html(render.not_found_page(session_id), 404)
    view = await session_view(service, manager, session_id)
    tail, _, earlier = await output_tail(service, manager, session_id)
    return _html(render.session_page(view, tail, earlier))


@get("/sessions/{session_id:str}/children")
async def children(session_id: str, ref: int, service: Service, manager: Manager) -> Response[str]:
    """An expandable value's children, as HTML the page puts under it."""
    try:
        with _unobserved(manager, session_id):
            page = await service.children(session_id, ref, 0, LOCALS)
    except RelayError as exc:
        return _html(f"<p class=err>{render.e(exc.message)}</p>", exc.status)
    return _html(render.variable_rows(page.items, more=page.total - len(page.items)))


def _event(data: dict[str, Any]) -> str:
    return _json.encode(data).decode()


@get("/events")
async def list_events(service: Service, manager: Manager) -> ServerSentEvent:
    feed = manager.feed
    refresh = CLUSTER_REFRESH if manager.ownership is not None else STREAM_SECONDS

    async def stream() -> AsyncIterator[str]:
        end = time.monotonic() + STREAM_SECONDS
        while not feed.closed and time.monotonic() < end:
            seen = feed.version
            yield _event({"html": render.sessions_table(await list_rows(service, manager))})
            await feed.wait(seen, timeout=min(refresh, max(0.0, end - time.monotonic())))

    return ServerSentEvent(stream(), retry_duration=1000)


@get("/sessions/{session_id:str}/events")
async def session_events(session_id: str, service: Service, manager: Manager) -> ServerSentEvent:
    if session_id not in manager.sessions:
        raise SessionNotFound(f"no session '{session_id}' on this relay", details={"id": session_id})
    feed = manager.feed

    async def stream() -> AsyncIterator[str]:
        end = time.monotonic() + STREAM_SECONDS
        tail, cursor, earlier = await output_tail(service, manager, session_id)
        first = True
        while not feed.closed and time.monotonic() < end:
            seen = feed.of.get(session_id, 0)
            try:
                view = await session_view(service, manager, session_id)
                if first:
                    out, dropped = tail, earlier
                else:
                    with _unobserved(manager, session_id):
                        page = await service.output(session_id, since=cursor, limit=OUTPUT_TAIL)
                    out, dropped, cursor = page.outputs, bool(page.dropped or page.has_more), page.cursor or cursor
            except SessionNotFound:
                yield _event({"gone": True, "html": "<p class=note>This session was deleted.</p>"})
                return
            yield _event(
                {
                    "html": render.session_panel(view),
                    "out": render.output_lines(out),
                    "reset": first,
                    "cut": dropped,
                    "title": view.detail.status,
                }
            )
            first = False
            await feed.wait(seen, session_id, timeout=max(0.0, end - time.monotonic()))

    return ServerSentEvent(stream(), retry_duration=1000)


@post("/login", status_code=204, opt={"ui_open": True})
async def login(data: Login, settings: Config) -> Response[None]:
    """The token, checked once; the answer sets the view's cookie (the token itself never goes in it)."""
    token = settings.token
    if not token:
        return Response(None, status_code=204)
    if not hmac.compare_digest(data.token.encode(), token.encode()):
        raise Unauthorized("wrong API token", hint="Give the relay's DEBUGRELAY_TOKEN.")
    cookie = Cookie(key=COOKIE, value=cookie_value(token), path="/ui", httponly=True, samesite="strict")
    return Response(None, status_code=204, cookies=[cookie])


@post("/logout", status_code=204, opt={"ui_open": True})
async def logout() -> Response[None]:
    gone = Cookie(key=COOKIE, value="", path="/ui", httponly=True, samesite="strict", max_age=0)
    return Response(None, status_code=204, cookies=[gone])


@get("/static/{name:str}", opt={"ui_open": True}, sync_to_thread=False)
def static(name: str) -> Response[bytes]:
    media = _STATIC.get(name)
    if media is None:
        raise NotFound(f"no file '{name}' in the view", details={"name": name})
    body = resources.files("debugrelay.api").joinpath("ui_static", name).read_bytes()
    return Response(body, media_type=media, headers={"Cache-Control": "no-cache"})


def ui_router(settings: Settings) -> Router:
    """The view's routes under /ui, behind the token rule (cookie or bearer) and the view's own CSP."""

    def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        if handler.opt.get("ui_open"):
            return
        allowed = _allowed(connection, settings.token)
        if handler.opt.get("ui_page"):
            connection.state.ui_allowed = allowed
        elif not allowed:
            raise Unauthorized("sign in to the view first", hint="Open /ui and give the relay's token.")

    return Router(
        path="/ui",
        route_handlers=[sessions_page, session_page, children, list_events, session_events, login, logout, static],
        guards=[guard],
        response_headers=[ResponseHeader(name="Content-Security-Policy", value=CSP)],
        include_in_schema=False,
    )
