"""The tool list as docs/agents.md shows it, made from the actions' declarations: the table of tools and
what the list costs a model. ``python -m debugrelay.mcp_server._catalog docs/agents.md`` rewrites the
section; a test fails when it drifts from the declarations.

    python -m debugrelay.mcp_server._catalog [FILE]    (no FILE: print the section)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcp import Client

from debugrelay.service import RelayService
from debugrelay.service.actions import actions

from ._toolset import build_server

BEGIN = "<!-- tools: made by `python -m debugrelay.mcp_server._catalog docs/agents.md` -->"
END = "<!-- tools: end -->"


async def measure() -> dict[str, Any]:
    """The ``tools/list`` answer as a client receives it: how many tools and how many bytes of compact JSON,
    the debugger's core tools (the evidence tools left out) apart, and the largest tools."""
    server = build_server(RelayService(lambda: None))  # tools/list never reaches the service
    core = {found.name for found in actions().values() if found.spec.core}
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


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def section(measured: dict[str, Any]) -> str:
    """The tools' table, each with its description and arguments as declared, and what the list costs."""
    rows = ["| tool | what for | arguments |", "|---|---|---|"]
    for found in actions().values():
        params = found.signature.parameters.values()
        args = ", ".join(f"`{p.name}`" + ("" if p.default is not p.empty else " (required)") for p in params)
        rows.append(f"| `{found.name}` | {_cell(found.description)} | {args or '-'} |")
    cost = (
        f"{measured['tools']} tools; the tool list a model reads costs {measured['bytes']:,} bytes of JSON, the "
        f"{measured['core_tools']} debugger tools {measured['core_bytes']:,} of them (the arguments every tool "
        "shares are described once, in the server's instructions)."
    )
    return "\n".join([BEGIN, "", *rows, "", cost, "", END])


def rewritten(text: str, made: str) -> str:
    """``text`` with its section between the markers replaced by ``made``."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + made + text[end:]


def main(argv: list[str]) -> int:
    made = section(asyncio.run(measure()))
    if not argv:
        print(made)
        return 0
    path = Path(argv[0])
    path.write_text(rewritten(path.read_text(encoding="utf-8"), made), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
