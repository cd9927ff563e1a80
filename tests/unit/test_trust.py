"""The key a relay seals stored records with and proves itself to replicas with: never in the store."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from debugrelay.config import load_settings
from debugrelay.trust import KEY_FILE, KeyFileError, RelayKeys


@pytest.fixture(autouse=True)
def _no_token_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEBUGRELAY_TOKEN", raising=False)


TARGET = {"kind": "local", "pid": 4242, "port": 5000, "started": 1712345678.125, "uid": 1000}


def test_without_a_token_the_key_is_made_once_in_the_state_folder_readable_by_its_owner_only(tmp_path: Path) -> None:
    settings = load_settings(state_dir=str(tmp_path / "state"))
    first = RelayKeys.for_settings(settings, durable=True)
    path = tmp_path / "state" / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = RelayKeys.for_settings(settings, durable=True)  # another relay of the same folder
    seal = first.seal("sess_1", "target", TARGET)
    assert again.sealed("sess_1", "target", TARGET, seal)
    assert list(path.parent.iterdir()) == [path]  # nothing else left behind
    path.chmod(0o644)
    RelayKeys.for_settings(settings, durable=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_memory_store_writes_no_key_and_a_token_gives_every_replica_the_same_key(tmp_path: Path) -> None:
    settings = load_settings(state_dir=str(tmp_path / "state"))
    RelayKeys.for_settings(settings, durable=False)
    assert not (tmp_path / "state").exists()
    one = RelayKeys.for_settings(load_settings(token="t0ken", state_dir=str(tmp_path / "a")), durable=True)
    two = RelayKeys.for_settings(load_settings(token="t0ken", state_dir=str(tmp_path / "b")), durable=True)
    other = RelayKeys.for_settings(load_settings(token="another", state_dir=str(tmp_path / "a")), durable=True)
    seal = one.seal("sess_1", "target", TARGET)
    assert two.sealed("sess_1", "target", TARGET, seal)
    assert not other.sealed("sess_1", "target", TARGET, seal)
    assert not (tmp_path / "a").exists()


def test_a_seal_holds_for_its_session_field_and_value_only() -> None:
    keys = RelayKeys(b"secret", "test")
    seal = keys.seal("sess_1", "target", TARGET)
    assert keys.sealed("sess_1", "target", dict(reversed(TARGET.items())), seal)  # key order does not matter
    assert not keys.sealed("sess_2", "target", TARGET, seal)  # replayed into another session
    assert not keys.sealed("sess_1", "launch", TARGET, seal)  # or into another field
    assert not keys.sealed("sess_1", "target", {**TARGET, "pid": 1}, seal)
    assert not keys.sealed("sess_1", "target", {k: v for k, v in TARGET.items() if k != "started"}, seal)
    assert not keys.sealed("sess_1", "target", TARGET, None)
    assert keys.peer_proof("ab" * 16, "http://a:1") != keys.peer_proof("ab" * 16, "http://b:1")


@pytest.mark.parametrize("content", ["", "not hex", "abcd\n"])
def test_a_key_file_no_relay_wrote_stops_the_relay(tmp_path: Path, content: str) -> None:
    (tmp_path / KEY_FILE).write_text(content)
    (tmp_path / KEY_FILE).chmod(0o600)
    with pytest.raises(KeyFileError, match="does not hold a key"):
        RelayKeys.for_settings(load_settings(state_dir=str(tmp_path)), durable=True)


def test_a_stored_keeper_secret_is_of_no_use_without_the_key_nor_for_another_session() -> None:
    keys, other = RelayKeys(b"token-1", "test"), RelayKeys(b"token-2", "test")
    secret = "ab" * 32
    stored = keys.hide("sess_1", secret)
    assert secret not in stored and stored != keys.hide("sess_1", secret)  # a nonce of its own each time
    assert keys.reveal("sess_1", stored) == secret
    assert other.reveal("sess_1", stored) is None  # another key
    assert keys.reveal("sess_2", stored) is None  # copied into another session's record
    head, _, tag = stored.rpartition(":")
    flipped = head[:-1] + ("0" if head[-1] != "0" else "1") + ":" + tag
    for forged in (flipped, secret, "", "sealed:v1:zz:zz:zz", None):
        assert keys.reveal("sess_1", forged) is None
