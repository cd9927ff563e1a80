"""The Python of the project a local launch is in: its virtual environment, found where the project's own
tools put it, so the program runs on its own interpreter and packages rather than the relay's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import msgspec

VENV_NAMES = (".venv", "venv")  # uv, `python -m venv`, poetry's in-project setting: all make one of these
POETRY_TIMEOUT = 10.0  # seconds `poetry env info -p` may take (it reads the project and poetry's config)
_PYPROJECT_MAX = 256 * 1024  # bytes of a pyproject.toml read to tell whether poetry manages the project
_poetry_envs: dict[tuple[str, float], str | None] = {}  # (project folder, pyproject mtime) -> its env's python


class Interpreter(msgspec.Struct, frozen=True):
    """An interpreter a launch runs on and where it was found (said in the launch's answer)."""

    path: str
    source: str

    def said(self) -> str:
        return f"{self.path} ({self.source})"


def venv_python(folder: Path) -> str | None:
    """The interpreter of the virtual environment at ``folder``, or None: no environment there."""
    if not (folder / "pyvenv.cfg").is_file():
        return None
    for name in ("python", "python3"):
        path = folder / "bin" / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def relay_venv() -> Path | None:
    """The virtual environment the relay itself runs in, or None (it runs on a base interpreter)."""
    return Path(sys.prefix).resolve() if sys.prefix != sys.base_prefix else None


def _same_folder(a: Path | str, b: Path | None) -> bool:
    return b is not None and Path(a).resolve() == b


def folders_up(start: Path, stops: list[Path]) -> Iterator[Path]:
    """``start`` and the folders above it, up to the first that is a repository's root (has ``.git``) or
    one of ``stops`` (the relay's workspace), included; else up to the filesystem's root."""
    folder = start
    while True:
        yield folder
        if (folder / ".git").exists() or any(folder == stop for stop in stops) or folder.parent == folder:
            return
        folder = folder.parent


def _poetry_project(folder: Path) -> bool:
    if (folder / "poetry.lock").is_file():
        return True
    try:
        with (folder / "pyproject.toml").open("rb") as fh:
            return b"[tool.poetry" in fh.read(_PYPROJECT_MAX)
    except OSError:
        return False


def poetry_python(project: Path) -> str | None:
    """The interpreter of poetry's environment for ``project`` (asked once per version of its pyproject.toml),
    or None: poetry is not installed, or has made no environment for it."""
    poetry = shutil.which("poetry")
    if poetry is None:
        return None
    try:
        key = (str(project), (project / "pyproject.toml").stat().st_mtime)
    except OSError:
        return None
    if key not in _poetry_envs:
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}  # else poetry answers the relay's
        try:
            done = subprocess.run(
                [poetry, "env", "info", "--path"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=POETRY_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        found = done.stdout.strip() if done.returncode == 0 else ""
        _poetry_envs[key] = venv_python(Path(found)) if found and os.path.isabs(found) else None
    return _poetry_envs[key]


def project_python(
    folder: str, *, workspace: str | None = None, environ: Mapping[str, str] | None = None
) -> Interpreter | None:
    """The interpreter of the project ``folder`` (a launch's folder) is in: a ``.venv`` or ``venv`` there or
    above it up to the repository's root or the workspace, the environment poetry made for the project, or
    the relay's active ``VIRTUAL_ENV`` when that is not the relay's own; None: the project has none."""
    environ = os.environ if environ is None else environ
    stops = [Path(workspace).resolve()] if workspace else []
    poetry: Path | None = None
    for here in folders_up(Path(folder).resolve(), stops):
        for name in VENV_NAMES:
            found = venv_python(here / name)
            if found is not None:
                return Interpreter(found, f"project {name}")
        if poetry is None and _poetry_project(here):
            poetry = here
    if poetry is not None:
        found = poetry_python(poetry)
        if found is not None:
            return Interpreter(found, "project's poetry env")
    active = environ.get("VIRTUAL_ENV")
    if active and os.path.isabs(active) and not _same_folder(active, relay_venv()):
        found = venv_python(Path(active))
        if found is not None:
            return Interpreter(found, "active VIRTUAL_ENV")
    return None


def launch_python(folder: str, *, workspace: str | None = None) -> Interpreter:
    """What a local launch in ``folder`` runs on when it names no ``python``: its project's interpreter, the
    relay's own when that is the project's environment (the same path, so a warm target fits), else the relay's."""
    found = project_python(folder, workspace=workspace)
    if found is None:
        return Interpreter(sys.executable, "the relay's: no project environment found")
    if _same_folder(Path(found.path).parent.parent, relay_venv()):
        return Interpreter(sys.executable, f"{found.source}, the relay's own")
    return found
