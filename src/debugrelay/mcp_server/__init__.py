"""MCP server: the debugger as tools for agents, over stdio (``debugrelay mcp``) or at ``/mcp``."""

from ._backend import Backend, HttpBackend, LocalBackend
from ._serve import McpEndpoint, run_stdio, serve_stdio
from ._tools import DebugTools, build_server

__all__ = [
    "Backend",
    "DebugTools",
    "HttpBackend",
    "LocalBackend",
    "McpEndpoint",
    "build_server",
    "run_stdio",
    "serve_stdio",
]
