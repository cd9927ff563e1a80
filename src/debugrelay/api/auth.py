"""Bearer-token check for every path but the probes (``/health``, ``/livez``, ``/readyz``) when the relay has a
token, and the limit on failed tries.

``/ui`` checks its own: the bearer token or a view session's cookie (see ``api.ui``), which is good there only.
A request another replica forwarded carries a signature instead of the token (see ``api.replicas``).

Failed tries are counted per client address in a token bucket (:class:`FailedAttempts`): a burst of
:data:`BURST`, then :data:`PER_SECOND` a second. An address over it gets ``429 too_many_attempts`` for
every request that needs the token, the right token too (else the limit would still tell a guesser which
guess is right), until the bucket refills. Requests that never fail take nothing from it.
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from litestar.enums import ScopeType
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay.errors import RelayError, Unauthorized

from .browser import PROBE_PATHS, InvalidHeader
from .replicas import PROOF_PATH, SIGNATURE, SignedRequests

OPEN_PATHS = frozenset({"/health", PROOF_PATH, *PROBE_PATHS})
_HOPS = b"x-debugrelay-hops"
BURST = 10  # failed tries an address may make at once
PER_SECOND = 1.0  # then this many a second
ADDRESSES = 4096  # addresses remembered; the least recently failed are forgotten first


class TooManyAttempts(RelayError):
    code = "too_many_attempts"
    status = 429
    default_hint = (
        "Too many wrong tokens from this address: retry after details.retry_after seconds with the right one."
    )


def client_key(scope: Scope) -> str:
    """Who a request comes from, for the per-client limits: the peer's address, an IPv6 one by its /64
    (one host usually holds a whole /64). The relay reads no ``X-Forwarded-For``: behind a proxy every
    client is the proxy."""
    client = scope.get("client")
    if not client:
        return "-"
    address = str(client[0])
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


class FailedAttempts:
    """A token bucket per client address for failed credentials, in a bounded table."""

    def __init__(
        self,
        burst: int = BURST,
        per_second: float = PER_SECOND,
        addresses: int = ADDRESSES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst, self.per_second, self.addresses, self.clock = burst, per_second, addresses, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address: (tokens, at)

    def _level(self, address: str) -> float:
        found = self._buckets.get(address)
        if found is None:
            return float(self.burst)
        tokens, at = found
        level = min(float(self.burst), tokens + (self.clock() - at) * self.per_second)
        if level >= self.burst:
            del self._buckets[address]  # full again: as good as never seen
        return level

    def retry_after(self, address: str) -> int:
        """Seconds until ``address`` may try again; 0 when it may now."""
        level = self._level(address)
        return 0 if level >= 1 else math.ceil((1 - level) / self.per_second)

    def failed(self, address: str) -> None:
        level = self._level(address)
        self._buckets[address] = (max(0.0, level - 1), self.clock())
        self._buckets.move_to_end(address)
        while len(self._buckets) > self.addresses:
            self._buckets.popitem(last=False)

    def check(self, scope: Scope) -> None:
        """Refuse a request from an address that has no tries left (before its credential is looked at)."""
        wait = self.retry_after(client_key(scope))
        if wait:
            raise TooManyAttempts("too many failed token attempts from this address", details={"retry_after": wait})


def bearer(scope: Scope) -> bytes | None:
    """The credential of ``Authorization: Bearer <token>``; None without the header or another scheme."""
    given = [value for key, value in scope.get("headers") or [] if key == b"authorization"]
    if len(given) > 1:
        raise InvalidHeader("more than one Authorization header", details={"header": "authorization"})
    if not given:
        return None
    scheme, _, value = given[0].strip().partition(b" ")
    return value.strip() if scheme.lower() == b"bearer" else None


def token_matches(given: bytes | None, token: str) -> bool:
    """Compared as bytes in constant time: any header a client sends is comparable."""
    return given is not None and hmac.compare_digest(given, token.encode())


def _is_ui(path: str) -> bool:
    return path == "/ui" or path.startswith("/ui/")


def token_middleware(token: str | None, attempts: FailedAttempts, peers: SignedRequests | None = None) -> Any:
    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope["path"]
            if token and scope["type"] == ScopeType.HTTP and path not in OPEN_PATHS and not _is_ui(path):
                attempts.check(scope)
                given = bearer(scope)
                if not token_matches(given, token):
                    headers = dict(scope.get("headers") or [])
                    signed = headers.get(SIGNATURE.encode())
                    if given is not None or peers is None or signed is None:
                        if given is not None:  # no credential at all guesses nothing
                            attempts.failed(client_key(scope))
                        raise Unauthorized("missing or wrong API token")
                    try:  # another replica's signature of this request, instead of the token
                        receive = await peers.admit(scope, receive, signed, headers.get(_HOPS, b""))
                    except Unauthorized:
                        attempts.failed(client_key(scope))
                        raise
            await app(scope, receive, send)

        return middleware

    return factory
