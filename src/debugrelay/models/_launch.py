"""What to run and how: the launch request, also the launch spec stored with a session."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from ._base import Input, Model
from .limits import (
    MAX_ARGS,
    MAX_PATHS,
    Arg,
    EnvName,
    ImageRef,
    MemorySize,
    ModuleName,
    Port,
    SourcePath,
    TestId,
)

StopOnException = bool | Literal["uncaught", "raised", "userUnhandled", "none"]


class PathMapping(Input):
    local_root: SourcePath
    remote_root: SourcePath


class ResourceLimits(Input):
    memory: MemorySize | None = None
    cpus: Annotated[float, msgspec.Meta(gt=0, le=1024)] | None = None
    pids: Annotated[int, msgspec.Meta(ge=1, le=1 << 22)] | None = None


Args = Annotated[list[Arg], msgspec.Meta(max_length=MAX_ARGS)]
Env = Annotated[dict[EnvName, Arg], msgspec.Meta(max_length=MAX_ARGS)]
Paths = Annotated[list[SourcePath], msgspec.Meta(max_length=MAX_PATHS)]
Mounts = Annotated[dict[SourcePath, SourcePath], msgspec.Meta(max_length=MAX_PATHS)]
Mappings = Annotated[list[PathMapping], msgspec.Meta(max_length=MAX_PATHS)]
MAX_PORTS = 16  # ports a launch may publish
Ports = Annotated[list[Port], msgspec.Meta(max_length=MAX_PORTS)]


class ReadyWhen(Input):
    """A launch answers once the program listens on ``port`` (or it stopped, or ended, or ``timeout``
    passed: the answer's ``ready`` says which)."""

    port: Port
    timeout: Annotated[float, msgspec.Meta(gt=0, le=300)] = 30.0


class LaunchRequest(Input):
    """``POST /sessions/{id}/launch``: a script or a module, with its arguments and environment."""

    script: SourcePath | None = None
    module: ModuleName | None = None
    args: Args = msgspec.field(default_factory=list)
    env: Env = msgspec.field(default_factory=dict)
    cwd: SourcePath | None = None
    python: SourcePath | None = None
    pythonpath: Paths = msgspec.field(default_factory=list)
    stop_on_entry: bool = False
    stop_on_exception: StopOnException | None = None  # omitted: "uncaught" for a test run, else none
    test: TestId | None = None  # one test: a pytest node id (module pytest by default) or a unittest name
    stdin_inputs: Args = msgspec.field(default_factory=list)
    debug_subprocesses: bool = False
    just_my_code: bool = False
    launcher: Literal["local", "docker", "kubernetes"] | None = None
    image: ImageRef | None = None
    limits: ResourceLimits | None = None
    mounts: Mounts = msgspec.field(default_factory=dict)
    path_mappings: Mappings = msgspec.field(default_factory=list)  # kubernetes: checkout -> image path
    writable: bool = False
    root: bool = False  # run the container as root: only where the operator allows it
    pool: bool = True
    ready: ReadyWhen | None = None  # a service: answer once it listens (and send requests to this port)
    ports: Ports = msgspec.field(default_factory=list)  # a service's ports, reachable at URLs on the relay's machine


class PublishedPort(Model, kw_only=True):
    """A port of the target's service and the URL it is reached at from the relay's machine (a container's,
    through the relay), or why it is not."""

    port: int
    url: str | None = None
    error: str | None = None


class LaunchView(Model, kw_only=True):
    """A session's launch as shown to clients: what was set (defaults, false and empty left out), the
    environment's values masked (they often hold secrets). Fields as in :class:`LaunchRequest`."""

    script: str | None = None
    module: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    cwd: str | None = None
    python: str | None = None
    pythonpath: list[str] | None = None
    stop_on_entry: bool | None = None
    stop_on_exception: StopOnException | None = None
    test: str | None = None
    stdin_inputs: list[str] | None = None
    debug_subprocesses: bool | None = None
    just_my_code: bool | None = None
    launcher: Literal["local", "docker", "kubernetes"] | None = None
    image: str | None = None
    limits: ResourceLimits | None = None
    mounts: dict[str, str] | None = None
    path_mappings: list[PathMapping] | None = None
    writable: bool | None = None
    root: bool | None = None
    pool: bool | None = None
    ready: ReadyWhen | None = None
    ports: list[int] | None = None
