"""Replicas trust each other on proof, never on what the state store says, and the token never leaves a relay.

A lease (who owns a session, at which URL) and a replica's registration are records anyone who can write
to Redis can forge. So before a request goes to a URL read from the store, the peer there answers a
challenge: a random nonce, answered with an HMAC under a key derived from the shared secret
(``debugrelay.trust``) and bound to the peer's own advertised URL, so that a real relay asked by a
stranger answers for its own address only. A proof is kept for a short while per URL. The forwarded
request then carries a signature of its own instead of the token: an HMAC over its method, path and
query, the receiver's URL, a hash of its body, a timestamp and a nonce. The receiving replica accepts it
within a short window and never twice.
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import re
import secrets
import time
from typing import Any

import httpx
import msgspec
from litestar.types import HTTPRequestEvent, Receive, ReceiveMessage, Scope

from debugrelay.errors import RelayError, Unauthorized
from debugrelay.trust import RelayKeys

PROOF_PATH = "/cluster/proof"
SIGNATURE = "x-debugrelay-signature"
CALLER = "x-debugrelay-caller"  # "<name> <role>": whom the forwarding replica let in (signed with the request)
SESSION_PATH = re.compile(r"^/sessions/(sess_[A-Za-z0-9]+)(?:/|$)")  # the only paths replicas forward
NONCE = re.compile(r"^[0-9a-f]{32,128}$")
WINDOW = 30.0  # seconds a signed request is good for, either side of the receiver's clock
PROOF_TTL = 30.0  # seconds a peer's proof is trusted before it is asked again
MAX_SEEN = 100_000  # nonces remembered at once (each for twice the window)
MAX_BODY = 16 * 1024 * 1024  # the relay's own request bound
_PROOF_TIMEOUT = httpx.Timeout(5.0)
_PROOF_MAX_BYTES = 4096
_HEADER = re.compile(r"^v1 t=(\d{1,12}) n=([0-9a-f]{32}) s=([0-9a-f]{64})$")


class PeerUnproven(RelayError):
    code = "forward_failed"
    status = 502
    default_hint = (
        "Replicas must share DEBUGRELAY_TOKEN. If they do, the state store names as the owner an address where "
        "no replica runs (a record no relay wrote): retry once the session's lease expires."
    )


def _signed_parts(
    method: str, path: str, query: str, *, url: str, body: bytes, ts: str, nonce: str, hops: str, caller: str
) -> list[str]:
    parts = [method.upper(), path, query, url.rstrip("/"), hashlib.sha256(body).hexdigest(), ts, nonce, hops]
    return [*parts, caller] if caller else parts


class PeerProofs:
    """The forwarding side: proves a peer before the first request to its URL, signs each request."""

    def __init__(self) -> None:
        self._proven: dict[str, float] = {}  # url -> until (monotonic)

    async def prove(self, client: httpx.AsyncClient, keys: RelayKeys, url: str, owner: str) -> None:
        """Return once the replica at ``url`` has proved it holds the shared key (raise otherwise).

        Connection errors propagate as httpx's: the caller tells "does not answer" from "answers wrongly"."""
        url = url.rstrip("/")
        now = time.monotonic()
        if self._proven.get(url, 0.0) > now:
            return
        nonce = secrets.token_hex(16)
        async with client.stream("GET", url + PROOF_PATH, params={"nonce": nonce}, timeout=_PROOF_TIMEOUT) as answer:
            body = b""
            async for chunk in answer.aiter_bytes():
                body += chunk
                if len(body) > _PROOF_MAX_BYTES:
                    break
            status = answer.status_code
        proof = _proof_of(body) if status == 200 else None
        if proof is None or not hmac.compare_digest(proof, keys.peer_proof(nonce, url)):
            self._proven.pop(url, None)
            raise PeerUnproven(
                f"the relay named as this session's owner ({owner} at {url}) did not prove it is a replica "
                "of this relay (sharing its key): nothing was sent there",
                details={"owner": owner, "url": url},
            )
        self._proven[url] = now + PROOF_TTL

    @staticmethod
    def sign(keys: RelayKeys, request: httpx.Request, url: str, body: bytes, *, hops: str, caller: str = "") -> str:
        """The signature header's value for ``request`` (built, not yet sent) to the replica at ``url``; the
        caller's name and role, when given, are signed with it."""
        ts, nonce = str(int(time.time())), secrets.token_hex(16)
        query = request.url.query.decode("latin-1")
        parts = _signed_parts(
            request.method, request.url.path, query, url=url, body=body, ts=ts, nonce=nonce, hops=hops, caller=caller
        )
        return f"v1 t={ts} n={nonce} s={keys.request_signature(parts)}"


def _proof_of(body: bytes) -> str | None:
    try:
        data = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return None
    proof = data.get("proof") if isinstance(data, dict) else None
    return proof if isinstance(proof, str) else None


class SignedRequests:
    """The receiving side: a forwarded request's signature, checked once within the window."""

    def __init__(self, keys: RelayKeys, own_url: str) -> None:
        self.keys = keys
        self.url = own_url.rstrip("/")
        self._seen: collections.OrderedDict[str, float] = collections.OrderedDict()  # nonce -> forget after

    async def admit(self, scope: Scope, receive: Receive, header: bytes, hops: bytes, caller: bytes = b"") -> Receive:
        """Check a forwarded request's signature (reading its body; the caller header is signed too), or raise
        :class:`Unauthorized`. Returns the ``receive`` to hand on: the body read here, then the client's own."""
        match = _HEADER.match(header.decode("latin-1"))
        if match is None or not SESSION_PATH.match(scope["path"]):
            raise Unauthorized("missing or wrong API token")
        ts, nonce, signature = match.groups()
        now = time.time()
        if abs(now - int(ts)) > WINDOW:
            raise Unauthorized("a forwarded request outside its time window", hint="Check the replicas' clocks.")
        body, replay = await _read_body(receive)
        query = (scope.get("query_string") or b"").decode("latin-1")
        method = str(scope.get("method", "GET"))
        parts = _signed_parts(
            method,
            scope["path"],
            query,
            url=self.url,
            body=body,
            ts=ts,
            nonce=nonce,
            hops=hops.decode("latin-1"),
            caller=caller.decode("latin-1"),
        )
        if not hmac.compare_digest(self.keys.request_signature(parts), signature):
            raise Unauthorized("missing or wrong API token")
        self._forget_old(now)
        if nonce in self._seen or len(self._seen) >= MAX_SEEN:
            raise Unauthorized("a forwarded request seen before", hint="A replica signs each request once.")
        self._seen[nonce] = now + 2 * WINDOW
        return replay

    def _forget_old(self, now: float) -> None:
        while self._seen:
            nonce, until = next(iter(self._seen.items()))
            if until > now:
                return
            del self._seen[nonce]


async def _read_body(receive: Receive) -> tuple[bytes, Receive]:
    body = bytearray()
    while True:
        message: Any = await receive()
        if message["type"] != "http.request":
            raise Unauthorized("the forwarded request ended before its body")
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            raise Unauthorized("a forwarded request larger than the relay takes")
        if not message.get("more_body"):
            break
    data, sent = bytes(body), False

    async def replay() -> ReceiveMessage:
        nonlocal sent
        if not sent:
            sent = True
            event: HTTPRequestEvent = {"type": "http.request", "body": data, "more_body": False}
            return event
        return await receive()

    return data, replay
