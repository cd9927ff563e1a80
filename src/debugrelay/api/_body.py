"""Bodies that may be absent (``POST /sessions/{id}/step-over`` with no body is fine)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request

from debugrelay.errors import InvalidRequest

T = TypeVar("T")


def decode(raw: bytes, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        raise InvalidRequest(f"invalid request body: {exc}", details={"errors": [str(exc)]}) from exc
    except msgspec.DecodeError as exc:
        raise InvalidRequest(f"request body is not valid JSON: {exc}", details={"errors": [str(exc)]}) from exc


async def optional_body(request: Request[Any, Any, Any], kind: type[T]) -> T | None:
    raw = await request.body()
    if not raw.strip():
        return None
    return decode(raw, kind)


async def any_body(request: Request[Any, Any, Any]) -> Any:
    raw = await request.body()
    if not raw.strip():
        raise InvalidRequest("a JSON body is required")
    return decode(raw, Any)
