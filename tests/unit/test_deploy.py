"""deploy/: every overlay renders with kubectl's built-in kustomize, every object validates against
the Kubernetes schemas of KUBERNETES_VERSION, and nothing in it can run as root or escalate."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from debugrelay.api.server import STORE_CHECK_SECONDS

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
OVERLAYS = ("dev", "team")
KUBERNETES_VERSION = "1.32.0"  # the schemas every object is checked against (kubectl here is 1.32)
WORKLOADS = ("Deployment", "StatefulSet", "Pod")
# the cluster's DNS: kube-dns pods of kube-system, not a pod so labelled in any namespace
CLUSTER_DNS = {
    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
    "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
}
DNS_PORTS = [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (with kustomize) is not installed")


def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        ["kubectl", "kustomize", str(DEPLOY / "overlays" / overlay)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def pod_specs(objects: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    specs = []
    for obj in objects:
        if obj["kind"] in WORKLOADS:
            spec = obj["spec"] if obj["kind"] == "Pod" else obj["spec"]["template"]["spec"]
            specs.append((f"{obj['kind']}/{obj['metadata']['name']}", spec))
    return specs


def containers(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [*spec.get("initContainers", []), *spec["containers"]]


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    return render(request.param)


def test_every_rendered_object_validates_against_the_kubernetes_schemas(rendered: list[dict[str, Any]]) -> None:
    assert {o["kind"] for o in rendered} >= {
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "StatefulSet",
        "NetworkPolicy",
    }
    for obj in rendered:
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


def test_the_namespace_enforces_the_restricted_pod_security_standard(rendered: list[dict[str, Any]]) -> None:
    (namespace,) = [o for o in rendered if o["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert all(o["metadata"].get("namespace") == namespace["metadata"]["name"] for o in rendered if o is not namespace)


def test_the_relays_role_is_namespaced_and_least_privilege(rendered: list[dict[str, Any]]) -> None:
    assert not [o for o in rendered if o["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    (role,) = [o for o in rendered if o["kind"] == "Role"]
    rules = {(tuple(r["apiGroups"]), tuple(r["resources"])): set(r["verbs"]) for r in role["rules"]}
    assert rules == {
        (("",), ("pods",)): {"create", "get", "list", "watch", "delete"},
        (("",), ("pods/log",)): {"get"},
    }
    (binding,) = [o for o in rendered if o["kind"] == "RoleBinding"]
    assert binding["roleRef"]["kind"] == "Role"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "debugrelay", "namespace": "debugrelay"}]


def test_targets_reach_only_dns_and_only_relays_reach_targets_and_redis(rendered: list[dict[str, Any]]) -> None:
    policies = {o["metadata"]["name"]: o["spec"] for o in rendered if o["kind"] == "NetworkPolicy"}
    relay = {"app.kubernetes.io/name": "debugrelay", "app.kubernetes.io/component": "relay"}
    targets = policies["debugrelay-targets"]
    assert targets["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "target"
    assert set(targets["policyTypes"]) == {"Ingress", "Egress"}
    assert [peer["podSelector"]["matchLabels"] for peer in targets["ingress"][0]["from"]] == [relay]
    assert targets["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 5678}]
    assert targets["egress"] == [{"to": [CLUSTER_DNS], "ports": DNS_PORTS}]  # the cluster's DNS, nothing else
    redis = policies["debugrelay-redis"]
    assert [peer["podSelector"]["matchLabels"] for peer in redis["ingress"][0]["from"]] == [relay]
    assert redis["egress"] == []


def test_relays_reach_only_dns_redis_their_targets_opted_in_pods_each_other_and_the_api_server(
    rendered: list[dict[str, Any]],
) -> None:
    policies = [o["spec"] for o in rendered if o["kind"] == "NetworkPolicy"]
    relay = {"app.kubernetes.io/name": "debugrelay", "app.kubernetes.io/component": "relay"}
    # every policy selecting the relays: their egress is the union of these, denied outside it
    egress = [p for p in policies if p["podSelector"].get("matchLabels") == relay and "Egress" in p["policyTypes"]]
    assert len(egress) == 1
    rules = egress[0]["egress"]
    target = {"app.kubernetes.io/managed-by": "debugrelay", "app.kubernetes.io/component": "target"}
    attachable = {
        "matchExpressions": [
            {"key": "debugrelay.dev/attachable", "operator": "In", "values": ["true"]},
            {"key": "app.kubernetes.io/name", "operator": "NotIn", "values": ["debugrelay"]},
        ]
    }
    assert rules == [
        {"to": [CLUSTER_DNS], "ports": DNS_PORTS},
        {
            "to": [{"podSelector": {"matchLabels": {**relay, "app.kubernetes.io/component": "redis"}}}],
            "ports": [{"protocol": "TCP", "port": 6379}],
        },
        {"to": [{"podSelector": {"matchLabels": target}}], "ports": [{"protocol": "TCP", "port": 5678}]},
        {"to": [{"podSelector": attachable}]},  # the debugpy port a workload chose
        {"to": [{"podSelector": {"matchLabels": relay}}], "ports": [{"protocol": "TCP", "port": 8765}]},
        # the API server: its address is the cluster's, so its ports only (the file says how to narrow it)
        {"ports": [{"protocol": "TCP", "port": 443}, {"protocol": "TCP", "port": 6443}]},
    ]
    # no rule reaches a whole namespace or the whole cluster
    peers = [peer for rule in rules for peer in rule.get("to", [])]
    assert all(peer["namespaceSelector"].get("matchLabels") for peer in peers if "namespaceSelector" in peer)
    assert not [peer for peer in peers if "ipBlock" in peer]


def test_redis_requires_the_password_the_relays_are_given_from_the_secret(rendered: list[dict[str, Any]]) -> None:
    (redis,) = [o for o in rendered if o["kind"] == "StatefulSet"]
    (server,) = redis["spec"]["template"]["spec"]["containers"]
    args = server["args"]
    assert args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    secret_ref = {"secretKeyRef": {"name": "debugrelay-secrets", "key": "redis-password"}}
    assert {"name": "REDIS_PASSWORD", "valueFrom": secret_ref} in server["env"]
    (deployment,) = [o for o in rendered if o["kind"] == "Deployment"]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["REDIS_PASSWORD"]["valueFrom"] == secret_ref
    assert env["DEBUGRELAY_REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@debugrelay-redis:6379/0"
    assert env["DEBUGRELAY_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "debugrelay-secrets"
    # dependent variables expand only when defined earlier in the list
    names = list(env)
    assert names.index("REDIS_PASSWORD") < names.index("DEBUGRELAY_REDIS_URL")
    assert names.index("POD_IP") < names.index("DEBUGRELAY_ADVERTISE_URL")


def test_the_relay_is_probed_without_restarts_for_a_stalled_store_and_advertises_its_pod_ip(
    rendered: list[dict[str, Any]],
) -> None:
    """Liveness never asks the state store; readiness does, and answers within its probe's timeout."""
    (deployment,) = [o for o in rendered if o["kind"] == "Deployment"]
    (relay,) = deployment["spec"]["template"]["spec"]["containers"]
    ready, live = relay["readinessProbe"], relay["livenessProbe"]
    assert (ready["httpGet"]["path"], live["httpGet"]["path"]) == ("/readyz", "/livez")
    assert ready["timeoutSeconds"] > STORE_CHECK_SECONDS and live["timeoutSeconds"] > STORE_CHECK_SECONDS
    env = {e["name"]: e for e in relay["env"]}
    assert env["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert env["DEBUGRELAY_ADVERTISE_URL"]["value"] == "http://$(POD_IP):8765"
    assert env["DEBUGRELAY_LAUNCHERS"]["value"] == "kubernetes"


def test_the_overlays_differ_as_documented() -> None:
    dev, team = render("dev"), render("team")

    def one(objs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
        (obj,) = [o for o in objs if o["kind"] == kind]
        return obj

    assert one(dev, "Deployment")["spec"]["replicas"] == 1
    assert one(team, "Deployment")["spec"]["replicas"] >= 2
    dev_redis, team_redis = one(dev, "StatefulSet"), one(team, "StatefulSet")
    assert "--appendonly" in (args := dev_redis["spec"]["template"]["spec"]["containers"][0]["args"])
    assert args[args.index("--appendonly") + 1] == "no"
    assert "volumeClaimTemplates" not in dev_redis["spec"]
    args = team_redis["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[args.index("--appendonly") + 1] == "yes"
    assert [t["metadata"]["name"] for t in team_redis["spec"]["volumeClaimTemplates"]] == ["data"]
    assert not [v for v in team_redis["spec"]["template"]["spec"].get("volumes", []) if v["name"] == "data"]
