"""The operations on sessions, on running the program, and on its output and input."""

from __future__ import annotations

import abc

from debugrelay.models import (
    AttachSpec,
    AuditPage,
    Cleared,
    Deleted,
    HttpCall,
    HttpCallView,
    InputSent,
    LaunchRequest,
    OutputPage,
    Ping,
    SessionDetail,
    SessionDocument,
    SessionExport,
    SessionList,
    Status,
)
from debugrelay.models.limits import (
    Count,
    CredentialName,
    Details,
    InputText,
    Name,
    OutputLimit,
    ResumeCommand,
    Seconds,
    SessionIdFilter,
    Sharee,
    Sharees,
    Start,
    TimeoutMinutes,
)

from .._operations import declare

SESSION = "/sessions/{session_id}"


class SessionOperations(abc.ABC):
    """Sessions, running the program, its output and input."""

    # -- sessions ------------------------------------------------------------------------------------

    @declare("GET", "/sessions", "List sessions with their status", tag="sessions")
    @abc.abstractmethod
    async def list_sessions(self) -> SessionList:
        """Sessions, oldest first."""

    @declare(
        "POST",
        "/sessions",
        "Create a debug session (launch mode, or attach to a debugpy)",
        tag="sessions",
        status=201,
        routed=False,
        access="create",
    )
    @abc.abstractmethod
    async def create_session(
        self,
        *,
        name: str | None = None,
        timeout_minutes: float | None = None,
        attach: AttachSpec | None = None,
        launch: LaunchRequest | None = None,
    ) -> SessionDetail:
        """A new session: ``created``, attached when ``attach`` is given, launched when ``launch`` is."""

    @declare("GET", SESSION, "Session detail", tag="sessions")
    @abc.abstractmethod
    async def session(self, session_id: str) -> SessionDetail:
        """Session detail, read from the record only (the debugger is not asked)."""

    @declare("PATCH", SESSION, "Rename a session or change its idle timeout", tag="sessions", named="SessionPatch")
    @abc.abstractmethod
    async def update_session(
        self, session_id: str, *, name: Name | None = None, timeout_minutes: TimeoutMinutes | None = None
    ) -> SessionDetail:
        """A new name or idle timeout (what is not given stays)."""

    @declare("DELETE", SESSION, "End the target and forget the session", tag="sessions")
    @abc.abstractmethod
    async def delete_session(self, session_id: str) -> Deleted:
        """End the target and forget the session."""

    @declare("GET", SESSION + "/status", "Compact status: paused where and why, or exit code", tag="sessions")
    @abc.abstractmethod
    async def status(self, session_id: str) -> Status:
        """Compact status, read from the record only."""

    @declare("GET", SESSION + "/ping", "Heartbeat: resets the idle timeout", tag="sessions", changes=True)
    @abc.abstractmethod
    async def ping(self, session_id: str) -> Ping:
        """Keep the session from expiring; says when it would."""

    @declare(
        "GET",
        SESSION + "/export",
        "Session configuration: launch spec, breakpoints, filters, name",
        tag="sessions",
        owner_when=lambda a: bool(a.get("reveal_env")),
    )
    @abc.abstractmethod
    async def export(self, session_id: str, *, reveal_env: bool = False) -> SessionExport:
        """The session's configuration document; environment values masked unless ``reveal_env``."""

    @declare(
        "POST",
        "/sessions/import",
        "Create a session from an export (start it with start: true)",
        tag="sessions",
        status=201,
        body="document",
        access="create",
    )
    @abc.abstractmethod
    async def import_session(self, document: SessionDocument) -> SessionDetail:
        """A new session made from an export."""

    @declare(
        "POST",
        SESSION + "/clone",
        "A new session: same spec and breakpoints",
        tag="sessions",
        status=201,
        named="CloneBody",
        access="owner",
    )
    @abc.abstractmethod
    async def clone(self, session_id: str, *, name: Name | None = None, start: bool = False) -> SessionDetail:
        """A new session with the same launch and breakpoints; ``start`` runs it right away."""

    @declare(
        "POST",
        SESSION + "/share",
        "Share a session with credentials or roles: they may watch and drive it",
        tag="sessions",
        access="owner",
        named="ShareBody",
    )
    @abc.abstractmethod
    async def share(self, session_id: str, *, names: Sharees) -> SessionDetail:
        """Let ``names`` (credential names, or ``role:<role>``) see and drive the session; only its owner and
        admins still evaluate, set variables, send input or launch in it."""

    @declare(
        "POST",
        SESSION + "/unshare",
        "Withdraw a share: the names no longer see the session",
        tag="sessions",
        access="owner",
        named="UnshareBody",
    )
    @abc.abstractmethod
    async def unshare(self, session_id: str, *, names: Sharees) -> SessionDetail:
        """Take ``names`` off the session's shares (names it was not shared with are ignored)."""

    @declare(
        "POST",
        SESSION + "/hand-over",
        "Give a session to another credential: it becomes the owner (owner or admin)",
        tag="sessions",
        access="owner",
        named="HandOverBody",
    )
    @abc.abstractmethod
    async def hand_over(self, session_id: str, *, to: CredentialName) -> SessionDetail:
        """Make ``to`` the session's owner (a person taking over an agent's session, knowingly: the audit
        trail keeps who gave it to whom); the former owner keeps it shared with them, to watch and drive."""

    @declare(
        "GET", "/audit", "The audit trail: who changed or evaluated what (admins only)", tag="sessions", access="admin"
    )
    @abc.abstractmethod
    async def audit(
        self,
        *,
        session_id: SessionIdFilter | None = None,
        who: Sharee | None = None,
        offset: Start = 0,
        limit: Count = 100,
    ) -> AuditPage:
        """Every call that changed or evaluated something, newest first, with the credential that made it;
        kept in the state store (every replica reads the same trail)."""

    # -- running the program -------------------------------------------------------------------------

    @declare(
        "POST",
        SESSION + "/launch",
        "Launch a script or module under debugpy",
        tag="sessions",
        body="spec",
        access="owner",
    )
    @abc.abstractmethod
    async def launch(self, session_id: str, spec: LaunchRequest) -> Status:
        """Start the program; answers as soon as it runs."""

    @declare(
        "POST",
        SESSION + "/attach",
        "Attach to a debugpy listening at host:port or in a pid",
        tag="sessions",
        body="spec",
        access="owner",
    )
    @abc.abstractmethod
    async def attach(self, session_id: str, spec: AttachSpec) -> Status:
        """Attach to a debugpy that listens (host and port) or into a running process (pid)."""

    @declare(
        "POST",
        SESSION + "/{command}",
        "continue, step-over, step-into or step-out",
        tag="sessions",
        wire={"wait": "timeout", "details": "locals", "every": "all"},
        in_query=("details",),
        routed=False,
    )
    @abc.abstractmethod
    async def resume(
        self,
        session_id: str,
        command: ResumeCommand,
        thread_id: int | None = None,
        wait: Seconds = 0.0,
        details: bool = False,
        *,
        every: bool = False,
    ) -> Status:
        """continue/step-*; waits up to ``wait`` s for the next stop (``timed_out`` when none came).

        ``details``: a stop comes with its source line, locals and watch values (see ``Status``); ``every``:
        a continue resumes every paused process of the program, not only the one whose stop is shown."""

    @declare("POST", SESSION + "/pause", "Pause the running target", tag="sessions")
    @abc.abstractmethod
    async def pause(self, session_id: str) -> Status:
        """Pause the running target."""

    @declare(
        "POST",
        SESSION + "/wait",
        "Long-poll until the target pauses or ends",
        tag="sessions",
        wire={"details": "locals"},
        in_query=("details",),
        named="WaitBody",
    )
    @abc.abstractmethod
    async def wait(
        self, session_id: str, timeout: Seconds = 30.0, include_autopsy: bool = False, details: Details = False
    ) -> Status:
        """Long-poll until paused or ended (the current stop when already paused); ``details`` as resume."""

    @declare(
        "POST",
        SESSION + "/restart",
        "Restart the program with the same launch and breakpoints",
        tag="sessions",
        access="owner",
    )
    @abc.abstractmethod
    async def restart(self, session_id: str) -> Status:
        """Run the program again with the same launch and breakpoints."""

    @declare("POST", SESSION + "/terminate", "Kill the target; the session stays", tag="sessions")
    @abc.abstractmethod
    async def terminate(self, session_id: str) -> Status:
        """Kill the target; the session stays."""

    @declare("POST", SESSION + "/detach", "Disconnect and leave the target running", tag="sessions")
    @abc.abstractmethod
    async def detach(self, session_id: str) -> Status:
        """Disconnect and leave the target running."""

    @declare(
        "POST",
        SESSION + "/request",
        "Send an HTTP request to the program (a service): answers with its response or the stop it caused",
        tag="sessions",
        body="call",
        access="owner",
    )
    @abc.abstractmethod
    async def request(self, session_id: str, call: HttpCall) -> Status:
        """Send an HTTP request to the program (a service) from where the relay reaches it; answered with
        the response, or with the stop the request caused, whichever comes first."""

    @declare(
        "GET", SESSION + "/requests/{request_id}", "A request sent to the program, and its response", tag="sessions"
    )
    @abc.abstractmethod
    async def request_result(self, session_id: str, request_id: str) -> HttpCallView:
        """A request sent earlier: pending (its handler is paused, say), answered or failed."""

    # -- output and input ----------------------------------------------------------------------------

    @declare("GET", SESSION + "/output", "stdout/stderr since a cursor, paginated", tag="sessions")
    @abc.abstractmethod
    async def output(
        self,
        session_id: str,
        since: str | None = None,
        limit: OutputLimit = 200,
        stream: str | None = None,
        *,
        newest: bool = False,
    ) -> OutputPage:
        """Output entries after a cursor: the first ``limit`` of them, or with ``newest`` the last (``skipped``
        says that earlier ones were left out; the cursor ends the output)."""

    @declare("POST", SESSION + "/output/new", "Output no answer carried yet, marked carried", tag="sessions")
    @abc.abstractmethod
    async def new_output(self, session_id: str) -> OutputPage:
        """The run's output that no answer of this session carried yet (the newest of it when there is much),
        marked as carried: an answer made by any client, through any process, never repeats it."""

    @declare("DELETE", SESSION + "/output", "Clear the output buffer", tag="sessions")
    @abc.abstractmethod
    async def clear_output(self, session_id: str) -> Cleared:
        """Forget the output kept so far."""

    @declare(
        "POST",
        SESSION + "/input",
        "Send text to the target's stdin",
        tag="sessions",
        named="InputBody",
        wire={"text": "input"},
        aliases={"text": ("text", "data")},
        access="owner",
    )
    @abc.abstractmethod
    async def send_input(self, session_id: str, text: InputText, newline: bool = False) -> InputSent:
        """Text for the program's stdin (``newline`` ends it with one)."""
