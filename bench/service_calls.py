"""What one call of the relay's service costs in this process, with no debugger behind it: the gate every
operation passes (argument checks, redaction, the trail, persistence marking) and the operation's own
reads of the session record. The relay's own share of an answer, without HTTP and without debugpy; then
the same reads as GETs through the relay's ASGI app in process (no socket), beside ``GET /health``.

    .venv/bin/python -m bench.service_calls [--calls N] [--batches N]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from debugrelay.api import create_app
from debugrelay.config import load_settings
from debugrelay.service import RelayService
from debugrelay.wiring import build_manager


async def _per_call(call: Callable[[], Awaitable[Any]], calls: int, batches: int) -> dict[str, float]:
    """Microseconds per call: the median and the best of ``batches`` batches of ``calls`` calls."""
    for _ in range(calls // 10):  # warm
        await call()
    seen = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            await call()
        seen.append((time.perf_counter() - start) / calls * 1e6)
    return {"median_us": round(statistics.median(seen), 1), "best_us": round(min(seen), 1)}


async def measure(calls: int = 5000, batches: int = 7) -> dict[str, dict[str, float]]:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request would be most of what is timed
    with tempfile.TemporaryDirectory(prefix="debugrelay-bench-") as state:
        manager = build_manager(load_settings(state_dir=state, pool_size=0, launchers="local"))
        await manager.start()
        try:
            service = RelayService(manager)
            sid = (await service.create_session(name="bench")).session_id
            chosen: dict[str, Callable[[], Awaitable[Any]]] = {
                "status": lambda: service.status(sid),
                "session": lambda: service.session(sid),
                "breakpoints": lambda: service.breakpoints(sid),
                "output": lambda: service.output(sid, None, 200, None),
                "ping (a change)": lambda: service.ping(sid),
            }
            found = {name: await _per_call(call, calls, batches) for name, call in chosen.items()}
            app = create_app(manager.settings, manager)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
                for path in ("/health", f"/sessions/{sid}/status", f"/sessions/{sid}"):
                    label = "GET " + path.replace(sid, "{id}")
                    found[label] = await _per_call(lambda p=path: http.get(p), calls // 5, batches)
            return found
        finally:
            await manager.close()
            await manager.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.service_calls", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per batch")
    parser.add_argument("--batches", type=int, default=7, help="batches per operation (the median is shown)")
    args = parser.parse_args()
    for name, figures in asyncio.run(measure(args.calls, args.batches)).items():
        print(f"{name:26} {figures['median_us']:7.1f} us per call (best batch {figures['best_us']:.1f})")


if __name__ == "__main__":
    main()
