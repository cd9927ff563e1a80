"""What every section of :class:`RelayService` shares: the limits a client's values are checked against,
the session lookup, the count of open long-polls and the status a session answers with."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import msgspec

from debugrelay.errors import InvalidRequest, TooManyWaits
from debugrelay.evidence import snapshots
from debugrelay.launchers.policy import LaunchPolicy
from debugrelay.models import (
    BreakpointRecord,
    BreakpointRuns,
    BreakpointView,
    EvaluateResult,
    SessionDetail,
    Snapshot,
    Status,
    limits,
)
from debugrelay.models.limits import MAX_PAGE, MAX_WAIT
from debugrelay.sessions import Session, SessionManager, breakpoints, read_session_file, session_view, status_view

from ._base import DebugService

LOCALS_MAX = 25  # variables listed with a stop's details; the rest are a variables call away
MODULE_NAMES_READ = 200  # a module-level stop reads this many names to find its own values among the imported
# what a module-level stop leaves out of its locals: imported modules and names, and the code it defines
CODE_TYPES = frozenset(
    {
        "module",
        "function",
        "builtin_function_or_method",
        "type",
        "ABCMeta",
        "EnumType",
        "EnumMeta",
        "TypeVar",
        "ParamSpec",
        "_SpecialForm",
        "_SpecialGenericAlias",
        "_GenericAlias",
        "_TupleType",
        "_CallableType",
        "_LiteralSpecialForm",
        "_TypedCacheSpecialForm",
        "_AnyMeta",
        "_ProtocolMeta",
        "NewType",
    }
)
VALUE_MAX = 120  # characters of one value in a stop's details (a cut value ends saying how much more)
STEP_WAIT = 10.0  # a step answers with the new location: wait for it unless told otherwise
NEW_OUTPUT_LINES = 1000  # the newest lines of a run's new output one answer carries (the rest: a read away)
CONTEXTS = ("watch", "repl", "hover", "clipboard", "variables")
FORMATS = (None, "default", "hex", "binary")


def wait_seconds(value: float | None, default: float) -> float:
    """A wait or timeout a client gave, checked; ``default`` when it gave none."""
    if value is None:
        return default
    if not 0 <= value <= MAX_WAIT:
        raise InvalidRequest(f"wait/timeout must be between 0 and {MAX_WAIT:g} seconds", details={"timeout": value})
    return value


def check_length(field: str, value: str | None, limit: int) -> None:
    """A string a client gave, within its bound (the HTTP API checks the same on decoding)."""
    if value is not None and len(value) > limit:
        raise InvalidRequest(
            f"{field} is {len(value)} characters long; at most {limit} are accepted",
            details={"field": field, "length": len(value), "max_length": limit},
        )


def check_timeout_minutes(value: float | None) -> None:
    if value is not None and not 0 < value <= limits.MAX_TIMEOUT_MINUTES:
        raise InvalidRequest(
            f"timeout_minutes must be > 0 and at most {limits.MAX_TIMEOUT_MINUTES}",
            details={"timeout_minutes": value, "max": limits.MAX_TIMEOUT_MINUTES},
        )


def check_page(start: int, count: int | None, max_count: int = MAX_PAGE) -> None:
    if start < 0:
        raise InvalidRequest("start must be >= 0", details={"start": start})
    if count is not None and not 1 <= count <= max_count:
        raise InvalidRequest(f"count must be between 1 and {max_count}", details={"count": count})


def format_number(result: EvaluateResult, fmt: str | None) -> EvaluateResult:
    """An integer result shown in hex or binary; anything else (bool included) as debugpy gave it."""
    if fmt in ("hex", "binary") and result.type == "int" and result.result.lstrip("-").isdigit():
        value = int(result.result)
        result.result = hex(value) if fmt == "hex" else bin(value)
    return result


def breakpoint_runs(session: Session) -> list[BreakpointRuns]:
    """The conditional or counted breakpoints whose line ran, as the target last reported: hits so far,
    runs, their rate, and what slows the program."""
    out = []
    for bp in session.record.breakpoints:
        if bp.runs and not bp.internal:
            view = breakpoint_view(bp)
            out.append(
                BreakpointRuns(
                    breakpoint_id=view.breakpoint_id,
                    hit_count=view.hit_count,
                    runs=view.runs,
                    runs_per_second=view.runs_per_second,
                    slow=view.slow or None,
                )
            )
    return out


def ended(session: Session) -> bool:
    return session.status in ("terminated", "failed")


def breakpoint_view(bp: BreakpointRecord, ended: bool = False) -> BreakpointView:
    return msgspec.convert(breakpoints.view(bp, ended), BreakpointView)


class ServiceCore(DebugService):
    """What the sections of :class:`RelayService` build on: the manager, the lookup of a session and how it
    answers. Each section is a class of its own module; ``RelayService`` is made of them."""

    def __init__(self, manager: SessionManager | Any) -> None:
        self._manager = manager
        self._policy: LaunchPolicy | None = None  # the operator's roots, read once

    @contextlib.contextmanager
    def _waiting(self, session_id: str) -> Iterator[None]:
        """Count a long-poll: each holds a client's connection, so their number is bounded."""
        waits = self.manager.open_waits
        if waits[session_id] >= limits.MAX_WAITS_PER_SESSION:
            raise TooManyWaits(
                f"{limits.MAX_WAITS_PER_SESSION} waits are open on this session already",
                details={"max_per_session": limits.MAX_WAITS_PER_SESSION},
            )
        if waits.total() >= limits.MAX_WAITS:
            raise TooManyWaits(
                f"{limits.MAX_WAITS} waits are open on this relay already", details={"max": limits.MAX_WAITS}
            )
        waits[session_id] += 1
        try:
            yield
        finally:
            waits[session_id] -= 1
            if not waits[session_id]:
                del waits[session_id]

    async def _read_text(self, session: Session, path: str) -> str | None:
        """A file of ``session``: from its target when it has files of its own, else from the relay's
        disk inside the session's folders, whatever named the file (see ``sessions._files``)."""
        return await read_session_file(session, path)

    def _launch_policy(self) -> LaunchPolicy:
        if self._policy is None:
            self._policy = LaunchPolicy.from_settings(self.manager.settings)
        return self._policy

    @property
    def manager(self) -> SessionManager:
        m = self._manager
        return m if isinstance(m, SessionManager) else m()

    def unpersisted(self, session_id: str) -> bool:
        return self.manager.store.pending_for(session_id)

    def recall(self, session_id: str, key: str, value: str) -> str | None:
        session = self.manager.sessions.get(session_id)
        if session is None:
            return None
        before, session.said[key] = session.said.get(key), value
        return before

    def _get(self, session_id: str) -> Session:
        return self.manager.get(session_id)

    def _status(self, session: Session, **extra: Any) -> Status:
        view = status_view(session, self.manager.expires_in(session))
        current = extra.get("request")
        done = session.http.take_unreported(but=current.request_id if current is not None else None)
        if done:
            view["requests"] = done  # responses that came since the last answer (a paused handler went on)
        return msgspec.convert({**view, **extra}, Status)

    def _detail(self, session: Session, **extra: Any) -> SessionDetail:
        view = session_view(session, self.manager.expires_in(session))
        return msgspec.convert({**view, **extra}, SessionDetail)

    async def _find_post_mortem(self, session_id: str) -> Snapshot | None:
        """The session's latest post-mortem snapshot, if it has one (inspection answers from it once the
        program ended)."""
        store = self.manager.evidence.store
        for evidence_id in reversed(await store.ids(session_id)):
            item = await store.get(evidence_id)
            if item is not None and item.kind == "post_mortem":
                return snapshots.whole(item, msgspec.json.decode(item.text))
        return None
