"""Test runs (pytest, unittest): how the relay recognises them and what pauses them.

The runner catches every failure, so an "uncaught" exception breakpoint never fires on its own.
The target's boot hook (``_debugrelay_tests``, enabled by :data:`TEST_STOPS_ENV`) hands each
failure to debugpy as an unhandled exception in the test's own frame; the runner's skips,
expected failures and closing ``sys.exit`` never pause.
"""

from __future__ import annotations

import os

import msgspec

from debugrelay.errors import InvalidRequest
from debugrelay.models import ExceptionFilters, LaunchRequest

TEST_STOPS_ENV = "DEBUGRELAY_TEST_STOPS"
_RUNNERS = {"pytest": "pytest", "py.test": "pytest", "unittest": "unittest"}


def test_runner(spec: LaunchRequest) -> str | None:
    """``pytest`` or ``unittest`` when the launch runs tests, else None."""
    if spec.module:
        return _RUNNERS.get(spec.module.removesuffix(".__main__"))
    if spec.script:
        return _RUNNERS.get(os.path.basename(spec.script).removesuffix(".py"))
    return None


def narrowed(spec: LaunchRequest) -> LaunchRequest:
    """A launch with ``test`` (a node id) made into the runner's command line; checked first."""
    if spec.test is None:
        return spec
    if spec.script is not None and test_runner(spec) is None:
        raise InvalidRequest(
            "'test' runs one test under pytest or unittest, not a script",
            details={"test": spec.test, "script": spec.script},
            hint='e.g. {"test": "tests/test_cart.py::test_total"} (pytest) or '
            '{"module": "unittest", "test": "tests.test_cart.CartTest.test_total"}',
        )
    module = spec.module or ("pytest" if spec.script is None else None)
    if module is not None and module not in _RUNNERS:
        raise InvalidRequest(
            f"'test' needs module pytest or unittest, not '{module}'",
            details={"test": spec.test, "module": module},
            hint="Leave module out to run the test under pytest.",
        )
    if not spec.test.strip() or spec.test.startswith("-"):
        raise InvalidRequest(
            "'test' must be a test id, not empty or an option",
            details={"test": spec.test},
            hint="e.g. tests/test_cart.py::test_total; put options in args",
        )
    return msgspec.structs.replace(spec, module=module, args=[*spec.args, spec.test], test=None)


def exception_filters(spec: LaunchRequest) -> list[str]:
    """debugpy's exception filters for a launch's ``stop_on_exception``; omitted: ``uncaught`` for tests."""
    wanted = spec.stop_on_exception
    if wanted is None:
        return ["uncaught"] if test_runner(spec) else []
    if wanted is True:
        return ["raised", "uncaught"]
    if wanted in (False, "none"):
        return []
    return [str(wanted)]


def for_target(spec: LaunchRequest) -> LaunchRequest:
    """The spec the launcher starts: a test run's target gets the failure hook switched on."""
    if test_runner(spec) is None:
        return spec
    return msgspec.structs.replace(spec, env={TEST_STOPS_ENV: "1", **spec.env})


# said of the exceptions that pause a run when they are the session's own exception breakpoints
CARRIED = "the session's exception breakpoints: they carry over to each launch without stop_on_exception"


def stops_on(spec: LaunchRequest, filters: ExceptionFilters | None, *, carried: bool = False) -> str:
    """One sentence for the launch answer: what will pause this program; ``carried``: its exceptions are
    the session's own exception breakpoints, which the launch did not replace."""
    modes = set(filters.filters if filters else [])
    types = f" ({', '.join(filters.exception_types)})" if filters and filters.exception_types else ""
    runner = test_runner(spec)
    parts = ["breakpoints"]
    if spec.stop_on_entry:
        parts.append("its first line")
    if runner and "uncaught" in modes:
        parts.append(f"each failing test{types}, in its own frame with its locals (skips, xfails and the exit do not)")
    elif "uncaught" in modes:
        parts.append(f"an uncaught exception{types}")
    if "raised" in modes:
        parts.append(f"every raised exception{types}, even caught ones")
    if "userUnhandled" in modes:
        parts.append(f"an exception{types} leaving the program's own code")
    said = ", ".join(parts)
    if carried:
        said += f" ({CARRIED})"
    return said
