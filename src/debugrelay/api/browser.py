"""Refuse what a web page can make a browser send: a foreign ``Host``, a state change from another origin,
a non-JSON body; and refuse a malformed ``Host`` or ``Origin`` with a 400/403 rather than a failure.

A page the user visits can send a relay on 127.0.0.1 a request without a CORS preflight (a ``no-cors``
fetch, a form, a ``text/plain`` body): it cannot read the answer, but a POST needs no answer to act
(``/shutdown``, a launch). By DNS rebinding its own name to 127.0.0.1 it could read answers too. So,
before the token and the forwarding to other replicas (a refused request changes nothing):

- ``Host`` must be well-formed and name the relay (any port);
- a request that can change something (any method but GET, HEAD and OPTIONS) coming from a browser
  must come from the relay's own origin or one listed in ``DEBUGRELAY_CORS_ORIGINS``. Browsers always
  send ``Origin`` on such requests (``Sec-Fetch-Site`` too), and a page cannot forge either; clients that
  are not browsers (curl, agents) send neither and are let through to the token check;
- reads (GET, HEAD, OPTIONS) with an ``Origin`` are let in from pages on this machine too: without CORS
  headers their scripts cannot read the answer;
- ``/ui`` answers a request from another page's script or tag (``Sec-Fetch-Site`` ``same-site`` or
  ``cross-site``, not a navigation) with a refusal: the view's pages, its event streams and its cookie
  are for its own pages only.

Litestar's own ``AllowedHostsMiddleware`` is not used: it runs inside the app's middleware (after the
forwarder), matches ``Host`` with its port (a port-forward or a remapped compose port then fails), and
answers a bare 400 outside the error envelope. With ``DEBUGRELAY_CORS_ORIGINS`` set, Litestar's CORS
middleware answers preflights (``OPTIONS``): they change nothing, and the request that follows meets
these checks.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any, NamedTuple

from litestar.datastructures import Headers
from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.config import LOOPBACK_HOSTS, Settings, normalize_origin
from debugrelay.errors import RelayError

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
DEFAULT_PORTS = {"http": 80, "https": 443}
ECHO = 200  # characters of a refused header value echoed in details
# RFC 3986 host: a bracketed IPv6 literal or a DNS name / IPv4 address (underscores: compose service names)
_AUTHORITY = re.compile(
    r"(?:\[(?P<v6>[0-9A-Fa-f:.]{2,45})\]|(?P<name>[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,252})))(?::(?P<port>[0-9]{1,5}))?"
)
_ORIGIN = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,20})://(?P<authority>[^/?#@\s]{1,300})")


class Authority(NamedTuple):
    """A parsed ``host[:port]``: the host lowercased, without brackets or a trailing dot."""

    host: str
    port: int | None


class InvalidHost(RelayError):
    code = "invalid_host"
    status = 400
    default_hint = (
        "Reach the relay as 127.0.0.1 or localhost, or add the name you use (e.g. a compose or Kubernetes "
        "service name) to DEBUGRELAY_ALLOWED_HOSTS."
    )


class InvalidHeader(RelayError):
    code = "invalid_header"
    status = 400
    default_hint = "Send the header named in details.header once, well-formed (RFC 9110), or not at all."


class ForbiddenOrigin(RelayError):
    code = "forbidden_origin"
    status = 403
    default_hint = (
        "Changes from web pages are refused unless the page is the relay's own (same scheme, host and port); "
        "list the page's origin in DEBUGRELAY_CORS_ORIGINS to let it in."
    )


class UnsupportedMediaType(RelayError):
    code = "unsupported_media_type"
    status = 415
    default_hint = "Send the body as JSON with 'Content-Type: application/json' (curl: --json, or -H)."


def clip(value: str) -> str:
    """A header value as echoed back in an error: at most :data:`ECHO` characters."""
    return value if len(value) <= ECHO else value[: ECHO - 1] + "…"


def parse_authority(value: str) -> Authority | None:
    """``host``, ``host:port`` or ``[v6]:port`` as sent in ``Host``; None when malformed."""
    match = _AUTHORITY.fullmatch(value)
    if match is None:
        return None
    name, v6, port = match["name"], match["v6"], match["port"]
    if v6 is not None:
        try:
            host = ipaddress.IPv6Address(v6).compressed
        except ValueError:
            return None
    else:
        if ".." in name or name.startswith("."):
            return None
        host = name.lower().removesuffix(".")  # "localhost." is "localhost"
        if any(len(label) > 63 for label in host.split(".")):
            return None
    number = int(port) if port is not None else None
    if number is not None and not 0 < number < 65536:
        return None
    return Authority(host, number)


def parse_origin(value: str) -> tuple[str, Authority] | None:
    """``scheme://host[:port]`` as browsers send ``Origin`` (no path, no user); None when it is not one."""
    match = _ORIGIN.fullmatch(normalize_origin(value))
    if match is None:
        return None
    authority = parse_authority(match["authority"])
    return (match["scheme"], authority) if authority is not None else None


def addressed(scope: Scope) -> Authority:
    """The ``Host`` of a request the guard let in (well-formed, exactly one)."""
    for key, value in scope.get("headers") or []:
        if key == b"host":
            found = parse_authority(value.decode("latin-1"))
            if found is not None:
                return found
    return Authority("", None)


def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/<x>+json``, parameters (``; charset=utf-8``) allowed."""
    media = content_type.partition(";")[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _canonical(name: str) -> str:
    """A configured host name as :func:`parse_authority` gives it (IPv6 literals compressed)."""
    try:
        return ipaddress.IPv6Address(name).compressed
    except ValueError:
        return name


def _is_ui(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def _same_origin(origin: tuple[str, Authority], host: Authority) -> bool:
    """The page is the relay as this request addressed it: the same host and port. Its scheme may be http
    or https (a TLS proxy in front serves the same relay; one port is one listener)."""
    scheme, where = origin
    default = DEFAULT_PORTS[scheme]
    return where.host == host.host and (where.port or default) == (host.port or default)


def _check_ui(headers: Headers) -> None:
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site in ("same-site", "cross-site") and headers.get("sec-fetch-mode", "").strip().lower() != "navigate":
        raise ForbiddenOrigin(
            "the live view serves its own pages only, not another page's script or tag",
            details={"sec_fetch_site": clip(site)},
            hint="Open /ui in the browser itself.",
        )


def _check_body(headers: Headers) -> None:
    content_type = headers.get("content-type")
    if content_type is None:
        if headers.get("content-length", "0").strip() not in ("", "0") or "transfer-encoding" in headers:
            raise UnsupportedMediaType("a request body needs 'Content-Type: application/json'")
    elif not is_json(content_type):
        raise UnsupportedMediaType(
            f"request bodies must be JSON, not '{clip(content_type)}'", details={"content_type": clip(content_type)}
        )


class _Guard:
    """The checks, with the names and origins the settings let in."""

    def __init__(self, settings: Settings) -> None:
        self.hosts = frozenset(_canonical(name) for name in settings.reachable_hosts())
        self.cors_origins = frozenset(normalize_origin(o) for o in settings.cors_origins)

    def host(self, headers: Headers) -> Authority:
        given = headers.getall("host", [])
        if len(given) != 1:
            raise InvalidHost(
                f"a request needs exactly one Host header, not {len(given)}", details={"host": clip(", ".join(given))}
            )
        raw = given[0]
        host = parse_authority(raw.strip())
        if host is None:
            raise InvalidHost(f"the Host header '{clip(raw)}' is malformed", details={"host": clip(raw)})
        if host.host not in self.hosts:
            raise InvalidHost(f"this relay does not answer to the host '{clip(raw)}'", details={"host": clip(raw)})
        return host

    def origin(self, headers: Headers, host: Authority, *, changes: bool) -> None:
        for name in ("origin", "sec-fetch-site"):
            if len(headers.getall(name, [])) > 1:
                raise InvalidHeader(f"more than one {name} header", details={"header": name})
        raw = headers.get("origin")
        if raw is None:
            site = headers.get("sec-fetch-site", "").strip().lower()
            if changes and site in ("same-site", "cross-site"):
                # a browser that sent no Origin: its Sec-Fetch-Site still says the request is another page's
                raise ForbiddenOrigin(
                    f"a change from another page (Sec-Fetch-Site: {clip(site)}) is refused",
                    details={"sec_fetch_site": clip(site)},
                )
            return
        if normalize_origin(raw) in self.cors_origins:
            return
        origin = parse_origin(raw)
        if origin is not None and origin[0] in DEFAULT_PORTS:
            if _same_origin(origin, host):
                return
            if not changes and origin[1].host in LOOPBACK_HOSTS:
                return  # a read from a page on this machine: without CORS headers its script cannot read it
        what = "changes" if changes and origin is not None else "requests"
        raise ForbiddenOrigin(f"{what} from the origin '{clip(raw)}' are refused", details={"origin": clip(raw)})

    def __call__(self, scope: Scope) -> None:
        if scope["path"] in PROBE_PATHS | SCRAPED_PATHS and scope.get("method") == "GET":
            return  # a kubelet's probe or a scraper names the pod's address; a page learns nothing it may use
        headers = Headers.from_scope(scope)
        host = self.host(headers)
        # a WebSocket handshake is a GET any page may open: it counts as a change
        method = scope["method"] if scope["type"] == ScopeType.HTTP else "WEBSOCKET"
        self.origin(headers, host, changes=method not in SAFE_METHODS)
        if _is_ui(scope["path"]):
            _check_ui(headers)
        if method in _BODY_METHODS:
            _check_body(headers)


PROBE_PATHS = frozenset({"/livez", "/readyz"})  # answered whatever Host names the relay, without a token
SCRAPED_PATHS = frozenset({"/metrics"})  # a scraper names the pod's address too (the token is still asked)


def browser_guard(settings: Settings) -> Any:
    """Middleware checking ``Host``, where a change comes from, and the body's media type."""
    check = _Guard(settings)

    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] in (ScopeType.HTTP, ScopeType.WEBSOCKET):
                check(scope)
            await app(scope, receive, send)

        return middleware

    return factory
