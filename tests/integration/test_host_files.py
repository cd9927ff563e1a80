"""A debugged program names files in its frames (``compile(source, any_name, "exec")``): the relay
reads none of them from its own disk outside the session's folders, whatever asks for them (the
source, a stop's line, the stack, the autopsy, the live view), and never a kernel interface such as
its own ``/proc/<pid>/environ``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Relay, Sessions, error_of, ok, target

pytestmark = pytest.mark.integration

NAMED = target("named_files.py")
FILE_MARK = "host-file-mark-2718"
ENV_MARK = "relay-environment-mark-3141"


class HostFiles:
    """A relay whose workspace holds the program, and a file of the host outside it holding a mark."""

    def __init__(self, tmp: Path, env: dict[str, str] | None = None) -> None:
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        self.script = str(self.workspace / "named_files.py")
        shutil.copy(NAMED, self.script)
        outside = tmp / "outside"
        outside.mkdir()
        self.secret = outside / "notes.txt"
        self.secret.write_text("".join(f"{FILE_MARK} line {n}\n" for n in range(1, 9)))
        self.relay = Relay(
            tmp, env={"DEBUGRELAY_WORKSPACE": str(self.workspace), "HOSTFILES_NOTE": ENV_MARK, **(env or {})}
        )
        self.api = self.relay.http
        self.sessions = Sessions(self.api)

    def stop(self) -> None:
        self.sessions.cleanup()
        self.relay.stop()

    def shows_no_host_file(self, **launch: Any) -> None:
        """Run the program with frames named after the host file and the relay's environment; every
        answer about those stops leaves both out."""
        api, environ = self.api, f"/proc/{self.relay.proc.pid}/environ"
        assert ENV_MARK in Path(environ).read_bytes().decode()  # what a leak would show
        sid = self.sessions.create()
        args = [str(self.secret), environ]
        ok(api.post(f"/sessions/{sid}/launch", json={"script": self.script, "args": args, **launch}))
        answers: list[Any] = []
        first = ok(api.post(f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 60}))
        assert first["location"]["file"] == str(self.secret), first  # the frame names the host's file
        answers += [first, ok(api.get(f"/sessions/{sid}/stacktrace")), self.page(sid)]
        for path in (str(self.secret), environ):
            answers.append(error_of(api.get(f"/sessions/{sid}/source", params={"path": path}), 403, "refused"))
        ok(api.post(f"/sessions/{sid}/continue"))
        second = ok(api.post(f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 60}))
        assert second["location"]["file"] == environ, second
        autopsy = ok(api.get(f"/sessions/{sid}/autopsy", params={"include_variables_for_frames": 3}))
        assert [f["file"] for f in autopsy["frames"][:2]] == [environ, str(self.secret)]
        assert all(f.get("source_available") is False for f in autopsy["frames"][:2])
        answers += [second, autopsy, ok(api.get(f"/sessions/{sid}/stacktrace")), self.page(sid)]
        for path in (str(self.secret), environ):
            answers.append(error_of(api.get(f"/sessions/{sid}/source", params={"path": path}), 403, "refused"))
        shown = json.dumps(answers)
        assert FILE_MARK not in shown
        assert ENV_MARK not in shown

    def page(self, sid: str) -> str:
        """The live view's session page, as a person opening it sees it."""
        response = self.api.get(f"/ui/sessions/{sid}")
        assert response.status_code == 200, response.text
        return response.text


@pytest.fixture
def host(tmp_path: Path) -> Any:
    space = HostFiles(tmp_path)
    yield space
    space.stop()


def test_a_local_program_cannot_make_the_relay_show_host_files_or_its_environment(host: HostFiles) -> None:
    host.shows_no_host_file(stop_on_exception="uncaught")


def test_breakpoints_never_read_a_kernel_interface_or_a_file_outside_the_folders(host: HostFiles) -> None:
    environ = f"/proc/{host.relay.proc.pid}/environ"
    sid = host.sessions.create()
    for path, line in ((environ, 1), (environ, 99), (str(host.secret), 2), (str(host.secret), 999)):
        bp = host.sessions.bp(sid, path, line)
        assert "suggestion" not in bp and "Not checked by the relay" in bp["message"], bp
        assert FILE_MARK not in json.dumps(bp) and ENV_MARK not in json.dumps(bp)
    # a kernel interface is never a script either: refused before anything is read or started
    error_of(host.api.post(f"/sessions/{sid}/launch", json={"script": environ}), 403, "refused")
    assert ok(host.api.get(f"/sessions/{sid}/status"))["status"] == "created"


def test_the_library_of_the_launch_s_interpreter_stays_readable(host: HostFiles, tmp_path: Path) -> None:
    # a virtualenv outside the workspace: its library is found from the interpreter's path, nothing run
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (library,) = venv.glob("lib/python3*/site-packages")
    (library / "shelf.py").write_text("def fetch():\n    raise LookupError('not on the shelf')  # library-raise\n")
    script = host.workspace / "uses_library.py"
    script.write_text("import shelf\n\nshelf.fetch()\n")
    sid = host.sessions.create()
    launch = {"script": str(script), "python": str(venv / "bin" / "python"), "stop_on_exception": "uncaught"}
    ok(host.api.post(f"/sessions/{sid}/launch", json=launch))
    stop = ok(host.api.post(f"/sessions/{sid}/wait", params={"locals": "true"}, json={"timeout": 60}))
    assert stop["location"]["file"] == str(library / "shelf.py"), stop
    assert stop["code"] == "raise LookupError('not on the shelf')  # library-raise"
    source = ok(host.api.get(f"/sessions/{sid}/source", params={"path": stop["location"]["file"]}))
    assert "def fetch():" in source["content"]
    # the interpreter's folder itself is not a library: a file beside it stays out
    (venv / "notes.txt").write_text(f"{FILE_MARK}\n")
    error_of(host.api.get(f"/sessions/{sid}/source", params={"path": str(venv / "notes.txt")}), 403, "refused")
