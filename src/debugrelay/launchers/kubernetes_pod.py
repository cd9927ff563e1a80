"""A target's pod: its manifest (the restricted standard, requests = limits, the boot files copied in
by an init container) and what its status says (an exit code, a container that cannot start, an end the
cluster caused: an eviction, a lost node)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from debugrelay.config import Settings
from debugrelay.dap import SECRET_ENV
from debugrelay.errors import InvalidRequest
from debugrelay.models import LaunchRequest

from .boot import debugpy_args
from .container import (
    BOOT,
    INNER_PORT,
    INSTANCE,
    SESSION,
    keeper_in_container,
    orphan_after,
    target_env,
    target_home,
    target_labels,
)
from .policy import LaunchPolicy, memory_bytes

CONTAINER = "target"
REASON_CHARS = 400  # of a cluster's message on why it ended a pod, shown in the session's status
# the init container: copy debugpy and the hooks out of the relay's image into the shared emptyDir
BOOT_COPY = "import sys; from debugrelay.launchers.boot import copy_boot; copy_boot(sys.argv[1])"
PULL_FAILURES = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
PULL_RETRIED = frozenset({"ErrImagePull", "ImagePullBackOff"})  # the kubelet tries again; the others never pass
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
NODE_LOSS_TOLERATION = 60  # seconds a target pod waits for a node that stopped answering (the default: 300)
# why the cluster ended a pod, by its DisruptionTarget condition's reason
DISRUPTIONS = {
    "DeletionByTaintManager": "deleted by the taint manager: its node stopped answering",
    "DeletionByPodGC": "deleted by the pod garbage collector: its node is gone",
    "EvictionByEvictionAPI": "evicted through the Eviction API (kubectl drain, a scale-down)",
    "TerminationByKubelet": "ended by its node's kubelet",
    "PreemptionByScheduler": "preempted by a pod of higher priority",
}
CONFIG_FAILURES = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def restricted(run_as: str) -> dict[str, Any]:
    """A container's securityContext under the "restricted" standard, as user ``uid[:gid]``."""
    uid, _, gid = run_as.partition(":")
    return {
        **RESTRICTED,
        "runAsNonRoot": uid != "0",
        "runAsUser": int(uid),
        "runAsGroup": int(gid or uid),
    }


def to_remote(path: str, mappings: list[tuple[str, str]]) -> str:
    """``path`` as the pod sees it: a path under a mapping's local root is moved to its remote root."""
    for local, remote in mappings:
        if path == local or path.startswith(local.rstrip("/") + "/"):
            return remote.rstrip("/") + path[len(local.rstrip("/")) :] if path != local else remote
    return path


def exit_code_of(pod: dict[str, Any]) -> int | None:
    """The target container's exit code once the pod has ended (or its container has), else None."""
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        if cs.get("name") == CONTAINER:
            terminated = (cs.get("state") or {}).get("terminated")
            if terminated:
                return int(terminated.get("exitCode", -1))
    if status.get("phase") in ("Succeeded", "Failed"):
        return 0 if status["phase"] == "Succeeded" else -1
    return None


def _condition(pod: dict[str, Any], kind: str) -> dict[str, Any]:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return {}


def ended_unconfirmed(pod: dict[str, Any], *, deleted: bool) -> bool:
    """Whether ``pod`` has ended though no kubelet saw its target container end: deleted (a force delete,
    the pod garbage collector), failed before it, or being deleted by the taint manager from a node that
    no longer answers. Its processes may not have ended, and a connection to them never closes."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == CONTAINER and (cs.get("state") or {}).get("terminated"):
            return False
    if deleted or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return True
    disruption = _condition(pod, "DisruptionTarget")
    return bool(
        pod["metadata"].get("deletionTimestamp")
        and _condition(pod, "Ready").get("status") == "False"
        and disruption.get("status") == "True"
        and disruption.get("reason") == "DeletionByTaintManager"
    )


def end_reason(pod: dict[str, Any]) -> str | None:
    """Why the cluster ended ``pod``, in a line (an eviction, a lost node, a preemption), or None."""
    name = pod["metadata"]["name"]
    status = pod.get("status") or {}
    if status.get("reason") in ("Evicted", "NodeLost", "Preempting", "Shutdown", "Terminated"):
        said = str(status.get("message") or "").strip()[:REASON_CHARS]  # the cluster's words, bounded
        return f"pod {name}: {status['reason']}: {said}".rstrip(": ")
    disruption = _condition(pod, "DisruptionTarget")
    if disruption.get("status") == "True":
        said = DISRUPTIONS.get(str(disruption.get("reason")), str(disruption.get("reason") or "disrupted"))
        return f"pod {name} {said}" if said[0].islower() else f"pod {name}: {said}"
    return None


def waiting_failure(pod: dict[str, Any]) -> tuple[str, str] | None:
    """(reason, message) when a container of the pod cannot start (image, configuration), else None."""
    status = pod.get("status") or {}
    for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason", "")
        if reason in PULL_FAILURES or reason in CONFIG_FAILURES:
            return reason, str(waiting.get("message") or reason)
        terminated = (cs.get("state") or {}).get("terminated") or {}
        if cs.get("name") != CONTAINER and terminated and int(terminated.get("exitCode", 0)) != 0:
            return "InitFailed", f"the init container {cs.get('name')} exited with code {terminated.get('exitCode')}"
    return None


def pod_manifest(
    spec: LaunchRequest,
    *,
    settings: Settings,
    policy: LaunchPolicy,
    namespace: str,
    store_label: str,
    session_id: str,
    boot_image: str,
    secret: str,
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """A target pod's manifest and its path mappings; every check of the operator's policy happens here."""
    if spec.mounts or spec.writable:
        raise InvalidRequest(
            "a pod mounts no folders of the relay's machine: the code comes from the image",
            details={"mounts": spec.mounts, "writable": spec.writable},
            hint="Drop 'mounts'/'writable'; map your checkout to the image's path with 'path_mappings'.",
        )
    if spec.stdin_inputs:
        raise InvalidRequest(
            "a pod's stdin is not reachable through the relay",
            details={"stdin_inputs": len(spec.stdin_inputs)},
            hint="Pass input as arguments or environment.",
        )
    if spec.limits is not None and spec.limits.pids is not None:
        raise InvalidRequest(
            "limits.pids cannot be set per pod on Kubernetes",
            details={"limits": {"pids": spec.limits.pids}},
            hint="Leave it out: the cluster's kubelet limits processes per pod (podPidsLimit).",
        )
    default = settings.kubernetes_image or settings.docker_image
    image = policy.image(spec.image or default)
    own_image = spec.image is not None and spec.image != default
    user = policy.user(spec.root)
    limits = policy.limits(spec.limits)
    mappings: list[tuple[str, str]] = []
    for mapping in spec.path_mappings:
        if not os.path.isabs(mapping.local_root) or not os.path.isabs(mapping.remote_root):
            raise InvalidRequest(
                "path_mappings map absolute local paths to absolute paths in the image",
                details={"local_root": mapping.local_root, "remote_root": mapping.remote_root},
            )
        mappings.append((os.path.normpath(mapping.local_root), os.path.normpath(mapping.remote_root)))
    script = to_remote(spec.script, mappings) if spec.script else None
    cwd = to_remote(os.path.normpath(spec.cwd), mappings) if spec.cwd else None
    if cwd is None and script is not None and os.path.isabs(script):
        cwd = str(Path(script).parent)
    port = settings.kubernetes_port
    python = [spec.python or ("python3" if own_image else "python"), "-Xfrozen_modules=off"]
    debuggee = [*python, *debugpy_args(spec, f"127.0.0.1:{INNER_PORT}", script_path=script)]
    command = keeper_in_container(
        python, listen=f"0.0.0.0:{port}", debuggee=debuggee, orphan_after=orphan_after(settings)
    )
    env = target_env(spec.env, [to_remote(p, mappings) for p in spec.pythonpath])
    home = target_home(env)
    env[SECRET_ENV] = secret
    quantity = {"memory": str(memory_bytes(limits.memory)), "cpu": f"{max(1, limits.nano_cpus // 1_000_000)}m"}
    suffix = os.urandom(2).hex()
    name = f"debugrelay-{session_id.replace('_', '-').lower()}-{suffix}"[:63].rstrip("-")
    labels = {
        "app.kubernetes.io/name": "debugrelay",
        "app.kubernetes.io/managed-by": "debugrelay",
        "app.kubernetes.io/component": "target",
        **target_labels(session_id, store_label),
    }
    annotations = {
        INSTANCE: settings.instance_id,
        SESSION: session_id,
        "debugrelay.image": image,
        # a bare pod blocks the cluster autoscaler's scale-down (and its emptyDirs too) unless it says so
        SAFE_TO_EVICT: "true",
    }
    uid, _, gid = user.partition(":")
    target: dict[str, Any] = {
        "name": CONTAINER,
        "image": image,
        "command": command,
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "ports": [{"name": "debug", "containerPort": port, "protocol": "TCP"}],
        "resources": {"requests": quantity, "limits": quantity},
        "securityContext": restricted(user),
        "volumeMounts": [
            {"name": "debugrelay-boot", "mountPath": BOOT, "readOnly": True},
            {"name": "tmp", "mountPath": "/tmp"},
            {"name": "home", "mountPath": home},
        ],
    }
    if cwd:
        target["workingDir"] = cwd
    manifest: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "spec": {
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "terminationGracePeriodSeconds": 5,
            # a program on a node that stopped answering is out of reach: its session ends sooner
            "tolerations": [
                {
                    "key": f"node.kubernetes.io/{taint}",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": NODE_LOSS_TOLERATION,
                }
                for taint in ("unreachable", "not-ready")
            ],
            "securityContext": {
                "runAsNonRoot": uid != "0",
                "runAsUser": int(uid),
                "runAsGroup": int(gid or uid),
                "fsGroup": int(gid or uid),
                "seccompProfile": {"type": "RuntimeDefault"},
            },
            "initContainers": [
                {
                    "name": "debugrelay-boot",
                    "image": boot_image,
                    "command": ["python", "-c", BOOT_COPY, BOOT],
                    "resources": {
                        "requests": {"cpu": "100m", "memory": "64Mi"},
                        "limits": {"cpu": "500m", "memory": "128Mi"},
                    },
                    "securityContext": restricted(user),
                    "volumeMounts": [{"name": "debugrelay-boot", "mountPath": BOOT}],
                }
            ],
            "containers": [target],
            "volumes": [
                {"name": "debugrelay-boot", "emptyDir": {"sizeLimit": "128Mi"}},
                {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                {"name": "home", "emptyDir": {"sizeLimit": "16Mi"}},
            ],
        },
    }
    return manifest, mappings
