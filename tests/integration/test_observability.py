"""What an operator's tooling reads besides ``/metrics``: OpenTelemetry traces (the otel extra, switched on by
a setting) and JSON log lines on request, with the relay's redaction still applied."""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from litestar.exceptions import LitestarDeprecationWarning
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from debugrelay import __version__
from debugrelay.api import create_app
from debugrelay.config import load_settings
from debugrelay.sessions import SessionManager
from debugrelay.store import MemoryStore
from tests.conftest import Relay

pytestmark = pytest.mark.integration

HOST = "testserver"
SECRET = "ghp_R2d2C3poR2d2C3poR2d2C3poR2d2C3po1234"  # a GitHub token's shape: redacted by the built-in rules
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
# OpenTelemetry's packages hidden from the relay, as where the otel extra is not installed
WITHOUT_OTEL = """
import importlib.abc, sys

class Hidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("opentelemetry.sdk", "opentelemetry.instrumentation", "opentelemetry.exporter")):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hidden())
"""


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    """Every span this process ends, kept in memory (the relay uses a tracer provider the process has)."""
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter


@pytest.fixture
async def traced(tmp_path: Path, spans: InMemorySpanExporter) -> AsyncIterator[httpx.AsyncClient]:
    """The relay's app with DEBUGRELAY_OTEL on, served in process."""
    settings = load_settings(state_dir=str(tmp_path), pool_size=0, allowed_hosts=[HOST], otel=True)
    manager = SessionManager(settings, MemoryStore(), {})
    await manager.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LitestarDeprecationWarning)  # Litestar 2.2x announces its 3.0 style
        app = create_app(settings, manager)
    spans.clear()
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=f"http://{HOST}") as http:
            yield http
    finally:
        await asyncio.wait_for(manager.close(), 30)  # in a task of its own (awaited here, it did not end)


async def test_a_request_is_a_span_named_by_its_route(traced: httpx.AsyncClient, spans: InMemorySpanExporter) -> None:
    sid = (await traced.post("/sessions", json={})).json()["session_id"]
    parent = {"traceparent": f"00-{TRACE_ID}-00f067aa0ba902b7-01"}  # the caller's trace goes on here
    assert (await traced.get(f"/sessions/{sid}", headers=parent)).status_code == 200
    assert (await traced.get("/livez")).status_code == 200
    assert (await traced.get("/metrics")).status_code == 200

    ended = {span.name: span for span in spans.get_finished_spans()}
    assert set(ended) == {"POST /sessions", "GET /sessions/{session_id}"}, ended  # probes and scrapes: none
    read = ended["GET /sessions/{session_id}"]
    assert read.kind == trace.SpanKind.SERVER
    assert read.attributes is not None and read.attributes["http.route"] == "/sessions/{session_id}"
    assert read.attributes["http.status_code"] == 200
    assert f"{read.context.trace_id:032x}" == TRACE_ID


async def test_a_span_keeps_a_querys_names_and_none_of_its_values(
    traced: httpx.AsyncClient, spans: InMemorySpanExporter
) -> None:
    sid = (await traced.post("/sessions", json={})).json()["session_id"]
    query = {"since": "0", "password": "hunter2-is-not-a-password", "token": SECRET}
    await traced.get(f"/sessions/{sid}/output", params=query)
    await traced.get("/sessions", params={"password": "hunter2-is-not-a-password"})  # refused: a 400 span too

    ended = spans.get_finished_spans()
    assert {span.name for span in ended} >= {"GET /sessions/{session_id}/output", "GET /sessions"}, ended
    for span in ended:
        said = " ".join(str(value) for value in (span.attributes or {}).values())
        assert "hunter2" not in said and SECRET not in said and "ghp_" not in said, span.attributes
    read = next(span for span in ended if span.name == "GET /sessions/{session_id}/output")
    assert read.attributes is not None
    url = str(read.attributes["http.url"])
    assert url.endswith(f"/sessions/{sid}/output?since=REDACTED&password=REDACTED&token=REDACTED"), url


def test_without_the_otel_extra_the_relay_starts_and_says_so_once(tmp_path: Path) -> None:
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(WITHOUT_OTEL)
    relay = Relay(tmp_path, env={"DEBUGRELAY_OTEL": "on", "PYTHONPATH": str(shim)})
    try:
        assert relay.http.get("/livez").status_code == 200
    finally:
        relay.stop()
    said = [line for line in relay.log.read_text().splitlines() if "traces" in line]
    assert len(said) == 1, said
    assert "DEBUGRELAY_OTEL" in said[0] and "pip install 'debugrelay[otel]'" in said[0], said


def records(log: Path) -> list[dict[str, Any]]:
    """Every line the relay wrote, each parsed as JSON (a line that is not fails the test)."""
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def test_json_logs_are_one_object_a_line_with_the_request_and_no_secret(tmp_path: Path) -> None:
    env = {"DEBUGRELAY_LOG_FORMAT": "json", "DEBUGRELAY_LAUNCHERS": f"local,{SECRET}"}  # a name it logs
    relay = Relay(tmp_path, env=env)
    try:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        started = relay.http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
            headers={"Accept": "application/json, text/event-stream"},
        )
        assert started.status_code == 200, started.text  # the MCP SDK logs the session it opens
    finally:
        relay.stop()

    lines = records(relay.log)
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines), lines
    assert any(line["message"].startswith(f"debugrelay {__version__} listening on") for line in lines), lines
    (unknown,) = [line for line in lines if "names launchers" in line["message"]]
    assert unknown["level"] == "WARNING" and "[SECRET_" in unknown["message"], unknown
    assert SECRET not in relay.log.read_text()
    in_requests = [line for line in lines if "method" in line]
    assert in_requests, lines
    assert all((line["method"], line["route"]) == ("POST", "/mcp") for line in in_requests), in_requests
