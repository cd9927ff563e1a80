"""A session's target is stored as a Struct of its kind; records written as plain mappings still decode,
to the very mapping that was sealed, so their seals hold."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from debugrelay.models import DockerTargetRecord, LocalTargetRecord, SessionRecord, described
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
    assert described(record.target) == old
    assert unsealed(keys, record) == []
    assert msgspec.json.decode(msgspec.json.encode(record))["target"] == old


def test_a_target_is_kept_as_the_struct_of_its_kind() -> None:
    keys = RelayKeys.ephemeral()
    record = SessionRecord(id="sess_2")
    set_target(keys, record, {"kind": "docker", "host": "h", "port": 1, "pid": None, "container_id": "c", "image": "i"})
    assert isinstance(record.target, DockerTargetRecord) and record.target.image == "i"
    assert unsealed(keys, record) == []
    set_target(keys, record, dict(OLD_TARGETS[0]))
    assert isinstance(record.target, LocalTargetRecord) and record.target.started == 1712345678.125
    assert unsealed(keys, record) == []
    record.target.pid = 1  # a changed description no longer carries the seal
    assert unsealed(keys, record) == ["target"]
