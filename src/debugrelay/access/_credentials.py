"""Named credentials with roles, read from a TOML file the operator keeps (``DEBUGRELAY_CREDENTIALS``).

One ``[[credentials]]`` table per credential: ``name``, ``token`` or ``token_sha256``, ``role``
(``admin``, ``agent``, ``viewer``), optional ``expires`` (a TOML date-time) and limits
(``max_sessions``, ``requests_per_minute``); a ``[defaults]`` table gives the limits of those that
set none. Tokens are kept as their SHA-256 only, so the relay holds nothing a leak of its memory
would replay beyond what the file already says. The file is read again when it changes; a file that
no longer parses keeps the last good set and says why (:attr:`CredentialFile.problem`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import os
import re
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from debugrelay.errors import InvalidRequest

Role = Literal["admin", "agent", "viewer"]
ROLES: tuple[Role, ...] = ("admin", "agent", "viewer")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
MIN_TOKEN = 16  # characters: shorter ones are guessable
log = logging.getLogger(__name__)
DEFAULT_MAX_SESSIONS = 20
DEFAULT_REQUESTS_PER_MINUTE = 1200
CHECK_EVERY = 1.0  # seconds between looks at the file's identity (a stat), at most
_KEYS = {"name", "token", "token_sha256", "role", "expires", "max_sessions", "requests_per_minute"}
_DEFAULT_KEYS = {"max_sessions", "requests_per_minute"}


class CredentialsInvalid(InvalidRequest):
    code = "credentials_invalid"


@dataclass(frozen=True, slots=True)
class Credential:
    """Who a token stands for, what it may do, and its limits."""

    name: str
    role: Role
    token_sha256: bytes = field(repr=False)
    expires: float | None = None  # epoch seconds; None: never
    max_sessions: int = DEFAULT_MAX_SESSIONS
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE

    def expired(self, now: float) -> bool:
        return self.expires is not None and now >= self.expires


def digest(token: str | bytes) -> bytes:
    return hashlib.sha256(token.encode() if isinstance(token, str) else token).digest()


@dataclass(frozen=True)
class CredentialSet:
    """The credentials in force, found by their token's digest."""

    by_digest: Mapping[bytes, Credential]

    @property
    def names(self) -> dict[str, Credential]:
        return {c.name: c for c in self.by_digest.values()}

    def find(self, token: bytes | None, now: float) -> Credential | None:
        """The live credential ``token`` stands for, else None (unknown or expired: the same answer)."""
        if not token:
            return None
        found = self.by_digest.get(digest(token))
        if found is None or found.expired(now):
            return None
        # the dict found it by digest; compare again in constant time all the same
        return found if hmac.compare_digest(digest(token), found.token_sha256) else None


def single_token(token: str) -> CredentialSet:
    """The relay's one ``DEBUGRELAY_TOKEN``: an admin credential named ``admin``, without limits of its own."""
    admin = Credential("admin", "admin", digest(token), max_sessions=0, requests_per_minute=0)
    return CredentialSet({admin.token_sha256: admin})


def _limit(table: Mapping[str, Any], key: str, default: int, where: str) -> int:
    value = table.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CredentialsInvalid(f"{where}: {key} must be a whole number >= 0 (0: no limit)")
    return value


def _expires(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return moment.timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp()
    raise CredentialsInvalid(f"{where}: expires must be a TOML date or date-time (2027-01-31T00:00:00Z)")


def _token_digest(table: Mapping[str, Any], where: str) -> bytes:
    token, hashed = table.get("token"), table.get("token_sha256")
    if (token is None) == (hashed is None):
        raise CredentialsInvalid(f"{where}: give exactly one of token and token_sha256")
    if token is not None:
        if not isinstance(token, str) or len(token) < MIN_TOKEN:
            raise CredentialsInvalid(f"{where}: token must be a string of at least {MIN_TOKEN} characters")
        return digest(token)
    if not isinstance(hashed, str) or not re.fullmatch(r"[0-9a-fA-F]{64}", hashed):
        raise CredentialsInvalid(f"{where}: token_sha256 must be 64 hex digits (sha256sum of the token)")
    return bytes.fromhex(hashed)


def parse_credentials(text: str) -> CredentialSet:
    """The credentials ``text`` (TOML) declares; :class:`CredentialsInvalid` naming the first fault."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CredentialsInvalid(f"not TOML: {exc}") from exc
    unknown = set(doc) - {"credentials", "defaults"}
    if unknown:
        raise CredentialsInvalid(f"unknown tables {sorted(unknown)}: the file has [defaults] and [[credentials]]")
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict) or set(defaults) - _DEFAULT_KEYS:
        raise CredentialsInvalid(f"[defaults] holds only {sorted(_DEFAULT_KEYS)}")
    max_sessions = _limit(defaults, "max_sessions", DEFAULT_MAX_SESSIONS, "[defaults]")
    per_minute = _limit(defaults, "requests_per_minute", DEFAULT_REQUESTS_PER_MINUTE, "[defaults]")
    tables = doc.get("credentials", [])
    if not isinstance(tables, list) or not tables:
        raise CredentialsInvalid("no [[credentials]]: the file must name at least one")
    found: dict[bytes, Credential] = {}
    names: set[str] = set()
    for i, table in enumerate(tables, 1):
        where = f"credential {i}"
        if not isinstance(table, dict):
            raise CredentialsInvalid(f"{where}: not a table")
        name = table.get("name")
        if not isinstance(name, str) or not NAME.match(name):
            raise CredentialsInvalid(f"{where}: name must be 1-64 letters, digits, '_', '.', '@' or '-'")
        where = f"credential '{name}'"
        if set(table) - _KEYS:
            raise CredentialsInvalid(f"{where}: unknown keys {sorted(set(table) - _KEYS)}")
        if name in names:
            raise CredentialsInvalid(f"{where}: the name is given twice")
        role = table.get("role")
        if role not in ROLES:
            raise CredentialsInvalid(f"{where}: role must be one of {', '.join(ROLES)}")
        hashed = _token_digest(table, where)
        if hashed in found:
            raise CredentialsInvalid(f"{where}: the same token as '{found[hashed].name}'")
        names.add(name)
        found[hashed] = Credential(
            name=name,
            role=cast(Role, role),
            token_sha256=hashed,
            expires=_expires(table.get("expires"), where),
            max_sessions=_limit(table, "max_sessions", max_sessions, where),
            requests_per_minute=_limit(table, "requests_per_minute", per_minute, where),
        )
    return CredentialSet(found)


class CredentialFile:
    """The credentials of a file, read again when it changes (looked at once a second at most)."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.monotonic) -> None:
        self.path = path
        self.clock = clock
        self.problem: str | None = None  # why the file in place is not the set in force
        self._seen: tuple[int, int, int, int] | None = None
        self._looked = float("-inf")
        self.current = parse_credentials(self._read())  # a bad file at start is an error, not a fallback
        self._seen = self._identity()

    def _read(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise CredentialsInvalid(f"cannot read {self.path}: {exc.strerror}") from exc

    def _identity(self) -> tuple[int, int, int, int] | None:
        try:
            st = os.stat(self.path)  # follows a Secret's symlinks: a new revision is a new inode
        except OSError:
            return None
        return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)

    def get(self) -> CredentialSet:
        """The set in force, the file read again first if it changed since the last look."""
        now = self.clock()
        if now - self._looked < CHECK_EVERY:
            return self.current
        self._looked = now
        seen = self._identity()
        if seen == self._seen:
            return self.current
        self._seen = seen
        try:
            self.current = parse_credentials(self._read())
            self.problem = None
            log.info("credentials read again from %s: %d in force", self.path, len(self.current.by_digest))
        except CredentialsInvalid as exc:
            self.problem = f"{self.path}: {exc.message}; the last good credentials stay in force"
            log.warning("%s", self.problem)
        return self.current
