"""Keys the state store does not hold: what a relay seals its stored records with, encrypts the keeper
secrets it stores with, and what replicas prove themselves to each other with.

Whoever can write to Redis can change any record, lease or replica registration there; without this key
they cannot make a record that a relay acts on, nor pass for a replica. The key comes from
``DEBUGRELAY_TOKEN`` when it is set (replicas share the token, so they share the key); otherwise from
a random key file in the relay's state folder (``relay.key``, mode 0600, made once), shared by the
relays that share that folder. A relay with a memory store keeps a key of its own process.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import msgspec

from debugrelay.config import Settings
from debugrelay.errors import RelayError

log = logging.getLogger(__name__)

KEY_FILE = "relay.key"
_KEY_BYTES = 32
_HIDDEN = "sealed:v1:"  # a keeper secret as the store keeps it (RelayKeys.hide)


class KeyFileError(RelayError):
    """The state folder's key file cannot be made or read, or is not one a relay wrote."""

    code = "key_file_error"
    default_hint = "Fix or remove the key file (sessions sealed with a removed key are then shown as lost)."


class RelayKeys:
    """Keys derived from one secret, one per use, so that no value made for one use serves another."""

    def __init__(self, secret: bytes, source: str) -> None:
        self.source = source  # where the secret comes from, for messages
        self._seal = _derive(secret, "seal")
        self._peer = _derive(secret, "peer")
        self._request = _derive(secret, "request")
        self._keeper = _derive(secret, "keeper")

    @classmethod
    def for_settings(cls, settings: Settings, *, durable: bool) -> RelayKeys:
        """The token's keys; else the state folder's key (a durable store) or one of this process (memory)."""
        if settings.token:
            return cls(settings.token.encode("utf-8"), "DEBUGRELAY_TOKEN")
        if not durable:
            return cls.ephemeral()
        path = Path(settings.state_dir) / KEY_FILE
        return cls(load_key_file(path), str(path))

    @classmethod
    def ephemeral(cls) -> RelayKeys:
        """Keys of this process alone (a memory store: no record outlives the process)."""
        return cls(secrets.token_bytes(_KEY_BYTES), "this process")

    # -- stored records ---------------------------------------------------------------------------

    def seal(self, session_id: str, field: str, value: Any) -> str:
        """The seal of ``value``, stored as ``field`` of session ``session_id`` (bound to both)."""
        data = msgspec.json.encode({"session": session_id, "field": field, "value": value}, order="sorted")
        return hmac.new(self._seal, data, hashlib.sha256).hexdigest()

    def sealed(self, session_id: str, field: str, value: Any, seal: str | None) -> bool:
        """Whether ``seal`` is this key's seal of ``value`` as ``field`` of ``session_id``."""
        if not isinstance(seal, str):
            return False
        try:
            expected = self.seal(session_id, field, value)
        except (TypeError, msgspec.EncodeError):
            return False
        return hmac.compare_digest(expected, seal)

    # -- keeper secrets ---------------------------------------------------------------------------

    def hide(self, session_id: str, secret: str) -> str:
        """``secret`` (a target keeper's) as the store keeps it: encrypted under a key the store does not hold,
        bound to the session, so that a reader of the store cannot prove itself to the keeper."""
        nonce = secrets.token_bytes(16)
        data = secret.encode("utf-8")
        box = bytes(a ^ b for a, b in zip(data, self._stream(session_id, nonce, len(data)), strict=True))
        return f"{_HIDDEN}{nonce.hex()}:{box.hex()}:{self._tag(session_id, nonce, box)}"

    def reveal(self, session_id: str, stored: str | None) -> str | None:
        """The secret :meth:`hide` made ``stored`` of for ``session_id``; None when this key did not make it."""
        if not isinstance(stored, str) or not stored.startswith(_HIDDEN):
            return None
        try:
            nonce_hex, box_hex, tag = stored[len(_HIDDEN) :].split(":")
            nonce, box = bytes.fromhex(nonce_hex), bytes.fromhex(box_hex)
        except ValueError:
            return None
        if not hmac.compare_digest(self._tag(session_id, nonce, box), tag):
            return None
        plain = bytes(a ^ b for a, b in zip(box, self._stream(session_id, nonce, len(box)), strict=True))
        try:
            return plain.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def _stream(self, session_id: str, nonce: bytes, size: int) -> bytes:
        blocks = (size + 31) // 32
        head = f"debugrelay-keeper-v1\n{session_id}\n".encode() + nonce
        return b"".join(
            hmac.new(self._keeper, head + i.to_bytes(4, "big"), hashlib.sha256).digest() for i in range(blocks)
        )[:size]

    def _tag(self, session_id: str, nonce: bytes, box: bytes) -> str:
        data = f"debugrelay-keeper-tag-v1\n{session_id}\n".encode() + nonce + box
        return hmac.new(self._keeper, data, hashlib.sha256).hexdigest()

    # -- replicas -----------------------------------------------------------------------------------

    def peer_proof(self, nonce: str, url: str) -> str:
        """What the replica advertised at ``url`` answers to the challenge ``nonce``. The URL is part of
        it: a relay asked by a stranger answers for its own address only, never for the stranger's."""
        return hmac.new(self._peer, f"debugrelay-peer-v1\n{nonce}\n{url}".encode(), hashlib.sha256).hexdigest()

    def request_signature(self, parts: list[str]) -> str:
        """The signature of a forwarded request, over its described ``parts``."""
        data = "\n".join(["debugrelay-forward-v1", *parts]).encode("utf-8", "surrogateescape")
        return hmac.new(self._request, data, hashlib.sha256).hexdigest()


def _derive(secret: bytes, use: str) -> bytes:
    return hmac.new(secret, f"debugrelay {use} key v1".encode(), hashlib.sha256).digest()


def load_key_file(path: Path) -> bytes:
    """The key kept at ``path``, made there first if there is none (by whichever relay comes first)."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not path.exists():
            _make_key_file(path)
        info = path.stat()
        if info.st_uid != os.getuid():
            raise KeyFileError(
                f"the key file {path} belongs to another user",
                details={"path": str(path)},
                hint="Give each user a state folder of their own (DEBUGRELAY_STATE_DIR).",
            )
        if stat.S_IMODE(info.st_mode) & 0o077:
            log.warning("the key file %s was readable by other users: made private (0600)", path)
            path.chmod(0o600)
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"cannot make or read the key file {path}: {exc}", details={"path": str(path)}) from exc
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise KeyFileError(f"the key file {path} does not hold a key a relay wrote", details={"path": str(path)})
    return key


def _make_key_file(path: Path) -> None:
    """Write a new key whole under a private name, then link it in place: a relay starting at the same
    moment reads either no file or the whole key, and the first link wins."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(_KEY_BYTES) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(temp, path)
            log.info("made this relay's key file %s (sessions stored in Redis are sealed with it)", path)
        except FileExistsError:
            pass  # another relay made it first: its key is the one
    finally:
        temp.unlink(missing_ok=True)
