"""The ``debugrelay`` command: ``serve`` starts the relay, ``mcp`` serves MCP on stdio, the others talk to a relay."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from debugrelay import __version__
from debugrelay.client import DEFAULT_URL, ApiError, RelayClient, default_token, default_url
from debugrelay.client._pretty import render
from debugrelay.config import DEFAULT_PORT, Settings, load_settings


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


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from debugrelay.api import create_app

    settings = load_settings(host=args.host, port=args.port, redis_url=args.redis_url)
    warning = check_bind(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    app = create_app(settings)
    print(
        f"debugrelay {__version__} listening on http://{settings.host}:{settings.port} (API docs at /schema)",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", access_log=False)
    return 0


def mcp(args: argparse.Namespace) -> int:
    from debugrelay.mcp_server import run_stdio

    return run_stdio(args.url, args.token)


# -- client commands: the HTTP API from a shell -------------------------------------------------

EXCEPTION_MODES = {"uncaught": ["uncaught"], "raised": ["raised"], "none": []}


def _looks_like_id(text: str) -> bool:
    return text.startswith("sess_")


def _split_id(values: list[str], needed: int) -> tuple[str | None, list[str]]:
    """``[ID] REST...``: the first value is a session id when it looks like one and more are there."""
    if len(values) > needed and _looks_like_id(values[0]):
        return values[0], values[1:]
    return None, values


def _latest(client: RelayClient) -> dict[str, Any] | None:
    found: list[dict[str, Any]] = client.list_sessions()["sessions"]
    return found[-1] if found else None


def _session(client: RelayClient, given: str | None) -> str:
    """The given session, else the most recent one."""
    if given:
        return given
    latest = _latest(client)
    if latest is None:
        raise ApiError(
            404,
            "session_not_found",
            "there is no session yet",
            hint="Create one with `debugrelay create` or start a program with `debugrelay launch`.",
        )
    return str(latest["session_id"])


def _session_or_new(client: RelayClient, given: str | None) -> str:
    """The given session, else the most recent one, else a new one."""
    if given:
        return given
    latest = _latest(client)
    return str(latest["session_id"] if latest else client.create_session()["session_id"])


def _launch_session(client: RelayClient, given: str | None, script: str | None, module: str | None) -> str:
    """Like ``debugrelay mcp``'s debug_launch: the most recent session when it waits for a launch or ran the
    same program (a run still going is ended: launching again restarts it), else a new one."""
    if given:
        return given
    latest = _latest(client)
    if latest is not None:
        sid = str(latest["session_id"])
        if latest.get("status") == "created":
            return sid
        launch = client.get_session(sid).get("launch") or {}
        if (module and launch.get("module") == module) or (script and launch.get("script") == script):
            if latest.get("status") in ("launching", "running", "paused"):
                client.terminate(sid)
            return sid
    return str(client.create_session()["session_id"])


def _location(text: str) -> dict[str, Any]:
    path, sep, line = text.rpartition(":")
    if not sep or not path or not line.isdigit():
        raise ApiError(400, "invalid_request", f"'{text}' is not FILE:LINE", hint="e.g. app/main.py:42")
    return {"file": os.path.abspath(path), "line": int(line)}


def _env_pairs(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ApiError(400, "invalid_request", f"--env '{pair}' is not KEY=VALUE")
        env[key] = value
    return env


def cmd_sessions(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "sessions", c.list_sessions()


def cmd_create(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.create_session(name=a.name)


def cmd_delete(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", c.delete_session(a.id)


def cmd_status(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.status(_session(c, a.id))


def cmd_launch(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.target, 0 if a.module else 1)
    if not a.module and not rest:
        raise ApiError(
            400,
            "invalid_request",
            "give the script to run (or --module M)",
            hint="debugrelay launch [ID] SCRIPT [ARGS...] [-- ARGS...]",
        )
    script = None if a.module else os.path.abspath(rest[0])
    sid = _launch_session(c, given, script, a.module)
    args = (rest if a.module else rest[1:]) + a.program_args
    if a.breakpoints:
        c.add_breakpoints(sid, [_location(spec) for spec in a.breakpoints])
    if a.stop_on_exception is not None:  # explicit: replaces what the session had
        c.set_exception_breakpoints(sid, EXCEPTION_MODES[a.stop_on_exception])
    c.launch(
        sid,
        {
            "script": script,
            "module": a.module,
            "args": args,
            "env": _env_pairs(a.env),
            "cwd": os.path.abspath(a.cwd) if a.cwd else None,
            "python": a.python,
            "stop_on_entry": a.stop_on_entry,
            "stop_on_exception": a.stop_on_exception or "uncaught",
        },
    )
    return "status", c.wait(sid, a.wait) if a.wait else c.status(sid)


def cmd_break(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.where, 0 if a.function else 1)
    sid = _session_or_new(c, given)
    if a.function:
        request: dict[str, Any] = {"function": a.function}
    elif len(rest) == 1:
        request = _location(rest[0])
    else:
        raise ApiError(
            400,
            "invalid_request",
            "give one FILE:LINE (or --function NAME)",
            hint="debugrelay break [ID] app/main.py:42 [--condition 'i > 3']",
        )
    request.update(
        {k: v for k, v in (("condition", a.condition), ("hit_condition", a.hit), ("log_message", a.log)) if v}
    )
    created = c.add_breakpoints(sid, [request])["breakpoints"][0]
    return "breakpoints", {"session_id": sid, **created}


def cmd_breakpoints(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "breakpoints", c.breakpoints(_session(c, a.id))


def cmd_unbreak(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.ids, 1)
    sid = _session(c, given)
    return "plain", [c.remove_breakpoint(sid, bp) for bp in rest]


def cmd_catch(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "plain", c.set_exception_breakpoints(_session_or_new(c, a.id), a.filters, a.types)


def cmd_continue(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.resume(_session(c, a.id), "continue", thread_id=a.thread, wait=a.wait)


def cmd_step(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.resume(_session(c, a.id), f"step-{a.kind}", thread_id=a.thread, wait=a.wait)


def cmd_pause(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.pause(_session(c, a.id))


def cmd_wait(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.wait(_session(c, a.id), a.timeout, a.autopsy)


def cmd_terminate(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "status", c.terminate(_session(c, a.id))


def cmd_stack(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "stack", c.stacktrace(_session(c, a.id), a.thread, a.start, a.max)


def cmd_threads(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "threads", c.threads(_session(c, a.id))


def cmd_vars(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    sid = _session(c, a.id)
    if a.ref is not None:
        return "variables", c.variables(sid, a.ref, a.start, a.count)
    if a.expand or a.scope:
        return "variables", c.frame_variables_by_scope(
            sid,
            scope=a.scope or "all",
            frame_index=a.frame,
            thread_id=a.thread,
            expand=a.expand,
            start=a.start,
            count=a.count,
        )
    return "variables", c.frame_variables(sid, a.frame, a.thread, a.start, a.count)


def cmd_eval(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = _split_id(a.words, 1)
    sid = _session(c, given)
    return "evaluation", c.evaluate(sid, " ".join(rest), frame_index=a.frame, thread_id=a.thread, format=a.format)


def cmd_output(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "output", c.output(_session(c, a.id), a.since, a.limit, a.stream)


def cmd_autopsy(c: RelayClient, a: argparse.Namespace) -> tuple[str, Any]:
    return "autopsy", c.autopsy(
        _session(c, a.id), max_frames=a.max_frames, include_variables_for_frames=a.frames_with_variables
    )


def run_client(args: argparse.Namespace) -> int:
    """Run one client command: compact JSON (or --pretty text) on stdout; the error JSON on stderr."""
    url = getattr(args, "url", None) or default_url()
    token = getattr(args, "token", None) or default_token()
    try:
        with RelayClient(url, token) as client:
            kind, data = args.handler(client, args)
    except ApiError as exc:
        print(json.dumps({"error": exc.to_dict()}, separators=(",", ":"), ensure_ascii=False), file=sys.stderr)
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
    common.add_argument("--token", default=argparse.SUPPRESS, help="API token (default: $DEBUGRELAY_TOKEN)")
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
    p.add_argument(
        "--wait",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds to wait for the first stop (default 30; 0 = answer at once)",
    )


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


def _control_commands(add: Adder) -> None:
    p = add("continue", cmd_continue, "resume and wait for the next stop or the end")
    p.add_argument("--wait", type=float, default=30.0, metavar="S", help="seconds to wait (default 30; 0 = no)")
    p.add_argument("--thread", type=int, default=None, help="resume only this thread")
    p = add("step", cmd_step, "step over|into|out and answer with the new location", with_id=False)
    p.add_argument("kind", choices=["over", "into", "out"])
    p.add_argument("id", nargs="?", default=None, metavar="ID", help=SID_HELP)
    p.add_argument("--wait", type=float, default=10.0, metavar="S", help="seconds to wait (default 10)")
    p.add_argument("--thread", type=int, default=None)
    add("pause", cmd_pause, "pause the running program")
    p = add("wait", cmd_wait, "wait until the program pauses or ends")
    p.add_argument("--timeout", type=float, default=30.0, metavar="S", help="seconds (default 30)")
    p.add_argument("--autopsy", action="store_true", help="include the exception autopsy when it stops at one")
    add("terminate", cmd_terminate, "kill the program; the session stays")


def _inspection_commands(add: Adder) -> None:
    p = add("stack", cmd_stack, "call stack of the paused thread")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--max", type=int, default=20)
    add("threads", cmd_threads, "threads of the program")
    p = add("vars", cmd_vars, "variables of a frame, or the children of --ref / --expand")
    p.add_argument("--frame", type=int, default=0, help="frame index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--ref", type=int, default=None, help="expand this variable reference")
    p.add_argument("--expand", default=None, help="expand this variable path, e.g. 'order.items[0]'")
    p.add_argument("--scope", default=None, choices=["all", "locals", "arguments", "globals"])
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=None)
    p = add("eval", cmd_eval, "evaluate a Python expression in the paused frame: [ID] EXPR", with_id=False)
    p.add_argument("words", nargs="+", metavar="[ID] EXPR")
    p.add_argument("--frame", type=int, default=None, help="frame index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--format", default=None, choices=["hex", "binary"])
    p = add("output", cmd_output, "what the program printed, from a cursor")
    p.add_argument("--since", default=None, help="cursor from a previous answer")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--stream", default=None, choices=["stdout", "stderr"])
    p = add("autopsy", cmd_autopsy, "the whole context of the exception the program is paused at")
    p.add_argument("--max-frames", type=int, default=10)
    p.add_argument("--frames-with-variables", type=int, default=1)


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
    p.add_argument("--token", default=None, help="API token of that relay (default: $DEBUGRELAY_TOKEN)")
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
