"""How many bytes the MCP tool list costs an agent: the ``tools/list`` answer, as the client receives it.

    .venv/bin/python bench/tool_list.py

Builds the MCP server in process (no program is started), asks ``tools/list`` through an MCP client,
and prints the number of tools and the bytes of the answer's ``tools`` array (compact JSON), those of
the debugger's core tools alone (the evidence tools left out), and the largest tools first. docs/agents.md
shows the same figures (``python -m debugrelay.mcp_server._catalog docs/agents.md``).
"""

from __future__ import annotations

import asyncio
import json

from debugrelay.mcp_server._catalog import measure


def main() -> None:
    print(json.dumps(asyncio.run(measure())))


if __name__ == "__main__":
    main()
