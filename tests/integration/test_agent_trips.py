"""What an agent new to the relay tripped on, each driven through the interface where it was found."""

from __future__ import annotations

import textwrap
from pathlib import Path

import httpx
import pytest

from tests.conftest import Relay, line_of, ok, target, until
from tests.integration.test_cli import Cli
from tests.integration.test_mcp import stdio_agent

pytestmark = pytest.mark.integration

BASIC = target("basic.py")
ADD = line_of(BASIC, "add-body")


def write(folder: Path, name: str, source: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


@pytest.mark.asyncio
async def test_relative_paths_start_in_the_agents_folder_and_a_missing_file_is_reported(
    tmp_path: Path,
) -> None:
    app = tmp_path / "quix"
    app.mkdir()
    write(app, "get_factors.py", "def get_factors(n):\n    out = [n]  # body\n    return out\n")
    write(app, "check.py", "from get_factors import get_factors\nprint(get_factors(12))\n")
    async with stdio_agent(tmp_path, cwd=app) as agent:  # the agent works in quix/
        stop = await agent.call("debug_launch", script="check.py", breakpoints=["get_factors.py:2", "nowhere.py:3"])
        assert (stop["status"], stop["location"]["file"]) == ("paused", "get_factors.py")  # as the agent names it
        # the breakpoint whose file does not exist is named in the answer, not left silently pending
        [missing] = stop["unverified_breakpoints"]
        assert missing["at"] == "nowhere.py:3"
        assert "not found" in missing["message"]
        # a relative file given later starts in the agent's folder too, not the relay's
        bp = await agent.call("debug_set_breakpoint", file="get_factors.py", line=3)
        assert (bp["file"], bp["verified"]) == ("get_factors.py", True)
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_sys_exit_with_a_code_ends_the_program_it_does_not_pause_it(tmp_path: Path) -> None:
    script = write(tmp_path, "exits.py", "import sys\nprint('giving up')\nsys.exit(3)  # exit\n")
    async with stdio_agent(tmp_path) as agent:
        end = await agent.call("debug_launch", script=str(script))
        assert (end["status"], end["exit_code"]) == ("terminated", 3)
        assert "exception" not in end
        assert "giving up" in end["output"]
        # asked for by name, SystemExit pauses like any exception
        await agent.call("debug_set_exception_breakpoints", filters=["uncaught"], exception_types=["SystemExit"])
        stop = await agent.call("debug_launch", script=str(script))
        assert (stop["status"], stop["exception"]["type"]) == ("paused", "SystemExit"), stop
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_launching_again_says_the_session_is_reused_and_which_breakpoints_carry_over(tmp_path: Path) -> None:
    script = write(tmp_path, "args.py", "import sys\nn = len(sys.argv)  # count\nprint(n)\n")
    async with stdio_agent(tmp_path) as agent:
        first = await agent.call("debug_launch", script=str(script), breakpoints=[f"{script}:2"])
        assert first["status"] == "paused"
        assert "reused" not in first
        await agent.call("debug_set_breakpoint", file=str(script), line=3, condition="n > 5")
        again = await agent.call("debug_launch", script=str(script), args=["a", "b"])
        assert again["session_id"] == first["session_id"]
        assert again["reused"] is True
        assert again["carried_breakpoints"] == [
            {"breakpoint_id": "bp_1", "at": f"{script}:2"},
            {"breakpoint_id": "bp_2", "at": f"{script}:3", "condition": "n > 5"},
        ]
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_a_blank_line_after_a_function_suggests_its_last_statement_and_none_evaluates_to_none(
    tmp_path: Path,
) -> None:
    script = write(
        tmp_path,
        "blank.py",
        '''
        def work():
            total = 1
            return total  # last


        """A module string."""
        work()
        ''',
    )
    # the relay checks lines of files in the folders it reads sources from: the agent's project
    async with stdio_agent(tmp_path, env={"DEBUGRELAY_WORKSPACE": str(tmp_path)}) as agent:
        bp = await agent.call("debug_set_breakpoint", file=str(script), line=4)
        assert bp["verified"] is False
        assert bp["suggestion"]["line"] == 3  # the statement above in the same function
        stop = await agent.call("debug_launch", script=str(script), stop_on_entry=True)
        assert stop["status"] == "paused"
        assert await agent.call("debug_evaluate", expression="print('x')") == {"result": "None", "type": "NoneType"}
        assert await agent.call("debug_evaluate", expression="''") == {"result": "''", "type": "str"}
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_logpoints_take_f_string_conversions_and_format_specs(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "logs.py",
        """
        names = ["ann", "bo"]
        for i, name in enumerate(names):
            ratio = (i + 1) / 3  # log-here
        print("done")
        """,
    )
    async with stdio_agent(tmp_path) as agent:
        message = "{i}: {name!r:>6} {(i + 1) / 3:.2f} 50% {{literal}} {len(name)}"
        await agent.call("debug_set_breakpoint", file=str(script), line=3, log_message=message)
        end = await agent.call("debug_launch", script=str(script))
        assert end["status"] == "terminated"
        printed = (await agent.call("debug_output"))["text"]
        # a logpoint's message comes from the debugger, the program's print from its pipe: in order each
        logged = [line for line in printed.splitlines() if "{literal}" in line]
        assert logged == ["0:  'ann' 0.33 50% {literal} 3", "1:   'bo' 0.67 50% {literal} 2"], printed
        assert "done" in printed.splitlines()
        bad = await agent.error("debug_set_breakpoint", file=str(script), line=3, log_message="i={i} {name!q}")
        assert bad["code"] == "invalid_condition"
        assert "{name!q}" in bad["message"]
        assert "log_message" in bad["hint"]
        assert "condition" not in bad["hint"].replace("log_message", "")
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_a_stop_with_its_autopsy_says_each_thing_once(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "idx.py",
        """
        def main():
            scores = [70, 85, 90]
            count = len(scores)
            label = "exam"
            return scores[count]  # crash


        main()
        """,
    )
    async with stdio_agent(tmp_path) as agent:
        await agent.call("debug_launch", script=str(script), timeout=0)
        stop = await agent.call("breakpoint_wait", include_autopsy=True)
        # measured with the path as short as the one the agent had (/tmp/quix/...): this folder's is longer
        size = len(agent.transcript[-1][2].replace(str(script), "/tmp/quix/idx.py").encode())
        assert size <= 600, size
        assert stop["exception"] == {"type": "IndexError", "message": "list index out of range", "unhandled": True}
        assert stop["locals"] == {"count": "3", "label": "'exam'", "scores": "[70, 85, 90]"}
        assert "hint" not in stop  # no advice to fetch the autopsy that is here
        top, caller = stop["autopsy"]["frames"]
        assert top["source"]["lines"][-1].strip() == stop["code"] == "return scores[count]  # crash"
        assert "locals" not in top  # said once, in the stop's locals
        assert (caller["function"], caller["line"], caller["source"]["text"]) == ("<module>", 8, "main()")
        # asked on its own, the autopsy keeps its locals, without children the value already shows
        alone = await agent.call("exception_autopsy")
        scores = next(v for v in alone["frames"][0]["locals"] if v["name"] == "scores")
        assert (scores["value"], scores["length"], "children" in scores) == ("[70, 85, 90]", 3, False)
        await agent.call("debug_disconnect", forget=True)


# -- one stop answer in every interface -------------------------------------------------------------


def test_http_stops_carry_the_code_line_locals_and_watches_when_asked(api: httpx.Client) -> None:
    sid = ok(api.post("/sessions"), 201)["session_id"]
    try:
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"file": BASIC, "line": ADD}))
        ok(api.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
        ok(api.post(f"/sessions/{sid}/watch", json={"expression": "a * 100"}))
        first = ok(api.post(f"/sessions/{sid}/wait?locals=true", json={"timeout": 30}))
        assert first["code"] == "result = a + b  # add-body"
        assert first["locals"] == {"a": "0", "b": "3"}
        assert first["watches"] == {"a * 100": "0"}
        # the same vocabulary as the other interfaces: timeout, not wait
        second = ok(api.post(f"/sessions/{sid}/continue?locals=true", json={"timeout": 30}))
        assert (second["locals"], second["watches"]) == ({"a": "3", "b": "4"}, {"a * 100": "300"})
        plain = ok(api.post(f"/sessions/{sid}/continue", json={"timeout": 30}))
        assert plain["status"] == "paused"
        assert "locals" not in plain  # the compact default: location only
    finally:
        api.delete(f"/sessions/{sid}")


def test_cli_stops_carry_the_code_line_locals_and_watches(relay: Relay, api: httpx.Client) -> None:
    cli = Cli(relay)
    stop = cli("launch", BASIC, "--break", f"{BASIC}:{ADD}")
    sid = stop["session_id"]
    try:
        assert (stop["code"], stop["locals"]) == ("result = a + b  # add-body", {"a": "0", "b": "3"})
        ok(api.post(f"/sessions/{sid}/watch", json={"expression": "b - a"}))
        again = cli("continue", "--timeout", "30")
        assert (again["locals"], again["watches"]) == ({"a": "3", "b": "4"}, {"b - a": "1"})
        bare = cli("step", "over", "--no-locals")
        assert bare["reason"] == "step"
        assert "locals" not in bare and bare["code"]  # the line it stopped at, as every interface shows it
    finally:
        cli("delete", sid)


@pytest.mark.asyncio
async def test_mcp_watches_ride_with_every_stop_and_changes_have_a_tool(tmp_path: Path) -> None:
    loop = line_of(BASIC, "loop-body")
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=BASIC, breakpoints=[f"{BASIC}:{loop}"])
        assert (stop["locals"]["total"], stop["locals"]["value"]) == ("0", "3")
        watched = await agent.call("debug_evaluate", expression="total * 10", watch=True)
        assert (watched["expression"], watched["result"]) == ("total * 10", "0")
        again = await agent.call("debug_continue")  # the next turn of the loop, in the same frame
        assert again["watches"] == {"total * 10": "30"}
        moved = await agent.call("debug_variables", changed=True)
        assert {c["name"]: (c["old"], c["new"]) for c in moved["changed"]} == {"total": ("0", "3"), "value": ("3", "4")}
        assert (await agent.call("debug_evaluate", expression="total * 10", watch=False))["removed"] == 1
        assert "watches" not in await agent.call("debug_continue")
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_a_statement_over_several_lines_stops_once_per_execution(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "multi.py",
        """
        def compute(a, b):
            return a + b


        for i in range(3):
            total = compute(  # multi
                i,
                10,
            )
        print("total", total)
        """,
    )
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=str(script), breakpoints=[f"{script}:6"])
        seen = []
        while stop["status"] == "paused":
            seen.append(stop["locals"]["i"])
            [bp] = (await agent.call("debug_status"))["breakpoints"]
            assert bp["hit_count"] == len(seen)  # one execution, one hit
            stop = await agent.call("debug_continue")
        assert seen == ["0", "1", "2"]  # one stop per execution, not two
        # hits count executions too: the second one is the second hit
        await agent.call("debug_remove_breakpoint", breakpoint_id="bp_1")
        await agent.call("debug_set_breakpoint", file=str(script), line=6, hit_condition="2")
        second = await agent.call("debug_launch", script=str(script))
        assert second["locals"]["i"] == "1", second
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_a_counted_breakpoint_on_a_hot_line_shows_its_hits_and_the_slowdown_while_running(
    tmp_path: Path,
) -> None:
    script = write(tmp_path, "hot.py", "total = 0\nfor i in range(10**9):\n    total += i  # hot\n")
    async with stdio_agent(tmp_path) as agent:
        await agent.call("debug_set_breakpoint", file=str(script), line=3, hit_condition="% 1000000")
        answer = await agent.call("debug_launch", script=str(script), timeout=1)
        for _ in range(30):  # the target reports its counts about once a second
            if answer.get("breakpoint_runs"):
                break
            assert answer["timed_out"] is True
            answer = await agent.call("breakpoint_wait", timeout=1)
        [runs] = answer["breakpoint_runs"]
        assert runs["breakpoint_id"] == "bp_1"
        assert 0 < runs["hit_count"] <= runs["runs"]  # counted while running, not only at stops
        assert "far slower" in runs["slow"]
        [bp] = (await agent.call("debug_status"))["breakpoints"]
        assert bp["hit_count"] >= runs["hit_count"]
        assert bp["runs_per_second"] > 0
        await agent.call("debug_disconnect", forget=True)


BLANK = """
def work():
    total = 1
    return total  # last


print(work())
"""


def test_breakpoints_given_with_a_cli_launch_are_checked_and_a_blank_line_gets_its_suggestion(
    relay: Relay, tmp_path: Path
) -> None:
    script = write(tmp_path, "blank.py", BLANK)
    cli = Cli(relay)
    end = cli("launch", str(script), "--break", f"{script}:4", "--break", f"{script}:3")
    assert end["status"] == "paused"
    [blank] = end["unverified_breakpoints"]
    assert blank["at"] == f"{script}:4"
    assert "only whitespace" in blank["message"]
    # the same check and suggestion as a breakpoint set on its own
    assert blank["suggestion"]["line"] == 3
    assert blank["suggestion"] == cli("breakpoints", end["session_id"])["breakpoints"][0]["suggestion"]
    cli("delete", end["session_id"])


@pytest.mark.asyncio
async def test_launching_a_fixed_copy_ends_the_paused_program_and_says_which_session(tmp_path: Path) -> None:
    script = write(tmp_path, "blank.py", BLANK)
    fixed = write(tmp_path, "blank_fixed.py", BLANK.replace("total = 1", "total = 2"))
    async with stdio_agent(tmp_path) as agent:
        first = await agent.call("debug_launch", script=str(script), breakpoints=[f"{script}:3"])
        assert first["status"] == "paused"
        second = await agent.call("debug_launch", script=str(fixed))
        assert second["session_id"] != first["session_id"]
        assert second["ended_session"] == {
            "session_id": first["session_id"],
            "program": str(script),
            "was": "paused",
            "now": "terminated",
        }
        # nothing is left paused behind the agent's back
        old = await agent.call("debug_status", session_id=first["session_id"])
        assert old["status"] == "terminated"
        await agent.call("debug_disconnect", forget=True)
        await agent.call("debug_disconnect", session_id=first["session_id"], forget=True)


def test_cli_pause_answers_like_a_step_and_delete_defaults_to_the_latest_session(relay: Relay) -> None:
    cli = Cli(relay)
    loop = target("loop.py")
    sid = cli("launch", loop, "--wait", "0")["session_id"]
    # in its own code: past its start-up (a pause there stops in the interpreter's imports)
    until(lambda: any("done" in o["text"] for o in cli("output", sid)["outputs"]), "the loop to end")
    stop = cli("pause")
    assert stop["status"] == "paused", stop
    # the source line and locals, as continue and step answer a stop
    assert stop["code"], stop
    assert "total" in stop["locals"], stop
    assert cli("delete") == {"deleted": True, "session_id": sid}


def test_http_launch_on_a_paused_session_restarts_it_as_mcp_and_the_cli_do(api: httpx.Client) -> None:
    sid = ok(api.post("/sessions"), 201)["session_id"]
    try:
        ok(api.post(f"/sessions/{sid}/breakpoints", json={"file": BASIC, "line": ADD}))
        ok(api.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
        first = ok(api.post(f"/sessions/{sid}/wait", json={"timeout": 30}))
        assert first["status"] == "paused", first
        again = ok(api.post(f"/sessions/{sid}/launch", json={"script": BASIC}))
        assert again["restarted"] == "its paused run was ended"
        stop = ok(api.post(f"/sessions/{sid}/wait?locals=true", json={"timeout": 30}))
        assert (stop["status"], stop["locals"]) == ("paused", {"a": "0", "b": "3"})  # the first stop, again
    finally:
        api.delete(f"/sessions/{sid}")


@pytest.mark.asyncio
async def test_errors_and_ends_say_what_happened_in_the_words_the_stop_uses(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "shapes.py",
        """
        def area(shape):
            return shape.width * shape.height  # area-line


        def main():
            shape = object()
            print("ready")  # eval-here
            area(shape)


        main()
        """,
    )
    here, raised = line_of(str(script), "eval-here"), line_of(str(script), "area-line")
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=str(script), breakpoints=[f"{script}:{here}"])
        assert stop["location"]["line"] == here, stop
        # a call the expression makes raises in the program's code: the error says where
        failed = await agent.error("debug_evaluate", expression="area(shape)")
        assert failed["message"].startswith("AttributeError: 'object' object has no attribute 'width'"), failed
        assert f"(raised at {script}:{raised} in area)" in failed["message"], failed
        assert failed["details"]["raised_at"] == {"file": str(script), "line": raised, "function": "area"}
        # an expression that is not Python never ran in the program
        broken = await agent.error("debug_evaluate", expression="shape.")
        assert broken["message"].startswith("SyntaxError"), broken
        assert "raised in the program" not in broken["hint"], broken
        assert "not valid Python" in broken["hint"], broken
        # the stop and the autopsy name the exception the same way
        crash = await agent.call("debug_continue")
        assert crash["exception"]["type"] == "AttributeError", crash
        autopsy = await agent.call("exception_autopsy")
        assert autopsy["exception"]["type"] == "AttributeError", autopsy
        # an end the agent asked for is not blamed on the outside or on memory
        end = await agent.call("debug_disconnect")
        assert end["status"] == "terminated", end
        assert "killed from outside" not in end.get("description", ""), end
        assert "as asked" in end.get("description", "as asked"), end
        await agent.call("debug_disconnect", forget=True)


@pytest.mark.asyncio
async def test_a_runaway_recursion_shows_its_caller_and_the_call_that_recursed(tmp_path: Path) -> None:
    script = write(
        tmp_path,
        "runaway.py",
        """
        def descend(n, label):
            return descend(n + 1, label)  # recursive-call


        def test_descend():
            label = "a label long enough to be cut when it is shown as an argument of the recursion"
            descend(0, label)  # calls-descend


        test_descend()  # module-call
        """,
    )
    recursed = line_of(str(script), "recursive-call")
    async with stdio_agent(tmp_path) as agent:
        stop = await agent.call("debug_launch", script=str(script))
        assert stop["exception"]["type"] == "RecursionError", stop
        # the line that recursed, not the 'def' line Python raises it at
        assert stop["location"]["line"] == recursed, stop
        assert stop["code"] == "return descend(n + 1, label)  # recursive-call", stop

        stack = await agent.call("debug_stacktrace")
        names = [f["name"] for f in stack["frames"]]
        assert names[0] == "descend" and stack["frames"][0]["repeated"] > 100, stack["frames"][0]
        # what called the recursion is there, and the frames left out between are said with how to read them
        assert names[-2:] == ["test_descend", "<module>"], names
        assert stack["frames"][-1]["line"] == line_of(str(script), "module-call"), stack["frames"]
        if "left_out" in stack:
            assert "start=" in stack["left_out"], stack
        # a value cut in the folded recursion's arguments says so as every cut value does
        assert "<cut:" in stack["frames"][0]["arguments"], stack["frames"][0]
        assert "..." not in stack["frames"][0]["arguments"].replace("<cut:", ""), stack["frames"][0]
        await agent.call("debug_disconnect", forget=True)
