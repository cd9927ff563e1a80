"""How a tool is declared: a method of a :class:`ToolGroup` marked with :func:`tool`, which records what
the tool list says of it (read-only or not, one of the debugger's core tools or an evidence tool); and how
it is made an MCP tool with a compact input schema."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import Field

from debugrelay.service import DebugService, policy

from ._answers import ToolFn, guarded
from ._stops import Stops

# The tool list is read by a model in every conversation (bench/tool_list.py measures it): a
# description says what the name does not, once. The arguments every tool shares are described
# once, in the server's instructions (SHARED names them), and carry no description of their own.
SHARED = ("session_id", "thread_id", "frame_index", "timeout", "locals", "library")
SessionId = Annotated[str | None, Field()]
ThreadId = Annotated[int | None, Field()]
FrameIndex = Annotated[int, Field(ge=0)]
WithLocals = bool
ContinueTimeout = Annotated[float, Field(ge=0, le=300)]
StepTimeout = ContinueTimeout
LibraryFrames = bool


@dataclass(frozen=True)
class ToolSpec:
    """What the tool list says of a tool besides its signature and docstring."""

    name: str
    read_only: bool  # annotated readOnlyHint: it changes nothing in the program or the session
    core: bool  # one of the debugger's tools (the evidence tools are not)
    marks_unpersisted: bool  # its answer says "persisted": false while the state store lags the session


_SPEC = "__debugrelay_tool__"
F = TypeVar("F", bound=ToolFn)


def tool(*, read_only: bool = False, core: bool = True, marks_unpersisted: bool | None = None) -> Callable[[F], F]:
    """Declare a :class:`ToolGroup` method a tool named after it. ``marks_unpersisted`` defaults to
    whether it changes anything (not ``read_only``)."""

    def mark(fn: F) -> F:
        marks = not read_only if marks_unpersisted is None else marks_unpersisted
        setattr(fn, _SPEC, ToolSpec(fn.__name__, read_only, core, marks))
        return fn

    return mark


class ToolGroup:
    """Tools over one backend, each a method marked with :func:`tool`, listed in the order they are defined."""

    def __init__(self, backend: DebugService, stops: Stops) -> None:
        self.backend = backend
        self.stops = stops

    async def _sid(self, session_id: str | None) -> str:
        return await policy.session_or_latest(self.backend, session_id)

    async def _sid_or_new(self, session_id: str | None) -> str:
        return await policy.session_or_new(self.backend, session_id)

    def declared(self) -> list[tuple[ToolSpec, ToolFn]]:
        """Each tool's metadata and its body, bound to this group."""
        found = []
        for name, member in vars(type(self)).items():
            spec = getattr(member, _SPEC, None)
            if isinstance(spec, ToolSpec):
                found.append((spec, getattr(self, name)))
        return found

    def tools(self) -> list[Tool]:
        """The group's tools, with explicit names and compact input schemas."""
        return [mcp_tool(spec, body, self.backend) for spec, body in self.declared()]


def mcp_tool(spec: ToolSpec, body: ToolFn, backend: DebugService) -> Tool:
    """A tool body as an MCP tool: its answers and errors made tool results, its schema compact."""
    made = Tool.from_function(
        guarded(body, backend if spec.marks_unpersisted else None),
        name=spec.name,
        description=describe(body),
        annotations=ToolAnnotations(read_only_hint=True) if spec.read_only else None,
        structured_output=False,
    )
    made.parameters = compact_schema(made.parameters)
    for shared in SHARED:  # their bounds and defaults are in the server's instructions
        prop = made.parameters["properties"].get(shared, {})
        prop.pop("maximum", None)
        prop.pop("default", None)
    return made


def describe(fn: Callable[..., Any]) -> str:
    """A docstring as a description: each paragraph on one line."""
    paragraphs = (fn.__doc__ or "").strip().split("\n\n")
    return "\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The advertised input schema, cut to what teaches: no pydantic titles, an optional ``X | None`` shown as
    ``X`` (leaving it out is how a client says none), no default of ``None``/``false``/``0``, no lower
    bound of 0 or 1 and no upper bound of 100 or more. The tool list is read by a model on every
    conversation; what is accepted is unchanged (the arguments are still validated against the full
    signature)."""
    out = {k: v for k, v in schema.items() if k != "title"}
    if "properties" in out:
        out["properties"] = {name: compact_schema(prop) for name, prop in out["properties"].items()}
    if "items" in out and isinstance(out["items"], dict):
        out["items"] = compact_schema(out["items"])
    options = out.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and {"type": "null"} in options:
        other = compact_schema(next(o for o in options if o != {"type": "null"}))
        out.pop("anyOf")
        out = {**other, **out}
    if "default" in out and out["default"] in (None, False, 0):
        out.pop("default")
    if out.get("minimum") in (0, 1):
        out.pop("minimum")
    if isinstance(out.get("maximum"), int) and out["maximum"] >= 100:  # a page size's ceiling: enforced, not taught
        out.pop("maximum")
    return out
