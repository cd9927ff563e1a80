"""A warm target's set-up (``_boot/_debugrelay_pool.py``) once it has its launch, run in a subprocess of its own."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

BOOT = Path(__file__).resolve().parents[2] / "src" / "debugrelay" / "_boot"

PROGRAM = textwrap.dedent(
    """
    import json, os, sys
    sys.path.insert(0, {boot!r})
    import _debugrelay_pool

    raised = []

    def tracer(frame, event, arg):
        if event == "exception":
            raised.append("%s at %s:%d" % (arg[0].__name__, frame.f_code.co_filename, frame.f_lineno))
        return tracer

    os.environ["PRESENT"] = "1"
    spec = {{"cwd": {cwd!r}, "env": {{"ADDED": "2"}}, "unset": ["PRESENT", "NEVER_SET"]}}
    sys.settrace(tracer)
    _debugrelay_pool._set_up(spec)
    sys.settrace(None)
    print(json.dumps({{"raised": raised, "cwd": os.getcwd(), "added": os.environ.get("ADDED"),
                      "present": "PRESENT" in os.environ}}))
    """
)


def test_a_warm_targets_set_up_raises_nothing_a_raised_exception_filter_would_stop_at(tmp_path: Path) -> None:
    """The relay's 'raised' filter can be in place while a warm target sets itself up for the launch: an
    exception raised there (os.environ's KeyError for a name it does not hold, caught at once) stopped the
    program in os.py before its first line."""
    script = tmp_path / "setup.py"
    script.write_text(PROGRAM.format(boot=str(BOOT), cwd=str(tmp_path)))
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.splitlines()[-1])
    assert found["raised"] == []
    assert (found["cwd"], found["added"], found["present"]) == (str(tmp_path), "2", False)
