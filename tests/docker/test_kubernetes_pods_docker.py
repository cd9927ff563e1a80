"""The kubernetes launcher's pods, played for real through Docker by a FAKE node
(tests/integration/fake_kubelet_docker.py): the pod spec the relay writes is what the containers run with.

The relay is driven through its HTTP API as an agent would; the code is in the image (the project's target
image with the program copied to /app), the init container is the relay's own image, as a cluster runs them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker.errors
import httpx
import pytest

from tests.conftest import TARGETS, Relay, Sessions, line_of, ok, output_text, until
from tests.docker.conftest import TARGET_IMAGE
from tests.integration.fake_kubelet_docker import LABEL, DockerBackedFakeKubernetes, unplayable
from tests.integration.fake_kubernetes import TOKEN

pytestmark = pytest.mark.integration

NAMESPACE = "debug"
REPORT = str(TARGETS / "pod_report.py")
APP = "/app"  # where the image holds the program: the checkout's tests/targets maps to it
RELAY_IMAGE = "debugrelay/relay"


@pytest.fixture(scope="module")
def boot_image(docker_client: Any) -> Iterator[str]:
    """The relay's image as built here, by a tag a pod may name: a pod naming ``:latest`` is pulled by any
    kubelet (imagePullPolicy Always), so when the image has no other tag it gets one for this module."""
    images = sorted(docker_client.images.list(name=RELAY_IMAGE), key=lambda i: i.attrs["Created"], reverse=True)
    if not images:
        pytest.skip(f"{RELAY_IMAGE} is not built (docker/build-images.sh relay)")
    tags = [t for t in images[0].tags if t.startswith(f"{RELAY_IMAGE}:") and not t.endswith(":latest")]
    if tags:
        yield tags[0]
        return
    tag = f"{RELAY_IMAGE}:pod-test-{os.urandom(3).hex()}"
    images[0].tag(tag)
    try:
        yield tag
    finally:
        docker_client.images.remove(tag, noprune=True)


@pytest.fixture(scope="module")
def app_image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The target image with the program in it, as a user's image carries their code (built offline)."""
    context = tmp_path_factory.mktemp("app-image")
    shutil.copy(REPORT, context / "pod_report.py")
    (context / "Dockerfile").write_text(f"FROM {TARGET_IMAGE}\nCOPY pod_report.py {APP}/pod_report.py\n")
    tag = f"debugrelay/pod-report:{os.urandom(3).hex()}"
    docker_client.images.build(path=str(context), tag=tag, rm=True, forcerm=True, pull=False, network_mode="none")
    try:
        yield tag
    finally:
        docker_client.images.remove(tag)


@pytest.fixture
def fake_node(docker_client: Any, tmp_path: Path) -> Iterator[DockerBackedFakeKubernetes]:
    fake = DockerBackedFakeKubernetes(tmp_path, NAMESPACE, client=docker_client, sandbox_image=TARGET_IMAGE)
    try:
        yield fake
    finally:
        fake.stop()
    assert fake.refused == []


@pytest.fixture
def pod_relay(
    tmp_path: Path, fake_node: DockerBackedFakeKubernetes, boot_image: str, app_image: str
) -> Iterator[Relay]:
    relay = Relay(
        tmp_path,
        env={
            "KUBECONFIG": str(fake_node.kubeconfig),
            "DEBUGRELAY_LAUNCHERS": "kubernetes",
            "DEBUGRELAY_KUBERNETES_NAMESPACE": NAMESPACE,
            "DEBUGRELAY_KUBERNETES_BOOT_IMAGE": boot_image,
            "DEBUGRELAY_KUBERNETES_IMAGE": app_image,
            "DEBUGRELAY_INSTANCE_ID": "relay-docker-pods",
            "DEBUGRELAY_LAUNCH_TIMEOUT": "120",  # a bound for a loaded machine, not a speed check
        },
    )
    try:
        yield relay
    finally:
        relay.stop()


def pod_log(fake: DockerBackedFakeKubernetes, name: str) -> str:
    """What ``kubectl logs`` shows for the pod."""
    response = httpx.get(
        f"{fake.url}/api/v1/namespaces/{NAMESPACE}/pods/{name}/log", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200, response.text
    return response.text


def test_a_target_pod_runs_its_containers_from_its_spec_through_docker(
    pod_relay: Relay, fake_node: DockerBackedFakeKubernetes, docker_client: Any, boot_image: str, app_image: str
) -> None:
    api, sessions = pod_relay.http, Sessions(pod_relay.http)
    sid = sessions.create()
    sessions.bp(sid, REPORT, line_of(REPORT, "report-here"))
    launched = ok(
        api.post(
            f"/sessions/{sid}/launch",
            json={
                "script": REPORT,
                "env": {"GREETING": "hi from a pod"},
                "limits": {"memory": "256m", "cpus": 0.5},
                "path_mappings": [{"local_root": str(TARGETS), "remote_root": APP}],
            },
        )
    )
    assert launched["status"] in ("running", "paused")

    # the debug session, through the keeper in the pod's container: a stop in the user's file, a variable
    stop = sessions.wait(sid, timeout=120)
    assert stop["status"] == "paused" and stop["reason"] == "breakpoint", stop
    assert stop["location"]["file"] == REPORT and stop["location"]["line"] == line_of(REPORT, "report-here")
    variables = ok(api.get(f"/sessions/{sid}/variables", params={"scope": "locals"}))["variables"]
    (pod,) = fake_node.created
    spec, name = pod["spec"], pod["metadata"]["name"]
    (init,) = spec["initContainers"]
    (target,) = spec["containers"]
    uid, gid = target["securityContext"]["runAsUser"], target["securityContext"]["runAsGroup"]
    assert uid != 0
    assert {v["name"]: v["value"] for v in variables}["user"] == f"'{uid}:{gid}'"
    until(lambda: f"user: {uid}:{gid}" in pod_log(fake_node, name), "kubectl logs to show what the program printed")

    # the pod's containers, while it runs: each from its image, with exactly what its spec says
    played = fake_node.containers_of(name)
    main = docker_client.api.inspect_container(played["target"].id)
    boot = docker_client.api.inspect_container(played["debugrelay-boot"].id)
    assert main["Config"]["Image"] == docker_client.images.get(app_image).id
    assert boot["Config"]["Image"] == docker_client.images.get(boot_image).id
    assert main["Config"]["Entrypoint"] == target["command"] and boot["Config"]["Entrypoint"] == init["command"]
    assert main["Config"]["WorkingDir"] == target["workingDir"] == APP
    assert {f"{e['name']}={e['value']}" for e in target["env"]} <= set(main["Config"]["Env"])
    for container, inspected in ((target, main), (init, boot)):
        sc, host = container["securityContext"], inspected["HostConfig"]
        assert inspected["Config"]["User"] == f"{sc['runAsUser']}:{sc['runAsGroup']}"
        assert host["ReadonlyRootfs"] is True and host["CapDrop"] == ["ALL"] and not host["CapAdd"]
        assert host["SecurityOpt"] == ["no-new-privileges"]  # and Docker's default seccomp profile
        assert host["Memory"] == host["MemorySwap"] > 0 and host["NanoCpus"] > 0
        mounts = {m["Destination"]: m["RW"] for m in inspected["Mounts"]}
        assert mounts == {m["mountPath"]: not m.get("readOnly", False) for m in container["volumeMounts"]}
    assert main["HostConfig"]["Memory"] == int(target["resources"]["limits"]["memory"]) == 256 * 1024**2
    assert main["HostConfig"]["NanoCpus"] == 500_000_000
    assert boot["State"]["Status"] == "exited" and boot["State"]["ExitCode"] == 0
    # the pod's status as a kubelet reports it: running at the sandbox's address, its init container completed
    status = fake_node.pods[name].obj["status"]
    assert status["phase"] == "Running"
    assert status["podIP"] == played["POD"].attrs["NetworkSettings"]["Networks"][fake_node.network.name]["IPAddress"]
    assert [s["state"]["terminated"]["reason"] for s in status["initContainerStatuses"]] == ["Completed"]
    assert [("running" in s["state"], s["ready"]) for s in status["containerStatuses"]] == [(True, True)]

    ok(api.post(f"/sessions/{sid}/continue"))
    final = sessions.wait(sid, timeout=120)
    assert final["status"] == "terminated" and final["exit_code"] == 3, final
    # /metrics of a relay launching into the (fake) cluster: the launch and its first stop, by launcher
    metrics = api.get("/metrics").text
    assert 'debugrelay_launches_total{launcher="kubernetes",outcome="started"} 1.0' in metrics, metrics
    assert 'debugrelay_launch_to_first_stop_seconds_count{launcher="kubernetes"} 1.0' in metrics, metrics

    # what the program saw of its container, as it printed it
    said = output_text(api, sid)
    report = dict(line.split(": ", 1) for line in said.splitlines() if ": " in line)
    assert report["user"] == f"{uid}:{gid}", said
    assert str(spec["securityContext"]["fsGroup"]) in report["groups"].split(","), said
    assert report["write /"] == "refused (Read-only file system)", said
    assert report["write /tmp"] == "written", said  # the /tmp emptyDir
    assert report["NoNewPrivs"] == "1" and report["Seccomp"] == "2", said  # no escalation; a seccomp filter
    assert report["CapBnd"] == report["CapEff"] == "0000000000000000", said  # every capability dropped
    assert report["debugpy"] == "/opt/debugrelay/debugpy/__init__.py", said  # copied there by the init container
    assert report["cwd"] == APP and report["greeting"] == "hi from a pod", said

    ok(api.delete(f"/sessions/{sid}"))
    until(lambda: not fake_node.pods, "the session's pod to be deleted")
    for container in played.values():
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(container.id)
    assert not docker_client.volumes.list(filters={"label": f"{LABEL}={fake_node.id}"})


def test_an_image_the_node_lacks_fails_its_pulls_until_it_is_loaded_onto_the_node(
    fake_node: DockerBackedFakeKubernetes, docker_client: Any
) -> None:
    name, image = "loaded-later", f"debugrelay/pod-loaded:{os.urandom(3).hex()}"
    restricted = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}
    said = "ran from the image loaded onto the node"
    fake_node.add_pod(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": "Never",
                "automountServiceAccountToken": False,
                "securityContext": {
                    "runAsNonRoot": True,
                    "runAsUser": 10001,
                    "seccompProfile": {"type": "RuntimeDefault"},
                },
                "containers": [
                    {
                        "name": "app",
                        "image": image,
                        "command": ["python", "-c", f"print({said!r})"],
                        "securityContext": restricted,
                    }
                ],
            },
        }
    )

    def waiting() -> list[str]:
        """The reasons the pod's container waited for, in order, as the pod's watchers saw them."""
        seen = [
            s["state"]["waiting"]["reason"]
            for _, _, obj in list(fake_node.events)
            if obj["metadata"]["name"] == name
            for s in obj["status"].get("containerStatuses") or []
            if "waiting" in s["state"]
        ]
        return [reason for i, reason in enumerate(seen) if i == 0 or seen[i - 1] != reason]

    until(lambda: "ImagePullBackOff" in waiting(), "the kubelet to back off after a failed pull")
    assert waiting()[:3] == ["ContainerCreating", "ErrImagePull", "ImagePullBackOff"]
    docker_client.images.get(TARGET_IMAGE).tag(image)  # as `docker load` would put it there
    try:
        status = until(
            lambda: fake_node.pods[name].obj["status"]["phase"] == "Succeeded" and fake_node.pods[name].obj["status"],
            "the pod to run once its image is on the node",
        )
    finally:
        docker_client.images.remove(image, noprune=True)
    (app,) = status["containerStatuses"]
    assert app["state"]["terminated"]["exitCode"] == 0 and app["state"]["terminated"]["reason"] == "Completed"
    assert app["imageID"] == f"docker://{docker_client.images.get(TARGET_IMAGE).id}"
    assert said in pod_log(fake_node, name)
    played = fake_node.containers_of(name)
    fake_node.delete(name)
    for container in played.values():
        with pytest.raises(docker.errors.NotFound):
            docker_client.containers.get(container.id)
    assert not docker_client.volumes.list(filters={"label": f"{LABEL}={fake_node.id}"})


def test_a_pod_spec_field_the_docker_node_does_not_play_is_refused_by_name() -> None:
    container = {"name": "target", "image": "app:1", "command": ["python", "app.py"]}
    pod = {"restartPolicy": "Never", "automountServiceAccountToken": False, "containers": [container]}
    assert unplayable(pod) == []
    probe = {**container, "livenessProbe": {"tcpSocket": {"port": 5678}}}
    from_field = {**container, "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}
    assert unplayable({**pod, "containers": [probe], "hostAliases": []}) == [
        "spec.hostAliases",
        "spec.containers[0].livenessProbe",
    ]
    assert unplayable({**pod, "containers": [from_field]}) == ["spec.containers[0].env[0].valueFrom"]
    assert unplayable({**pod, "restartPolicy": "Always"}) == [
        "spec.restartPolicy=Always (only Never: nothing restarts here)"
    ]
