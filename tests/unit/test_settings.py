"""The names a relay answers to, as the operator configures them through DEBUGRELAY_* variables."""

from __future__ import annotations

import msgspec
import pytest

from debugrelay.config import hide_password, load_settings


def test_allowed_hosts_and_cors_origins_are_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEBUGRELAY_ALLOWED_HOSTS", "relay, Relay.NS.svc:8765 ,,[fd00::1]")
    monkeypatch.setenv("DEBUGRELAY_CORS_ORIGINS", "https://ui.example,http://localhost:3000")
    settings = load_settings(advertise_url="http://10.0.0.7:8765")
    assert settings.allowed_hosts == ["relay", "Relay.NS.svc:8765", "[fd00::1]"]
    assert settings.cors_origins == ["https://ui.example", "http://localhost:3000"]
    assert settings.reachable_hosts() == [
        "127.0.0.1", "localhost", "::1", "relay", "relay.ns.svc", "fd00::1", "10.0.0.7"
    ]  # fmt: skip


@pytest.mark.parametrize(("bind", "answers_to_it"), [("0.0.0.0", False), ("::", False), ("192.168.1.20", True)])
def test_the_bind_address_is_a_name_unless_it_is_a_wildcard(bind: str, answers_to_it: bool) -> None:
    settings = load_settings(host=bind, advertise_url="http://relay-a:8765")
    hosts = settings.reachable_hosts()
    assert (bind in hosts) is answers_to_it
    assert {"127.0.0.1", "localhost", "::1", "relay-a"} <= set(hosts)


def test_passwords_in_a_redis_url_are_masked_wherever_they_are() -> None:

    assert hide_password("redis://user:pw@redis:6379/0") == "redis://user:***@redis:6379/0"
    assert hide_password("redis://:pw@redis:6379/0") == "redis://:***@redis:6379/0"
    assert hide_password("redis://redis:6379/0?password=pw&db=1") == "redis://redis:6379/0?password=***&db=1"
    assert hide_password("redis://redis:6379/0") == "redis://redis:6379/0"
    shown = load_settings(redis_url="redis://redis:6379/0?password=hunter2").public()
    assert "hunter2" not in msgspec.json.encode(shown).decode()
