"""A FAKE Kubernetes node whose kubelet plays every pod through the Docker engine, so the pod spec itself is
proven: what the relay asks for is what the target's containers really run with.

``DockerBackedFakeKubernetes`` is the fake API server of ``fake_kubernetes.py`` with another kubelet. Each pod
becomes, like a pod on a node that runs Docker:

* a sandbox container (the "pause" container of a real pod) on a bridge network of this fake's own: it holds
  the pod's network namespace, so ``status.podIP`` is its address, reachable from this host, and every
  container of the pod shares it (and its loopback); it also keeps the pod's volumes mounted, as a tmpfs
  volume lives only while some container mounts it;
* every ``emptyDir`` a tmpfs volume of ``sizeLimit`` bytes, mode 0777 (2777 and owned by ``fsGroup`` when the
  pod sets one), as a kubelet makes it; removed with the pod. On this node a disk ``emptyDir`` is memory too;
* the init containers run to completion in order, then the main container, each from its image with exactly
  its command/args, env (with the kubelet's ``$(VAR)`` expansion), workingDir, volumeMounts (readOnly),
  securityContext (runAsUser/runAsGroup, fsGroup and supplementalGroups, runAsNonRoot checked against the
  image's user, readOnlyRootFilesystem, capabilities, allowPrivilegeEscalation false as no-new-privileges,
  seccomp RuntimeDefault as Docker's default profile) and resources (memory limit without swap, cpu limit
  as a CFS quota, cpu request as shares);
* statuses as a kubelet reports them: Pending (PodInitializing, ContainerCreating), the init containers'
  states, Running with the pod IP, then terminated with the exit code (reason Completed, Error or OOMKilled)
  and phase Succeeded or Failed; a container whose user would be root under ``runAsNonRoot`` is
  ``CreateContainerConfigError``;
* images: this node reaches no registry and never pulls. An image not present here, and any image under
  ``imagePullPolicy: Always`` (which the API server sets for an image tagged ``:latest`` or untagged), is
  ``ErrImagePull`` then ``ImagePullBackOff``, tried again every ``pull_backoff`` seconds: an image loaded
  onto the node meanwhile (``docker load``, ``docker tag``) is then used, under a policy other than Always.
  The base fake's injected ``pull_failures`` are its own kubelet's, not played here;
* the fake API server's deletions: a graceful one stops each container (SIGTERM, SIGKILL after the grace
  period) and reports its end; the pod's removal removes its containers and volumes; a lost node pauses them.

Whatever else a pod spec says, this kubelet does not play: it refuses the pod loudly (its status says
``CreateContainerConfigError`` naming the fields, ``refused`` lists them, the kubelet thread raises), so a
proof cannot pass on a field that was silently ignored. Not added to a container's environment: the
``KUBERNETES_SERVICE_*`` variables (this fake's API server is not reachable from the pods); no
``/dev/termination-log`` is mounted.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path
from typing import Any

import docker.errors
from docker.client import DockerClient
from docker.models.containers import Container
from docker.models.networks import Network
from docker.models.volumes import Volume
from docker.types import Mount

import docker
from tests.integration.fake_kubernetes import FakeKubernetes, FakePod

LABEL = "debugrelay.test.fake-kubelet"  # on every container, volume and network this fake makes: its id
SANDBOX_IMAGE = "debugrelay/target:latest"  # the sandbox only sleeps; the image the Docker tests need anyway
SANDBOX_USER = "65535:65535"  # the user of Kubernetes' pause image

# What this kubelet plays; any other field of a pod spec makes it refuse the pod.
POD_FIELDS = {
    "containers",
    "initContainers",
    "volumes",
    "securityContext",
    "restartPolicy",  # Never only: this kubelet restarts nothing
    "automountServiceAccountToken",  # false only: there is no token to mount
    "enableServiceLinks",  # this fake has no Services: nothing to add either way
    "terminationGracePeriodSeconds",  # the API server's part: this kubelet stops a pod at once when told
    "tolerations",  # this node has no taints
}
POD_SECURITY_FIELDS = {"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "supplementalGroups", "seccompProfile"}
CONTAINER_FIELDS = {
    "name",
    "image",
    "imagePullPolicy",
    "command",
    "args",
    "env",
    "workingDir",
    "volumeMounts",
    "ports",  # a pod's IP answers on every port; containerPort names it only
    "resources",
    "securityContext",
}
CONTAINER_SECURITY_FIELDS = {
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "capabilities",
    "privileged",
    "seccompProfile",
}
PULL_POLICIES = {"Always", "IfNotPresent", "Never"}
SIZES: dict[str, int | Fraction] = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}  # fmt: skip
QUANTITY = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|)")


class PodRefused(AssertionError):
    """The pod spec asks for something this kubelet does not play."""


@dataclass
class PlayedPod:
    """The Docker objects that play one pod; ``lock`` orders their creation against the pod's deletion."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    halted: threading.Event = field(default_factory=threading.Event)  # deleted, evicted or frozen: start nothing
    stopped: bool = False  # its containers are removed: nothing more to report
    frozen: bool = False  # its node is lost: its containers paused, and nothing more to report
    sandbox: Container | None = None
    containers: dict[str, Container] = field(default_factory=dict)  # the spec's container name -> its container
    volumes: dict[str, Volume] = field(default_factory=dict)  # the spec's volume name -> its volume
    ip: str = ""
    host_ip: str = ""
    started: str = ""
    init_statuses: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[dict[str, Any]] = field(default_factory=list)


class DockerBackedFakeKubernetes(FakeKubernetes):
    """The FAKE API server with a kubelet that runs each pod's containers through the Docker engine.

    ``refused`` lists every pod this kubelet would not play, with the fields it does not honour."""

    def __init__(
        self, workdir: Path, namespace: str = "debug", *, client: DockerClient, sandbox_image: str = SANDBOX_IMAGE
    ) -> None:
        client.images.get(sandbox_image)  # fails here, not in a pod, when the node lacks it
        self.docker = client
        self.sandbox_image = sandbox_image
        self.id = os.urandom(4).hex()
        self.refused: list[str] = []
        self._played: dict[str, PlayedPod] = {}  # by pod uid
        self._played_lock = threading.Lock()
        self.network: Network = client.networks.create(
            f"fake-kubelet-{self.id}", driver="bridge", labels={LABEL: self.id}
        )
        try:
            super().__init__(workdir, namespace)
        except BaseException:
            self.network.remove()
            raise
        self.pull_backoff = 0.5  # between pull tries (a kubelet's back-off starts at 10 s)

    def stop(self) -> None:
        try:
            super().stop()
        finally:
            with contextlib.suppress(docker.errors.NotFound):
                self.network.remove()

    def containers_of(self, name: str) -> dict[str, Container]:
        """The Docker containers playing pod ``name``: by the spec's container name, the sandbox as ``POD``."""
        played = self._played_for(self.pods[name])
        with played.lock:
            sandbox = {"POD": played.sandbox} if played.sandbox is not None else {}
            return {**sandbox, **played.containers}

    def _played_for(self, pod: FakePod) -> PlayedPod:
        with self._played_lock:
            return self._played.setdefault(pod.obj["metadata"]["uid"], PlayedPod())

    # -- the kubelet ---------------------------------------------------------------------------------

    def _stop_pod(self, pod: FakePod) -> None:
        """Remove the pod's containers (killing them), then its volumes."""
        played = self._played_for(pod)
        played.halted.set()
        with played.lock:
            played.stopped = True
            for container in [*reversed(played.containers.values()), played.sandbox]:
                if container is not None:
                    with contextlib.suppress(docker.errors.NotFound):
                        container.remove(force=True)
            for volume in played.volumes.values():
                with contextlib.suppress(docker.errors.NotFound):
                    volume.remove(force=True)

    def _terminate_pod(self, pod: FakePod, grace: int) -> None:
        """A graceful deletion: each running container gets SIGTERM, then SIGKILL after ``grace`` s; their ends
        are reported (the fake API server removes the pod, and calls :meth:`_stop_pod`, afterwards)."""
        played = self._played_for(pod)
        played.halted.set()
        with played.lock:
            running = list(played.containers.values())
        for container in running:
            with contextlib.suppress(docker.errors.APIError):  # one that has ended already, or is removed
                container.stop(timeout=grace)

    def _freeze_pod(self, pod: FakePod) -> None:
        """Its node is lost: every container of the pod paused (the cgroup freezer), its connections left open."""
        played = self._played_for(pod)
        played.halted.set()
        with played.lock:
            played.frozen = True
            for container in [played.sandbox, *played.containers.values()]:
                if container is not None:
                    with contextlib.suppress(docker.errors.APIError):  # one that has ended cannot be paused
                        container.pause()

    def _kubelet(self, pod: FakePod) -> None:
        played = self._played_for(pod)
        spec = pod.obj["spec"]
        problems = unplayable(spec)
        if problems:
            self._refuse(pod, played, "; ".join(problems))
        inits, (main,) = spec.get("initContainers", []), spec["containers"]
        played.init_statuses = [container_status(c, {"waiting": {"reason": "PodInitializing"}}) for c in inits]
        played.statuses = [
            container_status(main, {"waiting": {"reason": "PodInitializing" if inits else "ContainerCreating"}})
        ]
        self._publish(pod, played, "Pending")
        try:
            if not self._start_sandbox(pod, played):
                return
            for index, init in enumerate(inits):
                code = self._run(pod, played, init, played.init_statuses, index)
                if code is None:
                    return
                if code != 0:
                    self._publish(pod, played, "Failed")  # restartPolicy Never: a failed init fails the pod
                    return
            played.statuses = [container_status(main, {"waiting": {"reason": "ContainerCreating"}})]
            self._publish(pod, played, "Pending")
            code = self._run(pod, played, main, played.statuses, 0)
            if code is not None:
                self._publish(pod, played, "Succeeded" if code == 0 else "Failed")
        except docker.errors.APIError:
            if not (played.stopped or played.frozen):  # removed or frozen by the pod's end; else loud
                raise

    def _refuse(self, pod: FakePod, played: PlayedPod, why: str) -> None:
        name = pod.obj["metadata"]["name"]
        message = f"pod {name}: the Docker-backed fake kubelet does not play {why}"
        self.refused.append(message)
        waiting = {"waiting": {"reason": "CreateContainerConfigError", "message": message}}
        played.statuses = [container_status(c, waiting) for c in pod.obj["spec"].get("containers", [])]
        self._publish(pod, played, "Pending")
        raise PodRefused(message)

    def _publish(self, pod: FakePod, played: PlayedPod, phase: str) -> None:
        """The pod's status as a kubelet reports it, unless nothing of the pod is left to report on."""
        initialized = all(s["state"].get("terminated", {}).get("exitCode") == 0 for s in played.init_statuses)
        ready = all(s["ready"] for s in played.statuses)
        status: dict[str, Any] = {
            "phase": phase,
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": str(initialized)},
                {"type": "ContainersReady", "status": str(ready)},
                {"type": "Ready", "status": str(ready)},
            ],
            "initContainerStatuses": played.init_statuses,
            "containerStatuses": played.statuses,
        }
        if played.started:
            status["startTime"] = played.started
        if played.ip:
            status.update(podIP=played.ip, podIPs=[{"ip": played.ip}], hostIP=played.host_ip)
        if not played.init_statuses:
            del status["initContainerStatuses"]
        name = pod.obj["metadata"]["name"]
        with self.changed:  # the fake API server removes pods under it
            if not (played.stopped or played.frozen) and self.pods.get(name) is pod:
                self.set_status(name, json_copy(status))

    def _start_sandbox(self, pod: FakePod, played: PlayedPod) -> bool:
        """The pod's volumes and its sandbox on this fake's network; False when the pod is gone meanwhile."""
        spec = pod.obj["spec"]
        name, uid = pod.obj["metadata"]["name"], pod.obj["metadata"]["uid"]
        fs_group = (spec.get("securityContext") or {}).get("fsGroup")
        with played.lock:
            if played.halted.is_set() or pod.deleted:
                return False
            for volume in spec.get("volumes", []):
                empty = volume["emptyDir"]
                size = math.ceil(quantity(empty["sizeLimit"])) if empty.get("sizeLimit") else None
                options = ["mode=2777", f"gid={fs_group}"] if fs_group is not None else ["mode=0777"]
                options += [f"size={size}"] if size else []
                played.volumes[volume["name"]] = self.docker.volumes.create(
                    f"k8s_{volume['name']}_{name}_{uid[:8]}",
                    driver="local",
                    driver_opts={"type": "tmpfs", "device": "tmpfs", "o": ",".join(options)},
                    labels={LABEL: self.id},
                )
            played.sandbox = self.docker.containers.run(
                self.sandbox_image,
                ["sleep", "infinity"],
                name=f"k8s_POD_{name}_{self.namespace}_{uid[:8]}",
                hostname=name,
                detach=True,
                user=SANDBOX_USER,
                read_only=True,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                network=self.network.name,
                mounts=[Mount(f"/fake-kubelet/volumes/{k}", v.name, no_copy=True) for k, v in played.volumes.items()],
                labels={LABEL: self.id},
            )
            played.sandbox.reload()
            address = played.sandbox.attrs["NetworkSettings"]["Networks"][self.network.name]
            played.ip, played.host_ip = address["IPAddress"], address["Gateway"]
            played.started = now()
        return True

    def _run(
        self, pod: FakePod, played: PlayedPod, container: dict[str, Any], statuses: list[dict[str, Any]], index: int
    ) -> int | None:
        """Run one container of the pod to its end: its exit code; None when it cannot start or the pod is gone."""
        spec = pod.obj["spec"]
        name, uid = pod.obj["metadata"]["name"], pod.obj["metadata"]["uid"]
        main = statuses is played.statuses
        while (pull := self._pull_failure(container)) is not None:  # tried again until the image is on the node
            reason, message = pull
            statuses[index] = container_status(container, {"waiting": {"reason": reason, "message": message}})
            self._publish(pod, played, "Pending")
            if played.halted.wait(self.pull_backoff):
                return None
            if reason == "ErrImagePull":
                back_off = {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{container["image"]}"'}
                statuses[index] = container_status(container, {"waiting": back_off})
                self._publish(pod, played, "Pending")
                if played.halted.wait(self.pull_backoff):
                    return None
        image = self.docker.images.get(container["image"])
        config, refusal = docker_config(spec, container, image.attrs["Config"], played.volumes)
        if refusal is not None:
            statuses[index] = container_status(
                container, {"waiting": {"reason": "CreateContainerConfigError", "message": refusal}}
            )
            self._publish(pod, played, "Pending")
            return None
        with played.lock:
            if played.halted.is_set() or pod.deleted:
                return None
            assert played.sandbox is not None
            run = self.docker.containers.create(
                image.id,
                name=f"k8s_{container['name']}_{name}_{self.namespace}_{uid[:8]}",
                network_mode=f"container:{played.sandbox.id}",
                labels={LABEL: self.id},
                **config,
            )
            played.containers[container["name"]] = run
            follow = None
            if main:
                pod.log = self.workdir / f"{name}.log"
                pod.log.write_bytes(b"")
                follow = threading.Thread(target=self._follow_log, args=(played, run, pod.log), daemon=True)
            run.start()
            if follow is not None:
                follow.start()
        run.reload()
        statuses[index] = container_status(
            container, {"running": {"startedAt": run.attrs["State"]["StartedAt"]}}, ready=main, run=run, image=image.id
        )
        self._publish(pod, played, "Running" if main else "Pending")
        code = int(run.wait()["StatusCode"])
        if follow is not None:
            follow.join()  # every line the container wrote is in the pod's log before its end is told
        if played.stopped or played.frozen:
            return None
        run.reload()
        state = run.attrs["State"]
        reason = "OOMKilled" if state.get("OOMKilled") else ("Completed" if code == 0 else "Error")
        terminated = {
            "exitCode": code,
            "reason": reason,
            "startedAt": state["StartedAt"],
            "finishedAt": state["FinishedAt"],
            "containerID": f"docker://{run.id}",
        }
        statuses[index] = container_status(container, {"terminated": terminated}, run=run, image=image.id)
        return code

    def _follow_log(self, played: PlayedPod, run: Container, path: Path) -> None:
        """Copy the container's stdout and stderr into the file the fake API server serves as the pod's log."""
        try:
            with path.open("ab") as out:
                for chunk in run.logs(stream=True, follow=True, stdout=True, stderr=True):
                    out.write(chunk)
                    out.flush()
        except Exception:
            if not played.stopped:
                raise

    def _pull_failure(self, container: dict[str, Any]) -> tuple[str, str] | None:
        """(reason, message) when this node cannot have the container's image, else None (it never pulls)."""
        image = container["image"]
        policy = container.get("imagePullPolicy") or default_pull_policy(image)
        if policy == "Always":
            return "ErrImagePull", (
                f'failed to pull image "{image}": imagePullPolicy is Always (the default for an image tagged '
                ":latest or untagged) and this fake node reaches no registry"
            )
        try:
            self.docker.images.get(image)
        except docker.errors.ImageNotFound:
            if policy == "Never":
                return "ErrImageNeverPull", f'Container image "{image}" is not present with pull policy of Never'
            return "ErrImagePull", f'failed to pull image "{image}": not on this node, which reaches no registry'
        return None


def docker_config(
    spec: dict[str, Any], container: dict[str, Any], image: dict[str, Any], volumes: dict[str, Volume]
) -> tuple[dict[str, Any], str | None]:
    """The container's Docker configuration from its spec, or why the kubelet cannot create it."""
    pod_sc, sc = spec.get("securityContext") or {}, container.get("securityContext") or {}
    uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
    gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
    user = str(image.get("User") or "") if uid is None else f"{uid}:{gid}" if gid is not None else str(uid)
    if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")):
        first = user.partition(":")[0]
        if not first.isdigit():
            return {}, f"container has runAsNonRoot and image has non-numeric user ({first or 'root'})"
        if int(first) == 0:
            return {}, "container has runAsNonRoot and image will run as root"
    env: dict[str, str] = {}
    for item in container.get("env", []):
        env[item["name"]] = expand(item.get("value", ""), env)
    command = [expand(a, env) for a in container.get("command", [])]
    args = [expand(a, env) for a in container.get("args", [])]
    # the kubelet's rule: command replaces the image's entrypoint and its cmd; args alone replace the cmd
    argv = [*command, *args] if command else [*(image.get("Entrypoint") or []), *(args or image.get("Cmd") or [])]
    groups = [*pod_sc.get("supplementalGroups", []), *([pod_sc["fsGroup"]] if "fsGroup" in pod_sc else [])]
    seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type", "Unconfined")
    security = ["no-new-privileges"] if sc.get("allowPrivilegeEscalation") is False else []
    security += ["seccomp=unconfined"] if seccomp == "Unconfined" else []  # RuntimeDefault: Docker's own profile
    capabilities = sc.get("capabilities") or {}
    config: dict[str, Any] = {
        "entrypoint": argv,
        "environment": env,
        "user": user,
        "group_add": [str(g) for g in groups] or None,
        "read_only": bool(sc.get("readOnlyRootFilesystem")),
        "privileged": bool(sc.get("privileged")),
        "cap_drop": capabilities.get("drop"),
        "cap_add": capabilities.get("add"),
        "security_opt": security or None,
        "mounts": [
            Mount(m["mountPath"], volumes[m["name"]].name, read_only=bool(m.get("readOnly")), no_copy=True)
            for m in container.get("volumeMounts", [])
        ],
    }
    if container.get("workingDir"):
        config["working_dir"] = container["workingDir"]
    resources = container.get("resources") or {}
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    if "memory" in limits:
        config["mem_limit"] = config["memswap_limit"] = math.ceil(quantity(limits["memory"]))  # no swap
    if "cpu" in limits:
        config["nano_cpus"] = math.ceil(quantity(limits["cpu"]) * 10**9)  # a CFS quota, as the kubelet sets
    # a request defaults to its limit; the kubelet turns the cpu request into shares (memory: scheduling only)
    cpu_request = requests.get("cpu", limits.get("cpu"))
    config["cpu_shares"] = max(2, math.ceil(quantity(cpu_request) * 1024)) if cpu_request else 2
    return config, None


def unplayable(spec: dict[str, Any]) -> list[str]:
    """The fields of a pod spec this kubelet would not honour, each named by its path."""
    out = [f"spec.{key}" for key in sorted(set(spec) - POD_FIELDS)]
    if len(spec.get("containers", [])) != 1:
        out.append("spec.containers (one container per pod only)")
    if spec.get("restartPolicy", "Always") != "Never":
        out.append(f"spec.restartPolicy={spec.get('restartPolicy', 'Always')} (only Never: nothing restarts here)")
    if spec.get("automountServiceAccountToken") is not False:
        out.append("spec.automountServiceAccountToken (only false: this fake has no token to mount)")
    pod_sc = spec.get("securityContext") or {}
    out += [f"spec.securityContext.{key}" for key in sorted(set(pod_sc) - POD_SECURITY_FIELDS)]
    out += seccomp_problems("spec.securityContext", pod_sc)
    for index, volume in enumerate(spec.get("volumes", [])):
        where = f"spec.volumes[{index}]"
        out += [f"{where}.{key}" for key in sorted(set(volume) - {"name", "emptyDir"})]
        empty = volume.get("emptyDir")
        if empty is None:
            continue
        out += [f"{where}.emptyDir.{key}" for key in sorted(set(empty) - {"medium", "sizeLimit"})]
        if empty.get("medium", "") not in ("", "Memory"):
            out.append(f"{where}.emptyDir.medium={empty['medium']}")
        out += quantity_problems(f"{where}.emptyDir.sizeLimit", empty.get("sizeLimit"))
    volumes = {v["name"] for v in spec.get("volumes", [])}
    for kind in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(kind, [])):
            out += container_problems(f"spec.{kind}[{index}]", container, volumes)
    return out


def container_problems(where: str, container: dict[str, Any], volumes: set[str]) -> list[str]:
    out = [f"{where}.{key}" for key in sorted(set(container) - CONTAINER_FIELDS)]
    if container.get("imagePullPolicy", "IfNotPresent") not in PULL_POLICIES:
        out.append(f"{where}.imagePullPolicy={container['imagePullPolicy']}")
    for index, item in enumerate(container.get("env", [])):
        # valueFrom (fieldRef, resourceFieldRef, secretKeyRef, configMapKeyRef) is not played: values only
        out += [f"{where}.env[{index}].{key}" for key in sorted(set(item) - {"name", "value"})]
    for index, port in enumerate(container.get("ports", [])):
        out += [f"{where}.ports[{index}].{key}" for key in sorted(set(port) - {"name", "containerPort", "protocol"})]
    for index, mount in enumerate(container.get("volumeMounts", [])):
        out += [f"{where}.volumeMounts[{index}].{k}" for k in sorted(set(mount) - {"name", "mountPath", "readOnly"})]
        if mount.get("name") not in volumes:
            out.append(f"{where}.volumeMounts[{index}].name={mount.get('name')} (no such volume)")
    resources = container.get("resources") or {}
    out += [f"{where}.resources.{key}" for key in sorted(set(resources) - {"limits", "requests"})]
    for kind in ("limits", "requests"):
        for key, value in (resources.get(kind) or {}).items():
            if key not in ("cpu", "memory"):
                out.append(f"{where}.resources.{kind}.{key}")
            out += quantity_problems(f"{where}.resources.{kind}.{key}", value)
    sc = container.get("securityContext") or {}
    out += [f"{where}.securityContext.{key}" for key in sorted(set(sc) - CONTAINER_SECURITY_FIELDS)]
    capabilities = sc.get("capabilities") or {}
    out += [f"{where}.securityContext.capabilities.{k}" for k in sorted(set(capabilities) - {"add", "drop"})]
    out += seccomp_problems(f"{where}.securityContext", sc)
    if "runAsGroup" in sc and "runAsUser" not in sc:
        out.append(f"{where}.securityContext.runAsGroup without runAsUser")
    return out


def seccomp_problems(where: str, sc: dict[str, Any]) -> list[str]:
    profile = sc.get("seccompProfile")
    if profile is None or (profile.get("type") in ("RuntimeDefault", "Unconfined") and set(profile) == {"type"}):
        return []
    return [f"{where}.seccompProfile={profile} (RuntimeDefault or Unconfined only)"]


def quantity_problems(where: str, value: Any) -> list[str]:
    if value is None or QUANTITY.fullmatch(str(value)):
        return []
    return [f"{where}={value!r} (not a quantity this kubelet reads)"]


def quantity(text: Any) -> Fraction:
    """A Kubernetes quantity (``128Mi``, ``500m``, ``268435456``) as an exact number."""
    match = QUANTITY.fullmatch(str(text))
    assert match, f"not a quantity: {text!r}"
    return Fraction(match[1]) * SIZES[match[2]]


def expand(text: str, env: dict[str, str]) -> str:
    """``$(VAR)`` replaced by VAR's value when the container's env defines it, ``$$`` by ``$`` (the kubelet's rules)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            after = text[i + 1]
            if after == "$":
                out.append("$")
                i += 2
                continue
            if after == "(":
                close = text.find(")", i + 2)
                if close != -1:
                    name = text[i + 2 : close]
                    out.append(env.get(name, f"$({name})"))
                    i = close + 1
                    continue
            out.append("$" + after)
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def default_pull_policy(image: str) -> str:
    """What the API server sets when a container names no imagePullPolicy."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def container_status(
    container: dict[str, Any],
    state: dict[str, Any],
    *,
    ready: bool = False,
    run: Container | None = None,
    image: str = "",
) -> dict[str, Any]:
    """A container's status with the fields a kubelet sets."""
    status: dict[str, Any] = {
        "name": container["name"],
        "image": container["image"],
        "imageID": f"docker://{image}" if image else "",
        "ready": ready,
        "restartCount": 0,
        "started": "running" in state,
        "state": state,
    }
    if run is not None:
        status["containerID"] = f"docker://{run.id}"
    return status


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def json_copy(value: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(json.dumps(value)))
