"""A relay on the host and its container targets: the firewall rule that keeps them off the host's services
is put in place once where missing, and a relay that may not add it says so at start. Its own Redis, named
when exposed: tests/integration/test_store_exposure.py; the rule's effect on real containers:
tests/docker/test_host_services_docker.py."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence

import pytest

from debugrelay.launchers import docker_host
from debugrelay.launchers.docker_host import BRIDGE_PREFIX, RULE, HostFirewall, bridge_name, report


class Iptables:
    """iptables as a relay meets it: the rule there or not, the change allowed or not."""

    def __init__(self, *, allowed: bool = True) -> None:
        self.present: set[str] = set()  # the tools whose INPUT chain holds the rule
        self.allowed = allowed
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(list(argv))
        if not self.allowed:
            said = "iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied"
            return subprocess.CompletedProcess(argv, 4, "", said)
        if "-C" in argv:
            return subprocess.CompletedProcess(argv, 0 if argv[0] in self.present else 1, "", "")
        self.present.add(argv[0])
        return subprocess.CompletedProcess(argv, 0, "", "")


@pytest.fixture(autouse=True)
def iptables_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_host, "_binary", lambda tool: f"/usr/sbin/{tool}")


def test_a_bridge_name_fits_an_interface_name_and_the_rule_matches_it() -> None:
    name = bridge_name("debugrelay-sess_0123456789ab-5f3a9c-net")
    assert len(name) <= 15 and name.startswith(BRIDGE_PREFIX)
    assert RULE[RULE.index("-i") + 1] == f"{BRIDGE_PREFIX}+"
    assert bridge_name("a-net") != bridge_name("b-net")


def test_the_rule_is_inserted_at_the_head_of_input_once() -> None:
    tables = Iptables()
    firewall = HostFirewall(run=tables)
    assert firewall.close() is None
    inserted = [c for c in tables.calls if "-I" in c]
    assert [c[:5] for c in inserted] == [
        ["/usr/sbin/iptables", "-w", "-I", "INPUT", "1"],
        ["/usr/sbin/ip6tables", "-w", "-I", "INPUT", "1"],
    ]
    assert inserted[0][5:] == list(RULE)
    tables.calls.clear()
    assert firewall.close() is None  # there: checked, not added again
    assert [c[2] for c in tables.calls] == ["-C", "-C"]


def test_a_relay_that_may_not_change_the_firewall_says_why_and_stops_asking() -> None:
    tables = Iptables(allowed=False)
    firewall = HostFirewall(run=tables)
    problem = firewall.close()
    assert problem is not None and "Permission denied" in problem
    asked = len(tables.calls)
    assert firewall.close() == problem and len(tables.calls) == asked


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a check as another user")
def test_a_relay_that_is_not_root_is_refused_by_the_real_iptables(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real iptables, run as nobody: refused, and the refusal is what the relay reports."""
    monkeypatch.undo()  # the real _binary
    if docker_host._binary("iptables") is None or shutil.which("setpriv") is None:
        pytest.skip("iptables or setpriv is not installed")
    code = "from debugrelay.launchers.docker_host import HostFirewall; print(HostFirewall().close())"
    ran = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if ran.returncode != 0 and "Permission denied" in ran.stderr and "debugrelay" in ran.stderr:
        pytest.skip("this checkout is not readable by nobody")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("iptables refused: ") and "denied" in ran.stdout, ran.stdout


def test_a_relay_that_cannot_close_the_host_says_what_stays_open(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="debugrelay.launchers.docker_host"):
        report(HostFirewall(run=Iptables(allowed=False)), None)
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "reach this host's services listening on every address" in warning.getMessage()


def test_a_relay_that_closed_the_host_warns_of_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="debugrelay.launchers.docker_host"):
        report(HostFirewall(run=Iptables()), None)
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "reach no service of this host" in caplog.records[0].getMessage()
