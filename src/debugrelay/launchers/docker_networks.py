"""A Docker target's own network: internal (no egress, no other target), joined by a relay that runs in a
container, closed to the host's services (:mod:`.docker_host`), removed with its target; and the subnets
of every target network, which the relay's API refuses connections from (a target must not drive the
relay that debugs it)."""

from __future__ import annotations

import contextlib
import ipaddress
import re
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from debugrelay.config import in_container

from .docker_host import BRIDGE_NAME, HostFirewall, bridge_name

# a network's subnet and its gateway, the host's own address on the bridge when it has one (not refused:
# Docker's port proxy connects from there, and no container is given that address)
Subnet = tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ipaddress.IPv4Address | ipaddress.IPv6Address | None]

NETWORK_GRACE = 60.0  # seconds an unused target network may exist (between its creation and its container's)
# the bridge of a target network gets no IPv4 address on the host: nothing of the host is reachable from it
INHIBIT_IPV4 = "com.docker.network.bridge.inhibit_ipv4"
TARGET_NETWORKS = {"label": "debugrelay.network=true"}  # a launched target's own network
# a network of apps to attach to (compose's `targets`): the relay's API refuses it too
ATTACH_NETWORKS = {"label": "debugrelay.targets=true"}


class TargetNetworks:
    """The target networks on one Docker engine, as this relay made, joined and saw them."""

    def __init__(self, client: Callable[[], Any], firewall: HostFirewall | None = None) -> None:
        self._client = client  # the engine's client, reached when first needed
        self.firewall = firewall or HostFirewall()
        self._self_id: str | bool | None = False  # False: not looked up yet; None: not in a container
        self._subnets: dict[str, tuple[Subnet, ...]] = {}  # target networks on the engine, by name
        self._refused: tuple[Subnet, ...] = ()  # the same, flat: read on every connection to the relay
        self._lock = threading.Lock()

    def create(self, network: str, labels: dict[str, str]) -> None:
        """Create a target's own network and note its subnets (the engine's refusal is raised as is)."""
        # A relay in a container reaches the target at layer 2, on the network it joins: the bridge
        # needs no address on the host, and without one the target reaches no host service. A relay
        # on the host needs that address to reach the container: the firewall rule (kept in place, it
        # may have been flushed since the start) refuses what the target starts towards the host.
        options = {BRIDGE_NAME: bridge_name(network)}
        if self.own_container() is not None:
            options[INHIBIT_IPV4] = "true"
        else:
            self.firewall.close()
        created = self._client().networks.create(
            network,
            driver="bridge",
            internal=True,
            options=options,
            labels={**labels, "debugrelay.network": "true"},
        )
        self.note({network: subnets_of(created.attrs)})

    def remove_unused(self, in_use: set[str]) -> None:
        """Remove target networks no container uses any more (past a grace for a launch under way),
        then record the subnets of every target network on the engine."""
        with contextlib.suppress(Exception):
            for net in self._client().networks.list(filters=TARGET_NETWORKS):
                created = net.attrs.get("Created", "")
                if net.name not in in_use and age(created) > NETWORK_GRACE:
                    self.drop(net.name)
        with contextlib.suppress(Exception):
            self.list_all()

    def own_container(self) -> str | None:
        """This relay's own container id when it runs in one on the same engine, else None."""
        if self._self_id is False:
            self._self_id = None
            if in_container():
                candidates: list[str] = []
                with contextlib.suppress(OSError):
                    candidates += re.findall(r"/containers/([0-9a-f]{64})/", Path("/proc/self/mountinfo").read_text())
                candidates.append(socket.gethostname())
                for candidate in dict.fromkeys(candidates):
                    with contextlib.suppress(Exception):
                        self._self_id = self._client().containers.get(candidate).id
                        break
        return self._self_id if isinstance(self._self_id, str) else None

    def join(self, network: str) -> None:
        """Join this relay's container to a target's network (a relay on the host needs nothing)."""
        own = self.own_container()
        if own is None:
            return
        try:
            self._client().networks.get(network).connect(own)
        except Exception as exc:
            if "already exists" not in str(exc):
                raise

    def drop(self, network: str) -> None:
        """Remove a target's network once its container is gone (leaving it first if we joined it)."""
        with contextlib.suppress(Exception):
            net = self._client().networks.get(network)
            own = self.own_container()
            if own is not None:
                with contextlib.suppress(Exception):
                    net.disconnect(own, force=True)
            net.remove()
            self.note({network: None})

    def is_target_address(self, address: str) -> bool:
        """Whether ``address`` lies in a target network of this engine (the relay's API refuses it)."""
        try:
            ip = ipaddress.ip_address(address.partition("%")[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in subnet and ip != gateway for subnet, gateway in self._refused)

    def note(self, changed: dict[str, tuple[Subnet, ...] | None]) -> None:
        """Record target networks' subnets (None: the network is gone)."""
        with self._lock:
            subnets = dict(self._subnets)
            for name, nets in changed.items():
                if nets is None:
                    subnets.pop(name, None)
                else:
                    subnets[name] = nets
            self._set(subnets)

    def list_all(self) -> None:
        """Record the subnets of every network of targets on the engine (every relay's launched targets'
        and the networks labelled for apps to attach to).

        Listed under the lock: a network a launch creates meanwhile is in the list or noted after it."""
        with self._lock:
            listed = [
                *self._client().networks.list(filters=TARGET_NETWORKS),
                *self._client().networks.list(filters=ATTACH_NETWORKS),
            ]
            self._set({net.name: subnets_of(net.attrs) for net in listed})

    def _set(self, subnets: dict[str, tuple[Subnet, ...]]) -> None:
        self._subnets = subnets
        self._refused = tuple(dict.fromkeys(n for nets in subnets.values() for n in nets))


def subnets_of(attrs: dict[str, Any]) -> tuple[Subnet, ...]:
    """The subnets of a network and their gateways, from the engine's description of it."""
    found: list[Subnet] = []
    for config in (attrs.get("IPAM") or {}).get("Config") or []:
        with contextlib.suppress(ValueError, TypeError):
            subnet = ipaddress.ip_network(config.get("Subnet", ""), strict=False)
            gateway = ipaddress.ip_address(config["Gateway"]) if config.get("Gateway") else None
            found.append((subnet, gateway))
    return tuple(found)


def age(created: str) -> float:
    """Seconds since an engine timestamp (``2024-01-02T03:04:05.123456789Z``); 0 when unreadable."""
    from datetime import UTC, datetime

    try:
        stamp = datetime.strptime(created[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - stamp).total_seconds()
