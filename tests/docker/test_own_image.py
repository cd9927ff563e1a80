"""The README's worked example of a service in the user's own image: a Flask app whose image is built from
wheels downloaded on this machine, launched as a container target with its port published, a handler
debugged in four calls. The README's block runs as a user pastes it, in an empty folder of their own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Relay
from tests.docker.stack import REPO, clean_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]
IMAGE = "myshop:dev"


def readme_own_image_block() -> str:
    """The README's shell block that builds and debugs the user's own image."""
    for block in re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S):
        if IMAGE in block:
            return str(block)
    raise AssertionError(f"the README has no block that builds {IMAGE}")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    return root


@pytest.fixture
def own_relay(docker_client: Any, folder: Path, tmp_path: Path) -> Iterator[Relay]:
    relay = Relay(tmp_path, env={"DEBUGRELAY_ALLOWED_IMAGES": "myshop:*", "DEBUGRELAY_WORKSPACE": str(folder)})
    yield relay
    relay.stop()
    for container in docker_client.containers.list(all=True, filters={"ancestor": IMAGE}):
        container.remove(force=True)
    docker_client.images.remove(IMAGE, force=True)


def test_the_readme_flask_app_in_its_own_image_is_debugged_at_its_handler(own_relay: Relay, folder: Path) -> None:
    block = readme_own_image_block().replace("R=http://127.0.0.1:8765", f"R={own_relay.url}", 1)
    shell_path = f"{Path(sys.executable).parent}{os.pathsep}{clean_env()['PATH']}"  # `pip` as a user has it
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=folder,
        env=clean_env(PATH=shell_path),
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    said = ran.stdout
    assert ran.returncode == 0, ran.stderr + said
    assert '"error"' not in said, said
    assert '"ready":"listening"' in said and '"published":[{"port":8000,"url":"http://127.0.0.1:' in said, said
    assert '"status":"paused"' in said and '"function":"order"' in said and '"line":8' in said, said
    assert '{"result":"3","type":"int"}' in said, said
    # continue waits 2 s for a stop that does not come: the handler's response is in by then
    assert '"state":"answered"' in said and '\\"total\\":14' in said, said
