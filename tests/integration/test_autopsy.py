"""Exception autopsy: the whole context of an exception in one call, on real debugpy targets."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, line_of, ok, target

pytestmark = pytest.mark.integration

CHAIN = target("ex_chain.py")
RERAISE = target("ex_reraise.py")
GROUP = target("ex_group.py")
RECURSION = target("ex_recursion.py")
THREAD = target("ex_thread.py")
EXIT = target("ex_exit.py")
EXEC = target("ex_exec.py")
LOCALS = target("ex_locals.py")
OBJECTS = target("insp_objects.py")


def stop_at_exception(sessions: Sessions, script: str, mode: str = "uncaught", **launch: Any) -> tuple[str, Any]:
    sid = sessions.create()
    sessions.launch(sid, script, stop_on_exception=mode, **launch)
    status = sessions.wait(sid)
    assert status["status"] == "paused", status
    assert status["reason"] == "exception", status
    return sid, status


def autopsy(api: httpx.Client, sid: str, **params: Any) -> Any:
    return ok(api.get(f"/sessions/{sid}/autopsy", params=params))


def error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


def by_name(variables: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in variables}


# -- User story 1: the full context in one call ---------------------------------------------------


def test_chained_raise_gives_type_message_frames_locals_and_chain(api: httpx.Client, sessions: Sessions) -> None:
    sid, status = stop_at_exception(sessions, CHAIN)
    out = autopsy(api, sid)

    assert out["thread_id"] == status["thread_id"]
    exc = out["exception"]
    assert exc["type"] == "__main__.ConfigError"
    assert exc["message"] == "bad config abc"
    assert exc["unhandled"] is True
    assert exc["break_mode"] == "unhandled"
    assert exc["location"] == {"file": CHAIN, "line": line_of(CHAIN, "config-error"), "function": "load"}

    cause, context = out["inner_exceptions"]
    assert cause["type"] == "ValueError"
    assert cause["relation"] == "direct cause"
    assert "invalid literal" in cause["message"]
    assert cause["location"]["line"] == line_of(CHAIN, "value-error")
    assert context["type"] == "KeyError"
    assert context["relation"] == "during handling"
    assert context["message"] == "'missing'"
    where = {"file": CHAIN, "line": line_of(CHAIN, "key-error"), "function": "read_settings"}
    assert context["location"] == where
    assert "inner_exceptions_truncated" not in out

    # debugpy's "[Chained Exc: ...]" pseudo-frames are not frames of the thread
    assert [f["function"] for f in out["frames"]] == ["load", "read_settings", "<module>"]
    assert out["total_frames"] == 3
    top = out["frames"][0]
    assert top["line"] == line_of(CHAIN, "config-error")
    assert top["source"]["text"].startswith("raise ConfigError(")
    assert any("raise ConfigError" in line for line in top["source"]["lines"])
    assert top["source"]["start"] == top["line"] - 2
    assert by_name(top["arguments"]) == {"path": {"name": "path", "type": "str", "value": "'abc'"}}
    data = by_name(top["locals"])["data"]
    assert data["type"] == "dict"
    assert data["length"] == 2
    assert by_name(data["children"])["'size'"] == {"name": "'size'", "type": "int", "value": "3"}
    # only the throwing frame has variables by default (FR-006)
    assert all("locals" not in f and "arguments" not in f for f in out["frames"][1:])
    assert out["frames"][1]["source"] == {"text": 'load("abc")  # during-handling'}
    assert "partial" not in out


def test_inner_chain_is_capped_with_a_flag(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, CHAIN)
    out = autopsy(api, sid, max_inner_depth=1)
    assert [e["type"] for e in out["inner_exceptions"]] == ["ValueError"]
    assert out["inner_exceptions_truncated"] is True
    assert out["inner_exceptions_more"] == 1
    none = autopsy(api, sid, max_inner_depth=0)
    assert "inner_exceptions" not in none
    assert none["inner_exceptions_more"] == 2


def test_raise_inside_except_and_bare_reraise(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, RERAISE)
    out = autopsy(api, sid)
    exc = out["exception"]
    assert exc["type"] == "RuntimeError"
    assert exc["message"] == "cannot price order 7"
    # raised in checkout; the bare `raise` in retry does not move where it was raised
    assert exc["location"]["line"] == line_of(RERAISE, "raise-in-except")
    assert exc["location"]["function"] == "checkout"
    (inner,) = out["inner_exceptions"]
    assert inner["type"] == "ZeroDivisionError"
    assert inner["relation"] == "during handling"
    assert inner["location"] == {"file": RERAISE, "line": line_of(RERAISE, "divide"), "function": "price"}


def test_first_chance_exception_inside_except_has_its_context(api: httpx.Client, sessions: Sessions) -> None:
    sid, status = stop_at_exception(sessions, RERAISE, mode="raised", just_my_code=True)
    assert status["exception"]["type"] == "ZeroDivisionError"
    first = autopsy(api, sid)
    assert first["exception"]["unhandled"] is False
    assert first["exception"]["break_mode"] == "always"
    assert "inner_exceptions" not in first
    for _ in range(5):
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid)
        if status.get("exception", {}).get("type") == "RuntimeError":
            break
    out = autopsy(api, sid)
    assert out["exception"]["type"] == "RuntimeError"
    assert out["exception"]["unhandled"] is False
    assert out["inner_exceptions"][0]["type"] == "ZeroDivisionError"
    assert out["inner_exceptions"][0]["relation"] == "during handling"


def test_exception_group_members(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, GROUP)
    exc = autopsy(api, sid)["exception"]
    assert exc["type"] == "ExceptionGroup"
    assert exc["message"] == "validation failed (3 sub-exceptions)"
    assert exc["members_total"] == 3
    first, second, nested = exc["members"]
    assert (first["type"], first["message"]) == ("ValueError", "row 1 is negative")
    assert second["message"] == "row 2 is negative"
    assert nested["type"] == "ExceptionGroup"
    assert nested["members_total"] == 2
    assert [(m["type"], m["message"]) for m in nested["members"]] == [
        ("KeyError", "'name'"),
        ("TypeError", "age must be int"),
    ]


# -- User story 2: depth and scope ------------------------------------------------------------------


def test_deep_recursion_caps_frames_and_reports_the_total(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, RECURSION)
    out = autopsy(api, sid, max_frames=3, include_variables_for_frames=3)
    assert [f["function"] for f in out["frames"]] == ["walk", "walk", "walk"]
    assert out["total_frames"] == 302
    assert out["frames_truncated"] is True
    depths = [by_name(f["arguments"])["depth"]["value"] for f in out["frames"]]
    assert depths == ["0", "1", "2"]
    assert out["exception"]["message"] == "no leaf under 300"

    default = autopsy(api, sid)
    assert len(default["frames"]) == 10
    assert default["total_frames"] == 302
    assert "arguments" in default["frames"][0]
    assert "arguments" not in default["frames"][1]


def test_exception_in_a_worker_thread(api: httpx.Client, sessions: Sessions) -> None:
    sid, status = stop_at_exception(sessions, THREAD)
    out = autopsy(api, sid)
    assert out["thread_id"] == status["thread_id"]
    threads = ok(api.get(f"/sessions/{sid}/threads"))["threads"]
    assert next(t for t in threads if t["id"] == out["thread_id"])["name"] == "worker-1"
    assert out["exception"]["type"] == "IndexError"
    top = out["frames"][0]
    assert top["function"] == "work"
    assert top["line"] == line_of(THREAD, "worker-raise")
    assert by_name(top["arguments"])["batch"]["value"] == "3"
    items = by_name(top["locals"])["items"]
    assert items["length"] == 3
    assert [c["value"] for c in items["children"]] == ["0", "1", "2"]
    assert any(f.get("is_external") for f in out["frames"][1:])  # threading.py


def test_uncaught_exception_at_exit_is_inspectable_before_the_process_ends(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid, _ = stop_at_exception(sessions, EXIT)
    out = autopsy(api, sid)
    assert out["exception"]["type"] == "SystemError"
    assert out["exception"]["unhandled"] is True
    top = out["frames"][0]
    assert top["function"] == "<module>"
    assert top["line"] == line_of(EXIT, "exit-raise")
    assert by_name(top["locals"])["results"]["length"] == 5
    assert "sys" not in {c.get("name") for c in by_name(top["locals"])["sys"].get("children", [])}
    ok(api.post(f"/sessions/{sid}/continue"))
    end = sessions.wait(sid)
    assert end["status"] == "terminated"
    assert end["exit_code"] == 1


def test_code_without_source_is_marked_and_still_read(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, EXEC)
    out = autopsy(api, sid)
    assert out["exception"]["type"] == "ZeroDivisionError"
    assert out["exception"]["location"]["file"] == "<generated>"
    top = out["frames"][0]
    assert top["function"] == "compute"
    assert top["file"] == "<generated>"
    assert top["source_available"] is False
    assert "source" not in top
    assert by_name(top["arguments"])["x"]["value"] == "21"
    assert by_name(top["locals"])["y"]["value"] == "42"
    script_frame = out["frames"][-1]
    assert script_frame["file"] == EXEC
    assert "exec(compile" in script_frame["source"]["text"]
    assert out["partial"] is True
    assert any("no readable source" in w for w in out["warnings"])


def test_failing_repr_and_huge_locals_are_marked(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = stop_at_exception(sessions, LOCALS)
    response = api.get(f"/sessions/{sid}/autopsy")
    out = ok(response)
    top = out["frames"][0]
    args = by_name(top["arguments"])
    assert set(args) == {"account", "amount"}
    account = args["account"]
    assert {c["name"] for c in account["children"]} >= {"owner", "balance", "history"}
    history = by_name(account["children"])["history"]
    assert history["type"] == "list"
    assert "children" not in history
    variables = by_name(top["locals"])

    bad = variables["bad"]
    assert bad["repr_error"] is True
    assert bad["value"].startswith("<__main__.Exploding object at 0x")
    assert by_name(bad["children"])["kind"]["value"] == "'exploding'"

    big = variables["big"]
    assert big["length"] == 100_000
    assert big["truncated"] is True
    assert len(big["children"]) == 10
    assert big["children_truncated"] is True
    assert big["children_total"] == 100_000
    text = variables["text"]
    assert text["truncated"] is True
    assert len(text["value"]) < 1000
    assert variables["table"]["length"] == 500
    assert variables["table"]["children_truncated"] is True

    # 55 locals: 50 shown, the rest counted
    assert top["locals_truncated"] is True
    assert top["locals_total"] == 55
    assert len(top["locals"]) == 50
    assert len(response.content) < 40_000


# -- FR-007: not at an exception ----------------------------------------------------------------------


def test_not_at_an_exception_is_an_error(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "lookup-here")
    assert error_code(api.get(f"/sessions/{sid}/autopsy"), 409) == "NO_EXCEPTION"
    assert error_code(api.get(f"/sessions/{sid}/autopsy", params={"max_frames": 0}), 400) == "invalid_request"
    ok(api.post(f"/sessions/{sid}/continue"))
    sessions.wait(sid)
    assert error_code(api.get(f"/sessions/{sid}/autopsy"), 409) in ("NOT_PAUSED", "invalid_state")


# -- User story 3: with the stop, from /wait -------------------------------------------------------------


def test_wait_includes_the_autopsy_only_when_asked_and_only_at_exceptions(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    sessions.launch(sid, CHAIN, stop_on_exception="uncaught")
    out = ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30, "include_autopsy": True}))
    assert out["reason"] == "exception"
    bundle = out["autopsy"]
    assert bundle["exception"]["type"] == "__main__.ConfigError"
    assert len(bundle["inner_exceptions"]) == 2
    assert bundle["frames"][0]["function"] == "load"
    plain = ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    assert "autopsy" not in plain

    at_breakpoint, _ = sessions.start_at(OBJECTS, "lookup-here")
    out = ok(api.post(f"/sessions/{at_breakpoint}/wait", json={"timeout": 30, "include_autopsy": True}))
    assert out["reason"] == "breakpoint"
    assert "autopsy" not in out


def test_a_failing_test_stop_names_plain_python_types_and_functions(api: httpx.Client, sessions: Sessions) -> None:
    """debugpy marks the paused frame " (Current frame)" and the type with a note: answers carry neither."""
    sid, status = stop_at_exception(sessions, target("ex_unittest.py"), mode="userUnhandled")
    assert status["exception"]["type"] == "AssertionError", status
    assert status["location"]["function"] == "test_value", status

    stack = ok(api.get(f"/sessions/{sid}/stacktrace"))
    names = [f.get("function") or f.get("name") for f in stack["frames"]]
    assert "test_value" in names, names
    assert not any("(" in str(n) for n in names), names

    out = autopsy(api, sid)
    assert out["exception"]["type"] == "AssertionError"
    functions = [f["function"] for f in out["frames"]]
    assert "test_value" in functions, functions
    assert not any("Current frame" in f for f in functions), functions
    assert "note:" not in str(out)
