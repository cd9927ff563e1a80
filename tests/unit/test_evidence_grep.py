"""Searching evidence with a pattern an agent sent: RE2 or a clear refusal, and pages bounded in size."""

from __future__ import annotations

import pytest

from debugrelay.errors import InvalidRequest
from debugrelay.evidence import compile_grep, grep_lines


def test_a_pattern_that_backtracks_for_ever_in_re_is_answered() -> None:
    text = "\n".join(["a" * 300, "ab", "b" * 5])
    found = grep_lines(text, compile_grep("(a|a)*b"), 0, 10, 1000)
    assert found.lines == ["2: ab", "3: bbbbb"] and found.matches == 2 and found.total_lines == 3
    assert grep_lines(text, compile_grep("^(a+)+$"), 0, 10, 1000).matches == 1


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?P<x>a)(?P=x)", "(?=a)a", "(?<!b)a", "(?>a)", "a++", r"a\Z", "(a"])
def test_what_re2_does_not_accept_is_refused_with_a_hint(pattern: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        compile_grep(pattern)
    assert "RE2" in caught.value.message and "lookarounds" in caught.value.hint
    assert caught.value.details == {"grep": pattern}


def test_a_page_holds_at_most_its_characters_and_at_least_one_line() -> None:
    text = "\n".join(f"{n} " + "x" * 98 for n in range(50))
    page = grep_lines(text, None, 0, 50, 1000)
    assert len(page.lines) == 10 and page.selected == 50 and page.matches is None  # 10 lines of 100: 1000
    assert grep_lines(text, None, 5, 50, 10).lines == [text.splitlines()[5]]  # a long line still comes alone
    hits = grep_lines(text, compile_grep("^1"), 0, 50, 300)
    assert hits.matches == 11 and [line.split(":")[0] for line in hits.lines] == ["2", "11"]
