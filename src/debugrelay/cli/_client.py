"""What every client command shares: the token, a session id among the words, one run against the relay
with its answer printed (compact JSON, or --pretty text) and its error in the CLI's words."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import msgspec

from debugrelay.client import ApiError, AsyncRelayClient, RemoteService, default_token, default_url
from debugrelay.client._pretty import render
from debugrelay.errors import RelayError


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


def as_refs(data: Any) -> Any:
    """Values as MCP gives them: a value to expand has ``ref`` (``vars --ref N``), one without has none
    (the API's ``variable_reference`` and ``expandable`` say the same twice)."""
    if isinstance(data, list):
        return [as_refs(item) for item in data]
    if not isinstance(data, dict):
        return data
    out = {key: as_refs(value) for key, value in data.items() if key not in ("variable_reference", "expandable")}
    if data.get("variable_reference"):
        out["ref"] = data["variable_reference"]
    return out


def looks_like_id(text: str) -> bool:
    return text.startswith("sess_")


def split_id(values: list[str], needed: int) -> tuple[str | None, list[str]]:
    """``[ID] REST...``: the first value is a session id when it looks like one and more are there."""
    if len(values) > needed and looks_like_id(values[0]):
        return values[0], values[1:]
    return None, values


# the actions' next steps name MCP tools; the CLI's commands do the same
COMMANDS = {
    "debug_output": "`debugrelay output`",
    "breakpoint_wait": "`debugrelay wait`",
    "debug_pause": "`debugrelay pause`",
    "debug_launch": "`debugrelay launch`",
    "exception_autopsy": "`debugrelay autopsy`",
    "debug_variables": "`debugrelay vars`",
    "debug_request": "`debugrelay request`",
    "debug_set_breakpoint": "`debugrelay break`",
    "debug_status": "`debugrelay status`",
}
_TOOL = re.compile(r"\b(" + "|".join(COMMANDS) + r")\b")


def in_commands(text: str) -> str:
    """An action's words with the tools it names as the CLI's commands."""
    return _TOOL.sub(lambda m: COMMANDS[m.group(1)], text)


def cli_words(status: Any) -> Any:
    """A status as the CLI says it: its next steps name commands, not the HTTP API's paths or MCP tools."""
    if isinstance(status, dict):
        for key in ("hint", "output_truncated"):
            if isinstance(status.get(key), str):
                status[key] = in_commands(status[key])
        shown = status.get("locals")
        if isinstance(shown, dict) and isinstance(shown.get("..."), str):
            shown["..."] = in_commands(shown["..."])
    if isinstance(status, dict) and status.get("timed_out"):
        status["hint"] = "`debugrelay wait` waits for the next stop; `debugrelay pause` pauses it."
    if isinstance(status, dict) and status.get("status") == "terminated" and "hint" in status:
        status["hint"] = "The program ended: `debugrelay output` shows all it printed; `debugrelay launch` reruns it."
        if "output_truncated" in status:
            status["output_truncated"] = "earlier output omitted: `debugrelay output` shows all of it"
    return status


def run_client(args: argparse.Namespace) -> int:
    """Run one client command: compact JSON (or --pretty text) on stdout; the error JSON on stderr."""
    # httpcore imports trio, when it is installed, to support it (about 0.2 s of a command's start); a
    # command runs on asyncio only, in a process of its own
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    # and h2 for HTTP/2, which this client never asks for (20-odd modules of every command's start)
    sys.modules.setdefault("h2", None)  # type: ignore[arg-type]
    url = getattr(args, "url", None) or default_url()
    token = token_of(args)

    async def run() -> tuple[str, Any]:
        service = RemoteService(AsyncRelayClient(url, token))  # type: ignore[abstract]  # derived operations
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
    if kind == "status":
        data = cli_words(data)
    if kind in ("variables", "evaluation", "evaluations"):
        data = as_refs(plain(data))
    if getattr(args, "pretty", False):
        print(render(kind, data))
    else:
        print(json.dumps(data, separators=(",", ":"), ensure_ascii=False))
    return 0
