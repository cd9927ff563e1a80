"""The ``debugrelay`` command line: every command's parser, its flags and help, and the entry point."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from debugrelay import __version__
from debugrelay.config import DEFAULT_PORT, DEFAULT_URL


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


def _run_client(args: argparse.Namespace) -> int:
    """Run a client command; its code (the relay's client, the models) loads only for the command that runs."""
    from . import _client, _commands, _launch

    args.handler = getattr(_launch if args.handler == "cmd_launch" else _commands, args.handler)
    return _client.run_client(args)


def _serve(args: argparse.Namespace) -> int:
    from ._server import serve

    return serve(args)


def _mcp(args: argparse.Namespace) -> int:
    from ._server import mcp

    return mcp(args)


def _client_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    def add(name: str, handler: str, help: str, with_id: bool = True) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = sub.add_parser(name, help=help, parents=[common], description=help)
        p.set_defaults(func=_run_client, handler=handler)
        if with_id:
            p.add_argument("id", nargs="?", default=None, metavar="ID", help=SID_HELP)
        return p

    _session_commands(add)
    _breakpoint_commands(add)
    _control_commands(add)
    _inspection_commands(add)
    _evidence_commands(add)
    _trace_commands(add)
    _action_command(add)


def _session_commands(add: Adder) -> None:
    add("sessions", "cmd_sessions", "list sessions", with_id=False)
    p = add("create", "cmd_create", "create a session", with_id=False)
    p.add_argument("--name", default=None)
    add("delete", "cmd_delete", "end a session's program and forget the session")
    add("status", "cmd_status", "where a session is: paused where and why, or its exit code")
    p = add(
        "share",
        "cmd_share",
        "let credentials (names, or role:agent) see and drive a session, not run code in it: [ID] NAME...",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] NAME")
    p.add_argument("--withdraw", action="store_true", help="take the names off the session's shares")
    p = add("audit", "cmd_audit", "who changed or evaluated what, newest first (admins)", with_id=False)
    p.add_argument("--session", default=None, metavar="ID", help="one session's entries")
    p.add_argument("--who", default=None, metavar="NAME", help="one credential's entries")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=50)

    p = add(
        "launch",
        "cmd_launch",
        "run a script (or --module) under the debugger and wait for its first stop",
        with_id=False,
    )
    p.add_argument(
        "target",
        nargs="*",
        metavar="[ID] SCRIPT [ARGS]",
        help="optional session id, the script, its arguments (put '--' before arguments that start with '-')",
    )
    p.add_argument("--module", "-m", default=None, help="run a module like python -m (then no SCRIPT)")
    p.add_argument(
        "--test", default=None, metavar="NODE", help="one test, a pytest node id (pytest unless --module); no SCRIPT"
    )
    p.add_argument(
        "--cwd", default=None, help="working directory (default: the script's folder; for a module or test, this one)"
    )
    p.add_argument(
        "--launcher",
        default=None,
        choices=["local", "docker", "kubernetes"],
        help="where it runs (default: the relay's)",
    )
    p.add_argument("--image", default=None, help="a container's image (docker, kubernetes)")
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable (repeatable)")
    p.add_argument("--python", default=None, help="interpreter (default: the project's .venv/venv, else the relay's)")
    p.add_argument(
        "--break",
        dest="breakpoints",
        action="append",
        default=[],
        metavar="FILE:LINE",
        help="set a breakpoint first (repeatable)",
    )
    p.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="FILE:FUNC",
        help="trace a function's calls (repeatable): the answer names those that finished",
    )
    p.add_argument("--stop-on-entry", action="store_true", help="pause on the first line")
    p.add_argument(
        "--ready",
        type=int,
        default=None,
        metavar="PORT",
        help="a service: answer once the program listens on PORT (requests go there by default; published)",
    )
    p.add_argument(
        "--publish",
        type=int,
        action="append",
        default=[],
        metavar="PORT",
        help="reach the service's PORT at a URL on this machine (a container's too; repeatable)",
    )
    p.add_argument(
        "--children",
        action="store_true",
        help="debug the Python processes the program starts too (pools, subprocess): each stops at breakpoints",
    )
    p.add_argument(
        "--stop-on-exception",
        default=None,
        choices=["uncaught", "raised", "none"],
        help="which exceptions pause this run (default: uncaught, or the session's own exception breakpoints)",
    )
    _stop_options(p, 30.0, "seconds to wait for the first stop (default 30; 0 = answer at once)")


def _action_command(add: Adder) -> None:
    p = add(
        "act",
        "cmd_act",
        "any agent action by its MCP tool's name, in one request: act NAME [KEY=VALUE...] (a value is JSON, "
        "else text; docs/agents.md lists the actions and their arguments)",
        with_id=False,
    )
    p.add_argument("action", metavar="NAME")
    p.add_argument("pairs", nargs="*", metavar="KEY=VALUE")


def _breakpoint_commands(add: Adder) -> None:
    p = add(
        "break", "cmd_break", "set a breakpoint: [ID] FILE:LINE, optionally conditional/counted/logpoint", with_id=False
    )
    p.add_argument("where", nargs="*", metavar="[ID] FILE:LINE")
    p.add_argument("--function", default=None, help="break on entry to this function instead")
    p.add_argument("--condition", default=None, help="pause only when this Python expression is true")
    p.add_argument("--hit", default=None, help="pause on hit N: '5', '>= 5', '%% 5'")
    p.add_argument("--log", default=None, help="logpoint: print this ({expr} evaluated) instead of pausing")
    add("breakpoints", "cmd_breakpoints", "list breakpoints with verification and hit counts")
    p = add("unbreak", "cmd_unbreak", "remove breakpoints: [ID] BP_ID... (or --all)", with_id=False)
    p.add_argument("ids", nargs="*", metavar="[ID] BP_ID")
    p.add_argument("--all", action="store_true", help="remove every breakpoint (capture points stay)")
    p = add("catch", "cmd_catch", "choose which exceptions pause: raised, uncaught, userUnhandled (none: no filter)")
    p.add_argument("--on", dest="filters", action="append", default=[], choices=["raised", "uncaught", "userUnhandled"])
    p.add_argument("--type", dest="types", action="append", default=[], metavar="EXC", help="only this class")


def _stop_options(p: argparse.ArgumentParser, default: float, help: str) -> None:
    """--timeout (--wait is the same) and --no-locals, for every command that answers with a stop."""
    p.add_argument("--timeout", "--wait", dest="timeout", type=float, default=default, metavar="S", help=help)
    p.add_argument(
        "--no-locals",
        dest="locals",
        action="store_false",
        help="answer a stop without its locals and watch values (its source line stays)",
    )


def _control_commands(add: Adder) -> None:
    p = add("continue", "cmd_continue", "resume and wait for the next stop or the end")
    _stop_options(p, 30.0, "seconds to wait (default 30; 0 = answer at once)")
    p.add_argument("--thread", type=int, default=None, help="resume only this thread")
    p.add_argument("--all", action="store_true", help="resume every paused process of the program")
    p = add("step", "cmd_step", "step over|into|out and answer with the new location", with_id=False)
    p.add_argument("kind", choices=["over", "into", "out"])
    p.add_argument("id", nargs="?", default=None, metavar="ID", help=SID_HELP)
    _stop_options(p, 10.0, "seconds to wait (default 10)")
    p.add_argument("--thread", type=int, default=None)
    p = add("pause", "cmd_pause", "pause the running program")
    p.add_argument(
        "--no-locals",
        dest="locals",
        action="store_false",
        help="answer the stop without its source line, locals and watch values",
    )
    p = add("wait", "cmd_wait", "wait until the program pauses or ends")
    _stop_options(p, 30.0, "seconds (default 30)")
    p.add_argument("--autopsy", action="store_true", help="include the exception autopsy when it stops at one")
    add("terminate", "cmd_terminate", "kill the program; the session stays")


def _inspection_commands(add: Adder) -> None:
    p = add("stack", "cmd_stack", "call stack of the paused thread")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--max", type=int, default=20)
    p.add_argument("--library", action="store_true", help="list library frames one by one (default: folded)")
    add("threads", "cmd_threads", "threads of the program")
    p = add(
        "request",
        "cmd_request",
        "send an HTTP request to the program (a service): [ID] [METHOD] PATH; the response or the stop it caused",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] [METHOD] PATH")
    p.add_argument("--port", type=int, default=None, help="the service's port (default: the launch's --ready port)")
    p.add_argument("--header", "-H", action="append", default=[], metavar="'NAME: VALUE'", help="repeatable")
    p.add_argument("--data", "-d", default=None, help="the request body")
    p.add_argument("--timeout", type=float, default=30.0, metavar="S", help="wait this long for the response or a stop")
    p = add("processes", "cmd_processes", "processes of the program: its own and the Python ones it started")
    p.add_argument("--show", type=int, default=None, metavar="PID", help="show this paused process's stop")
    p = add("vars", "cmd_vars", "variables of a frame, or the children of --ref / --expand")
    p.add_argument("--frame", "--frame-index", dest="frame", type=int, default=0, help="frame_index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--ref", type=int, default=None, help="expand this variable reference")
    p.add_argument("--expand", default=None, help="expand this variable path, e.g. 'order.items[0]'")
    p.add_argument("--scope", default=None, choices=["all", "locals", "arguments", "globals"])
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=None)
    p = add(
        "eval",
        "cmd_eval",
        "evaluate Python expressions in the paused frame: [ID] EXPR... (quote each one: 'a + b' 'len(xs)')",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] EXPR")
    p.add_argument("--frame", "--frame-index", dest="frame", type=int, default=None, help="frame_index (0 = top)")
    p.add_argument("--thread", type=int, default=None)
    p.add_argument("--format", default=None, choices=["hex", "binary"])
    p = add("output", "cmd_output", "what the program printed, from a cursor")
    p.add_argument("--since", default=None, help="cursor from a previous answer")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--stream", default=None, choices=["stdout", "stderr"])
    p = add("autopsy", "cmd_autopsy", "the whole context of the exception the program is paused at")
    p.add_argument("--max-frames", type=int, default=10)
    p.add_argument("--frames-with-variables", type=int, default=1)
    add("redactions", "cmd_redactions", "what was hidden from this session's answers: placeholder, rule, where, when")


def _evidence_commands(add: Adder) -> None:
    p = add("snapshot", "cmd_snapshot", "snapshot the whole program (a running one is paused briefly)")
    p.add_argument("--show", default=None, metavar="SNAPSHOT_ID", help="show a snapshot whole ('post_mortem')")
    for name, help_text in (
        ("frames", "frames per thread (20)"),
        ("depth", "nesting of a value (5)"),
        ("items", "items per collection (25)"),
        ("chars", "characters per value (256)"),
        ("max-bytes", "bytes of locals in all (32768)"),
    ):
        p.add_argument(f"--{name}", type=int, default=None, help=help_text)
    add("snapshots", "cmd_snapshots", "the session's snapshots, in brief")
    p = add("analyze", "cmd_analyze", "known patterns (deadlock, starvation, leak, ...) over one or two snapshots")
    p.add_argument("--snapshot", action="append", default=[], metavar="SNAPSHOT_ID", help="a snapshot (twice: two)")
    p.add_argument("--take", type=int, default=0, help="take 1 or 2 new snapshots first")
    p.add_argument("--interval", type=float, default=1.0, metavar="S", help="seconds between the two (1)")
    p = add(
        "capture",
        "cmd_capture",
        "record values at a line on each hit, without pausing: [ID] FILE:LINE [EXPR ...]",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] FILE:LINE [EXPR ...]")
    p.add_argument("--condition", default=None)
    p.add_argument("--hit-limit", type=int, default=None, help="rows to keep (100)")
    p.add_argument("--expires", type=float, default=None, metavar="S", help="seconds until it is removed (3600)")
    p = add("captures", "cmd_captures", "the session's capture points, or one's rows with --rows CAPTURE_ID")
    p.add_argument("--rows", default=None, metavar="CAPTURE_ID")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=100)
    p = add("evidence", "cmd_evidence", "an evidence item's lines, paged or searched", with_id=False)
    p.add_argument("evidence_id", metavar="EVIDENCE_ID")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=200)
    p.add_argument(
        "--grep", default=None, metavar="REGEX", help="lines matching an RE2 regex (no backreferences or lookarounds)"
    )


def _trace_commands(add: Adder) -> None:
    p = add(
        "trace",
        "cmd_trace",
        "trace a function: every call's arguments, each line's changes, its result: [ID] FILE:FUNC "
        "(Class.method, outer.inner, or package.module:func); before a launch or while it runs",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] FILE:FUNC")
    p.add_argument("--keep", type=int, default=1000, help="calls kept, the newest (1000)")
    p.add_argument("--callees", action="store_true", help="record its direct callees in your code as calls too")
    p.add_argument(
        "--reprs",
        action="store_true",
        help="show your objects by their own __repr__ (runs your code; else: attributes)",
    )
    p.add_argument("--remove", action="store_true", help="stop tracing: [ID] TRACE_ID")
    add("traces", "cmd_traces", "the session's traced functions")
    p = add("calls", "cmd_calls", "calls of traced functions, oldest first: [ID] [FUNC]", with_id=False)
    p.add_argument("words", nargs="*", metavar="[ID] [FUNC]")
    p.add_argument("--outcome", choices=["returned", "raised", "running"], default=None)
    p.add_argument("--match", default=None, metavar="TEXT", help="a text in an argument's or the result's repr")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int, default=20)
    p = add(
        "call",
        "cmd_call",
        "one call's whole run: each line with what it changed, loops folded: [ID] CALL_ID",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] CALL_ID")
    p = add(
        "origin",
        "cmd_origin",
        "where a value came from: the traced calls' writes of NAME (total, basket.total, d['k']), newest "
        "first; none recorded: which functions to trace: [ID] NAME",
        with_id=False,
    )
    p.add_argument("words", nargs="+", metavar="[ID] NAME")


class Parser(argparse.ArgumentParser):
    """Command-line mistakes answered as every other error is: JSON on stderr (the flag or value named),
    exit code 2; ``--help`` still prints the usage."""

    def error(self, message: str) -> NoReturn:
        error = {
            "code": "invalid_request",
            "message": message,
            "hint": f"{self.prog} --help lists what it takes",
        }
        sys.stderr.write(json.dumps({"error": error}) + "\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = Parser(
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
    p.set_defaults(func=_serve)
    p = sub.add_parser("mcp", help="MCP server on stdio (embeds the relay, or forwards to one with --url)")
    p.add_argument("--url", default=None, help="forward every tool to the relay at URL (default: run embedded)")
    p.add_argument("--token-file", default=None, help="file holding that relay's API token (or $DEBUGRELAY_TOKEN)")
    p.add_argument("--token", default=None, help="API token of that relay (visible in ps: prefer --token-file)")
    p.set_defaults(func=_mcp)
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
