"""The MCP tools: explicit names, descriptions written for a model, compact JSON answers.

Every tool answers one JSON object (as compact text, and as structured content). Failures are
tool errors carrying ``{"error": {code, message, hint, details}}``. Execution-control tools wait
for the next event and include it; inspection tools answer ``NOT_PAUSED`` while the target runs.
The tools are the relay's actions (``service/actions``), each declared once there and run by the relay in
one call; this module says what they share in the instructions.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool

from debugrelay import __version__
from debugrelay.service import DebugService
from debugrelay.service.actions import ActionSpec, actions

from ._prompts import prompts
from ._tools import mcp_tool

INSTRUCTIONS = """\
debugrelay debugs Python programs: breakpoints, stepping, variables and expressions in the \
running program. Typical story: debug_set_breakpoint(file, line) -> debug_launch(script) (answers \
with the first stop and its local variables) -> debug_evaluate / debug_variables / \
debug_stacktrace -> debug_step_over / debug_continue -> ... -> debug_disconnect. debug_launch \
stops on uncaught exceptions by default; then exception_autopsy gives the whole crash context in \
one call.
A relative path (script, file, cwd, 'FILE:LINE', a traced 'file.py:name') starts in your \
working folder. Arguments every tool shares: session_id (default: your newest session, so it is only \
needed with several); thread_id (default: the thread that stopped; threads_list gives the others); \
frame_index (0 = where the program stopped, 1 = its caller, ...: a frame's 'id' in \
debug_stacktrace); timeout (seconds to wait for the next stop, at most 300, default 30, 10 for \
steps and pause; then the answer is status 'running' with timed_out, not an error; 0 = answer at \
once); locals (default true: include the stopped frame's locals in the answer); library \
(default false: runs of library frames in a stack come as one entry, 'collapsed' counting them; \
true lists each). A recursion in a stack is one entry too ('repeated', 'arguments', 'last_arguments').
debug_launch, debug_continue, debug_step_over/into/out, debug_pause and breakpoint_wait answer \
with the event: status 'paused' with reason (breakpoint, step, exception, pause, entry), location, \
the source line ('code'), the frame's locals and the values of watched expressions \
(debug_evaluate watch=true); 'terminated' with exit_code; or 'running' with timed_out. Output \
printed since the previous answer comes as 'output'. Inspection tools answer NOT_PAUSED while the \
program runs. Secrets in answers are placeholders ([SECRET_1], ...): use one in an expression, \
condition or logpoint and the relay puts the value back.
debug_launch children (default false): debug the Python processes the program starts too (pools, \
subprocess); a stop then names its 'process'. Off, they run without the debugger and an answer \
names them ('undebugged').
A web service: debug_launch it with timeout=0, set a breakpoint in a handler, then debug_request \
(port, path, method (default GET), headers (a dict), body (text)) sends a request and answers with \
the stop it caused or the response."""


class DebugTools:
    """Every action (``service/actions``) as an MCP tool over one backend (the relay in this process, or a
    relay's HTTP API): each tool call is one call of ``backend.act``."""

    def __init__(self, backend: DebugService) -> None:
        self.backend = backend

    def specs(self) -> list[ActionSpec]:
        """What the tool list says of each tool, in its order."""
        return [found.spec for found in actions().values()]

    def tools(self) -> list[Tool]:
        """The tools, with explicit names and compact input schemas."""
        return [mcp_tool(found, self.backend) for found in actions().values()]


def build_server(backend: DebugService) -> MCPServer[Any]:
    """An MCP server whose tools drive ``backend``."""
    server: MCPServer[Any] = MCPServer(
        "debugrelay",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
        tools=DebugTools(backend).tools(),
    )
    for prompt in prompts():
        server.add_prompt(prompt)
    return server
