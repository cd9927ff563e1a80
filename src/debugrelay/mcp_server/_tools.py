"""How an action (``service/actions``) is made an MCP tool: one call of the relay, the action's arguments
as its input schema (compact), a misnamed argument refused by name."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import ToolAnnotations
from pydantic import ValidationError

from debugrelay.service import DebugService
from debugrelay.service.actions import SHARED, Action

from ._answers import failure, guarded


class CheckedTool(Tool):
    """A tool that refuses an argument it does not take, by name, and answers a wrong argument as a tool
    error like the relay's own (``invalid_request`` with the arguments named), not a validation dump."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> Any:
        unknown = sorted(set(arguments) - set(self.parameters.get("properties", {})))
        if unknown:
            return self._refused(
                convert_result,
                {
                    "code": "invalid_request",
                    "message": f"{self.name} takes no argument {', '.join(repr(name) for name in unknown)}",
                    "details": {"unknown": unknown},
                    "hint": "Leave it out: the tool's input schema lists what it takes.",
                },
            )
        try:
            return await super().run(arguments, context, convert_result)
        except ToolError as exc:
            cause = exc.__cause__
            if not isinstance(cause, ValidationError):
                raise
            wrong = sorted({str(e["loc"][0]) for e in cause.errors() if e["loc"]})
            return self._refused(
                convert_result,
                {
                    "code": "invalid_request",
                    "message": "; ".join(
                        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in cause.errors(include_url=False)
                    ),
                    "details": {"arguments": wrong},
                    "hint": "Fix the arguments: the tool's input schema describes each one.",
                },
            )

    def _refused(self, convert_result: bool, error: dict[str, Any]) -> Any:
        result = failure(error)
        return self.fn_metadata.convert_result(result) if convert_result else result


def mcp_tool(found: Action, backend: DebugService) -> Tool:
    """An action as an MCP tool: one call of the relay (``backend.act``) with the tool's arguments, its
    answers and errors made tool results, its schema compact."""
    name = found.name

    async def call(**arguments: Any) -> dict[str, Any]:
        return await backend.act(name, arguments)

    call.__name__ = call.__qualname__ = name
    call.__signature__ = found.signature  # type: ignore[attr-defined]
    call.__annotations__ = {p.name: p.annotation for p in found.signature.parameters.values()}
    call.__annotations__["return"] = dict[str, Any]
    made = CheckedTool.from_function(
        guarded(call),
        name=name,
        description=found.description,
        annotations=ToolAnnotations(read_only_hint=True) if found.spec.read_only else None,
        structured_output=False,
    )
    made.parameters = compact_schema(made.parameters)
    for shared in SHARED:  # their bounds and defaults are in the server's instructions
        prop = made.parameters["properties"].get(shared, {})
        prop.pop("maximum", None)
        prop.pop("default", None)
    return made


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
