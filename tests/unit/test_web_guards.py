"""The HTTP layer's bookkeeping on a clock the test moves: failed-token buckets, view sessions, stream
slots, and the parsing of Host and Origin. The relay-level behaviour is in tests/integration."""

from __future__ import annotations

import asyncio

import pytest

from debugrelay.api.auth import FailedAttempts, client_key
from debugrelay.api.browser import Authority, parse_authority, parse_origin
from debugrelay.api.ui import StreamSlots, ViewSessions


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failed_attempts_allow_a_burst_then_one_a_second() -> None:
    clock = Clock()
    attempts = FailedAttempts(burst=3, per_second=1.0, clock=clock)
    for _ in range(3):
        assert attempts.retry_after("a") == 0
        attempts.failed("a")
    assert attempts.retry_after("a") == 1
    assert attempts.retry_after("b") == 0  # per address
    clock.now += 1.0
    assert attempts.retry_after("a") == 0
    attempts.failed("a")
    assert attempts.retry_after("a") == 1
    clock.now += 10.0  # refilled to the burst: forgotten
    assert attempts.retry_after("a") == 0
    assert not attempts._buckets


def test_failed_attempts_remember_a_bounded_number_of_addresses() -> None:
    attempts = FailedAttempts(burst=1, addresses=100, overall=10_000, clock=Clock())
    for n in range(1000):
        attempts.failed(f"10.0.{n // 256}.{n % 256}")
    assert len(attempts._buckets) == 100
    assert attempts.retry_after("10.0.3.231") == 1  # the latest are kept


def test_view_sessions_end_after_their_lifetime_or_when_idle_or_revoked() -> None:
    clock = Clock()
    views = ViewSessions(absolute=100.0, idle=30.0, clock=clock)
    kept = views.open()
    idle = views.open()
    assert kept != idle and len(kept) >= 40
    for _ in range(3):  # used every 20 s: the idle clock restarts each time
        clock.now += 20.0
        assert views.valid(kept)
    assert not views.valid(idle)  # 60 s without a request
    clock.now += 40.0  # 100 s after sign-in: over, however busy
    assert not views.valid(kept)
    revoked = views.open()
    views.revoke(revoked)
    assert not views.valid(revoked)
    assert not views.valid("") and not views.valid("made-up")


def test_view_sessions_are_bounded_the_oldest_going_first() -> None:
    views = ViewSessions(absolute=100.0, idle=100.0, limit=3, clock=Clock())
    first, *rest = [views.open() for _ in range(4)]
    assert not views.valid(first)
    assert all(views.valid(v) for v in rest)


def test_stream_slots_cap_per_client_and_in_all() -> None:
    slots = StreamSlots(total=3, per_client=2)
    assert slots.take("a") and slots.take("a")
    assert not slots.take("a")
    assert slots.take("b")
    assert not slots.take("c")  # the total
    slots.give_back("a")
    assert slots.take("c")
    for who in ("a", "b", "c"):
        slots.give_back(who)
    assert not slots._open


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("127.0.0.1", Authority("127.0.0.1", None)),
        ("LocalHost.:8765", Authority("localhost", 8765)),
        ("[::1]:80", Authority("::1", 80)),
        ("[0:0::1]", Authority("::1", None)),
        ("debugrelay_relay-1:8765", Authority("debugrelay_relay-1", 8765)),
        ("127.0.0.1:x.evil.example", None),
        ("127.0.0.1:0", None),
        ("127.0.0.1:65536", None),
        ("127.0.0.1:", None),
        ("[::1", None),
        ("::1", None),
        ("[127.0.0.1]", None),
        ("a..b", None),
        ("a" * 64 + ".example", None),
        ("", None),
        ("h\u00f6st", None),
    ],
)
def test_host_parsing(value: str, parsed: Authority | None) -> None:
    assert parse_authority(value) == parsed


def test_origin_parsing() -> None:
    assert parse_origin("http://localhost:3000") == ("http", Authority("localhost", 3000))
    assert parse_origin("HTTPS://Relay.Example/") == ("https", Authority("relay.example", None))
    for bad in ("null", "file://", "http://", "http://a/b", "http://u@a", "javascript:x", "http://a:99999"):
        assert parse_origin(bad) is None, bad


def test_client_keys() -> None:
    assert client_key({"client": ("127.0.0.2", 5000)}) == "127.0.0.2"  # type: ignore[typeddict-item]
    assert client_key({"client": ("2001:db8::1", 1)}) == "2001:db8::/64"  # type: ignore[typeddict-item]
    assert client_key({"client": ("::ffff:10.0.0.1", 1)}) == "10.0.0.1"  # type: ignore[typeddict-item]
    assert client_key({}) == "-"  # type: ignore[typeddict-item]


def test_a_view_sessions_end_is_awaitable_for_its_streams() -> None:
    async def scenario() -> None:
        views = ViewSessions(absolute=0.2, idle=100.0)
        signed_out, timed_out = views.open(), views.open()
        waiting = asyncio.ensure_future(views.ended(signed_out))
        await asyncio.sleep(0)
        assert not waiting.done()
        views.revoke(signed_out)
        await asyncio.wait_for(waiting, timeout=30)
        await asyncio.wait_for(views.ended(timed_out), timeout=30)  # its lifetime's end
        assert not views.holds(timed_out) and not views._ends

    asyncio.run(scenario())


def test_wrong_tokens_from_every_address_share_one_budget_that_spares_addresses_the_right_token_came_from() -> None:
    clock = Clock()
    attempts = FailedAttempts(burst=3, per_second=1.0, overall=5, overall_per_second=0.5, clock=clock)
    attempts.succeeded("10.0.0.1")  # the token's holder
    for n in range(5):  # five hosts, one wrong token each: within every address's own burst
        assert attempts.retry_after(f"10.0.1.{n}") == 0
        attempts.failed(f"10.0.1.{n}")
    assert attempts.retry_after("10.0.1.9") == 2  # a sixth host waits for the shared budget to refill
    assert attempts.retry_after("10.0.1.0") == 2  # an address no right token came from: its right token too
    assert attempts.retry_after("10.0.0.1") == 0  # the holder's address is judged by its own bucket only
    attempts.failed("10.0.0.1")
    assert attempts.retry_after("10.0.0.1") == 0
    clock.now += 2.0
    assert attempts.retry_after("10.0.1.9") == 0  # refilled: one more guess
