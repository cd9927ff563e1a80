"""What every target needs at start: the debugpy command line and the start-up hook directory."""

from __future__ import annotations

import shutil
from pathlib import Path

import debugpy

from debugrelay.models import LaunchRequest

_BOOT = Path(__file__).resolve().parent.parent / "_boot"


def prepare_boot_dir(path: Path) -> Path:
    """A directory for PYTHONPATH: the TCP_NODELAY hook, the read-only probe and this relay's debugpy.

    Putting debugpy here lets any interpreter be debugged, whether it has debugpy or not.
    """
    path.mkdir(parents=True, exist_ok=True)
    for hook in _BOOT.glob("*.py"):
        shutil.copyfile(hook, path / hook.name)
    link = path / "debugpy"
    source = Path(debugpy.__file__).resolve().parent
    if link.is_symlink() and link.resolve() != source:
        link.unlink()
    if not link.exists():
        link.symlink_to(source, target_is_directory=True)
    return path


def copy_boot(dest: str) -> None:
    """Copy the start-up hooks and debugpy into ``dest`` (a pod's init container, into its emptyDir)."""
    path = Path(dest)
    path.mkdir(parents=True, exist_ok=True)
    for hook in _BOOT.glob("*.py"):
        shutil.copyfile(hook, path / hook.name)
    source = Path(debugpy.__file__).resolve().parent
    shutil.copytree(source, path / "debugpy", ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)


def interpreter_flags(version: str | None) -> list[str]:
    """Options for a target's interpreter of ``version`` (major.minor): on 3.11+ no frozen modules, so the
    debugger can stop in them and prints no warning that they are in use (it read as the launch's failure)."""
    major, _, minor = (version or "").partition(".")
    if major.isdigit() and minor.isdigit() and (int(major), int(minor)) >= (3, 11):
        return ["-Xfrozen_modules=off"]
    return []


def debugpy_args(spec: LaunchRequest, listen: str, *, script_path: str | None = None) -> list[str]:
    """``-m debugpy --listen ... --wait-for-client [options] <script|-m module> args``."""
    argv = ["-m", "debugpy", "--listen", listen, "--wait-for-client"]
    argv += ["--configure-subProcess", "true" if spec.debug_subprocesses else "false"]
    if spec.module:
        argv += ["-m", spec.module]
    else:
        argv.append(script_path or spec.script or "")
    return [*argv, *spec.args]
