"""The kubernetes launcher against a FAKE Kubernetes API server (tests/integration/fake_kubernetes.py).

No cluster can run on this project's machines. The fake checks every request the relay makes (against
the Role deploy/ grants the relay) and plays each pod's life; the pod's processes are real: the init
container really copies debugpy and the hooks, the keeper and debugpy really run, so every session here
is a real debug session. It is as unkind as a cluster where that broke the relay: watches answered
410 Gone, graceful deletion, evictions, lost nodes, image pulls that fail and are retried, an API server
that hangs.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from lightkube import ApiError, Client, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Pod, Secret

from tests.conftest import TARGETS, Relay, Sessions, error_of, free_port, line_of, ok, output_text, until
from tests.integration.fake_kubernetes import FakeKubernetes, PullFailure
from tests.redis_server import Cluster
from tests.unit.test_deploy import KUBERNETES_VERSION

pytestmark = pytest.mark.integration

NAMESPACE = "debug"
INSTANCE = "relay-k8s-test"
STORE_LABEL = f"memory-{INSTANCE}"  # the relay's in-memory store, as a label value
IMAGE = "example/app:1.2"
ATTACHABLE = "debugrelay.dev/attachable"


@pytest.fixture
def fake_kubernetes(tmp_path: Path) -> Iterator[FakeKubernetes]:
    fake = FakeKubernetes(tmp_path, NAMESPACE)
    yield fake
    fake.stop()


def relay_env(fake: FakeKubernetes) -> dict[str, str]:
    """A relay's settings to launch into the fake cluster."""
    return {
        "KUBECONFIG": str(fake.kubeconfig),
        "DEBUGRELAY_LAUNCHERS": "kubernetes",
        "DEBUGRELAY_KUBERNETES_NAMESPACE": NAMESPACE,
        "DEBUGRELAY_KUBERNETES_PORT": str(free_port()),
        "DEBUGRELAY_KUBERNETES_BOOT_IMAGE": "debugrelay/relay:test",
        "DEBUGRELAY_ALLOWED_IMAGES": "example/app:*",
    }


def start_relay(tmp: Path, fake: FakeKubernetes, **extra: str) -> Relay:
    return Relay(tmp, env={**relay_env(fake), "DEBUGRELAY_INSTANCE_ID": INSTANCE, **extra})


@pytest.fixture
def k8s_relay(tmp_path: Path, fake_kubernetes: FakeKubernetes) -> Iterator[Relay]:
    relay = start_relay(tmp_path, fake_kubernetes)
    yield relay
    relay.stop()


@pytest.fixture
def image_app(tmp_path: Path) -> Path:
    """The app as built into the image: the user's checkout (tests/targets) copied to another path."""
    app = tmp_path / "image" / "app"
    app.mkdir(parents=True)
    shutil.copy(TARGETS / "basic.py", app / "basic.py")
    return app


def target_pods(fake: FakeKubernetes) -> list[str]:
    return [name for name, pod in fake.pods.items() if pod.obj["metadata"]["labels"].get("debugrelay.managed")]


def paused_in_a_pod(relay: Relay, fake: FakeKubernetes, image_app: Path) -> tuple[Sessions, str, str]:
    """A session paused at its program's entry in a pod: (the sessions, its id, its pod's name)."""
    sessions = Sessions(relay.http)
    sid = sessions.create()
    mappings = [{"local_root": str(TARGETS), "remote_root": str(image_app)}]
    sessions.launch(sid, str(TARGETS / "basic.py"), image=IMAGE, stop_on_entry=True, path_mappings=mappings)
    assert sessions.wait(sid)["status"] == "paused"
    (pod,) = [n for n, p in list(fake.pods.items()) if p.obj["metadata"]["labels"].get("debugrelay.session") == sid]
    return sessions, sid, pod


def ended(api: Any, sid: str) -> Any:
    """The session's view once it has ended (fails if it never does: the relay would be waiting)."""
    return until(lambda: (v := ok(api.get(f"/sessions/{sid}")))["status"] == "terminated" and v, "the session's end")


def test_a_launch_runs_in_a_restricted_pod_and_debugs_through_path_mappings(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    api, sessions = k8s_relay.http, Sessions(k8s_relay.http)
    checkout = str(TARGETS)
    basic = str(TARGETS / "basic.py")
    sid = sessions.create()
    bp = sessions.bp(sid, basic, line_of(basic, "loop-body"))
    launched = ok(
        api.post(
            f"/sessions/{sid}/launch",
            json={
                "script": basic,
                "args": ["--in-pod"],
                "env": {"GREETING": "hi from the pod"},
                "image": IMAGE,
                "limits": {"memory": "256m", "cpus": 0.5},
                "path_mappings": [{"local_root": checkout, "remote_root": str(image_app)}],
            },
        )
    )
    assert launched["status"] in ("running", "paused")

    # the pod as the relay asked for it
    (pod,) = fake_kubernetes.created
    kubernetes_validate.validate(pod, KUBERNETES_VERSION, strict=True)
    spec = pod["spec"]
    labels = pod["metadata"]["labels"]
    assert labels["debugrelay.session"] == sid and labels["debugrelay.store"] == STORE_LABEL
    assert labels["app.kubernetes.io/component"] == "target" and labels["debugrelay.managed"] == "true"
    assert pod["metadata"]["annotations"]["debugrelay.instance"] == INSTANCE
    # a bare pod by design (a controller would start the program afresh, its session lost): the cluster
    # autoscaler may still scale its node down, and drain evicts it (with --force, see the launcher's notes)
    assert pod["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "true"
    assert "ownerReferences" not in pod["metadata"]
    # a relay that never comes back: the keeper ends the program after the session's timeout, and the pod
    command = spec["containers"][0]["command"]
    assert float(command[command.index("--orphan-after") + 1]) == 3600
    assert spec["restartPolicy"] == "Never" and spec["automountServiceAccountToken"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] == 10001
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (init,) = spec["initContainers"]
    (target,) = spec["containers"]
    assert init["image"] == "debugrelay/relay:test" and target["image"] == IMAGE
    assert {m["mountPath"] for m in init["volumeMounts"]} == {"/opt/debugrelay"}
    assert {"name": "debugrelay-boot", "mountPath": "/opt/debugrelay", "readOnly": True} in target["volumeMounts"]
    for container in (init, target):
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert set(container["resources"]["limits"]) == {"cpu", "memory"}
    assert target["resources"]["limits"] == {"memory": str(256 * 1024**2), "cpu": "500m"}
    assert target["resources"]["requests"] == target["resources"]["limits"]
    assert target["command"][1:3] == ["-Xfrozen_modules=off", "/opt/debugrelay/_debugrelay_keeper.py"]
    assert f"{image_app}/basic.py" in target["command"]  # the image's path, not the checkout's
    assert target["workingDir"] == str(image_app)
    env = {e["name"]: e["value"] for e in target["env"]}
    assert env["PYTHONPATH"].split(":")[0] == "/opt/debugrelay"
    assert env["GREETING"] == "hi from the pod" and len(env["DEBUGRELAY_KEEPER_SECRET"]) == 64
    assert all(path.startswith("/api/v1/namespaces/debug/") for _, path, _ in fake_kubernetes.requests)

    # the session itself: a stop in the user's file, through the keeper in the pod
    stop = sessions.wait(sid)
    assert stop["status"] == "paused" and stop["reason"] == "breakpoint"
    assert stop["location"]["file"] == basic and stop["location"]["line"] == line_of(basic, "loop-body")
    frames = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]
    assert frames[0]["file"] == basic
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "value * 2"}))["result"] == "6"
    ok(api.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"))
    ok(api.post(f"/sessions/{sid}/continue"))
    final = sessions.wait(sid)
    assert final["status"] == "terminated" and final["exit_code"] == 0
    assert "hi from the pod" in output_text(api, sid)
    assert "['--in-pod']" in output_text(api, sid)
    ok(api.delete(f"/sessions/{sid}"))
    until(lambda: not target_pods(fake_kubernetes), "the session's pod to be deleted")
    assert any(m == "DELETE" for m, _, _ in fake_kubernetes.requests)


def test_every_line_a_pod_prints_reaches_the_agent(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    shutil.copy(TARGETS / "out_lines.py", image_app / "out_lines.py")
    api, sessions = k8s_relay.http, Sessions(k8s_relay.http)
    mappings = [{"local_root": str(TARGETS), "remote_root": str(image_app)}]
    expected = [f"line {n}" for n in range(3000)] + ["DONE-END"]
    for _ in range(3):
        sid = sessions.create()
        sessions.launch(sid, str(TARGETS / "out_lines.py"), image=IMAGE, path_mappings=mappings)
        final = sessions.wait(sid)
        assert final["status"] == "terminated" and final["exit_code"] == 0
        assert ok(api.get(f"/sessions/{sid}/output", params={"limit": 10000}))["has_more"] is False
        assert output_text(api, sid).splitlines() == expected
        ok(api.delete(f"/sessions/{sid}"))
    until(lambda: not target_pods(fake_kubernetes), "the sessions' pods to be deleted")


def test_deleting_a_running_session_deletes_its_pod(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    api, sessions = k8s_relay.http, Sessions(k8s_relay.http)
    basic = str(TARGETS / "basic.py")
    sid = sessions.create()
    ok(
        api.post(
            f"/sessions/{sid}/launch",
            json={
                "script": basic,
                "stop_on_entry": True,
                "path_mappings": [{"local_root": str(TARGETS), "remote_root": str(image_app)}],
            },
        )
    )
    assert sessions.wait(sid)["status"] == "paused"
    (name,) = target_pods(fake_kubernetes)
    process = fake_kubernetes.pods[name].proc
    assert process is not None and process.poll() is None
    ok(api.delete(f"/sessions/{sid}"))
    until(lambda: not target_pods(fake_kubernetes), "the pod to be deleted")
    assert process.poll() is not None


@pytest.mark.parametrize(
    ("launch", "status", "code"),
    [
        ({"mounts": {"/tmp": "/data"}}, 400, "invalid_request"),
        ({"stdin_inputs": ["42"]}, 400, "invalid_request"),
        ({"limits": {"pids": 10}}, 400, "invalid_request"),
        ({"limits": {"memory": "64g"}}, 403, "refused"),
        ({"image": "evil/miner:latest"}, 403, "refused"),
        # a kubelet pulls what a pod names: no other tag of the public name than the configured image
        ({"image": "debugrelay/target:pushed-by-anyone"}, 403, "refused"),
        ({"image": "debugrelay/base:bookworm"}, 403, "refused"),
        ({"root": True}, 403, "refused"),
        ({"path_mappings": [{"local_root": "relative", "remote_root": "/app"}]}, 400, "invalid_request"),
    ],
)
def test_a_launch_the_policy_refuses_creates_no_pod(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, launch: dict[str, Any], status: int, code: str
) -> None:
    sid = Sessions(k8s_relay.http).create()
    response = k8s_relay.http.post(f"/sessions/{sid}/launch", json={"script": str(TARGETS / "basic.py"), **launch})
    error_of(response, status, code)
    assert fake_kubernetes.created == []
    assert ok(k8s_relay.http.get(f"/sessions/{sid}"))["status"] == "created"


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (PullFailure(None), "ImagePullBackOff"),  # a registry that never has it: retried, then given up
        (PullFailure(None, "InvalidImageName", 'couldn\'t parse image name "example/app:9"'), "InvalidImageName"),
    ],
)
def test_an_image_the_cluster_cannot_pull_fails_the_launch_with_the_reason(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, failure: PullFailure, said: str
) -> None:
    fake_kubernetes.pull_failures["example/app:9"] = failure
    sid = Sessions(k8s_relay.http).create()
    response = k8s_relay.http.post(f"/sessions/{sid}/launch", json={"script": "/app/main.py", "image": "example/app:9"})
    err = error_of(response, 400, "launch_failed")
    assert said in err["message"] and "registry" in err["hint"]
    assert err["details"]["reason"] == said
    until(lambda: not target_pods(fake_kubernetes), "the failed pod to be deleted")


def test_a_pull_the_kubelet_retries_does_not_fail_the_launch(
    tmp_path: Path, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """A registry that refuses twice (a rate limit) then serves: the kubelet's tries take longer than the
    debugger's own start-up budget, and the launch still succeeds."""
    fake_kubernetes.pull_failures[IMAGE] = PullFailure(tries=2)
    fake_kubernetes.pull_backoff = 1.0  # four seconds of pulling, longer than DEBUGRELAY_LAUNCH_TIMEOUT
    relay = start_relay(tmp_path, fake_kubernetes, DEBUGRELAY_LAUNCH_TIMEOUT="3")
    try:
        sessions, sid, _ = paused_in_a_pod(relay, fake_kubernetes, image_app)
        assert fake_kubernetes.pull_failures[IMAGE].attempts == 2
        ok(relay.http.post(f"/sessions/{sid}/continue"))
        final = sessions.wait(sid)
        assert final["status"] == "terminated" and final["exit_code"] == 0
    finally:
        relay.stop()


def test_a_starting_relay_deletes_the_pods_of_sessions_that_are_gone(
    tmp_path: Path, fake_kubernetes: FakeKubernetes
) -> None:
    def pod(name: str, store: str) -> dict[str, Any]:
        labels = {"debugrelay.managed": "true", "debugrelay.store": store, "debugrelay.session": "sess_000000000000"}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": labels},
            "spec": {"containers": []},
        }

    fake_kubernetes.add_pod(pod("orphan", STORE_LABEL), play=False, age=3600)
    fake_kubernetes.add_pod(pod("another-stores", "redis-0123456789abcdef01234567"), play=False, age=3600)
    relay = start_relay(tmp_path, fake_kubernetes)
    try:
        until(lambda: "orphan" not in fake_kubernetes.pods, "the orphaned pod to be deleted")
        assert "another-stores" in fake_kubernetes.pods
    finally:
        relay.stop()


def test_attach_to_a_pod_that_runs_debugpy(k8s_relay: Relay, fake_kubernetes: FakeKubernetes) -> None:
    """A workload someone else deployed, debugpy listening in it: attach by the pod's name."""
    port = free_port()
    loop = str(TARGETS / "loop.py")
    workload = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", loop],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        labels = {"app": "shop", "debugrelay.dev/attachable": "true"}  # the workload opted in
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shop-7d9f", "labels": labels}}
        fake_kubernetes.add_pod({**manifest, "spec": {"containers": []}}, play=False)
        fake_kubernetes.set_status("shop-7d9f", {"phase": "Running", "podIP": "127.0.0.1"})
        api, sessions = k8s_relay.http, Sessions(k8s_relay.http)
        created = ok(api.post("/sessions", json={"mode": "attach", "pod": "shop-7d9f", "port": port}), 201)
        sid = created["session_id"]
        sessions.created.append(sid)
        until(lambda: ok(api.get(f"/sessions/{sid}"))["status"] in ("running", "paused"), "the attach")
        sessions.bp(sid, loop, line_of(loop, "forever"))
        stop = sessions.wait(sid)
        assert stop["status"] == "paused" and stop["location"]["line"] == line_of(loop, "forever")
        ok(api.delete(f"/sessions/{sid}"))
        assert "shop-7d9f" in fake_kubernetes.pods  # someone else's workload: never deleted
        error_of(api.post("/sessions", json={"mode": "attach", "pod": "nope", "port": port}), 400, "invalid_request")
        error_of(api.post("/sessions", json={"mode": "attach", "pod": "Bad_Name", "port": port}), 400)
        other = api.post("/sessions", json={"mode": "attach", "pod": "x", "namespace": "kube-system", "port": port})
        assert error_of(other, 403, "refused")["details"]["namespace"] == "kube-system"
    finally:
        workload.kill()
        workload.wait()


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        ({"app": "shop"}, "does not accept debuggers"),  # not opted in: any pod and port of the namespace
        ({"app": "shop", "debugrelay.dev/attachable": "false"}, "does not accept debuggers"),
        # debugrelay's own pods, whatever else they carry: a relay, its Redis
        (
            {"app.kubernetes.io/name": "debugrelay", "app.kubernetes.io/component": "redis", ATTACHABLE: "true"},
            "one of debugrelay's own",
        ),
        ({"app.kubernetes.io/name": "debugrelay", "app.kubernetes.io/component": "relay"}, "one of debugrelay's own"),
    ],
)
def test_attach_by_pod_reaches_only_pods_that_opted_in(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, labels: dict[str, str], said: str
) -> None:
    # something listens there (as Redis or a relay would): a refusal must come before any connection
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.setblocking(False)
    try:
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "store-0", "labels": labels}}
        fake_kubernetes.add_pod({**manifest, "spec": {"containers": []}}, play=False)
        fake_kubernetes.set_status("store-0", {"phase": "Running", "podIP": "127.0.0.1"})
        api = k8s_relay.http
        before = ok(api.get("/sessions"))["total"]
        error = error_of(api.post("/sessions", json={"mode": "attach", "pod": "store-0", "port": port}), 403, "refused")
        assert said in error["message"] and error["details"]["pod"] == "store-0"
        assert ATTACHABLE in error["hint"] or "own session" in error["hint"]
        assert ok(api.get("/sessions"))["total"] == before
        with pytest.raises(BlockingIOError):
            listener.accept()  # never connected to (a connection would wait in the backlog)
    finally:
        listener.close()


def test_the_kubernetes_launcher_is_offered_only_when_configured(relay: Relay) -> None:
    sid = Sessions(relay.http).create()
    response = relay.http.post(
        f"/sessions/{sid}/launch", json={"script": str(TARGETS / "basic.py"), "launcher": "kubernetes"}
    )
    err = error_of(response, 403, "refused")
    assert err["details"]["setting"] == "DEBUGRELAY_LAUNCHERS" and "kubernetes" not in err["details"]["available"]
    attach = relay.http.post("/sessions", json={"mode": "attach", "pod": "shop-7d9f", "port": 5678})
    assert error_of(attach, 403, "refused")["details"]["launcher"] == "kubernetes"


# -- a cluster less kind than a test bed ---------------------------------------------------------------


def test_a_second_relay_starting_leaves_the_pod_another_is_launching(
    tmp_path: Path, k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """Two replicas of one store: the second reads the store before the first records its new session,
    then finds that session's pod. A pod younger than a launch's budget is never taken for an orphan; one
    older than it is."""
    sessions, sid, pod = paused_in_a_pod(k8s_relay, fake_kubernetes, image_app)
    stale = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "left-by-a-crash",
            "labels": {"debugrelay.managed": "true", "debugrelay.store": STORE_LABEL, "debugrelay.session": "sess_0"},
        },
        "spec": {"containers": []},
    }
    fake_kubernetes.add_pod(stale, play=False, age=3600)
    # the same store label, and a store that does not know the first replica's session yet
    (tmp_path / "second").mkdir()
    second = start_relay(tmp_path / "second", fake_kubernetes)
    try:
        until(lambda: "left-by-a-crash" not in fake_kubernetes.pods, "the old orphan to be deleted")
        assert pod in fake_kubernetes.pods and "deletionTimestamp" not in fake_kubernetes.pods[pod].obj["metadata"]
        assert ok(k8s_relay.http.get(f"/sessions/{sid}"))["status"] == "paused"
        ok(k8s_relay.http.post(f"/sessions/{sid}/continue"))
        final = sessions.wait(sid)
        assert final["status"] == "terminated" and final["exit_code"] == 0
    finally:
        second.stop()


def mute_python(tmp: Path) -> Path:
    """An interpreter that prints a line and never starts the keeper: the launch fails in its pod."""
    mute = tmp / "mute-python"
    mute.write_text("#!/bin/sh\necho no debugger here\nexec sleep 600\n")
    mute.chmod(0o755)
    return mute


def test_a_launch_that_fails_in_its_pod_reports_what_the_pod_printed(
    tmp_path: Path, fake_kubernetes: FakeKubernetes
) -> None:
    relay = start_relay(tmp_path, fake_kubernetes, DEBUGRELAY_LAUNCH_TIMEOUT="3")
    try:
        sid = Sessions(relay.http).create()
        launch = {"script": "/app/main.py", "image": IMAGE, "python": str(mute_python(tmp_path))}
        err = error_of(relay.http.post(f"/sessions/{sid}/launch", json=launch), 400, "launch_failed")
        assert "no debugger here" in err["details"]["output_tail"]
    finally:
        relay.stop()


def test_the_relay_answers_while_the_api_server_hangs_on_a_pod_log(
    tmp_path: Path, fake_kubernetes: FakeKubernetes
) -> None:
    """The pod's log is read while the API server never answers: the relay answers everything else, and
    a failed launch is told without waiting on the log."""
    fake_kubernetes.hang("/log")
    mute = mute_python(tmp_path)
    relay = start_relay(tmp_path, fake_kubernetes, DEBUGRELAY_LAUNCH_TIMEOUT="5")
    try:
        sid = Sessions(relay.http).create()
        answers: list[Any] = []
        launch = threading.Thread(
            target=lambda: answers.append(
                relay.http.post(
                    f"/sessions/{sid}/launch", json={"script": "/app/main.py", "image": IMAGE, "python": str(mute)}
                )
            )
        )
        launch.start()
        until(lambda: fake_kubernetes.open_hung("/log"), "the relay to read the pod's log")
        assert ok(relay.http.get("/livez"))
        assert ok(relay.http.get(f"/sessions/{sid}"))["status"] == "launching"
        assert fake_kubernetes.open_hung("/log"), "the relay answered only once its log read gave up"
        launch.join()
        err = error_of(answers[0], 400, "launch_failed")
        assert "cannot reach debugpy" in err["message"]
        assert ok(relay.http.get(f"/sessions/{sid}"))["status"] == "failed"
    finally:
        relay.stop()


def test_a_pod_deleted_while_the_watch_was_away_ends_its_session(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """The watch drops; meanwhile the pod's node dies and the pod is force-deleted, and the API server's
    history moves past the watch's version: the watch comes back to 410 Gone, lists again, and the
    session ends."""
    _, sid, pod = paused_in_a_pod(k8s_relay, fake_kubernetes, image_app)
    fake_kubernetes.hold_watches()
    until(fake_kubernetes.waiting_watches, "the relay's watch to come back")
    fake_kubernetes.lose_node(pod)
    fake_kubernetes.pod_gc(pod)
    fake_kubernetes.compact()
    fake_kubernetes.resume_watches()
    view = ended(k8s_relay.http, sid)
    assert view["exit_code"] is not None
    assert pod not in fake_kubernetes.pods


def test_a_pod_whose_node_is_lost_ends_its_session(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """The node stops answering (the pod's connection stays open, nothing comes through it); the node
    controller marks the pod not ready and the taint manager deletes it: the session ends, not waits."""
    _, sid, pod = paused_in_a_pod(k8s_relay, fake_kubernetes, image_app)
    fake_kubernetes.lose_node(pod)
    view = ended(k8s_relay.http, sid)
    assert view["exit_code"] is not None
    assert view["description"].endswith("deleted by the taint manager: its node stopped answering")
    assert "deletionTimestamp" in fake_kubernetes.pods[pod].obj["metadata"]  # Terminating: no kubelet confirms


def test_a_pod_the_kubelet_evicts_ends_its_session_with_its_exit_code(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    _, sid, pod = paused_in_a_pod(k8s_relay, fake_kubernetes, image_app)
    fake_kubernetes.evict_for_pressure(pod)
    view = ended(k8s_relay.http, sid)
    assert view["exit_code"] == 137
    assert "Evicted: The node was low on resource: memory" in view["description"]  # why, as the cluster said


def test_a_pod_evicted_while_no_relay_was_attached_is_told_with_the_reason(
    cluster: Cluster, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """The relay is gone (a durable store keeps the session) while the node's kubelet evicts the pod: the
    next relay reads the session as ended, and its output says why."""
    env = relay_env(fake_kubernetes)
    first = cluster.relay(**env)
    _, sid, pod = paused_in_a_pod(first, fake_kubernetes, image_app)
    first.proc.kill()
    first.proc.wait(10)
    fake_kubernetes.evict_for_pressure(pod)
    second = cluster.relay(**env)
    view = until(lambda: (v := ok(second.http.get(f"/sessions/{sid}")))["status"] == "terminated" and v, "its end")
    assert view["exit_code"] == 137 and view["recovered"] is True

    def logged() -> str:
        return "".join(
            o["text"] for o in ok(second.http.get(f"/sessions/{sid}/output"))["outputs"] if o["type"] == "log"
        )

    told = until(logged, "the end of the pod's log in the session's output")
    assert "Evicted: The node was low on resource: memory" in told


def test_a_pod_evicted_through_the_api_ends_its_session(
    k8s_relay: Relay, fake_kubernetes: FakeKubernetes, image_app: Path
) -> None:
    """kubectl drain evicts: a graceful deletion, the keeper told to end."""
    _, sid, pod = paused_in_a_pod(k8s_relay, fake_kubernetes, image_app)
    with Client(KubeConfig.from_file(fake_kubernetes.admin_kubeconfig), namespace=NAMESPACE) as admin:
        admin.create(Pod.Eviction(metadata=ObjectMeta(name=pod, namespace=NAMESPACE)), pod)
    view = ended(k8s_relay.http, sid)
    assert view["exit_code"] is not None
    until(lambda: pod not in fake_kubernetes.pods, "the evicted pod to go")


# -- the fake API server is no kinder than a cluster ----------------------------------------------------


def test_the_fake_api_server_refuses_what_the_relays_role_does_not_grant(fake_kubernetes: FakeKubernetes) -> None:
    """RBAC from the Role deploy/ binds to the relay's ServiceAccount, rendered by kubectl kustomize."""
    if fake_kubernetes.role is None:
        pytest.skip("kubectl cannot render deploy/ here: RBAC is not enforced")
    with Client(KubeConfig.from_file(fake_kubernetes.kubeconfig), namespace=NAMESPACE) as relay:
        assert list(relay.list(Pod)) == []  # granted
        with pytest.raises(ApiError) as secrets:
            list(relay.list(Secret))
        with pytest.raises(ApiError) as eviction:
            relay.create(Pod.Eviction(metadata=ObjectMeta(name="p", namespace=NAMESPACE)), "p")
    assert secrets.value.status.code == 403 and secrets.value.status.reason == "Forbidden"
    assert secrets.value.status.message == (
        'secrets is forbidden: User "system:serviceaccount:debug:debugrelay" cannot list resource "secrets" '
        'in API group "" in the namespace "debug"'
    )
    assert 'cannot create resource "pods/eviction"' in str(eviction.value.status.message)


def test_the_fake_api_server_answers_gone_for_a_version_it_no_longer_keeps(fake_kubernetes: FakeKubernetes) -> None:
    with Client(KubeConfig.from_file(fake_kubernetes.kubeconfig), namespace=NAMESPACE) as client:
        pods = client.list(Pod)
        assert list(pods) == []
        version = pods.resourceVersion
        manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": []}}
        fake_kubernetes.add_pod(manifest, play=False)
        fake_kubernetes.compact()
        with pytest.raises(ApiError) as gone:
            next(iter(client.watch(Pod, resource_version=version)))
    assert gone.value.status.code == 410 and gone.value.status.reason == "Expired"


def test_the_fake_api_server_deletes_a_pod_gracefully(fake_kubernetes: FakeKubernetes) -> None:
    """The pod is marked, its process told to end (SIGTERM), its end reported, and only then is it gone."""
    polite = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *_: sys.exit(print('bye', flush=True)))\n"
        "time.sleep(600)"
    )
    container = {"name": "target", "image": IMAGE, "command": ["python", "-c", polite]}
    labels = {"debugrelay.managed": "true"}
    manifest = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "polite", "labels": labels}}
    fake_kubernetes.add_pod({**manifest, "spec": {"containers": [container]}})
    until(lambda: fake_kubernetes.pods["polite"].obj["status"]["phase"] == "Running", "the pod to run")
    with Client(KubeConfig.from_file(fake_kubernetes.kubeconfig), namespace=NAMESPACE) as client:
        seen = []
        before = client.list(Pod)
        assert [p.metadata.name for p in before] == ["polite"]
        client.delete(Pod, "polite", grace_period=30)
        for op, pod in client.watch(Pod, resource_version=before.resourceVersion):
            seen.append((op, pod.metadata.deletionTimestamp is not None, pod.status.phase))
            if op == "DELETED":
                break
    assert ("MODIFIED", True, "Running") in seen
    assert seen[-2:] == [("MODIFIED", True, "Succeeded"), ("DELETED", True, "Succeeded")]
    assert "bye" in (fake_kubernetes.workdir / "polite.log").read_text()
