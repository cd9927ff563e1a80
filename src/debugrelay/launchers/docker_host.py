"""What a container target of a relay on the host could reach of the host, and the firewall rule that
closes it.

The relay reaches such a target at its address on the target's own bridge network, so the bridge has an
address on the host, and without a rule the target reaches every service of the host listening on all
addresses through it (the host's Redis among them). Every target network's bridge is named
``drelay…``; one rule at the head of the host's INPUT chain refuses each connection that comes in from
such a bridge, while the answers to the relay's own connections pass. A relay that may change the
firewall (root, or CAP_NET_ADMIN) puts it there; any other relay says at start what stays open."""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import psutil

log = logging.getLogger(__name__)

BRIDGE_PREFIX = "drelay"  # a target network's bridge: the prefix, then 9 hex digits (15 characters, the limit)
BRIDGE_NAME = "com.docker.network.bridge.name"
# a new connection from a target's bridge to any address of the host is refused; answers to the relay pass
RULE = (
    *("-i", f"{BRIDGE_PREFIX}+"),
    *("-m", "conntrack", "!", "--ctstate", "ESTABLISHED,RELATED"),
    *("-m", "comment", "--comment", "debugrelay: container targets reach no service of the host"),
    *("-j", "REJECT"),
)
TOOLS = ("iptables", "ip6tables")  # ip6tables where present: target networks have no IPv6 today
SBIN = ("/usr/sbin", "/sbin")  # where iptables lives, often not on a user's PATH
MANUAL = " ".join(["iptables", "-I", "INPUT", "1", *(f"'{a}'" if " " in a else a for a in RULE)])

Run = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def bridge_name(network: str) -> str:
    """The bridge interface of a target network: the rule matches every such name."""
    return BRIDGE_PREFIX + hashlib.sha256(network.encode()).hexdigest()[:9]


def _run(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=30, check=False)


class HostFirewall:
    """The rule that keeps container targets off the host's services, put in place by this relay."""

    def __init__(self, run: Run = _run) -> None:
        self._run = run
        self._lock = threading.Lock()
        self.problem: str | None = None  # why the rule is not in place, once tried
        self.tried = False

    def close(self) -> str | None:
        """Put the rule in place where it is missing (it may have been flushed since); None when it
        holds, else why it cannot (the relay may not change the firewall, iptables is missing)."""
        with self._lock:
            if self.tried and self.problem is not None:
                return self.problem  # no privilege now, none later
            self.tried = True
            self.problem = self._ensure()
            return self.problem

    def _ensure(self) -> str | None:
        found = {tool: _binary(tool) for tool in TOOLS}
        if found["iptables"] is None:
            return "iptables is not installed"
        for tool, binary in found.items():
            refused = self._ensure_with(binary) if binary is not None else None
            if refused is not None and tool == "iptables":
                return f"iptables refused: {refused}"
            if refused is not None:
                log.info("%s refused the rule for container targets (IPv6): %s", tool, refused)
        return None

    def _ensure_with(self, binary: str) -> str | None:
        """Check for the rule, insert it if missing; None when it holds, else the tool's complaint."""
        try:
            if self._run([binary, "-w", "-C", "INPUT", *RULE]).returncode == 0:
                return None
            added = self._run([binary, "-w", "-I", "INPUT", "1", *RULE])
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        if added.returncode == 0:
            return None
        said = added.stderr.strip().splitlines()
        return said[-1] if said else f"exit status {added.returncode}"


def _binary(tool: str) -> str | None:
    path = os.pathsep.join([os.environ.get("PATH", ""), *SBIN])
    return shutil.which(tool, path=path)


def store_exposure(redis_url: str | None) -> str | None:
    """Where this host's Redis (the relay's store) takes clients beyond loopback without a password, which
    a container target reaches through its network's gateway; None when it does not."""
    if not redis_url:
        return None
    parts = urlsplit(redis_url)
    if parts.scheme not in ("redis", "rediss") or parts.password or not parts.hostname:
        return None
    port = parts.port or 6379
    if not _is_this_host(parts.hostname):
        return None
    listening: list[str] = []
    with contextlib.suppress(psutil.Error, OSError):
        for conn in psutil.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                address = conn.laddr.ip.partition("%")[0]
                if not ipaddress.ip_address(address).is_loopback:
                    listening.append(f"[{address}]:{port}" if ":" in address else f"{address}:{port}")
    if not listening or _protected(redis_url):
        return None
    return ", ".join(sorted(set(listening)))


def _protected(redis_url: str) -> bool:
    """Whether Redis refuses every client but loopback's (protected mode, on by default without a
    password); False when it cannot be asked."""
    import redis

    try:
        client = redis.Redis.from_url(redis_url, socket_timeout=2, socket_connect_timeout=2)
        try:
            return client.config_get("protected-mode").get("protected-mode") == "yes"
        finally:
            client.close()
    except redis.RedisError:
        return False


def _is_this_host(hostname: str) -> bool:
    try:
        resolved = {str(info[4][0]) for info in socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)}
    except OSError:
        return False
    own = {a.address.partition("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs}
    return any(ipaddress.ip_address(a.partition("%")[0]).is_loopback or a in own for a in resolved)


def report(firewall: HostFirewall, redis_url: str | None) -> None:
    """Close the host to container targets, or say at start what stays open (the store first)."""
    problem = firewall.close()
    if problem is None:
        log.info("container targets reach no service of this host (iptables INPUT rule on %s+)", BRIDGE_PREFIX)
        return
    exposed = store_exposure(redis_url)
    if exposed:
        log.warning(
            "Redis, the relay's store, listens on %s without a password, and container targets reach this "
            "host's services through their network's gateway (%s): a program under the debugger can read and "
            "rewrite every session. Bind Redis to 127.0.0.1 or give it a password, or let the relay close "
            "that way (run it as root, or add once: %s); README, Security",
            exposed,
            problem,
            MANUAL,
        )
    else:
        log.warning(
            "container targets reach this host's services listening on every address (0.0.0.0, ::) through "
            "their network's gateway (%s); run the relay as root to close that way, or add once: %s",
            problem,
            MANUAL,
        )
