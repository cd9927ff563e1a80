"""How many bytes the MCP tool list costs an agent: the ``tools/list`` answer, as the client receives it.

    .venv/bin/python bench/tool_list.py

Builds the MCP server in process (no program is started), asks ``tools/list`` through an MCP client,
and prints the number of tools and the bytes of the answer's ``tools`` array (compact JSON), those of
the debugger's core tools alone (the evidence tools left out), and the largest tools first.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp import Client

from debugrelay.mcp_server import DebugTools, build_server
from debugrelay.service import RelayService


async def measure() -> dict[str, Any]:
    service = RelayService(lambda: None)  # tools/list never reaches the service
    server = build_server(service)
    core = {spec.name for spec in DebugTools(service).specs() if spec.core}
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
    each = {
        t.name: json.dumps(t.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":"))
        for t in tools
    }

    def size(names: list[str]) -> int:
        return len(json.dumps([json.loads(each[n]) for n in names], separators=(",", ":")).encode())

    return {
        "tools": len(tools),
        "bytes": size(list(each)),
        "core_tools": len(core),
        "core_bytes": size([n for n in each if n in core]),
        "largest": {k: len(v.encode()) for k, v in sorted(each.items(), key=lambda kv: -len(kv[1]))[:8]},
    }


def main() -> None:
    print(json.dumps(asyncio.run(measure())))


if __name__ == "__main__":
    main()
