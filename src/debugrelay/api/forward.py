"""Relay replicas on one store: a request for a session another replica owns is forwarded there.

The middleware looks at ``/sessions/{id}/...`` paths only. A session this replica holds is served
here; one whose owner's lease lives is forwarded to the owner's advertised URL and its answer
relayed unchanged; one nobody holds (the owner died, its lease expired) is taken over here first.
The owner is sent the request only once it has proved it shares this relay's key, and the request
carries a signature, never the token nor the client's credentials (see ``api.replicas``).
"""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import msgspec
from litestar import Controller, Litestar, get
from litestar.enums import ScopeType
from litestar.params import Parameter
from litestar.types import ASGIApp, Receive, Scope, Send

from debugrelay import access
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import Cluster, PeerProof
from debugrelay.sessions import OwnerUnavailable, SessionManager
from debugrelay.store import Lease
from debugrelay.trust import RelayKeys

from ._deps import Config, Manager
from .replicas import CALLER, NONCE, PROOF_PATH, SESSION_PATH, SIGNATURE, PeerProofs

HOPS = "x-debugrelay-hops"
SERVED_BY = "x-debugrelay-served-by"
MAX_HOPS = 2
# a forwarded /wait may long-poll for up to 300 s (api.sessions.MAX_WAIT)
TIMEOUT = httpx.Timeout(connect=2.0, read=330.0, write=30.0, pool=5.0)
_NOT_FORWARDED = {
    b"connection",
    b"keep-alive",
    b"transfer-encoding",
    b"te",
    b"trailer",
    b"upgrade",
    b"proxy-authorization",
    b"proxy-authenticate",
    b"host",
    b"content-length",
    # checked by the replica the client reached (which also adds the CORS headers); the owner, reached
    # under another Host, would not see it as the same origin
    b"origin",
    b"sec-fetch-site",
    b"sec-fetch-mode",
    b"sec-fetch-dest",
    b"sec-fetch-user",
    # credentials stay here: the owner gets a signature of this request instead (see _proxy)
    b"authorization",
    b"cookie",
    SIGNATURE.encode(),
    CALLER.encode(),  # set here, from the caller this replica let in, never the client's
}
_DROP_BACK = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}


class ForwardFailed(RelayError):
    code = "forward_failed"
    status = 502
    default_hint = "The owning relay failed to answer in full; retry."


class _Client:
    """One pooled HTTP client for forwarding, made on first use."""

    client: httpx.AsyncClient | None = None

    @classmethod
    def get(cls) -> httpx.AsyncClient:
        if cls.client is None or cls.client.is_closed:
            cls.client = httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=False)
        return cls.client


def forward_middleware(app: ASGIApp) -> ASGIApp:
    peers = PeerProofs()

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        match = SESSION_PATH.match(scope["path"]) if scope["type"] == ScopeType.HTTP else None
        if match is None:
            await app(scope, receive, send)
            return
        manager: SessionManager = Litestar.from_scope(scope).state.manager
        ownership = manager.ownership
        session_id = match.group(1)
        if ownership is None or session_id in manager.sessions:
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        raw_hops = headers.get(HOPS.encode(), b"0") or b"0"
        if not raw_hops.isdigit() or len(raw_hops) > 2:
            raise InvalidRequest(f"the {HOPS} header must be a small number", details={"header": HOPS})
        hops = int(raw_hops)
        lease = await ownership.locate(session_id)
        if lease is None:
            await app(scope, receive, send)
            return
        if hops >= MAX_HOPS:
            raise OwnerUnavailable(
                f"session '{session_id}' is changing hands",
                details={"id": session_id, "retry_after": 1},
                hint="Retry in a second.",
            )
        registered = (await manager.store.list_instances()).get(lease.owner, {})
        if registered.get("url") != lease.url:
            # a lease is a claim: requests go only where a replica announced itself
            raise ForwardFailed(
                f"the owner of session '{session_id}' ({lease.owner}) is not a registered replica at {lease.url}",
                details={"owner": lease.owner, "url": lease.url},
                hint="Retry shortly; if it persists, the state store holds a record no relay wrote.",
            )
        try:
            await peers.prove(_Client.get(), manager.keys, lease.url, lease.owner)
        except httpx.HTTPError as exc:
            raise _unreachable(lease) from exc
        await _proxy(scope, receive, send, lease, hops=hops + 1, keys=manager.keys)

    return middleware


def _unreachable(lease: Lease) -> OwnerUnavailable:
    wait = max(1, round(lease.expires_in))
    return OwnerUnavailable(
        f"the relay that owns this session ({lease.owner} at {lease.url}) does not answer",
        details={"owner": lease.owner, "url": lease.url, "retry_after": wait},
        hint=f"Retry in {wait}s: once its lease has expired this relay takes the session over.",
    )


async def _proxy(scope: Scope, receive: Receive, send: Send, lease: Lease, *, hops: int, keys: RelayKeys) -> None:
    """Send the request on to the owner, signed by this relay: no token, no credential of the client's."""
    body = bytearray()
    while True:
        message: Any = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    headers = [
        (k.decode("latin-1"), v.decode("latin-1"))
        for k, v in scope.get("headers") or []
        if k.lower() not in _NOT_FORWARDED and k.lower() != HOPS.encode()
    ]
    headers.append((HOPS, str(hops)))
    query = scope.get("query_string") or b""
    url = lease.url.rstrip("/") + scope["path"] + (f"?{query.decode('latin-1')}" if query else "")
    client = _Client.get()
    try:
        method = str(scope.get("method", "GET"))
        request = client.build_request(method, url, headers=headers, content=bytes(body))
        caller = access.current()
        said = f"{caller.name} {caller.role}" if caller is not None else ""
        if said:
            request.headers[CALLER] = said
        request.headers[SIGNATURE] = PeerProofs.sign(keys, request, lease.url, bytes(body), hops=str(hops), caller=said)
        response = await client.send(request)
    except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
        raise _unreachable(lease) from exc
    except httpx.HTTPError as exc:
        raise ForwardFailed(
            f"forwarding to the owning relay ({lease.owner}) failed: {exc.__class__.__name__}",
            details={"owner": lease.owner, "url": lease.url},
        ) from exc
    out = [
        (k.encode("latin-1"), v.encode("latin-1"))
        for k, v in response.headers.multi_items()
        if k.lower() not in _DROP_BACK
    ]
    content = response.content
    out += [(b"content-length", str(len(content)).encode()), (SERVED_BY.encode(), lease.owner.encode())]
    await send({"type": "http.response.start", "status": response.status_code, "headers": out})
    await send({"type": "http.response.body", "body": content, "more_body": False})


async def close_forwarding() -> None:
    if _Client.client is not None:
        await _Client.client.aclose()
        _Client.client = None


class ClusterController(Controller):
    tags = ["server"]  # noqa: RUF012

    @get(
        PROOF_PATH,
        summary="Prove this relay holds the replicas' shared key: the challenge a replica sends before it forwards",
    )
    async def proof(
        self,
        manager: Manager,
        settings: Config,
        nonce: Annotated[str, Parameter(pattern=NONCE.pattern, description="The challenger's random nonce (hex)")],
    ) -> PeerProof:
        url = settings.advertise_url.rstrip("/")
        return PeerProof(url=url, proof=manager.keys.peer_proof(nonce, url))

    @get("/cluster", summary="This relay's place among replicas: ownership, recovery, peers")
    async def cluster(self, manager: Manager) -> Cluster:
        ownership = manager.ownership
        if ownership is None:
            return Cluster(
                store=manager.store.name,
                durable=False,
                replicas=[],
                note="sessions are kept in memory by this relay alone (set DEBUGRELAY_REDIS_URL)",
            )
        instances = await manager.store.list_instances()
        replicas = [{"instance_id": k, **v} for k, v in sorted(instances.items())]
        found = {"store": manager.store.name, "durable": True, "replicas": replicas, **ownership.info()}
        return msgspec.convert(found, Cluster)
