"""Each credential's request rate: a token bucket per credential name holding ten seconds' worth of its
``requests_per_minute``, so a burst from one credential runs out on its own bucket while every other
credential is served from theirs."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from debugrelay.errors import RelayError

from ._caller import Caller

BURST_SECONDS = 10.0  # a bucket holds this many seconds of a credential's rate


class RateLimited(RelayError):
    code = "rate_limited"
    status = 429
    default_hint = "Wait details.retry_after seconds (the Retry-After header), then go on; ask for a higher limit."


class RequestRates:
    """One bucket per credential; a refusal says which limit and when to come back."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # name -> (tokens, at)

    def take(self, caller: Caller) -> None:
        """One request of ``caller``'s, or :class:`RateLimited` when its bucket is empty."""
        rate = caller.requests_per_minute
        if not rate:
            return
        per_second = rate / 60.0
        burst = max(1.0, per_second * BURST_SECONDS)
        now = self.clock()
        tokens, at = self._buckets.get(caller.name, (burst, now))
        tokens = min(burst, tokens + (now - at) * per_second)
        if tokens < 1.0:
            self._buckets[caller.name] = (tokens, now)
            wait = max(1, math.ceil((1.0 - tokens) / per_second))
            raise RateLimited(
                f"'{caller.name}' made more than its {rate} requests a minute",
                details={"limit": "requests_per_minute", "caller": caller.name, "retry_after": wait},
            )
        self._buckets[caller.name] = (tokens - 1.0, now)

    def forget(self, names: set[str]) -> None:
        """Drop the buckets of credentials no longer in force."""
        for name in set(self._buckets) - names:
            del self._buckets[name]
