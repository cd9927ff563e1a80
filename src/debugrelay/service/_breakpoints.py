"""Breakpoints of a session, exception breakpoints, and breakpoint profiles (named sets saved in the store and
applied to any session)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from debugrelay import access
from debugrelay.errors import Forbidden, InvalidRequest, NotFound, Unsealed
from debugrelay.models import (
    BreakpointList,
    BreakpointRecord,
    BreakpointsCleared,
    BreakpointView,
    Deleted,
    ExceptionFilters,
    ExceptionFiltersView,
    Profile,
    ProfileApplied,
    ProfileList,
    ProfileSaved,
    SavedBreakpoint,
    StoredProfile,
    limits,
    runs_code,
)
from debugrelay.sessions import BreakpointRequest, BreakpointUpdate, breakpoints, roots_for, seals
from debugrelay.trust import RelayKeys

from ._core import ServiceCore, breakpoint_view, ended

_PROFILE_NAME = re.compile(r"[\w.@-]{1,100}")
_PROFILE_FIELDS = ("id", "verified", "hit_count", "dap_id", "internal", "pending", "message", "suggestion")


def _no_profile(name: str) -> NotFound:
    return NotFound(
        f"no breakpoint profile '{name}' (or it could not be read)", details={"name": name}, hint="List the profiles."
    )


def _profile(name: str, stored: StoredProfile, keys: RelayKeys) -> Profile:
    entries = [_profile_entry(b) for b in stored.breakpoints]
    shown = Profile(name=name, breakpoints=entries, saved_by=stored.saved_by)
    shown.unsealed = not seals.profile_sealed(keys, name, stored)
    return shown


def _profile_entry(bp: BreakpointRecord) -> SavedBreakpoint:
    data: dict[str, Any] = msgspec.to_builtins(bp)
    for key in _PROFILE_FIELDS:
        data.pop(key, None)
    return msgspec.convert(data, SavedBreakpoint)


class BreakpointOps(ServiceCore):
    """The breakpoint and breakpoint-profile operations."""

    # -- breakpoints ---------------------------------------------------------------------------------

    async def breakpoints(self, session_id: str) -> BreakpointList:
        session = self._get(session_id)
        listed = await breakpoints.listing(session)
        return BreakpointList(breakpoints=[breakpoint_view(b, ended(session)) for b in listed])

    async def breakpoint(self, session_id: str, breakpoint_id: str) -> BreakpointView:
        session = self._get(session_id)
        await breakpoints.listing(session)
        return breakpoint_view(breakpoints.find(session.record, breakpoint_id), ended(session))

    async def add_breakpoints(self, session_id: str, requests: list[BreakpointRequest]) -> list[BreakpointView]:
        """All or none: one that cannot be set leaves the session as it was."""
        session = self._get(session_id)
        if len(requests) > limits.MAX_BREAKPOINTS_PER_REQUEST:
            raise InvalidRequest(
                f"{len(requests)} breakpoints in one request; at most "
                f"{limits.MAX_BREAKPOINTS_PER_REQUEST} are set at once",
                details={"count": len(requests), "max": limits.MAX_BREAKPOINTS_PER_REQUEST},
            )
        requests = breakpoints.validate_all(requests)
        have = sum(1 for b in session.record.breakpoints if not b.internal)
        if have + len(requests) > limits.MAX_BREAKPOINTS_PER_SESSION:
            raise InvalidRequest(
                f"the session has {have} breakpoints; at most {limits.MAX_BREAKPOINTS_PER_SESSION} are accepted",
                details={"breakpoints": have, "adding": len(requests), "max": limits.MAX_BREAKPOINTS_PER_SESSION},
                hint="Remove breakpoints you no longer need.",
            )
        async with session.lock:
            created = await breakpoints.add(session, requests)
        return [breakpoint_view(b) for b in created]

    async def update_breakpoint(self, session_id: str, breakpoint_id: str, change: BreakpointUpdate) -> BreakpointView:
        session = self._get(session_id)
        async with session.lock:
            bp = await breakpoints.update(session, breakpoint_id, change)
        return breakpoint_view(bp)

    async def remove_breakpoint(self, session_id: str, breakpoint_id: str) -> Deleted:
        session = self._get(session_id)
        async with session.lock:
            await breakpoints.remove(session, breakpoint_id)
        return Deleted(deleted=True, breakpoint_id=breakpoint_id)

    async def clear_breakpoints(self, session_id: str) -> BreakpointsCleared:
        session = self._get(session_id)
        async with session.lock:
            gone = await breakpoints.remove_all(session)
        return BreakpointsCleared(session_id=session_id, removed=[b.id for b in gone])

    async def set_exception_breakpoints(
        self, session_id: str, filters: Sequence[str] = (), exception_types: Sequence[str] = ()
    ) -> ExceptionFiltersView:
        session = self._get(session_id)
        wanted = await breakpoints.set_exception_filters(session, list(filters), list(exception_types))
        return ExceptionFiltersView(filters=wanted.filters, exception_types=wanted.exception_types, carries_over=True)

    async def exception_breakpoints(self, session_id: str) -> ExceptionFiltersView:
        """Those in force (this run's); ``carries_over``: they are the session's own, for the next launch too."""
        record = self._get(session_id).record
        filters = record.exception_filters or record.exception_setting or ExceptionFilters()
        return ExceptionFiltersView(
            filters=filters.filters,
            exception_types=filters.exception_types,
            carries_over=record.exception_setting is not None and filters == record.exception_setting,
        )

    # -- breakpoint profiles -------------------------------------------------------------------------

    async def list_profiles(self) -> ProfileList:
        profiles = await self.manager.store.list_profiles()
        return ProfileList(profiles=[_profile(n, p, self.manager.keys) for n, p in sorted(profiles.items())])

    async def profile(self, name: str) -> Profile:
        saved = await self.manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        return _profile(name, saved, self.manager.keys)

    async def save_profile(
        self, name: str, *, session_id: str | None = None, requests: list[BreakpointRequest] | None = None
    ) -> ProfileSaved:
        """A named breakpoint set, from a session's breakpoints or given; a line past the end is refused now."""
        if not _PROFILE_NAME.fullmatch(name):
            raise InvalidRequest(
                f"'{name}' is not a profile name",
                details={"name": name},
                hint="Use 1-100 letters, digits, '_', '-', '.' or '@'.",
            )
        if (session_id is None) == (requests is None):
            raise InvalidRequest("give either 'session_id' or 'breakpoints'", details={"name": name})
        caller = access.current()
        if session_id is not None:
            record = self._get(session_id).record
            # the session's breakpoints are read: a session the caller may not read lends none
            access.authorize(
                caller, "read", "save a profile from it", created_by=record.created_by, shares=record.shared_with
            )
            source = [b for b in record.breakpoints if b.shown]
        else:
            source = [breakpoints.record_from(r) for r in breakpoints.validate_all(requests or [])]
            roots = roots_for(self.manager.settings, None, self._launch_policy())
            for bp in source:
                breakpoints.verify_locally(bp, roots)
        before = await self.manager.store.get_profile(name)
        if before is not None and caller is not None and caller.role != "admin" and before.saved_by != caller.name:
            # whoever applies a profile runs its conditions: another's saved set is never rewritten under them
            raise Forbidden(
                f"profile '{name}' was saved by '{before.saved_by or 'nobody'}': only it or an admin may replace it",
                details={"name": name, "saved_by": before.saved_by, "caller": caller.name},
                hint="Save it under another name.",
            )
        saved = [breakpoints.profile_entry(b, i) for i, b in enumerate(source, 1)]
        profile = StoredProfile(breakpoints=saved, saved_by=caller.name if caller is not None else None)
        await self.manager.store.save_profile(name, seals.seal_profile(self.manager.keys, name, profile))
        return ProfileSaved(name=name, breakpoints=len(saved), replaced=before is not None)

    async def apply_profile(self, session_id: str, name: str) -> ProfileApplied:
        session = self._get(session_id)
        saved = await self.manager.store.get_profile(name)
        if saved is None:
            raise _no_profile(name)
        if not seals.profile_sealed(self.manager.keys, name, saved):
            raise Unsealed(
                f"profile '{name}' was read from the state store without this relay's seal: it is not applied",
                details={"name": name},
                hint="Save the profile again from breakpoints you set (POST /breakpoint-profiles).",
            )
        if any(runs_code(b) for b in saved.breakpoints):
            # as setting those breakpoints one by one: a condition or log message runs code, the owner's call
            record = session.record
            access.authorize(
                access.current(),
                "owner",
                f"apply profile '{name}', whose breakpoints run code (a condition or log message)",
                created_by=record.created_by,
                shares=record.shared_with,
            )
        async with session.lock:
            created, skipped = await breakpoints.apply_saved(session, list(saved.breakpoints))
        out = ProfileApplied(profile=name, breakpoints=[breakpoint_view(b) for b in created], skipped=skipped)
        if skipped:
            out.warning = f"{len(skipped)} saved breakpoint(s) could not be set and were skipped"
        return out
