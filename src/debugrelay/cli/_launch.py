"""``debugrelay launch``: a script or module run under the debugger (a session made or reused, breakpoints
and exception modes set first), answered with its first stop."""

from __future__ import annotations

import argparse
from typing import Any

from debugrelay.client import RemoteService
from debugrelay.errors import InvalidRequest

from ._client import split_id


def env_pairs(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"--env '{pair}' is not KEY=VALUE", hint="e.g. --env DEBUG=1")
        env[key] = value
    return env


async def cmd_launch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    """One call of the relay's ``debug_launch``: the session chosen, breakpoints set, the program run and its
    first event answered, all there."""
    module = a.module or ("pytest" if a.test is not None and not a.target else None)
    given, rest = split_id(a.target, 0 if module else 1)
    if not module and not rest:
        raise InvalidRequest(
            "give the script to run (or --module M, or --test NODE)",
            hint="debugrelay launch [ID] SCRIPT [ARGS...] [-- ARGS...]",
        )
    asked: dict[str, Any] = {
        "session_id": given,
        "script": None if module else rest[0],  # relative paths start here: the relay knows our folder
        "module": module,
        "test": a.test,
        "args": (rest if module else rest[1:]) + a.program_args,
        "env": env_pairs(a.env),
        "cwd": a.cwd,
        "python": a.python,
        "breakpoints": a.breakpoints,
        "trace": a.trace,
        "stop_on_entry": a.stop_on_entry,
        "stop_on_exception": a.stop_on_exception,
        "children": a.children,
        "port": a.ready,
        "publish": [p for p in a.publish if p != a.ready],
        "launcher": a.launcher,
        "image": a.image,
        "timeout": a.timeout or 0.0,
        "locals": a.locals,
    }
    given_only = {k: v for k, v in asked.items() if v is not None and v not in ([], {})}
    return "status", await s.act("debug_launch", given_only)
