"""How the tools present what the program did: a stop (or an end) as an event with its source line,
locals, new output and next step; variables, breakpoints and an autopsy without what they repeat."""

from __future__ import annotations

import contextlib
from typing import Any

import msgspec

from debugrelay.client import ApiError
from debugrelay.errors import RelayError
from debugrelay.models import BreakpointView, Status, Variable, joined_output, last_lines
from debugrelay.service import DebugService

OUTPUT_MAX = 2000  # characters of program output attached to an event (the tail is kept)


def compact_variable(var: Variable) -> dict[str, Any]:
    out: dict[str, Any] = {"name": var.name, "value": var.value}
    if var.type:
        out["type"] = var.type
    if var.variable_reference:
        out["ref"] = var.variable_reference
    extra = {"scope": var.scope, "length": var.length, "truncated": var.truncated}
    extra.update(circular=var.circular, repr_error=var.repr_error)
    out.update({k: v for k, v in extra.items() if v})
    return out


def plain(answer: msgspec.Struct) -> dict[str, Any]:
    """A typed answer as the JSON object a tool returns."""
    data: dict[str, Any] = msgspec.to_builtins(answer)
    return data


def compact_breakpoint(view: BreakpointView) -> dict[str, Any]:
    out = plain(view)
    if out.get("kind") == "line":
        out.pop("kind")
    if out.get("enabled") is True:
        out.pop("enabled")
    for key in ("pending", "hit_count"):
        if not out.get(key):
            out.pop(key, None)
    if out.get("actual_line") == out.get("line"):
        out.pop("actual_line", None)
    return out


def _restated(var: dict[str, Any]) -> bool:
    """Children that the value's own repr already shows whole (a list's items, a dict's values)."""
    kids = var.get("children") or []
    value = str(var.get("value", ""))
    return bool(kids) and not var.get("truncated") and all(str(k.get("value")) in value for k in kids)


PLAIN_TYPES = frozenset({"int", "float", "str", "bool", "NoneType", "bytes", "list", "tuple", "dict", "set"})


def _said(var: dict[str, Any], shown: dict[str, str]) -> bool:
    """Whether the stop's compact ``locals`` already say all of a variable: its whole value, of a type
    the value shows, with no children of its own to add."""
    value = str(var.get("value", ""))
    return (
        shown.get(str(var.get("name"))) == value
        and var.get("type") in PLAIN_TYPES
        and not var.get("truncated")
        and not var.get("children")
    )


def compact_autopsy(autopsy: dict[str, Any], stop: dict[str, Any] | None = None) -> dict[str, Any]:
    """An autopsy without what it repeats: children a value already shows, positions, and, when it rides
    with the ``stop`` answer, the thread, the exception and the top frame's place the stop gives."""
    frames = autopsy.get("frames") or []
    for frame in frames:
        frame.pop("index", None)
        for var in frame.get("locals") or []:
            if _restated(var):
                var.pop("children")
    if autopsy.get("total_frames") == len(frames) and not autopsy.get("frames_truncated"):
        autopsy.pop("total_frames")
    (autopsy.get("exception") or {}).pop("break_mode", None)  # 'unhandled' says it
    if stop is None:
        return autopsy
    if autopsy.get("thread_id") == stop.get("thread_id"):
        autopsy.pop("thread_id")
    said = stop.get("exception") or {}
    exception = autopsy.get("exception") or {}
    for key, value in list(exception.items()):
        same = value == said.get(key) or (key == "type" and str(value).removeprefix("builtins.") == said.get(key))
        if same or key == "break_mode" or (key == "location" and value == stop.get("location")):
            exception.pop(key)
    if not exception:
        autopsy.pop("exception", None)
    location = stop.get("location") or {}
    if frames and (frames[0].get("file"), frames[0].get("line")) == (location.get("file"), location.get("line")):
        for key in ("file", "line", "function"):
            frames[0].pop(key, None)
        source = frames[0].get("source") or {}
        if source.get("lines") and source.get("text") == stop.get("code"):
            source.pop("text")  # the stop's 'code'; 'lines' holds it
        shown = stop.get("locals") or {}
        left = [v for v in frames[0].get("locals") or [] if not _said(v, shown)]
        if left:
            frames[0]["locals"] = left
        else:
            frames[0].pop("locals", None)
    return autopsy


class Stops:
    """Events as a tool answers them, over one backend. How much of the program's output was answered is
    the session's (the relay keeps it), so a new MCP process or a stateless client never repeats it."""

    def __init__(self, backend: DebugService) -> None:
        self.backend = backend

    async def _new_output(self, sid: str) -> dict[str, Any]:
        page = await self.backend.new_output(sid)
        text = joined_output(page.outputs)
        out: dict[str, Any] = {}
        if not text:
            return out
        text, cut = last_lines(text, OUTPUT_MAX)
        if cut or page.skipped or page.has_more:
            out["output_truncated"] = "earlier output omitted: debug_output shows all of it"
        if text:
            out["output"] = text
        return out

    async def _detailed(self, sid: str, status: Status) -> Status:
        """``status`` with the service's presentation of its stop (read at once: it is paused)."""
        try:
            stop = await self.backend.wait(sid, 0, details=True)
        except (RelayError, ApiError):
            return status
        if stop.status != "paused" or stop.location != status.location:
            return status  # it went on meanwhile: the stop as it was read
        shown = ("code", "locals", "locals_error", "watches", "exception", "description")
        return msgspec.structs.replace(status, **{name: getattr(stop, name) for name in shown})

    async def event(
        self, sid: str, status: Status, *, with_locals: bool = True, waited: float | None = None
    ) -> dict[str, Any]:
        """A status made into an event report: source line, locals, new output, what to do next. A stop is
        presented as the service presents it (``details``: its source line, locals and watches); one read
        without them is read again with them."""
        if status.status == "paused" and status.code is None and status.locals is None and status.locals_error is None:
            status = await self._detailed(sid, status)
        out = plain(status)
        out.pop("message", None)
        state = out.get("status")
        if state == "paused":
            exception = out.get("exception")
            if not with_locals:
                out.pop("locals", None)
                out.pop("watches", None)
            elif "..." in out.get("locals", {}):
                out["locals"]["..."] += ": debug_variables"
            if out.get("autopsy"):
                # the stop's locals are not listed again in the autopsy's top frame
                out["autopsy"] = compact_autopsy(out["autopsy"], out)
            elif exception:
                out["hint"] = (
                    "Stopped at an exception; its frame's locals are above. When the cause is in a caller, "
                    "exception_autopsy gives every frame's locals."
                )
        elif state in ("running", "launching"):
            waited_for = f" after {waited:g}s" if out.get("timed_out") and waited else ""
            out["hint"] = (
                f"Still running{waited_for}: breakpoint_wait waits for the next stop, debug_pause stops "
                "it now, debug_output shows what it printed."
            )
        elif state == "terminated":
            out["hint"] = (
                "The program ended. debug_output shows all it printed; debug_launch runs it again "
                "with the same breakpoints."
            )
        with contextlib.suppress(RelayError, ApiError):
            out.update(await self._new_output(sid))
        if "output_truncated" in out:
            out["output_truncated"] = "earlier output omitted: debug_output shows all of it"
        return out
