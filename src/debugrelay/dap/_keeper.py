"""The relay's half of the keeper handshake (the keeper's half is ``_boot/_debugrelay_keeper.py``).

The keeper greets with ``DEBUGRELAY-KEEPER/1 <nonce>``; the relay answers the hex HMAC-SHA256 of
``debugrelay-keeper:<nonce>`` under the target's secret (the secret itself never crosses the wire);
the keeper then sends its state as a ``debugrelay.keeper`` event, before any other message.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from typing import Any

from ._handshake import INITIALIZE_ARGS

SECRET_ENV = "DEBUGRELAY_KEEPER_SECRET"
GREETING = b"DEBUGRELAY-KEEPER/1 "
HELLO_EVENT = "debugrelay.keeper"
KEEPER_FILE = "_debugrelay_keeper.py"


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
) -> list[str]:
    """``python keeper --listen .. --connect .. [--status-file ..] [--client ..] -- debuggee``.

    With ``attach``, the keeper initializes and attaches to debugpy by itself the moment debugpy
    listens, so debugpy's loopback port is never free for another local client to take."""
    argv = [*python, keeper, "--listen", listen, "--connect", connect]
    if status_file:
        argv += ["--status-file", status_file]
    if attach is not None:
        client = {"initialize": INITIALIZE_ARGS, "attach": attach}
        argv += ["--client", json.dumps(client, separators=(",", ":"))]
    if secret_fd is not None:
        argv += ["--secret-fd", str(secret_fd)]
    return [*argv, "--", *debuggee]
