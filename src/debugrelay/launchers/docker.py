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
own: no egress, no other target, only the relay (joined to it when it runs in a container itself;
from the host it reaches the container's address on the bridge).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import logging
import os
import re
import socket
import tarfile
import threading
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import debugpy
import psutil

from debugrelay.config import Settings, in_container
from debugrelay.dap import KEEPER_FILE, SECRET_ENV, keeper_command, new_secret
from debugrelay.errors import InvalidRequest, LaunchFailed, RelayError
from debugrelay.models import LaunchRequest

from .base import Launcher, Target
from .boot import debugpy_args
from .policy import LaunchPolicy, real

if TYPE_CHECKING:
    from .pool import ContainerPool

log = logging.getLogger(__name__)

DEBUG_PORT = 5678
INNER_PORT = 5679  # debugpy, on the container's loopback, behind the keeper
BOOT = "/opt/debugrelay"
LABEL = "debugrelay.managed"
HOME = "/home/debuggee"  # the target image's user's home; a tmpfs in every target
TMPFS_TMP = "size=64m,mode=1777"
TMPFS_HOME = "size=16m,mode=0700"
NETWORK_GRACE = 60.0  # seconds an unused target network may exist (between its creation and its container's)
_HOOKS = Path(__file__).resolve().parent.parent / "_boot"


class DockerUnavailable(RelayError):
    code = "docker_unavailable"
    status = 503
    default_hint = "Start the Docker engine (or mount /var/run/docker.sock into the relay's container)."


def store_identity(settings: Settings) -> str:
    """Which state store a relay's targets belong to (their labels): only that store's relays reap them.

    A hash: labels are readable by anyone who can list containers or pods, a Redis URL may carry a password."""
    if settings.redis_url:
        namespace = getattr(settings, "redis_namespace", "debugrelay")
        digest = hashlib.sha256(f"{settings.redis_url}\0{namespace}".encode()).hexdigest()[:24]
        return f"redis:{digest}"
    return f"memory:{settings.instance_id}"


def target_env(env: dict[str, str], pythonpath: list[str]) -> dict[str, str]:
    """A container target's environment (the image's own is added by Docker)."""
    return {
        **env,
        "PYTHONPATH": os.pathsep.join([BOOT, *pythonpath, *([env["PYTHONPATH"]] if "PYTHONPATH" in env else [])]),
        "PYTHONUNBUFFERED": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **({} if "HOME" in env else {"HOME": HOME}),
    }


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


def read_from_container(container: Any, path: str, max_bytes: int) -> bytes | None:
    """``path`` from ``container`` if it is a regular file of at most ``max_bytes``, else None."""
    try:
        stream, stat_ = container.get_archive(path)
        if not stat_ or stat_.get("size", 0) > max_bytes:
            return None
        data = bytearray()
        for chunk in stream:
            data += chunk
            if len(data) > max_bytes + 64 * 1024:  # the tar headers and padding around one file
                return None
    except Exception:  # gone, no such path, or the engine refused
        return None
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as archive:
        member = archive.next()
        if member is None or not member.isreg() or member.size > max_bytes:
            return None
        fh = archive.extractfile(member)
        return fh.read() if fh is not None else None


class DockerTarget(Target):
    """A container running ``python -m debugpy --listen 0.0.0.0:5678 --wait-for-client ...``."""

    kind = "docker"

    def __init__(
        self, container: Any, host: str, port: int, mounts: list[tuple[str, str]], *, keeper_secret: str | None = None
    ) -> None:
        self.keeper_secret = keeper_secret
        self.container = container
        self.container_id = container.id
        self.host = host
        self.port = port
        self.mounts = mounts
        self.release: Callable[[], None] | None = None  # removes the target's own network, once
        self._exit: int | None = None
        self._stdin: Any = None
        self._lock = threading.Lock()
        threading.Thread(target=self._watch, name=f"wait-{container.short_id}", daemon=True).start()

    def _watch(self) -> None:
        try:
            result = self.container.wait()
            self._exit = int(result.get("StatusCode", -1))
        except Exception:  # the container was removed under us
            self._exit = -1

    def poll(self) -> int | None:
        return self._exit

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        """The file from the container's own filesystem (Docker's archive API: no process is started in
        the container, and a stopped one still answers). A symlink, a device or a FIFO is not a regular
        file in the archive, so nothing outside the file itself is followed or opened."""
        return await asyncio.to_thread(read_from_container, self.container, path, max_bytes)

    async def send_input(self, data: bytes) -> None:
        def write() -> None:
            with self._lock:
                if self._stdin is None:
                    self._stdin = self.container.attach_socket(params={"stdin": 1, "stream": 1})
                sock = getattr(self._stdin, "_sock", self._stdin)
                sock.sendall(data)

        try:
            await asyncio.to_thread(write)
        except OSError as exc:
            raise LaunchFailed(f"the container's stdin is closed: {exc}") from exc

    async def terminate(self) -> int | None:
        def remove() -> None:
            with contextlib.suppress(Exception):
                if self._stdin is not None:
                    self._stdin.close()
            with contextlib.suppress(Exception):
                self.container.reload()
                if self._exit is None and self.container.status == "exited":
                    self._exit = int(self.container.attrs["State"]["ExitCode"])
            with contextlib.suppress(Exception):
                self.container.remove(force=True, v=True)
            release, self.release = self.release, None
            if release is not None:
                release()

        await asyncio.to_thread(remove)
        return self._exit

    def output_tail(self, max_bytes: int = 4096) -> str:
        try:
            logs: bytes = self.container.logs(tail=50)
        except Exception:
            return ""
        return logs.decode("utf-8", "replace")[-max_bytes:]

    def path_mappings(self) -> list[dict[str, str]]:
        return [{"localRoot": local, "remoteRoot": remote} for local, remote in self.mounts if local != remote]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "image": self.container.attrs.get("Config", {}).get("Image")}


class DockerLauncher(Launcher):
    """Starts one container per target with memory, CPU and PID limits, as a non-root user."""

    name = "docker"

    def __init__(self, settings: Settings, client: Any = None, *, pool_size: int = 0) -> None:
        self.settings = settings
        self.policy = LaunchPolicy.from_settings(settings)
        self._client = client
        self._self_id: str | bool | None = False  # False: not looked up yet; None: not in a container
        self.pool: ContainerPool | None = None
        if pool_size > 0:
            from .pool import ContainerPool

            self.pool = ContainerPool(
                self, pool_size, launch_timeout=settings.launch_timeout, request_timeout=settings.request_timeout
            )

    def pool_status(self) -> dict[str, Any] | None:
        return self.pool.stats() if self.pool is not None else None

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
        self._plan(spec, "")

    async def start(self, spec: LaunchRequest, *, session_id: str) -> Target:
        kwargs, mounts, with_debugpy = self._plan(spec, session_id)
        if self.pool is not None:
            warm = await self.pool.acquire(
                spec,
                session_id=session_id,
                kwargs=kwargs,
                base_env=target_env({}, []),
                mounts=mounts,
                with_debugpy=with_debugpy,
            )
            if warm is not None:
                return warm
        secret = new_secret()
        target = await asyncio.to_thread(self._run, with_keeper(kwargs, secret), mounts, with_debugpy)
        target.keeper_secret = secret
        if self.pool is not None:
            self.pool.keep_warm_for(
                spec, kwargs=kwargs, base_env=target_env({}, []), mounts=mounts, with_debugpy=with_debugpy
            )
        return target

    def _plan(self, spec: LaunchRequest, session_id: str) -> tuple[dict[str, Any], list[tuple[str, str]], bool]:
        """The container's create arguments, its mounts, and whether debugpy must be copied in.

        Every check of the operator's policy happens here, before anything is started.
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
        readable: list[tuple[str, bool]] = []  # what the target must read: the mounted folders, the script
        cwd = spec.cwd or (str(Path(spec.script).parent) if spec.script else None)
        mounts: list[tuple[str, str]] = []
        volumes: dict[str, dict[str, str]] = {}
        mode = "rw" if spec.writable else "ro"
        if cwd:
            cwd = os.path.normpath(cwd)
            source = policy.mount_source(cwd, what="cwd", writable=spec.writable)
            if not Path(source).is_dir():
                raise InvalidRequest(f"working directory '{cwd}' does not exist", details={"cwd": cwd})
            volumes[self._host_path(source)] = {"bind": cwd, "mode": mode}
            mounts.append((cwd, cwd))
            readable.append((source, True))
        for local, remote in spec.mounts.items():
            if not os.path.isabs(local) or not os.path.isabs(remote):
                raise InvalidRequest(
                    "mounts map absolute host paths to absolute container paths", details={"mounts": spec.mounts}
                )
            source = policy.mount_source(local, what="mounts", writable=spec.writable)
            volumes[self._host_path(source)] = {"bind": os.path.normpath(remote), "mode": mode}
            mounts.append((os.path.normpath(local), os.path.normpath(remote)))
            readable.append((source, Path(source).is_dir()))
        for entry in spec.pythonpath:
            folder = os.path.normpath(entry)
            source = policy.mount_source(folder, what="pythonpath", writable=False)
            if not any(folder == remote or folder.startswith(remote.rstrip("/") + "/") for _, remote in mounts):
                volumes.setdefault(self._host_path(source), {"bind": folder, "mode": "ro"})
                mounts.append((folder, folder))
                readable.append((source, True))
        if script is not None and Path(script).is_file():
            readable.append((script, False))
        user = policy.user_for(spec.root, readable)
        if spec.root:
            log.warning("session %s: target runs as root (DEBUGRELAY_ALLOW_ROOT_TARGETS)", session_id or "-")
        uid, _, gid = user.partition(":")
        python = spec.python or ("python3" if own_image else "python")
        env = target_env(spec.env, spec.pythonpath)
        command = [python, "-Xfrozen_modules=off", *debugpy_args(spec, f"0.0.0.0:{DEBUG_PORT}")]
        home = env["HOME"] if env.get("HOME", "").startswith("/") and env["HOME"] != "/" else HOME
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
            "labels": {
                LABEL: "true",
                "debugrelay.session": session_id,
                "debugrelay.instance": self.settings.instance_id,
                "debugrelay.store": self.store_id,
            },
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
            client.networks.create(
                network, driver="bridge", internal=True, labels={**kwargs["labels"], "debugrelay.network": "true"}
            )
        except Exception as exc:
            raise _launch_error(exc, image) from exc
        kwargs = {**kwargs, "network": network, "labels": {**kwargs["labels"], "debugrelay.network": network}}
        try:
            container = client.containers.create(**kwargs)
        except Exception as exc:
            self._drop_network(network)
            raise _launch_error(exc, image) from exc
        try:
            container.put_archive(BOOT, _boot_archive(with_debugpy))
            self._join(network)
            container.start()
            container.reload()
        except Exception as exc:
            with contextlib.suppress(Exception):
                container.remove(force=True, v=True)
            self._drop_network(network)
            raise _launch_error(exc, image) from exc
        host, port = self._address(container)
        target = kind(container, host, port, mounts)
        target.release = lambda: self._drop_network(network)
        return target

    def _own_container(self) -> str | None:
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
                        self._self_id = self.client.containers.get(candidate).id
                        break
        return self._self_id if isinstance(self._self_id, str) else None

    def _join(self, network: str) -> None:
        """Join this relay's container to a target's network (a relay on the host needs nothing)."""
        own = self._own_container()
        if own is None:
            return
        try:
            self.client.networks.get(network).connect(own)
        except Exception as exc:
            if "already exists" not in str(exc):
                raise

    def _drop_network(self, network: str) -> None:
        """Remove a target's network once its container is gone (leaving it first if we joined it)."""
        with contextlib.suppress(Exception):
            net = self.client.networks.get(network)
            own = self._own_container()
            if own is not None:
                with contextlib.suppress(Exception):
                    net.disconnect(own, force=True)
            net.remove()

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

    def recover(self, described: dict[str, Any]) -> Target | None:
        """The target of a saved session: a running container, or an ended one whose exit code and
        logs tell how the run finished (it is removed once the session records that)."""
        container_id = described.get("container_id")
        if not container_id:
            return None
        try:
            container = self.client.containers.get(container_id)
        except Exception:
            return None
        labels = container.labels
        if labels.get(LABEL) != "true" or labels.get("debugrelay.store") != self.store_id:
            # a stored record is a claim: only a container this store's relays started is acted on
            log.warning("ignoring the stored container %s: not one of this store's targets", container_id)
            return None
        network = labels.get("debugrelay.network")
        if container.status == "running":
            if network:
                self._join(network)
            host, port = self._address(container)
        else:
            host, port = str(described.get("host") or ""), int(described.get("port") or 0)
        binds = [m for m in container.attrs.get("Mounts", []) if m.get("Type") == "bind"]
        mounts = [(m["Destination"], m["Destination"]) for m in binds]
        target = DockerTarget(container, host, port, mounts)
        if network:
            target.release = lambda: self._drop_network(network)
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
            containers = self.client.containers.list(all=True, filters={"label": LABEL})
        except RelayError:
            return []
        in_use: set[str] = set()
        for container in containers:
            labels = container.labels
            mine = labels.get("debugrelay.store") == self.store_id
            session = labels.get("debugrelay.session")
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
        with contextlib.suppress(Exception):
            for net in self.client.networks.list(filters={"label": "debugrelay.network=true"}):
                created = net.attrs.get("Created", "")
                if net.name not in in_use and _age(created) > NETWORK_GRACE:
                    self._drop_network(net.name)
        return removed

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()


def with_keeper(kwargs: dict[str, Any], secret: str) -> dict[str, Any]:
    """The container's create arguments with its keeper as the main process, debugpy behind it."""
    command: list[str] = kwargs["command"]
    python = command[: command.index("-m")]  # the interpreter and its options
    debuggee = [*python, *debugpy_args_behind(command)]
    return {
        **kwargs,
        "command": keeper_command(
            python,
            listen=f"0.0.0.0:{DEBUG_PORT}",
            connect=f"127.0.0.1:{INNER_PORT}",
            status_file=None,
            keeper=f"{BOOT}/{KEEPER_FILE}",
            debuggee=debuggee,
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
    store, instance = labels.get("debugrelay.store", ""), labels.get("debugrelay.instance", "")
    host, _, pid = instance.rpartition("-")
    if not store.startswith("memory:") or host != socket.gethostname() or not pid.isdigit():
        return False
    return not psutil.pid_exists(int(pid))


def _age(created: str) -> float:
    """Seconds since an engine timestamp (``2024-01-02T03:04:05.123456789Z``); 0 when unreadable."""
    from datetime import UTC, datetime

    try:
        stamp = datetime.strptime(created[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    except ValueError:
        return 0.0
    return (datetime.now(UTC) - stamp).total_seconds()
