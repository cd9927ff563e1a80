"""Breakpoints that never surprise: AC-BP-* and AC-PE-* and the cases debugpy
gets wrong on its own, driven over HTTP against real debugpy targets the way an agent would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Sessions, error_of, line_of, ok, output_text, target

pytestmark = pytest.mark.integration
Api = httpx.Client

LINES = target("bp_lines.py")
COUNTER = target("bp_counter.py")
EXCEPTIONS = target("bp_exceptions.py")
WAITS = target("bp_waits.py")
FOREVER = target("bp_forever.py")
MULTI = target("multi.py")
HELPERS = target("pkg/helpers.py")


# -- helpers ------------------------------------------------------------------------------------


def listed(api: Api, sid: str) -> dict[str, dict[str, Any]]:
    """GET /breakpoints as {breakpoint_id: breakpoint}."""
    return {b["breakpoint_id"]: b for b in ok(api.get(f"/sessions/{sid}/breakpoints"))["breakpoints"]}


def evaluate(api: Api, sid: str, expression: str) -> str:
    result: str = ok(api.post(f"/sessions/{sid}/evaluate", json={"expression": expression}))["result"]
    return result


def stops_until_end(api: Api, sessions: Sessions, sid: str, expression: str) -> list[str]:
    """Wait, evaluate ``expression`` at each pause and continue until the target ends; the values seen."""
    seen: list[str] = []
    status = sessions.wait(sid)
    while status["status"] == "paused":
        assert len(seen) < 40, f"too many pauses: {seen}"
        seen.append(evaluate(api, sid, expression))
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid)
    assert status["status"] == "terminated", status
    return seen


def line_bp(path: str, line: int, **extra: Any) -> dict[str, Any]:
    return {"source": {"path": path}, "line": line, **extra}


# -- line breakpoints: where they can be set -------------------------------------------------------


def test_ac_bp_1_valid_line_returns_verified(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"))
    assert bp["verified"] is True
    assert bp["kind"] == "line"
    assert bp["hit_count"] == 0
    assert bp["breakpoint_id"].startswith("bp_")
    assert "message" not in bp
    assert "pending" not in bp
    assert listed(api, sid)[bp["breakpoint_id"]]["line"] == line_of(COUNTER, "step-body")


def test_breakpoint_set_before_launch_pauses_and_says_which(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"))
    sessions.launch(sid, COUNTER)
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["reason"] == "breakpoint"
    assert status["location"]["line"] == line_of(COUNTER, "step-body")
    assert status["breakpoint_ids"] == [bp["breakpoint_id"]]
    assert listed(api, sid)[bp["breakpoint_id"]]["hit_count"] == 1


def test_breakpoint_set_while_running_pauses(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.launch(sid, FOREVER)
    assert ok(api.get(f"/sessions/{sid}/status"))["status"] == "running"
    bp = sessions.bp(sid, FOREVER, line_of(FOREVER, "spin"))
    assert bp["verified"] is True
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["breakpoint_ids"] == [bp["breakpoint_id"]]
    assert status["location"]["line"] == line_of(FOREVER, "spin")


def test_breakpoint_set_while_paused_pauses_after_continue(api: Api, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(COUNTER, "loop-call")
    first = next(iter(listed(api, sid)))
    report = sessions.bp(sid, COUNTER, line_of(COUNTER, "report"))
    ok(api.delete(f"/sessions/{sid}/breakpoints/{first}"))
    ok(api.post(f"/sessions/{sid}/continue"))
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["breakpoint_ids"] == [report["breakpoint_id"]]
    assert status["location"]["line"] == line_of(COUNTER, "report")


def test_a_list_sets_several_breakpoints_at_once(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    body = [line_bp(COUNTER, line_of(COUNTER, "point-init")), line_bp(COUNTER, line_of(COUNTER, "report"))]
    created = ok(api.post(f"/sessions/{sid}/breakpoints", json=body))["breakpoints"]
    assert [b["verified"] for b in created] == [True, True]
    ids = [b["breakpoint_id"] for b in created]
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["breakpoint_ids"] == [ids[0]]
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["breakpoint_ids"] == [ids[1]]


def test_clearing_every_breakpoint_lets_the_program_run_to_its_end(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    assert ok(api.delete(f"/sessions/{sid}/breakpoints")) == {"session_id": sid, "removed": []}
    step_body, report = line_of(COUNTER, "step-body"), line_of(COUNTER, "report")
    ids = [sessions.bp(sid, COUNTER, line)["breakpoint_id"] for line in (step_body, report)]
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["breakpoint_ids"] == [ids[0]]  # step-body runs 20 times: a stop each time
    capture = {"file": COUNTER, "line": line_of(COUNTER, "loop-call"), "expressions": ["i"]}
    point = ok(api.post(f"/sessions/{sid}/captures", json=capture), 201)

    assert ok(api.delete(f"/sessions/{sid}/breakpoints")) == {"session_id": sid, "removed": ids}
    assert listed(api, sid) == {}
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "terminated"  # neither breakpoint stopped it again
    table = ok(api.get(f"/sessions/{sid}/captures/{point['capture_id']}"))
    assert [row[2] for row in table["rows"]] == list(range(2, 21))  # the capture point stayed and recorded
    assert error_of(api.delete("/sessions/sess_nope/breakpoints"), 404, "session_not_found")


def test_setting_the_same_breakpoint_twice_returns_the_first(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    line = line_of(COUNTER, "step-body")
    first = sessions.bp(sid, COUNTER, line)
    again = sessions.bp(sid, COUNTER, line)
    assert again["breakpoint_id"] == first["breakpoint_id"]
    err = error_of(
        api.post(f"/sessions/{sid}/breakpoints", json=line_bp(COUNTER, line, condition="i > 3")),
        409,
        "breakpoint_exists",
    )
    assert err["details"]["breakpoint_id"] == first["breakpoint_id"]
    assert len(listed(api, sid)) == 1


# -- validation from the source ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("at", "why", "suggested"),
    [
        (("imports", 1), "only whitespace", ("imports", 3)),
        (("comment-line", 0), "is a comment", ("open-bracket", 0)),
        (("docstring-end", 0), "part of a docstring", ("first-body-line", 0)),
        (("docstring-end", -1), "part of a docstring", ("first-body-line", 0)),
        (("bare-else", 0), "a bare 'else:'", ("else-body", 0)),
        (("closing-bracket", 0), "no code that runs", ("return-line", 0)),
        (("last-comment", 0), "is a comment", ("call-decorated", 1)),
        (("return-line", 1), "only whitespace", ("return-line", 0)),
        (("area-body", 1), "only whitespace", ("area-body", 0)),
    ],
    ids=[
        "blank",
        "comment",
        "docstring-end",
        "docstring-inside",
        "bare-else",
        "closing-bracket",
        "last",
        "blank-after-function",
        "blank-after-method",
    ],
)
def test_ac_bp_2_line_without_code_is_unverified_with_suggestion(
    sessions: Sessions, at: tuple[str, int], why: str, suggested: tuple[str, int]
) -> None:
    """(marker, offset) pairs name the lines; the suggestion is the next line in the same function."""
    sid = sessions.create()
    line = line_of(LINES, at[0]) + at[1]
    bp = sessions.bp(sid, LINES, line)
    assert bp["verified"] is False, bp
    assert bp["message"].startswith(f"No executable code at line {line}: "), bp
    assert why in bp["message"], bp
    want = line_of(LINES, suggested[0]) + suggested[1]
    assert bp["suggestion"]["line"] == want, bp
    content = Path(LINES).read_text().splitlines()[want - 1].strip()
    text = f"Try line {want} which contains: '{content}'"
    assert bp["suggestion"] == {"line": want, "content": content, "text": text}


def test_def_and_decorator_lines_are_verified_with_a_note(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    body = [line_bp(LINES, line_of(LINES, "decorator-line")), line_bp(LINES, line_of(LINES, "def-line"))]
    for bp in ok(api.post(f"/sessions/{sid}/breakpoints", json=body))["breakpoints"]:
        assert bp["verified"] is True
        assert "when 'decorated' is defined (e.g. at import), not each time it is called" in bp["message"]
        assert bp["suggestion"]["line"] == line_of(LINES, "first-body-line")


def test_def_line_pauses_at_definition_and_the_body_line_on_the_call(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, LINES, line_of(LINES, "def-line"))
    sessions.bp(sid, LINES, line_of(LINES, "first-body-line"))
    sessions.launch(sid, LINES)
    where = []
    status = sessions.wait(sid)
    while status["status"] == "paused":
        where.append((status["location"]["line"], status["location"]["function"]))
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid)
    # CPython 3.11 runs a decorated def line twice while defining it (MAKE_FUNCTION, then STORE_NAME)
    assert set(where[:-1]) == {(line_of(LINES, "def-line"), "<module>")}
    assert where[-1] == (line_of(LINES, "first-body-line"), "decorated")


def test_line_past_the_end_is_invalid_line_with_max_line(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    total = len(Path(LINES).read_text().splitlines())
    err = error_of(api.post(f"/sessions/{sid}/breakpoints", json=line_bp(LINES, 999)), 400, "invalid_line")
    assert err["details"] == {"file": LINES, "line": 999, "max_line": total}
    assert listed(api, sid) == {}


def test_unverified_line_is_never_sent_to_debugpy_so_nothing_moves(api: Api, sessions: Sessions) -> None:
    """debugpy would move a comment-line breakpoint up into the previous statement and pause there."""
    sid = sessions.create()
    bp = sessions.bp(sid, LINES, line_of(LINES, "comment-line"))
    sessions.launch(sid, LINES)
    assert sessions.wait(sid)["status"] == "terminated"
    after = listed(api, sid)[bp["breakpoint_id"]]
    assert after["verified"] is False
    assert after["hit_count"] == 0
    assert "never_hit" not in after


@pytest.mark.parametrize(
    ("extra", "what"),
    [
        ({"condition": "i >"}, "condition"),
        ({"condition": "x = 1"}, "condition"),
        ({"hit_condition": "every other"}, "hit_condition"),
        ({"hit_condition": "% 0"}, "hit_condition"),
        ({"log_message": "i is {i +}"}, "log_message"),
        ({"log_message": "unclosed {i"}, "log_message"),
    ],
    ids=["condition-incomplete", "condition-statement", "hit-words", "hit-mod-0", "log-expr", "log-unclosed"],
)
def test_expression_that_does_not_compile_is_invalid_condition(
    api: Api, sessions: Sessions, extra: dict[str, str], what: str
) -> None:
    sid = sessions.create()
    body = line_bp(COUNTER, line_of(COUNTER, "step-body"), **extra)
    response = api.post(f"/sessions/{sid}/breakpoints", json=body)
    err = error_of(response, 400, "invalid_condition")
    assert what in err["message"]
    if what == "condition":
        assert err["details"]["error"].startswith("SyntaxError: ")
    assert listed(api, sid) == {}


@pytest.mark.parametrize(
    "body",
    [
        {"line": 3},
        {"source": {"path": "relative/main.py"}, "line": 3},
        {"source": {"path": "/tmp"}, "line": 3},
        {"source": {"path": COUNTER}},
        {"source": {"path": COUNTER}, "line": 0},
        {"source": {"path": COUNTER}, "line": "five"},
        {"source": {"path": COUNTER}, "line": 5, "colour": "red"},
        {"function": "step", "source": {"path": COUNTER}, "line": 5},
        {"function": "not a name!"},
        {"function": "a:b:c"},
        {"source": {"path": "/tmp/x\u0000y.py"}, "line": 1},
        {"source": {"path": "/tmp/late.py"}, "line": 2**40},
        "just a string",
        [],
    ],
    ids=[
        "no-path",
        "relative",
        "directory",
        "no-line",
        "line-zero",
        "line-text",
        "unknown-field",
        "function-and-line",
        "bad-function",
        "two-colons",
        "nul",
        "huge-line",
        "string",
        "empty-list",
    ],
)
def test_bad_breakpoint_requests_are_400_with_the_envelope(api: Api, sessions: Sessions, body: Any) -> None:
    sid = sessions.create()
    response = api.post(f"/sessions/{sid}/breakpoints", json=body)
    assert response.status_code == 400, response.text
    err = response.json()["error"]
    assert set(err) == {"code", "message", "details", "hint"}
    assert err["code"].startswith("invalid")
    assert listed(api, sid) == {}


@pytest.mark.parametrize(
    ("bad", "code"),
    [
        (line_bp(COUNTER, line_of(COUNTER, "report"), condition="total >"), "invalid_condition"),
        (line_bp(COUNTER, 10_000), "invalid_line"),
        (line_bp(COUNTER, line_of(COUNTER, "report"), hit_condition="sometimes"), "invalid_condition"),
    ],
    ids=["condition", "line", "hit-condition"],
)
def test_a_list_with_one_bad_item_sets_none(api: Api, sessions: Sessions, bad: Any, code: str) -> None:
    sid = sessions.create()
    before = sessions.bp(sid, COUNTER, line_of(COUNTER, "point-norm"))
    body = [line_bp(COUNTER, line_of(COUNTER, "step-body")), line_bp(COUNTER, line_of(COUNTER, "point-init"))]
    body.append(bad)
    err = error_of(api.post(f"/sessions/{sid}/breakpoints", json={"breakpoints": body}), 400, code)
    assert err["details"]["index"] == 2
    assert list(listed(api, sid)) == [before["breakpoint_id"]]
    nxt = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"))
    assert int(nxt["breakpoint_id"][3:]) == int(before["breakpoint_id"][3:]) + 1  # no id was used up


def test_bad_patch_changes_nothing(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), condition="i > 3")
    url = f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"
    error_of(api.patch(url, json={"condition": "i >", "enabled": False}), 400, "invalid_condition")
    error_of(api.patch(url, json={"line": 10_000, "enabled": False}), 400, "invalid_line")
    error_of(api.patch(url, json={"hit_condition": "twice"}), 400, "invalid_condition")
    missing = f"/sessions/{sid}/breakpoints/bp_999"
    error_of(api.patch(missing, json={"enabled": False}), 404, "breakpoint_not_found")
    error_of(api.delete(f"/sessions/{sid}/breakpoints/bp_999"), 404, "breakpoint_not_found")
    after = listed(api, sid)[bp["breakpoint_id"]]
    assert after["condition"] == "i > 3"
    assert after["enabled"] is True


def test_patch_can_move_a_breakpoint_and_revalidates(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, LINES, line_of(LINES, "first-body-line"))
    url = f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}"
    moved = ok(api.patch(url, json={"line": line_of(LINES, "bare-else")}))
    assert moved["verified"] is False
    assert moved["suggestion"]["line"] == line_of(LINES, "else-body")
    back = ok(api.patch(url, json={"line": line_of(LINES, "if-body")}))
    assert back["verified"] is True
    assert "suggestion" not in back
    assert "message" not in back


# -- missing files ------------------------------------------------------------------------------------


def test_missing_file_is_pending_and_verifies_and_hits_once_it_appears(
    api: Api, sessions: Sessions, tmp_path: Path
) -> None:
    later = tmp_path / "later.py"
    sid = sessions.create()
    bp = sessions.bp(sid, str(later), 2)
    assert bp["verified"] is False
    assert bp["pending"] is True
    assert bp["message"].startswith("Source file not found. Breakpoint pending")
    sessions.launch(sid, WAITS, args=[str(later)])
    assert listed(api, sid)[bp["breakpoint_id"]]["pending"] is True
    later.write_text('value = 1\nvalue += 1  # here\nprint("later", value)\n')
    now = listed(api, sid)[bp["breakpoint_id"]]
    assert now["verified"] is True
    assert "pending" not in now
    assert "message" not in now
    ok(api.post(f"/sessions/{sid}/input", json={"input": "go\n"}))
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["breakpoint_ids"] == [bp["breakpoint_id"]]
    assert status["location"] == {"file": str(later), "line": 2, "function": "<module>"}


def test_missing_file_that_appears_with_too_few_lines_says_so(api: Api, sessions: Sessions, tmp_path: Path) -> None:
    later = tmp_path / "short.py"
    sid = sessions.create()
    bp = sessions.bp(sid, str(later), 40)
    later.write_text("x = 1\n")
    now = listed(api, sid)[bp["breakpoint_id"]]
    assert now["verified"] is False
    assert "pending" not in now
    assert "past the end" in now["message"]


# -- conditions, hit counts, logpoints -----------------------------------------------------------------


def test_ac_bp_3_conditional_breakpoint_pauses_only_when_true(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), condition="i > 16")
    sessions.launch(sid, COUNTER)
    assert stops_until_end(api, sessions, sid, "i") == ["17", "18", "19", "20"]
    assert listed(api, sid)[bp["breakpoint_id"]]["hit_count"] == 4


@pytest.mark.parametrize(
    ("hit_condition", "expected"),
    [
        ("5", ["5"]),
        ("== 5", ["5"]),
        (">= 17", ["17", "18", "19", "20"]),
        ("% 5 == 0", ["5", "10", "15", "20"]),
        ("% 5", ["5", "10", "15", "20"]),
    ],
)
def test_ac_bp_4_hit_count_breakpoint_pauses_after_n_hits(
    api: Api, sessions: Sessions, hit_condition: str, expected: list[str]
) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), hit_condition=hit_condition)
    assert bp["verified"] is True
    sessions.launch(sid, COUNTER)
    assert stops_until_end(api, sessions, sid, "i") == expected


def test_hit_condition_counts_only_hits_where_the_condition_holds(api: Api, sessions: Sessions) -> None:
    """Both set: the 3rd hit among those with an even i (debugpy alone would pause if EITHER held)."""
    sid = sessions.create()
    sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), condition="i % 2 == 0", hit_condition="3")
    sessions.launch(sid, COUNTER)
    assert stops_until_end(api, sessions, sid, "i") == ["6"]


def test_hit_count_survives_other_edits_in_the_same_file(api: Api, sessions: Sessions) -> None:
    """debugpy restarts its count whenever a file's breakpoints are sent again; the relay's does not."""
    sid = sessions.create()
    sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), hit_condition="== 10")
    early = sessions.bp(sid, COUNTER, line_of(COUNTER, "loop-call"), condition="i == 6")
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["breakpoint_ids"] == [early["breakpoint_id"]]
    ok(api.delete(f"/sessions/{sid}/breakpoints/{early['breakpoint_id']}"))
    sessions.bp(sid, COUNTER, line_of(COUNTER, "point-norm"), enabled=False)
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "paused"
    assert evaluate(api, sid, "i") == "10"


def test_ac_bp_5_removed_breakpoint_no_longer_pauses(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"))
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["breakpoint_ids"] == [bp["breakpoint_id"]]
    assert ok(api.delete(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}")) == {
        "deleted": True,
        "breakpoint_id": bp["breakpoint_id"],
    }
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "terminated"
    assert listed(api, sid) == {}


def test_ac_bp_6_disabled_breakpoint_does_not_pause(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    off = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), enabled=False)
    assert off["verified"] is True
    assert off["enabled"] is False
    on = sessions.bp(sid, COUNTER, line_of(COUNTER, "loop-call"))
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["breakpoint_ids"] == [on["breakpoint_id"]]
    ok(api.patch(f"/sessions/{sid}/breakpoints/{on['breakpoint_id']}", json={"enabled": False}))
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "terminated"
    both = listed(api, sid)
    assert both[off["breakpoint_id"]]["hit_count"] == 0
    assert "never_hit" not in both[off["breakpoint_id"]]


def test_disabled_breakpoint_can_be_enabled_while_paused(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    off = sessions.bp(sid, COUNTER, line_of(COUNTER, "report"), enabled=False)
    sessions.bp(sid, COUNTER, line_of(COUNTER, "loop-call"), condition="i == 20")
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["status"] == "paused"
    url = f"/sessions/{sid}/breakpoints/{off['breakpoint_id']}"
    assert ok(api.patch(url, json={"enabled": True}))["enabled"]
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["breakpoint_ids"] == [off["breakpoint_id"]]


def test_logpoint_writes_to_output_and_does_not_pause(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), log_message="step {i} -> {i * 2}", condition="i <= 3")
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["status"] == "terminated"
    lines = output_text(api, sid).splitlines()
    # in order among themselves; the program's own lines come through its pipes, not the debugger's
    # connection, and may come between them (see README, Output)
    assert [line for line in lines if line.startswith("step")] == ["step 1 -> 2", "step 2 -> 4", "step 3 -> 6"]
    assert "total 420 3" in lines


def test_condition_that_raises_pauses_and_says_why(api: Api, sessions: Sessions) -> None:
    """debugpy alone skips such a breakpoint silently; the relay makes it pause and explains."""
    sid = sessions.create()
    bp = sessions.bp(sid, COUNTER, line_of(COUNTER, "step-body"), condition="undefined_name > 1")
    sessions.launch(sid, COUNTER)
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["breakpoint_ids"] == [bp["breakpoint_id"]]
    note = listed(api, sid)[bp["breakpoint_id"]]["message"]
    assert "NameError: name 'undefined_name' is not defined" in note
    assert "paused here" in note
    assert "condition 'undefined_name > 1' raised NameError" in output_text(api, sid, "debugger")
    fixed = ok(api.patch(f"/sessions/{sid}/breakpoints/{bp['breakpoint_id']}", json={"condition": "i == 19"}))
    assert "message" not in fixed
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "paused"
    assert evaluate(api, sid, "i") == "19"


def test_logpoint_expression_that_raises_logs_the_error(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, COUNTER, line_of(COUNTER, "report"), log_message="value {missing_name}")
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["status"] == "terminated"
    assert "missing_name" in output_text(api, sid)


# -- function breakpoints --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "marker"),
    [
        ("Point.__init__", "point-init"),
        ("step", "step-body"),
        ("Point.norm", "point-norm"),
        ("bp_counter:Point.norm", "point-norm"),
    ],
)
def test_function_breakpoint_resolves_to_the_first_body_line_and_pauses(
    api: Api, sessions: Sessions, name: str, marker: str
) -> None:
    sid = sessions.create()
    pending = ok(api.post(f"/sessions/{sid}/breakpoints", json={"function": name}))
    assert pending["kind"] == "function"
    assert pending["verified"] is False
    assert pending["pending"] is True
    sessions.launch(sid, COUNTER)
    status = sessions.wait(sid)
    assert status["status"] == "paused"
    assert status["breakpoint_ids"] == [pending["breakpoint_id"]]
    assert status["location"]["line"] == line_of(COUNTER, marker)
    now = listed(api, sid)[pending["breakpoint_id"]]
    assert now["verified"] is True
    assert now["function"] == name
    assert now["file"] == COUNTER
    assert now["line"] == line_of(COUNTER, marker)


def test_function_breakpoint_set_after_launch_resolves_at_once(api: Api, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(COUNTER, "loop-call")
    bp = ok(api.post(f"/sessions/{sid}/breakpoints", json={"function": "Point.norm"}))
    assert bp["verified"] is True
    assert bp["line"] == line_of(COUNTER, "point-norm")
    first = next(b for b in listed(api, sid) if b != bp["breakpoint_id"])
    ok(api.delete(f"/sessions/{sid}/breakpoints/{first}"))
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["breakpoint_ids"] == [bp["breakpoint_id"]]


def test_module_colon_function_breakpoint_in_another_file(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    bp = ok(api.post(f"/sessions/{sid}/breakpoints", json={"function": "pkg.helpers:double"}))
    sessions.launch(sid, MULTI, cwd=str(Path(MULTI).parent))
    status = sessions.wait(sid)
    assert status["breakpoint_ids"] == [bp["breakpoint_id"]]
    where = {"file": HELPERS, "line": line_of(HELPERS, "double-body"), "function": "double"}
    assert status["location"] == where


@pytest.mark.parametrize("name", ["Point.missing", "nowhere_to_be_found", "pkg.nothing:here"])
def test_unknown_function_is_unverified_with_a_message(api: Api, sessions: Sessions, name: str) -> None:
    sid = sessions.create()
    bp = ok(api.post(f"/sessions/{sid}/breakpoints", json={"function": name}))
    sessions.launch(sid, COUNTER)
    assert sessions.wait(sid)["status"] == "terminated"
    now = listed(api, sid)[bp["breakpoint_id"]]
    assert now["verified"] is False
    assert now["message"].startswith(f"No function '{name}' found")
    assert "never_hit" not in now
    assert "pending" not in now


def test_function_breakpoint_with_a_condition(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/breakpoints", json={"function": "step", "condition": "i == 12"}))
    sessions.launch(sid, COUNTER)
    assert stops_until_end(api, sessions, sid, "i") == ["12"]


# -- exception breakpoints -------------------------------------------------------------------------------


def exception_stops(api: Api, sessions: Sessions, sid: str) -> list[tuple[str, int]]:
    """(exception type, line) of each pause until the target ends."""
    seen = []
    status = sessions.wait(sid)
    while status["status"] == "paused":
        assert status["reason"] == "exception", status
        seen.append((status["exception"]["type"], status["location"]["line"]))
        ok(api.post(f"/sessions/{sid}/continue"))
        status = sessions.wait(sid)
    assert status["status"] == "terminated"
    return seen


def test_ac_bp_8_exception_breakpoint_pauses_on_the_type_and_its_subclasses(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    answer = ok(
        api.post(
            f"/sessions/{sid}/exception-breakpoints", json={"filters": ["raised"], "exception_types": ["KeyError"]}
        )
    )
    assert answer == {"filters": ["raised"], "exception_types": ["KeyError"], "carries_over": True}
    sessions.launch(sid, EXCEPTIONS)
    assert exception_stops(api, sessions, sid) == [
        ("MissingKey", line_of(EXCEPTIONS, "raise-missing")),
        ("KeyError", line_of(EXCEPTIONS, "raise-key")),
    ]


def test_raised_exception_pauses_once_not_in_every_frame_it_passes(api: Api, sessions: Sessions) -> None:
    """debugpy alone pauses again in each caller the exception passes through; the relay does not."""
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": ["raised"]}))
    sessions.launch(sid, EXCEPTIONS, just_my_code=True)
    assert exception_stops(api, sessions, sid) == [
        ("ValueError", line_of(EXCEPTIONS, "raise-value")),
        ("MissingKey", line_of(EXCEPTIONS, "raise-missing")),
        ("KeyError", line_of(EXCEPTIONS, "raise-key")),
        ("RetryableError", line_of(EXCEPTIONS, "raise-retry")),
    ]


def test_exception_breakpoint_on_a_class_of_the_script_itself(api: Api, sessions: Sessions) -> None:
    """pydevd cannot import a class of __main__ when told; the relay filters those by the class's bases."""
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"exception_types": ["AppError"]}))
    assert ok(api.get(f"/sessions/{sid}/exception-breakpoints")) == {
        "filters": ["raised"],
        "exception_types": ["AppError"],
        "carries_over": True,  # the session's own: each launch without stop_on_exception keeps them
    }
    sessions.launch(sid, EXCEPTIONS)
    assert exception_stops(api, sessions, sid) == [("RetryableError", line_of(EXCEPTIONS, "raise-retry"))]


def test_exception_types_set_while_running_take_effect(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    sessions.bp(sid, EXCEPTIONS, line_of(EXCEPTIONS, "raise-value") - 1)
    sessions.launch(sid, EXCEPTIONS)
    assert sessions.wait(sid)["status"] == "paused"
    ok(
        api.post(
            f"/sessions/{sid}/exception-breakpoints",
            json={"filters": ["raised"], "exception_types": ["ValueError", "__main__.MissingKey"]},
        )
    )
    ok(api.delete(f"/sessions/{sid}/breakpoints/{next(iter(listed(api, sid)))}"))
    ok(api.post(f"/sessions/{sid}/continue"))
    assert exception_stops(api, sessions, sid) == [
        ("ValueError", line_of(EXCEPTIONS, "raise-value")),
        ("MissingKey", line_of(EXCEPTIONS, "raise-missing")),
    ]


def test_uncaught_filter_with_a_non_matching_type_does_not_pause(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    ok(
        api.post(
            f"/sessions/{sid}/exception-breakpoints", json={"filters": ["uncaught"], "exception_types": ["KeyError"]}
        )
    )
    sessions.launch(sid, target("crash.py"))
    status = sessions.wait(sid)
    assert status["status"] == "terminated"
    assert status["exit_code"] != 0


@pytest.mark.parametrize(
    "body",
    [{"filters": ["sometimes"]}, {"exception_types": ["Key Error"]}, {"filters": "raised"}, {"colour": 1}],
    ids=["filter", "type", "not-a-list", "unknown-field"],
)
def test_bad_exception_breakpoints_change_nothing(api: Api, sessions: Sessions, body: Any) -> None:
    sid = sessions.create()
    ok(api.post(f"/sessions/{sid}/exception-breakpoints", json={"filters": ["uncaught"]}))
    response = api.post(f"/sessions/{sid}/exception-breakpoints", json=body)
    assert response.status_code == 400, response.text
    now = ok(api.get(f"/sessions/{sid}/exception-breakpoints"))
    assert now == {"filters": ["uncaught"], "exception_types": [], "carries_over": True}


# -- hit counts and never-hit ------------------------------------------------------------------------------


def test_after_the_run_never_hit_breakpoints_are_marked(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    hit = sessions.bp(sid, LINES, line_of(LINES, "if-body"))
    missed = sessions.bp(sid, LINES, line_of(LINES, "else-body"))
    sessions.launch(sid, LINES)
    assert sessions.wait(sid)["breakpoint_ids"] == [hit["breakpoint_id"]]
    ok(api.post(f"/sessions/{sid}/continue"))
    assert sessions.wait(sid)["status"] == "terminated"
    after = listed(api, sid)
    assert after[hit["breakpoint_id"]]["hit_count"] == 1
    assert "never_hit" not in after[hit["breakpoint_id"]]
    assert after[missed["breakpoint_id"]]["never_hit"] is True
    assert after[missed["breakpoint_id"]]["message"] == "Verified, but never hit during the run."


def test_restart_clears_hit_counts(api: Api, sessions: Sessions) -> None:
    sid, _ = sessions.start_at(COUNTER, "report")
    bp_id = next(iter(listed(api, sid)))
    assert listed(api, sid)[bp_id]["hit_count"] == 1
    ok(api.post(f"/sessions/{sid}/restart"))
    status = sessions.wait(sid)
    assert status["breakpoint_ids"] == [bp_id]
    assert listed(api, sid)[bp_id]["hit_count"] == 1


# -- profiles ----------------------------------------------------------------------------------------------


def test_breakpoint_profile_saved_from_a_session_applies_to_a_new_one(api: Api, sessions: Sessions) -> None:
    first = sessions.create()
    sessions.bp(first, COUNTER, line_of(COUNTER, "step-body"), condition="i == 7")
    ok(api.post(f"/sessions/{first}/breakpoints", json={"function": "Point.norm"}))
    saved = ok(api.post("/breakpoint-profiles", json={"name": "counter-bugs", "session_id": first}), 201)
    assert saved == {"name": "counter-bugs", "breakpoints": 2, "replaced": False}
    profiles = {p["name"]: p for p in ok(api.get("/breakpoint-profiles"))["profiles"]}
    entries = profiles["counter-bugs"]["breakpoints"]
    assert [e.get("condition") for e in entries] == ["i == 7", None]
    assert all("verified" not in e and "hit_count" not in e for e in entries)

    second = sessions.create()
    applied = ok(api.post(f"/sessions/{second}/breakpoint-profiles/counter-bugs/apply"))
    assert [b["kind"] for b in applied["breakpoints"]] == ["line", "function"]
    assert "skipped" not in applied
    sessions.launch(second, COUNTER)
    assert sessions.wait(second)["location"]["line"] == line_of(COUNTER, "step-body")
    assert evaluate(api, second, "i") == "7"
    ok(api.post(f"/sessions/{second}/continue"))
    assert sessions.wait(second)["location"]["line"] == line_of(COUNTER, "point-norm")
    assert evaluate(api, second, "self.x") == "-3"
    ok(api.post(f"/sessions/{second}/continue"))
    assert sessions.wait(second)["status"] == "terminated"


def test_profile_with_stale_entries_applies_the_rest_with_a_warning(
    api: Api, sessions: Sessions, tmp_path: Path
) -> None:
    script = tmp_path / "shrinks.py"
    script.write_text("a = 1\nb = 2\nc = 3\nd = 4\ne = 5\n")
    given = [line_bp(str(script), 2), line_bp(str(script), 5), line_bp(COUNTER, line_of(COUNTER, "report"))]
    ok(api.post("/breakpoint-profiles", json={"name": "stale", "breakpoints": given}), 201)
    script.write_text("a = 1\nb = 2\n")
    sid = sessions.create()
    applied = ok(api.post(f"/sessions/{sid}/breakpoint-profiles/stale/apply"))
    assert [b["line"] for b in applied["breakpoints"]] == [2, line_of(COUNTER, "report")]
    assert applied["skipped"][0]["index"] == 1
    assert applied["skipped"][0]["error"]["code"] == "invalid_line"
    assert "skipped" in applied["warning"]


def test_profile_errors(api: Api, sessions: Sessions) -> None:
    sid = sessions.create()
    error_of(api.post(f"/sessions/{sid}/breakpoint-profiles/never-saved/apply"), 404, "not_found")
    error_of(api.post("/breakpoint-profiles", json={"name": "x"}), 400, "invalid_request")
    bad_name = {"name": "bad name!", "breakpoints": []}
    error_of(api.post("/breakpoint-profiles", json=bad_name), 400, "invalid_request")
    bad_line = {"name": "bad", "breakpoints": [line_bp(COUNTER, 10_000)]}
    error_of(api.post("/breakpoint-profiles", json=bad_line), 400, "invalid_line")
    error_of(
        api.post("/breakpoint-profiles", json={"name": "gone", "session_id": "sess_nope"}), 404, "session_not_found"
    )
    assert "bad" not in {p["name"] for p in ok(api.get("/breakpoint-profiles"))["profiles"]}


def test_breakpoints_endpoints_on_an_unknown_session_are_404(api: Api) -> None:
    error_of(api.get("/sessions/sess_nope/breakpoints"), 404, "session_not_found")
    error_of(api.post("/sessions/sess_nope/breakpoints", json=line_bp(COUNTER, 5)), 404, "session_not_found")
    response = api.post("/sessions/sess_nope/exception-breakpoints", json={"filters": []})
    error_of(response, 404, "session_not_found")
