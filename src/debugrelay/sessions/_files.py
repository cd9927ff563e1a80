"""Which files of the relay's own disk a session may read, and reading them.

A debugged program names files the relay would read: every frame carries a file name the program
chose (``compile(src, "/any/host/file", "exec")``). So whatever names a file (a frame, a request, a
breakpoint, the live view, an autopsy), the relay reads it from its own disk only inside the folders
of :class:`SourceRoots`, never under a kernel interface. A file outside them is read only from a
target with files of its own (a container, through its engine), never from the relay's disk.
"""

from __future__ import annotations

import asyncio
import glob
import os
import posixpath
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING

from debugrelay.config import Settings
from debugrelay.errors import FileNotFound, Refused
from debugrelay.launchers.policy import ROOTS_SETTING, LaunchPolicy, under
from debugrelay.models import LaunchRequest

from ._source import MAX_SOURCE_BYTES, SourceInfo, analyze, read_source

if TYPE_CHECKING:
    from ._session import Session

# kernel interfaces: their files hold other processes' environments and memory, never source
PSEUDO_FILESYSTEMS = ("/proc", "/sys", "/dev")
_PYVENV_MAX = 64 * 1024  # a pyvenv.cfg is a few lines


def pseudo(path: str) -> bool:
    """Whether ``path`` (normalised) lies in a kernel interface (/proc, /sys, /dev)."""
    clean = posixpath.normpath(path)
    return any(under(clean, p) for p in PSEUDO_FILESYSTEMS)


@dataclass(frozen=True)
class SourceRoots:
    """The folders a session's files are read from on the relay's disk (all resolved)."""

    folders: tuple[str, ...]

    def resolve(self, path: str) -> str | None:
        """``path`` with symlinks followed, if it lies inside a folder and outside the kernel interfaces."""
        if not path or not os.path.isabs(path) or "\x00" in path:
            return None
        resolved = os.path.realpath(path)
        if pseudo(resolved) or not any(under(resolved, f) for f in self.folders):
            return None
        return resolved

    def check(self, path: str) -> str:
        """``path`` resolved, inside the folders and an existing file; else :class:`Refused` or
        :class:`FileNotFound` (refused first: a file outside is never even looked at)."""
        resolved = self.resolve(path)
        if resolved is None:
            raise Refused(
                f"'{path}' is outside the folders this relay serves a session's files from",
                details={"path": path, "roots": list(self.folders), "setting": ROOTS_SETTING},
                hint="Give a file under details.roots: the program's script, a file of its folder, or a stack "
                "frame's 'file' there. A container's other files are read from the container.",
            )
        if not os.path.isfile(resolved):
            raise FileNotFound(
                f"cannot read '{path}'",
                details={"file": path},
                hint="Give a path from a stack frame's 'file'; the relay must be able to read it.",
            )
        return resolved

    def read(self, path: str) -> str | None:
        """The text of ``path`` if it is a regular file inside the folders (at most MAX_SOURCE_BYTES)."""
        resolved = self.resolve(path)
        return None if resolved is None else read_source(resolved, exact=True)

    def analyze(self, path: str) -> SourceInfo | None:
        """:func:`analyze` of ``path`` if it lies inside the folders, else None (as for a missing file)."""
        resolved = self.resolve(path)
        return None if resolved is None else analyze(path, resolved)

    def allowed(self, paths: list[str]) -> list[str]:
        """The entries of ``paths`` inside the folders (folders to search for functions, say)."""
        return [p for p in paths if self.resolve(p) is not None]


def interpreter_folders(python: str) -> list[str]:
    """Where the interpreter ``python`` keeps its library (``lib*/python3*`` under its prefix, its
    virtualenv's and the base one's), found from its path and ``pyvenv.cfg``: nothing is run."""
    exe = python if os.sep in python else shutil.which(python)
    if not exe:
        return []
    exe = os.path.abspath(exe)
    prefixes = [os.path.dirname(os.path.dirname(exe)), os.path.dirname(os.path.dirname(os.path.realpath(exe)))]
    home = _venv_home(os.path.join(prefixes[0], "pyvenv.cfg"))
    if home:
        prefixes.append(os.path.dirname(os.path.normpath(home)))
    found: list[str] = []
    for prefix in dict.fromkeys(prefixes):
        pattern = os.path.join(glob.escape(prefix), "lib*", "python3*")
        found += [p for p in sorted(glob.glob(pattern)) if os.path.isdir(p)]
    return found


def _venv_home(cfg: str) -> str | None:
    """The ``home`` of a virtualenv's pyvenv.cfg (the base interpreter's folder), or None."""
    try:
        with open(cfg, "rb") as fh:
            text = fh.read(_PYVENV_MAX).decode("utf-8", "replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "home" and os.path.isabs(value.strip()):
            return value.strip()
    return None


def roots_for(settings: Settings, launch: LaunchRequest | None, policy: LaunchPolicy | None = None) -> SourceRoots:
    """A session's folders: the operator's roots and the relay's Python library; for a launch on the
    local launcher (the relay's own user on this host) also what the launch named: its script's
    folder, working folder, PYTHONPATH and its interpreter's library. A frame never adds a folder."""
    policy = policy or LaunchPolicy.from_settings(settings)
    folders = [*policy.roots, *policy.source_roots]
    if launch is not None and (launch.launcher or settings.default_launcher) == "local":
        named = [launch.cwd, *launch.pythonpath]
        if launch.script and os.path.isabs(launch.script):
            named.append(os.path.dirname(launch.script))
        named += interpreter_folders(launch.python) if launch.python else []
        folders += [os.path.realpath(p) for p in named if p and os.path.isabs(p)]
    return SourceRoots(tuple(dict.fromkeys(f for f in folders if not pseudo(f))))


async def read_session_file(session: Session, path: str) -> str | None:
    """A file of ``session`` as text: from its target when the target has files of its own (a
    container's are not the relay's) and the file is the session's there, else from the relay's disk
    inside the session's folders (:class:`Refused` outside them, :class:`FileNotFound` if absent)."""
    target = session.target
    if target is not None and posixpath.isabs(path) and not pseudo(path) and session.target_may_read(path):
        data = await target.read_file(target.to_remote_path(posixpath.normpath(path)), MAX_SOURCE_BYTES)
        if data is not None:
            return data.decode("utf-8", errors="replace")
    resolved = session.source_roots().check(path)
    return await asyncio.to_thread(read_source, resolved, True)


__all__ = [
    "PSEUDO_FILESYSTEMS",
    "SourceRoots",
    "interpreter_folders",
    "pseudo",
    "read_session_file",
    "roots_for",
]
