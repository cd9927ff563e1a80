"""The trace operations: every call of a function, and each call's whole run, in one read."""

from __future__ import annotations

import abc

from debugrelay.models import CallList, CallRun, Origin, Trace, TraceList, TraceRequest
from debugrelay.models._traces import CallId, CallMatch, CallOutcome, TraceId, WrittenName
from debugrelay.models.limits import Count, FunctionName, Line, Start

from .._operations import declare

SESSION = "/sessions/{session_id}"


class TraceOperations(abc.ABC):
    """Function traces: trace a function, list its calls, read one call's run."""

    @declare(
        "POST",
        SESSION + "/traces",
        "Trace a function: every call's arguments, what each line changed, its result (no pause)",
        tag="traces",
        status=201,
        body="request",
        current="new",
    )
    @abc.abstractmethod
    async def add_trace(self, session_id: str, request: TraceRequest) -> Trace:
        """Trace a function ('file:Class.method' or 'package.module:function'): before a launch (applied as the
        program starts, and at each relaunch) or while it runs or is paused."""

    @declare("GET", SESSION + "/traces", "The session's traced functions", tag="traces")
    @abc.abstractmethod
    async def traces(self, session_id: str) -> TraceList:
        """The session's traces, with how many calls each recorded and kept."""

    @declare("DELETE", SESSION + "/traces/{trace_id}", "Stop tracing a function (its calls go with it)", tag="traces")
    @abc.abstractmethod
    async def remove_trace(self, session_id: str, trace_id: TraceId) -> Trace:
        """Stop tracing a function; its recorded calls are removed with it."""

    @declare(
        "GET",
        SESSION + "/traces/calls",
        "Calls of traced functions, filtered (function, outcome, a text in their values), oldest first",
        tag="traces",
    )
    @abc.abstractmethod
    async def traced_calls(
        self,
        session_id: str,
        *,
        function: FunctionName | None = None,
        outcome: CallOutcome | None = None,
        match: CallMatch | None = None,
        trace_id: TraceId | None = None,
        offset: Start = 0,
        limit: Count = 20,
    ) -> CallList:
        """Calls of the traced functions in brief (arguments, result or exception, lines run, parent), filtered by
        function name, outcome ('returned', 'raised', 'running') and a text found in an argument or the result."""

    @declare(
        "GET",
        SESSION + "/traces/origin",
        "Where a value came from: the traced calls' writes of a name (a local, obj.attr, d['key']), newest first",
        tag="traces",
    )
    @abc.abstractmethod
    async def value_origin(self, session_id: str, *, name: WrittenName, limit: Count = 10) -> Origin:
        """The writes the traced calls recorded of ``name`` (``basket.total`` finds ``self.total`` written in a
        method), newest first, each with its call and line; none recorded: the functions of the paused file and
        the traced ones' files that assign it, to trace."""

    @declare(
        "GET",
        SESSION + "/traces/calls/{call_id}",
        "One call's whole run: each line with what it changed, loops folded, its result",
        tag="traces",
    )
    @abc.abstractmethod
    async def traced_call(
        self,
        session_id: str,
        call_id: CallId,
        *,
        line: Line | None = None,
        match: CallMatch | None = None,
        offset: Start = 0,
        limit: Count = 100,
    ) -> CallRun:
        """One call's run in order: each line run with what it changed (loops folded), then its result or
        exception, and the calls it made; ``line``/``match`` keep the events of that line or holding that text
        (a loop: with its kept iterations), paged by ``offset``/``limit``."""
