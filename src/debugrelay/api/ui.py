"""``/ui``: a live, read-only view of the relay's sessions for the people who run agents.

Pages are rendered by the relay (``ui_render``) from the same redacting service the API answers
with; a server-sent event stream per page re-renders what changed, woken by the sessions' change
feed (a stop, a step, an end, output, a call in the agent's trail), never by polling.

With a token, the page asks for it once and gets a view session: a random id in a cookie (HttpOnly,
SameSite=Strict, path /ui, named after the port the relay is reached on), kept in this relay
process's memory with an absolute and an idle expiry, revoked by "Sign out" and by a restart. It is
not derived from the token and opens /ui only, where every route is a read (sign-in and sign-out
aside, which the browser guard's Origin check covers). Event streams are capped, in all and per
client address.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import suppress
from importlib import resources
from typing import Any

import msgspec
from litestar import Request, Response, Router, get, post
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie, ResponseHeader
from litestar.di import Provide
from litestar.enums import MediaType, ScopeType
from litestar.handlers.base import BaseRouteHandler
from litestar.response import ServerSentEvent
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay import access
from debugrelay.config import Settings
from debugrelay.errors import Forbidden, InvalidRequest, NotFound, RelayError, SessionNotFound, Unauthorized
from debugrelay.models import Input, OutputLine, SessionRecord
from debugrelay.service import RelayService, calling
from debugrelay.sessions import SessionManager

from . import ui_render as render
from ._deps import Manager, Service
from .auth import Gatekeeper, bearer, client_key
from .browser import DEFAULT_PORTS, addressed

# scripts and styles from the relay only (/ui/static), no inline script, nothing from elsewhere
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
OUTPUT_TAIL = 200  # lines a page shows (and keeps as more arrive); older ones are marked as not shown
STREAM_SECONDS = 300.0  # an event stream ends after this and the browser reconnects (never a stuck shutdown)
CLUSTER_REFRESH = 10.0  # other replicas' sessions change without telling this one: the list re-reads them
FRAMES, LOCALS, SOURCE_AROUND = 20, 100, 10
CALLS_SHOWN = 20  # a trace's newest calls on the session page
FUNCTION_LINES = 2000  # lines of a traced function's source a call's page shows at most
VIEWS = 1000  # view sessions held at once; the oldest go first
STREAMS = 64  # event streams open at once on this relay
STREAMS_PER_CLIENT = 16  # of which from one client address (a browser opens one per tab)
STREAM_RETRY = 5  # seconds a refused stream is told to wait
_STATIC = {"ui.js": "text/javascript; charset=utf-8", "ui.css": "text/css; charset=utf-8"}
_json = msgspec.json.Encoder()


class Login(Input):
    token: str


class TooManyStreams(RelayError):
    code = "too_many_streams"
    status = 429
    default_hint = "Close live views you no longer watch; the page retries by itself."


class ViewSessions:
    """Sign-ins to the view: random ids, kept as hashes in this process's memory, each good until
    ``absolute`` seconds after sign-in or ``idle`` seconds after its last request, whichever is first."""

    def __init__(
        self,
        absolute: float,
        idle: float,
        limit: int = VIEWS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.absolute, self.idle, self.limit, self.clock = absolute, idle, limit, clock
        # hash: (signed in, last seen, who signed in: None on a relay without credentials)
        self._held: OrderedDict[bytes, tuple[float, float, access.Caller | None]] = OrderedDict()
        self._ends: dict[bytes, asyncio.Event] = {}  # set when a session watched by a stream ends

    @staticmethod
    def _key(value: str) -> bytes:
        # looked up by hash: a dict's comparisons then leak nothing about the ids held
        return hashlib.sha256(value.encode("utf-8", "replace")).digest()

    def _forget(self, key: bytes) -> None:
        self._held.pop(key, None)
        end = self._ends.pop(key, None)
        if end is not None:
            end.set()

    def open(self, caller: access.Caller | None = None) -> str:
        value = secrets.token_urlsafe(32)
        now = self.clock()
        self._held[self._key(value)] = (now, now, caller)
        while len(self._held) > self.limit:
            self._forget(next(iter(self._held)))
        return value

    def valid(self, value: str) -> bool:
        """Whether ``value`` is a live view session; a valid one's idle clock restarts."""
        return self.signed_in(value) is not None

    def signed_in(self, value: str) -> tuple[access.Caller | None] | None:
        """``(who signed in,)`` for a live view session (its idle clock restarts), None otherwise."""
        if not value:
            return None
        key = self._key(value)
        found = self._held.get(key)
        if found is None:
            return None
        since, last, caller = found
        now = self.clock()
        if now - since >= self.absolute or now - last >= self.idle:
            self._forget(key)
            return None
        self._held[key] = (since, now, caller)
        return (caller,)

    def revoke(self, value: str) -> None:
        self._forget(self._key(value))

    def holds(self, value: str) -> bool:
        """Whether ``value`` names a view session held now (expired or not: :meth:`valid` decides)."""
        return bool(value) and self._key(value) in self._held

    async def ended(self, value: str) -> None:
        """Return when the view session ``value`` ends: signed out, pushed out, or at its lifetime's end
        (a stream is a request in progress: the idle clock does not run while it lasts)."""
        key = self._key(value)
        found = self._held.get(key)
        if found is None:
            return
        end = self._ends.setdefault(key, asyncio.Event())
        left = found[0] + self.absolute - self.clock()
        try:
            await asyncio.wait_for(end.wait(), timeout=max(0.0, left))
        except TimeoutError:
            self._forget(key)


class StreamSlots:
    """Event streams open now, in all and per client address."""

    def __init__(self, total: int = STREAMS, per_client: int = STREAMS_PER_CLIENT) -> None:
        self.total, self.per_client = total, per_client
        self._open: dict[str, int] = {}

    def take(self, who: str) -> bool:
        if sum(self._open.values()) >= self.total or self._open.get(who, 0) >= self.per_client:
            return False
        self._open[who] = self._open.get(who, 0) + 1
        return True

    def give_back(self, who: str) -> None:
        left = self._open.get(who, 0) - 1
        if left > 0:
            self._open[who] = left
        else:
            self._open.pop(who, None)


def stream_cap(slots: StreamSlots, views: ViewSessions) -> Callable[[ASGIApp], ASGIApp]:
    """Around an event stream: a slot held while the answer lasts, freed when it ends (the stream's end,
    or the client going away: the streaming answer listens for the disconnect and stops). A stream
    opened with a view session ends with that session (sign-out, lifetime), not minutes later."""

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if not scope["path"].endswith("/events"):
                await app(scope, receive, send)
                return
            who = client_key(scope)
            if not slots.take(who):
                raise TooManyStreams(
                    f"too many live view streams are open (at most {slots.total}, {slots.per_client} per client)",
                    details={"retry_after": STREAM_RETRY, "total": slots.total, "per_client": slots.per_client},
                )
            try:
                view = Request[Any, Any, Any](scope).cookies.get(cookie_name(scope), "")
                if not views.holds(view):  # no view session: the bearer token, no token, or a refusal
                    await app(scope, receive, send)
                    return
                serving = asyncio.ensure_future(app(scope, receive, send))
                watching = asyncio.ensure_future(views.ended(view))
                try:
                    await asyncio.wait((serving, watching), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    watching.cancel()
                    serving.cancel()  # when the session ended: the answer stops short, the reconnect is refused
                    with suppress(asyncio.CancelledError):
                        await serving
            finally:
                slots.give_back(who)

        return middleware

    return factory


def cookie_name(scope: Scope) -> str:
    """The view's cookie for the port the relay is reached on: cookies ignore ports, names do not."""
    host = addressed(scope)
    return f"debugrelay_ui_{host.port or DEFAULT_PORTS.get(str(scope.get('scheme')), 80)}"


def _view_cookie(scope: Scope, value: str, max_age: int) -> Cookie:
    return Cookie(key=cookie_name(scope), value=value, path="/ui", httponly=True, samesite="strict", max_age=max_age)


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


def _program(launch: dict[str, Any] | None, attach: dict[str, Any] | None) -> str:
    if launch:
        what = launch.get("script") or (f"-m {launch['module']}" if launch.get("module") else "?")
        return " ".join([str(what), *(str(a) for a in launch.get("args") or [])])
    if attach:
        return "attached to " + ", ".join(f"{k}={v}" for k, v in attach.items() if k in ("host", "port", "pid", "pod"))
    return "(not started)"


def _shown(view: msgspec.Struct | None) -> dict[str, Any] | None:
    return msgspec.to_builtins(view) if view is not None else None  # what was set: defaults are left out


async def _record_program(manager: SessionManager, record: SessionRecord) -> str:
    """The program of a session, from its record (another replica's too), redacted like an answer."""
    launch = msgspec.to_builtins(record.launch) if record.launch is not None else None
    attach = msgspec.to_builtins(record.attach) if record.attach is not None else None
    text = _program(launch, attach)
    seam = manager.redaction
    if seam.redactor is not None:
        table = await seam.table(record.id)
        text = seam.redactor.text(text, table, "ui")
        await seam.persist(record.id, table)
    return text


async def list_rows(service: RelayService, manager: SessionManager) -> list[render.ListRow]:
    with manager.looking():  # a person looking does not keep sessions alive
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
    with manager.looking():
        detail = await service.session(sid)
        record = manager.sessions[sid].record
        view = render.SessionView(
            detail=detail,
            program=_program(_shown(detail.launch), _shown(detail.attach)),
            owner=record.owner or "",
            stop_at=record.stop.at if record.stop is not None else None,
            stop_seq=record.stop.seq if record.stop is not None else 0,
            trail=manager.trail.entries(sid),
        )
        try:
            view.breakpoints = (await service.breakpoints(sid)).breakpoints
            view.watches = (await service.watches(sid)).watches
            view.processes = (await service.processes(sid)).processes
        except RelayError:
            pass
        try:
            view.traces = await trace_rows(service, sid)
        except RelayError as exc:
            view.traces_note = exc.message
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


async def trace_rows(service: RelayService, sid: str) -> list[render.TraceRows]:
    """Each traced function with its newest calls, newest first (read inside ``manager.looking()``)."""
    rows = []
    for trace in (await service.traces(sid)).traces:
        # the calls come oldest first: read the end (a paused program's running calls may add a few)
        start = max(0, trace.calls - CALLS_SHOWN)
        page = await service.traced_calls(sid, trace_id=trace.trace_id, offset=start, limit=CALLS_SHOWN * 2)
        if page.has_more:
            start = max(0, page.total - CALLS_SHOWN)
            page = await service.traced_calls(sid, trace_id=trace.trace_id, offset=start, limit=CALLS_SHOWN)
        rows.append(render.TraceRows(trace=trace, calls=list(reversed(page.calls[-CALLS_SHOWN:]))))
    return rows


async def call_view(service: RelayService, manager: SessionManager, sid: str, call_id: str) -> render.CallView:
    """A traced call's run and its function's source, read through the redacting service."""
    with manager.looking():
        detail = await service.session(sid)
        run = await service.traced_call(sid, call_id)
        view = render.CallView(session_id=sid, session_name=detail.name or sid, run=run)
        if not (run.file and run.line):
            view.source_note = "where the function is defined is not known"
            return view
        try:
            whole = await service.source(sid, run.file)
        except RelayError as exc:
            view.source_note = exc.message
            return view
    ran = [*run.lines, *([run.raised_line] if run.raised_line else [])]
    first, last = render.function_span(whole.content, run.line, ran)
    last = min(last, first + FUNCTION_LINES - 1, whole.total_lines)
    lines = whole.content.splitlines()[first - 1 : last]
    view.source = msgspec.structs.replace(
        whole, start=first, end=first + len(lines) - 1, content="".join(f"{text}\n" for text in lines)
    )
    return view


async def output_tail(
    service: RelayService, manager: SessionManager, sid: str
) -> tuple[list[OutputLine], str | None, bool]:
    """The last :data:`OUTPUT_TAIL` lines, the cursor after them, and whether earlier ones are not shown."""
    lines: list[OutputLine] = []
    cursor: str | None = None
    earlier = False
    with manager.looking():
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


def _signed_in(request: Request[Any, Any, Any]) -> bool:
    """Whether a view session (not the bearer token, not a relay without one) opened this page."""
    return bool(request.state.get("ui_signed_in", False))


def _html(body: str, status: int = 200) -> Response[str]:
    return Response(body, media_type=MediaType.HTML, status_code=status, headers={"Cache-Control": "no-store"})


@get("/", opt={"ui_page": True})
async def sessions_page(request: Request[Any, Any, Any], service: Service, manager: Manager) -> Response[str]:
    if not request.state.ui_allowed:
        return _html(render.login_page(), 401)
    return _html(render.list_page(await list_rows(service, manager), signed_in=_signed_in(request)))


async def _not_here(service: RelayService, manager: SessionManager, session_id: str, signed_in: bool) -> Response[str]:
    """The page of a session this relay does not hold: held by another replica, or none."""
    for row in await list_rows(service, manager):
        if row.summary.session_id == session_id:
            return _html(render.elsewhere_page(row.summary, row.owner, signed_in=signed_in))
    return _html(render.not_found_page(session_id, signed_in=signed_in), 404)


@get("/sessions/{session_id:str}", opt={"ui_page": True})
async def session_page(
    request: Request[Any, Any, Any], session_id: str, service: Service, manager: Manager
) -> Response[str]:
    if not request.state.ui_allowed:
        return _html(render.login_page(), 401)
    signed_in = _signed_in(request)
    if session_id not in manager.sessions:
        return await _not_here(service, manager, session_id, signed_in)
    try:
        view = await session_view(service, manager, session_id)
    except Forbidden as exc:
        return _html(render.forbidden_page(session_id, exc.message, signed_in=signed_in), 403)
    tail, _, earlier = await output_tail(service, manager, session_id)
    return _html(render.session_page(view, tail, earlier, signed_in=signed_in))


@get("/sessions/{session_id:str}/calls/{call_id:str}", opt={"ui_page": True})
async def call_page(
    request: Request[Any, Any, Any], session_id: str, call_id: str, service: Service, manager: Manager
) -> Response[str]:
    """One traced call: its arguments, result, parent and callees, and the lines it ran in its function's source."""
    if not request.state.ui_allowed:
        return _html(render.login_page(), 401)
    signed_in = _signed_in(request)
    if session_id not in manager.sessions:
        return await _not_here(service, manager, session_id, signed_in)
    try:
        view = await call_view(service, manager, session_id, call_id)
    except SessionNotFound:
        return _html(render.not_found_page(session_id, signed_in=signed_in), 404)
    except (NotFound, InvalidRequest) as exc:  # an unknown call, or no call id at all
        message = exc.message if isinstance(exc, NotFound) else f"'{call_id}' is not a call id (they read like 1234.5)"
        return _html(render.call_not_found_page(session_id, call_id, message, signed_in=signed_in), 404)
    return _html(render.call_page(view, signed_in=signed_in))


@get("/sessions/{session_id:str}/children")
async def children(session_id: str, ref: int, service: Service, manager: Manager) -> Response[str]:
    """An expandable value's children, as HTML the page puts under it."""
    try:
        with manager.looking():
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
                    with manager.looking():
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
async def login(request: Request[Any, Any, Any], data: Login, views: ViewSessions, gate: Gatekeeper) -> Response[None]:
    """The token, checked once; the answer sets a view session's cookie (nothing derived from the token),
    which stands for the credential that signed in."""
    if not gate.guarded:
        return Response(None, status_code=204)
    gate.attempts.check(request.scope)
    caller = gate.caller(data.token.encode())
    if caller is None:
        gate.attempts.failed(client_key(request.scope))
        raise Unauthorized("wrong API token", hint="Give the relay's DEBUGRELAY_TOKEN, or your credential's token.")
    gate.attempts.succeeded(client_key(request.scope))
    named = caller if gate.file is not None else None
    cookie = _view_cookie(request.scope, views.open(named), max(1, math.ceil(views.absolute)))
    return Response(None, status_code=204, cookies=[cookie])


@post("/logout", status_code=204, opt={"ui_open": True})
async def logout(request: Request[Any, Any, Any], views: ViewSessions) -> Response[None]:
    """Sign out: the view session ends here (its cookie is then worth nothing anywhere) and the browser drops it."""
    views.revoke(request.cookies.get(cookie_name(request.scope), ""))
    return Response(None, status_code=204, cookies=[_view_cookie(request.scope, "", 0)])


@get("/static/{name:str}", opt={"ui_open": True}, sync_to_thread=False)
def static(name: str) -> Response[bytes]:
    media = _STATIC.get(name)
    if media is None:
        raise NotFound(f"no file '{name}' in the view", details={"name": name})
    body = resources.files("debugrelay.api").joinpath("ui_static", name).read_bytes()
    return Response(body, media_type=media, headers={"Cache-Control": "no-cache"})


_WHO = "debugrelay.ui_who"  # the scope's (caller,) for the view, or None: not signed in


def ui_router(settings: Settings, gate: Gatekeeper) -> Router:
    """The view's routes under /ui, behind the token rule (a view session or the bearer token), the view's
    own CSP and the cap on event streams. With credentials, each page is read as the credential that
    signed in: it shows what that credential may see."""
    # an open page's event stream reconnects every STREAM_SECONDS: a view being watched never idles out
    views = ViewSessions(absolute=settings.ui_session_minutes * 60, idle=settings.ui_idle_minutes * 60)

    def who(connection: ASGIConnection[Any, Any, Any, Any]) -> tuple[access.Caller | None] | None:
        """``(caller,)`` when the request may see the view (caller None: everything), None otherwise."""
        if not gate.guarded:
            return (None,)
        found = views.signed_in(connection.cookies.get(cookie_name(connection.scope), ""))
        if found is not None:
            (caller,) = found
            if caller is not None and not gate.still_valid(caller):
                return None  # its credential was removed or expired since it signed in
            connection.state.ui_signed_in = True
            return found
        given = bearer(connection.scope)
        if given is None:
            return None
        gate.attempts.check(connection.scope)
        caller = gate.caller(given)
        if caller is None:
            gate.attempts.failed(client_key(connection.scope))
            return None
        gate.attempts.succeeded(client_key(connection.scope))
        return (caller if gate.file is not None else None,)

    def reader(app: ASGIApp) -> ASGIApp:
        """Each request is read as who it comes from (its handlers, guards and event streams)."""

        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            found = who(ASGIConnection(scope)) if scope["type"] == ScopeType.HTTP else None
            scope[_WHO] = found  # type: ignore[literal-required]
            if found is not None and found[0] is not None:
                with access.acting_as(found[0]):
                    await app(scope, receive, send)
                return
            await app(scope, receive, send)

        return middleware

    def guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        if handler.opt.get("ui_open"):
            return
        found = connection.scope.get(_WHO)
        if handler.opt.get("ui_page"):
            connection.state.ui_allowed = found is not None
        elif found is None:
            raise Unauthorized("sign in to the view first", hint="Open /ui and give the relay's token.")

    return Router(
        path="/ui",
        route_handlers=[
            sessions_page,
            session_page,
            call_page,
            children,
            list_events,
            session_events,
            login,
            logout,
            static,
        ],
        guards=[guard],
        dependencies={
            "views": Provide(lambda: views, sync_to_thread=False),
            "gate": Provide(lambda: gate, sync_to_thread=False),
        },
        middleware=[reader, stream_cap(StreamSlots(), views)],
        response_headers=[ResponseHeader(name="Content-Security-Policy", value=CSP)],
        include_in_schema=False,
    )
