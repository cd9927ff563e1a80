"""The ``debugrelay`` command: ``serve`` starts the relay, ``mcp`` serves MCP on stdio, the others talk to a relay.

``_parser.py`` builds the command line and holds the entry point; ``_commands.py`` and ``_launch.py`` are
the client commands, ``_client.py`` what they share; ``_server.py`` is ``serve`` and ``mcp``.
"""

import sys

# httpx imports its own command line (rich, click: about 0.1 s of a command's start) whenever they are
# installed, as the relay's are; this command never runs it (httpx then offers a stub)
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

from ._client import CLI_HINTS  # noqa: E402
from ._parser import build_parser, main  # noqa: E402

__all__ = ["CLI_HINTS", "build_parser", "main"]
