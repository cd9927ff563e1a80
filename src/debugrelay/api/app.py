"""The Litestar app factory: one place wires controllers, dependencies, errors and lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from litestar import Litestar, MediaType, Request, Response
from litestar.config.app import AppConfig
from litestar.config.cors import CORSConfig
from litestar.datastructures import ResponseHeader, State
from litestar.di import Provide
from litestar.openapi.config import OpenAPIConfig
from litestar.routes import HTTPRoute
from litestar.types import Scope

from debugrelay import __version__, access
from debugrelay.config import Settings, load_settings, normalize_origin
from debugrelay.metrics import request_timer
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager
from debugrelay.trust import RelayKeys
from debugrelay.wiring import build_manager

from ._body import strict_body
from ._contract import openapi_document
from ._derived import routes
from ._errors_doc import document_errors
from ._nesting import nesting_middleware
from ._observe import log_config, log_middleware, tracing_plugins
from .asker import asker_middleware
from .auth import FailedAttempts, Gatekeeper, token_middleware
from .breakpoints import BreakpointController, ProfileController
from .browser import browser_guard
from .errors import exception_handlers
from .forward import ClusterController, close_forwarding, forward_middleware
from .inspection import InspectionController
from .persisted import PERSISTED_DOC, STORE_OUTAGE_RULE, mark, track
from .pool import PoolController
from .replicas import SignedRequests
from .schema_page import CSP, render_plugins
from .server import ServerController
from .sessions import SessionController
from .ui import trail_middleware, ui_router

log = logging.getLogger("debugrelay")

DERIVED, RAW_BODIES = routes()  # every declared operation the API does not word by hand
CONTROLLERS = (
    SessionController,
    InspectionController,
    BreakpointController,
    ProfileController,
    ServerController,
    ClusterController,
    PoolController,
)
document_errors(*CONTROLLERS, *DERIVED)


def create_app(settings: Settings | None = None, manager: SessionManager | None = None) -> Litestar:
    """The relay's ASGI app. It builds, starts and closes its session manager in its lifespan; or serves
    ``manager``, which the caller has started and will close (an app embedding the relay, in-process tests)."""
    settings = settings or load_settings()
    from debugrelay.mcp_server import McpEndpoint

    mcp = McpEndpoint(settings)  # MCP over streamable HTTP at /mcp, on the same manager
    attempts = FailedAttempts()  # one limit on wrong tokens for the API, /mcp and the view's sign-in
    credentials = access.CredentialFile(Path(settings.credentials)) if settings.credentials else None
    gate = Gatekeeper(settings.token, attempts, _peers(settings), credentials)
    state = State({"manager": manager, "service": RelayService(manager)} if manager is not None else {})
    if manager is not None and credentials is not None:
        manager.directory = gate.named

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        if manager is not None:
            yield
            return
        mgr = build_manager(settings)
        if credentials is not None:
            mgr.directory = gate.named  # a hand-over goes to a credential in force
        app.state.manager = mgr
        app.state.service = RelayService(mgr)
        if not mgr.store.durable:
            log.warning("state is kept in memory: sessions do not survive a restart (set DEBUGRELAY_REDIS_URL)")
        await mgr.start()
        await mgr.remove_orphans()
        for launcher in mgr.launchers.values():
            launcher.warm_up()
        try:
            yield
        finally:
            await mgr.close()
            await mgr.store.close()

    def provide_manager(state: State) -> SessionManager:
        return state.manager  # type: ignore[no-any-return]

    def provide_settings() -> Settings:
        return settings

    def provide_service(state: State) -> RelayService:
        return state.service  # type: ignore[no-any-return]

    app = Litestar(
        route_handlers=[*CONTROLLERS, *DERIVED, mcp.handler, ui_router(settings, gate)],
        dependencies={
            "manager": Provide(provide_manager, sync_to_thread=False),
            "settings": Provide(provide_settings, sync_to_thread=False),
            "service": Provide(provide_service, sync_to_thread=False),
            "gate": Provide(lambda: gate, sync_to_thread=False),
        },
        exception_handlers=exception_handlers,
        state=state,
        # the browser checks first: a request they refuse reaches neither the token check nor another replica
        middleware=[
            *log_middleware(settings),  # first: what the others log names its request
            browser_guard(settings),
            token_middleware(gate),
            nesting_middleware,  # before a body is forwarded or decoded
            forward_middleware,
            trail_middleware,
            asker_middleware,
            request_timer,
        ],
        cors_config=_cors(settings),
        response_headers=[
            ResponseHeader(name="Content-Security-Policy", value=CSP),
            ResponseHeader(name="X-Content-Type-Options", value="nosniff"),
            PERSISTED_DOC,
        ],
        before_request=_before_request,
        after_request=mark,
        on_shutdown=[close_forwarding],
        lifespan=[lifespan, mcp.lifespan],
        openapi_config=OpenAPIConfig(
            title="debugrelay",
            version=__version__,
            description=STORE_OUTAGE_RULE,
            path="/schema",
            render_plugins=render_plugins(),
        ),
        on_app_init=[_app_init],
        plugins=tracing_plugins(settings),
        logging_config=log_config(settings),
        on_startup=[openapi_document],
        debug=False,
    )
    _answer_options(app)
    return app


def _answer_options(app: Litestar) -> None:
    """OPTIONS names every method of its path. Litestar builds a path's OPTIONS answer when its first
    handler is registered and keeps it when more are added (Allow: OPTIONS, POST on /sessions)."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        allow = ", ".join(sorted(route.methods))
        for handler in route.route_handlers:
            if handler.http_methods == {"OPTIONS"} and handler.handler_name == "options_handler":
                handler._fn = _options_answer(allow)  # type: ignore[assignment]


def _options_answer(allow: str) -> Callable[[Scope], Response[None]]:
    def options_handler(scope: Scope) -> Response[None]:
        return Response(content=None, status_code=204, headers={"Allow": allow}, media_type=MediaType.TEXT)

    return options_handler


async def _before_request(request: Request[Any, Any, Any]) -> None:
    """A body that is not exactly what the schema says is refused first; then the writes the handler
    makes are tracked (what the store could not take is said in the answer)."""
    await strict_body(request)
    await track(request)


def _peers(settings: Settings) -> SignedRequests | None:
    """With a token, requests other replicas forward are let in by their signature (under the token's key)."""
    if not settings.token:
        return None
    return SignedRequests(RelayKeys.for_settings(settings, durable=True), settings.advertise_url)


def _cors(settings: Settings) -> CORSConfig | None:
    """CORS headers only for the origins named in DEBUGRELAY_CORS_ORIGINS; none at all by default."""
    if not settings.cors_origins:
        return None
    return CORSConfig(allow_origins=[normalize_origin(o) for o in settings.cors_origins])


def _app_init(config: AppConfig) -> AppConfig:
    config.request_max_body_size = 16 * 1024 * 1024
    return config
