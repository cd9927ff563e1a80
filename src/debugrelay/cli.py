"""The ``debugrelay`` command: ``serve`` starts the relay, ``mcp`` serves MCP on stdio, the others talk to a relay."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from debugrelay import __version__
from debugrelay.client import DEFAULT_URL, ApiError, AsyncRelayClient, RemoteService, default_token, default_url
from debugrelay.client._pretty import render
from debugrelay.config import DEFAULT_PORT, Settings, load_settings
from debugrelay.errors import InvalidRequest, RelayError
from debugrelay.models import LaunchRequest
from debugrelay.service import policy
from debugrelay.sessions import BreakpointRequest


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> str | None:
    """Refuse a non-loopback bind without a token; return the warning to print, if any."""
    if is_loopback(settings.host):
        return None
    if not settings.token:
        raise SystemExit(
            f"debugrelay: refusing to listen on {settings.host} without an API token.\n"
            "Anyone who reaches this port could run code in your debug targets. Set DEBUGRELAY_TOKEN\n"
            "(clients send 'Authorization: Bearer <token>'), or bind to 127.0.0.1."
        )
    return (
        f"WARNING: debugrelay listens on {settings.host}, not only on this machine. Every request "
        "must carry the API token; debug targets run code on request, so keep the token secret."
    )


def check_redaction(settings: Settings) -> None:
    """Custom redaction patterns that cannot be used stop the relay at start, saying why."""
    from debugrelay.redaction import PatternsError
    from debugrelay.wiring import build_redactor

    try:
        build_redactor(settings)
    except PatternsError as exc:
        raise SystemExit(f"debugrelay: {exc}") from None


def view_host(host: str) -> str:
    """Where a browser on this machine reaches the relay: loopback for a wildcard bind."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from debugrelay.api import create_app

    settings = load_settings(host=args.host, port=args.port, redis_url=args.redis_url)
    check_redaction(settings)
    warning = check_bind(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    app = create_app(settings)
    print(
        f"debugrelay {__version__} listening on http://{settings.host}:{settings.port} (API docs at /schema)\n"
        f"live view of the sessions: http://{view_host(settings.host)}:{settings.port}/ui",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", access_log=False)
    return 0


def token_of(args: argparse.Namespace) -> str | None:
    """The API token: --token-file, else --token (which every user sees in `ps`), else $DEBUGRELAY_TOKEN."""
    path = getattr(args, "token_file", None)
    if path:
        try:
            return Path(path).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise SystemExit(f"debugrelay: cannot read the token file: {exc}") from exc
    given = getattr(args, "token", None)
    if given:
        print(
            "debugrelay: warning: --token shows the token to every user of this machine (ps); "
            "use --token-file or $DEBUGRELAY_TOKEN",
            file=sys.stderr,
        )
    return given or default_token()


def mcp(args: argparse.Namespace) -> int:
    from debugrelay.mcp_server import run_stdio

    if not args.url:
        check_redaction(load_settings())
    return run_stdio(args.url, token_of(args))


# -- client commands: the HTTP API from a shell -------------------------------------------------

EXCEPTION_MODES: dict[str, list[str]] = {"uncaught": ["uncaught"], "raised": ["raised"], "none": []}
CLI_HINTS = {
    "session_not_found": "Create one with `debugrelay create` or start a program with `debugrelay launch`.",
    "NOT_PAUSED": "The program is running: `debugrelay wait` until it stops, or `debugrelay pause`.",
    "breakpoint_not_found": "`debugrelay breakpoints` lists the session's breakpoints.",
    "target_gone": "The program has ended: `debugrelay output` shows what it printed, `debugrelay launch` reruns it.",
    "invalid_request": "`debugrelay COMMAND --help` shows the command's arguments.",
    "NO_EXCEPTION": "Not stopped at an exception: `debugrelay catch --on raised` stops on every raise, then "
    "`debugrelay wait`.",
    "evaluation_error": "The expression raised in the program: fix it (`debugrelay vars` lists the names in scope).",
    "too_many_sessions": "Delete sessions you no longer need (`debugrelay sessions`, `debugrelay delete ID`).",
    "launch_failed": "Check the interpreter and the script path; `debugrelay output` shows what the program printed.",
    "invalid_state": "`debugrelay status` shows the session's state; `debugrelay launch` runs the program again.",
    "INVALID_REFERENCE": "References live only until the program resumes: list variables again (`debugrelay vars`).",
}
GENERIC_HINT = "`debugrelay --help` lists the commands; `debugrelay status` shows where the session is."


def cli_hint(exc: ApiError | RelayError) -> str:
    """The error's hint in the CLI's words: commands, never the HTTP API's paths."""
    if exc.code in CLI_HINTS and (exc.hint_is_default or not exc.hint):
        return CLI_HINTS[exc.code]
    if isinstance(exc, ApiError) and exc.hint and exc.hint_is_default:
        return GENERIC_HINT  # worded for HTTP, with no CLI wording of its own
    return exc.hint


def plain(answer: Any) -> Any:
    """A typed answer as JSON-ready data."""
    return msgspec.to_builtins(answer)


def _looks_like_id(text: str) -> bool:
    return text.startswith("sess_")


def _split_id(values: list[str], needed: int) -> tuple[str | None, list[str]]:
    """``[ID] REST...``: the first value is a session id when it looks like one and more are there."""
    if len(values) > needed and _looks_like_id(values[0]):
        return values[0], values[1:]
    return None, values


def _env_pairs(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"--env '{pair}' is not KEY=VALUE", hint="e.g. --env DEBUG=1")
        env[key] = value
    return env


async def cmd_sessions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "sessions", await s.client.list_sessions()


async def cmd_create(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.create_session(name=a.name)


async def cmd_delete(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", await s.client.delete_session(a.id)


async def cmd_status(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.status(await policy.session_or_latest(s, a.id))


async def cmd_launch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.target, 0 if a.module else 1)
    if not a.module and not rest:
        raise InvalidRequest(
            "give the script to run (or --module M)", hint="debugrelay launch [ID] SCRIPT [ARGS...] [-- ARGS...]"
        )
    script = None if a.module else policy.absolute(rest[0], a.cwd)
    sid, reused = await policy.launch_target(s, given, script, a.module)
    carried = (await s.breakpoints(sid)).breakpoints if reused else []
    args = (rest if a.module else rest[1:]) + a.program_args
    if a.breakpoints:
        await s.add_breakpoints(sid, [policy.parse_location(spec, a.cwd) for spec in a.breakpoints])
    if a.stop_on_exception is not None:  # explicit: replaces what the session had
        await s.set_exception_breakpoints(sid, EXCEPTION_MODES[a.stop_on_exception], [])
    spec = LaunchRequest(
        script=script,
        module=a.module,
        args=args,
        env=_env_pairs(a.env),
        cwd=os.path.abspath(a.cwd) if a.cwd else None,
        python=a.python,
        stop_on_entry=a.stop_on_entry,
        stop_on_exception=a.stop_on_exception or "uncaught",
    )
    await s.launch(sid, spec)
    status = plain(await s.wait(sid, a.timeout, details=a.locals) if a.timeout else await s.status(sid))
    if reused:
        status["reused"] = True
        if carried:
            status["carried_breakpoints"] = [policy.brief_breakpoint(b) for b in carried]
    unset = await policy.unset_breakpoints(s, sid)
    if unset:
        status["unverified_breakpoints"] = [
            {**policy.brief_breakpoint(b), "message": b.message} if b.message else policy.brief_breakpoint(b)
            for b in unset
        ]
    return "status", status


async def cmd_break(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.where, 0 if a.function else 1)
    sid = await policy.session_or_new(s, given)
    if a.function:
        request = BreakpointRequest(function=a.function)
    elif len(rest) == 1:
        request = policy.parse_location(rest[0])
    else:
        raise InvalidRequest(
            "give one FILE:LINE (or --function NAME)", hint="debugrelay break [ID] app/main.py:42 [--condition 'i > 3']"
        )
    request.condition, request.hit_condition, request.log_message = a.condition, a.hit, a.log
    created = (await s.add_breakpoints(sid, [request]))[0]
    return "breakpoints", {"session_id": sid, **plain(created)}


async def cmd_breakpoints(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "breakpoints", await s.client.breakpoints(await policy.session_or_latest(s, a.id))


async def cmd_unbreak(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.ids, 1)
    sid = await policy.session_or_latest(s, given)
    return "plain", [await s.client.remove_breakpoint(sid, bp) for bp in rest]


async def cmd_catch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", await s.client.set_exception_breakpoints(await policy.session_or_new(s, a.id), a.filters, a.types)


def _cli_words(status: Any) -> Any:
    """A status as the CLI says it: its next steps name commands, not the HTTP API's paths."""
    if isinstance(status, dict) and str(status.get("message", "")).endswith("; call /wait or /pause"):
        status["message"] = status["message"].replace("call /wait or /pause", "`debugrelay wait` or `debugrelay pause`")
    return status


async def cmd_continue(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    answer = await s.client.resume(sid, "continue", thread_id=a.thread, timeout=a.timeout, locals=a.locals)
    return "status", _cli_words(answer)


async def cmd_step(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    answer = await s.client.resume(sid, f"step-{a.kind}", thread_id=a.thread, timeout=a.timeout, locals=a.locals)
    return "status", _cli_words(answer)


async def cmd_pause(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.pause(await policy.session_or_latest(s, a.id))


async def cmd_wait(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "status", await s.client.wait(sid, a.timeout, a.autopsy, locals=a.locals)


async def cmd_terminate(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", await s.client.terminate(await policy.session_or_latest(s, a.id))


async def cmd_stack(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "stack", await s.client.stacktrace(sid, a.thread, a.start, a.max, library=a.library)


async def cmd_threads(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "threads", await s.client.threads(await policy.session_or_latest(s, a.id))


async def cmd_vars(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.ref is not None:
        return "variables", await s.client.variables(sid, a.ref, a.start, a.count)
    if a.expand or a.scope:
        return "variables", await s.client.frame_variables_by_scope(
            sid,
            scope=a.scope or "all",
            frame_index=a.frame,
            thread_id=a.thread,
            expand=a.expand,
            start=a.start,
            count=a.count,
        )
    return "variables", await s.client.frame_variables(sid, a.frame, a.thread, a.start, a.count)


async def cmd_eval(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """One expression answers its result; several answer one result (or error) each, in order."""
    given, rest = _split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    if len(rest) == 1:
        return "evaluation", await s.client.evaluate(
            sid, rest[0], frame_index=a.frame, thread_id=a.thread, format=a.format
        )
    results = []
    for expression in rest:
        try:
            found = await s.client.evaluate(sid, expression, frame_index=a.frame, thread_id=a.thread, format=a.format)
        except (ApiError, RelayError) as exc:
            results.append({"expression": expression, "error": {**exc.to_dict(), "hint": cli_hint(exc)}})
        else:
            results.append({"expression": expression, **found})
    return "evaluations", {"results": results}


async def cmd_output(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "output", await s.client.output(await policy.session_or_latest(s, a.id), a.since, a.limit, a.stream)


async def cmd_autopsy(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "autopsy", await s.client.autopsy(
        await policy.session_or_latest(s, a.id),
        max_frames=a.max_frames,
        include_variables_for_frames=a.frames_with_variables,
    )


async def cmd_redactions(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "redactions", await s.client.redactions(await policy.session_or_latest(s, a.id))


async def cmd_snapshot(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.show:
        return "snapshot", await s.client.snapshot(sid, a.show)
    bounds = {"frames": a.frames, "depth": a.depth, "items": a.items, "chars": a.chars, "max_bytes": a.max_bytes}
    return "snapshot", await s.client.take_snapshot(sid, **bounds)


async def cmd_snapshots(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "snapshots", await s.client.snapshots(await policy.session_or_latest(s, a.id))


async def cmd_analyze(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    return "analysis", await s.client.analyze(sid, snapshot_ids=a.snapshot or None, take=a.take, interval=a.interval)


async def cmd_capture(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.words, 1)
    sid = await policy.session_or_latest(s, given)
    where = policy.parse_location(rest[0], os.getcwd())
    body = {
        "file": where.file,
        "line": where.line,
        "expressions": rest[1:] or None,
        "condition": a.condition,
        "hit_limit": a.hit_limit,
        "expires_in_seconds": a.expires,
    }
    return "capture", await s.client.add_capture(sid, **body)


async def cmd_captures(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    sid = await policy.session_or_latest(s, a.id)
    if a.rows:
        return "capture", await s.client.capture_table(sid, a.rows, start=a.start, count=a.count)
    return "captures", await s.client.captures(sid)


async def cmd_evidence(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    return "evidence", await s.client.evidence(a.evidence_id, offset=a.offset, limit=a.limit, grep=a.grep)


def run_client(args: argparse.Namespace) -> int:
    """Run one client command: compact JSON (or --pretty text) on stdout; the error JSON on stderr."""
    url = getattr(args, "url", None) or default_url()
    token = token_of(args)

    async def run() -> tuple[str, Any]:
        service = RemoteService(AsyncRelayClient(url, token))
        try:
            result: tuple[str, Any] = await args.handler(service, args)
            return result
        finally:
            await service.close()

    try:
        kind, data = asyncio.run(run())
    except (ApiError, RelayError) as exc:
        error = exc.to_dict()
        error["hint"] = cli_hint(exc)
        print(json.dumps({"error": error}, separators=(",", ":"), ensure_ascii=False), file=sys.stderr)
        return 1
    if getattr(args, "pretty", False):
        print(render(kind, data))
    else:
        print(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    return 0


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--url", default=argparse.SUPPRESS, help=f"relay URL (default: $DEBUGRELAY_URL or {DEFAULT_URL})"
    )
    common.add_argument(
        "--token-file", default=argparse.SUPPRESS, help="file holding the API token (default: $DEBUGRELAY_TOKEN)"
    )
    common.add_argument("--token", default=argparse.SUPPRESS, help="API token (visible in ps: prefer --token-file)")
    common.add_argument(
        "--pretty",
        action="store_true",
        default=argparse.SUPPRESS,
        help="readable tables and text instead of compact JSON",
    )
    return common


SID_HELP = "session id (default: the most recent session)"
Adder = Callable[..., argparse.ArgumentParser]


def _client_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    def add(name: str, handler: Any, help: str, with_id: bool = True) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=help, parents=[common], description=help)
        p.set_defaults(func=run_client, handler=handler)
        if with_id:
            p.add_argument("id", nargs="?", default=None, metavar="ID", help=SID_HELP)
        return p

    _session_commands(add)
    _breakpoint_commands(add)
    _control_commands(add)
    _inspection_commands(add)
    _evidence_commands(add)


def _evidence_commands(add: Adder) -> None:
    p = add("snapshot", cmd_snapshot, "snapshot the whole program (a running one is paused briefly)")
    p.add_argument("--show", default=None, metavar="SNAPSHOT_ID", help="show a snapshot whole ('post_mortem')")
    for name, help_text in (
        ("frames", "frames per thread (20)"),
        ("depth", "nesting of a value (5)"),
        ("items", "items per collection (25)"),
        ("chars", "characters per value (256)"),
        ("max-bytes", "bytes of locals in all (32768)"),
    ):
        p.add_argument(f"--{name}", type=int, default=None, help=help_text)
    add("snapshots", cmd_snapshots, "the session's snapshots, in brief")
    p = add("analyze", cmd_analyze, "known patterns (deadlock, starvation, leak, ...) over one or two snapshots")
    p.add_argument("--snapshot", action="append", default=[], metavar="SNAPSHOT_ID", help="a snapshot (twice: two)")
    p.add_argument("--take", type=int, default=0, help="take 1 or 2 new snapshots first")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between the two (1)")
    p = add(
        "capture",
        cmd_capture,
        "record values at a line on each hit, without pausing: [ID] FILE:LINE [EXPR ...]",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] FILE:LINE [EXPR ...]")
    p.add_argument("--condition", default=None)
    p.add_argument("--hit-limit", type=int, default=None, help="rows to keep (100)")
    p.add_argument("--expires", type=float, default=None, metavar="S", help="seconds until it is removed (3600)")
    p = add("captures", cmd_captures, "the session's capture points, or one's rows with --rows CAPTURE_ID")
    p.add_argument("--rows", default=None, metavar="CAPTURE_ID")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=100)
    p = add("evidence", cmd_evidence, "an evidence item's lines, paged or searched", with_id=False)
    p.add_argument("evidence_id", metavar="EVIDENCE_ID")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--grep", default=None, metavar="REGEX")


def _session_commands(add: Adder) -> None:
    add("sessions", cmd_sessions, "list sessions", with_id=False)
    p = add("create", cmd_create, "create a session", with_id=False)
    p.add_argument("--name", default=None)
    p = add("delete", cmd_delete, "end a session's program and forget the session", with_id=False)
    p.add_argument("id", metavar="ID")
    add("status", cmd_status, "where a session is: paused where and why, or its exit code")

    p = add(
        "launch", cmd_launch, "run a script (or --module) under the debugger and wait for its first stop", with_id=False
    )
    p.add_argument(
        "target",
        nargs="*",
        metavar="[ID] SCRIPT [ARGS]",
        help="optional session id, the script, its arguments (put '--' before arguments that start with '-')",
    )
    p.add_argument("--module", "-m", default=None, help="run a module like python -m (then no SCRIPT)")
    p.add_argument("--cwd", default=None, help="working directory (default: the script's folder)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable (repeatable)")
    p.add_argument("--python", default=None, help="interpreter (default: the relay's)")
    p.add_argument(
        "--break",
        dest="breakpoints",
        action="append",
        default=[],
        metavar="FILE:LINE",
        help="set a breakpoint first (repeatable)",
    )
    p.add_argument("--stop-on-entry", action="store_true", help="pause on the first line")
    p.add_argument(
        "--stop-on-exception",
        default=None,
        choices=["uncaught", "raised", "none"],
        help="which exceptions pause (a new session: uncaught; a reused one keeps its setting)",
    )
    _stop_options(p, 30.0, "seconds to wait for the first stop (default 30; 0 = answer at once)")


def _breakpoint_commands(add: Adder) -> None:
    p = add(
        "break", cmd_break, "set a breakpoint: [ID] FILE:LINE, optionally conditional/counted/logpoint", with_id=False
    )
    p.add_argument("where", nargs="*", metavar="[ID] FILE:LINE")
    p.add_argument("--function", default=None, help="break on entry to this function instead")
    p.add_argument("--condition", default=None, help="pause only when this Python expression is true")
    p.add_argument("--hit", default=None, help="pause on hit N: '5', '>= 5', '% 5'")
    p.add_argument("--log", default=None, help="logpoint: print this ({expr} evaluated) instead of pausing")
    add("breakpoints", cmd_breakpoints, "list breakpoints with verification and hit counts")
    p = add("unbreak", cmd_unbreak, "remove breakpoints: [ID] BP_ID...", with_id=False)
    p.add_argument("ids", nargs="+", metavar="[ID] BP_ID")
    p = add("catch", cmd_catch, "choose which exceptions pause: raised, uncaught, userUnhandled (none: no filter)")
    p.add_argument("--on", dest="filters", action="append", default=[], choices=["raised", "uncaught", "userUnhandled"])
    p.add_argument("--type", dest="types", action="append", default=[], metavar="EXC", help="only this class")


def _stop_options(p: argparse.ArgumentParser, default: float, help: str) -> None:
    """--timeout (--wait is the same) and --no-locals, for every command that answers with a stop."""
    p.add_argument("--timeout", "--wait", dest="timeout", type=float, default=default, metavar="S", help=help)
    p.add_argument(
        "--no-locals",
        dest="locals",
        action="store_false",
        help="answer a stop without its source line, locals and watch values",
    )


def _control_commands(add: Adder) -> None:
    p = add("continue", cmd_continue, "resume and wait for the next stop or the end")
    _stop_options(p, 30.0, "seconds to wait (default 30; 0 = answer at once)")
    p.add_argument("--thread", type=int, default=None, help="resume only this thread")
    p = add("step", cmd_step, "step over|into|out and answer with the new location", with_id=False)
    p.add_argument("kind", choices=["over", "into", "out"])
    p.add_argument("id", nargs="?", default=None, metavar="ID", help=SID_HELP)
    _stop_options(p, 10.0, "seconds to wait (default 10)")
    p.add_argument("--thread", type=int, default=None)
    add("pause", cmd_pause, "pause the running program")
    p = add("wait", cmd_wait, "wait until the program pauses or ends")
    _stop_options(p, 30.0, "seconds (default 30)")
    p.add_argument("--autopsy", action="store_true", help="include the exception autopsy when it stops at one")
    add("terminate", cmd_terminate, "kill the program; the session stays")


def _inspection_commands(add: Adder) -> None:
    p = add("stack", cmd_stack, "call stack of the paused thread")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--max", type=int, default=20)
    p.add_argument("--library", action="store_true", help="list library frames one by one (default: folded)")
    add("threads", cmd_threads, "threads of the program")
    p = add("vars", cmd_vars, "variables of a frame, or the children of --ref / --expand")
    p.add_argument("--frame", "--frame-index", dest="frame", type=int, default=0, help="frame_index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--ref", type=int, default=None, help="expand this variable reference")
    p.add_argument("--expand", default=None, help="expand this variable path, e.g. 'order.items[0]'")
    p.add_argument("--scope", default=None, choices=["all", "locals", "arguments", "globals"])
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=None)
    p = add(
        "eval",
        cmd_eval,
        "evaluate Python expressions in the paused frame: [ID] EXPR... (quote each one: 'a + b' 'len(xs)')",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] EXPR")
    p.add_argument("--frame", "--frame-index", dest="frame", type=int, default=None, help="frame_index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--format", default=None, choices=["hex", "binary"])
    p = add("output", cmd_output, "what the program printed, from a cursor")
    p.add_argument("--since", default=None, help="cursor from a previous answer")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--stream", default=None, choices=["stdout", "stderr"])
    p = add("autopsy", cmd_autopsy, "the whole context of the exception the program is paused at")
    p.add_argument("--max-frames", type=int, default=10)
    p.add_argument("--frames-with-variables", type=int, default=1)
    add("redactions", cmd_redactions, "what was hidden from this session's answers: placeholder, rule, where, when")


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="debugrelay",
        parents=[common],
        description="Debug Python programs through stateless calls. Client commands print compact JSON "
        "(--pretty: tables); errors go to stderr as JSON with a non-zero exit code.",
    )
    parser.add_argument("--version", action="version", version=f"debugrelay {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="start the relay (HTTP API)")
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1; others need DEBUGRELAY_TOKEN)")
    p.add_argument("--port", type=int, default=None, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--redis-url", default=None, help="keep state in Redis (default: in memory)")
    p.set_defaults(func=serve)
    p = sub.add_parser("mcp", help="MCP server on stdio (embeds the relay, or forwards to one with --url)")
    p.add_argument("--url", default=None, help="forward every tool to the relay at URL (default: run embedded)")
    p.add_argument("--token-file", default=None, help="file holding that relay's API token (or $DEBUGRELAY_TOKEN)")
    p.add_argument("--token", default=None, help="API token of that relay (visible in ps: prefer --token-file)")
    p.set_defaults(func=mcp)
    _client_parsers(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args: list[str] = []
    if argv[:1] == ["launch"] and "--" in argv:  # everything after -- goes to the program, untouched
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    args.program_args = program_args
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
