"""What to run and how: the launch request, also the launch spec stored with a session."""

from __future__ import annotations

from typing import Literal

import msgspec

from ._base import Input

StopOnException = bool | Literal["uncaught", "raised", "userUnhandled", "none"]


class PathMapping(Input):
    local_root: str
    remote_root: str


class ResourceLimits(Input):
    memory: str | None = None
    cpus: float | None = None
    pids: int | None = None


class LaunchRequest(Input):
    """``POST /sessions/{id}/launch``: a script or a module, with its arguments and environment."""

    script: str | None = None
    module: str | None = None
    args: list[str] = msgspec.field(default_factory=list)
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    python: str | None = None
    pythonpath: list[str] = msgspec.field(default_factory=list)
    stop_on_entry: bool = False
    stop_on_exception: StopOnException | None = None  # omitted: "uncaught" for a test run, else none
    test: str | None = None  # one test: a pytest node id (module pytest by default) or a unittest name
    stdin_inputs: list[str] = msgspec.field(default_factory=list)
    debug_subprocesses: bool = False
    just_my_code: bool = False
    launcher: Literal["local", "docker", "kubernetes"] | None = None
    image: str | None = None
    limits: ResourceLimits | None = None
    mounts: dict[str, str] = msgspec.field(default_factory=dict)
    path_mappings: list[PathMapping] = msgspec.field(default_factory=list)  # kubernetes: checkout -> image path
    writable: bool = False
    root: bool = False  # run the container as root: only where the operator allows it
    pool: bool = True
