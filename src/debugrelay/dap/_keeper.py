"""The relay's half of the keeper handshake (the keeper's half is ``_boot/_debugrelay_keeper.py``).

The keeper greets with ``DEBUGRELAY-KEEPER/1 <nonce>``; the relay answers the hex HMAC-SHA256 of
``debugrelay-keeper:<nonce>`` under the target's secret (the secret itself never crosses the wire);
the keeper then sends its state as a ``debugrelay.keeper`` event, before any other message.

A keeper with no relay connected for the session's timeout ends its program (``--orphan-after``, then
the ``debugrelay.orphanAfter`` request: see :func:`tell_orphan_after`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from typing import TYPE_CHECKING, Any

from ._handshake import INITIALIZE_ARGS

if TYPE_CHECKING:
    import asyncio

    from ._client import DapClient
    from ._messages import Response

SECRET_ENV = "DEBUGRELAY_KEEPER_SECRET"
GREETING = b"DEBUGRELAY-KEEPER/1 "
HELLO_EVENT = "debugrelay.keeper"
KEEPER_FILE = "_debugrelay_keeper.py"
ORPHAN_REQUEST = "debugrelay.orphanAfter"  # the keeper answers it itself: {"seconds": N}


def new_secret() -> str:
    """A per-target secret (kept with the session record, never shown)."""
    return secrets.token_hex(32)


def secret_pipe(secret: str) -> int:
    """The read end of a pipe holding ``secret`` (its write end closed): a keeper started with it in
    ``pass_fds`` and ``--secret-fd`` reads the secret there, so it is never in the keeper's environment."""
    read, write = os.pipe()
    try:
        os.write(write, secret.encode())  # 64 bytes: far below a pipe's buffer
    finally:
        os.close(write)
    return read


def prove(secret: str, nonce: bytes) -> bytes:
    """The line that proves ``secret`` for the keeper's ``nonce``."""
    return hmac.new(secret.encode(), b"debugrelay-keeper:" + nonce, hashlib.sha256).hexdigest().encode()


def keeper_command(
    python: list[str],
    *,
    listen: str,
    connect: str,
    status_file: str | None,
    keeper: str,
    debuggee: list[str],
    attach: dict[str, Any] | None = None,
    secret_fd: int | None = None,
    orphan_after: float | None = None,
) -> list[str]:
    """``python keeper --listen .. --connect .. [--status-file ..] [--client ..] [--orphan-after ..] -- debuggee``.

    With ``attach``, the keeper initializes and attaches to debugpy by itself the moment debugpy
    listens, so debugpy's loopback port is never free for another local client to take. With
    ``orphan_after`` (seconds), a keeper that has had no relay connected for that long ends the program."""
    argv = [*python, keeper, "--listen", listen, "--connect", connect]
    if status_file:
        argv += ["--status-file", status_file]
    if attach is not None:
        client = {"initialize": INITIALIZE_ARGS, "attach": attach}
        argv += ["--client", json.dumps(client, separators=(",", ":"))]
    if secret_fd is not None:
        argv += ["--secret-fd", str(secret_fd)]
    if orphan_after is not None:
        argv += ["--orphan-after", repr(float(orphan_after))]
    return [*argv, "--", *debuggee]


def orphan_seconds(timeout_minutes: float) -> float:
    """How long a keeper waits without a relay before it ends the program: the session's timeout.

    An idle session whose relay runs is timed out by the relay; one whose relay never comes back is ended
    by its keeper, a timeout after the relay left, never sooner than the relay itself would have."""
    return timeout_minutes * 60


def tell_orphan_after(client: DapClient | None, timeout_minutes: float) -> None:
    """Tell a keeper the session's timeout (as the relay connects, and when the timeout changes): it ends
    the program once no relay has been connected that long. Nothing waits for the answer; a connection
    without a keeper (debugpy itself) is told nothing."""
    if client is None or client.keeper is None or client.closed.is_set():
        return
    future = client.send(ORPHAN_REQUEST, {"seconds": orphan_seconds(timeout_minutes)})
    future.add_done_callback(_answered)


def _answered(future: asyncio.Future[Response]) -> None:
    if not future.cancelled():
        future.exception()  # a connection that closed first: nothing to do, nothing to report
