"""Bearer-token check for every path but the probes (``/health``, ``/livez``, ``/readyz``) when the relay has a
token, and the limit on failed tries.

``/ui`` checks its own: the bearer token or a view session's cookie (see ``api.ui``), which is good there only.
A request another replica forwarded carries a signature instead of the token (see ``api.replicas``).

Failed tries are counted per client address in a token bucket (:class:`FailedAttempts`): a burst of
:data:`BURST`, then :data:`PER_SECOND` a second. An address over it gets ``429 too_many_attempts`` for
every request that needs the token, the right token too (else the limit would still tell a guesser which
guess is right), until the bucket refills. Requests that never fail take nothing from it.

Addresses are cheap (a host has all of 127.0.0.0/8, an IPv6 client a /64 of them), so every failed try
also takes from one bucket of the relay's (:data:`OVERALL_BURST`, then :data:`OVERALL_PER_SECOND` a
second). While it is empty, an address no right token came from in the last :data:`KNOWN_SECONDS` is
refused the same way, the right token too; an address one came from is judged by its own bucket only,
so the token's holders work on while others guess.
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

from debugrelay import access
from debugrelay.errors import RelayError, Unauthorized

from .browser import PROBE_PATHS, InvalidHeader
from .replicas import CALLER, PROOF_PATH, SIGNATURE, SignedRequests

OPEN_PATHS = frozenset({"/health", PROOF_PATH, *PROBE_PATHS})
_HOPS = b"x-debugrelay-hops"
BURST = 10  # failed tries an address may make at once
PER_SECOND = 1.0  # then this many a second
OVERALL_BURST = 50  # failed tries all addresses together may make at once
OVERALL_PER_SECOND = 0.5  # then this many a second
KNOWN_SECONDS = 24 * 3600.0  # an address a right token came from is spared the overall bucket this long
ADDRESSES = 4096  # addresses remembered (failed, and known); the least recent are forgotten first


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
    """A token bucket per client address for failed credentials, in a bounded table, and one for all of
    them that spares the addresses the right token came from."""

    def __init__(
        self,
        *,
        burst: int = BURST,
        per_second: float = PER_SECOND,
        addresses: int = ADDRESSES,
        overall: int = OVERALL_BURST,
        overall_per_second: float = OVERALL_PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.burst, self.per_second, self.addresses, self.clock = burst, per_second, addresses, clock
        self.overall, self.overall_per_second = overall, overall_per_second
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # address: (tokens, at)
        self._all = (float(overall), clock())  # (tokens, at) of every address together
        self._known: OrderedDict[str, float] = OrderedDict()  # address: when a right token last came from it

    def _level(self, address: str) -> float:
        found = self._buckets.get(address)
        if found is None:
            return float(self.burst)
        tokens, at = found
        level = min(float(self.burst), tokens + (self.clock() - at) * self.per_second)
        if level >= self.burst:
            del self._buckets[address]  # full again: as good as never seen
        return level

    def _overall_level(self) -> float:
        tokens, at = self._all
        return min(float(self.overall), tokens + (self.clock() - at) * self.overall_per_second)

    def _known_now(self, address: str) -> bool:
        at = self._known.get(address)
        return at is not None and self.clock() - at < KNOWN_SECONDS

    def _waits(self, address: str) -> tuple[int, bool]:
        """Seconds until ``address`` may try again (0: now), and whether the overall bucket is why."""
        level = self._level(address)
        own = 0 if level >= 1 else math.ceil((1 - level) / self.per_second)
        if self._known_now(address):
            return own, False
        overall = self._overall_level()
        shared = 0 if overall >= 1 else math.ceil((1 - overall) / self.overall_per_second)
        return max(own, shared), shared > own

    def retry_after(self, address: str) -> int:
        """Seconds until ``address`` may try again; 0 when it may now."""
        return self._waits(address)[0]

    def failed(self, address: str) -> None:
        level = self._level(address)
        self._buckets[address] = (max(0.0, level - 1), self.clock())
        self._buckets.move_to_end(address)
        while len(self._buckets) > self.addresses:
            self._buckets.popitem(last=False)
        self._all = (max(0.0, self._overall_level() - 1), self.clock())

    def succeeded(self, address: str) -> None:
        """A right credential came from ``address``: the overall bucket spares it from now on."""
        self._known[address] = self.clock()
        self._known.move_to_end(address)
        while len(self._known) > self.addresses:
            self._known.popitem(last=False)

    def check(self, scope: Scope) -> None:
        """Refuse a request from an address that has no tries left (before its credential is looked at)."""
        wait, overall = self._waits(client_key(scope))
        if wait and overall:
            raise TooManyAttempts(
                "too many failed token attempts on this relay, from many addresses",
                details={"retry_after": wait},
                hint="Retry after details.retry_after seconds with the right token; an address the right token "
                "came from before is not held back.",
            )
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


class Gatekeeper:
    """Who a request comes from: a named credential (``DEBUGRELAY_CREDENTIALS``), the relay's one token (an
    admin named ``admin``), or another replica's signature carrying the caller it let in.

    Without a credentials file, the token alone guards the relay as it always did and no caller is set.
    With one, every request but the probes needs a credential, loopback included; the caller is set for
    the request (``access.current()``) and its rate limit is taken."""

    def __init__(
        self,
        token: str | None,
        attempts: FailedAttempts,
        peers: SignedRequests | None = None,
        credentials: access.CredentialFile | None = None,
    ) -> None:
        self.token, self.attempts, self.peers, self.file = token, attempts, peers, credentials
        self.rates = access.RequestRates()
        self._admin = access.single_token(token) if token else None
        self._merged: tuple[access.CredentialSet, access.CredentialSet] | None = None

    @property
    def guarded(self) -> bool:
        return bool(self.token or self.file)

    def credentials(self) -> access.CredentialSet | None:
        """The set in force (the file's, read again if it changed, and the token's admin), or None."""
        if self.file is None:
            return None
        current = self.file.get()
        if self._merged is None or self._merged[0] is not current:
            merged = dict(current.by_digest)
            if self._admin is not None:
                merged.update(self._admin.by_digest)
            self._merged = (current, access.CredentialSet(merged, current.proxy, current.proxied))
            self.rates.forget(set(current.names) | {"admin"})
        return self._merged[1]

    def still_valid(self, caller: access.Caller) -> bool:
        """Whether ``caller``'s credential is still in force (not removed from the file, not expired)."""
        found = self.credentials()
        if found is None:
            return True
        credential = found.names.get(caller.name)
        return credential is not None and not credential.expired(time.time())

    def named(self, name: str) -> access.Caller | None:
        """The credential in force called ``name`` (not expired), or None."""
        found = self.credentials()
        credential = found.names.get(name) if found is not None else None
        if credential is None or credential.expired(time.time()):
            return None
        return access.Caller.of(credential)

    def caller(self, given: bytes | None) -> access.Caller | None:
        """The caller ``given`` stands for; None when it stands for nobody."""
        found = self.credentials()
        if found is None:
            return access.Caller("admin", "admin") if self.token and token_matches(given, self.token) else None
        credential = found.find(given, time.time())
        return access.Caller.of(credential) if credential is not None else None

    def proxied(self, scope: Scope) -> access.Caller | None:
        """The caller a trusted authentication proxy names in its header; None when there is no proxy, the
        request did not come from it, or it names nobody the file lets in."""
        found = self.credentials()
        rule = found.proxy if found is not None else None
        client = scope.get("client")
        if found is None or rule is None or not client or not rule.trusts(str(client[0])):
            return None
        said = [v for k, v in scope.get("headers") or [] if k == rule.header]
        if len(said) != 1:
            return None
        credential = found.identified(said[0].decode("latin-1").strip(), time.time())
        return access.Caller.of(credential) if credential is not None else None

    async def admit(self, scope: Scope, receive: Receive) -> tuple[access.Caller | None, Receive]:
        """The request's caller (None on a relay without credentials) and the ``receive`` to go on with;
        :class:`Unauthorized` or a limit's 429 otherwise."""
        self.attempts.check(scope)
        given = bearer(scope)
        caller = self.caller(given) if given is not None or self.file is None else self.proxied(scope)
        if caller is not None and given is not None:
            self.attempts.succeeded(client_key(scope))
        if caller is None:
            headers = dict(scope.get("headers") or [])
            signed = headers.get(SIGNATURE.encode())
            if given is not None or self.peers is None or signed is None:
                if given is not None:  # no credential at all guesses nothing
                    self.attempts.failed(client_key(scope))
                wrong = "missing, wrong or expired credential" if self.file else "missing or wrong API token"
                raise Unauthorized(wrong)
            said = headers.get(CALLER.encode(), b"")
            try:  # another replica's signature of this request, instead of the token
                receive = await self.peers.admit(scope, receive, signed, headers.get(_HOPS, b""), said)
            except Unauthorized:
                self.attempts.failed(client_key(scope))
                raise
            self.attempts.succeeded(client_key(scope))  # another replica, proven
            name, _, role = said.decode("latin-1").partition(" ")
            if self.file is None or role not in access.ROLES:
                return None, receive
            known = self.named(name)  # its limits are the file's, here as on the replica it called
            if known is None:
                return access.Caller(name, role), receive
            return access.Caller(name, role, known.max_sessions, known.requests_per_minute), receive
        if self.file is None:
            return None, receive  # the one token: as before, no caller
        self.rates.take(caller)
        return caller, receive


def token_middleware(gate: Gatekeeper) -> Any:
    def factory(app: ASGIApp) -> ASGIApp:
        async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
            path = scope["path"]
            if gate.guarded and scope["type"] == ScopeType.HTTP and path not in OPEN_PATHS and not _is_ui(path):
                caller, receive = await gate.admit(scope, receive)
                if caller is not None:
                    scope[access.SCOPE_KEY] = caller  # type: ignore[literal-required]  # for /mcp's own tasks
                    with access.acting_as(caller):
                        await app(scope, receive, send)
                    return
            await app(scope, receive, send)

        return middleware

    return factory
