"""Output entries are lines: a line print() writes in pieces stays one entry, also when the other stream's
lines were read between its pieces (cross-stream order is the pipes', a line is never cut by it)."""

from __future__ import annotations

import pytest

from debugrelay.sessions._output import OutputBuffer
from debugrelay.store import MemoryStore


@pytest.mark.asyncio
async def test_a_line_written_in_pieces_stays_whole_when_the_other_streams_line_comes_between() -> None:
    store = MemoryStore()
    buffer = OutputBuffer("s1", store, max_chars=10_000)
    buffer.add("stdout", "hello stdout\nmean ", n=1)
    buffer.add("stderr", "warn stderr\n", n=2)
    buffer.add("stdout", "4.0 args\n", n=3)
    await buffer.flush()
    page = await store.read_output("s1", None, 100)
    assert [(e.type, e.text) for e in page.entries] == [
        ("stdout", "hello stdout\n"),
        ("stdout", "mean 4.0 args\n"),
        ("stderr", "warn stderr\n"),
    ]
    assert buffer.seen == 3


@pytest.mark.asyncio
async def test_a_logpoint_message_arriving_inside_a_program_line_neither_joins_nor_cuts_it() -> None:
    store = MemoryStore()
    buffer = OutputBuffer("s1", store, max_chars=10_000)
    buffer.add("stdout", "done", n=1)  # print("done") sends "done", then "\n"
    buffer.add("console", "0: 'ann'\n")  # the debugger's message, read between the two pieces
    buffer.add("console", "1: 'bo'\n")
    await buffer.flush(partial_lines=False)  # the timer's flush: the unfinished line waits, and what follows it
    buffer.add("stdout", "\n", n=2)
    await buffer.flush()
    page = await store.read_output("s1", None, 100)
    assert [(e.type, e.text) for e in page.entries] == [
        ("stdout", "done\n"),
        ("stdout", "0: 'ann'\n"),
        ("stdout", "1: 'bo'\n"),
    ]


@pytest.mark.asyncio
async def test_a_line_begun_at_the_end_of_a_full_read_is_not_cut_at_the_reads_end() -> None:
    """A read of the pipe holds whole lines and the start of the next: the next read finishes that line,
    also when the first read was as long as an entry may be (the limit is a line's, not a read's)."""
    store = MemoryStore()
    buffer = OutputBuffer("s1", store, max_chars=20)
    buffer.add("stdout", "x" * 18 + "\ntok", n=1)  # 22 characters read at once
    buffer.add("stdout", "en=[SECRET_1]\n", n=2)
    await buffer.flush()
    page = await store.read_output("s1", None, 100)
    assert [e.text for e in page.entries] == ["x" * 18 + "\n", "token=[SECRET_1]\n"]


def test_an_answers_output_tail_is_whole_lines_only() -> None:
    """A line's tail alone would be redacted as a shorter secret than the whole line is: never cut one."""
    from debugrelay.models import last_lines

    assert last_lines("ab\ncd\n", 10) == ("ab\ncd\n", False)
    assert last_lines("token=1234\nok\n", 5) == ("ok\n", True)  # not "4\nok\n"
    assert last_lines("first\nsecond\n", 7) == ("second\n", True)  # the cut falls on a line's start
    assert last_lines("x" * 20 + "\n", 5) == ("", True)  # the last line alone is too long: none of it
