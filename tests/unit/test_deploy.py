"""deploy/: every kustomization renders with kubectl's built-in kustomize, every object validates against
the Kubernetes schemas of KUBERNETES_VERSION, nothing in it can run as root or escalate, and what a first
install on a real cluster meets holds: versioned images renamed by one `images:` block, launch settings
per overlay, a bounded Redis probed by its own client, DNS egress that NodeLocal DNSCache serves, a
namespace one may bring oneself, and what Prometheus needs to scrape the relays."""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from debugrelay.api.server import STORE_CHECK_SECONDS
from debugrelay.config import load_settings
from debugrelay.launchers.kubernetes_pod import pod_manifest
from debugrelay.launchers.policy import LaunchPolicy
from debugrelay.models import LaunchRequest
from tests.conftest import free_port
from tests.kustomize import DEPLOY, MIN_KUBECTL, ROOT, VERSION, build, kubectl_problem, kustomize_version, overlay

OVERLAYS = ("dev", "team")
KUBERNETES_VERSION = "1.32.0"  # the schemas every object is checked against (kubectl here is 1.32)
PSS_VERSION = "v" + ".".join(KUBERNETES_VERSION.split(".")[:2])  # the Pod Security Standards enforced: not "latest"
WORKLOADS = ("Deployment", "StatefulSet", "Pod")
IMAGES = ("relay", "redis", "target")
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]
NODELOCAL_DNS = "169.254.20.10"  # NodeLocal DNSCache's usual address, on every node (not a pod)
RELAY = {"app.kubernetes.io/name": "debugrelay", "app.kubernetes.io/component": "relay"}
TARGET = {"app.kubernetes.io/managed-by": "debugrelay", "app.kubernetes.io/component": "target"}
SCRAPER_NAMESPACE = {"kubernetes.io/metadata.name": "monitoring"}
README = (ROOT / "README.md").read_text()


@functools.cache
def _problem() -> str | None:
    return kubectl_problem()


def render(path: Path | str) -> list[dict[str, Any]]:
    """The objects of an overlay (by name) or of a kustomization (by path); skipped without kubectl 1.27+."""
    if (why := _problem()) is not None:
        pytest.skip(why)
    return build(DEPLOY / "overlays" / path if isinstance(path, str) else path)


def one(objects: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == kind and name in (None, o["metadata"]["name"])]
    return obj


def pod_specs(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    specs = []
    for obj in objects:
        if obj["kind"] in WORKLOADS:
            spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
            specs.append((f"{obj['kind']}/{obj['metadata']['name']}", spec))
    return specs


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


def relay_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (relay,) = one(objects, "Deployment", "debugrelay")["spec"]["template"]["spec"]["containers"]
    return relay


def redis_container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (redis,) = one(objects, "StatefulSet", "debugrelay-redis")["spec"]["template"]["spec"]["containers"]
    return redis


def relay_settings(objects: list[dict[str, Any]]) -> dict[str, str]:
    """The relay's DEBUGRELAY_* environment: its ConfigMaps (envFrom), then its own literal values."""
    relay = relay_container(objects)
    env: dict[str, str] = {}
    for source in relay.get("envFrom", []):
        env.update(one(objects, "ConfigMap", source["configMapRef"]["name"]).get("data", {}))
    env.update({e["name"]: e["value"] for e in relay["env"] if "value" in e})
    return {k: v for k, v in env.items() if k.startswith("DEBUGRELAY_")}


def redis_config(objects: list[dict[str, Any]]) -> dict[str, str]:
    """Redis's configuration as the server reads it: the mounted file, its includes resolved in order."""
    redis = redis_container(objects)
    spec = one(objects, "StatefulSet", "debugrelay-redis")["spec"]["template"]["spec"]
    files: dict[str, str] = {}
    for mount in redis["volumeMounts"]:
        (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]] or [{}]
        if "configMap" in volume:
            data = one(objects, "ConfigMap", volume["configMap"]["name"])["data"]
            files.update({f"{mount['mountPath']}/{key}": text for key, text in data.items()})
    config: dict[str, str] = {}

    def read(path: str) -> None:
        for line in files[path].splitlines():
            key, _, value = line.strip().partition(" ")
            if key == "include":
                read(value.strip())
            elif key and not key.startswith("#"):
                config[key] = value.strip()

    (conf,) = [a for a in redis["args"] if a in files]
    read(conf)
    return config


def quantity(text: str) -> int:
    """Bytes of a Kubernetes quantity (512Mi) or a Redis size (384mb)."""
    units = {"ki": 1024, "mi": 1024**2, "gi": 1024**3, "kb": 1024, "mb": 1024**2, "gb": 1024**3}
    found = re.fullmatch(r"(\d+)([a-zA-Z]*)", text.strip())
    assert found, text
    return int(found[1]) * units.get(found[2].lower(), 1)


def admits(rules: list[dict[str, Any]], ip: str, port: int | str, protocol: str = "TCP") -> bool:
    """Whether NetworkPolicy rules let traffic to (or from) ``ip`` that belongs to no pod through."""
    for rule in rules:
        peers = rule.get("to", rule.get("from"))
        ports = rule.get("ports")
        if ports and not any(p.get("protocol", "TCP") == protocol and p.get("port") in (port, None) for p in ports):
            continue
        if peers is None or any(
            "ipBlock" in peer
            and ipaddress.ip_address(ip) in ipaddress.ip_network(peer["ipBlock"]["cidr"])
            and not any(ipaddress.ip_address(ip) in ipaddress.ip_network(c) for c in peer["ipBlock"].get("except", []))
            for peer in peers
        ):
            return True
    return False


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


@pytest.fixture(scope="module")
def with_components(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The team overlay with every optional component: what the largest install applies."""
    return render(
        overlay(
            tmp_path_factory.mktemp("all"),
            "namespace: debugrelay\nresources: [{deploy}/overlays/team]\n"
            "components: [{deploy}/components/namespace, {deploy}/components/servicemonitor,"
            " {deploy}/components/credentials]\n",
        )
    )


# -- what every kustomization keeps -----------------------------------------------------------------------


def test_every_rendered_object_validates_against_the_kubernetes_schemas(rendered: list[dict[str, Any]]) -> None:
    assert {o["kind"] for o in rendered} >= {
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "StatefulSet",
        "NetworkPolicy",
        "ConfigMap",
    }
    for obj in [*rendered, *render(DEPLOY / "namespace")]:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)  # raises on the first error


def test_no_container_can_run_as_root_or_escalate(rendered: list[dict[str, Any]]) -> None:
    specs = pod_specs(rendered)
    assert specs
    for name, spec in specs:
        pod = spec.get("securityContext", {})
        assert pod.get("runAsNonRoot") is True, name
        assert pod.get("runAsUser", 0) != 0, name
        assert pod.get("seccompProfile") == {"type": "RuntimeDefault"}, name
        for container in containers(spec):
            where = f"{name}/{container['name']}"
            sc = container.get("securityContext", {})
            assert sc.get("allowPrivilegeEscalation") is False, where
            assert sc.get("readOnlyRootFilesystem") is True, where
            assert sc.get("capabilities") == {"drop": ["ALL"]}, where
            assert not sc.get("privileged"), where
            assert sc.get("runAsUser", pod["runAsUser"]) != 0, where
            resources = container.get("resources", {})
            assert {"cpu", "memory"} <= set(resources.get("requests", {})), where
            assert {"cpu", "memory"} <= set(resources.get("limits", {})), where


def test_the_relays_role_is_namespaced_and_least_privilege(rendered: list[dict[str, Any]]) -> None:
    assert not [o for o in rendered if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    role = one(rendered, "Role")
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in role["rules"]}
    assert rules == {
        (("",), ("pods",)): {"create", "get", "list", "watch", "delete"},
        (("",), ("pods/log",)): {"get"},
    }
    binding = one(rendered, "RoleBinding")
    assert binding["roleRef"]["kind"] == "Role"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "debugrelay", "namespace": "debugrelay"}]


# -- 1. images ------------------------------------------------------------------------------------------


def test_every_image_is_a_versioned_tag_never_latest(rendered: list[dict[str, Any]]) -> None:
    """The images and the target image a launch runs by default carry the package's version: a cluster
    pulls that tag from a registry (or finds it side-loaded), never a moving `latest`."""
    images = [c["image"] for _, spec in pod_specs(rendered) for c in containers(spec)]
    images.append(relay_settings(rendered)["DEBUGRELAY_KUBERNETES_IMAGE"])
    assert len(images) == 3
    for image in images:
        assert image.rsplit(":", 1)[-1] == VERSION, image
    assert {image.rsplit(":", 1)[0].rsplit("/", 1)[-1] for image in images} == set(IMAGES)
    pulls = {c["imagePullPolicy"] for _, spec in pod_specs(rendered) for c in containers(spec)}
    assert pulls == {"IfNotPresent"}  # a versioned tag does not move: pulled once per node


def test_the_team_overlay_names_a_registry_for_every_image() -> None:
    team = render("team")
    images = [c["image"] for _, spec in pod_specs(team) for c in containers(spec)]
    images.append(relay_settings(team)["DEBUGRELAY_KUBERNETES_IMAGE"])
    assert sorted(images) == sorted(f"registry.example.com/debugrelay/{i}:{VERSION}" for i in IMAGES)


def test_one_images_block_renames_every_image_the_relays_run_or_launch(tmp_path: Path) -> None:
    """kustomize's `images:` in one's own overlay renames the relay, Redis and the target image a launch
    runs by default (a setting, which `images:` alone would not reach)."""
    renames = "".join(
        f"  - {{name: debugrelay/{i}, newName: reg.example.net/tools/{i}, newTag: '2.0.1'}}\n" for i in IMAGES
    )
    mine = render(overlay(tmp_path, f"resources: [{{deploy}}/overlays/dev]\nimages:\n{renames}"))
    images = [c["image"] for _, spec in pod_specs(mine) for c in containers(spec)]
    assert sorted(images) == ["reg.example.net/tools/redis:2.0.1", "reg.example.net/tools/relay:2.0.1"]
    assert relay_settings(mine)["DEBUGRELAY_KUBERNETES_IMAGE"] == "reg.example.net/tools/target:2.0.1"


def test_an_image_pull_secret_reaches_every_pod_the_overlay_runs(tmp_path: Path) -> None:
    mine = render(
        overlay(
            tmp_path,
            "namespace: debugrelay\nresources: [{deploy}/overlays/team]\n"
            "components: [{deploy}/components/image-pull-secret]\n",
        )
    )
    pull = [{"name": "debugrelay-pull"}]
    assert one(mine, "ServiceAccount", "debugrelay")["imagePullSecrets"] == pull  # the relays' pods
    # Redis's pods and the target pods (the relay names no service account for them) run as `default`
    assert one(mine, "ServiceAccount", "default")["imagePullSecrets"] == pull
    assert {spec.get("serviceAccountName", "default") for _, spec in pod_specs(mine)} == {"debugrelay", "default"}
    assert {o["metadata"]["namespace"] for o in mine if o["kind"] == "ServiceAccount"} == {"debugrelay"}


def test_the_image_build_tags_the_package_version(tmp_path: Path) -> None:
    """docker/build-images.sh tags each image with the version deploy/ names (and `latest`, which compose
    and the tests run)."""
    script = tmp_path / "docker" / "build-images.sh"
    script.parent.mkdir()
    shutil.copy(ROOT / "docker" / "build-images.sh", script)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    calls = tmp_path / "calls"
    fake = tmp_path / "bin" / "docker"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n[ "$1 $2" = "image inspect" ] && echo 1000000\nexit 0\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}", "BASE_IMAGE": "python:3.11-slim"}
    out = subprocess.run([str(script), "redis"], env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    (built,) = [line.split() for line in calls.read_text().splitlines() if line.startswith("build ")]
    tags = [built[i + 1] for i, arg in enumerate(built) if arg == "--tag"]
    assert tags == ["debugrelay/redis:latest", f"debugrelay/redis:{VERSION}"]


# -- settings per overlay ---------------------------------------------------------------------------------


def readme_kubernetes() -> str:
    return README.split("## On Kubernetes", 1)[1].split("\n## ", 1)[0]


def test_the_launch_settings_come_from_the_overlay_and_admit_the_readmes_example(
    rendered: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The target image, the images a launch may name and the launch timeout are an overlay's ConfigMap
    (`configMapGenerator`, read with `envFrom`), and the team overlay admits the image the README launches."""
    relay = relay_container(rendered)
    (source,) = relay["envFrom"]
    data = one(rendered, "ConfigMap", source["configMapRef"]["name"])["data"]
    assert {"DEBUGRELAY_KUBERNETES_IMAGE", "DEBUGRELAY_ALLOWED_IMAGES", "DEBUGRELAY_KUBERNETES_START_TIMEOUT"} <= set(
        data
    )
    for name in list(os.environ):
        if name.startswith("DEBUGRELAY_"):
            monkeypatch.delenv(name)
    for name, value in relay_settings(rendered).items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    # scheduling, a cold pull of a real image, init and start, or a node added by the autoscaler
    assert settings.kubernetes_start_timeout >= 120
    policy = LaunchPolicy.from_settings(settings, pulled=True)  # as the Kubernetes launcher reads it
    assert policy.image(settings.kubernetes_image) == settings.kubernetes_image
    if relay_settings(rendered)["DEBUGRELAY_KUBERNETES_IMAGE"].startswith("registry.example.com/"):  # team
        examples = re.findall(r'"image": "([^"]+)"', readme_kubernetes())
        assert examples
        for image in examples:
            assert policy.image(image) == image


def test_the_readme_names_every_setting_deploy_sets(rendered: list[dict[str, Any]]) -> None:
    names = set(relay_settings(rendered)) | {e["name"] for e in relay_container(rendered)["env"]}
    for name in sorted(n for n in names if n.startswith("DEBUGRELAY_")):
        assert f"`{name}`" in README, name
    assert "| `DEBUGRELAY_LAUNCH_TIMEOUT` | `20` |" in README


# -- 2. probes ------------------------------------------------------------------------------------------


def test_the_relay_is_probed_without_restarts_for_a_stalled_store_and_advertises_its_pod_ip(
    rendered: list[dict[str, Any]],
) -> None:
    """Liveness never asks the state store; readiness does, and answers within its probe's timeout."""
    relay = relay_container(rendered)
    ready, live = relay["readinessProbe"], relay["livenessProbe"]
    assert (ready["httpGet"]["path"], live["httpGet"]["path"]) == ("/readyz", "/livez")
    assert ready["timeoutSeconds"] > STORE_CHECK_SECONDS and live["timeoutSeconds"] > STORE_CHECK_SECONDS
    env = {e["name"]: e for e in relay["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["DEBUGRELAY_ADVERTISE_URL"]["value"] == "http://$(POD_IP):8765"
    assert env["DEBUGRELAY_LAUNCHERS"]["value"] == "kubernetes"


# -- 4. Redis -------------------------------------------------------------------------------------------


def test_redis_requires_the_password_the_relays_are_given_from_the_secret(rendered: list[dict[str, Any]]) -> None:
    """The Secret's password reaches redis-server on its standard input: on no command line of the node
    (the kubelet expands ``$(VAR)`` in a command; the shell reads ``$VAR`` from its own environment)."""
    server = redis_container(rendered)
    command = [*server["command"], *server["args"]]
    assert not any("$(REDIS_PASSWORD)" in part or "requirepass" in part.split("<<")[0] for part in command)
    assert "requirepass $REDIS_PASSWORD" in server["command"][2]
    secret_ref = {"secretKeyRef": {"name": "debugrelay-secrets", "key": "redis-password"}}
    assert {"name": "REDIS_PASSWORD", "valueFrom": secret_ref} in server["env"]
    env = {e["name"]: e for e in relay_container(rendered)["env"]}
    assert env["REDIS_PASSWORD"]["valueFrom"] == secret_ref
    assert env["DEBUGRELAY_REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@debugrelay-redis:6379/0"
    assert env["DEBUGRELAY_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "debugrelay-secrets"
    # dependent variables expand only when defined earlier in the list
    names = list(env)
    assert names.index("REDIS_PASSWORD") < names.index("DEBUGRELAY_REDIS_URL")
    assert names.index("POD_IP") < names.index("DEBUGRELAY_ADVERTISE_URL")


def test_redis_refuses_writes_when_full_instead_of_being_killed(rendered: list[dict[str, Any]]) -> None:
    """maxmemory under the container's limit, with room for the fork of an AOF rewrite and for client
    buffers; `noeviction`: a full Redis answers writes with an error, and loses no session."""
    config = redis_config(rendered)
    limit = quantity(redis_container(rendered)["resources"]["limits"]["memory"])
    assert 0 < quantity(config["maxmemory"]) <= 0.8 * limit
    assert config["maxmemory-policy"] == "noeviction"


def test_the_aof_overlay_changes_only_what_persists() -> None:
    dev, team = render("dev"), render("team")
    assert redis_container(dev)["args"] == redis_container(team)["args"]
    dev_config, team_config = redis_config(dev), redis_config(team)
    assert (dev_config["appendonly"], team_config["appendonly"]) == ("no", "yes")
    differing = {k for k in dev_config.keys() | team_config.keys() if dev_config.get(k) != team_config.get(k)}
    assert differing <= {"appendonly", "appendfsync", "save"}
    patch = (DEPLOY / "overlays" / "team" / "redis-aof.yaml").read_text()
    assert "args" not in patch and "--" not in patch


class RedisProbeCase:
    """A local redis-server started from the rendered configuration (the paths and port of this machine)."""

    def __init__(self, objects: list[dict[str, Any]], tmp: Path, password: str) -> None:
        server = redis_container(objects)
        spec = one(objects, "StatefulSet", "debugrelay-redis")["spec"]["template"]["spec"]
        self.port = free_port()
        self.password = password
        texts: dict[str, str] = {}
        for mount in server["volumeMounts"]:
            (volume,) = [v for v in spec["volumes"] if v["name"] == mount["name"]] or [{}]
            if "configMap" in volume:
                data = one(objects, "ConfigMap", volume["configMap"]["name"])["data"]
                texts.update({f"{mount['mountPath']}/{key}": text for key, text in data.items()})
        mounts = sorted((m["mountPath"] for m in server["volumeMounts"]), key=len, reverse=True)
        for path, text in texts.items():
            local = text
            for mount in mounts:  # every volume is this folder here
                local = local.replace(mount, str(tmp))
            (tmp / Path(path).name).write_text(local)
        args = [str(tmp / Path(a).name) if a in texts else a for a in server["args"]]
        self.process = subprocess.Popen(
            [*server["command"], *args, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(tmp)],
            env={**os.environ, "REDIS_PASSWORD": password},  # the Secret's, as the kubelet sets it
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.readiness = self.probe(server["readinessProbe"])
        self.liveness = self.probe(server["livenessProbe"])

    def probe(self, probe: dict[str, Any]) -> tuple[list[str], float]:
        command = [part.replace("6379", str(self.port)) for part in probe["exec"]["command"]]
        return command, probe["timeoutSeconds"]

    def passes(self, probe: tuple[list[str], float], password: str | None = None) -> bool:
        """What the kubelet concludes: the command exits 0 within the probe's timeout."""
        command, timeout = probe
        env = {"PATH": os.environ["PATH"], "REDISCLI_AUTH": password or self.password}
        try:
            return subprocess.run(command, env=env, capture_output=True, timeout=timeout, check=False).returncode == 0
        except subprocess.TimeoutExpired:
            return False


@pytest.fixture
def redis_probes(tmp_path: Path) -> Iterator[RedisProbeCase]:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server and redis-cli are not installed (make system-deps)")
    case = RedisProbeCase(render("team"), tmp_path, "s3cret-pass")
    try:
        for _ in range(200):
            if case.passes(case.readiness):
                break
            threading.Event().wait(0.05)
        yield case
    finally:
        case.process.send_signal(signal.SIGCONT)
        case.process.terminate()
        case.process.wait(10)


@pytest.mark.slow
def test_redis_probes_ask_redis_itself_with_the_password(redis_probes: RedisProbeCase) -> None:
    """Readiness and liveness run `redis-cli ping` with the password from the environment: they pass on a
    Redis that answers, fail on a wrong password, and fail on a hung Redis within their timeout (a TCP probe
    passed there, as the kernel still accepts connections)."""
    assert redis_probes.passes(redis_probes.readiness)
    assert redis_probes.passes(redis_probes.liveness)
    assert not redis_probes.passes(redis_probes.readiness, password="wrong")
    redis_probes.process.send_signal(signal.SIGSTOP)  # accepts connections (the kernel), never answers
    try:
        with socket.create_connection(("127.0.0.1", redis_probes.port), timeout=1):
            pass
        assert not redis_probes.passes(redis_probes.readiness)
        assert not redis_probes.passes(redis_probes.liveness)
    finally:
        redis_probes.process.send_signal(signal.SIGCONT)


def test_a_loading_redis_is_alive_but_not_ready(tmp_path: Path) -> None:
    """While Redis loads its append-only file it answers LOADING: out of the Service, not restarted."""
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli is not installed (make system-deps)")
    server = redis_container(render("team"))
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def loading() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:  # redis-cli sends AUTH (REDISCLI_AUTH) and waits, then PING
                while data := conn.recv(4096):
                    auth = b"AUTH" in data.upper()
                    conn.sendall(b"+OK\r\n" if auth else b"-LOADING Redis is loading the dataset in memory\r\n")

    threading.Thread(target=loading, daemon=True).start()
    try:
        results = {}
        for name in ("readinessProbe", "livenessProbe"):
            command = [part.replace("6379", str(port)) for part in server[name]["exec"]["command"]]
            env = {"PATH": os.environ["PATH"], "REDISCLI_AUTH": "pw"}
            out = subprocess.run(command, env=env, capture_output=True, timeout=10, check=False)
            results[name] = out.returncode == 0
        assert results == {"readinessProbe": False, "livenessProbe": True}
    finally:
        listener.close()


# -- 5. network -----------------------------------------------------------------------------------------


def policies_of(objects: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "NetworkPolicy"}


def test_targets_reach_only_dns_and_only_relays_reach_targets_and_redis(rendered: list[dict[str, Any]]) -> None:
    policies = policies_of(rendered)
    targets = policies["debugrelay-targets"]
    assert targets["podSelector"]["matchLabels"] == TARGET
    assert set(targets["policyTypes"]) == {"Ingress", "Egress"}
    assert [peer["podSelector"]["matchLabels"] for peer in targets["ingress"][0]["from"]] == [RELAY]
    assert targets["egress"] == [{"ports": DNS_PORTS}]  # DNS wherever the cluster serves it, nothing else
    redis = policies["debugrelay-redis"]
    assert [peer["podSelector"]["matchLabels"] for peer in redis["ingress"][0]["from"]] == [RELAY]
    assert redis["egress"] == []


@pytest.mark.parametrize("policy", ["debugrelay-targets", "debugrelay-relays-egress"])
def test_dns_egress_reaches_nodelocal_dnscache_and_nothing_else_on_other_ports(
    rendered: list[dict[str, Any]], policy: str
) -> None:
    """NodeLocal DNSCache answers on a link-local address of each node (no pod a podSelector could name);
    other set-ups run DNS outside kube-system or outside the cluster: DNS egress names the port only."""
    egress = policies_of(rendered)[policy]["egress"]
    for protocol in ("UDP", "TCP"):
        assert admits(egress, NODELOCAL_DNS, 53, protocol)
        assert admits(egress, "10.96.0.10", 53, protocol)  # a kube-dns Service's address
    if policy == "debugrelay-targets":
        assert not admits(egress, "10.96.0.10", 443)
        assert not admits(egress, "1.1.1.1", 80)


def test_the_debug_port_is_named_where_the_target_pod_declares_it(rendered: list[dict[str, Any]]) -> None:
    """The policies name the target container's port `debug`, so DEBUGRELAY_KUBERNETES_PORT may change
    without the NetworkPolicies."""
    settings = load_settings(kubernetes_port=6000, kubernetes_image=f"debugrelay/target:{VERSION}")
    manifest, _ = pod_manifest(
        LaunchRequest(script="/srv/app/main.py"),
        settings=settings,
        policy=LaunchPolicy.from_settings(settings, pulled=True),
        namespace="debugrelay",
        store_label="s",
        session_id="ses_1",
        boot_image=f"debugrelay/relay:{VERSION}",
        secret="x",
    )
    declared = {p["name"]: p["containerPort"] for c in manifest["spec"]["containers"] for p in c.get("ports", [])}
    assert declared == {"debug": 6000}
    policies = policies_of(rendered)
    assert policies["debugrelay-targets"]["ingress"][0]["ports"] == [{"protocol": "TCP", "port": "debug"}]
    to_targets = [
        r
        for r in policies["debugrelay-relays-egress"]["egress"]
        if r.get("to") == [{"podSelector": {"matchLabels": TARGET}}]
    ]
    assert [r["ports"] for r in to_targets] == [[{"protocol": "TCP", "port": "debug"}]]


def test_relays_reach_only_dns_redis_their_targets_opted_in_pods_each_other_and_the_api_server(
    rendered: list[dict[str, Any]],
) -> None:
    policies = list(policies_of(rendered).values())
    # every policy selecting the relays: their egress is the union of these, denied outside it
    egress = [p for p in policies if p["podSelector"].get("matchLabels") == RELAY and "Egress" in p["policyTypes"]]
    assert len(egress) == 1
    rules = egress[0]["egress"]
    attachable = {
        "matchExpressions": [
            {"key": "debugrelay.dev/attachable", "operator": "In", "values": ["true"]},
            {"key": "app.kubernetes.io/name", "operator": "NotIn", "values": ["debugrelay"]},
        ]
    }
    assert rules == [
        {"ports": DNS_PORTS},
        {
            "to": [{"podSelector": {"matchLabels": {**RELAY, "app.kubernetes.io/component": "redis"}}}],
            "ports": [{"protocol": "TCP", "port": 6379}],
        },
        {"to": [{"podSelector": {"matchLabels": TARGET}}], "ports": [{"protocol": "TCP", "port": "debug"}]},
        {"to": [{"podSelector": attachable}]},  # the debugpy port a workload chose
        {"to": [{"podSelector": {"matchLabels": RELAY}}], "ports": [{"protocol": "TCP", "port": 8765}]},
        # the API server: its address is the cluster's, so its ports only (the file says how to narrow it)
        {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
    ]
    # no rule reaches a whole namespace or the whole cluster
    peers = [peer for rule in rules for peer in rule.get("to", [])]
    assert all(peer["namespaceSelector"].get("matchLabels") for peer in peers if "namespaceSelector" in peer)
    assert not [peer for peer in peers if "ipBlock" in peer]


# -- 6. namespace ---------------------------------------------------------------------------------------


def test_the_overlays_do_not_create_their_namespace(rendered: list[dict[str, Any]]) -> None:
    """A team without rights on Namespace objects applies an overlay into a namespace it was given."""
    assert not [o for o in rendered if o["kind"] == "Namespace"]
    assert {o["metadata"].get("namespace") for o in rendered} == {"debugrelay"}


def test_the_namespace_enforces_the_restricted_standard_of_a_pinned_version() -> None:
    (namespace,) = render(DEPLOY / "namespace")
    assert (namespace["kind"], namespace["metadata"]["name"]) == ("Namespace", "debugrelay")
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "warn", "audit"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
        assert labels[f"pod-security.kubernetes.io/{mode}-version"] == PSS_VERSION


def test_a_team_brings_its_own_namespace(tmp_path: Path) -> None:
    """One's own overlay names the namespace: every object lands there, the relay answers to its Service's
    names in it, and the optional component creates that namespace for those who may."""
    mine = render(overlay(tmp_path / "mine", "namespace: team-a\nresources: [{deploy}/overlays/team]\n"))
    assert not [o for o in mine if o["kind"] == "Namespace"]
    assert {o["metadata"].get("namespace") for o in mine} == {"team-a"}
    assert one(mine, "RoleBinding")["subjects"][0]["namespace"] == "team-a"
    assert "debugrelay.debugrelay" not in json.dumps(mine)  # no Service name of the default namespace
    env = [e["name"] for e in relay_container(mine)["env"]]
    hosts = next(e["value"] for e in relay_container(mine)["env"] if e["name"] == "DEBUGRELAY_ALLOWED_HOSTS")
    assert "debugrelay.$(POD_NAMESPACE).svc" in hosts.split(",")
    assert env.index("POD_NAMESPACE") < env.index("DEBUGRELAY_ALLOWED_HOSTS")
    created = render(
        overlay(
            tmp_path / "created",
            "namespace: team-a\nresources: [{deploy}/overlays/team]\ncomponents: [{deploy}/components/namespace]\n",
        )
    )
    namespace = one(created, "Namespace")
    assert namespace["metadata"]["name"] == "team-a"
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce-version"] == PSS_VERSION


# -- 7. scraping ----------------------------------------------------------------------------------------


def test_prometheus_finds_the_relays_and_is_let_in(rendered: list[dict[str, Any]]) -> None:
    deployment = one(rendered, "Deployment", "debugrelay")
    (port,) = [p["containerPort"] for p in relay_container(rendered)["ports"] if p["name"] == "http"]
    scrape = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port), "prometheus.io/path": "/metrics"}
    assert deployment["spec"]["template"]["metadata"]["annotations"].items() >= scrape.items()
    # not the Service too: a Prometheus discovering both would scrape each relay twice
    assert "prometheus.io/scrape" not in one(rendered, "Service", "debugrelay")["metadata"].get("annotations", {})
    ingress = policies_of(rendered)["debugrelay-relays"]["ingress"]
    scraper = [r for r in ingress if r.get("from") == [{"namespaceSelector": {"matchLabels": SCRAPER_NAMESPACE}}]]
    assert [r["ports"] for r in scraper] == [[{"protocol": "TCP", "port": port}]]


def test_the_servicemonitor_scrapes_metrics_with_the_relays_token(with_components: list[dict[str, Any]]) -> None:
    monitor = one(with_components, "ServiceMonitor")
    service = one(with_components, "Service", "debugrelay")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]  # where the Secret is
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in [p["name"] for p in service["spec"]["ports"]]
    assert endpoint["path"] == "/metrics"
    token = {"name": "debugrelay-secrets", "key": "token"}
    assert endpoint["authorization"] == {"type": "Bearer", "credentials": token}
    for obj in with_components:
        if obj["kind"] != "ServiceMonitor":  # a prometheus-operator resource: no schema in kubernetes_validate
            kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def test_a_team_relays_credentials_come_from_a_secret_mounted_as_a_folder(
    with_components: list[dict[str, Any]], tmp_path: Path
) -> None:
    """The credentials component: the Secret's `credentials.toml` where DEBUGRELAY_CREDENTIALS names it,
    mounted as a folder (a Secret mounted as one file with subPath never sees an update)."""
    deployment = one(with_components, "Deployment", "debugrelay")
    spec = deployment["spec"]["template"]["spec"]
    relay = spec["containers"][0]
    named = {e["name"]: e.get("value") for e in relay["env"]}["DEBUGRELAY_CREDENTIALS"]
    (mount,) = [m for m in relay["volumeMounts"] if m["name"] == "credentials"]
    assert mount["readOnly"] is True and "subPath" not in mount
    assert named == f"{mount['mountPath']}/credentials.toml"
    (volume,) = [v for v in spec["volumes"] if v["name"] == "credentials"]
    assert volume["secret"]["secretName"] == "debugrelay-credentials"
    assert volume["secret"]["defaultMode"] & 0o007 == 0  # nobody but the relay's user and group
    assert "debugrelay-credentials" in readme_kubernetes() or "debugrelay-credentials" in README


# -- the overlays -----------------------------------------------------------------------------------------


def test_the_overlays_differ_as_documented() -> None:
    dev, team = render("dev"), render("team")
    assert one(dev, "Deployment")["spec"]["replicas"] == 1
    assert one(team, "Deployment")["spec"]["replicas"] >= 2
    dev_redis, team_redis = one(dev, "StatefulSet"), one(team, "StatefulSet")
    assert "volumeClaimTemplates" not in dev_redis["spec"]
    assert [t["metadata"]["name"] for t in team_redis["spec"]["volumeClaimTemplates"]] == ["data"]
    assert not [v for v in team_redis["spec"]["template"]["spec"].get("volumes", []) if v["name"] == "data"]
    assert one(team, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"] == RELAY


# -- 9. which kubectl -----------------------------------------------------------------------------------


def test_an_old_kubectl_is_refused_with_the_version_deploy_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Debian's kubectl 1.20 (kustomize 2.0, not reported by `kubectl version`) cannot render deploy/: the
    tests skip saying which kubectl they need instead of failing on a kustomize error."""
    assert kustomize_version({"clientVersion": {"gitVersion": "v1.20.0"}}) is None
    assert kustomize_version({"kustomizeVersion": "v4.5.7"}) == (4, 5)
    assert kustomize_version({"kustomizeVersion": "v5.5.0"}) == (5, 5)
    fake = tmp_path / "kubectl"
    fake.write_text('#!/bin/sh\necho \'{"clientVersion": {"gitVersion": "v1.20.9"}}\'\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    why = kubectl_problem()
    assert why is not None
    assert "v1.20.9" in why and f"kubectl {MIN_KUBECTL}+" in why and "kustomize 5.0+" in why
    assert f"kubectl {MIN_KUBECTL}" in README
