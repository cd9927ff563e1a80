"""Launcher and Target ABCs: where a debug target runs and how it is ended."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING, Any, TypeVar

from debugrelay.models import TARGET_RECORDS, AttachSpec, LaunchRequest, TargetRecord

if TYPE_CHECKING:
    from debugrelay.dap import DapClient

RecordT = TypeVar("RecordT", bound=TargetRecord)


class Target(abc.ABC):
    """A started debug target with debugpy listening at ``host:port``."""

    kind: str = "abstract"
    host: str
    port: int
    pid: int | None = None
    container_id: str | None = None
    # set when a keeper holds the target's DAP connection (host:port is then the keeper's)
    keeper_secret: str | None = None
    # its services are reached through the relay (a container alone on an internal network): launch
    # ``ports`` are forwarded from the relay's machine; else they are reached where the target listens
    forwards_ports: bool = False

    @abc.abstractmethod
    def poll(self) -> int | None:
        """The exit code if the target has ended, else None. Never blocks."""

    @abc.abstractmethod
    async def send_input(self, data: bytes) -> None:
        """Write ``data`` to the target's stdin."""

    @abc.abstractmethod
    async def terminate(self) -> int | None:
        """End the target and everything it started; return its exit code when known."""

    def on_attached(self) -> None:  # noqa: B027 - optional hook
        """Called once the relay's DAP connection is up (e.g. to note the adapter's PID)."""

    def take_connection(self) -> DapClient | None:
        """A DAP connection already open and ``initialize``d (a target from a warm pool), once; else None."""
        return None

    def disown(self) -> None:  # noqa: B027 - optional hook
        """Leave the target running when this relay exits: the next relay recovers it."""

    def output_tail(self, max_bytes: int = 4096) -> str:
        """The last raw output the target wrote outside the debugger, for failure reports."""
        return ""

    def end_reason(self) -> str | None:
        """Why the target's platform ended it (a pod evicted, its node lost), when it says; else None."""
        return None

    async def read_file(self, path: str, max_bytes: int) -> bytes | None:
        """A regular file of at most ``max_bytes`` as the target sees it (``path`` is the target's), or
        None: the target cannot read files on its side (the relay reads its own disk instead)."""
        del path, max_bytes
        return None

    def path_mappings(self) -> list[dict[str, str]]:
        """debugpy ``pathMappings`` (localRoot = the user's path, remoteRoot = the target's)."""
        return []

    def to_local_path(self, path: str) -> str:
        """Map a path as the target sees it to the user's path."""
        return path

    def to_remote_path(self, path: str) -> str:
        """Map a user's path to the path the target sees."""
        return path

    def describe(self) -> TargetRecord:
        """What a relay needs to find this target again (kept sealed in the state store): the record of its
        :attr:`kind`; a target with fields of its own overrides this with its own record type."""
        return self.described_as(TARGET_RECORDS[self.kind])

    def described_as(self, record_type: type[RecordT]) -> RecordT:
        """The fields every target has, in a record of ``record_type``; a null stays a null (it is sealed)."""
        return record_type(
            host=self.host,
            port=self.port,
            pid=self.pid,
            container_id=self.container_id,
            keeper=True if self.keeper_secret else None,
        )


class Launcher(abc.ABC):
    """Starts targets of one kind (local process, container, ...)."""

    name: str = "abstract"
    # finds the debugpy a pod already runs (attach by pod, :meth:`attach_target`)
    attaches_pods: bool = False
    # the program's working folder is inside its target (a container, a pod), not on the relay's disk
    files_in_target: bool = False
    # the program's code comes with its image: a script or module need not exist on the relay's disk
    code_in_image: bool = False

    @abc.abstractmethod
    async def start(self, spec: LaunchRequest, *, session_id: str, again: bool = False) -> Target:
        """Start ``spec`` with debugpy listening and waiting for a client; return at once. ``again``: the
        same launch started once more (a port it was given was taken), not a launch of its own."""

    def admit(self, spec: LaunchRequest) -> None:  # noqa: B027 - optional hook
        """Refuse ``spec`` (raise a :class:`~debugrelay.errors.RelayError`) if this relay's policy does
        not allow it; called before anything about the session changes or starts."""

    async def remove_orphans(self, keep: set[str]) -> list[str]:
        """End targets this launcher started for sessions not in ``keep``; return what was removed."""
        return []

    def recover(self, record: TargetRecord) -> Target | None:
        """Find again a target this kind of launcher started, maybe in an earlier relay process.

        ``record`` is what the target's :meth:`Target.describe` returned (kept sealed in the state store;
        its ``kind`` names the launcher, and a record of another kind finds nothing). Return a target to
        re-attach to (debugpy accepts a new client once the old one is gone), or one that has ended
        (``poll()`` is not None; ``output_tail()`` still tells what it printed), or None when nothing is
        left of it. May block (it probes a process or a container): the relay calls it in a worker thread.
        """
        del record
        return None

    async def hold(self, attached: Target, attach: dict[str, Any], *, session_id: str) -> Target | None:
        """A keeper beside this relay that holds ``attached`` (a program someone else started, debugpy
        listening at its host and port) as launched targets are held, so it stays paused with its
        breakpoints while no relay runs; None: this launcher keeps no such process."""
        del attached, attach, session_id
        return None

    async def attach_target(self, spec: AttachSpec) -> Target:
        """The target of an attach by pod (``spec.pod``): a launcher that :attr:`attaches_pods` says
        where that pod's debugpy listens, once it has checked that the pod may be attached to."""
        raise NotImplementedError(f"the {self.name} launcher does not attach to pods")

    def is_target_address(self, address: str) -> bool:
        """Whether a connection from ``address`` comes from where this launcher's targets run (the
        relay's API closes it unread). Must not block: it is asked on every connection."""
        del address
        return False

    def choose_python(self, spec: LaunchRequest) -> tuple[LaunchRequest, str | None]:
        """``spec`` with the interpreter it runs on when it names none (the project's, where this launcher
        finds it), and what to say of that interpreter; None: the launcher's own choice, nothing to say. May
        read folders and run a project's tool: call it off the event loop."""
        return spec, None

    def python_version(self, spec: LaunchRequest) -> str | None:
        """The ``major.minor`` of the Python a launch of ``spec`` runs, when this launcher can tell (it may
        run the interpreter once: call it off the event loop)."""
        del spec
        return None

    def warm_up(self) -> None:  # noqa: B027 - optional hook
        """Start background work (a warm pool) once the relay's event loop runs."""

    def pool_status(self) -> dict[str, Any] | None:
        """The warm pool's state (ready, starting, handed out, cold starts by reason), or None: no pool."""
        return None

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the launcher holds (pools, clients)."""
