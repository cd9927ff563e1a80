"""deploy/'s Redis as the pod spec runs it, in the project's Redis image: its user, a read-only root, no
capabilities, the configuration from the rendered ConfigMap, the password off its command line, and the
probes' `redis-cli` inside."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.docker.stack import require_images
from tests.kustomize import DEPLOY, VERSION, build, kubectl_problem
from tests.redis_server import LABEL

PASSWORD = "pod-spec-pass"


@pytest.fixture
def redis_pod(docker_client: Any, tmp_path: Path) -> Iterator[tuple[Any, dict[str, Any]]]:
    """The team overlay's Redis container, run by Docker as its spec says: (container, spec)."""
    if (why := kubectl_problem()) is not None:
        pytest.skip(why)
    objects = build(DEPLOY / "overlays" / "team")
    (statefulset,) = [o for o in objects if o["kind"] == "StatefulSet"]
    pod = statefulset["spec"]["template"]["spec"]
    (spec,) = pod["containers"]
    # registry.example.com/debugrelay/redis:<version>: the same build as debugrelay/redis:latest here
    assert spec["image"].endswith(f"/debugrelay/redis:{VERSION}"), spec["image"]
    image = "debugrelay/redis:latest"
    require_images(docker_client, image)
    volumes: dict[str, dict[str, str]] = {}
    for mount in spec["volumeMounts"]:
        (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]] or [{"name": mount["name"]}]
        local = tmp_path / mount["name"]
        local.mkdir()
        local.chmod(0o777)  # what the pod's fsGroup makes of its volumes
        if "configMap" in volume:
            (config,) = [
                o for o in objects if o["kind"] == "ConfigMap" and o["metadata"]["name"] == volume["configMap"]["name"]
            ]
            for key, text in config["data"].items():
                (local / key).write_text(text)
                (local / key).chmod(0o644)
        volumes[str(local)] = {"bind": mount["mountPath"], "mode": "ro" if mount.get("readOnly") else "rw"}
    env = {"REDIS_PASSWORD": PASSWORD}
    env.update({e["name"]: e["value"].replace("$(REDIS_PASSWORD)", PASSWORD) for e in spec["env"] if "value" in e})
    security = pod["securityContext"]
    container = docker_client.containers.run(
        image,
        entrypoint=spec["command"],
        command=[a.replace("$(REDIS_PASSWORD)", PASSWORD) for a in spec["args"]],
        environment=env,
        user=f"{security['runAsUser']}:{security['runAsGroup']}",
        read_only=spec["securityContext"]["readOnlyRootFilesystem"],
        cap_drop=spec["securityContext"]["capabilities"]["drop"],
        security_opt=["no-new-privileges"],
        volumes=volumes,
        labels={LABEL: "deploy-redis"},
        detach=True,
    )
    try:
        yield container, spec
    finally:
        container.remove(force=True, v=True)


def probe(container: Any, spec: dict[str, Any], name: str) -> int:
    code: int = container.exec_run(spec[name]["exec"]["command"]).exit_code
    return code


def test_the_redis_pod_spec_runs_in_the_redis_image_and_its_probes_pass(
    redis_pod: tuple[Any, dict[str, Any]],
) -> None:
    container, spec = redis_pod
    deadline = time.monotonic() + 30
    while probe(container, spec, "readinessProbe") != 0:
        container.reload()
        assert container.status == "running", container.logs().decode()[-2000:]
        assert time.monotonic() < deadline, container.logs().decode()[-2000:]
        time.sleep(0.2)
    assert probe(container, spec, "livenessProbe") == 0
    config = {}
    for key in ("maxmemory", "maxmemory-policy", "appendonly"):
        config[key] = container.exec_run(["redis-cli", "config", "get", key]).output.decode().split()[1]
    assert config == {"maxmemory": str(384 * 1024 * 1024), "maxmemory-policy": "noeviction", "appendonly": "yes"}
    wrong = container.exec_run(spec["readinessProbe"]["exec"]["command"], environment={"REDISCLI_AUTH": "wrong"})
    assert wrong.exit_code != 0
    # the password reached redis-server on its standard input: on no command line of the node
    started = [container.attrs["Path"], *container.attrs["Args"]]
    assert not any(PASSWORD in part for part in started), started
