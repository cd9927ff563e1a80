"""Kubernetes launcher: every debug target in a pod of its own, its keeper and debugpy inside.

The pod runs the launch's image (the project's target image, or the user's own app image as built):
an init container, from the relay's own image, copies debugpy and the start-up hooks into an
``emptyDir`` mounted at ``/opt/debugrelay``, so no image needs rebuilding. The target container's
main process is the keeper (``_boot/_debugrelay_keeper.py``), listening on the pod's debug port and
demanding the per-target secret; debugpy and the program run behind it on the pod's loopback. The
relay reaches the pod's IP directly: it runs in the cluster (``deploy/``); a relay outside it cannot
reach pod IPs (run it in the cluster, or attach through ``kubectl port-forward``).

The code is in the image, not mounted: ``path_mappings`` map the user's checkout (``local_root``) to
the path in the image (``remote_root``); a script or folder named by its local path is run at its
mapped path. Pods run as the policy's non-root uid with a read-only root filesystem, no privilege
escalation, every capability dropped and seccomp ``RuntimeDefault`` (the "restricted" standard),
with requests = limits from the policy, no service-account token, labels naming the session and the
store. ``attach_target`` finds a workload's pod that already runs debugpy, if the pod opted in
(the label ``debugrelay.dev/attachable: "true"``) and is none of debugrelay's own.

A launch has two budgets: ``DEBUGRELAY_KUBERNETES_START_TIMEOUT`` (300 s) for the pod to be scheduled,
pull its images, run its init container and start (a cold pull of a real image, a node scale-up), then
``DEBUGRELAY_LAUNCH_TIMEOUT`` for debugpy to answer, as for every launcher. An image pull that fails is
retried by the kubelet (a registry's rate limit or hiccup): the launch fails once the pull has failed
three times and the kubelet backs off again (``kubernetes_watch.PULL_TRIES``), and at once for an image
that can never be pulled (``InvalidImageName``, ``ErrImageNeverPull``).

One watch per launcher follows its pods (:class:`~.kubernetes_watch.PodWatch`), as an informer does: it
lists, then watches from the list's version, and lists again whenever it comes back (after ``410 Gone``
too), so a pod deleted while it was away reads as gone. A pod that ends without its processes' word ends
its session: deleted or failed while its node could not say (a lost node: the taint manager's or the pod
garbage collector's doing), or still Terminating past its grace period. The relay's own end of the debug
connection is then shut down (a dead node sends nothing, not even the connection's end), and the session
reads the exit code the pod reported (-1 when none). Target pods tolerate an unreachable or not-ready
node for a minute, not the cluster's default five.

Each target's log is followed from the moment its pod runs and its last 64 KiB kept: ``output_tail()``
answers from that, never from the API (it is called from the event loop), and a log read the API server
never answers holds only its own thread.

Target pods are bare (no controller: one would start the program afresh and lose its session). They
carry ``cluster-autoscaler.kubernetes.io/safe-to-evict: "true"``, so the cluster autoscaler may scale
their node down; ``kubectl drain`` refuses pods without a controller and with ``emptyDir`` volumes
unless told ``--force --delete-emptydir-data``, and then evicts them (their sessions end). A
starting relay deletes the pods of sessions that are gone, except pods younger than a launch's whole
budget (start plus debugger): another replica may be launching one and not have recorded its session yet.

The API is reached with lightkube: in-cluster through the pod's service account, elsewhere through
``KUBECONFIG``. Nothing here imports a web framework.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from datetime import UTC, datetime
from typing import Any

from debugrelay.config import Settings
from debugrelay.dap import new_secret
from debugrelay.errors import InvalidRequest, LaunchFailed, Refused, RelayError
from debugrelay.models import AttachSpec, KubernetesTargetRecord, LaunchRequest, TargetRecord, given

from .base import Launcher, Target
from .container import MANAGED, SESSION, STORE, store_identity
from .kubernetes_pod import CONTAINER, exit_code_of, pod_manifest
from .kubernetes_watch import PodWatch
from .policy import LaunchPolicy

log = logging.getLogger(__name__)

# a workload's pod opts in to attach by pod with this label ("true"); the relay's own pods never can
ATTACHABLE = "debugrelay.dev/attachable"
OWN_PODS = "app.kubernetes.io/name"  # "debugrelay": the relays, their Redis and their targets
DEFAULT_BOOT_IMAGE = "debugrelay/relay:latest"
LOG_TIMEOUT = 5.0  # seconds a one-off log read may take (a launch that failed, a recovered pod)


_DECODERS = threading.Lock()


def warm_decoders() -> None:
    """Build the decoders of the API objects the launcher reads, once, in one thread: msgspec builds a
    type's decoder on its first use, and two threads doing so at once crashed the relay (a segfault,
    seen decoding a Pod in one thread and a PodList in another)."""
    from lightkube.core import decoders
    from lightkube.resources.core_v1 import Pod

    with _DECODERS:
        pod = b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}'
        decoders.decode_object(pod, Pod)
        decoders.decode_list(b'{"metadata": {"resourceVersion": "1"}, "items": [%s]}' % pod, Pod)
        decoders.decode_watch_event(b'{"type": "ADDED", "object": %s}' % pod)
        decoders.decode_status(b'{"kind": "Status", "apiVersion": "v1", "metadata": {}, "code": 410}')


class KubernetesUnavailable(RelayError):
    code = "kubernetes_unavailable"
    status = 503
    default_hint = "The relay reaches the API server through its service account in a cluster, or KUBECONFIG elsewhere."


class KubernetesTarget(Target):
    """A pod running the keeper on its debug port, debugpy and the program behind it."""

    kind = "kubernetes"

    def __init__(
        self,
        launcher: KubernetesLauncher,
        name: str,
        namespace: str,
        *,
        host: str,
        port: int,
        mappings: list[tuple[str, str]],
        image: str = "",
        keeper_secret: str | None = None,
    ) -> None:
        self.launcher = launcher
        self.name = name
        self.namespace = namespace
        self.host = host
        self.port = port
        self.mappings = mappings
        self.image = image
        self.keeper_secret = keeper_secret
        self._exit: int | None = None

    def poll(self) -> int | None:
        if self._exit is None:
            self._exit = self.launcher.pods.exit_code(self.name)
        return self._exit

    async def send_input(self, data: bytes) -> None:
        raise InvalidRequest(
            "a pod's stdin is not reachable through the relay",
            hint="Pass input as arguments or environment; the relay has no attach rights on pods.",
        )

    async def terminate(self) -> int | None:
        code = self.poll()
        await asyncio.to_thread(self.launcher.delete_pod, self.name)
        return code

    def output_tail(self, max_bytes: int = 4096) -> str:
        """What the pod's log said last, as followed (never a call to the API: this runs on the event loop),
        and why the pod ended when the cluster said so (an eviction, a lost node)."""
        tail = self.launcher.pods.log_tail(self.name)[-max_bytes:]
        reason = self.launcher.pods.end_reason(self.name)
        return f"{tail}[{reason}]\n" if reason else tail

    def end_reason(self) -> str | None:
        return self.launcher.pods.end_reason(self.name)

    def path_mappings(self) -> list[dict[str, str]]:
        return [{"localRoot": local, "remoteRoot": remote} for local, remote in self.mappings if local != remote]

    def describe(self) -> KubernetesTargetRecord:
        record = self.described_as(KubernetesTargetRecord)
        record.pod, record.namespace, record.image = self.name, self.namespace, self.image
        record.path_mappings = [list(m) for m in self.mappings]
        return record


class KubernetesLauncher(Launcher):
    """Starts one pod per target in the relay's namespace; follows them with one watch."""

    name = "kubernetes"
    attaches_pods = True
    files_in_target = True
    code_in_image = True

    def __init__(self, settings: Settings, client: Any = None) -> None:
        self.settings = settings
        self.policy = LaunchPolicy.from_settings(settings, pulled=True)  # the kubelet pulls what a pod names
        self._client = client
        self._namespace = settings.kubernetes_namespace
        self._boot_image = settings.kubernetes_boot_image
        self.pods = PodWatch(self._new_client, settings.kubernetes_port)  # what the API says of the pods
        logging.getLogger("httpx2").setLevel(logging.WARNING)  # a line per API call otherwise
        warm_decoders()  # before any thread of this launcher decodes
        if "KUBERNETES_SERVICE_HOST" not in os.environ:
            log.warning(
                "the kubernetes launcher is on but this relay runs outside a cluster: pod IPs are reachable only "
                "from inside it (run the relay in the cluster, see deploy/)"
            )

    # -- the API ---------------------------------------------------------------------------------

    def _new_client(self, timeout: float | None = None) -> Any:
        """A client of the API (``timeout``: of each call, in seconds; lightkube's default is 10)."""
        import httpx2
        from lightkube import Client, KubeConfig

        try:
            config = KubeConfig.from_env()
            return Client(
                config=config,
                namespace=self._namespace or None,
                field_manager="debugrelay",
                timeout=None if timeout is None else httpx2.Timeout(timeout),
            )
        except Exception as exc:
            raise KubernetesUnavailable(f"cannot reach the Kubernetes API: {exc}") from exc

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    @property
    def namespace(self) -> str:
        if not self._namespace:
            self._namespace = str(self.client.namespace or "default")
        return self._namespace

    @property
    def store_label(self) -> str:
        """Which state store the pods belong to, as a label value (only that store's relays reap them)."""
        return store_identity(self.settings).replace(":", "-")

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """A blocking API call; the API's refusals become relay errors naming what was tried."""
        from lightkube import ApiError

        try:
            return fn(*args, **kwargs)
        except ApiError as exc:
            status = exc.status
            raise LaunchFailed(
                f"the Kubernetes API refused to {what}: {status.message}",
                details={"reason": status.reason, "code": status.code, "namespace": self.namespace},
                hint="The relay's Role allows pods create/get/list/watch/delete and pods/log get in its namespace.",
            ) from exc
        except RelayError:
            raise
        except Exception as exc:
            raise KubernetesUnavailable(f"cannot reach the Kubernetes API to {what}: {exc}") from exc

    def boot_image(self) -> str:
        """The image the init container copies debugpy from: the setting, else the relay pod's own image."""
        if not self._boot_image:
            self._boot_image = DEFAULT_BOOT_IMAGE
            own = os.environ.get("POD_NAME") or (
                os.environ.get("HOSTNAME") if "KUBERNETES_SERVICE_HOST" in os.environ else None
            )
            if own:
                from lightkube.resources.core_v1 import Pod

                with contextlib.suppress(Exception):
                    pod = self.client.get(Pod, own, namespace=self.namespace)
                    self._boot_image = pod.spec.containers[0].image
        return self._boot_image

    def _ensure_watch(self) -> None:
        self.pods.start(self.namespace, {MANAGED: "true", STORE: self.store_label})

    # -- launching -------------------------------------------------------------------------------

    def admit(self, spec: LaunchRequest) -> None:
        self._plan(spec, "sess-check", DEFAULT_BOOT_IMAGE, "check")

    async def start(self, spec: LaunchRequest, *, session_id: str, again: bool = False) -> Target:
        secret = new_secret()
        boot = await asyncio.to_thread(self.boot_image)
        manifest, mappings = self._plan(spec, session_id, boot, secret)
        name = manifest["metadata"]["name"]
        self._ensure_watch()
        await asyncio.to_thread(self._create, manifest)
        try:
            pod = await asyncio.to_thread(self.pods.wait_running, name, self.settings.kubernetes_start_timeout)
        except RelayError as exc:
            tail = self.pods.log_tail(name) or await asyncio.to_thread(self.pod_log, name)
            if tail:
                exc.details.setdefault("output_tail", tail[-2000:])
            await asyncio.to_thread(self.delete_pod, name)
            raise
        return KubernetesTarget(
            self,
            name,
            self.namespace,
            host=pod["status"]["podIP"],
            port=self.settings.kubernetes_port,
            mappings=mappings,
            image=manifest["spec"]["containers"][0]["image"],
            keeper_secret=secret,
        )

    def _create(self, manifest: dict[str, Any]) -> None:
        from lightkube import codecs

        self._call("create a pod", self.client.create, codecs.from_dict(manifest), namespace=self.namespace)

    def _plan(
        self, spec: LaunchRequest, session_id: str, boot_image: str, secret: str
    ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The pod's manifest and the path mappings; every check of the operator's policy happens here."""
        return pod_manifest(
            spec,
            settings=self.settings,
            policy=self.policy,
            namespace=self.namespace,
            store_label=self.store_label,
            session_id=session_id,
            boot_image=boot_image,
            secret=secret,
        )

    # -- the rest of a pod's life ----------------------------------------------------------------

    def delete_pod(self, name: str) -> None:
        """Delete a target's pod (blocking); a pod already gone is fine."""
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod

        self.pods.forget(name)
        try:
            self.client.delete(Pod, name, namespace=self.namespace, grace_period=1)
        except ApiError as exc:
            if exc.status.code != 404:
                log.warning("could not delete pod %s: %s", name, exc.status.message)
        except Exception as exc:
            log.warning("could not delete pod %s: %s", name, exc)

    def pod_log(self, name: str, lines: int = 50) -> str:
        """The last lines the target container wrote, read once (blocking, LOG_TIMEOUT at most: never on
        the event loop); empty when there are none yet or the API does not answer."""
        try:
            with self._new_client(LOG_TIMEOUT) as client:
                text = "".join(client.log(name, namespace=self.namespace, container=CONTAINER, tail_lines=lines))
        except Exception:
            return ""
        self.pods.keep_log(name, text.encode(errors="replace"))
        return text

    def recover(self, record: TargetRecord) -> Target | None:
        """The pod of a saved session, when it is one of this store's targets."""
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod

        if not isinstance(record, KubernetesTargetRecord):
            return None
        name = given(record.pod)
        if not name:
            return None
        try:
            pod = self.client.get(Pod, name, namespace=self.namespace).to_dict()
        except ApiError:
            return None
        labels = pod["metadata"].get("labels") or {}
        if labels.get(MANAGED) != "true" or labels.get(STORE) != self.store_label:
            # a stored record is a claim: only a pod this store's relays started is acted on
            log.warning("ignoring the stored pod %s: not one of this store's targets", name)
            return None
        self._ensure_watch()
        self.pods.adopt(name, pod)
        if exit_code_of(pod) is not None:
            self.pod_log(name)  # an ended target tells what it printed (recover runs in a worker thread)
        mappings = [(m[0], m[1]) for m in given(record.path_mappings) or [] if len(m) == 2]
        status = pod.get("status") or {}
        host = status.get("podIP") or given(record.host) or ""
        target = KubernetesTarget(
            self,
            name,
            self.namespace,
            host=host,
            port=self.settings.kubernetes_port,
            mappings=mappings,
            image=given(record.image) or "",
        )
        target._exit = exit_code_of(pod)
        return target

    async def remove_orphans(self, keep: set[str]) -> list[str]:
        return await asyncio.to_thread(self._remove_orphans, keep)

    def _remove_orphans(self, keep: set[str]) -> list[str]:
        """Delete this store's pods whose sessions are gone; return their names."""
        from lightkube.resources.core_v1 import Pod

        pods = self._call(
            "list pods",
            lambda: list(
                self.client.list(Pod, namespace=self.namespace, labels={MANAGED: "true", STORE: self.store_label})
            ),
        )
        removed = []
        youngest = self.settings.kubernetes_start_timeout + self.settings.launch_timeout
        for pod in pods:
            labels = pod.metadata.labels or {}
            if labels.get(SESSION) in keep:
                continue
            created = pod.metadata.creationTimestamp
            age = (datetime.now(UTC) - created).total_seconds() if isinstance(created, datetime) else youngest
            if age < youngest:
                # another replica may be launching it, its session not yet in the store this relay read
                log.info("keeping pod %s: %.0f s old, younger than a launch's budget", pod.metadata.name, age)
                continue
            self.delete_pod(pod.metadata.name)
            removed.append(pod.metadata.name)
        if removed:
            log.info("deleted %d pod(s) of sessions that are gone", len(removed))
        return removed

    # -- attaching -------------------------------------------------------------------------------

    async def attach_target(self, spec: AttachSpec) -> Target:
        """The address of pod ``spec.pod``'s debugpy (it already runs one, listening on ``spec.port``)."""
        from debugrelay.launchers.remote import RemoteTarget

        namespace = spec.namespace or self.namespace
        if namespace != self.namespace:
            raise Refused(
                f"pods of namespace '{namespace}' are out of this relay's reach",
                details={
                    "namespace": namespace,
                    "allowed": [self.namespace],
                    "setting": "DEBUGRELAY_KUBERNETES_NAMESPACE",
                },
                hint="Attach to a pod of details.allowed: the relay's Role covers its own namespace only.",
            )
        pod = await asyncio.to_thread(self._get_pod, str(spec.pod))
        _check_attachable(str(spec.pod), (pod.get("metadata") or {}).get("labels") or {})
        status = pod.get("status") or {}
        if status.get("phase") != "Running" or not status.get("podIP"):
            raise LaunchFailed(
                f"pod {spec.pod} is not running (phase {status.get('phase')})",
                details={"pod": spec.pod, "phase": status.get("phase")},
                hint="Attach once the pod runs.",
            )
        mappings = [(m.local_root, m.remote_root) for m in spec.path_mappings]
        return RemoteTarget(status["podIP"], spec.port or self.settings.kubernetes_port, None, mappings)

    def _get_pod(self, name: str) -> dict[str, Any]:
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod

        try:
            pod = self.client.get(Pod, name, namespace=self.namespace)
        except ApiError as exc:
            if exc.status.code == 404:
                raise InvalidRequest(
                    f"no pod '{name}' in namespace '{self.namespace}'",
                    details={"pod": name, "namespace": self.namespace},
                    hint="kubectl get pods lists them.",
                ) from exc
            raise LaunchFailed(
                f"the Kubernetes API refused to read pod {name}: {exc.status.message}",
                details={"pod": name, "code": exc.status.code},
            ) from exc
        except Exception as exc:
            raise KubernetesUnavailable(f"cannot reach the Kubernetes API: {exc}") from exc
        data: dict[str, Any] = pod.to_dict()
        return data

    async def close(self) -> None:
        await asyncio.to_thread(self.pods.close)
        if self._client is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(self._client.close)


def _check_attachable(name: str, labels: dict[str, str]) -> None:
    """Refuse attaching to pod ``name`` unless it opted in (the ATTACHABLE label) and is not one of
    debugrelay's own: attach by pod would otherwise reach every pod and port of the namespace, Redis and
    the other relays included."""
    if labels.get(OWN_PODS) == "debugrelay":
        raise Refused(
            f"pod {name} is one of debugrelay's own (a relay, its Redis or a target): never attached to",
            details={"pod": name, "label": f"{OWN_PODS}=debugrelay", "setting": "none"},
            hint="Attach to a workload's pod; a target the relay launched is driven through its own session.",
        )
    if labels.get(ATTACHABLE) != "true":
        raise Refused(
            f'pod {name} does not accept debuggers: it lacks the label {ATTACHABLE}="true"',
            details={"pod": name, "label": f"{ATTACHABLE}=true", "setting": "the pod's labels"},
            hint=f'Label the workload\'s pod template with {ATTACHABLE}: "true" (kubectl label pod {name} '
            f"{ATTACHABLE}=true for a running pod) to let the relay attach to it.",
        )
