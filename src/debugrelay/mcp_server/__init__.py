"""MCP server: the debugger as tools for agents, over stdio (``debugrelay mcp``) or at ``/mcp``."""

from ._serve import McpEndpoint, run_stdio, serve_stdio
from ._toolset import DebugTools, build_server

__all__ = ["DebugTools", "McpEndpoint", "build_server", "run_stdio", "serve_stdio"]
