"""A FAKE Kubernetes API server and kubelet, for the kubernetes launcher's tests (no cluster can run here).

It serves the few pod endpoints the launcher uses (create, get, list, watch, delete, log) over HTTP
with a bearer token, admits a pod only if it meets the "restricted" Pod Security Standard (as a
namespace enforcing it would) and records every request. Its kubelet plays each pod on this machine:
every ``emptyDir`` is a temporary folder, the init containers run to completion first (really: the
relay's copy of debugpy and the hooks lands in the folder), then the target container's command
runs as a local process at a loopback address of its own (127.0.0.N: the pod's IP); its exit makes
the pod Succeeded or Failed; a delete kills it. What it cannot play: images (commands run on this
machine's Python), network policy, and folders a pod mounts where this machine has one (``/tmp``).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "fake-kubernetes-token"
INNER = "127.0.0.1:5679"  # the pod-private loopback port debugpy listens on behind the keeper


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


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


@dataclass
class FakePod:
    obj: dict[str, Any]
    dirs: dict[str, str] = field(default_factory=dict)  # volume name -> folder
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    deleted: bool = False


class FakeKubernetes:
    """The FAKE API server (``url``, ``kubeconfig``) with its kubelet; ``requests`` lists every call."""

    def __init__(self, workdir: Path, namespace: str = "debug") -> None:
        self.workdir = workdir
        self.namespace = namespace
        self.requests: list[tuple[str, str, dict[str, Any] | None]] = []
        self.created: list[dict[str, Any]] = []  # pod manifests as the launcher sent them
        self.pods: dict[str, FakePod] = {}
        self.events: list[tuple[int, str, dict[str, Any]]] = []
        self.version = itertools.count(1)
        self.rv = 0
        self.changed = threading.Condition()
        self.ips = itertools.count(2)
        self.stopping = False
        handler = type("Handler", (_Handler,), {"fake": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.kubeconfig = workdir / "kubeconfig"
        self.kubeconfig.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
                    "users": [{"name": "relay", "user": {"token": TOKEN}}],
                    "contexts": [
                        {"name": "fake", "context": {"cluster": "fake", "user": "relay", "namespace": namespace}}
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
            self.changed.notify_all()

    def add_pod(self, manifest: dict[str, Any], *, play: bool = True) -> FakePod:
        """A pod as if created (by the launcher, or by someone else: a workload to attach to)."""
        obj = json.loads(json.dumps(manifest))
        obj["metadata"].setdefault("namespace", self.namespace)
        obj["metadata"]["uid"] = os.urandom(8).hex()
        obj["status"] = {"phase": "Pending"}
        pod = FakePod(obj)
        self.pods[obj["metadata"]["name"]] = pod
        self._emit("ADDED", pod)
        if play:
            threading.Thread(target=self._kubelet, args=(pod,), daemon=True).start()
        return pod

    def set_status(self, name: str, status: dict[str, Any]) -> None:
        pod = self.pods[name]
        pod.obj["status"] = status
        self._emit("MODIFIED", pod)

    def delete(self, name: str) -> bool:
        pod = self.pods.pop(name, None)
        if pod is None:
            return False
        pod.deleted = True
        self._stop_pod(pod)
        self._emit("DELETED", pod)
        for folder in pod.dirs.values():
            shutil.rmtree(folder, ignore_errors=True)
        return True

    def stop(self) -> None:
        for name in list(self.pods):
            self.delete(name)
        with self.changed:
            self.stopping = True
            self.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()

    # -- the kubelet (a subclass may play pods another way: override _kubelet and _stop_pod) ---

    def _stop_pod(self, pod: FakePod) -> None:
        """End what plays ``pod`` (its processes), at once."""
        if pod.proc is not None and pod.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pod.proc.pid, signal.SIGKILL)
            pod.proc.wait()

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

    def _kubelet(self, pod: FakePod) -> None:
        spec = pod.obj["spec"]
        name = pod.obj["metadata"]["name"]
        for volume in spec.get("volumes", []):
            pod.dirs[volume["name"]] = tempfile.mkdtemp(prefix=f"{name}-{volume['name']}-", dir=self.workdir)
        ip = f"127.0.0.{next(self.ips)}"
        inner = f"127.0.0.1:{free_port()}"
        init_statuses = []
        for init in spec.get("initContainers", []):
            argv, env = self._command(pod, init, ip, inner)
            done = subprocess.run(argv, env=env, capture_output=True, check=False)
            init_statuses.append(_status(init, {"terminated": {"exitCode": done.returncode}}))
            if done.returncode != 0 or pod.deleted:
                if not pod.deleted:
                    self.set_status(name, {"phase": "Failed", "initContainerStatuses": init_statuses})
                return
        (container,) = spec["containers"]
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
            return
        running = _status(container, {"running": {}}, ready=True)
        self.set_status(
            name,
            {"phase": "Running", "podIP": ip, "initContainerStatuses": init_statuses, "containerStatuses": [running]},
        )
        code = pod.proc.wait()
        if pod.deleted:
            return
        ended = _status(container, {"terminated": {"exitCode": code}})
        self.set_status(
            name,
            {
                "phase": "Succeeded" if code == 0 else "Failed",
                "podIP": ip,
                "initContainerStatuses": init_statuses,
                "containerStatuses": [ended],
            },
        )


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

    def _status(self, code: int, reason: str, message: str) -> None:
        self._send(
            code,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": reason,
                "message": message,
                "code": code,
            },
        )

    def _route(self, method: str) -> None:
        fake = self.fake
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        fake.requests.append((method, self.path, body))
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            self._status(401, "Unauthorized", "no or wrong bearer token")
            return
        segments = parts.path.strip("/").split("/")
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
        elif method == "GET" and name is None:
            if query.get("watch") in ("true", "1"):
                self._watch(query)
            else:
                items = [p.obj for p in fake.pods.values() if _selected(p.obj, query.get("labelSelector"))]
                self._send(
                    200,
                    {
                        "kind": "PodList",
                        "apiVersion": "v1",
                        "metadata": {"resourceVersion": str(fake.rv)},
                        "items": items,
                    },
                )
        elif method == "GET" and sub == "log":
            pod = fake.pods.get(name or "")
            if pod is None or pod.log is None:
                self._status(404 if pod is None else 400, "NotFound" if pod is None else "BadRequest", "no log")
                return
            lines = pod.log.read_bytes().decode(errors="replace").splitlines(keepends=True)
            data = "".join(lines[-int(query.get("tailLines", "0") or 0) :] if "tailLines" in query else lines).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif method == "GET":
            pod = fake.pods.get(name or "")
            if pod is None:
                self._status(404, "NotFound", f'pods "{name}" not found')
            else:
                self._send(200, pod.obj)
        elif method == "DELETE":
            pod = fake.pods.get(name or "")
            if pod is None or not fake.delete(name or ""):
                self._status(404, "NotFound", f'pods "{name}" not found')
            else:
                self._send(200, pod.obj)
        else:
            self._status(405, "MethodNotAllowed", method)

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
        since = int(query.get("resourceVersion") or 0)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        with fake.changed:
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
                    while fake.rv == last and not fake.stopping:
                        fake.changed.wait(1.0)
                    if fake.stopping:
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
