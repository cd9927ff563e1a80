"""An agent's actions, each declared once (``_declare``) and run by the relay in one call.

An action is what an agent does in one step: launch and wait for the first stop, set a breakpoint and hear
whether it can be hit, step and see the stop with its locals and new output, read a frame. Each composes
the relay's operations (every one of them passing the service's gate: access, redaction, trail) and
answers one JSON object. ``DebugService.act`` runs one (``POST /agent/{action}``); the MCP tools and the
CLI's commands are derived from these declarations.
"""

from __future__ import annotations

import functools
import inspect
import os
import typing
from dataclasses import dataclass
from typing import Any

import pydantic

from debugrelay.errors import InvalidRequest, NotFound
from debugrelay.store import tracking_writes

from .._asking import asking_folder
from .._base import DebugService
from .._calling import calling
from ._control import BreakpointTools, ControlTools
from ._declare import SHARED, ActionFn, ActionGroup, ActionSpec
from ._events import Stops
from ._evidence import EvidenceTools
from ._inspection import FrameTools, InspectionTools
from ._service import ServiceTools
from ._session import SessionTools, StartTools

# the order the tool list shows them: starting a program, breakpoints, running it, reading it, the
# session, reading in depth, evidence, services
GROUPS: tuple[type[ActionGroup], ...] = (
    StartTools,
    BreakpointTools,
    ControlTools,
    FrameTools,
    SessionTools,
    InspectionTools,
    EvidenceTools,
    ServiceTools,
)


@dataclass(frozen=True)
class Action:
    """One declared action: what the tool list says of it, its body, its arguments as a signature (its
    annotations resolved) and the model that checks them."""

    spec: ActionSpec
    fn: ActionFn
    group: type[ActionGroup]
    signature: inspect.Signature
    arguments: type[pydantic.BaseModel]

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def description(self) -> str:
        """The docstring, each paragraph on one line."""
        paragraphs = (self.fn.__doc__ or "").strip().split("\n\n")
        return "\n".join(" ".join(line.strip() for line in p.splitlines() if line.strip()) for p in paragraphs)

    def checked(self, given: dict[str, Any]) -> dict[str, Any]:
        """``given`` checked against the declaration: an argument it does not take is refused by name, a
        wrong value names its argument; the defaults filled in."""
        unknown = sorted(set(given) - set(self.signature.parameters))
        if unknown:
            raise InvalidRequest(
                f"{self.name} takes no argument {', '.join(repr(name) for name in unknown)}",
                details={"unknown": unknown},
                hint="Leave it out: the action's declaration lists what it takes.",
            )
        try:
            model = self.arguments.model_validate(given)
        except pydantic.ValidationError as exc:
            errors = exc.errors(include_url=False)
            raise InvalidRequest(
                "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors),
                details={"arguments": sorted({str(e["loc"][0]) for e in errors if e["loc"]})},
                hint="Fix the arguments: each one's type and bounds are declared.",
            ) from exc
        return {name: getattr(model, name) for name in self.signature.parameters}


# where an answer names a file: shown relative to the folder the agent asks from, as it may give them
# "at": a breakpoint's FILE:LINE; "function": a traced 'file.py:name'
PATH_FIELDS = frozenset({"file", "path", "script", "cwd", "at", "function"})


def _relative(data: Any, folder: str) -> Any:
    """``data`` with each file path under ``folder`` shown relative to it (``app/models.py``)."""
    if isinstance(data, list):
        return [_relative(item, folder) for item in data]
    if not isinstance(data, dict):
        return data
    out = {}
    for key, value in data.items():
        if key in PATH_FIELDS and isinstance(value, str) and os.path.isabs(value):
            inside = os.path.relpath(value, folder)
            out[key] = value if inside.startswith("..") else inside
        else:
            out[key] = _relative(value, folder)
    return out


def _declared(group: type[ActionGroup], spec: ActionSpec, fn: ActionFn) -> Action:
    hints = typing.get_type_hints(fn, include_extras=True)
    params = [
        p.replace(annotation=hints[name], kind=inspect.Parameter.KEYWORD_ONLY)
        for name, p in inspect.signature(fn).parameters.items()
        if name != "self"
    ]
    fields: dict[str, Any] = {
        p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default) for p in params
    }
    model = pydantic.create_model(f"{spec.name}_arguments", __config__=pydantic.ConfigDict(extra="forbid"), **fields)
    signature = inspect.Signature(params, return_annotation=dict[str, Any])
    return Action(spec, fn, group, signature, model)


@functools.cache
def actions() -> dict[str, Action]:
    """Every action by name, in the tool list's order."""
    return {spec.name: _declared(group, spec, fn) for group in GROUPS for spec, fn in group.specs()}


async def run_action(service: DebugService, name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The action ``name`` with the arguments ``given``, over ``service``: checked, run, its answer saying
    ``"persisted": false`` when a change it made waits for the state store."""
    found = actions().get(name)
    if found is None:
        raise NotFound(
            f"no action '{name}'",
            details={"action": name},
            hint="The actions are the MCP tools' names (GET /schema lists the agent routes).",
        )
    arguments = found.checked(given)
    group = found.group(service, Stops(service))
    with tracking_writes() as tracking, calling(f"tool {name}"):  # the agent's trail names the action
        data = await found.fn(group, **arguments)
    folder = asking_folder()
    if folder:
        data = _relative(data, folder)
    if found.spec.marks_unpersisted:
        sid = data.get("session_id") or arguments.get("session_id")
        if tracking.found or (isinstance(sid, str) and service.unpersisted(sid)):
            data = {**data, "persisted": False}
    return data


__all__ = ["GROUPS", "SHARED", "Action", "ActionGroup", "ActionSpec", "actions", "run_action"]
