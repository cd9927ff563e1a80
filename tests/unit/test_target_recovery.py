"""A stored target record finds its target again only through the launcher of its kind, and a local one
only when it proves the process is the one started (its start time and user): else nothing is acted on."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import psutil
import pytest

from debugrelay.config import Settings
from debugrelay.launchers.container import MANAGED, STORE, store_identity
from debugrelay.launchers.docker import DockerLauncher
from debugrelay.launchers.docker_attach import HELD, HeldAttach
from debugrelay.launchers.kubernetes import KubernetesLauncher
from debugrelay.launchers.local import LocalLauncher
from debugrelay.launchers.orphan import OrphanTarget
from debugrelay.launchers.remote import RemoteLauncher, RemoteTarget
from debugrelay.models import (
    DockerTargetRecord,
    KubernetesTargetRecord,
    LocalTargetRecord,
    RemoteTargetRecord,
    TargetRecord,
)

PORT = 5799  # only named on the process's command line: nothing listens there


@pytest.fixture(scope="module")
def listener() -> Iterator[psutil.Process]:
    """A process whose command line says it serves debugpy on PORT, as an orphaned target's does."""
    code = "import sys; print('ready', flush=True); sys.stdin.read()"  # runs until its stdin closes
    argv = [sys.executable, "-c", code, "--listen", f"127.0.0.1:{PORT}"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"  # its own command line by now, not its parent's
        yield psutil.Process(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


def _record(proc: psutil.Process, **changes: Any) -> LocalTargetRecord:
    """The record a relay kept of ``proc`` (a keeper-less local target), with ``changes``."""
    record = LocalTargetRecord(
        host="127.0.0.1",
        port=PORT,
        pid=proc.pid,
        container_id=None,
        keeper=None,
        adapter_pid=None,
        log=None,
        started=proc.create_time(),
        uid=proc.uids().real,
    )
    return msgspec.structs.replace(record, **changes)


def test_a_local_record_finds_the_process_it_names(tmp_path: Path, listener: psutil.Process) -> None:
    found = LocalLauncher(str(tmp_path)).recover(_record(listener))
    assert isinstance(found, OrphanTarget) and found.pid == listener.pid and found.poll() is None


@pytest.mark.parametrize(
    "changes",
    [
        {"started": msgspec.UNSET},
        {"started": None},
        {"uid": msgspec.UNSET},
        {"uid": None},
        {"started": 1.0},  # another process that got the same pid
    ],
    ids=["no-start-time", "null-start-time", "no-user", "null-user", "other-start-time"],
)
def test_a_local_record_without_its_start_time_and_user_names_no_process(
    tmp_path: Path, listener: psutil.Process, changes: dict[str, Any]
) -> None:
    record = _record(listener, **changes)
    assert OrphanTarget.find(record) is None
    assert LocalLauncher(str(tmp_path)).recover(record) is None


@pytest.mark.parametrize("other", [DockerTargetRecord, KubernetesTargetRecord, RemoteTargetRecord])
def test_a_record_of_another_kind_finds_no_local_process(
    tmp_path: Path, listener: psutil.Process, other: type[TargetRecord]
) -> None:
    # every field a local record proves its process with, under another kind's tag
    fields = msgspec.to_builtins(_record(listener))
    record = _as(str(other.__struct_config__.tag), fields)
    assert isinstance(record, other)
    assert OrphanTarget.find(record) is None
    assert LocalLauncher(str(tmp_path)).recover(record) is None


class _Client:
    """An engine or cluster client that notes what a launcher asks it, and knows of nothing."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.asked.append(name)
        raise LookupError(name)


def _as(kind: str, fields: dict[str, Any]) -> TargetRecord:
    return msgspec.convert({**fields, "kind": kind}, TargetRecord)


def test_a_record_of_another_kind_asks_no_engine_nor_cluster(tmp_path: Path) -> None:
    settings = Settings(state_dir=str(tmp_path))
    engine, cluster = _Client(), _Client()
    docker, kubernetes = DockerLauncher(settings, client=engine), KubernetesLauncher(settings, client=cluster)
    named = {"host": "10.0.0.1", "port": 5678, "container_id": "c0ffee", "pod": "p"}
    for kind in ("local", "kubernetes", "remote"):
        assert docker.recover(_as(kind, named)) is None
    for kind in ("local", "docker", "remote"):
        assert kubernetes.recover(_as(kind, named)) is None
    assert engine.asked == cluster.asked == []
    # a record of its own kind is looked up
    assert docker.recover(_as("docker", named)) is None
    with pytest.raises(LookupError):
        kubernetes.recover(_as("kubernetes", named))
    assert engine.asked == ["containers"] and cluster.asked == ["get"]


def test_an_attach_record_is_reached_again_only_as_an_attach() -> None:
    remote = RemoteTargetRecord(host="127.0.0.1", port=5678, pid=None, path_mappings=[["/src", "/app"]])
    found = RemoteLauncher().recover(remote)
    assert isinstance(found, RemoteTarget) and (found.host, found.port) == ("127.0.0.1", 5678)
    assert found.path_mappings() == [{"localRoot": "/src", "remoteRoot": "/app"}]
    as_local = _as("local", msgspec.to_builtins(remote))
    assert RemoteLauncher().recover(as_local) is None


class _Engine:
    """A Docker engine holding one ended keeper container that holds an attached program."""

    def __init__(self, container: Any) -> None:
        self.containers = self
        self.container = container

    def get(self, container_id: str) -> Any:
        assert container_id == self.container.id
        return self.container


class _HeldContainer:
    id, short_id, status = "c0ffee", "c0f", "exited"

    def __init__(self, labels: dict[str, str]) -> None:
        self.labels = labels
        self.attrs = {"Config": {"Image": "t:1"}, "Mounts": [], "State": {"ExitCode": 0}}

    def wait(self) -> dict[str, int]:
        return {"StatusCode": 0}


def test_a_held_attach_found_again_describes_itself_as_it_was_stored(tmp_path: Path) -> None:
    settings = Settings(state_dir=str(tmp_path))
    stored = DockerTargetRecord(
        host="172.18.0.3",
        port=5678,
        pid=None,
        container_id="c0ffee",
        keeper=True,
        image="t:1",
        attached_host="10.0.0.5",
        attached_port=5679,
        path_mappings=[["/src", "/app"]],
    )
    labels = {MANAGED: "true", STORE: store_identity(settings), HELD: "10.0.0.5:5679"}
    found = DockerLauncher(settings, client=_Engine(_HeldContainer(labels))).recover(stored)
    assert isinstance(found, HeldAttach) and found.poll() == 0
    assert found.path_mappings() == [{"localRoot": "/src", "remoteRoot": "/app"}]
    found.keeper_secret = "k"  # the relay gives it the session's secret back
    assert found.describe() == stored  # so its seal holds for the next relay
