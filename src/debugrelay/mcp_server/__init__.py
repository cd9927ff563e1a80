"""MCP server: the debugger as tools for agents, over stdio (``debugrelay mcp``) or at ``/mcp``."""

from typing import Any

from ._serve import run_stdio, serve_stdio
from ._toolset import DebugTools, build_server


def __getattr__(name: str) -> Any:
    """``McpEndpoint`` (the relay's ``/mcp``) loads the web framework: only when asked for."""
    if name == "McpEndpoint":
        from ._endpoint import McpEndpoint

        return McpEndpoint
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DebugTools", "McpEndpoint", "build_server", "run_stdio", "serve_stdio"]
