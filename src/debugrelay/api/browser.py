"""Refuse what a web page can make a browser send: a foreign ``Host``, a foreign ``Origin``, a non-JSON body.

A page the user visits can POST to a relay on 127.0.0.1 without a CORS preflight (a "simple" request:
a form or ``text/plain`` body) and, by DNS rebinding its own name to 127.0.0.1, read the answers too.
The relay launches programs and evaluates expressions, so these checks run first on every route, before
the token and the forwarding to other replicas: a refused request changes nothing.

Litestar's own ``AllowedHostsMiddleware`` is not used: it runs inside the app's middleware (after the
forwarder), matches ``Host`` with its port (a port-forward or a remapped compose port then fails), and
answers a bare 400 outside the error envelope. With ``DEBUGRELAY_CORS_ORIGINS`` set, Litestar's CORS
middleware answers preflights (``OPTIONS``) before any route's middleware: they change nothing, and the
request that follows meets these checks.
"""

from __future__ import annotations

from typing import Any

from litestar.datastructures import Headers
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.config import LOOPBACK_HOSTS, Settings, host_name, normalize_origin
from debugrelay.errors import RelayError

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class InvalidHost(RelayError):
    code = "invalid_host"
    status = 400
    default_hint = (
        "Reach the relay as 127.0.0.1 or localhost, or add the name you use (e.g. a compose or Kubernetes "
        "service name) to DEBUGRELAY_ALLOWED_HOSTS."
    )


class ForbiddenOrigin(RelayError):
    code = "forbidden_origin"
    status = 403
    default_hint = (
        "Requests from web pages are refused unless the page is served from this machine or the relay "
        "itself; list the page's origin in DEBUGRELAY_CORS_ORIGINS to let it in."
    )


class UnsupportedMediaType(RelayError):
    code = "unsupported_media_type"
    status = 415
    default_hint = "Send the body as JSON with 'Content-Type: application/json' (curl: --json, or -H)."


def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/<x>+json``, parameters (``; charset=utf-8``) allowed."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def browser_guard(settings: Settings) -> Any:
    """Middleware checking ``Host`` against the relay's names, ``Origin`` and the body's media type."""
    hosts = frozenset(settings.reachable_hosts())
    cors_origins = frozenset(normalize_origin(o) for o in settings.cors_origins)

    def origin_allowed(origin: str, host: str) -> bool:
        origin = normalize_origin(origin)
        if origin in cors_origins:
            return True
        scheme, sep, authority = origin.partition("://")
        # a page from this machine (any port), or one the relay itself served (same origin as Host)
        return (
            bool(sep)
            and scheme in ("http", "https")
            and (host_name(authority) in LOOPBACK_HOSTS or authority == host.lower())
        )

    def check(scope: Scope) -> None:
        headers = Headers.from_scope(scope)
        given = headers.getall("host", [])
        host = given[0] if len(given) == 1 else ""
        if host_name(host) not in hosts:
            raise InvalidHost(f"this relay does not answer to the host '{host}'", details={"host": host})
        for origin in headers.getall("origin", []):
            if not origin_allowed(origin, host):
                raise ForbiddenOrigin(f"requests from the origin '{origin}' are refused", details={"origin": origin})
        if scope["type"] != ScopeType.HTTP or scope["method"] not in _BODY_METHODS:
            return
        content_type = headers.get("content-type")
        if content_type is None:
            if headers.get("content-length", "0").strip() not in ("", "0") or "transfer-encoding" in headers:
                raise UnsupportedMediaType("a request body needs 'Content-Type: application/json'")
        elif not is_json(content_type):
            raise UnsupportedMediaType(
                f"request bodies must be JSON, not '{content_type}'", details={"content_type": content_type}
            )

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            check(scope)
            await app(scope, receive, send)

        return middleware

    return factory
