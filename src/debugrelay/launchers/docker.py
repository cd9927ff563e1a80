"""Docker launcher: every debug target in a container of its own, debugpy listening inside.

The container's main process is the target's keeper (``_boot/_debugrelay_keeper.py``): it starts
debugpy and the program on the container's loopback and is the only one listening outside (the
published port), holding the DAP connection while no relay is connected; the container's exit code
is the program's. Warm pooled containers run the same way (the pool's program behind a keeper).

The launch's working directory is mounted (read-only by default) at the same path inside the
container, so breakpoints, frames and sources speak the user's paths with no translation; a relay
that itself runs in a container maps its workspace to the host path Docker needs for the mount.
debugrelay's start-up hook (TCP_NODELAY, the read-only probe) and, for images without it, debugpy
are copied into the container before it starts: any image with a Python works, unchanged.

What a launch may ask for is the operator's policy (:mod:`.policy`): folders inside the roots,
allowed images, limits no higher than configured. Every target runs as a non-root uid on a
read-only root filesystem (tmpfs for ``/tmp`` and ``$HOME``), alone on an internal network of its
own: no egress, no other target, only the relay. A relay in a container joins that network, whose
bridge then has no address on the host: the target reaches nothing of the host either. A relay on
the host reaches the container through the bridge's address on the host, which the target could
reach too (and with it the host's services listening on every address): a firewall rule refuses
that where the relay may add it (:mod:`.docker_host`), and the relay says at start when it cannot.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import socket
import tarfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import debugpy
import psutil

from debugrelay.config import Settings
from debugrelay.dap import SECRET_ENV, new_secret
from debugrelay.errors import InvalidRequest, LaunchFailed, RelayError
from debugrelay.models import DockerTargetRecord, LaunchRequest, TargetRecord, given

from .base import Launcher, Target
from .boot import debugpy_args
from .container import (
    BOOT,
    INNER_PORT,
    INSTANCE,
    MANAGED,
    SESSION,
    STORE,
    keeper_in_container,
    orphan_after,
    store_identity,
    target_env,
    target_home,
    target_labels,
)
from .docker_attach import HELD, hold_in_container, recovered
from .docker_host import report
from .docker_networks import TargetNetworks
from .docker_target import DockerTarget
from .policy import LaunchPolicy, real

if TYPE_CHECKING:
    from .docker_pool import ContainerPool

log = logging.getLogger(__name__)

DEBUG_PORT = 5678
TMPFS_TMP = "size=64m,mode=1777"
TMPFS_HOME = "size=16m,mode=0700"
_HOOKS = Path(__file__).resolve().parent.parent / "_boot"


class DockerUnavailable(RelayError):
    code = "docker_unavailable"
    status = 503
    default_hint = "Start the Docker engine (or mount /var/run/docker.sock into the relay's container)."


@lru_cache(maxsize=2)
def _boot_archive(with_debugpy: bool) -> bytes:
    """A tar of the start-up hook and probe (and debugpy itself) to copy into a container."""

    def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if "__pycache__" in info.name:
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mode &= 0o755  # readable by the target, writable by nobody but root
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for hook in sorted(_HOOKS.glob("*.py")):
            tar.add(hook, arcname=hook.name, filter=owned_by_root)
        if with_debugpy:
            tar.add(Path(debugpy.__file__).resolve().parent, arcname="debugpy", filter=owned_by_root)
    return buf.getvalue()


class DockerLauncher(Launcher):
    """Starts one container per target with memory, CPU and PID limits, as a non-root user."""

    name = "docker"
    files_in_target = True

    def __init__(self, settings: Settings, client: Any = None, *, pool_size: int = 0) -> None:
        self.settings = settings
        self.policy = LaunchPolicy.from_settings(settings)
        self._client = client
        self.networks = TargetNetworks(lambda: self.client)
        self.pool: ContainerPool | None = None
        if pool_size > 0:
            from .docker_pool import ContainerPool

            self.pool = ContainerPool(
                self, pool_size, launch_timeout=settings.launch_timeout, request_timeout=settings.request_timeout
            )

    def pool_status(self) -> dict[str, Any] | None:
        return self.pool.stats() if self.pool is not None else None

    def warm_up(self) -> None:
        """A relay on the host closes the host's services to its targets, or says what stays open (off the
        event loop: it asks the engine and the firewall)."""
        threading.Thread(target=self._close_host, name="docker-host", daemon=True).start()

    def _close_host(self) -> None:
        try:
            self.client.ping()  # no engine, no targets
        except Exception:
            return
        if self.networks.own_container() is None:
            report(self.networks.firewall, self.settings.redis_url)

    @property
    def store_id(self) -> str:
        """Which state store the containers belong to: only that store's relays may reap them."""
        return store_identity(self.settings)

    @property
    def client(self) -> Any:
        if self._client is None:
            import docker

            try:
                self._client = docker.from_env()  # type: ignore[attr-defined]
                self._client.ping()
            except Exception as exc:
                self._client = None
                raise DockerUnavailable(f"cannot reach the Docker engine: {exc}") from exc
        return self._client

    def _host_path(self, path: str) -> str:
        """The path Docker must mount for ``path`` as this relay sees it (workspace mapping)."""
        workspace, host = self.settings.workspace, self.settings.workspace_host
        if workspace and host:
            workspace = real(workspace)
            if path == workspace or path.startswith(workspace.rstrip("/") + "/"):
                return host.rstrip("/") + path[len(workspace.rstrip("/")) :]
        return path

    def admit(self, spec: LaunchRequest) -> None:
        self._plan(spec, "", look_inside=True)

    async def start(self, spec: LaunchRequest, *, session_id: str, again: bool = False) -> Target:
        kwargs, mounts, with_debugpy = self._plan(spec, session_id)  # admit() looked inside the folders
        if self.pool is not None:
            warm = await self.pool.acquire(
                spec,
                session_id=session_id,
                kwargs=kwargs,
                base_env=target_env({}, []),
                mounts=mounts,
                with_debugpy=with_debugpy,
                again=again,
            )
            if warm is not None:
                return warm
        secret = new_secret()
        target = await asyncio.to_thread(self._run, with_keeper(kwargs, secret, self.settings), mounts, with_debugpy)
        target.keeper_secret = secret
        if self.pool is not None:
            self.pool.keep_warm_for(
                spec, kwargs=kwargs, base_env=target_env({}, []), mounts=mounts, with_debugpy=with_debugpy
            )
        return target

    def _plan(
        self, spec: LaunchRequest, session_id: str, *, look_inside: bool = False
    ) -> tuple[dict[str, Any], list[tuple[str, str]], bool]:
        """The container's create arguments, its mounts, and whether debugpy must be copied in.

        Every check of the operator's policy happens here, before anything is started; with
        ``look_inside`` the mounted folders are also searched for sockets and FIFOs (a walk of up
        to :data:`~.policy.SCAN_ENTRIES` entries: call it off the event loop).
        """
        policy = self.policy
        image = policy.image(spec.image or self.settings.docker_image)
        own_image = spec.image is not None and spec.image != self.settings.docker_image
        policy.user(spec.root)
        limits = policy.limits(spec.limits)
        script = None
        if spec.script:
            script = spec.script if os.path.isabs(spec.script) else os.path.join(spec.cwd or os.getcwd(), spec.script)
            script = policy.inside(script, what="script")
        cwd = spec.cwd or (str(Path(spec.script).parent) if spec.script else None)
        cwd = os.path.normpath(cwd) if cwd else None
        volumes, mounts, readable, folders = self._volumes(spec, cwd)
        if script is not None and os.path.isfile(script):
            readable.append((script, False))
        user = policy.user_for(spec.root, readable)
        if look_inside:
            policy.no_pipes_inside(folders, user)
        if spec.root:
            log.warning("session %s: target runs as root (DEBUGRELAY_ALLOW_ROOT_TARGETS)", session_id or "-")
        uid, _, gid = user.partition(":")
        python = spec.python or ("python3" if own_image else "python")
        env = target_env(spec.env, spec.pythonpath)
        command = [python, "-Xfrozen_modules=off", *debugpy_args(spec, f"0.0.0.0:{DEBUG_PORT}")]
        home = target_home(env)
        kwargs: dict[str, Any] = {
            "image": image,
            "command": command,
            "working_dir": cwd or "/",
            "environment": env,
            "volumes": volumes,
            # the start-up hook is copied into this volume before start: the root filesystem is read-only
            "mounts": [{"Target": BOOT, "Type": "volume", "ReadOnly": False}],
            "tmpfs": {"/tmp": TMPFS_TMP, home: f"{TMPFS_HOME},uid={uid},gid={gid}"},
            "read_only": True,
            "labels": {**target_labels(session_id, self.store_id), INSTANCE: self.settings.instance_id},
            "mem_limit": limits.memory,
            "nano_cpus": limits.nano_cpus,
            "pids_limit": limits.pids,
            "user": user,
            "security_opt": ["no-new-privileges"],
            "cap_drop": ["ALL"],
            "privileged": False,
            "stdin_open": True,
            "detach": True,
            "name": f"debugrelay-{session_id}-{os.urandom(2).hex()}",
        }
        return kwargs, mounts, own_image

    def _volumes(
        self, spec: LaunchRequest, cwd: str | None
    ) -> tuple[dict[str, dict[str, str]], list[tuple[str, str]], list[tuple[str, bool]], list[tuple[str, str, str]]]:
        """The bind mounts of a launch (Docker's ``volumes``), its (user's, target's) path pairs, what
        the target must read (path, is a folder) and the folders to search for sockets (field, path
        asked, resolved), each source checked against the operator's policy."""
        policy = self.policy
        readable: list[tuple[str, bool]] = []
        folders: list[tuple[str, str, str]] = []
        mounts: list[tuple[str, str]] = []
        volumes: dict[str, dict[str, str]] = {}
        mode = "rw" if spec.writable else "ro"
        if cwd:
            source = policy.mount_source(cwd, what="cwd", writable=spec.writable)
            if not os.path.isdir(source):
                raise InvalidRequest(f"working directory '{cwd}' does not exist", details={"cwd": cwd})
            volumes[self._host_path(source)] = {"bind": cwd, "mode": mode}
            mounts.append((cwd, cwd))
            readable.append((source, True))
            folders.append(("cwd", cwd, source))
        for local, remote in spec.mounts.items():
            if not os.path.isabs(local) or not os.path.isabs(remote):
                raise InvalidRequest(
                    "mounts map absolute host paths to absolute container paths", details={"mounts": spec.mounts}
                )
            source = policy.mount_source(local, what="mounts", writable=spec.writable)
            volumes[self._host_path(source)] = {"bind": os.path.normpath(remote), "mode": mode}
            mounts.append((os.path.normpath(local), os.path.normpath(remote)))
            readable.append((source, os.path.isdir(source)))
            if os.path.isdir(source):
                folders.append(("mounts", local, source))
        for entry in spec.pythonpath:
            folder = os.path.normpath(entry)
            source = policy.mount_source(folder, what="pythonpath", writable=False)
            if not any(folder == remote or folder.startswith(remote.rstrip("/") + "/") for _, remote in mounts):
                volumes.setdefault(self._host_path(source), {"bind": folder, "mode": "ro"})
                mounts.append((folder, folder))
                readable.append((source, True))
                folders.append(("pythonpath", entry, source))
        return volumes, mounts, readable, folders

    def _run(
        self,
        kwargs: dict[str, Any],
        mounts: list[tuple[str, str]],
        with_debugpy: bool,
        kind: type[DockerTarget] = DockerTarget,
    ) -> DockerTarget:
        """Create and start the container ``kwargs`` describe, on a network of its own (blocking:
        call it in a thread)."""
        client = self.client
        image = kwargs["image"]
        network = f"{kwargs['name']}-net"
        try:
            self.networks.create(network, kwargs["labels"])  # refused by the API before the target runs
        except Exception as exc:
            raise _launch_error(exc, image) from exc
        kwargs = {**kwargs, "network": network, "labels": {**kwargs["labels"], "debugrelay.network": network}}
        try:
            container = client.containers.create(**kwargs)
        except Exception as exc:
            self.networks.drop(network)
            raise _launch_error(exc, image) from exc
        try:
            container.put_archive(BOOT, _boot_archive(with_debugpy))
            self.networks.join(network)
            container.start()
            container.reload()
        except Exception as exc:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)
            self.networks.drop(network)
            raise _launch_error(exc, image) from exc
        host, port = self._address(container)
        target = kind(container, host, port, mounts)
        target.release = lambda: self.networks.drop(network)
        return target

    def is_target_address(self, address: str) -> bool:
        return self.networks.is_target_address(address)

    async def hold(self, attached: Target, attach: dict[str, Any], *, session_id: str) -> Target | None:
        """A relay in a container holds an attach with a keeper container beside it (:mod:`.docker_attach`)."""
        return await asyncio.to_thread(hold_in_container, self, attached, attach, session_id)

    def _address(self, container: Any) -> tuple[str, int]:
        """Where the relay reaches the container's debugpy: its address on its own network."""
        networks: dict[str, Any] = container.attrs["NetworkSettings"]["Networks"]
        own = container.labels.get("debugrelay.network")
        if own and networks.get(own, {}).get("IPAddress"):
            return networks[own]["IPAddress"], DEBUG_PORT
        ports = container.attrs["NetworkSettings"].get("Ports") or {}
        binding = (ports.get(f"{DEBUG_PORT}/tcp") or [None])[0]
        if binding:  # a container started before targets had networks of their own
            return "127.0.0.1", int(binding["HostPort"])
        ip = next((n.get("IPAddress") for n in networks.values() if n.get("IPAddress")), None)
        return ip or container.name, DEBUG_PORT

    def recover(self, record: TargetRecord) -> Target | None:
        """The target of a saved session: a running container, or an ended one whose exit code and
        logs tell how the run finished (it is removed once the session records that)."""
        if not isinstance(record, DockerTargetRecord):
            return None
        container_id = given(record.container_id)
        if not container_id:
            return None
        try:
            container = self.client.containers.get(container_id)
        except Exception:
            return None
        labels = container.labels
        if labels.get(MANAGED) != "true" or labels.get(STORE) != self.store_id:
            # a stored record is a claim: only a container this store's relays started is acted on
            log.warning("ignoring the stored container %s: not one of this store's targets", container_id)
            return None
        network = labels.get("debugrelay.network")
        if container.status == "running":
            if network:
                self.networks.join(network)
            host, port = self._address(container)
        else:
            host, port = given(record.host) or "", given(record.port) or 0
        binds = [m for m in container.attrs.get("Mounts", []) if m.get("Type") == "bind"]
        mounts = [(m["Destination"], m["Destination"]) for m in binds]
        target = DockerTarget(container, host, port, mounts)
        if labels.get(HELD):  # a keeper holding an attached program
            target = recovered(container, host, port, record)
        if network:
            target.release = lambda: self.networks.drop(network)
        if container.status != "running":
            target._exit = int(container.attrs["State"].get("ExitCode", -1))
        return target

    async def remove_orphans(self, keep: set[str]) -> list[str]:
        return await asyncio.to_thread(self._remove_orphans, keep)

    def _remove_orphans(self, keep: set[str]) -> list[str]:
        """Remove containers debugrelay started whose sessions are gone, and target networks no
        container uses any more; return the containers' ids."""
        removed: list[str] = []
        try:
            containers = self.client.containers.list(all=True, filters={"label": MANAGED})
        except RelayError:
            return []
        in_use: set[str] = set()
        for container in containers:
            labels = container.labels
            mine = labels.get(STORE) == self.store_id
            session = labels.get(SESSION)
            if labels.get("debugrelay.pool"):  # labels are fixed at creation: a warm one is renamed when handed out
                session = _pooled_session(container.name)
            if (mine and session not in keep) or _owner_died(labels):
                with contextlib.suppress(Exception):
                    container.remove(force=True, v=True)
                    removed.append(container.id)
                    continue
            in_use.add(labels.get("debugrelay.network", ""))
        if removed:
            log.info("removed %d container(s) of sessions that are gone", len(removed))
        self.networks.remove_unused(in_use)
        return removed

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()


def with_keeper(kwargs: dict[str, Any], secret: str, settings: Settings) -> dict[str, Any]:
    """The container's create arguments with its keeper as the main process, debugpy behind it (ending
    the program, and so the container, once no relay has been connected for the session's timeout)."""
    command: list[str] = kwargs["command"]
    python = command[: command.index("-m")]  # the interpreter and its options
    debuggee = [*python, *debugpy_args_behind(command)]
    return {
        **kwargs,
        "command": keeper_in_container(
            python, listen=f"0.0.0.0:{DEBUG_PORT}", debuggee=debuggee, orphan_after=orphan_after(settings)
        ),
        "environment": {**kwargs["environment"], SECRET_ENV: secret},
    }


def debugpy_args_behind(command: list[str]) -> list[str]:
    """``command``'s debugpy arguments listening on the container's loopback instead of every interface."""
    args = command[command.index("-m") :]
    listen = args.index("--listen")
    return [*args[: listen + 1], f"127.0.0.1:{INNER_PORT}", *args[listen + 2 :]]


def _launch_error(exc: Exception, image: str) -> RelayError:
    from docker.errors import ImageNotFound

    text = str(exc)
    if isinstance(exc, ImageNotFound):
        return LaunchFailed(
            f"image '{image}' is not available on the Docker engine",
            details={"image": image},
            hint="Build the project's images with `make images` (docker/build-images.sh), "
            "or pass an image that exists on the engine.",
        )
    return LaunchFailed(f"could not start the container: {text}", details={"image": image})


def _pooled_session(name: str) -> str | None:
    """The session a pooled container was handed to (its name is ``debugrelay-<session>-<hex>``), if any."""
    parts = name.lstrip("/").split("-")
    return parts[1] if len(parts) == 3 and parts[1].startswith("sess_") else None


def _owner_died(labels: dict[str, str]) -> bool:
    """An in-memory relay on this host that no longer runs: its sessions died with it."""
    store, instance = labels.get(STORE, ""), labels.get(INSTANCE, "")
    host, _, pid = instance.rpartition("-")
    if not store.startswith("memory:") or host != socket.gethostname() or not pid.isdigit():
        return False
    return not psutil.pid_exists(int(pid))
