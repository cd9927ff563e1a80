"""The calls of one session's traces, as its target reported them: bounded per trace, searched, kept in the
state store so that a relay restarted (with Redis) still has them.

The target sends batches ``{"pid", "traces": {trace_id: {"total", "dropped", "calls": [...]}}}``: when calls
end (at most once a second), when the program exits, and when the relay reads a paused program. A call is
known by its ``call_id``; a later report of it (a running call that has since ended) replaces the earlier.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Iterable
from typing import Any

import msgspec

from debugrelay.errors import StoreUnavailable
from debugrelay.launchers.kubernetes_pod import to_remote
from debugrelay.models import LaunchRequest, SessionRecord, TraceRecord
from debugrelay.store import StateStore

log = logging.getLogger(__name__)
SAVE_AFTER = 1.0  # s: reports arriving together are written to the store once
DEFAULT_KEEP = 1000
ENV = "DEBUGRELAY_TRACES"  # the traces a launched program starts with (its boot module reads them)


def spec_of(trace: TraceRecord, file: str | None = None) -> dict[str, Any]:
    """A trace as the target's tracer takes it (``file``: where the target has the traced file)."""
    return {
        "id": trace.id,
        "file": file or trace.file,
        "qualname": trace.qualname,
        "keep": trace.keep,
        "callees": trace.callees,
        "reprs": trace.reprs,
    }


def for_target(spec: LaunchRequest, traces: list[TraceRecord]) -> LaunchRequest:
    """The spec the launcher starts: the session's traces in the program's environment."""
    traces = [t for t in traces if not t.unsealed]  # read back without the relay's seal: never given to it
    if not traces:
        return spec
    mappings = [(m.local_root, m.remote_root) for m in spec.path_mappings]  # code in an image, elsewhere
    given = [spec_of(t, to_remote(t.file, mappings)) for t in traces]
    return msgspec.structs.replace(spec, env={**spec.env, ENV: json.dumps(given)})


class _Saved(msgspec.Struct, omit_defaults=True):
    calls: dict[str, list[dict[str, Any]]] = msgspec.field(default_factory=dict)
    totals: dict[str, dict[str, int]] = msgspec.field(default_factory=dict)


def _text(record: dict[str, Any]) -> str:
    parts = [str(v) for v in (record.get("args") or {}).values()]
    parts += [str(record.get(k)) for k in ("returned", "raised") if record.get(k) is not None]
    return "\n".join(parts)


def outcome(record: dict[str, Any]) -> str:
    if record.get("running"):
        return "running"
    return "raised" if record.get("raised") is not None else "returned"


class CallBook:
    """One session's traced calls: ``trace_id`` -> ``call_id`` -> the call as the target reported it."""

    def __init__(self, record: SessionRecord, store: StateStore) -> None:
        self.record = record  # its traces say what to keep
        self.session_id = record.id
        self.store = store
        self.calls: dict[str, dict[str, dict[str, Any]]] = {}
        self.totals: dict[str, dict[str, int]] = {}  # trace_id -> pid -> calls made there
        self.found: set[str] = set()  # traces whose function the running program has loaded
        self.ends: dict[tuple[str, str], int] = {}  # (trace, pid) -> the last call completion known
        self.root_pid: str | None = None  # the program's own process, as its first read said
        self.loaded = False
        self._save: asyncio.TimerHandle | None = None
        self.reading: asyncio.Task[None] | None = None  # a paused program's calls, asked for as it stopped

    # -- what the target reports -----------------------------------------------------------------

    def take(self, batch: Any) -> int:
        """Merge a batch from the target; the number of calls it carried."""
        if not isinstance(batch, dict) or not isinstance(batch.get("traces"), dict):
            return 0
        pid = str(batch.get("pid") or "")
        keeps = self._keeps()
        taken = 0
        for trace_id, report in batch["traces"].items():
            if not isinstance(report, dict) or trace_id not in keeps:
                continue  # a trace removed meanwhile
            book = self.calls.setdefault(trace_id, {})
            if report.get("calls") or report.get("found"):
                self.found.add(trace_id)
            for call in report.get("calls") or []:
                if isinstance(call, dict) and isinstance(call.get("call_id"), str):
                    book[call["call_id"]] = call
                    taken += 1
                    end = call.get("end")
                    if isinstance(end, int) and not call.get("running"):
                        key = (trace_id, pid)
                        self.ends[key] = max(self.ends.get(key, 0), end)
            total = report.get("total")
            if isinstance(total, int):
                seen = self.totals.setdefault(trace_id, {})
                seen[pid] = max(seen.get(pid, 0), total)
            self._bound(trace_id, keeps.get(trace_id, DEFAULT_KEEP))
        if taken:
            self._later()
        return taken

    def _bound(self, trace_id: str, keep: int) -> None:
        book = self.calls.get(trace_id, {})
        over = len(book) - keep
        if over <= 0:
            return
        for call_id in [k for k, c in book.items() if not c.get("running")][:over]:
            del book[call_id]

    def read_options(self, pid: int | None) -> dict[str, Any]:
        """What to ask a paused process for: the calls it completed after those known, and its running ones."""
        who = str(pid) if pid is not None else self.root_pid
        if who is None:
            return {}
        return {"after_end": {t: end for (t, p), end in self.ends.items() if p == who}}

    def _keeps(self) -> dict[str, int]:
        return {t.id: t.keep for t in self.record.traces}

    def follow(self) -> None:
        """The session's traces changed: calls of a trace it no longer has are forgotten, the rest bounded anew."""
        keeps = self._keeps()
        for trace_id in [t for t in self.calls if t not in keeps]:
            self.forget(trace_id)
        for trace_id, keep in keeps.items():
            self._bound(trace_id, keep)

    def forget(self, trace_id: str) -> None:
        self.calls.pop(trace_id, None)
        self.totals.pop(trace_id, None)
        self._later()

    def reset(self) -> None:
        """A new run: the last run's calls are not this run's (nor what its paused program was still asked)."""
        if self.reading is not None:
            self.reading.cancel()
            self.reading = None
        self.calls.clear()
        self.totals.clear()
        self.found.clear()
        self.ends.clear()
        self.root_pid = None
        self._later()

    def ended(self) -> None:
        """The program ended: a call still marked running either finished and went out of the kept calls (a
        later call of its process is kept: it is forgotten) or never returned (its process ended in it)."""
        for book in self.calls.values():
            newest: dict[Any, int] = {}
            for call in book.values():
                if not call.get("running"):
                    newest[call.get("pid")] = max(newest.get(call.get("pid"), 0), int(call.get("seq") or 0))
            for call_id, call in list(book.items()):
                if not call.get("running"):
                    continue
                if int(call.get("seq") or 0) < newest.get(call.get("pid"), 0):
                    del book[call_id]
                else:
                    call["running"] = False
                    call["raised"] = "did not return: the process ended during the call"
        self._later()

    # -- what an agent reads ---------------------------------------------------------------------

    def total(self, trace_id: str) -> int:
        done = sum(self.totals.get(trace_id, {}).values())
        return max(done, self.kept(trace_id))

    def kept(self, trace_id: str) -> int:
        return sum(1 for c in self.calls.get(trace_id, {}).values() if not c.get("running"))

    def dropped(self, trace_id: str) -> int:
        return max(0, sum(self.totals.get(trace_id, {}).values()) - self.kept(trace_id))

    def find(
        self,
        trace_ids: Iterable[str],
        *,
        function: str | None = None,
        outcome_is: str | None = None,
        match: str | None = None,
    ) -> list[dict[str, Any]]:
        """The calls of ``trace_ids`` that pass every filter, oldest first."""
        found = []
        for trace_id in trace_ids:
            for call in self.calls.get(trace_id, {}).values():
                name = str(call.get("function") or "")
                if function is not None and name != function and not name.endswith("." + function):
                    continue
                if outcome_is is not None and outcome(call) != outcome_is:
                    continue
                if match is not None and match not in _text(call):
                    continue
                found.append(call)
        found.sort(key=lambda c: (c.get("t0") or 0, c.get("pid") or 0, c.get("seq") or 0))
        return found

    def get(self, call_id: str) -> dict[str, Any] | None:
        for book in self.calls.values():
            if call_id in book:
                return book[call_id]
        return None

    # -- the state store --------------------------------------------------------------------------

    async def load(self) -> None:
        """The calls kept in the store (once per relay: a restarted relay reads them back)."""
        if self.loaded:
            return
        self.loaded = True
        with contextlib.suppress(StoreUnavailable):
            raw = await self.store.get_traced_calls(self.session_id)
            if raw:
                try:
                    saved = msgspec.json.decode(raw, type=_Saved)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    log.warning("session %s: unreadable traced calls skipped", self.session_id)
                    return
                for trace_id, calls in saved.calls.items():
                    book = self.calls.setdefault(trace_id, {})
                    for call in calls:
                        book.setdefault(str(call.get("call_id")), call)
                for trace_id, totals in saved.totals.items():
                    seen = self.totals.setdefault(trace_id, {})
                    for pid, n in totals.items():
                        seen[pid] = max(seen.get(pid, 0), n)

    def _later(self) -> None:
        if self._save is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._save = loop.call_later(SAVE_AFTER, lambda: loop.create_task(self.save()))

    async def save(self) -> None:
        """Write the calls to the store now."""
        if self._save is not None:
            self._save.cancel()
            self._save = None
        calls = {t: list(b.values()) for t, b in self.calls.items()}
        data = msgspec.json.encode(_Saved(calls=calls, totals=self.totals))
        try:
            await self.store.save_traced_calls(self.session_id, data)
        except StoreUnavailable:
            log.warning("session %s: traced calls not written (store unavailable)", self.session_id)

    def close(self) -> None:
        if self._save is not None:
            self._save.cancel()
            self._save = None
