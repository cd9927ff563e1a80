"""An asyncio task awaits a future nobody sets."""

import asyncio


async def fetch_reply(pending):
    return await pending  # never-set


async def main():
    pending = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(fetch_reply(pending), name="fetch-reply")
    print("started", flush=True)
    await task


asyncio.run(main())
