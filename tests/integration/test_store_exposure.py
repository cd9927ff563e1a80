"""A relay on the host that cannot keep its container targets off the host's services names its own Redis
at start when a target could use it: one on this host taking clients beyond loopback without a password.
Real redis-servers, run the ways an operator runs them."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from debugrelay.launchers.docker_host import HostFirewall, report, store_exposure
from tests.redis_server import host_redis


def refused(argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """iptables to a relay that is not root (the real refusal: tests/unit/test_docker_host.py)."""
    return subprocess.CompletedProcess(argv, 4, "", "Could not fetch rule set generation id: Permission denied")


def test_redis_on_every_address_without_a_password_is_named_at_start(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("debugrelay.launchers.docker_host._binary", lambda tool: f"/usr/sbin/{tool}")
    with host_redis(tmp_path, "--bind", "0.0.0.0", "--protected-mode", "no") as url:
        port = urlsplit(url).port
        assert store_exposure(url) == f"0.0.0.0:{port}"
        assert store_exposure(url.replace("127.0.0.1", "localhost")) == f"0.0.0.0:{port}"
        with caplog.at_level(logging.WARNING, logger="debugrelay.launchers.docker_host"):
            report(HostFirewall(run=refused), url)
    (warning,) = [r for r in caplog.records if r.name == "debugrelay.launchers.docker_host"]
    said = warning.getMessage()
    assert f"Redis, the relay's store, listens on 0.0.0.0:{port} without a password" in said, said
    assert "Permission denied" in said and "iptables -I INPUT 1 -i drelay+" in said, said


@pytest.mark.parametrize(
    "args",
    [
        ("--bind", "127.0.0.1", "--protected-mode", "no"),  # loopback only
        ("--bind", "0.0.0.0"),  # protected mode (the default without a password): loopback's clients only
    ],
    ids=["loopback", "protected-mode"],
)
def test_redis_a_target_cannot_use_is_not_named(tmp_path: Path, args: tuple[str, ...]) -> None:
    with host_redis(tmp_path, *args) as url:
        assert store_exposure(url) is None


def test_redis_with_a_password_is_not_named(tmp_path: Path) -> None:
    with host_redis(tmp_path, "--bind", "0.0.0.0", "--protected-mode", "no", "--requirepass", "s3cret") as url:
        assert store_exposure(url.replace("redis://", "redis://:s3cret@")) is None


def test_a_store_elsewhere_is_not_named() -> None:
    assert store_exposure("redis://192.0.2.200:6379/0") is None  # TEST-NET: no address of this machine
    assert store_exposure("unix:///run/redis.sock") is None
    assert store_exposure(None) is None
