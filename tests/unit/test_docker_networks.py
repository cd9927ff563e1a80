"""Target networks: the relay's API refuses connections from a target's network, never from its gateway
(the host on the bridge, where Docker's port proxy connects from), and forgets a network once it is gone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from debugrelay.launchers import docker_networks
from debugrelay.launchers.docker_host import BRIDGE_NAME, HostFirewall, bridge_name
from debugrelay.launchers.docker_networks import INHIBIT_IPV4, TargetNetworks


@dataclass
class FakeNetwork:
    name: str
    attrs: dict[str, Any]
    removed: bool = False

    def remove(self) -> None:
        self.removed = True


@dataclass
class FakeNetworks:
    made: dict[str, FakeNetwork] = field(default_factory=dict)
    options: list[Any] = field(default_factory=list)

    def create(self, name: str, **kwargs: Any) -> FakeNetwork:
        self.options.append(kwargs["options"])
        subnet = f"172.31.{len(self.made)}.0/24"
        gateway = f"172.31.{len(self.made)}.1"
        net = FakeNetwork(name, {"IPAM": {"Config": [{"Subnet": subnet, "Gateway": gateway}]}})
        self.made[name] = net
        return net

    def get(self, name: str) -> FakeNetwork:
        return self.made[name]

    def list(self, filters: dict[str, str]) -> list[FakeNetwork]:
        return [n for n in self.made.values() if not n.removed] if "debugrelay.network" in filters["label"] else []


@dataclass
class FakeEngine:
    networks: FakeNetworks = field(default_factory=FakeNetworks)


class Firewall(HostFirewall):
    """The host's firewall as the networks ask it (the real rule is proven in tests/docker)."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def close(self) -> str | None:
        self.asked += 1
        return None


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    monkeypatch.setattr(docker_networks, "in_container", lambda: False)  # a relay on the host
    return FakeEngine()


def test_a_target_network_is_refused_but_its_gateway_is_not(engine: FakeEngine) -> None:
    firewall = Firewall()
    networks = TargetNetworks(lambda: engine, firewall)
    networks.create("t1-net", {"debugrelay.session": "s1"})
    # a relay on the host reaches the bridge through its address; the firewall rule keeps the target off it
    assert engine.networks.options == [{BRIDGE_NAME: bridge_name("t1-net")}]
    assert firewall.asked == 1
    assert networks.is_target_address("172.31.0.7")
    assert networks.is_target_address("::ffff:172.31.0.7")  # the same address, IPv4-mapped
    assert not networks.is_target_address("172.31.0.1")  # the gateway: the host itself
    assert not networks.is_target_address("10.0.0.7") and not networks.is_target_address("not an address")


def test_a_dropped_network_is_no_longer_refused(engine: FakeEngine) -> None:
    networks = TargetNetworks(lambda: engine, Firewall())
    networks.create("t1-net", {})
    networks.create("t2-net", {})
    networks.drop("t1-net")
    assert engine.networks.made["t1-net"].removed
    assert not networks.is_target_address("172.31.0.7") and networks.is_target_address("172.31.1.7")


def test_a_relay_in_a_container_gives_the_bridge_no_host_address(
    engine: FakeEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    firewall = Firewall()
    networks = TargetNetworks(lambda: engine, firewall)
    monkeypatch.setattr(networks, "own_container", lambda: "c0ffee")
    networks.create("t1-net", {})
    assert engine.networks.options == [{BRIDGE_NAME: bridge_name("t1-net"), INHIBIT_IPV4: "true"}]
    assert firewall.asked == 0  # nothing of the host to close
