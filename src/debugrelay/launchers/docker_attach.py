"""An attach session held by a keeper in a container of its own, beside a relay that runs in a container
(compose): the attached program stays paused, with its breakpoints, while no relay runs, as a launched
target does. The keeper runs the target image confined like a target, on the one network the relay
reaches the program through, and holds the debugpy connection; killing it lets the program go on."""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
from typing import TYPE_CHECKING, Any

from debugrelay.dap import KEEPER_FILE, SECRET_ENV, keeper_command, new_secret
from debugrelay.errors import LaunchFailed
from debugrelay.models import DockerTargetRecord, given

from .base import Target
from .container import BOOT, INSTANCE, target_labels
from .docker_networks import subnets_of
from .docker_target import DockerTarget
from .remote import RemoteTarget

if TYPE_CHECKING:
    from .docker import DockerLauncher

log = logging.getLogger(__name__)
KEEPER_LIMITS = {"mem_limit": "64m", "nano_cpus": 250_000_000, "pids_limit": 32}
HELD = "debugrelay.holds"  # label: the address the keeper holds (host:port)


class HeldAttach(DockerTarget):
    """A program someone else started, held by a keeper container of this relay's: ended by detaching (the
    keeper goes), never killed; its path mappings are the attach's."""

    forwards_ports = False

    def __init__(self, container: Any, host: str, port: int, *, attached: Target, keeper_secret: str | None) -> None:
        super().__init__(container, host, port, [], keeper_secret=keeper_secret)
        self.attached = attached

    def path_mappings(self) -> list[dict[str, str]]:
        return self.attached.path_mappings()

    def describe(self) -> DockerTargetRecord:
        record = super().describe()
        record.attached_host, record.attached_port = self.attached.host, self.attached.port
        record.path_mappings = [[m["localRoot"], m["remoteRoot"]] for m in self.attached.path_mappings()]
        return record

    async def send_input(self, data: bytes) -> None:
        del data
        raise LaunchFailed("an attached program's stdin is its own: the relay cannot write to it")


def network_reaching(launcher: DockerLauncher, address: str) -> str | None:
    """The network of the relay's own container on which ``address`` lies (the one the relay reaches the
    attached program through); None when the relay is not in a container or reaches it otherwise."""
    own = launcher.networks.own_container()
    if own is None:
        return None
    try:
        ip = ipaddress.ip_address(address)
        networks = launcher.client.containers.get(own).attrs["NetworkSettings"]["Networks"]
    except Exception:
        return None
    for name in networks:
        with contextlib.suppress(Exception):
            attrs = launcher.client.networks.get(name).attrs
            if attrs.get("Labels", {}).get("debugrelay.network") == "true":
                continue  # a launched target's own network: never a way to another program
            if any(ip in subnet for subnet, _ in subnets_of(attrs)):
                return str(name)
    return None


def hold_in_container(
    launcher: DockerLauncher, attached: Target, attach: dict[str, Any], session_id: str
) -> HeldAttach | None:
    """Start a keeper container holding ``attached`` (blocking: call it in a thread); None when the relay
    runs on the host (its own keeper process holds attaches there, where one is offered)."""
    network = network_reaching(launcher, attached.host)
    if network is None:
        return None
    from .docker import DEBUG_PORT, _boot_archive

    settings = launcher.settings
    secret = new_secret()
    command = keeper_command(
        ["python"],
        listen=f"0.0.0.0:{DEBUG_PORT}",
        connect=f"{attached.host}:{attached.port}",  # the checked address, never the name again
        status_file=None,
        keeper=f"{BOOT}/{KEEPER_FILE}",
        debuggee=[],
        attach=attach,
    )
    kwargs: dict[str, Any] = {
        "image": settings.docker_image,
        "command": command,
        "environment": {SECRET_ENV: secret, "PYTHONUNBUFFERED": "1"},
        "mounts": [{"Target": BOOT, "Type": "volume", "ReadOnly": False}],
        "tmpfs": {"/tmp": "size=8m,mode=1777"},
        "read_only": True,
        "labels": {
            **target_labels(session_id, launcher.store_id),
            INSTANCE: settings.instance_id,
            HELD: f"{attached.host}:{attached.port}",
        },
        **KEEPER_LIMITS,
        "user": "10001:10001",
        "security_opt": ["no-new-privileges"],
        "cap_drop": ["ALL"],
        "network": network,
        "detach": True,
        "name": f"debugrelay-{session_id}-{os.urandom(2).hex()}",
    }
    try:
        container = launcher.client.containers.create(**kwargs)
    except Exception as exc:
        raise LaunchFailed(f"could not start the attach keeper's container: {exc}") from exc
    try:
        container.put_archive(BOOT, _boot_archive(False))
        container.start()
        container.reload()
        address = container.attrs["NetworkSettings"]["Networks"][network]["IPAddress"]
    except Exception as exc:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)
        raise LaunchFailed(f"could not start the attach keeper's container: {exc}") from exc
    log.info(
        "session %s: %s:%s held by keeper container %s", session_id, attached.host, attached.port, container.short_id
    )
    return HeldAttach(container, address, DEBUG_PORT, attached=attached, keeper_secret=secret)


def recovered(container: Any, host: str, port: int, record: DockerTargetRecord) -> HeldAttach:
    """The keeper container of a stored attach session, found again by a relay that takes it over."""
    mappings = [(p[0], p[1]) for p in given(record.path_mappings) or [] if len(p) == 2]
    attached = RemoteTarget(given(record.attached_host) or "", given(record.attached_port) or 0, mappings=mappings)
    return HeldAttach(container, host, port, attached=attached, keeper_secret=None)
