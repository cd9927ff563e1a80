"""A launch that names no interpreter runs on its project's own: the project's virtual environment, with its
packages and its pytest, not the relay's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import pytest
from packaging.requirements import Requirement

from tests.conftest import Sessions, line_of, ok

pytestmark = pytest.mark.integration

# another Python than the relay's where the machine has one, so which one ran cannot be mistaken
OTHER_PYTHONS = ["/root/.pyenv/versions/3.13.0/bin/python", "/root/.pyenv/versions/3.12.1/bin/python"]


def base_python() -> str:
    return next((p for p in OTHER_PYTHONS if Path(p).is_file()), getattr(sys, "_base_executable", sys.executable))


def install_copy(name: str, site: Path, version: str) -> None:
    """Distribution ``name`` and what it requires, copied from the tests' own environment into ``site``
    (pytest and its requirements are pure Python: they run on any Python 3 they support)."""
    todo, done = [name], set()
    while todo:
        dist = metadata.distribution(todo.pop())
        if dist.name in done:
            continue
        done.add(dist.name)
        for file in dist.files or []:
            if file.parts[0] != ".." and "__pycache__" not in file.parts:
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(str(file.locate())), site / file)
        for wanted in map(Requirement, dist.requires or []):
            if wanted.marker is None or wanted.marker.evaluate({"python_version": version, "extra": ""}):
                todo.append(wanted.name)


def make_venv(folder: Path, *, with_pytest: bool = False) -> str:
    """A virtual environment at ``folder`` (fast: no pip), with pytest when asked."""
    subprocess.run([base_python(), "-m", "venv", "--without-pip", str(folder)], check=True)
    if with_pytest:
        (site,) = folder.glob("lib/python3*/site-packages")
        install_copy("pytest", site, site.parent.name.removeprefix("python"))
    return str(folder / "bin" / "python")


def evaluate(api: httpx.Client, sid: str, expression: str) -> Any:
    return ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A repository with its own ``.venv`` at its root and the program in a folder below it."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "app").mkdir()
    (root / "app" / "main.py").write_text("import sys\n\ntotal = 4  # here\nprint(total)\n")
    return root


def test_a_script_runs_on_its_project_s_venv_and_the_answer_says_so(
    api: httpx.Client, sessions: Sessions, project: Path
) -> None:
    python = make_venv(project / ".venv")
    script = str(project / "app" / "main.py")
    sid = sessions.create()
    sessions.bp(sid, script, line_of(script, "here"))
    launched = sessions.launch(sid, script)
    assert launched["interpreter"] == f"{python} (project .venv)", launched
    stop = sessions.wait(sid)
    assert stop["status"] == "paused", stop
    assert evaluate(api, sid, "sys.executable") == repr(python)
    assert evaluate(api, sid, "sys.prefix") == repr(str(project / ".venv"))

    # `python` named in the launch still decides, and then the relay has nothing to say of it
    again = sessions.create()
    sessions.bp(again, script, line_of(script, "here"))
    relaunched = sessions.launch(again, script, python=sys.executable)
    assert "interpreter" not in relaunched, relaunched
    assert sessions.wait(again)["status"] == "paused"
    assert evaluate(api, again, "sys.executable") == repr(sys.executable)


def test_a_venv_beyond_the_repository_s_root_is_not_the_program_s(
    api: httpx.Client, sessions: Sessions, tmp_path: Path
) -> None:
    make_venv(tmp_path / "venv")  # beside the repository, not in it: another project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    script = repo / "main.py"
    script.write_text("import sys\n\nprint(sys.executable)  # here\n")
    sid = sessions.create()
    sessions.bp(sid, str(script), line_of(str(script), "here"))
    launched = sessions.launch(sid, str(script))
    assert launched["interpreter"].startswith(f"{sys.executable} (the relay's"), launched
    assert sessions.wait(sid)["status"] == "paused"
    assert evaluate(api, sid, "sys.executable") == repr(sys.executable)


def test_a_test_run_in_a_project_with_its_venv_runs_that_venv_s_pytest(
    api: httpx.Client, sessions: Sessions, project: Path
) -> None:
    python = make_venv(project / ".venv", with_pytest=True)
    (project / "tests").mkdir()
    check = project / "tests" / "test_cart.py"
    check.write_text("def test_total():\n    total = 2 + 2\n    assert total == 5  # fails\n")
    sid = sessions.create()
    launched = ok(
        api.post(f"/sessions/{sid}/launch", json={"cwd": str(project), "test": "tests/test_cart.py::test_total"})
    )
    assert launched["interpreter"] == f"{python} (project .venv)", launched
    stop = sessions.wait(sid, timeout=60)
    assert stop["status"] == "paused", stop
    assert stop["location"]["file"] == str(check) and stop["location"]["line"] == line_of(str(check), "fails"), stop
    assert evaluate(api, sid, "__import__('sys').executable") == repr(python)
    site = str(next((project / ".venv").glob("lib/python3*/site-packages")))
    assert evaluate(api, sid, "__import__('pytest').__file__").startswith(repr(site)[:-1]), "the venv's own pytest"
