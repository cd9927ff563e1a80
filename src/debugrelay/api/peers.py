"""Connections from a debug target's network are closed the moment they are accepted, unread.

A relay in a container joins each container target's network to reach it, and a relay on the host
listening on every address is reachable from each target's bridge: so a target could reach the
relay's API. The launchers know where their targets run (:meth:`Launcher.is_target_address`); the
server's HTTP protocol asks them on every new connection, before reading a byte of it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from uvicorn.protocols.http.auto import AutoHTTPProtocol

log = logging.getLogger(__name__)

_LOGGED = 256  # peers whose first refused connection is logged; later ones are not


def from_target(app: Any, address: str) -> bool:
    """Whether ``address`` is on a network where one of ``app``'s launchers runs targets."""
    manager = getattr(app.state, "manager", None)
    if manager is None:
        return False
    return any(launcher.is_target_address(address) for launcher in manager.launchers.values())


def guarded_protocol(app: Any) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol, closing (with a reset) every connection :func:`from_target` names."""
    logged: set[str] = set()

    class TargetGuard(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        _refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            peer = transport.get_extra_info("peername")
            if isinstance(peer, tuple) and peer and from_target(app, str(peer[0])):
                self._refused = True
                transport.abort()
                if len(logged) < _LOGGED and peer[0] not in logged:
                    logged.add(peer[0])
                    log.warning("closed a connection from %s: a debug target's network", peer[0])
                return
            super().connection_made(transport)

        def data_received(self, data: bytes) -> None:
            if not self._refused:
                super().data_received(data)

        def eof_received(self) -> None:
            if not self._refused:
                super().eof_received()

        def connection_lost(self, exc: Exception | None) -> None:
            if not self._refused:
                super().connection_lost(exc)

    return TargetGuard
