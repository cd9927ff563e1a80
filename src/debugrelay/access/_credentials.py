"""Named credentials with roles, read from a TOML file the operator keeps (``DEBUGRELAY_CREDENTIALS``).

One ``[[credentials]]`` table per credential: ``name``, ``token`` or ``token_sha256``, ``role``
(``admin``, ``agent``, ``viewer``), optional ``expires`` (a TOML date-time) and limits
(``max_sessions``, ``requests_per_minute``); a ``[defaults]`` table gives the limits of those that
set none. An optional ``[proxy]`` table trusts an authentication proxy in front of the relay: the
identity in its ``header`` (oauth2-proxy's ``X-Auth-Request-User``, say), honoured only from its
``trusted`` addresses, is the credential of that name (which then needs no token), or has
``default_role`` when the file does not name it. Tokens are kept as their SHA-256 only. The file is
read again when it changes; a file that no longer parses keeps the last good set and says why
(:attr:`CredentialFile.problem`).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import hmac
import ipaddress
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
MAX_FILE_BYTES = 1024 * 1024  # a credentials file's size at most
CHECK_EVERY = 1.0  # seconds between looks at the file's identity (a stat), at most
_KEYS = {"name", "token", "token_sha256", "role", "expires", "max_sessions", "requests_per_minute"}
_DEFAULT_KEYS = {"max_sessions", "requests_per_minute"}
_PROXY_KEYS = {"header", "trusted", "default_role"}
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class CredentialsInvalid(InvalidRequest):
    code = "credentials_invalid"


@dataclass(frozen=True, slots=True)
class Credential:
    """Who a token stands for, what it may do, and its limits (no token: reached only through the proxy)."""

    name: str
    role: Role
    token_sha256: bytes | None = field(repr=False)
    expires: float | None = None  # epoch seconds; None: never
    max_sessions: int = DEFAULT_MAX_SESSIONS
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE

    def expired(self, now: float) -> bool:
        return self.expires is not None and now >= self.expires


def digest(token: str | bytes) -> bytes:
    return hashlib.sha256(token.encode() if isinstance(token, str) else token).digest()


@dataclass(frozen=True, slots=True)
class ProxyRule:
    """Whom the relay believes about who is calling: the proxy's header, from its addresses only."""

    header: bytes  # lower-case, as ASGI gives header names
    trusted: tuple[Network, ...]
    default_role: Role | None = None

    def trusts(self, address: str) -> bool:
        try:
            peer = ipaddress.ip_address(address)
        except ValueError:
            return False
        if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
            peer = peer.ipv4_mapped
        return any(peer in network for network in self.trusted)


@dataclass(frozen=True)
class CredentialSet:
    """The credentials in force, found by their token's digest or (through the proxy) by name."""

    by_digest: Mapping[bytes, Credential]
    proxy: ProxyRule | None = None
    proxied: Mapping[str, Credential] = field(default_factory=dict)  # those without a token, by name

    @functools.cached_property
    def names(self) -> dict[str, Credential]:
        """Every credential by name (a set is made once per reading of the file: this is asked per request)."""
        return {**self.proxied, **{c.name: c for c in self.by_digest.values()}}

    def identified(self, identity: str, now: float) -> Credential | None:
        """The credential a trusted proxy's ``identity`` stands for: the one so named, else one of the
        default role (when there is one), else None."""
        if self.proxy is None or not NAME.match(identity):
            return None
        found = self.names.get(identity)
        if found is not None:
            return None if found.expired(now) else found
        if self.proxy.default_role is None:
            return None
        return Credential(identity, self.proxy.default_role, None)

    def find(self, token: bytes | None, now: float) -> Credential | None:
        """The live credential ``token`` stands for, else None (unknown or expired: the same answer)."""
        if not token:
            return None
        found = self.by_digest.get(digest(token))
        if found is None or found.expired(now):
            return None
        # the dict found it by digest; compare again in constant time all the same
        hashed = found.token_sha256 or b""
        return found if hmac.compare_digest(digest(token), hashed) else None


def single_token(token: str) -> CredentialSet:
    """The relay's one ``DEBUGRELAY_TOKEN``: an admin credential named ``admin``, without limits of its own."""
    hashed = digest(token)
    return CredentialSet({hashed: Credential("admin", "admin", hashed, max_sessions=0, requests_per_minute=0)})


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


def _token_digest(table: Mapping[str, Any], where: str, proxied: bool) -> bytes | None:
    token, hashed = table.get("token"), table.get("token_sha256")
    if token is not None and hashed is not None:
        raise CredentialsInvalid(f"{where}: give one of token and token_sha256, not both")
    if token is None and hashed is None:
        if proxied:
            return None  # reached through the proxy only
        raise CredentialsInvalid(f"{where}: give token or token_sha256 (or a [proxy] table, to reach it through)")
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
    unknown = set(doc) - {"credentials", "defaults", "proxy"}
    if unknown:
        raise CredentialsInvalid(f"unknown tables {sorted(unknown)}: the file has [defaults], [proxy], [[credentials]]")
    proxy = _proxy(doc.get("proxy"))
    defaults = doc.get("defaults", {})
    if not isinstance(defaults, dict) or set(defaults) - _DEFAULT_KEYS:
        raise CredentialsInvalid(f"[defaults] holds only {sorted(_DEFAULT_KEYS)}")
    max_sessions = _limit(defaults, "max_sessions", DEFAULT_MAX_SESSIONS, "[defaults]")
    per_minute = _limit(defaults, "requests_per_minute", DEFAULT_REQUESTS_PER_MINUTE, "[defaults]")
    tables = doc.get("credentials", [])
    if not isinstance(tables, list) or not tables:
        raise CredentialsInvalid("no [[credentials]]: the file must name at least one")
    found: dict[bytes, Credential] = {}
    proxied: dict[str, Credential] = {}
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
        hashed = _token_digest(table, where, proxy is not None)
        if hashed is not None and hashed in found:
            raise CredentialsInvalid(f"{where}: the same token as '{found[hashed].name}'")
        names.add(name)
        credential = Credential(
            name=name,
            role=cast(Role, role),
            token_sha256=hashed,
            expires=_expires(table.get("expires"), where),
            max_sessions=_limit(table, "max_sessions", max_sessions, where),
            requests_per_minute=_limit(table, "requests_per_minute", per_minute, where),
        )
        if hashed is None:
            proxied[name] = credential
        else:
            found[hashed] = credential
    return CredentialSet(found, proxy, proxied)


def _proxy(table: Any) -> ProxyRule | None:
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - _PROXY_KEYS:
        raise CredentialsInvalid(f"[proxy] holds only {sorted(_PROXY_KEYS)}")
    header = table.get("header")
    if not isinstance(header, str) or not re.fullmatch(r"[A-Za-z0-9-]{1,64}", header):
        raise CredentialsInvalid("[proxy]: header must name an HTTP header (X-Auth-Request-User)")
    if header.lower() in ("authorization", "cookie", "host"):
        raise CredentialsInvalid(f"[proxy]: header cannot be {header}")
    trusted = table.get("trusted")
    if not isinstance(trusted, list) or not trusted:
        raise CredentialsInvalid("[proxy]: trusted must list the proxy's addresses or networks (10.0.0.5, 10.0.0.0/8)")
    try:
        networks = tuple(ipaddress.ip_network(str(t), strict=False) for t in trusted)
    except ValueError as exc:
        raise CredentialsInvalid(f"[proxy]: trusted: {exc}") from exc
    role = table.get("default_role")
    if role is not None and role not in ROLES:
        raise CredentialsInvalid(f"[proxy]: default_role must be one of {', '.join(ROLES)}")
    return ProxyRule(header.lower().encode(), networks, cast(Role | None, role))


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
        """The file's text, read on the event loop when it changed: bounded, so parsing it is quick."""
        try:
            with self.path.open("rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise CredentialsInvalid(f"cannot read {self.path}: {exc.strerror}") from exc
        if len(data) > MAX_FILE_BYTES:
            raise CredentialsInvalid(f"{self.path} is larger than {MAX_FILE_BYTES // 1024} KiB")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise CredentialsInvalid(f"{self.path} is not UTF-8 text") from exc

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
            log.info("credentials read again from %s: %d in force", self.path, len(self.current.names))
        except CredentialsInvalid as exc:
            problem = f"{self.path}: {exc.message}; the last good credentials stay in force"
            log.warning("%s", problem)  # logged before it is answered: whoever reads it can find it in the log
            self.problem = problem
        return self.current
