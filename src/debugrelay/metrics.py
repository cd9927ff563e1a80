"""The relay's measures for Prometheus: sessions by state and launcher, launches by outcome, launch to first
stop, keeper reconnects, the state store's write-behind backlog, the evidence written, traced calls kept.

Each relay has a registry of its own (a process may hold several relays, the tests do); ``/metrics`` answers
it together with the process-wide one, where :func:`request_timer` times the requests.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from debugrelay.sessions import Session
    from debugrelay.store import EvidenceItem

ASGIApp = Callable[[Any, Any, Any], Any]
Scope = dict[str, Any]
Receive = Callable[[], Any]
Send = Callable[[Any], Any]
Message = dict[str, Any]

PREFIX = "debugrelay"
FIRST_STOP_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0)
REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0, 300.0)
UNTIMED = frozenset({"/metrics", "/livez", "/readyz", "/health"})  # the scrapes and probes themselves

# process-wide: one observation per request, by route (its template), method and status class
REQUESTS = Histogram(
    f"{PREFIX}_request_duration_seconds",
    "Requests by route, method and status class, and how long each took (long-polls included)",
    ["method", "route", "status"],
    buckets=REQUEST_BUCKETS,
)


def route_of(scope: Scope) -> str:
    """A routed request's route template; a mounted app's (``/mcp``) is its mount path."""
    template: str = scope.get("path_template") or ""
    if template:
        return template
    handler = scope.get("route_handler")
    paths = sorted(getattr(handler, "paths", ()))
    return paths[0] if paths else "-"


def request_timer(app: ASGIApp) -> ASGIApp:
    """ASGI middleware: each request's time, observed once it has answered (a few µs a request)."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in UNTIMED:
            await app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [500]

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            REQUESTS.labels(scope["method"], route_of(scope), f"{status[0] // 100}xx").observe(
                time.perf_counter() - started
            )

    return middleware


class _Live(Collector):
    """Gauges read when scraped, from what the relay holds now."""

    def __init__(self, sessions: Callable[[], Iterable[Session]], pending: Callable[[], int]) -> None:
        self.sessions = sessions
        self.pending = pending

    def collect(self) -> Iterator[Metric]:
        held = GaugeMetricFamily(
            f"{PREFIX}_sessions", "Sessions this relay holds, by state and launcher", labels=["state", "launcher"]
        )
        calls = GaugeMetricFamily(f"{PREFIX}_traced_calls", "Calls of traced functions kept in this relay's memory")
        counts: dict[tuple[str, str], int] = {}
        kept = 0
        for session in list(self.sessions()):
            record = session.record
            launcher = (record.target.kind if record.target is not None else None) or (
                (record.launch.launcher if record.launch is not None else None) or "-"
            )
            key = (record.status, launcher)
            counts[key] = counts.get(key, 0) + 1
            kept += sum(len(book) for book in session.calls.calls.values())
        for (state, launcher), n in sorted(counts.items()):
            held.add_metric([state, launcher], n)
        calls.add_metric([], kept)
        yield held
        yield calls
        yield GaugeMetricFamily(
            f"{PREFIX}_store_pending_writes",
            "Changes kept in memory while the state store is unreachable, written back when it answers",
            value=self.pending(),
        )


class Metrics:
    """One relay's measures, in its own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.launches = Counter(
            f"{PREFIX}_launches",
            "Launches, by launcher and outcome (started, failed)",
            ["launcher", "outcome"],
            registry=self.registry,
        )
        self.first_stop = Histogram(
            f"{PREFIX}_launch_to_first_stop_seconds",
            "From a launch to its program's first stop (or end)",
            ["launcher"],
            buckets=FIRST_STOP_BUCKETS,
            registry=self.registry,
        )
        self.keeper_reconnects = Counter(
            f"{PREFIX}_keeper_reconnects",
            "Connections made again to a running target's keeper (a relay restarted)",
            registry=self.registry,
        )
        # a counter: the store bounds what it holds per session and drops the oldest itself, unseen here
        self.evidence = Counter(
            f"{PREFIX}_evidence_bytes",
            "Bytes of evidence this relay wrote to the state store (snapshots, post-mortems, capture tables), "
            "by kind, in UTF-8; the store keeps at most 16 MiB a session, the oldest go first",
            ["kind"],
            registry=self.registry,
        )

    def kept(self, item: EvidenceItem) -> None:
        """Count an evidence item the store was given."""
        self.evidence.labels(item.kind).inc(len(item.text.encode("utf-8", "surrogatepass")))

    def watch(self, sessions: Callable[[], Iterable[Session]], pending: Callable[[], int]) -> None:
        """Read the relay's sessions and store backlog when scraped."""
        self.registry.register(_Live(sessions, pending))

    def exposition(self) -> bytes:
        """The text format: this relay's measures, then the process's (requests, Python's own)."""
        return generate_latest(self.registry) + generate_latest(REGISTRY)
