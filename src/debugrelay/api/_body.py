"""Bodies that may be absent (``POST /sessions/{id}/step-over`` with no body is fine)."""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec
from litestar import Request

from debugrelay.errors import InvalidRequest

T = TypeVar("T")


def _whole(value: Any) -> Any:
    """Integral floats as ints, all the way down (JSON Schema's ``integer`` includes 1.0)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    return value


def decode(raw: bytes, kind: type[T]) -> T:
    try:
        try:
            return msgspec.json.decode(raw, type=kind)
        except msgspec.ValidationError:
            if b"." not in raw and b"e" not in raw.lower():
                raise
            return msgspec.convert(_whole(msgspec.json.decode(raw)), kind)
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


async def strict_body(request: Request[Any, Any, Any]) -> None:
    """A handler's ``data`` decoded as JSON says it: Litestar converts bodies leniently (``"1"`` for 1,
    ``0`` for false), which the OpenAPI document does not allow; a body that is not exactly right is refused
    here, with msgspec's words, before the handler runs."""
    handler = request.scope["route_handler"]
    field = handler.parsed_fn_signature.parameters.get("data")
    if field is None or not (isinstance(field.annotation, type) and issubclass(field.annotation, msgspec.Struct)):
        return
    raw = await request.body()
    if raw.strip():
        decode(raw, field.annotation)
