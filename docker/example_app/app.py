"""A toy order processor to try debugrelay on: it runs forever and handles one order per second.

It has a bug on purpose. Orders with a discount code come out with a *negative* total (the line
ends with ``<-- negative total?!``). Put a breakpoint in ``process_order`` and look at
``discount``: it is a percentage (10, 50) but the code treats it as a fraction.

Runs under ``python -m debugpy --listen 0.0.0.0:5678 /app/app.py`` in debugrelay/example-app.
Environment: ORDER_INTERVAL (seconds between orders, default 1), ORDER_SEED (default 42).
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import sys
import time
from dataclasses import dataclass, field

CATALOG = {"widget": 2.50, "gadget": 12.00, "gizmo": 7.25, "doohickey": 0.99}
DISCOUNTS = {"SAVE10": 10, "HALF": 50}  # percent off
CUSTOMERS = ["ada", "bob", "chen", "dana", "emeka", "fatima"]


@dataclass
class Order:
    id: int
    customer: str
    items: dict[str, int] = field(default_factory=dict)
    code: str | None = None


def make_order(order_id: int, rng: random.Random) -> Order:
    names = rng.sample(sorted(CATALOG), k=rng.randint(1, 3))
    items = {name: rng.randint(1, 4) for name in names}
    code = rng.choice([None, None, None, "SAVE10", "HALF"])
    return Order(id=order_id, customer=rng.choice(CUSTOMERS), items=items, code=code)


def process_order(order: Order) -> float:
    subtotal = 0.0
    for name, quantity in order.items.items():
        subtotal += CATALOG[name] * quantity
    discount = DISCOUNTS.get(order.code or "", 0)
    total = subtotal - subtotal * discount  # BUG: discount is a percentage, should be discount / 100
    return round(total, 2)


def main() -> None:
    # As PID 1 in a container, Python ignores SIGTERM unless it has a handler: stop promptly.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    interval = float(os.environ.get("ORDER_INTERVAL", "1"))
    rng = random.Random(int(os.environ.get("ORDER_SEED", "42")))
    revenue = 0.0
    print(f"order processor started (pid {os.getpid()}, one order every {interval:g}s)", flush=True)
    for order_id in itertools.count(1):
        order = make_order(order_id, rng)
        total = process_order(order)
        revenue += total
        warning = "  <-- negative total?!" if total < 0 else ""
        print(
            f"order #{order.id:05d} {order.customer:<7} items={sum(order.items.values()):2d} "
            f"code={order.code or '-':<7} total={total:9.2f} revenue={revenue:10.2f}{warning}",
            flush=True,
        )
        time.sleep(interval)


if __name__ == "__main__":
    main()
