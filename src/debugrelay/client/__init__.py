"""Python client of the relay's HTTP API (used by the CLI and by ``debugrelay mcp --url``)."""

from debugrelay.config import DEFAULT_URL
from debugrelay.errors import ApiError

from ._client import AsyncRelayClient, RelayClient, default_token, default_url
from ._remote import RemoteService

__all__ = [
    "DEFAULT_URL",
    "ApiError",
    "AsyncRelayClient",
    "RelayClient",
    "RemoteService",
    "default_token",
    "default_url",
]
