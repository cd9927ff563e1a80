"""The acceptance criteria for sessions, launch, execution, inspection, output and errors,
driven over HTTP against real debugpy targets the way an agent would."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.conftest import Relay, Sessions, end_tree, error_of, line_of, ok, output_text, target, until

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
LOOP = target("loop.py")
OBJECTS = target("objects.py")
MULTI = target("multi.py")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Relay]:
    """A relay with a tiny output buffer and a short debugger timeout."""
    r = Relay(
        tmp_path_factory.mktemp("tuned"),
        env={"DEBUGRELAY_OUTPUT_BUFFER_ENTRIES": "50", "DEBUGRELAY_REQUEST_TIMEOUT": "1"},
    )
    yield r
    r.stop()


# -- Appendix A, end to end ---------------------------------------------------------------------


def test_appendix_a_happy_path(api: httpx.Client, sessions: Sessions) -> None:
    created = ok(api.post("/sessions", json={"name": "debug-my-script"}), 201)
    sid = created["session_id"]
    sessions.created.append(sid)
    assert created["status"] == "created"
    bp = sessions.bp(sid, BASIC, line_of(BASIC, "loop-body"))
    assert bp["breakpoint_id"] and bp["verified"] is True
    assert sessions.launch(sid, BASIC, args=["--verbose"])["status"] in ("running", "paused")
    status = sessions.wait(sid)
    assert status["status"] == "paused" and status["reason"] == "breakpoint"
    assert status["location"] == {"file": BASIC, "line": line_of(BASIC, "loop-body"), "function": "average"}
    frames = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]
    scopes = ok(api.get(f"/sessions/{sid}/frames/{frames[0]['id']}/scopes"))["scopes"]
    assert scopes[0]["name"] == "Locals"
    variables = ok(api.get(f"/sessions/{sid}/scopes/{scopes[0]['reference']}/variables"))["variables"]
    assert {"name": "total", "value": "0", "type": "int"} in variables
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "value * 2"})) == {"result": "6", "type": "int"}
    stepped = ok(api.post(f"/sessions/{sid}/step-over"))
    assert stepped["status"] == "paused" and stepped["location"]["line"] == line_of(BASIC, "loop-body") - 1
    ok(api.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"))
    assert ok(api.post(f"/sessions/{sid}/continue"))["status"] in ("running", "terminated")
    final = sessions.wait(sid)
    assert final["status"] == "terminated" and final["exit_code"] == 0
    assert ok(api.delete(f"/sessions/{sid}")) == {"deleted": True, "session_id": sid}


# -- 7.1 sessions ----------------------------------------------------------------------------------


def test_ac_sm_1_create_returns_unique_session_id(api: httpx.Client, sessions: Sessions) -> None:
    ids = {sessions.create() for _ in range(5)}
    assert len(ids) == 5


def test_ac_sm_2_list_returns_sessions_with_status(api: httpx.Client, sessions: Sessions) -> None:
    running, _ = sessions.start_at(BASIC, "add-body")
    idle = sessions.create(name="idle-one")
    listed = {s["session_id"]: s for s in ok(api.get("/sessions"))["sessions"]}
    assert listed[running]["status"] == "paused"
    assert listed[idle]["status"] == "created" and listed[idle]["name"] == "idle-one"


def test_ac_sm_3_delete_terminates_the_target_and_its_process_tree(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(LOOP, "loop-line")
    pid = ok(api.get(f"/sessions/{sid}"))["target"]["pid"]
    tree = [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]
    adapters = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any("debugpy/adapter" in c for c in (p.info["cmdline"] or []))
        and str(ok(api.get(f"/sessions/{sid}"))["target"]["port"]) in " ".join(p.info["cmdline"] or [])
    ]
    ok(api.delete(f"/sessions/{sid}"))
    error_of(api.get(f"/sessions/{sid}"), 404)
    for p in [*tree, *adapters]:
        assert not psutil.pid_exists(p) or psutil.Process(p).status() == psutil.STATUS_ZOMBIE


def test_ac_sm_4_idle_session_warns_then_expires(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create(timeout_minutes=0.02)  # 1.2 s

    def listed() -> dict[str, object] | None:
        return next((s for s in ok(api.get("/sessions"))["sessions"] if s["session_id"] == sid), None)

    warned = until(lambda: (s := listed()) and "warning" in s and s, "the expiry warning")
    assert "expire" in str(warned["warning"])
    until(lambda: listed() is None, "the session to expire")
    assert error_of(api.get(f"/sessions/{sid}/status"), 404)["code"] == "session_not_found"


def test_ac_sm_4_any_call_resets_the_idle_timeout(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create(timeout_minutes=60)
    before = ok(api.get(f"/sessions/{sid}/ping"))["expires_in_seconds"]
    assert before > 3590
    assert ok(api.patch(f"/sessions/{sid}", json={"timeout_minutes": 120}))["timeout_minutes"] == 120
    assert ok(api.get(f"/sessions/{sid}/ping"))["expires_in_seconds"] > 7100


def test_ac_sm_5_ten_concurrent_sessions(api: httpx.Client, sessions: Sessions) -> None:
    ids = []
    for _ in range(10):
        sid = sessions.create()
        sessions.bp(sid, BASIC, line_of(BASIC, "add-body"))
        sessions.launch(sid, BASIC)
        ids.append(sid)
    for sid in ids:
        assert sessions.wait(sid)["status"] == "paused"
    for sid in ids:
        value = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))
        assert value["result"] == "3"


# -- 7.2 launching ---------------------------------------------------------------------------------


def test_ac_pl_1_launch_starts_debugging(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    launched = sessions.launch(sid, BASIC, stop_on_entry=True)
    assert launched["status"] in ("running", "paused")
    status = sessions.wait(sid)
    assert status["status"] == "paused" and status["reason"] == "entry"
    assert status["location"]["file"] == BASIC


def test_ac_pl_2_arguments_reach_the_script(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, BASIC, args=["--epochs", "10", "two words"])
    assert sessions.wait(sid)["status"] == "terminated"
    assert "args ['--epochs', '10', 'two words']" in output_text(api, sid)


def test_ac_pl_3_environment_reaches_the_script(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, BASIC, env={"GREETING": "bonjour"})
    sessions.wait(sid)
    assert "bonjour stdout" in output_text(api, sid, "stdout")


def test_ac_pl_4_cwd_drives_relative_imports(api: httpx.Client, sessions: Sessions, tmp_path: Path) -> None:
    script = tmp_path / "uses_pkg.py"
    script.write_text("from pkg.helpers import double\nprint('doubled', double(4))\n")
    sid = sessions.create()
    sessions.launch(sid, str(script), cwd=str(Path(MULTI).parent), env={"PYTHONPATH": "."})
    status = sessions.wait(sid)
    assert status["exit_code"] == 0, output_text(api, sid)
    assert "doubled 8" in output_text(api, sid)


def test_ac_pl_5_syntax_error_fails_the_launch_and_keeps_the_session(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    bad = target("syntax_error.py")
    err = error_of(api.post(f"/sessions/{sid}/launch", json={"script": bad}), 400)
    assert err["code"] == "syntax_error"
    details = err["details"]
    assert details["file"] == bad and details["line"] == 1 and details["offset"] and "def broken" in details["text"]
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "created"
    sessions.launch(sid, BASIC)
    assert sessions.wait(sid)["status"] == "terminated"


def test_ac_pl_6_launch_uses_the_given_interpreter(api: httpx.Client, sessions: Sessions, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    script = tmp_path / "which.py"
    script.write_text("import sys\nprint('exe', sys.executable)\n")
    sid = sessions.create()
    sessions.launch(sid, str(script), python=python)
    assert sessions.wait(sid)["exit_code"] == 0
    assert f"exe {python}" in output_text(api, sid)


def test_unknown_interpreter_is_a_clear_error(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    err = error_of(api.post(f"/sessions/{sid}/launch", json={"script": BASIC, "python": "/nope/python3"}), 400)
    assert err["code"] == "launch_failed"
    # restarting it repeats that launch: the restart asked for nothing wrong, the launch it repeats cannot run
    again = error_of(api.post(f"/sessions/{sid}/restart"), 409, "launch_failed")
    assert "/nope/python3" in again["message"], again
    assert ok(api.get(f"/sessions/{sid}"))["status"] == "failed"


def test_module_launch_and_missing_script(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/launch", json={"module": "pkg.helpers", "cwd": str(Path(MULTI).parent)}))
    assert sessions.wait(sid)["exit_code"] == 0
    other = sessions.create()
    err = error_of(api.post(f"/sessions/{other}/launch", json={"script": "/nope/missing.py"}), 400)
    assert err["code"] == "file_not_found"
    assert ok(api.get(f"/sessions/{other}/status"))["status"] == "created"


def test_stdin_inputs_and_input_endpoint(api: httpx.Client, sessions: Sessions) -> None:
    script = target("ask.py")
    sid = sessions.create()
    sessions.launch(sid, script, stdin_inputs=["ada", "green"])
    assert sessions.wait(sid)["exit_code"] == 0
    assert "got ada green" in output_text(api, sid)
    live = sessions.create()
    sessions.launch(live, script)
    ok(api.post(f"/sessions/{live}/input", json={"input": "bob\n"}))
    ok(api.post(f"/sessions/{live}/stdin", json={"input": "red\n"}))
    assert sessions.wait(live)["exit_code"] == 0
    assert "got bob red" in output_text(api, live)


def test_target_spawning_python_children_does_not_hang(api: httpx.Client, sessions: Sessions) -> None:
    script = target("spawner.py")
    sid = sessions.create()
    sessions.launch(sid, script)
    assert sessions.wait(sid)["exit_code"] == 0
    assert "child: child says hi" in output_text(api, sid)


# -- 7.4 execution control -------------------------------------------------------------------------


def test_ac_ec_1_continue_runs_to_next_breakpoint_then_to_the_end(api: httpx.Client, sessions: Sessions) -> None:
    sid, status = sessions.start_at(BASIC, "loop-body")
    seen = []
    while status["status"] == "paused":
        seen.append(ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "value"}))["result"])
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid)
    assert seen == ["3", "4", "5"]
    assert status["status"] == "terminated" and status["exit_code"] == 0


def test_ac_ec_2_step_over_does_not_enter_calls(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "call-average")
    stepped = ok(api.post(f"/sessions/{sid}/step-over"))
    assert stepped["location"]["function"] == "main"
    assert stepped["location"]["line"] == line_of(BASIC, "call-average") + 1


def test_ac_ec_3_step_into_enters_the_call(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "call-average")
    stepped = ok(api.post(f"/sessions/{sid}/step-into"))
    assert stepped["location"]["function"] == "average"


def test_ac_ec_4_step_out_returns_to_the_caller(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    stepped = ok(api.post(f"/sessions/{sid}/step-out"))
    assert stepped["location"]["function"] == "average"
    assert stepped["location"]["line"] == line_of(BASIC, "loop-body")


def test_ac_ec_5_pause_stops_a_running_program(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP)
    until(lambda: "done" in output_text(api, sid), "the loop to reach its endless part")
    paused = ok(api.post(f"/sessions/{sid}/pause"))
    assert paused["status"] == "paused" and paused["reason"] == "pause"
    assert paused["location"]["file"] == LOOP
    ok(api.post(f"/sessions/{sid}/continue"))
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "running"


def test_ac_ec_6_every_step_answers_with_the_new_location(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "call-average")
    for step in ("step-into", "step-over", "step-over", "step-into", "step-out"):
        answer = ok(api.post(f"/sessions/{sid}/{step}"))
        assert answer["status"] == "paused"
        assert answer["location"]["file"] == BASIC and answer["location"]["line"] > 0


def test_wait_returns_at_once_when_paused_and_times_out_while_running(api: httpx.Client, sessions: Sessions) -> None:
    sid, first = sessions.start_at(BASIC, "add-body")
    assert sessions.wait(sid, timeout=0)["location"] == first["location"]
    running = sessions.create()
    sessions.launch(running, LOOP)
    answer = ok(api.post(f"/sessions/{running}/wait", json={"timeout": 0.2}))
    assert answer["status"] == "running" and answer["timed_out"] is True


def test_a_continue_that_meets_no_stop_in_its_wait_names_the_next_calls(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP, stop_on_entry=True)
    assert sessions.wait(sid)["reason"] == "entry"
    going = ok(api.post(f"/sessions/{sid}/continue", json={"timeout": 0.2}))
    assert (going["status"], going["timed_out"]) == ("running", True)
    assert "/wait" in going["hint"] and "/pause" in going["hint"]
    assert not going["message"].endswith("/pause")  # the message says what happened; the hint what to do


def test_restart_runs_again_with_the_same_breakpoints(api: httpx.Client, sessions: Sessions) -> None:
    sid, first = sessions.start_at(BASIC, "add-body")
    ok(api.post(f"/sessions/{sid}/restart"))
    again = sessions.wait(sid)
    assert again["status"] == "paused" and again["location"] == first["location"]


def test_terminate_kills_the_target_and_keeps_the_session(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP)
    pid = ok(api.get(f"/sessions/{sid}"))["target"]["pid"]
    done = ok(api.post(f"/sessions/{sid}/terminate"))
    assert done["status"] == "terminated"
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert ok(api.get(f"/sessions/{sid}"))["session_id"] == sid


def test_detach_leaves_the_target_running(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(LOOP, "loop-line")
    pid = ok(api.get(f"/sessions/{sid}"))["target"]["pid"]
    detached = ok(api.post(f"/sessions/{sid}/detach"))
    assert detached["status"] == "terminated" and detached["reason"] == "detached"
    try:
        assert psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    finally:
        end_tree(pid)


# -- 7.5 inspection ----------------------------------------------------------------------------------


def test_ac_si_1_stacktrace_has_file_line_function(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    trace = ok(api.get(f"/sessions/{sid}/stacktrace"))
    names = [f["name"] for f in trace["frames"]]
    assert names[:4] == ["add", "average", "main", "<module>"]
    assert trace["total_frames"] == len(trace["frames"])
    assert all(f["file"] == BASIC and f["line"] > 0 for f in trace["frames"])
    paged = ok(api.get(f"/sessions/{sid}/stacktrace", params={"start_frame": 1, "max_frames": 2}))
    assert [f["name"] for f in paged["frames"]] == ["average", "main"]
    assert [f["id"] for f in paged["frames"]] == [1, 2]


def test_ac_si_2_variables_list_all_locals(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    names = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    assert names["a"]["value"] == "0" and names["b"]["value"] == "3" and names["a"]["type"] == "int"
    caller = {v["name"] for v in ok(api.get(f"/sessions/{sid}/frames/1/variables"))["variables"]}
    assert {"values", "total", "value"} <= caller
    assert not any(n.endswith(" variables") for n in caller)


def test_ac_si_3_objects_expand_through_references(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    local = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    nested = local["nested"]
    assert nested["expandable"] is True
    children = ok(api.get(f"/sessions/{sid}/variables/{nested['variable_reference']}"))
    keys = {c["name"] for c in children["items"]}
    assert {"'a'", "'n'"} <= keys
    a = next(c for c in children["items"] if c["name"] == "'a'")
    deeper = ok(api.get(f"/sessions/{sid}/variables/{a['variable_reference']}"))["items"]
    assert deeper[0]["name"] == "'b'"


def test_ac_si_4_evaluate_returns_result_and_type(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "len(big)"})) == {
        "result": "100000",
        "type": "int",
    }
    assert (
        ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "root.value", "context": "watch"}))["result"]
        == "'root'"
    )
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "count", "format": "hex"}))["result"] == "0xff"
    assert (
        ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "count > 1", "format": "hex"}))["result"] == "True"
    )  # only integers are reformatted


def test_ac_si_5_invalid_expression_is_a_clear_error(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    err = error_of(api.post(f"/sessions/{sid}/evaluate", json={"expression": "undefined_name + 1"}), 400)
    assert err["code"] == "evaluation_error" and "NameError" in str(err["message"])
    err = error_of(api.post(f"/sessions/{sid}/evaluate", json={"expression": "1 +"}), 400)
    assert "SyntaxError" in str(err["message"])
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "paused"


def test_ac_si_6_large_values_are_truncated_and_expandable(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    local = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    big, text = local["big"], local["text"]
    assert big["truncated"] is True and big["expandable"] is True and big["length"] == 100_000
    assert text["truncated"] is True and text["length"] == 10_000 and len(text["value"]) < 300
    page = ok(api.get(f"/sessions/{sid}/variables/{big['variable_reference']}", params={"start": 10, "count": 5}))
    assert [i["index"] for i in page["items"]] == [10, 11, 12, 13, 14]
    assert [i["value"] for i in page["items"]] == ["10", "11", "12", "13", "14"]
    assert page["has_more"] is True and page["total"] == 100_000


def test_ac_si_7_circular_references_are_marked(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    local = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    root = ok(api.get(f"/sessions/{sid}/variables/{local['root']['variable_reference']}"))["items"]
    self_ref = next(c for c in root if c["name"] == "self_ref")
    assert self_ref["circular"] is True and self_ref["value"].startswith("<circular")
    child = ok(api.get(f"/sessions/{sid}/variables/{local['child']['variable_reference']}"))["items"]
    parent = next(c for c in child if c["name"] == "parent")
    assert "circular" not in parent  # the parent is not an ancestor of this view
    children = next(
        c
        for c in ok(api.get(f"/sessions/{sid}/variables/{parent['variable_reference']}"))["items"]
        if c["name"] == "children"
    )
    first = ok(api.get(f"/sessions/{sid}/variables/{children['variable_reference']}"))["items"][0]
    assert first["circular"] is True


def test_failing_repr_falls_back_to_type_and_id(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    local = {v["name"]: v for v in ok(api.get(f"/sessions/{sid}/frames/0/variables"))["variables"]}
    assert local["bad"]["type"] == "BadRepr"
    assert "BadRepr object at 0x" in local["bad"]["value"] and "exploded" not in local["bad"]["value"]


def test_set_variable_changes_the_programs_state(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    scope = ok(api.get(f"/sessions/{sid}/frames/0/scopes"))["scopes"][0]["reference"]
    assert ok(api.post(f"/sessions/{sid}/variables/{scope}/set", json={"name": "b", "value": "40"}))["value"] == "40"
    assert ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": "a + b"}))["result"] == "40"


def test_watch_expressions_persist_and_follow_each_stop(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    added = ok(api.post(f"/sessions/{sid}/watch", json={"expression": "total + value"}))
    assert added == {"watch_id": "w1", "expression": "total + value", "available": False}
    error_of(api.post(f"/sessions/{sid}/watch", json={"expression": "total +"}), 400)
    sessions.bp(sid, BASIC, line_of(BASIC, "loop-body"))
    sessions.launch(sid, BASIC)
    assert sessions.wait(sid)["status"] == "paused"
    broken = ok(api.post(f"/sessions/{sid}/watch", json={"expression": "nope_not_defined"}))
    assert broken["watch_id"] == "w2" and "NameError" in broken["error"]
    seen = []
    for _ in range(3):
        first, _ = ok(api.get(f"/sessions/{sid}/watch"))["watches"]
        seen.append(first["result"])
        ok(api.post(f"/sessions/{sid}/continue"))
        sessions.wait(sid)
    assert seen == ["3", "7", "12"]
    assert all(w["available"] is False for w in ok(api.get(f"/sessions/{sid}/watch"))["watches"])
    ok(api.delete(f"/sessions/{sid}/watch/w1"))
    assert [w["watch_id"] for w in ok(api.get(f"/sessions/{sid}/watch"))["watches"]] == ["w2"]
    error_of(api.delete(f"/sessions/{sid}/watch/w1"), 404)


def test_a_stop_in_a_threaded_program_names_its_thread_and_all_threads(api: httpx.Client, sessions: Sessions) -> None:
    script = target("threads.py")
    sid, status = sessions.start_at(script, "worker-line")
    assert status["thread_name"] in ("Worker-1", "Worker-2") and status["breakpoint_ids"] == ["bp_1"]
    assert status["location"]["line"] == line_of(script, "worker-line")
    assert status["thread_count"] >= 3
    names = {t["name"]: t["status"] for t in status["all_threads"]}  # the first stop lists them
    assert {"MainThread", "Worker-1", "Worker-2"} <= set(names) and set(names.values()) == {"paused"}
    threads = {t["name"]: t for t in ok(api.get(f"/sessions/{sid}/threads"))["threads"]}
    assert threads[status["thread_name"]]["is_current"] is True  # the other worker, at the same line


def test_children_paging_and_summary_mode(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(OBJECTS, "inspect-here")
    summary = {
        v["name"]: v
        for v in ok(api.get(f"/sessions/{sid}/frames/0/variables", params={"summary": "true"}))["variables"]
    }
    assert summary["big"] == {
        "name": "big",
        "type": "list",
        "length": 100_000,
        "expandable": True,
        "variable_reference": summary["big"]["variable_reference"],
    }
    assert "value" not in summary["count"]
    ref = summary["big"]["variable_reference"]
    page = ok(api.get(f"/sessions/{sid}/frames/0/variables/{ref}/children", params={"offset": 99_998, "limit": 5}))
    assert [i["value"] for i in page["items"]] == ["99998", "99999"]
    assert page["total"] == 100_000 and page["has_more"] is False


def test_threads_and_completions(api: httpx.Client, sessions: Sessions) -> None:
    sid, status = sessions.start_at(BASIC, "add-body")
    threads = ok(api.get(f"/sessions/{sid}/threads"))["threads"]
    main = next(t for t in threads if t["id"] == status["thread_id"])
    assert main["name"] == "MainThread" and main["state"] == "stopped" and main["is_current"] is True
    labels = {t["label"] for t in ok(api.post(f"/sessions/{sid}/completions", json={"text": "ave"}))["targets"]}
    assert "average" in labels


# -- 7.6 multi-file ------------------------------------------------------------------------------------


def test_ac_mf_1_2_breakpoint_in_an_imported_module_and_stack_across_files(
    api: httpx.Client, sessions: Sessions
) -> None:
    helpers = str(Path(MULTI).parent / "pkg" / "helpers.py")
    sid = sessions.create()
    sessions.bp(sid, helpers, line_of(helpers, "double-body"))
    sessions.launch(sid, MULTI)
    status = sessions.wait(sid)
    assert status["location"]["file"] == helpers
    files = [f["file"] for f in ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"]]
    assert files[:2] == [helpers, MULTI]


def test_ac_mf_3_step_into_follows_into_the_imported_module(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(MULTI, "call-double")
    stepped = ok(api.post(f"/sessions/{sid}/step-into"))
    assert stepped["location"]["file"].endswith("pkg/helpers.py") and stepped["location"]["function"] == "double"


def test_ac_mf_4_source_of_any_frame(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    frame = ok(api.get(f"/sessions/{sid}/stacktrace"))["frames"][1]
    src = ok(
        api.get(f"/sessions/{sid}/source", params={"path": frame["file"], "start": frame["line"], "end": frame["line"]})
    )
    assert "add(total, value)" in src["content"] and src["total_lines"] > 10
    missing = target("nope.py")  # in the program's folder, but not there
    assert error_of(api.get(f"/sessions/{sid}/source", params={"path": missing}), 400)["code"] == "file_not_found"
    # outside the folders the relay reads: refused before the relay even looks whether it exists
    assert error_of(api.get(f"/sessions/{sid}/source", params={"path": "/nope.py"}), 403)["code"] == "refused"


# -- 7.7 output ----------------------------------------------------------------------------------------


def test_ac_oh_1_2_3_stdout_and_stderr_with_timestamps(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, BASIC)
    sessions.wait(sid)
    outputs = ok(api.get(f"/sessions/{sid}/output"))["outputs"]
    by_type = {o["type"]: o for o in outputs}
    assert "hello stdout\n" in [o["text"] for o in outputs if o["type"] == "stdout"]
    assert by_type["stderr"]["text"] == "warn stderr\n"
    stamps = [o["timestamp"] for o in outputs]
    assert stamps == sorted(stamps) and all(s.endswith("Z") for s in stamps)


def test_ac_oh_4_output_is_paginated_by_cursor(api: httpx.Client, sessions: Sessions, tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    script.write_text("for i in range(30):\n    print('line', i)\n")
    sid = sessions.create()
    sessions.launch(sid, str(script))
    sessions.wait(sid)
    seen, cursor = [], None
    while True:
        page = ok(api.get(f"/sessions/{sid}/output", params={"limit": 7, **({"since": cursor} if cursor else {})}))
        seen += [o["text"] for o in page["outputs"]]
        cursor = page["cursor"]
        if not page["has_more"]:
            break
    assert seen == [f"line {i}\n" for i in range(30)]
    assert ok(api.get(f"/sessions/{sid}/output", params={"since": cursor}))["outputs"] == []


def test_output_buffer_is_capped_and_says_so(tuned: Relay, tmp_path: Path) -> None:
    api = tuned.http
    script = tmp_path / "flood.py"
    script.write_text("for i in range(200):\n    print('row', i)\n")
    sid = ok(api.post("/sessions", json={}), 201)["session_id"]
    ok(api.post(f"/sessions/{sid}/launch", json={"script": str(script)}))
    ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    page = ok(api.get(f"/sessions/{sid}/output", params={"since": "1", "limit": 1000}))
    assert page["dropped"] and "dropped" in page["message"]
    assert page["outputs"][-1]["text"] == "row 199\n" and len(page["outputs"]) == 50
    ok(api.delete(f"/sessions/{sid}"))


# -- 7.8 errors ------------------------------------------------------------------------------------------


def test_ac_eh_1_2_unknown_session_is_404_with_code_message_hint(api: httpx.Client) -> None:
    for method, path in [
        ("GET", "/sessions/sess_nope"),
        ("GET", "/sessions/sess_nope/status"),
        ("POST", "/sessions/sess_nope/continue"),
        ("DELETE", "/sessions/sess_nope"),
    ]:
        err = error_of(api.request(method, path), 404)
        assert err["code"] == "session_not_found" and "sess_nope" in str(err["message"])


def test_ac_eh_3_invalid_body_is_400_with_validation_errors(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    err = error_of(api.post(f"/sessions/{sid}/launch", json={"script": BASIC, "args": "not-a-list"}), 400)
    assert "args" in str(err["message"]) + str(err["details"])
    err = error_of(api.post(f"/sessions/{sid}/launch", json={"scirpt": BASIC}), 400)
    assert "scirpt" in str(err["message"]) + str(err["details"])
    error_of(
        api.post(f"/sessions/{sid}/launch", content=b"{not json", headers={"content-type": "application/json"}), 400
    )
    error_of(api.post("/sessions", json={"timeout_minutes": -1}), 400)
    error_of(api.post(f"/sessions/{sid}/wait", json={"timeout": "soon"}), 400)
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "created"


def nested(depth: int) -> Any:
    """A value with ``depth`` arrays and objects, each in the one before."""
    value: Any = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"in": value}
    return value


def test_a_body_nested_past_64_levels_is_400_on_every_route_and_changes_nothing(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create(name="kept")
    before = ok(api.get("/sessions"))["sessions"]
    mcp = {"Accept": "application/json, text/event-stream"}
    deep = nested(600)
    for method, path, body, headers in [
        ("POST", "/sessions", {"name": "deep", "labels": deep}, {}),
        ("POST", "/sessions/import", {"format": 1, "name": "deep", "labels": deep}, {}),
        ("POST", f"/sessions/{sid}/launch", {"script": BASIC, "env": deep}, {}),
        ("POST", f"/sessions/{sid}/breakpoints", {"source": {"path": BASIC}, "line": 1, "x": deep}, {}),
        ("POST", "/breakpoint-profiles", {"name": "deep", "breakpoints": deep}, {}),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": deep}, mcp),
    ]:
        err = error_of(api.request(method, path, json=body, headers=headers), 400, "invalid_request")
        assert err["details"] == {"max_depth": 64} and "64 deep" in err["message"], (path, err)
    assert ok(api.get("/sessions"))["sessions"] == before
    assert ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"] == []

    # brackets inside strings nest nothing; 64 levels are the body's own business: refused for its shape
    sessions.create(name='\\"' + "[{" * 99)
    err = error_of(api.post("/sessions", json={"name": "deep", "labels": nested(63)}), 400, "invalid_request")
    assert "max_depth" not in err["details"], err


def test_a_clone_of_a_clone_of_a_long_name_keeps_its_name_within_200(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create(name="n" * 200)
    first = ok(api.post(f"/sessions/{sid}/clone"), 201)
    sessions.created.append(first["session_id"])
    second = ok(api.post(f"/sessions/{first['session_id']}/clone"), 201)
    sessions.created.append(second["session_id"])
    for made in (first, second):
        assert len(made["name"]) <= 200 and made["name"].endswith("… (clone)"), made["name"]
        assert made["name"].startswith("n" * 150)


def test_inspection_while_running_is_409_not_paused(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, LOOP)
    for path in ("/stacktrace", "/frames/0/scopes", "/frames/0/variables"):
        assert error_of(api.get(f"/sessions/{sid}{path}"), 409)["code"] == "NOT_PAUSED"
    assert error_of(api.post(f"/sessions/{sid}/evaluate", json={"expression": "1"}), 409)["code"] == "NOT_PAUSED"
    assert error_of(api.post(f"/sessions/{sid}/step-over"), 409)["code"] == "NOT_PAUSED"


def test_stale_references_are_rejected_not_crashing(api: httpx.Client, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(BASIC, "add-body")
    assert error_of(api.get(f"/sessions/{sid}/variables/999999"), 404)["code"] == "INVALID_REFERENCE"
    assert error_of(api.get(f"/sessions/{sid}/frames/99/scopes"), 404)["code"] == "INVALID_REFERENCE"
    error_of(api.get(f"/sessions/{sid}/stacktrace", params={"max_frames": 0}), 400)
    error_of(api.get(f"/sessions/{sid}/output", params={"since": "garbage"}), 400)
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "paused"


def test_ac_eh_5_debugger_timeout_is_504_with_retry_guidance(tuned: Relay) -> None:
    api = tuned.http
    sid = ok(api.post("/sessions", json={}), 201)["session_id"]
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"source": {"path": BASIC}, "line": line_of(BASIC, "add-body")}))
    ok(api.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
    ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
    err = error_of(api.post(f"/sessions/{sid}/evaluate", json={"expression": "__import__('time').sleep(3)"}), 504)
    assert err["code"] == "debugpy_timeout" and "retry" in str(err["hint"]).lower()
    ok(api.delete(f"/sessions/{sid}"))


# -- 7.10 security and server endpoints -------------------------------------------------------------------


def test_ac_se_1_binds_to_loopback_by_default(relay: Relay) -> None:
    listening = [c.laddr for c in psutil.Process(relay.proc.pid).net_connections() if c.status == "LISTEN"]
    assert listening and all(addr.ip == "127.0.0.1" for addr in listening)
    assert ok(relay.http.get("/config"))["host"] == "127.0.0.1"


def test_ac_se_2_non_loopback_bind_needs_a_token_and_warns(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DEBUGRELAY_TOKEN"}
    refused = subprocess.run(
        [sys.executable, "-m", "debugrelay.cli", "serve", "--host", "0.0.0.0", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode != 0 and "DEBUGRELAY_TOKEN" in refused.stderr
    guarded = Relay(tmp_path, env={"DEBUGRELAY_TOKEN": "s3cret-token"}, args=["--host", "0.0.0.0"])
    try:
        assert "WARNING" in guarded.log.read_text()
        anonymous = httpx.get(f"{guarded.url}/sessions")
        assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "unauthorized"
        assert ok(guarded.http.get("/sessions"))["sessions"] == []
        assert ok(guarded.http.get("/config"))["token"] == "***"
        assert "s3cret-token" not in guarded.log.read_text()
    finally:
        guarded.stop()


def test_server_health_info_config_and_schema(api: httpx.Client) -> None:
    assert ok(api.get("/health"))["status"] == "ok"
    info = ok(api.get("/info"))
    assert info["version"] and "launch" in info["capabilities"] and "local" in info["launchers"]
    assert ok(api.get("/config"))["port"] > 0
    schema = ok(api.get("/schema/openapi.json"))
    assert "/sessions/{session_id}/launch" in schema["paths"]


def test_shutdown_ends_every_session(tmp_path: Path) -> None:
    relay = Relay(tmp_path)
    try:
        sid = ok(relay.http.post("/sessions", json={}), 201)["session_id"]
        ok(relay.http.post(f"/sessions/{sid}/launch", json={"script": LOOP}))
        pid = ok(relay.http.get(f"/sessions/{sid}"))["target"]["pid"]
        assert ok(relay.http.post("/shutdown"))["shutting_down"] is True
        relay.proc.wait(30)
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    finally:
        relay.stop()


def test_a_method_a_path_does_not_take_is_405_with_allow(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    response = api.put(f"/sessions/{sid}/continue")
    assert response.status_code == 405
    assert response.headers["allow"] == "OPTIONS, POST"
    error = response.json()["error"]
    assert error["code"] == "method_not_allowed"
    assert error["details"]["allowed"] == ["OPTIONS", "POST"]
    assert api.put("/sessions").headers["allow"] == "GET, OPTIONS, POST"


def test_the_launch_answer_says_which_python_runs_the_program_and_when_it_runs_slowly(
    api: httpx.Client, sessions: Sessions
) -> None:
    sid = sessions.create()
    launched = sessions.launch(sid, target("basic.py"))
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"  # the local target runs the relay's Python
    assert launched["python"] == version, launched
    assert ok(api.get(f"/sessions/{sid}"))["python"] == version  # and the session says it while it lives
    if sys.version_info < (3, 12):  # the line tracer: 4-7x on CPU-bound code, said with the way out
        assert "3.12+" in launched["warning"] and "'python'" in launched["warning"], launched
    else:
        assert "warning" not in launched, launched


def test_a_bad_query_parameter_is_named_as_the_client_sent_it(api: httpx.Client, sessions: Sessions) -> None:
    sid = sessions.create()
    refused = error_of(api.get(f"/sessions/{sid}/variables", params={"scope": "bogus"}), 400, "invalid_request")
    assert [e["key"] for e in refused["details"]["errors"]] == ["scope"]
