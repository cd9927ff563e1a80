"""What the kubernetes launcher knows of its pods: one watch, as an informer keeps one (list, then watch
from the list's version, list again whenever the watch ends: after ``410 Gone`` a pod deleted meanwhile
is missing from the list), each target's log followed as it is written, and the ends the cluster caused
(an eviction, a lost node) told with their reason.

A pod that ends without its processes' word (deleted or failed while no kubelet saw its container end,
being deleted by the taint manager from a node that no longer answers, still Terminating past its grace
period) has the relay's side of every connection to it shut down: a lost node sends nothing, not even a
connection's end, and the session holding one would wait forever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from debugrelay.errors import LaunchFailed

from .kubernetes_pod import (
    CONTAINER,
    PULL_FAILURES,
    PULL_RETRIED,
    end_reason,
    ended_unconfirmed,
    exit_code_of,
    waiting_failure,
)

log = logging.getLogger(__name__)

WATCH_RETRY = 1.0
PULL_TRIES = 3  # failed pulls of an image (the kubelet's tries, 10 s then 20 s apart) before a launch fails
TERMINATING_MARGIN = 5.0  # seconds past a pod's grace period for its kubelet to confirm its end
LOG_KEEP = 64 * 1024  # bytes of each target's log kept for output_tail()
LOG_LINES = 500  # lines of a log read again when its stream is opened anew
LOG_RETRIES = 5  # times a followed log whose stream broke is opened again


class PodWatch:
    """This launcher's pods as the API last told them; ``changed`` is notified at every change.

    ``new_client(timeout)`` makes an API client (lightkube's); ``port`` is the keepers' port in the pods."""

    def __init__(self, new_client: Callable[..., Any], port: int) -> None:
        self.new_client = new_client
        self.port = port
        self.namespace = ""
        self.labels: dict[str, str] = {}
        self.pods: dict[str, dict[str, Any]] = {}  # name -> the pod as last seen
        self._gone: set[str] = set()  # pods seen deleted
        self._ended: dict[str, int] = {}  # pods that ended without their processes' word -> the exit code told
        self._reasons: dict[str, str] = {}  # name -> why the cluster ended it (an eviction, a lost node)
        self._pulls: dict[str, tuple[int, str]] = {}  # name -> failed pulls of its images, the last's message
        self._waiting: dict[tuple[str, str], str] = {}  # (pod, container) -> its last waiting reason
        self._logs: dict[str, bytearray] = {}  # name -> the last LOG_KEEP bytes (up to twice that) of its log
        self._following: set[str] = set()
        self._timers: dict[str, threading.Timer] = {}  # Terminating pods -> the check once their grace is over
        self.changed = threading.Condition()
        self._watcher: threading.Thread | None = None
        self._closed = threading.Event()
        self._watch_client: Any = None
        self._log_client: Any = None

    def start(self, namespace: str, labels: dict[str, str]) -> None:
        """Start watching the pods of ``namespace`` that carry ``labels`` (once; later calls do nothing)."""
        with self.changed:
            if self._watcher is None and not self._closed.is_set():
                self.namespace, self.labels = namespace, labels
                self._watcher = threading.Thread(target=self._watch, name="k8s-watch", daemon=True)
                self._watcher.start()

    def _watch(self) -> None:
        """Follow the pods: their phase, IP and exit codes (one watch for every target).

        List, then watch from the list's version; every time the watch ends (an error, ``410 Gone``, the
        server's timeout) list again: a pod deleted while the watch was away is missing from the list."""
        from lightkube import ApiError
        from lightkube.resources.core_v1 import Pod

        labels = self.labels
        while not self._closed.is_set():
            try:
                if self._watch_client is None:
                    self._watch_client = self.new_client()
                client = self._watch_client
                pods = client.list(Pod, namespace=self.namespace, labels=labels)
                self._listed([pod.to_dict() for pod in pods])
                stream = client.watch(
                    Pod,
                    namespace=self.namespace,
                    labels=labels,
                    resource_version=pods.resourceVersion,
                    server_timeout=300,
                )
                for op, pod in stream:
                    self._seen(op, pod.to_dict())
                    if self._closed.is_set():
                        return
            except ApiError as exc:
                if self._closed.is_set():
                    return
                if exc.status.code == 410:
                    log.info("the pods' watch is too far behind (410 Gone); listing them again")
                    continue
                log.info("watching pods failed (%s); watching again", exc.status.message)
                self._closed.wait(WATCH_RETRY)
            except Exception as exc:
                if self._closed.is_set():
                    return
                log.info("watching pods failed (%s); watching again", exc)
                self._closed.wait(WATCH_RETRY)

    def _listed(self, pods: list[dict[str, Any]]) -> None:
        """A fresh list of this store's pods: the ones known but missing from it are gone."""
        listed = {pod["metadata"]["name"] for pod in pods}
        with self.changed:
            missing = [name for name in self.pods if name not in listed]
        for name in missing:
            self._seen("DELETED", self.pods.get(name) or {"metadata": {"name": name}})
        for pod in pods:
            self._seen("MODIFIED", pod)

    def _seen(self, op: str, pod: dict[str, Any]) -> None:
        """One change of a pod, as the watch (or a list) tells it."""
        name = pod["metadata"]["name"]
        with self.changed:
            self._count_pulls(name, pod)
            timer = None
            if op == "DELETED":
                self.pods.pop(name, None)
                self._gone.add(name)
                self._pulls.pop(name, None)
                self._logs.pop(name, None)  # nothing asks a deleted pod's output any more
                for key in [k for k in self._waiting if k[0] == name]:
                    del self._waiting[key]
            else:
                self.pods[name] = pod
            unconfirmed = name not in self._ended and ended_unconfirmed(pod, deleted=op == "DELETED")
            if unconfirmed:
                code = exit_code_of(pod)
                self._ended[name] = -1 if code is None else code
            elif op != "DELETED" and pod["metadata"].get("deletionTimestamp") and name not in self._timers:
                grace = float(pod["metadata"].get("deletionGracePeriodSeconds") or 0)
                timer = self._timers[name] = threading.Timer(grace + TERMINATING_MARGIN, self._overdue, (name,))
                timer.daemon = True
            reason = end_reason(pod)
            if reason:
                self._reasons[name] = reason
            self.changed.notify_all()
        status = pod.get("status") or {}
        if unconfirmed:
            log.info("pod %s ended without its processes' word: %s", name, reason or "deleted")
            self._release(status.get("podIP"))
        if timer is not None:
            timer.start()
        if op != "DELETED" and status.get("phase") == "Running" and status.get("podIP"):
            self._follow(name)

    def _count_pulls(self, name: str, pod: dict[str, Any]) -> None:
        """Count the pod's failed image pulls: each time a container turns to ``ErrImagePull``."""
        status = pod.get("status") or {}
        for cs in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            reason = waiting.get("reason", "")
            key = (name, str(cs.get("name")))
            if reason == "ErrImagePull" and self._waiting.get(key) != reason:
                tries = self._pulls.get(name, (0, ""))[0] + 1
                self._pulls[name] = (tries, str(waiting.get("message") or reason))
            self._waiting[key] = reason

    def _overdue(self, name: str) -> None:
        """A pod still Terminating past its grace period: no kubelet confirms its end (its node is gone)."""
        with self.changed:
            self._timers.pop(name, None)
            pod = self.pods.get(name)
            if pod is None or name in self._ended:
                return
            code = exit_code_of(pod)
            self._ended[name] = -1 if code is None else code
            self._reasons.setdefault(name, f"pod {name} is still terminating past its grace period: its node is lost")
            self.changed.notify_all()
        log.info("pod %s is still terminating past its grace period: taken as ended", name)
        self._release((pod.get("status") or {}).get("podIP"))

    def _release(self, ip: str | None) -> None:
        """Shut down this relay's connections to a pod that ended unheard: a lost node sends nothing, not
        even the end of a connection, so the session would wait on it forever; it reads its end now."""
        if not ip:
            return
        port = self.port
        with contextlib.suppress(psutil.Error):
            for conn in psutil.Process().net_connections(kind="tcp"):
                if conn.fd < 0 or not conn.raddr or (conn.raddr.ip, conn.raddr.port) != (ip, port):
                    continue
                with contextlib.suppress(OSError), socket.socket(fileno=os.dup(conn.fd)) as sock:
                    if sock.getpeername()[:2] == (ip, port):  # still that connection, not a reused descriptor
                        sock.shutdown(socket.SHUT_RDWR)

    # -- logs --------------------------------------------------------------------------------------

    def _follow(self, name: str) -> None:
        with self.changed:
            if name in self._following or self._closed.is_set():
                return
            self._following.add(name)
        threading.Thread(target=self._follow_log, args=(name,), name=f"k8s-log-{name}", daemon=True).start()

    def _follow_log(self, name: str) -> None:
        """Keep the last LOG_KEEP bytes the target container writes, as it writes them, until it ends; a
        stream the network broke is opened again (its tail then replaces what was kept)."""
        from lightkube import ApiError

        for attempt in range(LOG_RETRIES):
            try:
                with self.changed:
                    if self._log_client is None:
                        self._log_client = self.new_client()
                    client = self._log_client
                lines = client.log(
                    name, namespace=self.namespace, container=CONTAINER, follow=True, tail_lines=LOG_LINES
                )
                for index, line in enumerate(lines):
                    self.keep_log(name, line.encode(errors="replace"), fresh=attempt > 0 and index == 0)
                    if self._closed.is_set():
                        return
            except ApiError as exc:  # refused (no rights, the pod gone): asking again changes nothing
                log.debug("cannot follow the log of pod %s: %s", name, exc.status.message)
                return
            except Exception as exc:
                log.debug("following the log of pod %s broke: %s", name, exc)
            else:
                return  # the container ended: its log is whole
            with self.changed:
                if name in self._gone:
                    return
            if self._closed.wait(WATCH_RETRY):
                return

    def keep_log(self, name: str, data: bytes, *, fresh: bool = False) -> None:
        """Keep ``data`` as the latest of pod ``name``'s log (``fresh``: in place of what was kept)."""
        with self.changed:
            if name in self._gone:
                return
            kept = self._logs.setdefault(name, bytearray())
            if fresh:
                kept.clear()
            kept += data
            if len(kept) > 2 * LOG_KEEP:
                del kept[:-LOG_KEEP]

    def log_tail(self, name: str) -> str:
        """What the target container wrote last, as followed (never blocks: no API call)."""
        with self.changed:
            return bytes(self._logs.get(name, b"")[-LOG_KEEP:]).decode(errors="replace")

    def end_reason(self, name: str) -> str | None:
        """Why the cluster ended pod ``name`` (an eviction, a lost node), when it did."""
        with self.changed:
            return self._reasons.get(name)

    def exit_code(self, name: str) -> int | None:
        """The pod's target exit code once it ended; -1 when it ended without one; else None."""
        with self.changed:
            if name in self._ended:
                return self._ended[name]
            pod = self.pods.get(name)
            if pod is None:
                return -1 if name in self._gone else None
            return exit_code_of(pod)

    def wait_running(self, name: str, timeout: float) -> dict[str, Any]:
        """The pod once it runs with an IP; :class:`LaunchFailed` when it cannot (blocking)."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                pod = self.pods.get(name)
                if name in self._gone:
                    raise LaunchFailed(f"pod {name} was deleted before it ran", details={"pod": name})
                if pod is not None:
                    status = pod.get("status") or {}
                    failure = waiting_failure(pod)
                    tries = self._pulls.get(name, (0, ""))
                    if failure is not None and failure[0] in PULL_RETRIED:
                        if failure[0] == "ErrImagePull" or tries[0] < PULL_TRIES:
                            failure = None  # the kubelet tries again: a registry's hiccup or rate limit passes
                        else:
                            failure = (failure[0], f"{tries[0]} pulls failed, the last: {tries[1]}")
                    if failure is not None:
                        reason, message = failure
                        hint = (
                            "Push the image to a registry the cluster pulls from, and name it as the cluster knows it."
                            if reason in PULL_FAILURES
                            else "Read details.message; the pod's events (kubectl describe pod) tell more."
                        )
                        raise LaunchFailed(
                            f"pod {name} cannot start: {reason}",
                            details={"pod": name, "reason": reason, "message": message[:500]},
                            hint=hint,
                        )
                    if status.get("phase") in ("Succeeded", "Failed"):
                        raise LaunchFailed(
                            f"pod {name} ended before debugpy was ready (exit code {exit_code_of(pod)})",
                            details={"pod": name, "exit_code": exit_code_of(pod)},
                        )
                    if status.get("phase") == "Running" and status.get("podIP"):
                        return pod
                left = deadline - time.monotonic()
                if left <= 0:
                    conditions = [c.get("message") for c in status.get("conditions") or [] if c.get("message")]
                    raise LaunchFailed(
                        f"pod {name} did not run within {timeout:g} s",
                        details={
                            "pod": name,
                            "phase": status.get("phase") if pod else None,
                            "why": conditions[:3],
                            "setting": "DEBUGRELAY_KUBERNETES_START_TIMEOUT",
                        },
                        hint="The cluster may lack room for the pod's requests, or be pulling a large image: "
                        "raise DEBUGRELAY_KUBERNETES_START_TIMEOUT for a slow pull or a node scale-up.",
                    )
                self.changed.wait(left)

    def adopt(self, name: str, pod: dict[str, Any]) -> None:
        """A pod read outside the watch (a recovered session's), known until the watch tells more."""
        with self.changed:
            self.pods.setdefault(name, pod)
            reason = end_reason(pod)
            if reason:
                self._reasons[name] = reason

    def forget(self, name: str) -> None:
        """Drop what is kept of pod ``name`` that its deletion makes useless (its log, its timer)."""
        with self.changed:
            self._logs.pop(name, None)
            timer = self._timers.pop(name, None)
        if timer is not None:
            timer.cancel()

    def close(self) -> None:
        self._closed.set()
        with self.changed:
            timers = list(self._timers.values())
            self.changed.notify_all()
        for timer in timers:
            timer.cancel()
        for client in (self._watch_client, self._log_client):
            if client is not None:
                with contextlib.suppress(Exception):
                    client.close()
