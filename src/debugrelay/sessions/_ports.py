"""A service's ports at URLs on the relay's machine (launch ``ports``), so a person's browser or an agent's
``curl`` reaches what the target serves.

A local target's service listens on this machine already, a pod's at its address; a container target sits
alone on an internal network Docker publishes nothing from, so the relay listens on its own loopback (the
operator's ``publish_host``, on a free port or one of ``publish_ports``) and forwards each connection to the
container, never one from a target's network. The forwarders end with the run; a relay that carries the
session on opens them again, on the same host ports when they are free.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from debugrelay.config import WILDCARD_HOSTS
from debugrelay.errors import RelayError
from debugrelay.models import PublishedPort

from ._http import service_address

if TYPE_CHECKING:
    from ._session import Session

log = logging.getLogger(__name__)
CHUNK = 64 * 1024


def port_range(setting: str) -> list[int]:
    """The ports of ``"49200-49209"`` (or one port); none for an empty or unreadable setting (any free port)."""
    low, _, high = setting.strip().partition("-")
    try:
        first, last = int(low), int(high or low)
    except ValueError:
        return []
    return list(range(max(first, 1), min(last, 65535) + 1))


class PublishedPorts:
    """The forwarders of one session's run: one listening socket per published port of a container."""

    def __init__(self) -> None:
        self._servers: list[asyncio.Server] = []
        self._links: set[asyncio.Task[None]] = set()

    async def open(self, session: Session, ports: list[int], before: list[PublishedPort]) -> list[PublishedPort]:
        """Publish ``ports`` of the session's target; ``before`` is where a previous relay published them."""
        await self.close()
        target = session.target
        if target is None or not ports:
            return []
        settings = session.settings
        if not target.forwards_ports:  # its service is reachable where it listens: the URL says where
            host, _ = service_address(session, ports[0])
            return [PublishedPort(port=p, url=f"http://{_url_host(host)}:{p}") for p in dict.fromkeys(ports)]
        bind = settings.publish_host
        shown = "127.0.0.1" if bind in WILDCARD_HOSTS else bind
        free = port_range(settings.publish_ports) or [0]
        earlier = {p.port: _host_port(p.url) for p in before if _host_port(p.url)}
        published: list[PublishedPort] = []
        for port in dict.fromkeys(ports):
            server = await self._listen(session, port, bind, [earlier[port], *free] if port in earlier else free)
            if server is None:
                why = f"no free port to publish on at {bind} ({settings.publish_ports or 'any'})"
                published.append(PublishedPort(port=port, error=why))
                continue
            self._servers.append(server)
            host_port = server.sockets[0].getsockname()[1]
            published.append(PublishedPort(port=port, url=f"http://{_url_host(shown)}:{host_port}"))
        return published

    async def _listen(self, session: Session, port: int, bind: str, candidates: list[int]) -> asyncio.Server | None:
        taken = {s.sockets[0].getsockname()[1] for s in self._servers}
        for candidate in dict.fromkeys(candidates):
            if candidate and candidate in taken:
                continue
            try:
                return await asyncio.start_server(
                    lambda r, w: self._accepted(session, port, r, w), bind, candidate, reuse_address=True
                )
            except OSError:
                continue
        return None

    def _accepted(
        self, session: Session, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        link = asyncio.ensure_future(self._forward(session, port, reader, writer))
        self._links.add(link)
        link.add_done_callback(self._links.discard)

    async def _forward(
        self, session: Session, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """One client connection, to the target's port and back, until either side closes. A connection
        from a target's network is closed unread: a target reaches no other target through the relay."""
        peer = writer.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if any(launcher.is_target_address(address) for launcher in session.launchers.values()):
            log.warning(
                "session %s: published port %d: refused a connection from a target (%s)", session.id, port, address
            )
            writer.close()
            return
        try:
            host, _ = service_address(session, port)
        except RelayError:  # the run ended
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5.0)
        except (OSError, TimeoutError) as exc:
            log.info("session %s: published port %d: the target did not take the connection: %s", session.id, port, exc)
            writer.close()
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for w in (writer, up_writer):
                w.close()

    async def close(self) -> None:
        """Stop listening and cut the connections under way (the run ended, or this relay lets it go)."""
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        for link in list(self._links):
            link.cancel()
        for server in servers:
            with contextlib.suppress(Exception):
                await server.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until end of stream, then pass the end on (a half-closed connection stays half open)."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, RuntimeError):
        return


def _host_port(url: str | None) -> int:
    """The host port of a URL this relay published (a stored record's: checked, 0 when it is not one)."""
    tail = (url or "").rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() and len(tail) <= 5 and 0 < int(tail) <= 65535 else 0


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
