"""The OpenAPI document is the contract a client can be generated from: schemathesis, with every check and
its coverage, fuzzing and stateful phases, finds no failure against a real relay."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Relay

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HERE = Path(__file__).parent
TOKEN = "contract-token-0123456789"


def test_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    schemathesis = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if schemathesis is None:
        pytest.skip("schemathesis is not installed (pip install -e '.[test]')")
    workspace = tmp_path / "workspace"  # launches may use this empty folder only
    workspace.mkdir()
    relay = Relay(
        tmp_path,
        env={
            "DEBUGRELAY_TOKEN": TOKEN,
            "DEBUGRELAY_WORKSPACE": str(workspace),
            "DEBUGRELAY_LAUNCHERS": "local",
            "DEBUGRELAY_POOL_SIZE": "2",  # the default: a launch takes a warm interpreter (0.1 s, not 2 s)
        },
    )
    try:
        # bounded by examples per operation, not by time: the same amount of work on any machine
        run = subprocess.run(
            [str(HERE / "run-schemathesis"), relay.url, TOKEN, "--max-examples", "3", "--seed", "1"],
            env={"SCHEMATHESIS": schemathesis, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        relay.stop()
    report = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, report
    assert "Stateful" in run.stdout and "Fuzzing" in run.stdout and "Coverage" in run.stdout, report
