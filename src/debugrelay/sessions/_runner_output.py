"""A test runner's own words in what a test run printed: pytest's banner (platform, rootdir, plugins,
"collected N items") and the warnings its plugins give as they load. An answer that carries a run's new
output (a stop, the end) leaves them out: they say nothing of the test, and a venv with many plugins prints
more of them than the test does. The output pages keep them."""

from __future__ import annotations

import re

from debugrelay.models import OutputLine

LEFT_OUT = "the test runner's banner and its plugins' warnings are left out here: the output pages keep them"
_BANNER_START = re.compile(r"^=+ test session starts =+\s*$")
_BANNER_END = re.compile(r"^(collected \d+ items?\b|collecting \.\.\.|no tests ran\b)")
# warnings.showwarning's first line: "<file>:<line>: <Category>: <message>"
_WARNING = re.compile(r"^(?P<file>\S.*?):\d+: (?P<category>\w*Warning): ")
_LIBRARY = ("/site-packages/", "/dist-packages/", "/_pytest/", "/pluggy/")
_WARNING_LINES = 40  # a warning's message lines at most, before its source line


def _runners_warning(text: str) -> bool:
    found = _WARNING.match(text)
    if found is None:
        return False
    return found["category"].startswith("Pytest") or any(part in found["file"] for part in _LIBRARY)


def without_runner_noise(lines: list[OutputLine]) -> tuple[list[OutputLine], bool]:
    """``lines`` (a pytest run's output, one line an entry) without the banner and the runner's and its
    plugins' warnings; and whether any line was left out."""
    kept: list[OutputLine] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.type == "stdout" and _BANNER_START.match(line.text):
            end = next((j for j in range(i + 1, len(lines)) if _BANNER_END.match(lines[j].text)), None)
            if end is not None:
                i = end + 1
                if i < len(lines) and not lines[i].text.strip():
                    i += 1  # the blank line under the banner
                continue
        if line.type == "stderr" and _runners_warning(line.text):
            limit = min(len(lines), i + _WARNING_LINES)
            ahead = range(i + 1, limit)
            source = next((j for j in ahead if lines[j].type == "stderr" and lines[j].text.startswith("  ")), None)
            if source is not None:
                i = source + 1
                continue
        kept.append(line)
        i += 1
    return kept, len(kept) != len(lines)
