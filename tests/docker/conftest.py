"""Container tests: skipped only where no Docker engine or no target image exists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

TARGET_IMAGE = "debugrelay/target:latest"


def _docker() -> Any:
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception:
        return None
    return client


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    client = _docker()
    if client is None:
        pytest.skip("no Docker engine here")
    try:
        client.images.get(TARGET_IMAGE)
    except Exception:
        pytest.skip(f"{TARGET_IMAGE} is not built (make images)")
    yield client
    client.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/docker/" in str(item.fspath):
            item.add_marker(pytest.mark.docker)
