"""The ``debugrelay`` command: ``serve`` starts the relay, ``mcp`` serves MCP on stdio, the others talk to a relay.

``_parser.py`` builds the command line and holds the entry point; ``_commands.py`` and ``_launch.py`` are
the client commands, ``_client.py`` what they share; ``_server.py`` is ``serve`` and ``mcp``.
"""

import sys

# httpx imports its own command line (rich, click: about 0.1 s of a command's start) whenever they are
# installed, as the relay's are; this command never runs it (httpx then offers a stub)
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from typing import Any  # noqa: E402

from ._parser import build_parser, main  # noqa: E402


def __getattr__(name: str) -> Any:
    """``CLI_HINTS`` comes with the client commands' code: loaded when asked for, not for ``--help``."""
    if name == "CLI_HINTS":
        from ._client import CLI_HINTS

        return CLI_HINTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CLI_HINTS", "build_parser", "main"]
