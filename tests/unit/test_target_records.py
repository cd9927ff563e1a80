"""A session's target is stored as a Struct of its kind; records written as plain mappings still decode,
to the very mapping that was sealed, so their seals hold; and a target describes itself as that mapping."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import psutil
import pytest

from debugrelay.launchers import Target
from debugrelay.launchers.docker_attach import HeldAttach
from debugrelay.launchers.docker_target import DockerTarget
from debugrelay.launchers.kubernetes import KubernetesTarget
from debugrelay.launchers.local import LocalTarget
from debugrelay.launchers.remote import RemoteTarget
from debugrelay.models import DockerTargetRecord, LocalTargetRecord, SessionRecord, TargetRecord
from debugrelay.sessions._seals import set_target, unsealed
from debugrelay.trust import RelayKeys

# as launchers described them before targets were typed: nulls kept, each kind its own extra fields
OLD_TARGETS: list[dict[str, Any]] = [
    {
        "kind": "local",
        "host": "127.0.0.1",
        "port": 5000,
        "pid": 4242,
        "container_id": None,
        "keeper": None,
        "adapter_pid": 4243,
        "log": "/tmp/target.log",
        "started": 1712345678.125,
        "uid": 1000,
    },
    {"kind": "local", "host": "127.0.0.1", "port": 5000, "pid": 7, "keeper": True, "log": None, "pooled": True},
    {"kind": "docker", "host": "172.17.0.2", "port": 5678, "pid": None, "container_id": "c0ffee", "image": "t:1"},
    {"kind": "docker", "container_id": "c0ffee", "port": 5678},  # fields missing stay missing
    {
        "kind": "kubernetes",
        "host": "10.0.0.9",
        "port": 5678,
        "pod": "p",
        "namespace": "n",
        "path_mappings": [["/a", "/b"]],
    },
    {"kind": "remote", "host": "127.0.0.1", "port": 5678, "pid": None, "path_mappings": [], "name": "localhost"},
]


@pytest.mark.parametrize("old", OLD_TARGETS, ids=lambda t: str(t["kind"]))
def test_an_old_target_record_decodes_and_its_seal_still_holds(old: dict[str, Any]) -> None:
    keys = RelayKeys.ephemeral()
    stored = {
        "id": "sess_1",
        "status": "running",
        "target": old,
        "seals": {"target": keys.seal("sess_1", "target", old)},
    }
    record = msgspec.json.decode(msgspec.json.encode(stored), type=SessionRecord)
    assert record.target is not None
    assert msgspec.to_builtins(record.target) == old
    assert unsealed(keys, record) == []
    assert msgspec.json.decode(msgspec.json.encode(record))["target"] == old


def test_a_target_is_kept_as_the_struct_of_its_kind() -> None:
    keys = RelayKeys.ephemeral()
    record = SessionRecord(id="sess_2")
    set_target(keys, record, DockerTargetRecord(host="h", port=1, pid=None, container_id="c", image="i"))
    assert isinstance(record.target, DockerTargetRecord) and record.target.image == "i"
    assert unsealed(keys, record) == []
    set_target(keys, record, msgspec.convert(OLD_TARGETS[0], TargetRecord))
    assert isinstance(record.target, LocalTargetRecord) and record.target.started == 1712345678.125
    assert unsealed(keys, record) == []
    record.target.pid = 1  # a changed description no longer carries the seal
    assert unsealed(keys, record) == ["target"]


class _Container:
    """What a Docker target reads of its container: its id, its image, its end (at once)."""

    id, short_id = "c0ffee", "c0f"
    attrs: ClassVar[dict[str, Any]] = {"Config": {"Image": "t:1"}}

    def wait(self) -> dict[str, int]:
        return {"StatusCode": 0}


class _Proc:
    pid, returncode = os.getpid(), None


def _targets() -> list[tuple[Target, dict[str, Any]]]:
    """Targets of each kind and the mapping the relay stored for them before targets were typed."""
    me, folder = psutil.Process(), Path("/s/targets")
    attached = RemoteTarget("10.0.0.5", 5678, None, [("/src", "/app")], name="box")
    return [
        (
            LocalTarget(_Proc(), 5000, folder / "a.log", keeper_secret="k", status_file=folder / "a.st"),
            {
                "kind": "local",
                "host": "127.0.0.1",
                "port": 5000,
                "pid": me.pid,
                "container_id": None,
                "keeper": True,
                "adapter_pid": None,
                "log": "/s/targets/a.log",
                "started": me.create_time(),
                "uid": me.uids().real,
                "debugpy_port": None,
                "status_file": "/s/targets/a.st",
            },
        ),
        (
            HeldAttach(_Container(), "172.18.0.3", 5678, attached=attached, keeper_secret=None),
            {
                "kind": "docker",
                "host": "172.18.0.3",
                "port": 5678,
                "pid": None,
                "container_id": "c0ffee",
                "keeper": None,
                "image": "t:1",
                "attached_host": "10.0.0.5",
                "attached_port": 5678,
                "path_mappings": [["/src", "/app"]],
            },
        ),
        (
            DockerTarget(_Container(), "172.18.0.4", 5678, [], keeper_secret="k"),
            {
                "kind": "docker",
                "host": "172.18.0.4",
                "port": 5678,
                "pid": None,
                "container_id": "c0ffee",
                "keeper": True,
                "image": "t:1",
            },
        ),
        (
            KubernetesTarget(None, "p", "n", host="10.1.0.2", port=5678, mappings=[("/a", "/b")], image="i:1"),  # type: ignore[arg-type]
            {
                "kind": "kubernetes",
                "host": "10.1.0.2",
                "port": 5678,
                "pid": None,
                "container_id": None,
                "keeper": None,
                "pod": "p",
                "namespace": "n",
                "image": "i:1",
                "path_mappings": [["/a", "/b"]],
            },
        ),
        (  # a host given as an address has no name: the field stays absent
            RemoteTarget("127.0.0.1", 5678, 42),
            {
                "kind": "remote",
                "host": "127.0.0.1",
                "port": 5678,
                "pid": 42,
                "container_id": None,
                "keeper": None,
                "path_mappings": [],
            },
        ),
        (
            attached,
            {
                "kind": "remote",
                "host": "10.0.0.5",
                "port": 5678,
                "pid": None,
                "container_id": None,
                "keeper": None,
                "path_mappings": [["/src", "/app"]],
                "name": "box",
            },
        ),
    ]


def test_a_target_describes_itself_as_the_mapping_stored_before_so_its_seal_is_unchanged() -> None:
    keys = RelayKeys.ephemeral()
    for target, stored in _targets():
        record = SessionRecord(id="sess_3")
        set_target(keys, record, target.describe())
        assert msgspec.to_builtins(record.target) == stored, target.kind
        assert record.seals["target"] == keys.seal("sess_3", "target", stored)
