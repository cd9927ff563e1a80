"""``debugrelay launch``: a script or module run under the debugger (a session made or reused, breakpoints
and exception modes set first), answered with its first stop."""

from __future__ import annotations

import argparse
import os
from typing import Any

from debugrelay.client import RemoteService
from debugrelay.errors import InvalidRequest
from debugrelay.models import LaunchRequest, ReadyWhen
from debugrelay.service import policy

from ._client import plain, split_id


def env_pairs(pairs: list[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidRequest(f"--env '{pair}' is not KEY=VALUE", hint="e.g. --env DEBUG=1")
        env[key] = value
    return env


async def cmd_launch(s: RemoteService, a: argparse.Namespace) -> tuple[str, Any]:
    given, rest = split_id(a.target, 0 if a.module else 1)
    if not a.module and not rest:
        raise InvalidRequest(
            "give the script to run (or --module M)", hint="debugrelay launch [ID] SCRIPT [ARGS...] [-- ARGS...]"
        )
    script = None if a.module else policy.absolute(rest[0], a.cwd)
    prepared = await policy.prepare_launch(
        s,
        given,
        script=script,
        module=a.module,
        breakpoints=a.breakpoints,
        folder=a.cwd,
        stop_on_exception=a.stop_on_exception,
    )
    args = (rest if a.module else rest[1:]) + a.program_args
    spec = LaunchRequest(
        script=script,
        module=a.module,
        args=args,
        env=env_pairs(a.env),
        cwd=os.path.abspath(a.cwd) if a.cwd else None,
        python=a.python,
        stop_on_entry=a.stop_on_entry,
        stop_on_exception=a.stop_on_exception or "uncaught",
        debug_subprocesses=a.children,
        ready=ReadyWhen(port=a.ready) if a.ready is not None else None,
        ports=list(dict.fromkeys([*([a.ready] if a.ready is not None else []), *a.publish])),
    )
    status, notes = await policy.launch_and_wait(s, prepared, spec, a.timeout or 0.0, details=a.locals)
    return "status", {**plain(status), **notes}
