"""What each role may do to a session: the one place the rules are written.

An operation's access (declared with it) is one of:

- ``read``: look (GET). Admins and viewers: every session; agents: their own and those shared with them.
- ``drive``: change what the session does (step, breakpoints, rename, delete). Admins; agents on their
  own and shared sessions. Viewers never.
- ``owner``: run code or feed the program (evaluate, set a variable, input, launch). The session's
  owner and admins only: a shared session may be watched and driven, not made to run another's code.
- ``create``: a new session. Admins and agents.
- ``admin``: the relay's own business (the audit trail, stopping the relay). Admins only.
"""

from __future__ import annotations

from typing import Literal

from debugrelay.errors import Forbidden

from ._caller import Caller

Access = Literal["read", "drive", "owner", "create", "admin"]
ROLE_PREFIX = "role:"  # a share naming every credential of a role: ``role:viewer``


def shared_with(caller: Caller, shares: list[str]) -> bool:
    return caller.name in shares or f"{ROLE_PREFIX}{caller.role}" in shares


def may_see(caller: Caller | None, created_by: str | None, shares: list[str]) -> bool:
    """Whether ``caller`` sees a session at all (in lists, the live view, its reads)."""
    if caller is None or caller.role in ("admin", "viewer"):
        return True
    return created_by == caller.name or shared_with(caller, shares)


def authorize(
    caller: Caller | None, access: Access, what: str, *, created_by: str | None = None, shares: list[str] | None = None
) -> None:
    """Nothing when ``caller`` may do ``what`` (an operation of kind ``access``); :class:`Forbidden` naming
    the owner and the rule otherwise. ``created_by`` and ``shares`` describe the session, if any."""
    if caller is None or caller.role == "admin":
        return
    owner = created_by or "nobody"
    if caller.role == "viewer":
        if access == "read":
            return
        raise Forbidden(
            f"'{caller.name}' is a viewer: it reads sessions, it cannot {what}",
            details={"caller": caller.name, "role": caller.role, "operation": what},
            hint="Ask an admin for an agent credential to drive sessions.",
        )
    if access == "create":
        return
    if access == "admin":
        raise Forbidden(
            f"only an admin may {what}",
            details={"caller": caller.name, "role": caller.role, "operation": what},
            hint="Ask an admin to do it.",
        )
    mine = created_by == caller.name
    if mine or (access in ("read", "drive") and shared_with(caller, shares or [])):
        return
    shared = shared_with(caller, shares or [])
    why = (
        f"session belongs to '{owner}', who shared it with '{caller.name}' to watch and drive, not to {what}"
        if shared
        else f"session belongs to '{owner}' and is not shared with '{caller.name}'"
    )
    raise Forbidden(
        f"cannot {what}: the {why}",
        details={"caller": caller.name, "owner": created_by, "operation": what, "shared": shared},
        hint=(
            f"Ask '{owner}' (or an admin) to do it."
            if shared
            else f"Ask '{owner}' to share it (POST /sessions/{{id}}/share), or work in a session of your own."
        ),
    )
