"""Which files of the relay's disk a session reads: inside its folders only, symlinks followed first,
never a kernel interface; and a launch's interpreter library found without running it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from debugrelay.config import Settings
from debugrelay.errors import FileNotFound, Refused
from debugrelay.models import LaunchRequest
from debugrelay.sessions import SourceRoots, roots_for
from debugrelay.sessions._files import interpreter_folders
from debugrelay.sessions._source import read_source


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    (workspace / "main.py").write_text("print('mine')\n")
    (outside / "secret.txt").write_text("not yours\n")
    return workspace, outside


def test_files_inside_the_folders_are_read_and_a_symlink_out_is_not(layout: tuple[Path, Path]) -> None:
    workspace, outside = layout
    roots = SourceRoots((str(workspace),))
    assert roots.read(str(workspace / "main.py")) == "print('mine')\n"
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    for path in (str(workspace / "link.txt"), str(outside / "secret.txt"), f"{workspace}/../outside/secret.txt"):
        assert roots.resolve(path) is None and roots.read(path) is None and roots.analyze(path) is None
        with pytest.raises(Refused):
            roots.check(path)
    with pytest.raises(FileNotFound):
        roots.check(str(workspace / "missing.py"))
    with pytest.raises(Refused):  # outside: refused before the relay looks whether it exists
        roots.check(str(outside / "missing.py"))


def test_kernel_interfaces_are_never_read_whatever_the_folders(layout: tuple[Path, Path]) -> None:
    everything = SourceRoots(("/",))
    for path in (f"/proc/{os.getpid()}/environ", "/proc/self/environ", "/sys/kernel/hostname", "/dev/zero"):
        assert everything.resolve(path) is None and everything.read(path) is None
    workspace, _ = layout
    (workspace / "env").symlink_to(f"/proc/{os.getpid()}/environ")
    assert everything.read(str(workspace / "env")) is None


def test_an_exact_read_does_not_follow_a_symlink_put_in_place_after_the_check(layout: tuple[Path, Path]) -> None:
    workspace, outside = layout
    swapped = workspace / "swapped.py"
    swapped.symlink_to(outside / "secret.txt")
    assert read_source(str(swapped), exact=True) is None  # the checked path was a file; now it is a link
    assert read_source(str(workspace / "main.py"), exact=True) == "print('mine')\n"


def test_a_local_launch_adds_its_folders_and_its_interpreter_s_library(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (library,) = venv.glob("lib/python3*")
    assert str(library) in interpreter_folders(str(venv / "bin" / "python"))
    settings = Settings(workspace=str(tmp_path / "workspace"))
    script = str(tmp_path / "elsewhere" / "main.py")
    local = roots_for(settings, LaunchRequest(script=script, python=str(venv / "bin" / "python")))
    assert str(tmp_path / "elsewhere") in local.folders and str(library) in local.folders
    assert str(venv) not in local.folders  # the interpreter's folder itself is not its library
    docker = roots_for(settings, LaunchRequest(script=script, launcher="docker", cwd="/"))
    assert str(tmp_path / "elsewhere") not in docker.folders and "/" not in docker.folders
    rooted = roots_for(settings, LaunchRequest(script="/proc/1/environ", cwd="/"))
    assert rooted.resolve("/proc/1/environ") is None and "/proc/1" not in rooted.folders
