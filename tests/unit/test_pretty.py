"""The CLI's --pretty text of an answer."""

from __future__ import annotations

from debugrelay.client._pretty import render


def test_output_marks_where_stderr_starts_not_each_chunk_of_it() -> None:
    chunks = [
        {"type": "stdout", "text": "running\n"},
        *({"type": "stderr", "text": text} for text in [".", ".", "F", "\n", "FAIL: test_sum\n"]),
        {"type": "stdout", "text": "done\n"},
        {"type": "stderr", "text": "late\n"},
    ]
    text = render("output", {"outputs": chunks, "cursor": "7"})
    assert text == "running\n[stderr] ..F\nFAIL: test_sum\ndone\n[stderr] late\n-- cursor 7"
