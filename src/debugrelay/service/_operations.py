"""Each operation declared once, on the service's interface: its HTTP method and path, its wire names, and
whether it changes anything. The request is the method's signature (parameters with their bounds), the
answer its return type.

The HTTP route (``api/_derived.py``), the HTTP client's call and the remote service (``client/``) are
derived from these declarations; the interfaces add only what is theirs: wording, MCP tool text, CLI
flags and printing.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from debugrelay.errors import InvalidRequest

if TYPE_CHECKING:
    from debugrelay.access import Access  # a client declares its calls without the relay's access rules

Method = Literal["GET", "POST", "PATCH", "DELETE"]
Current = Literal["latest", "new"]
CURRENT = "current"  # a session id every operation takes: the caller's newest session (see ``Operation.current``)
Where = Literal["path", "query", "body"]
F = TypeVar("F", bound=Callable[..., Any])
MISSING: Any = inspect.Parameter.empty


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of an operation as it travels: its service name, its wire name, where, its type."""

    name: str
    wire: str
    where: Where
    kind: Any  # the annotation, with its bounds (``Annotated[int, msgspec.Meta(ge=0)]``)
    default: Any = MISSING

    @property
    def required(self) -> bool:
        return self.default is MISSING


@dataclass(frozen=True)
class Operation:
    """One operation of the service and how it is reached over HTTP."""

    name: str
    method: Method
    path: str  # with wire names: ``/sessions/{session_id}/breakpoints/{bp_id}``
    summary: str
    tag: str
    changes: bool  # a change: recorded in the trail, marked when the store has not taken it yet
    access: Access  # who may call it (``access._rules``): read, drive, owner, create or admin
    # a call of it that runs code the caller wrote (a condition, a log message) or reveals secrets is ``owner``
    owner_when: Callable[[Mapping[str, Any]], bool] | None = None
    status: int = 200
    body: str | None = None  # the parameter that is the whole JSON body (a Struct)
    wire: Mapping[str, str] = field(default_factory=dict)  # parameter -> wire name, where they differ
    in_query: tuple[str, ...] = ()  # parameters of a POST that travel in the query string
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # other body fields that may carry it
    named: str | None = None  # the body's name in the OpenAPI document (default: the operation's, camel-cased)
    routed: bool = True  # False: the API words its routes by hand (several paths for one operation)
    # the session a session id of ``current`` names: the caller's newest ("latest"), or a new one when
    # there is none yet ("new": what may be set before a launch: breakpoints, traces, capture points)
    current: Current = "latest"
    fn: Callable[..., Any] | None = None

    @functools.cached_property
    def params(self) -> tuple[Param, ...]:
        """Every parameter but ``self``, in the signature's order, each with where it travels."""
        assert self.fn is not None
        hints = typing.get_type_hints(self.fn, include_extras=True)
        in_path = {segment[1:-1] for segment in self.path.split("/") if segment.startswith("{")}
        found = []
        for name, parameter in inspect.signature(self.fn).parameters.items():
            if name == "self":
                continue
            wire = self.wire.get(name, name)
            where: Where
            if wire in in_path:
                where = "path"
            elif name == self.body or (self.method in ("POST", "PATCH") and name not in self.in_query):
                where = "body"
            else:
                where = "query"
            found.append(Param(name, wire, where, hints[name], parameter.default))
        return tuple(found)

    @functools.cached_property
    def answer(self) -> Any:
        assert self.fn is not None
        return typing.get_type_hints(self.fn)["return"]

    def located(self, where: Where) -> list[Param]:
        return [p for p in self.params if p.where == where]

    @functools.cached_property
    def _kinds(self) -> tuple[tuple[str, str, Any], ...]:
        return tuple((p.name, p.wire, p.kind) for p in self.params)

    def check(self, arguments: Mapping[str, Any]) -> None:
        """Refuse arguments outside the declared types and bounds, as the HTTP API does (a value left None
        is the default's; a Struct is checked as the data it holds)."""
        for name, wire, kind in self._kinds:
            value = arguments.get(name)
            if value is None:
                continue
            try:
                msgspec.convert(msgspec.to_builtins(value), kind)
            except (msgspec.ValidationError, TypeError) as exc:
                raise InvalidRequest(f"invalid {wire}: {exc}", details={"field": wire, "errors": [str(exc)]}) from exc

    @property
    def body_name(self) -> str:
        return self.named or "".join(part.title() for part in self.name.split("_")) + "Body"

    @property
    def fields(self) -> list[Param]:
        """The body's fields, when the body is made of parameters (not one Struct parameter)."""
        return [] if self.body is not None else self.located("body")


def declare(
    method: Method,
    path: str,
    summary: str,
    *,
    tag: str,
    status: int = 200,
    changes: bool | None = None,
    access: Access | None = None,
    owner_when: Callable[[Mapping[str, Any]], bool] | None = None,
    body: str | None = None,
    wire: Mapping[str, str] | None = None,
    in_query: tuple[str, ...] = (),
    aliases: Mapping[str, tuple[str, ...]] | None = None,
    named: str | None = None,
    routed: bool = True,
    current: Current = "latest",
) -> Callable[[F], F]:
    """Declare the decorated method of the service's interface an operation reached at ``method path``.

    ``changes`` defaults to every method but GET; ``access`` to ``read`` for a GET that changes nothing,
    ``drive`` otherwise (``owner`` for what runs code or feeds the program, ``create`` for a new session),
    and ``owner_when`` makes a call of it ``owner`` when its arguments run the caller's code;
    ``body`` names the parameter that is the whole body
    (otherwise a POST's or PATCH's parameters are the body's fields); ``wire`` renames parameters on the
    wire; ``in_query`` sends some of a POST's parameters in the query string; ``aliases`` names other body
    fields that may carry a parameter (the first given wins); ``named`` is the body's schema name;
    ``current`` says what a session id of ``current`` names when the caller has no session yet."""

    def mark(fn: F) -> F:
        changing = method != "GET" if changes is None else changes
        fn.__operation__ = Operation(  # type: ignore[attr-defined]
            name=fn.__name__,
            method=method,
            path=path,
            summary=summary,
            tag=tag,
            changes=changing,
            access=access or ("read" if method == "GET" and not changing else "drive"),
            owner_when=owner_when,
            status=status,
            body=body,
            wire=dict(wire or {}),
            in_query=in_query,
            aliases=dict(aliases or {}),
            named=named,
            routed=routed,
            current=current,
            fn=fn,
        )
        return fn

    return mark


def declared(cls: type) -> dict[str, Operation]:
    """The operations ``cls`` declares (its own and its bases'), by name, in their order of declaration."""
    found: dict[str, Operation] = {}
    for klass in reversed(cls.__mro__):
        for name, member in vars(klass).items():
            op = getattr(member, "__operation__", None)
            if isinstance(op, Operation):
                found[name] = op
    return found
