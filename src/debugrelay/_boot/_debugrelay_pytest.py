"""pytest plugin loaded by debugrelay in test runs: a failing test (or fixture) pauses where it failed.

See ``_debugrelay_tests``. pytest's own outcomes (skip, xfail, exit) never pause; ``pytest.fail``
does, in the test's frame. A ``unittest.TestCase`` test under pytest reports its failure to the
pytest item (its ``addFailure``/``addError``), not by raising: those pause too, before ``tearDown``.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest
from _debugrelay_tests import runner_exit_is_not_a_stop, stop_at
from _pytest.outcomes import Failed, OutcomeException


def _wanted(item: Any, excinfo: Any) -> bool:
    if excinfo is None:
        return False
    exc = excinfo[1]
    if isinstance(exc, OutcomeException) and not isinstance(exc, Failed):
        return False  # skip, xfail, exit: pytest's control flow, not a failure
    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
        return False
    return item.get_closest_marker("xfail") is None


def _watch(item: Any) -> Generator[None, Any, None]:
    outcome = yield
    excinfo = outcome.excinfo
    if _wanted(item, excinfo):
        stop_at(excinfo)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: Any) -> Generator[None, Any, None]:
    yield from _watch(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Generator[None, Any, None]:
    yield from _watch(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: Any) -> Generator[None, Any, None]:
    yield from _watch(item)


def _pause_on_report(original: Any) -> Any:
    def hooked(self: Any, testcase: Any, rawexcinfo: Any) -> Any:
        if isinstance(rawexcinfo, tuple) and _wanted(self, rawexcinfo):
            stop_at(rawexcinfo)
        return original(self, testcase, rawexcinfo)

    return hooked


def pytest_configure(config: Any) -> None:
    try:
        from _pytest.unittest import TestCaseFunction
    except ImportError:  # a pytest without unittest support: nothing to hook
        return
    if getattr(TestCaseFunction, "_debugrelay", False):
        return
    TestCaseFunction.addError = _pause_on_report(TestCaseFunction.addError)
    TestCaseFunction.addFailure = _pause_on_report(TestCaseFunction.addFailure)
    TestCaseFunction._debugrelay = True


def pytest_unconfigure(config: Any) -> None:
    runner_exit_is_not_a_stop()
