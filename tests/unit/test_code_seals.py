"""Code a target runs for a session, as the store keeps it: sealed by the relay, checked when read back."""

from __future__ import annotations

import msgspec

from debugrelay.models import BreakpointRecord, SessionRecord, Watch
from debugrelay.sessions import seals
from debugrelay.trust import RelayKeys

KEYS = RelayKeys(b"token", "test")


def stored(record: SessionRecord) -> SessionRecord:
    """``record`` saved and read back (what a restarted relay or a replica reads)."""
    return msgspec.json.decode(msgspec.json.encode(record), type=SessionRecord)


def session(sid: str) -> SessionRecord:
    return SessionRecord(
        id=sid,
        watches=[Watch(id="w1", expression="len(items)"), Watch(id="w2", expression="user.name")],
        breakpoints=[
            BreakpointRecord(id="bp_1", file="/app/a.py", line=3),
            BreakpointRecord(id="bp_2", file="/app/a.py", line=5, condition="x > 1", hit_condition=">= 2"),
            BreakpointRecord(id="bp_3", file="/app/a.py", line=7, log_message="x={x}", capture="cp-1"),
        ],
    )


def test_sealed_code_reads_back_sealed_and_changed_code_does_not() -> None:
    record = session("sess_a")
    seals.seal_code(KEYS, record)
    back = stored(record)
    assert seals.check_code(KEYS, back) == []
    assert not any(w.unsealed for w in back.watches) and not any(b.unsealed for b in back.breakpoints)

    back.watches[1].expression = "__import__('os').system('id')"
    back.breakpoints[1].line = 9  # the sealed condition, moved to another line
    back.breakpoints[2].log_message = "{__import__('os').getpid()}"
    back.watches.append(Watch(id="w3", expression="1"))  # never sealed
    assert seals.check_code(KEYS, back) == ["w2", "w3", "bp_2", "bp_3"]
    assert back.breakpoints[2].shown  # a capture point's logpoint, unsealed: listed as a breakpoint
    assert seals.check_code(RelayKeys(b"other", "test"), stored(record)) == ["w1", "w2", "bp_2", "bp_3"]


def test_an_unsealed_item_stays_unsealed_and_a_sealed_one_does_not_move_to_another_session() -> None:
    record = session("sess_a")
    seals.seal_code(KEYS, record)
    other = session("sess_b")
    other.seals = dict(record.seals)  # the seals copied over with the same code
    assert seals.check_code(KEYS, other) == ["w1", "w2", "bp_2", "bp_3"]
    seals.seal_code(KEYS, other)  # saved again by the relay: what was read back unsealed is not sealed now
    assert seals.check_code(KEYS, stored(other)) == ["w1", "w2", "bp_2", "bp_3"]
