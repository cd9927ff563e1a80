"""What the app adds for observability beyond ``/metrics``: its log format, and OpenTelemetry traces through
Litestar's own plugin.

Traces are on with ``DEBUGRELAY_OTEL=on`` or when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set, as an operator's OpenTelemetry set-up injects it;
``OTEL_SDK_DISABLED=true`` turns them off. Spans go over OTLP/HTTP, configured by the standard ``OTEL_*``
variables, unless the process already has a tracer provider (an app embedding the relay). Without the
``otel`` extra the relay starts without traces and logs one warning saying what to install.
"""

from __future__ import annotations

import copy
import logging
import os
from typing import TYPE_CHECKING, Any

from litestar.config.app import AppConfig
from litestar.logging.config import LoggingConfig
from litestar.plugins import InitPluginProtocol, PluginProtocol

from debugrelay import __version__
from debugrelay.logs import JsonFormatter, RequestFields, request_fields
from debugrelay.metrics import UNTIMED, ASGIApp, route_of

if TYPE_CHECKING:
    from litestar.types import Scope

    from debugrelay.config import Settings

log = logging.getLogger("debugrelay")
ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
REDACTED = "REDACTED"  # OpenTelemetry's own word for a value it keeps out of a span
EXTRA_HINT = "install the relay with its otel extra: pip install 'debugrelay[otel]'"


def log_config(settings: Settings) -> LoggingConfig:
    """Litestar's logging set-up (a queue, so the event loop never waits on stderr), in the chosen format."""
    if settings.log_format != "json":
        return LoggingConfig()
    handlers = copy.deepcopy(LoggingConfig().handlers)  # Litestar's defaults, shared by every config
    handlers["queue_listener"]["filters"] = ["request"]  # where a record is logged, before the queue
    return LoggingConfig(
        formatters={"standard": {"()": JsonFormatter}},
        filters={"request": {"()": RequestFields}},
        handlers=handlers,
    )


def log_middleware(settings: Settings) -> list[Any]:
    """The request's method and route on its JSON log lines."""
    return [request_fields] if settings.log_format == "json" else []


def traces_asked(settings: Settings) -> str | None:
    """Why traces are on (the setting or variable that asks for them), or None."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    if settings.otel:
        return "DEBUGRELAY_OTEL"
    return next((name for name in ENDPOINTS if os.environ.get(name)), None)


def tracing_plugins(settings: Settings) -> list[PluginProtocol]:
    """Litestar's OpenTelemetry plugin and the route naming of its spans, when traces are asked for."""
    asked = traces_asked(settings)
    if asked is None:
        return []
    try:
        from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
        from opentelemetry import trace

        provider = _provider(trace)
    except ImportError as missing:
        what = missing.name or "OpenTelemetry"
        log.warning("%s asks for traces but %s is not installed: no traces; %s", asked, what, EXTRA_HINT)
        return []
    config = OpenTelemetryConfig(
        tracer_provider=provider,
        exclude=[f"^{path}$" for path in sorted(UNTIMED)],  # probes and scrapes
        exclude_spans=["receive", "send"],  # one span a request, not one per body chunk of a long-poll
        scope_span_details_extractor=_span_start,
        server_request_hook_handler=_hide_query,
    )
    return [OpenTelemetryPlugin(config), _RouteNames()]


def _provider(trace: Any) -> Any:
    """The process's tracer provider when one is set, else the SDK's exporting over OTLP/HTTP."""
    current = trace.get_tracer_provider()
    if not isinstance(current, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return current
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({SERVICE_VERSION: __version__})  # with OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get(SERVICE_NAME, "")).startswith("unknown_service"):
        resource = resource.merge(Resource({SERVICE_NAME: "debugrelay"}))
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider


def _span_start(scope: Scope) -> tuple[str, dict[str, Any]]:
    """A span's name before routing: its method alone (not the path, which names sessions), renamed with
    the route template once the route is known."""
    return str(scope.get("method", "")) or "HTTP", {}


def _hide_query(span: Any, scope: dict[str, Any]) -> None:
    """A span keeps a query's parameter names, never their values (a ``?password=`` or a token): the
    instrumentation copies the raw query into ``http.url`` and ``url.query``."""
    raw = scope.get("query_string") or b""
    attributes = getattr(span, "attributes", None)
    if not raw or not span.is_recording() or not attributes:
        return
    hidden = hidden_query(raw.decode("latin-1"))
    url = attributes.get("http.url")
    if isinstance(url, str):
        span.set_attribute("http.url", url.split("?", 1)[0] + "?" + hidden)
    if "url.query" in attributes:
        span.set_attribute("url.query", hidden)


def hidden_query(query: str) -> str:
    """``a=1&b=2`` as ``a=REDACTED&b=REDACTED``; a part without ``=`` (its whole text a value) is hidden too."""
    return "&".join(
        f"{part.split('=', 1)[0]}={REDACTED}" if "=" in part else REDACTED for part in query.split("&") if part
    )


def _name_span(app: ASGIApp) -> ASGIApp:
    """After routing: the request's span is named ``METHOD /route/{template}``, its ``http.route`` set."""
    from opentelemetry import trace

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            span = trace.get_current_span()
            route = route_of(scope)
            if span.is_recording() and route != "-":
                span.update_name(f"{scope['method']} {route}")
                span.set_attribute("http.route", route)
        await app(scope, receive, send)

    return middleware


class _RouteNames(InitPluginProtocol):
    def on_app_init(self, app_config: AppConfig) -> AppConfig:
        app_config.middleware.append(_name_span)
        return app_config
