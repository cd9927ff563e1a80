"""A Python client of the relay's HTTP API: the declared operations, a blocking and an async transport."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Mapping
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import msgspec

from debugrelay.config import DEFAULT_URL
from debugrelay.errors import ApiError
from debugrelay.service._asking import FOLDER_HEADER
from debugrelay.service._operations import Operation

# The relay long-polls for at most 300 s (``/wait``, ``wait`` on resume); leave room for the answer.
READ_TIMEOUT = 330.0

R = TypeVar("R")


def default_url() -> str:
    return os.environ.get("DEBUGRELAY_URL") or DEFAULT_URL


def default_token() -> str | None:
    return os.environ.get("DEBUGRELAY_TOKEN") or None


def _verifies(url: str) -> bool:
    """Certificates are checked on an https URL; a plain-HTTP relay (loopback) has none, and loading the
    CA bundle anyway costs 90 ms of every CLI command's start."""
    return url.lower().startswith("https://")


def _headers(token: str | None) -> dict[str, str]:
    """The token, and the folder this client asks from: the relay takes relative paths from it."""
    headers = {FOLDER_HEADER: _folder()}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


def _folder() -> str:
    """Our working folder, percent-encoded (a header is ASCII)."""
    try:
        return quote(os.getcwd(), safe="/")
    except OSError:  # the folder was removed under us: ask from nowhere
        return ""


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


def wire(value: Any) -> Any:
    """A value as JSON; a Struct without its fields left unset (the relay's defaults apply)."""
    data = msgspec.to_builtins(value)
    return {k: v for k, v in data.items() if v is not None} if isinstance(value, msgspec.Struct) else data


def request_for(op: Operation, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None, Any]:
    """The path, query and JSON body that ask the relay for ``op`` with ``arguments`` (by parameter name;
    what is left out or None is left to the relay's default)."""
    path = op.path
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    whole: Any = None
    for param in op.params:
        value = arguments.get(param.name)
        if param.where == "path":
            value = arguments.get(param.name, param.default)  # a path always names it: the default when left out
            path = path.replace("{" + param.wire + "}", quote(str(value), safe=""))
        elif value is None or param.name not in arguments:
            continue
        elif param.name == op.body:
            whole = wire(value)
        elif param.where == "query":
            if value != param.default:
                query[param.wire] = ("true" if value else "false") if isinstance(value, bool) else value
        else:
            body[param.wire] = wire(value)
    if op.body is not None:
        return path, query or None, whole
    return path, query or None, body if op.fields else None


class _Endpoints(Generic[R]):
    """The relay's declared operations (``call``) and its own pages (health, info); ``R`` is the decoded JSON
    or an awaitable of it."""

    def _call(self, method: str, path: str, *, json: Any = None, params: dict[str, Any] | None = None) -> R:
        raise NotImplementedError

    def call(self, op: Operation, arguments: Mapping[str, Any]) -> R:
        """Ask for one declared operation (``debugrelay.service.operations()``) with its arguments by name."""
        path, query, body = request_for(op, arguments)
        return self._call(op.method, path, json=body, params=query)

    def health(self) -> R:
        return self._call("GET", "/health")

    def info(self) -> R:
        return self._call("GET", "/info")


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
