"""The HTTP routes of the declared operations (``service/_operations.py``), made from their declarations.

Each route takes its path parameters, its query parameters (with the bounds the declaration states, so the
OpenAPI document shows them) and its JSON body (a Struct made from the body's parameters, or the one
Struct parameter that is the body), calls the operation and answers its typed answer.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from litestar import Request, delete, get, patch, post
from litestar.constants import RESERVED_KWARGS
from litestar.handlers import HTTPRouteHandler
from litestar.params import Body, Parameter, QueryParameter

from debugrelay.errors import InvalidRequest
from debugrelay.models import Input
from debugrelay.service import DebugService
from debugrelay.service._operations import Operation, declared

from ._body import optional_body
from ._deps import Service

_DECORATORS: dict[str, Callable[..., Any]] = {"GET": get, "POST": post, "PATCH": patch, "DELETE": delete}
_BOUNDS = ("ge", "le", "gt", "lt", "min_length", "max_length", "pattern", "description")
_KW = inspect.Parameter.KEYWORD_ONLY


def _parts(kind: Any) -> tuple[Any, list[msgspec.Meta], bool]:
    """``kind`` as (its type, its bounds, whether it may be None)."""
    optional = False
    if isinstance(kind, types.UnionType) or typing.get_origin(kind) is typing.Union:
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        optional = len(args) < len(typing.get_args(kind))
        kind = args[0] if len(args) == 1 else typing.Union[tuple(args)]  # noqa: UP007 - built at run time
    metas: list[msgspec.Meta] = []
    if typing.get_origin(kind) is Annotated:
        kind, *extras = typing.get_args(kind)
        metas = [m for m in extras if isinstance(m, msgspec.Meta)]
    return kind, metas, optional


def query_type(kind: Any, wire: str | None = None) -> Any:
    """A parameter's annotation as Litestar reads a query or path parameter: the bounds as a ``Parameter``
    (and the name on the wire, when the handler's parameter cannot have it)."""
    base, metas, optional = _parts(kind)
    bounds = {name: value for meta in metas for name in _BOUNDS if (value := getattr(meta, name, None)) is not None}
    base = base | None if optional else base
    if wire is not None:
        return Annotated[base, QueryParameter(name=wire, **bounds)]
    return Annotated[base, Parameter(**bounds)] if bounds else base


def identifier(wire: str) -> str:
    """The handler's parameter for a wire name; Litestar gives some names (``scope``, ``request``...) itself."""
    return f"{wire}_" if wire in RESERVED_KWARGS or wire in ("service", "data") else wire


def body_struct(op: Operation) -> type[msgspec.Struct]:
    """The body of an operation whose parameters are its fields, as one Struct named ``op.body_name``; a
    parameter that may come under other names (aliases) is required under none of them alone."""
    fields: list[tuple[Any, ...]] = []
    for param in op.fields:
        aliases = op.aliases.get(param.name, ())
        if aliases:  # none is required alone; none given means the parameter's default
            fields.append((param.name, param.kind | None, msgspec.field(default=None, name=param.wire)))
        elif param.required:
            fields.append((param.name, param.kind, msgspec.field(name=param.wire)))
        elif isinstance(param.default, tuple):  # an empty sequence: a new list each time
            fields.append((param.name, param.kind, msgspec.field(default_factory=list, name=param.wire)))
        else:
            fields.append((param.name, param.kind, msgspec.field(default=param.default, name=param.wire)))
        fields.extend((f"{wire}_", param.kind | None, msgspec.field(default=None, name=wire)) for wire in aliases)
    return msgspec.defstruct(op.body_name, fields, bases=(Input,), kw_only=True, module=__name__)


def _arguments(op: Operation) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """How a route's inputs (path and query by wire name, the decoded body) become the operation's arguments."""
    outside = [(p.name, identifier(p.wire)) for p in op.params if p.where != "body"]
    fields = op.fields

    def arguments(given: dict[str, Any], data: Any) -> dict[str, Any]:
        args = {name: given[key] for name, key in outside}
        if op.body is not None:
            args[op.body] = data
        for param in fields:
            value = getattr(data, param.name)
            for wire in op.aliases.get(param.name, ()):
                other = getattr(data, f"{wire}_")
                if other is not None:
                    value = other
                    break
            if value is None and param.name in op.aliases:
                if param.required:
                    raise InvalidRequest(
                        f"give '{param.wire}'", details={"field": param.wire}, hint=f'e.g. {{"{param.wire}": ...}}'
                    )
                value = param.default
            args[param.name] = value
        return args

    return arguments


def _signature(op: Operation, body: type[msgspec.Struct] | None, raw_body: bool) -> inspect.Signature:
    params = [inspect.Parameter("service", _KW, annotation=Service)]
    for param in op.params:
        if param.where == "body":
            continue
        default = inspect.Parameter.empty if param.required or param.where == "path" else param.default
        kind = query_type(param.kind, None if identifier(param.wire) == param.wire else param.wire)
        params.append(inspect.Parameter(identifier(param.wire), _KW, annotation=kind, default=default))
    if raw_body:
        params.append(inspect.Parameter("request", _KW, annotation=Request[Any, Any, Any]))
    elif op.body is not None:
        whole = next(p for p in op.params if p.name == op.body)
        if whole.required:
            params.append(inspect.Parameter("data", _KW, annotation=whole.kind))
        else:
            params.append(inspect.Parameter("data", _KW, annotation=Annotated[whole.kind, Body()], default=None))
    elif body is not None:
        params.append(inspect.Parameter("data", _KW, annotation=body))
    return inspect.Signature(params, return_annotation=op.answer)


def _typed_path(op: Operation) -> str:
    """``/sessions/{session_id}/frames/{frame_id}`` as Litestar takes it: ``{frame_id:int}``."""
    path = op.path
    for param in op.located("path"):
        base, _, _ = _parts(param.kind)
        kind = "int" if base is int else "str"
        path = path.replace(f"{{{param.wire}}}", f"{{{param.wire}:{kind}}}")
    return path


def route(op: Operation, path: str | None = None) -> tuple[HTTPRouteHandler, type[msgspec.Struct] | None]:
    """The route of ``op`` (at ``path``: an alias, left out of the OpenAPI document), and the body it reads
    itself (a body of defaults only may be left out)."""
    body = body_struct(op) if op.fields else None
    raw_body = body is not None and not any(p.required for p in op.fields)
    arguments = _arguments(op)
    name = op.name

    async def handler(service: DebugService, **given: Any) -> Any:
        if raw_body:
            assert body is not None
            data = await optional_body(given.pop("request"), body) or body()
        else:
            data = given.pop("data", None)
        return await getattr(service, name)(**arguments(given, data))

    signature = _signature(op, body, raw_body)
    handler.__signature__ = signature  # type: ignore[attr-defined]
    handler.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
    handler.__annotations__["return"] = op.answer
    handler.__name__ = handler.__qualname__ = name
    handler.__doc__ = inspect.getdoc(op.fn)
    decorator = _DECORATORS[op.method]
    made = decorator(
        path or _typed_path(op),
        summary=op.summary,
        tags=[op.tag],
        status_code=op.status,
        opt={"operation": op},
        include_in_schema=path is None,
    )
    return made(handler), body if raw_body else None


# Older paths of an operation, still answered, not documented.
ALIASES = {"send_input": ["/sessions/{session_id:str}/stdin"]}


@functools.cache
def routes() -> tuple[list[HTTPRouteHandler], dict[tuple[str, str], type[msgspec.Struct]]]:
    """Every declared operation's route but those the API words by hand, and the bodies they read themselves
    (by method and path, for the OpenAPI document)."""
    handlers = []
    raw: dict[tuple[str, str], type[msgspec.Struct]] = {}
    for op in declared(DebugService).values():
        if not op.routed:
            continue
        handler, body = route(op)
        handlers.append(handler)
        handlers.extend(route(op, alias)[0] for alias in ALIASES.get(op.name, ()))
        if body is not None:
            raw[(op.method.lower(), op.path)] = body
    return handlers, raw
