"""Where an attach may go: a debugger port someone else opened is reached only on hosts the operator allows.

Without this, attach is a port scanner of everything the relay reaches (closed and open ports told
apart, banners echoed), cloud metadata addresses included. Loopback is always allowed; other hosts
by name or network in ``DEBUGRELAY_ATTACH_HOSTS``; link-local (metadata), multicast and unspecified
addresses never. Attaching by PID injects code: only into processes of the relay's own user unless
``DEBUGRELAY_ATTACH_OTHER_USERS`` allows more.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
from collections.abc import Callable

import psutil

from debugrelay.config import Settings
from debugrelay.errors import Refused

from .policy import LaunchPolicy, real, under

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _never(address: Address) -> bool:
    # loopback first: IPv6's ::1 lies in a range Python calls reserved
    if address.is_loopback:
        return False
    return address.is_link_local or address.is_multicast or address.is_unspecified or address.is_reserved


def _listed(host: str, address: Address, allowed: list[str]) -> bool:
    for entry in allowed:
        if entry.lower() == host.lower():
            return True
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue
    return False


def resolve(host: str) -> list[Address]:
    """Every address ``host`` resolves to, in the resolver's order (one lookup; blocking)."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused(
            f"cannot resolve '{host}'",
            details={"host": host},
            hint="Give a host name or address the relay can resolve.",
        ) from None
    found = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    return list(dict.fromkeys(found))


def checked_addresses(settings: Settings, host: str) -> list[str]:
    """Every address ``host`` resolves to, each one allowed; else :class:`Refused` (blocking: DNS)."""
    addresses = resolve(host)
    if not addresses:
        raise Refused(f"cannot resolve '{host}'", details={"host": host}, hint="Give a host name or address.")
    for address in addresses:
        if _never(address):
            raise Refused(
                f"'{host}' is a link-local, multicast or unspecified address: never attached to",
                details={"host": host, "address": str(address)},
                hint="Attach to the address the debugger listens on.",
            )
        if not address.is_loopback and not _listed(host, address, settings.attach_hosts):
            raise Refused(
                f"attaching to '{host}' is not allowed on this relay",
                details={"host": host, "address": str(address), "setting": "DEBUGRELAY_ATTACH_HOSTS"},
                hint="Loopback is allowed; the operator lists other hosts or networks in DEBUGRELAY_ATTACH_HOSTS.",
            )
    return [str(a) for a in addresses]


def check_attach_host(settings: Settings, host: str) -> str:
    """The address the relay connects to for ``host``, once every address the name resolves to is
    allowed; else :class:`Refused` (blocking: DNS).

    The name is resolved here once and the caller connects to the address returned, never to the
    name: a name that answers a loopback address to the check and another one to the connection
    (DNS rebinding) reaches only what was checked.
    """
    return checked_addresses(settings, host)[0]


def check_attach_again(settings: Settings, host: str, address: str) -> str:
    """``address``, recorded for ``host`` by an earlier attach, if ``host`` still resolves to it among
    addresses that are all allowed; else :class:`Refused`. The recorded address is what is connected to:
    a stored record cannot point the relay elsewhere, nor a name that now answers something else."""
    if address not in checked_addresses(settings, host):
        raise Refused(
            f"'{host}' no longer resolves to the address {address} the session was attached at",
            details={"host": host, "address": address},
            hint="Attach again: the program that was there is not the one the name names now.",
        )
    return address


def check_attach_pid(settings: Settings, pid: int) -> None:
    """Raise :class:`Refused` unless the relay may inject the debugger into process ``pid``: never the
    relay itself nor a process it runs under (its parent, a supervisor, the machine's init)."""
    if pid in _relay_and_ancestors():
        raise Refused(
            f"process {pid} is the relay or a process it runs under",
            details={"pid": pid},
            hint="Attach to the program you want to debug: find its pid with `ps` or `pgrep -f`.",
        )
    if settings.attach_other_users:
        return
    try:
        owner = psutil.Process(pid).uids().real
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return  # not there (or not readable): the attach itself says so
    if owner != os.getuid():
        raise Refused(
            f"process {pid} belongs to another user",
            details={"pid": pid, "setting": "DEBUGRELAY_ATTACH_OTHER_USERS"},
            hint="Attach by PID to processes of the relay's own user; the operator can allow more.",
        )


def listing(settings: Settings) -> Callable[[int, int | None, str | None, list[str]], bool]:
    """Which processes ``GET /processes`` shows (asked with pid, real uid, working directory, command line):
    those attach by PID would take (the relay's own user unless ``DEBUGRELAY_ATTACH_OTHER_USERS``; never
    the relay, a process it runs under, or one it started) that belong to the workspace: the working
    directory or the script inside the workspace roots. Another project's processes, and what their
    command lines hold, are not shown."""
    roots = LaunchPolicy.from_settings(settings).roots
    own = _relay_and_ancestors()
    with contextlib.suppress(psutil.Error):
        own.update(p.pid for p in psutil.Process().children(recursive=True))  # its targets, keepers, pool
    me = os.getuid()

    def shown(pid: int, uid: int | None, cwd: str | None, cmdline: list[str]) -> bool:
        if pid in own or (uid != me and not settings.attach_other_users):
            return False
        script = next((a for a in cmdline[1:] if a.endswith(".py")), None)
        places = [cwd, os.path.join(cwd or "/", script) if script else None]
        return any(under(real(place), root) for place in places if place for root in roots)

    return shown


def _relay_and_ancestors() -> set[int]:
    """This process and every process above it, up to the machine's (or container's) init."""
    found = {os.getpid(), 1}
    with contextlib.suppress(psutil.Error):
        found.update(p.pid for p in psutil.Process().parents())
    return found
