"""Which interpreter a local launch that names none runs on: its project's environment, found as the
project's own tools would find it, and never the relay's own when the project has one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from debugrelay.launchers import project_python as found


def venv(folder: Path) -> str:
    """A virtual environment at ``folder`` without pip (a few tens of milliseconds)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    return str(folder / "bin" / "python")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "src" / "pkg").mkdir(parents=True)
    return root


def test_the_nearest_venv_up_to_the_repository_root_is_the_project_s(repo: Path) -> None:
    python = venv(repo / "venv")
    assert found.project_python(str(repo / "src" / "pkg"), environ={}) == found.Interpreter(python, "project venv")
    nearer = venv(repo / "src" / ".venv")  # a nearer one wins: a sub-project's own
    assert found.project_python(str(repo / "src" / "pkg"), environ={}) == found.Interpreter(nearer, "project .venv")


def test_nothing_above_the_repository_root_or_the_workspace_is_looked_at(repo: Path, tmp_path: Path) -> None:
    venv(tmp_path / ".venv")  # the repository's parent folder: another project's
    assert found.project_python(str(repo / "src"), environ={}) is None
    (repo / ".git").rmdir()  # no repository: the relay's workspace bounds the search
    assert found.project_python(str(repo / "src"), workspace=str(repo), environ={}) is None
    assert found.project_python(str(repo / "src"), environ={}) is not None


def test_a_folder_named_venv_that_is_no_environment_is_skipped(repo: Path) -> None:
    (repo / ".venv" / "bin").mkdir(parents=True)  # no pyvenv.cfg: someone's folder, not an environment
    assert found.project_python(str(repo), environ={}) is None


def test_an_active_virtual_env_counts_unless_it_is_the_relay_s_own(repo: Path, tmp_path: Path) -> None:
    python = venv(tmp_path / "active")
    chosen = found.project_python(str(repo), environ={"VIRTUAL_ENV": str(tmp_path / "active")})
    assert chosen == found.Interpreter(python, "active VIRTUAL_ENV")
    if sys.prefix != sys.base_prefix:  # the tests run in a venv: the relay's own is never taken as active
        assert found.project_python(str(repo), environ={"VIRTUAL_ENV": sys.prefix}) is None


def test_the_relay_s_own_interpreter_only_when_the_project_has_none(repo: Path) -> None:
    relay = found.launch_python(str(repo))
    assert relay.path == sys.executable and "no project environment" in relay.source
    python = venv(repo / ".venv")
    assert found.launch_python(str(repo)) == found.Interpreter(python, "project .venv")


def test_a_poetry_project_runs_on_the_environment_poetry_made_for_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo / "pyproject.toml").write_text('[tool.poetry]\nname = "shop"\n')
    python = venv(tmp_path / "cache" / "shop-py3.11")
    tools = tmp_path / "bin"
    tools.mkdir()
    monkeypatch.setenv("PATH", str(tools))
    assert found.project_python(str(repo / "src"), environ={}) is None  # no poetry: nothing to ask
    # a stand-in for poetry (not installed here): it answers `env info --path` as poetry does
    (tools / "poetry").write_text(
        f"#!/bin/sh\n[ \"$*\" = 'env info --path' ] && echo {tmp_path / 'cache' / 'shop-py3.11'}\n"
    )
    (tools / "poetry").chmod(0o755)
    chosen = found.project_python(str(repo / "src"), environ={})
    assert chosen == found.Interpreter(python, "project's poetry env")
