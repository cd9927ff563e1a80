"""A FAKE Kubernetes API server and kubelet, for the kubernetes launcher's tests (no cluster can run here).

It serves the pod endpoints the launcher uses (create, get, list, watch, delete, log, eviction) over HTTP
with a bearer token, admits a pod only if it meets the "restricted" Pod Security Standard (as a
namespace enforcing it would), authorizes every call against the Role that ``deploy/`` binds to the
relay's ServiceAccount (rendered with ``kubectl kustomize``: a call outside it answers 403 as the API
does) and records every request. Where a cluster is less kind than a test bed, it behaves as one:

* resource versions: a bounded event history; a watch (or an exact list) from a version older than it
  keeps is answered ``410 Gone`` (in a watch stream, the ERROR event an API server sends);
  :meth:`FakeKubernetes.compact` forgets the history, :meth:`hold_watches` ends the open watches and
  keeps new ones waiting (a watch that is away) until :meth:`resume_watches`;
* graceful deletion: DELETE sets ``deletionTimestamp`` and ``deletionGracePeriodSeconds`` (MODIFIED),
  the kubelet SIGTERMs the pod's processes, reports their end and only then is the pod removed
  (DELETED), or once the grace period is over (SIGKILL);
* evictions: the Eviction API (``pods/{name}/eviction``, policy/v1) deletes the pod gracefully with a
  ``DisruptionTarget`` condition; :meth:`evict_for_pressure` is the kubelet's own eviction: the
  containers killed, the pod left ``Failed`` with reason ``Evicted``;
* a node lost (:meth:`lose_node`): the pod's processes freeze (nothing answers and no connection
  closes, as with a dead machine), the node controller marks the pod not Ready, the taint manager then
  deletes it (``DisruptionTarget``, ``DeletionByTaintManager``) and it stays Terminating, for no kubelet
  confirms it; :meth:`pod_gc` is the pod garbage collector force-deleting it once the node is gone;
* image pulls (:attr:`pull_failures`): ``ErrImagePull`` then ``ImagePullBackOff``, retried, recovering
  after a number of tries (a transient registry error) or never (``InvalidImageName`` at once);
* an API server that hangs (:meth:`hang`): requests to a path are accepted and never answered.

Its kubelet plays each pod on this machine: every ``emptyDir`` is a temporary folder, the init
containers run to completion first (really: the relay's copy of debugpy and the hooks lands in the
folder), then the target container's command runs as a local process at a loopback address of its own
(127.0.0.N: the pod's IP); its exit makes the pod Succeeded or Failed. What it cannot play: images
(commands run on this machine's Python), network policy, and folders a pod mounts where this machine
has one (``/tmp``). A subclass plays pods another way by overriding ``_kubelet`` and ``_stop_pod``
(``_terminate_pod`` and ``_freeze_pod`` for graceful deletion and node loss).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import itertools
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from debugrelay.launchers.local import free_port

TOKEN = "fake-kubernetes-token"  # the relay's ServiceAccount: its Role's rights only
ADMIN_TOKEN = "fake-kubernetes-admin"  # a cluster administrator (kubectl drain): every right
INNER = "127.0.0.1:5679"  # the pod-private loopback port debugpy listens on behind the keeper
HISTORY = 1000  # events kept for watches that resume (an API server keeps its watch cache's worth)
DEFAULT_GRACE = 30  # terminationGracePeriodSeconds when a pod names none
RELAY_OVERLAY = "team"  # the overlay whose Role the relay's ServiceAccount is bound to


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """What the "restricted" Pod Security Standard refuses in ``pod`` (the checks the API server makes)."""
    spec = pod["spec"]
    psc = spec.get("securityContext") or {}
    out = []
    if (psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        out.append("pod seccompProfile must be RuntimeDefault")
    for c in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        sc = c.get("securityContext") or {}
        name = c["name"]
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{name}: allowPrivilegeEscalation != false")
        if (sc.get("capabilities") or {}).get("drop") != ["ALL"]:
            out.append(f"{name}: capabilities must drop ALL")
        if not (sc.get("runAsNonRoot", psc.get("runAsNonRoot"))):
            out.append(f"{name}: runAsNonRoot != true")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            out.append(f"{name}: runAsUser=0")
        if sc.get("privileged"):
            out.append(f"{name}: privileged")
    for v in spec.get("volumes", []):
        if "hostPath" in v:
            out.append(f"volume {v['name']}: hostPath")
    if spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"):
        out.append("host namespaces")
    return out


def rfc3339(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def status_object(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``Status`` as the API server words its answers (errors, and an eviction's success)."""
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success" if code < 400 else "Failure",
        "code": code,
    }
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    if details:
        out["details"] = details
    return out


@dataclass(frozen=True)
class Rule:
    """One rule of a Role: an API group's resources (``pods``, ``pods/log``), the verbs, maybe the names."""

    groups: frozenset[str]
    resources: frozenset[str]
    verbs: frozenset[str]
    names: frozenset[str] = frozenset()

    def allows(self, group: str, resource: str, verb: str, name: str | None) -> bool:
        return (
            (group in self.groups or "*" in self.groups)
            and (resource in self.resources or "*" in self.resources)
            and (verb in self.verbs or "*" in self.verbs)
            and (not self.names or (name is not None and name in self.names))
        )


@functools.cache
def relay_role(overlay: str = RELAY_OVERLAY) -> tuple[str, tuple[Rule, ...]] | None:
    """(the relay's ServiceAccount, the rules of the Roles bound to it) as ``kubectl kustomize
    deploy/overlays/<overlay>`` renders them; None where kubectl cannot render deploy/."""
    from tests.kustomize import DEPLOY, build, kubectl_problem

    if kubectl_problem() is not None:
        return None
    objects = build(DEPLOY / "overlays" / overlay)
    (relay,) = [
        o
        for o in objects
        if o["kind"] == "Deployment"
        and o["spec"]["template"]["metadata"]["labels"].get("app.kubernetes.io/component") == "relay"
    ]
    account = relay["spec"]["template"]["spec"]["serviceAccountName"]
    roles = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Role"}
    rules: list[Rule] = []
    for binding in (o for o in objects if o["kind"] == "RoleBinding"):
        subjects = binding.get("subjects") or []
        if any(s["kind"] == "ServiceAccount" and s["name"] == account for s in subjects):
            assert binding["roleRef"]["kind"] == "Role", "the relay is bound to namespaced rights only"
            for rule in roles[binding["roleRef"]["name"]].get("rules") or []:
                rules.append(
                    Rule(
                        frozenset(rule.get("apiGroups") or []),
                        frozenset(rule.get("resources") or []),
                        frozenset(rule.get("verbs") or []),
                        frozenset(rule.get("resourceNames") or []),
                    )
                )
    return account, tuple(rules)


@dataclass
class PullFailure:
    """How pulls of an image fail: ``tries`` times then it is pulled (None: forever), with ``reason``
    (``ErrImagePull``, retried with ``ImagePullBackOff`` between; ``InvalidImageName`` is never retried)."""

    tries: int | None = None
    reason: str = "ErrImagePull"
    message: str = "rpc error: code = Unknown desc = failed to pull and unpack image: 429 Too Many Requests"
    attempts: int = 0


@dataclass
class FakePod:
    obj: dict[str, Any]
    dirs: dict[str, str] = field(default_factory=dict)  # volume name -> folder
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    deleted: bool = False  # its deletion has begun: a kubelet starts nothing more in it
    removed: bool = False  # gone from the API server
    frozen: bool = False  # its node is lost: nothing of it answers, and no kubelet acts on it
    final: dict[str, Any] | None = None  # the status the kubelet reports when its processes end (an eviction's)
    ended: threading.Event = field(default_factory=threading.Event)  # the kubelet reported its processes' end


class FakeKubernetes:
    """The FAKE API server (``url``, ``kubeconfig``) with its kubelet; ``requests`` lists every call.

    ``rbac``: authorize calls against the Role bound to the relay in ``deploy/`` (when kubectl can render
    it); ``pull_failures``: image -> :class:`PullFailure`; ``pull_backoff``: the kubelet's back-off between
    pull tries, in seconds (a kubelet's starts at 10 s)."""

    def __init__(self, workdir: Path, namespace: str = "debug", *, rbac: bool = True) -> None:
        self.workdir = workdir
        self.namespace = namespace
        self.requests: list[tuple[str, str, dict[str, Any] | None]] = []
        self.created: list[dict[str, Any]] = []  # pod manifests as the launcher sent them
        self.pods: dict[str, FakePod] = {}
        self.events: collections.deque[tuple[int, str, dict[str, Any]]] = collections.deque()
        self.history = HISTORY
        self.compacted = 0  # the newest resource version whose event is forgotten
        self.rv = 100  # a cluster's resource versions never start at 0 ("0" asks for any version)
        self.version = itertools.count(self.rv + 1)
        self.changed = threading.Condition()
        self.ips = itertools.count(2)
        self.stopping = False
        self.role = relay_role() if rbac else None
        self.forbidden: list[str] = []  # the 403 messages RBAC answered
        self.pull_failures: dict[str, PullFailure] = {}
        self.lost: list[FakePod] = []  # pods of lost nodes, removed from the API: their processes end at stop()
        self.pull_backoff = 0.05
        self.watch_epoch = 0  # bumped to end every open watch
        self.watches_held = False
        self.hanging: list[str] = []  # path fragments whose requests are never answered
        self.held: list[tuple[str, threading.Event]] = []  # hung requests: path, set once the client gave up
        self.released = threading.Event()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.kubeconfig = workdir / "kubeconfig"
        self.admin_kubeconfig = workdir / "kubeconfig-admin"
        for path, token in ((self.kubeconfig, TOKEN), (self.admin_kubeconfig, ADMIN_TOKEN)):
            path.write_text(
                json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Config",
                        "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                        "users": [{"name": "user", "user": {"token": token}}],
                        "contexts": [
                            {"name": "fake", "context": {"cluster": "fake", "user": "user", "namespace": namespace}}
                        ],
                        "current-context": "fake",
                    }
                )
            )

    # -- state -------------------------------------------------------------------------------

    def _emit(self, kind: str, pod: FakePod) -> None:
        with self.changed:
            self.rv = next(self.version)
            pod.obj["metadata"]["resourceVersion"] = str(self.rv)
            self.events.append((self.rv, kind, json.loads(json.dumps(pod.obj))))
            while len(self.events) > self.history:
                self.compacted = self.events.popleft()[0]
            self.changed.notify_all()

    def compact(self) -> None:
        """Forget every event so far, as an API server's history moves on: a watch or exact list from an
        older resource version is answered 410 Gone."""
        with self.changed:
            self.events.clear()
            self.compacted = self.rv

    def hold_watches(self) -> None:
        """End every open watch and keep new ones waiting, unanswered (a watch that is away)."""
        with self.changed:
            self.watches_held = True
            self.watch_epoch += 1
            self.changed.notify_all()

    def resume_watches(self) -> None:
        with self.changed:
            self.watches_held = False
            self.changed.notify_all()

    def waiting_watches(self) -> int:
        """How many watch requests wait while watches are held."""
        return sum(1 for path, gone in self.held if "watch=" in path and not gone.is_set())

    def hang(self, fragment: str) -> None:
        """Accept every later request whose path contains ``fragment`` and never answer it."""
        self.hanging.append(fragment)

    def open_hung(self, fragment: str = "") -> int:
        """How many hung requests (whose path contains ``fragment``) their clients still wait on."""
        return sum(1 for path, gone in self.held if fragment in path and not gone.is_set())

    def add_pod(self, manifest: dict[str, Any], *, play: bool = True, age: float = 0.0) -> FakePod:
        """A pod as if created (by the launcher, or by someone else: a workload to attach to), ``age``
        seconds ago."""
        obj = json.loads(json.dumps(manifest))
        obj["metadata"].setdefault("namespace", self.namespace)
        obj["metadata"]["uid"] = os.urandom(8).hex()
        obj["metadata"]["creationTimestamp"] = rfc3339(datetime.now(UTC) - timedelta(seconds=age))
        obj["status"] = {"phase": "Pending"}
        pod = FakePod(obj)
        self.pods[obj["metadata"]["name"]] = pod
        self._emit("ADDED", pod)
        if play:
            threading.Thread(target=self._run_kubelet, args=(pod,), daemon=True).start()
        else:
            pod.ended.set()  # nothing plays it: no kubelet has anything to report
        return pod

    def set_status(self, name: str, status: dict[str, Any]) -> None:
        pod = self.pods[name]
        pod.obj["status"] = status
        self._emit("MODIFIED", pod)

    def _condition(self, pod: FakePod, kind: str, status: str, reason: str = "", message: str = "") -> None:
        conditions = [c for c in pod.obj["status"].get("conditions") or [] if c["type"] != kind]
        condition = {"type": kind, "status": status, "lastTransitionTime": rfc3339(datetime.now(UTC))}
        if reason:
            condition["reason"] = reason
        if message:
            condition["message"] = message
        pod.obj["status"]["conditions"] = [*conditions, condition]

    def delete(self, name: str, grace: int | None = 0) -> bool:
        """Delete pod ``name`` as the API server does: at once with ``grace`` 0 (a force delete), else
        gracefully (None: the pod's ``terminationGracePeriodSeconds``)."""
        pod = self.pods.get(name)
        if pod is None or pod.removed:
            return False
        if grace is None:
            grace = int(pod.obj["spec"].get("terminationGracePeriodSeconds", DEFAULT_GRACE))
        meta = pod.obj["metadata"]
        if grace > 0 and "deletionTimestamp" in meta:
            return True  # already terminating: a second graceful delete changes nothing
        pod.deleted = True
        if grace <= 0 or (pod.ended.is_set() and not pod.frozen):
            self._remove(pod)  # nothing runs (or nothing is left to end): no kubelet needs to confirm
            return True
        meta["deletionTimestamp"] = rfc3339(datetime.now(UTC) + timedelta(seconds=grace))
        meta["deletionGracePeriodSeconds"] = grace
        self._emit("MODIFIED", pod)
        if not pod.frozen:  # a lost node's pod stays Terminating: no kubelet confirms its end
            threading.Thread(target=self._graceful, args=(pod, grace), daemon=True).start()
        return True

    def _graceful(self, pod: FakePod, grace: int) -> None:
        self._terminate_pod(pod, grace)
        pod.ended.wait(grace)  # the kubelet reports how the processes ended before the pod goes
        self._remove(pod)

    def _remove(self, pod: FakePod) -> None:
        with self.changed:
            if pod.removed:
                return
            pod.removed = pod.deleted = True
            self.pods.pop(pod.obj["metadata"]["name"], None)
        if pod.frozen:
            self.lost.append(pod)  # a dead machine's processes: nothing of them is heard again (until stop())
        else:
            self._stop_pod(pod)
        self._emit("DELETED", pod)
        for folder in pod.dirs.values():
            shutil.rmtree(folder, ignore_errors=True)

    def evict(self, name: str, grace: int | None = None) -> bool:
        """The Eviction API's work (no PodDisruptionBudget stands in its way): a graceful deletion."""
        pod = self.pods.get(name)
        if pod is None or pod.removed:
            return False
        self._condition(pod, "DisruptionTarget", "True", "EvictionByEvictionAPI", "Eviction API: evicting")
        self._emit("MODIFIED", pod)
        return self.delete(name, grace)

    def evict_for_pressure(self, name: str, resource: str = "memory") -> None:
        """The kubelet's node-pressure eviction: the pod's containers killed at once (a hard threshold), the
        pod left Failed with reason Evicted; the API object stays until someone deletes it."""
        pod = self.pods[name]
        message = (
            f"The node was low on resource: {resource}. Threshold quantity: 100Mi, available: 51200Ki. "
            f"Container target was using 262144Ki, request is 256Mi, has larger consumption of {resource}. "
        )
        status = json.loads(json.dumps(pod.obj["status"]))
        status.update(phase="Failed", reason="Evicted", message=message)
        status["containerStatuses"] = [
            {**c, "ready": False, "state": {"terminated": {"exitCode": 137, "reason": "Error"}}}
            for c in status.get("containerStatuses") or []
        ]
        pod.final = status
        self._condition(pod, "DisruptionTarget", "True", "TerminationByKubelet", message)
        pod.final["conditions"] = pod.obj["status"]["conditions"]
        self._stop_pod(pod)
        pod.ended.wait(10)  # this kubelet reports ``final`` itself; another may not
        if pod.obj["status"].get("reason") != "Evicted":
            self.set_status(name, pod.final)

    def lose_node(self, name: str) -> None:
        """Pod ``name``'s node stops answering: its processes freeze (a dead machine sends nothing, not even
        the end of a connection); the node controller marks the pod not Ready; once the pod's toleration of
        ``node.kubernetes.io/unreachable`` runs out, the taint manager deletes it, gracefully: it stays
        Terminating, for no kubelet will confirm it."""
        pod = self.pods[name]
        pod.frozen = True
        self._freeze_pod(pod)
        self._condition(pod, "Ready", "False")  # the node controller changes the status only
        self._emit("MODIFIED", pod)
        self._condition(
            pod, "DisruptionTarget", "True", "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"
        )
        self._emit("MODIFIED", pod)
        self.delete(name, None)

    def pod_gc(self, name: str) -> None:
        """The pod garbage collector once a lost node's object is gone: the pod marked Failed, then
        force-deleted."""
        pod = self.pods[name]
        pod.obj["status"]["phase"] = "Failed"
        self._condition(pod, "DisruptionTarget", "True", "DeletionByPodGC", "PodGC: node no longer exists")
        self._emit("MODIFIED", pod)
        self.delete(name, 0)

    def stop(self) -> None:
        self.released.set()
        for name in list(self.pods):
            self.delete(name)
        for pod in self.lost:
            self._stop_pod(pod)
        with self.changed:
            self.stopping = True
            self.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()

    # -- authorization -----------------------------------------------------------------------

    def forbids(self, method: str, segments: list[str], query: dict[str, str]) -> str | None:
        """The 403 message for a call the relay's Role does not allow, else None."""
        if self.role is None:
            return None
        account, rules = self.role
        group = "" if segments[0] == "api" else segments[1]
        rest = segments[2:] if segments[0] == "api" else segments[3:]
        namespace = rest[1] if len(rest) > 1 and rest[0] == "namespaces" else None
        rest = rest[2:] if namespace is not None else rest
        resource = rest[0] if rest else ""
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        watching = query.get("watch") in ("true", "1")
        verb = {
            "GET": "watch" if watching else "get" if name else "list",
            "POST": "create",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection",
        }[method]
        full = f"{resource}/{sub}" if sub else resource
        if namespace == self.namespace and any(r.allows(group, full, verb, name) for r in rules):
            return None
        who = f"system:serviceaccount:{self.namespace}:{account}"
        subject = f'{resource} "{name}"' if name else resource
        where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        message = f'{subject} is forbidden: User "{who}" cannot {verb} resource "{full}" in API group "{group}"{where}'
        self.forbidden.append(message)
        return message

    # -- the kubelet (a subclass may play pods another way: override _kubelet and _stop_pod) ---

    def _stop_pod(self, pod: FakePod) -> None:
        """End what plays ``pod`` (its processes), at once."""
        if pod.proc is not None and pod.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pod.proc.pid, signal.SIGKILL)
            pod.proc.wait()

    def _terminate_pod(self, pod: FakePod, grace: int) -> None:
        """End what plays ``pod`` as a kubelet does on deletion: SIGTERM, then SIGKILL after ``grace`` s."""
        if pod.proc is not None and pod.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pod.proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                pod.proc.wait(grace)
        self._stop_pod(pod)

    def _freeze_pod(self, pod: FakePod) -> None:
        """Freeze what plays ``pod``: its processes keep their connections and answer nothing."""
        if pod.proc is not None and pod.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pod.proc.pid, signal.SIGSTOP)

    def _pull(self, pod: FakePod, container: dict[str, Any], statuses: list[dict[str, Any]]) -> bool:
        """Pull ``container``'s image as a kubelet does, its tries shown in the pod's status (``statuses``:
        those of the containers of its kind reported so far); False when it cannot be had (or the pod goes)."""
        failure = self.pull_failures.get(container["image"])
        name = pod.obj["metadata"]["name"]
        key = "initContainerStatuses" if container in pod.obj["spec"].get("initContainers", []) else "containerStatuses"
        while failure is not None and (failure.tries is None or failure.attempts < failure.tries):
            if pod.deleted or pod.frozen:
                return False
            failure.attempts += 1
            waiting = {"waiting": {"reason": failure.reason, "message": failure.message}}
            self.set_status(name, {"phase": "Pending", key: [*statuses, _status(container, waiting)]})
            if failure.reason != "ErrImagePull":
                return False  # InvalidImageName, ErrImageNeverPull: no try will ever succeed
            time.sleep(self.pull_backoff)  # the kubelet's back-off (this fake's, shortened)
            back_off = {
                "waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{container["image"]}"'}
            }
            self.set_status(name, {"phase": "Pending", key: [*statuses, _status(container, back_off)]})
            time.sleep(self.pull_backoff)
        return not pod.deleted

    def _rewrite(self, pod: FakePod, mounts: list[dict[str, Any]], value: str, ip: str, inner: str) -> str:
        for m in mounts:
            path = m["mountPath"]
            if os.path.exists(path):
                continue  # a folder this machine has too (/tmp): the pod's process shares it
            if value == path or value.startswith(path.rstrip("/") + "/"):
                return pod.dirs[m["name"]] + value[len(path) :]
            value = value.replace(path + os.pathsep, pod.dirs[m["name"]] + os.pathsep)
        if value.startswith("0.0.0.0:"):
            return f"{ip}:{value.split(':', 1)[1]}"
        return value.replace(INNER, inner)

    def _command(
        self, pod: FakePod, container: dict[str, Any], ip: str, inner: str
    ) -> tuple[list[str], dict[str, str]]:
        mounts = container.get("volumeMounts", [])
        argv = [self._rewrite(pod, mounts, a, ip, inner) for a in container["command"]]
        argv = [sys.executable if a in ("python", "python3") else a for a in argv]
        env = {"PATH": os.environ["PATH"]}
        for item in container.get("env", []):
            env[item["name"]] = self._rewrite(pod, mounts, item["value"], ip, inner)
            if item["name"] == "PYTHONPATH":
                env[item["name"]] = os.pathsep.join(
                    self._rewrite(pod, mounts, p, ip, inner) for p in item["value"].split(os.pathsep)
                )
        return argv, env

    def _run_kubelet(self, pod: FakePod) -> None:
        try:
            self._kubelet(pod)
        finally:
            pod.ended.set()

    def _kubelet(self, pod: FakePod) -> None:
        spec = pod.obj["spec"]
        name = pod.obj["metadata"]["name"]
        for volume in spec.get("volumes", []):
            pod.dirs[volume["name"]] = tempfile.mkdtemp(prefix=f"{name}-{volume['name']}-", dir=self.workdir)
        ip = f"127.0.0.{next(self.ips)}"
        inner = f"127.0.0.1:{free_port()}"
        init_statuses: list[dict[str, Any]] = []
        for init in spec.get("initContainers", []):
            if not self._pull(pod, init, init_statuses):
                return
            argv, env = self._command(pod, init, ip, inner)
            done = subprocess.run(argv, env=env, capture_output=True, check=False)
            init_statuses.append(_status(init, {"terminated": {"exitCode": done.returncode}}))
            if done.returncode != 0 or pod.deleted:
                if not pod.deleted:
                    self.set_status(name, {"phase": "Failed", "initContainerStatuses": init_statuses})
                return
        (container,) = spec["containers"]
        if not self._pull(pod, container, []):
            return
        argv, env = self._command(pod, container, ip, inner)
        pod.log = self.workdir / f"{name}.log"
        cwd = container.get("workingDir")
        with pod.log.open("wb") as out:
            pod.proc = subprocess.Popen(
                argv,
                env=env,
                cwd=cwd if cwd and Path(cwd).is_dir() else self.workdir,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        if pod.deleted:
            os.killpg(pod.proc.pid, signal.SIGKILL)
            pod.proc.wait()
            return
        running = _status(container, {"running": {}}, ready=True)
        kinds = ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ready = [{"type": kind, "status": "True"} for kind in kinds]
        self.set_status(
            name,
            {
                "phase": "Running",
                "podIP": ip,
                "conditions": ready,
                "initContainerStatuses": init_statuses,
                "containerStatuses": [running],
            },
        )
        code = pod.proc.wait()
        if pod.removed or pod.frozen:
            return
        if pod.final is not None:
            self.set_status(name, pod.final)
            return
        code = 128 - code if code < 0 else code  # a container killed by signal n exits 128 + n
        ended = _status(container, {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}})
        status = {
            "phase": "Succeeded" if code == 0 else "Failed",
            "podIP": ip,
            "conditions": [{**c, "status": "False"} if c["type"].endswith("Ready") else c for c in ready],
            "initContainerStatuses": init_statuses,
            "containerStatuses": [ended],
        }
        self.set_status(name, status)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeKubernetes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        self._send(code, status_object(code, reason, message, details))

    def _hang(self) -> None:
        """Never answer: hold the connection until the client gives up (or the fake stops)."""
        gone = threading.Event()
        self.fake.held.append((self.path, gone))
        while not self.fake.released.is_set() and not self._client_gone(gone):
            pass

    def _client_gone(self, gone: threading.Event) -> bool:
        """Whether the client closed the connection (``gone`` is then set); looks for 50 ms at most."""
        readable, _, _ = select.select([self.connection], [], [], 0.05)
        if readable:
            try:
                closed = self.connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                closed = True
            if closed:
                gone.set()
        return gone.is_set()

    def _route(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        fake.requests.append((method, self.path, body))
        token = self.headers.get("Authorization")
        if token not in (f"Bearer {TOKEN}", f"Bearer {ADMIN_TOKEN}"):
            self._status(401, "Unauthorized", "Unauthorized")
            return
        if any(fragment in self.path for fragment in fake.hanging):
            self._hang()
            return
        segments = parts.path.strip("/").split("/")
        relay = token == f"Bearer {TOKEN}"
        forbidden = fake.forbids(method, segments, query) if relay and len(segments) >= 3 else None
        if forbidden is not None:
            name = segments[5] if len(segments) > 5 else ""
            self._status(403, "Forbidden", forbidden, {"name": name, "kind": segments[4] if len(segments) > 4 else ""})
            return
        if segments[:3] != ["api", "v1", "namespaces"] or len(segments) < 5 or segments[4] != "pods":
            self._status(404, "NotFound", f"the fake serves pods only, not {parts.path}")
            return
        namespace = segments[3]
        if namespace != fake.namespace:
            self._status(403, "Forbidden", f'pods is forbidden in namespace "{namespace}"')
            return
        name = segments[5] if len(segments) > 5 else None
        sub = segments[6] if len(segments) > 6 else None
        if method == "POST" and name is None:
            self._create(body or {})
        elif method == "POST" and sub == "eviction":
            grace = ((body or {}).get("deleteOptions") or {}).get("gracePeriodSeconds")
            if not fake.evict(name or "", grace):
                self._status(404, "NotFound", f'pods "{name}" not found', {"name": name, "kind": "pods"})
            else:
                self._send(201, status_object(201, "", ""))
        elif method == "GET" and name is None:
            if query.get("watch") in ("true", "1"):
                self._watch(query)
            else:
                self._list(query)
        elif method == "GET" and sub == "log":
            self._log(name or "", query)
        elif method == "GET":
            pod = fake.pods.get(name or "")
            if pod is None:
                self._status(404, "NotFound", f'pods "{name}" not found', {"name": name, "kind": "pods"})
            else:
                self._send(200, pod.obj)
        elif method == "DELETE":
            pod = fake.pods.get(name or "")
            grace = query.get("gracePeriodSeconds", (body or {}).get("gracePeriodSeconds"))
            if pod is None or not fake.delete(name or "", None if grace is None else int(grace)):
                self._status(404, "NotFound", f'pods "{name}" not found', {"name": name, "kind": "pods"})
            else:
                self._send(200, pod.obj)
        else:
            self._status(405, "MethodNotAllowed", method)

    def _list(self, query: dict[str, str]) -> None:
        fake = self.fake
        since = int(query.get("resourceVersion") or 0)
        if query.get("resourceVersionMatch") == "Exact" and since and since < fake.compacted:
            self._status(410, "Expired", f"too old resource version: {since} ({fake.compacted})")
            return
        with fake.changed:
            items = [p.obj for p in fake.pods.values() if _selected(p.obj, query.get("labelSelector"))]
            version = fake.rv
        self._send(
            200,
            {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(version)}, "items": items},
        )

    def _log(self, name: str, query: dict[str, str]) -> None:
        pod = self.fake.pods.get(name)
        if pod is None or pod.log is None:
            if pod is None:
                self._status(404, "NotFound", f'pods "{name}" not found')
            else:
                self._status(400, "BadRequest", f'container "target" in pod "{name}" is waiting to start')
            return
        lines = pod.log.read_bytes().decode(errors="replace").splitlines(keepends=True)
        data = "".join(lines[-int(query.get("tailLines", "0") or 0) :] if "tailLines" in query else lines).encode()
        if query.get("follow") not in ("true", "1"):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        # following: what the container writes, until it ends (the connection's close ends the answer)
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        offset = pod.log.stat().st_size
        try:
            self.wfile.write(data)
            self.wfile.flush()
            while True:
                done = pod.ended.is_set() or pod.removed or self.fake.stopping
                with pod.log.open("rb") as log:
                    log.seek(offset)
                    more = log.read()
                if more:
                    offset += len(more)
                    self.wfile.write(more)
                    self.wfile.flush()
                if done:
                    return
                pod.ended.wait(0.05)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _create(self, manifest: dict[str, Any]) -> None:
        fake = self.fake
        fake.created.append(manifest)
        name = manifest.get("metadata", {}).get("name", "")
        violations = restricted_violations(manifest)
        if violations:
            self._status(
                403,
                "Forbidden",
                f'pods "{name}" is forbidden: violates PodSecurity "restricted:latest": {"; ".join(violations)}',
            )
            return
        if name in fake.pods:
            self._status(409, "AlreadyExists", f'pods "{name}" already exists')
            return
        pod = fake.add_pod(manifest)
        self._send(201, pod.obj)

    def _watch(self, query: dict[str, str]) -> None:
        fake = self.fake
        selector = query.get("labelSelector")
        with fake.changed:
            epoch = fake.watch_epoch
            held = fake.watches_held
        if held:  # away: accepted, unanswered until the watches resume (or the client gives up)
            gone = threading.Event()
            fake.held.append((self.path, gone))
            while fake.watches_held and not fake.stopping:
                if self._client_gone(gone):
                    return
            if fake.stopping:
                return
            gone.set()  # answered now: no longer waiting
            with fake.changed:
                epoch = fake.watch_epoch
        since = int(query.get("resourceVersion") or 0)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with fake.changed:
            if since and since < fake.compacted:
                # what an API server sends when the history it keeps starts after the version asked for
                expired = status_object(410, "Expired", f"too old resource version: {since} ({fake.compacted})")
                self.wfile.write(json.dumps({"type": "ERROR", "object": expired}).encode() + b"\n")
                return
            if since:
                pending = [(rv, kind, obj) for rv, kind, obj in fake.events if rv > since]
            else:  # a watch from now starts with every matching pod, as ADDED
                pending = [(fake.rv, "ADDED", json.loads(json.dumps(p.obj))) for p in fake.pods.values()]
            last = fake.rv
        try:
            while True:
                for _, kind, obj in pending:
                    if _selected(obj, selector):
                        self.wfile.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")
                        self.wfile.flush()
                with fake.changed:
                    while fake.rv == last and not fake.stopping and fake.watch_epoch == epoch:
                        fake.changed.wait(1.0)
                    if fake.stopping or fake.watch_epoch != epoch:
                        return
                    pending = [(rv, kind, obj) for rv, kind, obj in fake.events if rv > last]
                    last = fake.rv
        except (BrokenPipeError, ConnectionResetError):
            return

    def do_GET(self) -> None:
        self._route("GET")

    def do_POST(self) -> None:
        self._route("POST")

    def do_DELETE(self) -> None:
        self._route("DELETE")


def _status(container: dict[str, Any], state: dict[str, Any], *, ready: bool = False) -> dict[str, Any]:
    """A container's status with every field the API always sets."""
    return {
        "name": container["name"],
        "image": container["image"],
        "imageID": "",
        "ready": ready,
        "restartCount": 0,
        "state": state,
    }


def _selected(obj: dict[str, Any], selector: str | None) -> bool:
    labels = obj["metadata"].get("labels") or {}
    for term in (selector or "").split(","):
        if not term:
            continue
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True
