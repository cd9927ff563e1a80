"""A Python client of the relay's HTTP API: one endpoint table, a blocking and an async transport."""

from __future__ import annotations

import os
from collections.abc import Awaitable
from typing import Any, Generic, TypeVar

import httpx

DEFAULT_URL = "http://127.0.0.1:8765"
# The relay long-polls for at most 300 s (``/wait``, ``wait`` on resume); leave room for the answer.
READ_TIMEOUT = 330.0

R = TypeVar("R")


class ApiError(Exception):
    """The relay answered with its error envelope, or could not be reached (``status`` 0)."""

    def __init__(
        self, status: int, code: str, message: str, *, hint: str = "", details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.details = details or {}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details, "hint": self.hint}

    @property
    def hint_is_default(self) -> bool:
        """No hint, or the API's wording of the domain's default one (an adapter words it its own way)."""
        return not self.hint or any(word in self.hint for word in _HTTP_WORDS)


_HTTP_WORDS = ("/sessions", "/schema", "GET ", "POST ", "DELETE ", "/wait", "/output", "/scopes")


def default_url() -> str:
    return os.environ.get("DEBUGRELAY_URL") or DEFAULT_URL


def default_token() -> str | None:
    return os.environ.get("DEBUGRELAY_TOKEN") or None


def _verifies(url: str) -> bool:
    """Certificates are checked on an https URL; a plain-HTTP relay (loopback) has none, and loading the
    CA bundle anyway costs 90 ms of every CLI command's start."""
    return url.lower().startswith("https://")


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _timeout() -> httpx.Timeout:
    return httpx.Timeout(10.0, read=READ_TIMEOUT)


def _unreachable(url: str, exc: Exception) -> ApiError:
    return ApiError(
        0,
        "relay_unreachable",
        f"cannot reach the relay at {url}: {exc.__class__.__name__}: {exc}",
        hint="Start it with `debugrelay serve`, or point --url / DEBUGRELAY_URL at a running relay.",
        details={"url": url},
    )


def _decode(response: httpx.Response) -> Any:
    try:
        data = response.json() if response.content else None
    except ValueError:
        data = None
    if response.is_success:
        return data
    error = data.get("error") if isinstance(data, dict) else None
    if not isinstance(error, dict):
        raise ApiError(response.status_code, "http_error", response.text[:500] or response.reason_phrase)
    raise ApiError(
        response.status_code,
        str(error.get("code") or "http_error"),
        str(error.get("message") or ""),
        hint=str(error.get("hint") or ""),
        details=error.get("details") if isinstance(error.get("details"), dict) else {},
    )


def _clean(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class _Endpoints(Generic[R]):
    """Every call the CLI and the MCP forwarder make; ``R`` is the result or an awaitable of it."""

    def _call(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> R:
        raise NotImplementedError

    # -- server
    def health(self) -> R:
        return self._call("GET", "/health")

    def info(self) -> R:
        return self._call("GET", "/info")

    # -- sessions
    def list_sessions(self) -> R:
        return self._call("GET", "/sessions")

    def create_session(self, **body: Any) -> R:
        return self._call("POST", "/sessions", json=_clean(body))

    def get_session(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}")

    def delete_session(self, session_id: str) -> R:
        return self._call("DELETE", f"/sessions/{session_id}")

    def status(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/status")

    def launch(self, session_id: str, spec: dict[str, Any]) -> R:
        return self._call("POST", f"/sessions/{session_id}/launch", json=_clean(spec))

    def attach(self, session_id: str, spec: dict[str, Any]) -> R:
        return self._call("POST", f"/sessions/{session_id}/attach", json=_clean(spec))

    def resume(
        self,
        session_id: str,
        command: str,
        *,
        thread_id: int | None = None,
        timeout: float | None = None,
        locals: bool = False,
        every: bool = False,
    ) -> R:
        """``command``: continue, step-over, step-into or step-out; ``timeout`` seconds to wait for the next
        stop; ``locals``: the stop with its source line, locals and watch values; ``every``: continue every
        paused process."""
        return self._call(
            "POST",
            f"/sessions/{session_id}/{command}",
            json=_clean({"thread_id": thread_id, "timeout": timeout, "all": every or None}),
            params={"locals": "true"} if locals else None,
        )

    def pause(self, session_id: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/pause")

    def wait(self, session_id: str, timeout: float = 30.0, include_autopsy: bool = False, locals: bool = False) -> R:
        return self._call(
            "POST",
            f"/sessions/{session_id}/wait",
            json={"timeout": timeout, "include_autopsy": include_autopsy},
            params={"locals": "true"} if locals else None,
        )

    def terminate(self, session_id: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/terminate")

    def detach(self, session_id: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/detach")

    def restart(self, session_id: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/restart")

    def output(
        self,
        session_id: str,
        since: str | None = None,
        limit: int = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> R:
        params = _clean({"since": since, "limit": limit, "stream": stream, "newest": "true" if newest else None})
        return self._call("GET", f"/sessions/{session_id}/output", params=params)

    def new_output(self, session_id: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/output/new")

    def send_input(self, session_id: str, text: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/input", json={"input": text})

    # -- breakpoints
    def breakpoints(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/breakpoints")

    def add_breakpoints(self, session_id: str, breakpoints: list[dict[str, Any]]) -> R:
        """Set several breakpoints at once; answers ``{"breakpoints": [...]}``."""
        return self._call("POST", f"/sessions/{session_id}/breakpoints", json={"breakpoints": breakpoints})

    def update_breakpoint(self, session_id: str, breakpoint_id: str, **changes: Any) -> R:
        return self._call("PATCH", f"/sessions/{session_id}/breakpoints/{breakpoint_id}", json=_clean(changes))

    def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> R:
        return self._call("DELETE", f"/sessions/{session_id}/breakpoints/{breakpoint_id}")

    def set_exception_breakpoints(
        self, session_id: str, filters: list[str], exception_types: list[str] | None = None
    ) -> R:
        body = {"filters": filters, "exception_types": exception_types or []}
        return self._call("POST", f"/sessions/{session_id}/exception-breakpoints", json=body)

    # -- inspection
    def threads(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/threads")

    def processes(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/processes")

    def request(self, session_id: str, call: dict[str, Any]) -> R:
        return self._call("POST", f"/sessions/{session_id}/request", json=call)

    def request_result(self, session_id: str, request_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/requests/{request_id}")

    def show_process(self, session_id: str, pid: int) -> R:
        return self._call("POST", f"/sessions/{session_id}/processes/{pid}/show")

    def stacktrace(
        self,
        session_id: str,
        thread_id: int | None = None,
        start_frame: int = 0,
        max_frames: int = 20,
        *,
        library: bool = False,
    ) -> R:
        params = _clean(
            {
                "thread_id": thread_id,
                "start_frame": start_frame,
                "max_frames": max_frames,
                "library": "true" if library else None,
            }
        )
        return self._call("GET", f"/sessions/{session_id}/stacktrace", params=params)

    def scopes(self, session_id: str, frame_index: int = 0, thread_id: int | None = None) -> R:
        return self._call(
            "GET", f"/sessions/{session_id}/frames/{frame_index}/scopes", params=_clean({"thread_id": thread_id})
        )

    def frame_variables(
        self,
        session_id: str,
        frame_index: int = 0,
        thread_id: int | None = None,
        start: int = 0,
        count: int | None = None,
    ) -> R:
        """Variables of a frame's first scope (Locals) in one call."""
        params = _clean({"thread_id": thread_id, "start": start, "count": count})
        return self._call("GET", f"/sessions/{session_id}/frames/{frame_index}/variables", params=params)

    def frame_variables_by_scope(
        self,
        session_id: str,
        *,
        scope: str = "all",
        frame_index: int = 0,
        thread_id: int | None = None,
        expand: str | None = None,
        start: int = 0,
        count: int | None = None,
    ) -> R:
        """variables_get: a frame's variables by scope, or the children of a path (``expand``)."""
        params = _clean(
            {
                "scope": scope,
                "frame_id": frame_index,
                "thread_id": thread_id,
                "expand": expand,
                "start": start,
                "count": count,
            }
        )
        return self._call("GET", f"/sessions/{session_id}/variables", params=params)

    def variables(self, session_id: str, reference: int, start: int = 0, count: int | None = None) -> R:
        params = _clean({"start": start, "count": count})
        return self._call("GET", f"/sessions/{session_id}/scopes/{reference}/variables", params=params)

    def evaluate(
        self,
        session_id: str,
        expression: str,
        *,
        frame_index: int | None = None,
        thread_id: int | None = None,
        context: str = "repl",
        format: str | None = None,
    ) -> R:
        body = _clean(
            {
                "expression": expression,
                "frame_index": frame_index,
                "thread_id": thread_id,
                "context": context,
                "format": format,
            }
        )
        return self._call("POST", f"/sessions/{session_id}/evaluate", json=body)

    def add_watch(self, session_id: str, expression: str) -> R:
        return self._call("POST", f"/sessions/{session_id}/watch", json={"expression": expression})

    def watches(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/watch")

    def remove_watch(self, session_id: str, watch_id: str) -> R:
        return self._call("DELETE", f"/sessions/{session_id}/watch/{watch_id}")

    def changes(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/changes")

    def source(self, session_id: str, path: str, start: int = 1, end: int | None = None) -> R:
        params = _clean({"path": path, "start": start, "end": end})
        return self._call("GET", f"/sessions/{session_id}/source", params=params)

    def redactions(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/redactions")

    # -- evidence: snapshots, post-mortem, capture points, analysis --------------------------

    def take_snapshot(self, session_id: str, **bounds: Any) -> R:
        return self._call("POST", f"/sessions/{session_id}/snapshots", json=_clean(bounds))

    def snapshots(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/snapshots")

    def snapshot(self, session_id: str, snapshot_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/snapshots/{snapshot_id}")

    def add_capture(self, session_id: str, **body: Any) -> R:
        return self._call("POST", f"/sessions/{session_id}/captures", json=_clean(body))

    def captures(self, session_id: str) -> R:
        return self._call("GET", f"/sessions/{session_id}/captures")

    def capture_table(self, session_id: str, capture_id: str, **params: Any) -> R:
        return self._call("GET", f"/sessions/{session_id}/captures/{capture_id}", params=_clean(params))

    def remove_capture(self, session_id: str, capture_id: str) -> R:
        return self._call("DELETE", f"/sessions/{session_id}/captures/{capture_id}")

    def analyze(self, session_id: str, **body: Any) -> R:
        return self._call("POST", f"/sessions/{session_id}/analyze", json=_clean(body))

    def evidence(self, evidence_id: str, **params: Any) -> R:
        return self._call("GET", f"/evidence/{evidence_id}", params=_clean(params))

    def autopsy(self, session_id: str, **params: Any) -> R:
        return self._call("GET", f"/sessions/{session_id}/autopsy", params=_clean(params))

    def object_inspect(self, session_id: str, object_ref: str, **params: Any) -> R:
        body = _clean({"object_ref": object_ref, **params})
        return self._call("POST", f"/sessions/{session_id}/object-inspect", json=body)


class RelayClient(_Endpoints[Any]):
    """Blocking client (the CLI). Methods return decoded JSON or raise :class:`ApiError`."""

    def __init__(self, url: str | None = None, token: str | None = None, *, timeout: httpx.Timeout | None = None):
        self.url = (url or default_url()).rstrip("/")
        self.http = httpx.Client(
            base_url=self.url,
            headers=_headers(token or default_token()),
            timeout=timeout or _timeout(),
            verify=_verifies(self.url),
        )

    def _call(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        try:
            response = self.http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise _unreachable(self.url, exc) from exc
        return _decode(response)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> RelayClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncRelayClient(_Endpoints[Awaitable[Any]]):
    """Async client (``debugrelay mcp --url``). Methods are awaitables of decoded JSON."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: httpx.Timeout | None = None,
        http: httpx.AsyncClient | None = None,
    ):
        """``http``: a client of one's own (e.g. bound to the relay's app in this process) instead of a new one."""
        self.url = (url or default_url()).rstrip("/")
        self.http = http or httpx.AsyncClient(
            base_url=self.url,
            headers=_headers(token or default_token()),
            timeout=timeout or _timeout(),
            verify=_verifies(self.url),
        )

    async def _call(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> Any:
        try:
            response = await self.http.request(method, path, json=json, params=params)
        except httpx.TransportError as exc:
            raise _unreachable(self.url, exc) from exc
        return _decode(response)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> AsyncRelayClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()
