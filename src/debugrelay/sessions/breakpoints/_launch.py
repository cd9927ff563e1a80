"""What a launch needs of the breakpoints: the script checked, the entry stop."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from debugrelay.errors import FileNotFound, InvalidRequest, Refused
from debugrelay.models import BreakpointRecord, LaunchRequest, SessionRecord

from .._source import check_syntax, first_code_line, module_path
from ._sync import sync_file

if TYPE_CHECKING:
    from debugrelay.launchers import Launcher

    from .._files import SourceRoots
    from .._session import Session


def prepare_launch(
    spec: LaunchRequest, launcher: Launcher, roots_of: Callable[[LaunchRequest], SourceRoots]
) -> str | None:
    """Check a launch before anything starts; return the script's path (None for modules, or a script
    that exists only in a pod's image). The script is read only inside the launch's folders
    (``roots_of(spec)``): a pod's script path that names another file of the relay is the image's."""
    if bool(spec.script) == bool(spec.module):
        raise InvalidRequest(
            "give exactly one of 'script' or 'module'",
            details={"script": spec.script, "module": spec.module},
            hint='e.g. {"script": "/abs/path/main.py"} or {"module": "pytest", "args": ["-x"]}',
        )
    remote = launcher.code_in_image  # the relay may hold a checkout of it
    if spec.cwd and not os.path.isdir(spec.cwd) and not launcher.files_in_target:
        raise InvalidRequest(f"working directory '{spec.cwd}' does not exist", details={"cwd": spec.cwd})
    if spec.module:
        return None if remote else module_path(spec.module, spec.cwd, spec.pythonpath)
    script = spec.script or ""
    if remote and not (os.path.isabs(script) and roots_of(spec).resolve(script) and os.path.isfile(script)):
        if not os.path.isabs(script) and not spec.cwd:
            raise InvalidRequest(
                f"script '{script}' must be an absolute path (or come with 'cwd') on the {launcher.name} launcher",
                details={"script": script},
                hint='e.g. {"script": "/app/main.py"}: the path in the image, or in your checkout with path_mappings',
            )
        return None  # only in the image: the pod reports it if it is missing
    if not os.path.isabs(script):
        script = os.path.join(spec.cwd or os.getcwd(), script)
        spec.script = script
    if roots_of(spec).resolve(script) is None:
        raise Refused(
            f"script '{script}' is not a file a program can be launched from",
            details={"script": script, "setting": "none"},
            hint="Launch a script of your project; kernel interfaces (/proc, /sys, /dev) are never read.",
        )
    if not os.path.isfile(script):
        raise FileNotFound(f"script '{script}' not found", details={"file": script})
    check_syntax(script)
    return script


def entry_breakpoint(record: SessionRecord, spec: LaunchRequest, script: str | None) -> BreakpointRecord | None:
    """An internal breakpoint on the first line that runs, for ``stop_on_entry``."""
    if script is None:
        return None
    line = first_code_line(script)
    if line is None:
        return None
    bp = BreakpointRecord(id="entry", file=script, line=line, verified=True, internal=True)
    record.breakpoints = [b for b in record.breakpoints if not b.internal] + [bp]
    return bp


async def drop_entry(session: Session) -> None:
    entry = [b for b in session.record.breakpoints if b.internal]
    if not entry:
        return
    session.record.breakpoints = [b for b in session.record.breakpoints if not b.internal]
    for path in {b.file for b in entry if b.file}:
        await sync_file(session, path)
