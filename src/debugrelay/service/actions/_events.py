"""How the actions present what the program did: a stop (or an end) as an event with its source line,
locals, new output and next step; variables, breakpoints and an autopsy without what they repeat."""

from __future__ import annotations

import contextlib
import re
import sys
from typing import Any

import msgspec

from debugrelay.errors import RelayError
from debugrelay.models import BreakpointView, CallRun, Status, Variable, joined_output, last_lines

from .._base import DebugService

OUTPUT_MAX = 2000  # characters of program output attached to an event (the tail is kept)
# what a session's answers would say alike each time: said once per session (again when it changes)
DEFAULT_STOPS = "breakpoints, an uncaught exception"  # a script's launch without stop_on_exception
SAID_ONCE = ("warning", "stops_on", "python", "interpreter", "hint")


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


_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _an_object(value: str) -> bool:
    """Whether a value names one object (its repr carries its address), not an equal value."""
    return _ADDRESS.search(value) is not None


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
    seen: dict[tuple[str, str], str] = {}  # an object shown already: (type, value) -> where
    for number, frame in enumerate(frames):
        frame.pop("index", None)
        for var in [*(frame.get("arguments") or []), *(frame.get("locals") or [])]:
            if _restated(var):
                var.pop("children")
            identity = (str(var.get("type")), str(var.get("value")))
            if not _an_object(identity[1]):
                continue
            if identity in seen:  # the same object (its address says so) in a caller: shown once, referred to
                for repeated in ("value", "type", "children", "truncated", "length", "variable_reference"):
                    var.pop(repeated, None)
                var["same_as"] = seen[identity]
            else:
                seen[identity] = f"frame {number} {var.get('name')}"
        for part in ("arguments", "locals"):
            if part in frame and not frame[part]:
                frame.pop(part)
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


TRACED_SHOWN = 5  # traced calls an event's answer names, the newest


def traced_brief(call: CallRun, *, run: bool = False) -> dict[str, Any]:
    """A traced call as an answer names it: its id, function, arguments and result (with ``run``, the
    lines it ran and what each changed), nothing its id already says."""
    out: dict[str, Any] = {"call_id": call.call_id, "function": call.function, "args": call.args}
    for key in ("returned", "raised", "raised_line", "parent"):
        if getattr(call, key) is not None:
            out[key] = getattr(call, key)
    if call.thread not in (None, "MainThread"):
        out["thread"] = call.thread
    if run:
        out["run"] = call.events
        if call.cut:
            out["cut"] = call.cut
    return out


class Stops:
    """Events as a tool answers them, over one backend. How much of the program's output was answered is
    the session's (the relay keeps it), so a new MCP process or a stateless client never repeats it."""

    def __init__(self, backend: DebugService) -> None:
        self.backend = backend

    async def _new_output(self, sid: str) -> dict[str, Any]:
        page = await self.backend.new_output(sid)
        text = joined_output(page.outputs)
        out: dict[str, Any] = {}
        if not text and not page.left_out:
            return out
        text, cut = last_lines(text, OUTPUT_MAX)
        if cut or page.skipped or page.has_more:
            out["output_truncated"] = "earlier output omitted: debug_output shows all of it"
        if text:
            out["output"] = text
        if page.left_out:
            out["output_left_out"] = page.left_out
        return out

    async def _traced_since(self, sid: str) -> dict[str, Any]:
        """The traced calls that finished since the session's last answer, newest last, in brief; a lone one
        with its run (the call an agent would read next)."""
        calls, finished, run = await self.backend.finished_calls(sid, TRACED_SHOWN)
        if not finished:
            return {}
        said, _, before = (self.backend.recall(sid, "traced", f"{run}:{finished}") or "").partition(":")
        new = finished - (int(before) if said == str(run) else 0)  # a new run: its calls are all new
        if new <= 0:
            return {}
        shown = calls[-new:]
        out: dict[str, Any] = {"traced": [traced_brief(c, run=new == 1) for c in shown]}
        if new > len(shown):
            out["traced_more"] = f"{new - len(shown)} more finished: debug_trace(calls='*') lists them"
        return out

    async def _breakpoints_kept(self, sid: str) -> bool:
        try:
            return bool((await self.backend.breakpoints(sid)).breakpoints)
        except RelayError:
            return False

    async def _detailed(self, sid: str, status: Status) -> Status:
        """``status`` with the service's presentation of its stop (read at once: it is paused)."""
        try:
            stop = await self.backend.wait(sid, 0, details=True)
        except RelayError:
            return status
        if stop.status != "paused" or stop.location != status.location:
            return status  # it went on meanwhile: the stop as it was read
        shown = ("code", "locals", "locals_error", "watches", "exception", "description")
        return msgspec.structs.replace(status, **{name: getattr(stop, name) for name in shown})

    async def event(
        self,
        sid: str,
        status: Status,
        *,
        with_locals: bool = True,
        waited: float | None = None,
        serving: bool = False,
    ) -> dict[str, Any]:
        """A status made into an event report: source line, locals, new output, what to do next. A stop is
        presented as the service presents it (``details``: its source line, locals and watches); one read
        without them is read again with them. What a session's answers say alike (the interpreter's
        warning, what stops the run, a hint) is said once per session; ``serving``: a service launched to
        answer requests."""
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
                shown = "its frame's locals are above; when the cause is in a caller, " if with_locals else ""
                out["hint"] = f"Stopped at an exception: {shown}exception_autopsy gives every frame's locals."
        elif state == "launching" and out.get("starting"):
            out["hint"] = (
                "The program runs but its debugger is still starting (a loaded machine): breakpoint_wait "
                "waits for its first stop, debug_disconnect ends it."
            )
        elif state in ("running", "launching") and serving:
            out["hint"] = (
                "It serves: debug_request sends it a request and answers the stop the request causes "
                "(a breakpoint in a handler first), or its response."
            )
        elif state in ("running", "launching"):
            waited_for = f" after {waited:g}s" if out.get("timed_out") and waited else ""
            out["hint"] = (
                f"Still running{waited_for}: breakpoint_wait waits for the next stop, debug_pause stops "
                "it now, debug_output shows what it printed."
            )
        elif state == "terminated" and (out.get("output_truncated") or not out.get("output")):
            kept = await self._breakpoints_kept(sid)
            again = f"debug_launch runs it again{' with the same breakpoints' if kept else ''}."
            out["hint"] = f"The program ended. debug_output shows all it printed; {again}"
        elif state == "terminated":
            out.pop("hint", None)  # all it printed is here; launching again is what an agent would do
        if "thread_count" not in out and "all_threads" not in out:
            out.pop("thread_id", None)  # one thread: nothing to tell it from
        if out.get("stops_on") == DEFAULT_STOPS:
            out.pop("stops_on")  # what every launch does unless told: the server's instructions say it
        if str(out.get("interpreter", "")).startswith(f"{sys.executable} ("):
            out.pop("interpreter")  # the relay's own: "python" says its version
        for key in SAID_ONCE:
            if key in out and not self.backend.first_said(sid, key, str(out[key])):
                out.pop(key)
        if state in ("paused", "terminated"):
            with contextlib.suppress(RelayError):
                out.update(await self._traced_since(sid))
        with contextlib.suppress(RelayError):
            out.update(await self._new_output(sid))
        if "output_truncated" in out:
            out["output_truncated"] = "earlier output omitted: debug_output shows all of it"
        return out
