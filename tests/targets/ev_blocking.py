"""An event loop blocked by a synchronous call inside a coroutine."""

import asyncio
import time


async def heartbeat():
    while True:  # noqa: ASYNC110 - a loop that should run every 10 ms
        await asyncio.sleep(0.01)


async def handler():
    print("started", flush=True)
    while True:
        time.sleep(0.5)  # noqa: ASYNC251  # blocks-the-loop


async def main():
    beat = asyncio.create_task(heartbeat(), name="heartbeat")
    await asyncio.gather(beat, handler())


asyncio.run(main())
