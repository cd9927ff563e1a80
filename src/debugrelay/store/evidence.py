"""The state store's evidence namespace: large values and long outputs kept whole, per session, bounded,
gone with the session.

Each state store hands out its own (:attr:`StateStore.evidence`): Redis keys under the store's namespace,
files under the state dir for the memory store of a relay that has one (big values stay out of memory),
memory otherwise. An answer that would be too long for an agent carries an evidence id instead of being cut.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
import re
import secrets
import shutil
import time
from pathlib import Path

import msgspec

from debugrelay.errors import NotFound

MAX_ITEMS_PER_SESSION = 200
MAX_BYTES_PER_SESSION = 16 * 1024 * 1024
MAX_ITEM_BYTES = 4 * 1024 * 1024
_ID = re.compile(r"ev-[0-9a-f]{12}")


class EvidenceItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One kept value: what it is, whose, when, and its whole text."""

    id: str
    session_id: str
    kind: str  # snapshot | post_mortem | capture | value
    title: str = ""
    created_at: float
    text: str


encode_item = msgspec.json.Encoder().encode
decode_item = msgspec.json.Decoder(EvidenceItem).decode


def new_id() -> str:
    return "ev-" + secrets.token_hex(6)


def check_id(evidence_id: str) -> None:
    """An id that is not of the evidence store's shape names nothing: not found, like any unknown id."""
    if not _ID.fullmatch(evidence_id):
        raise no_evidence(evidence_id[:40])


def no_evidence(evidence_id: str) -> NotFound:
    return NotFound(
        f"no evidence '{evidence_id}'",
        details={"evidence_id": evidence_id},
        hint="Evidence is removed with its session, and the oldest goes when a session keeps more than its bound.",
    )


class EvidenceStore(abc.ABC):
    """Where evidence lives; each session keeps at most ``MAX_ITEMS_PER_SESSION`` items and
    ``MAX_BYTES_PER_SESSION`` bytes (the oldest go first)."""

    name = "abstract"

    @abc.abstractmethod
    async def put(self, item: EvidenceItem) -> None:
        """Keep ``item``; drop the session's oldest items while it is over its bounds."""

    @abc.abstractmethod
    async def get(self, evidence_id: str) -> EvidenceItem | None:
        """The item, or None when it is gone (or never was)."""

    @abc.abstractmethod
    async def ids(self, session_id: str) -> list[str]:
        """The session's evidence ids, oldest first."""

    @abc.abstractmethod
    async def drop_session(self, session_id: str) -> None:
        """Remove everything the session kept."""

    async def add(self, session_id: str, kind: str, text: str, title: str = "") -> EvidenceItem:
        """Keep ``text`` as a new item of ``session_id`` (cut past ``MAX_ITEM_BYTES``, and saying so)."""
        if len(text) > MAX_ITEM_BYTES:
            text = text[:MAX_ITEM_BYTES] + f"\n... cut: the item was {len(text)} characters, {MAX_ITEM_BYTES} are kept"
        item = EvidenceItem(
            id=new_id(), session_id=session_id, kind=kind, title=title, created_at=time.time(), text=text
        )
        await self.put(item)
        return item


class MemoryEvidence(EvidenceStore):
    """The in-memory twin (tests, and memory stores without an evidence folder)."""

    name = "memory"

    def __init__(self) -> None:
        self.items: dict[str, EvidenceItem] = {}

    async def put(self, item: EvidenceItem) -> None:
        self.items[item.id] = item
        mine = [i for i in self.items.values() if i.session_id == item.session_id]
        while len(mine) > MAX_ITEMS_PER_SESSION or sum(len(i.text) for i in mine) > MAX_BYTES_PER_SESSION:
            del self.items[mine.pop(0).id]

    async def get(self, evidence_id: str) -> EvidenceItem | None:
        return self.items.get(evidence_id)

    async def ids(self, session_id: str) -> list[str]:
        return [i.id for i in self.items.values() if i.session_id == session_id]

    async def drop_session(self, session_id: str) -> None:
        for key in await self.ids(session_id):
            del self.items[key]


class FileEvidence(EvidenceStore):
    """Files under ``<state dir>/evidence/<session>/``, one JSON file per item (private to the relay's user)."""

    name = "files"

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _folder(self, session_id: str) -> Path:
        return self.root / session_id

    def _put(self, item: EvidenceItem) -> None:
        folder = self._folder(item.session_id)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{time.time_ns():020d}-{item.id}.json"  # names sort oldest first
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(encode_item(item))
        os.replace(tmp, path)
        kept = sorted(folder.glob("*-ev-*.json"))
        sizes = [p.stat().st_size for p in kept]
        while len(kept) > MAX_ITEMS_PER_SESSION or sum(sizes) > MAX_BYTES_PER_SESSION:
            kept.pop(0).unlink(missing_ok=True)
            sizes.pop(0)

    async def put(self, item: EvidenceItem) -> None:
        await asyncio.to_thread(self._put, item)

    def _get(self, evidence_id: str) -> EvidenceItem | None:
        for path in self.root.glob(f"*/*-{evidence_id}.json"):
            with contextlib.suppress(OSError, msgspec.DecodeError):
                return decode_item(path.read_bytes())
        return None

    async def get(self, evidence_id: str) -> EvidenceItem | None:
        return await asyncio.to_thread(self._get, evidence_id)

    async def ids(self, session_id: str) -> list[str]:
        folder = self._folder(session_id)
        paths = await asyncio.to_thread(lambda: sorted(folder.glob("*-ev-*.json")))
        return [p.stem.partition("-")[2] for p in paths]

    async def drop_session(self, session_id: str) -> None:
        await asyncio.to_thread(shutil.rmtree, self._folder(session_id), True)
