"""The prompt that carries the hypothesis -> test -> evaluate workflow over the evidence tools."""

from __future__ import annotations

from mcp.server.mcpserver.prompts.base import Prompt

WORKFLOW = """\
Investigate {problem} in the debugrelay session {session} like a seasoned debugger: hypothesis -> \
test -> evaluate, cheapest evidence first.

1. Collect: debug_analyze(take=2) takes two snapshots a second apart and names known patterns \
(deadlock, starvation, busy loop, exception storm, stuck asyncio task, blocked event loop, leak) \
with their evidence ids. For a crash, debug_snapshot(snapshot_id='post_mortem') or exception_autopsy.
2. Hypothesis: state ONE cause that the evidence points at (a matched pattern is a strong hint, \
not a proof).
3. Test with 2-3 targeted calls: debug_evidence(id, grep=...) on a snapshot, a capture point \
(debug_capture at the suspect line with the expressions that would confirm it, then \
debug_capture(capture_id) for its rows), or debug_evaluate while paused.
4. Evaluate: confirmed, rejected or inconclusive. Rejected -> a new hypothesis; inconclusive -> \
more evidence, then test again. Go deeper only after a confirmation.
5. Report the root cause with the evidence ids that show it, and challenge your own conclusion: \
what would contradict it, and did you look? Prefer a fix the evidence supports over a guess.
"""


def investigate(problem: str = "the problem", session_id: str = "(the most recent)") -> str:
    """The hypothesis -> test -> evaluate workflow for a hang, a crash, a leak or a slow program."""
    return WORKFLOW.format(problem=problem, session=session_id)


def prompts() -> list[Prompt]:
    return [Prompt.from_function(investigate, name="investigate", description=investigate.__doc__)]
