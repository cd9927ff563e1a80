"""A relay's redaction state: its rules and its sessions' placeholder tables, and how an operation's
inputs, answer and error pass through them (the service wraps every operation with it)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from debugrelay.errors import RelayError, StoreUnavailable
from debugrelay.models import OutputEntry, OutputPage, RedactionView, Status

from ._patterns import load_patterns
from ._redactor import OFF_LOOP_CHARS, Budget, Redactor, SubstituteMode, text_size
from ._rules import secret_expression
from ._table import Entry, Placeholders

if TYPE_CHECKING:
    from debugrelay.config import Settings
    from debugrelay.store import StateStore

log = logging.getLogger("debugrelay.redaction")

# What an agent sends that may carry placeholders, and how each is read.
_INPUTS: dict[str, SubstituteMode] = {"expression": "expression", "value": "expression", "object_ref": "expression"}
_TEXT_INPUTS: dict[str, SubstituteMode] = {"text": "text"}
_BREAKPOINT_FIELDS: dict[str, SubstituteMode] = {
    "condition": "expression",
    "hit_condition": "expression",
    "log_message": "log_message",
}
_NAMED_BY = ("expression", "object_ref")  # an answer named by what was asked for: os.environ['API_KEY']
# Output read around a page for a secret written across lines (a few characters each): this many lines and
# characters before and after it, of each stream
CONTEXT_LINES = 64
CONTEXT_CHARS = 4096
_entry_decoder = msgspec.json.Decoder(Entry)
_entry_encoder = msgspec.json.Encoder()


class RedactionSeam:
    """A relay's redaction: its rules, and the placeholder tables of its sessions (store-backed).

    One per relay, made by its session manager and shared by the HTTP API, /mcp and every service over
    it: two tables of one session would hand out one placeholder for two values. ``held``: the sessions
    this relay carries on (the manager's); another relay's are answered with a throwaway table, never stored.
    """

    def __init__(self, redactor: Redactor | None, store: StateStore, held: Mapping[str, object]) -> None:
        self.redactor = redactor
        self.store = store
        self.held = held
        self.tables: dict[str, Placeholders] = {}
        self.relay_table = Placeholders()  # answers that belong to no session (profiles); never stored

    @classmethod
    def from_settings(cls, settings: Settings, store: StateStore, held: Mapping[str, object]) -> RedactionSeam:
        """The redaction the settings ask for (built-in rules and ``DEBUGRELAY_REDACTION_PATTERNS``, or off)."""
        return cls(Redactor(load_patterns(settings.redaction_patterns)) if settings.redaction else None, store, held)

    @property
    def enabled(self) -> bool:
        return self.redactor is not None

    async def table(self, session_id: str) -> Placeholders:
        """The session's table, read from the store once; a throwaway one for an unknown session."""
        found = self.tables.get(session_id)
        if found is not None:
            return found
        if session_id not in self.held:
            return Placeholders()
        raw = await self.store.get_redactions(session_id)
        entries = []
        for value in raw.values():
            try:
                entries.append(_entry_decoder.decode(value))
            except msgspec.DecodeError:
                log.warning("skipping an unreadable placeholder entry of session %s", session_id)
        found = self.tables.setdefault(session_id, Placeholders(entries))
        if len(self.tables) > 2 * len(self.held) + 16:
            for sid in [s for s in self.tables if s not in self.held]:
                del self.tables[sid]
        return found

    async def persist(self, session_id: str | None, table: Placeholders) -> None:
        """Write the table's new entries; while the store is away they wait for the next answer."""
        pending = table.take_pending()
        if not pending or session_id is None or self.tables.get(session_id) is not table:
            return
        for entry in pending:
            log.info("redacted %s as %s in %s of session %s", entry.rule, entry.placeholder, entry.where, session_id)
        try:
            await self.store.add_redactions(session_id, {e.placeholder: _entry_encoder.encode(e) for e in pending})
        except StoreUnavailable:
            table.put_back(pending)

    def forget(self, session_id: str) -> None:
        self.tables.pop(session_id, None)

    def inputs(self, arguments: dict[str, Any], table: Placeholders) -> None:
        """Placeholders in what the agent sent, put back in place (``arguments`` of a bound call)."""
        assert self.redactor is not None
        put = self.redactor.substitute
        for name, value in arguments.items():
            mode = _INPUTS.get(name) or _TEXT_INPUTS.get(name)
            if mode is not None and isinstance(value, str):
                arguments[name] = put(value, table, mode)
            elif name in ("requests", "change") and value:
                items = value if isinstance(value, list) else [value]
                done = [_put_back_fields(item, table, put) for item in items]
                arguments[name] = done if isinstance(value, list) else done[0]

    async def answer(self, answer: Any, table: Placeholders, where: str, arguments: dict[str, Any]) -> Any:
        """The answer redacted, up to what one answer may have redacted; a large one in a worker thread,
        so that the event loop answers others (``/health``) meanwhile."""
        assert self.redactor is not None
        if isinstance(answer, OutputPage) and answer.outputs:
            return await self._output(answer, table, where, arguments)
        secret, budget = _named_by(arguments), Budget()
        printed: list[str] | None = None
        if isinstance(answer, Status) and answer.output:  # what the program printed last: its lines as one text
            printed = self.redactor.stream(answer.output.splitlines(keepends=True), table, where, budget)
            answer = msgspec.structs.replace(answer, output=None)
        if _size(answer) < OFF_LOOP_CHARS:
            done = self.redactor.walk(answer, table, where, secret=secret, budget=budget)
        else:
            done = await asyncio.to_thread(self.redactor.walk, answer, table, where, secret=secret, budget=budget)
        return done if printed is None else msgspec.structs.replace(done, output="".join(printed))

    async def _output(self, page: OutputPage, table: Placeholders, where: str, arguments: dict[str, Any]) -> Any:
        """A page of output, each stream's lines redacted as one text with the lines around the page (a secret
        the program writes a few characters a line is hidden as a whole)."""
        before, after = await self._around(page, arguments)
        redactor = self.redactor
        assert redactor is not None

        def run() -> OutputPage:
            budget = Budget()
            texts = [line.text for line in page.outputs]
            for kind in dict.fromkeys(line.type for line in page.outputs):
                at = [i for i, line in enumerate(page.outputs) if line.type == kind]
                done = redactor.stream(
                    [texts[i] for i in at], table, where, budget, before=before.get(kind, ""), after=after.get(kind, "")
                )
                for i, text in zip(at, done, strict=True):
                    texts[i] = text
            lines = [
                line if text is line.text else msgspec.structs.replace(line, text=text)
                for line, text in zip(page.outputs, texts, strict=True)
            ]
            rest: OutputPage = redactor.walk(msgspec.structs.replace(page, outputs=[]), table, where, budget=budget)
            return msgspec.structs.replace(rest, outputs=lines)

        if _size(page) < OFF_LOOP_CHARS:
            return run()
        return await asyncio.to_thread(run)

    async def _around(self, page: OutputPage, arguments: dict[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
        """The output of each stream just before the page and just after it (as far as it is written)."""
        session_id, stream, count = arguments.get("session_id"), arguments.get("stream"), len(page.outputs)
        if not isinstance(session_id, str) or session_id not in self.held or not page.cursor:
            return {}, {}
        try:
            window = await self.store.output_before(session_id, page.cursor, count + CONTEXT_LINES)
            later = (await self.store.read_output(session_id, page.cursor, CONTEXT_LINES)).entries
        except RelayError:
            return {}, {}  # the page is redacted line by line, as without context
        if stream is not None:
            window = [e for e in window if e.type == stream]
            later = [e for e in later if e.type == stream]
        if [e.text for e in window[-count:]] != [line.text for line in page.outputs]:
            window = []  # the page is not where the store has it now: no context before
        earlier = window[:-count]
        before = {
            k: "".join(e.text for e in earlier if e.type == k)[-CONTEXT_CHARS:] for k in {e.type for e in earlier}
        }
        after = {k: "".join(e.text for e in later if e.type == k)[:CONTEXT_CHARS] for k in {e.type for e in later}}
        return before, after

    def error(self, exc: RelayError, table: Placeholders, where: str, arguments: dict[str, Any]) -> None:
        """The error's message, details and hint redacted in place (the MCP SDK forwards exception text);
        about an expression touching a secret-named value, every quoted value in its message is hidden."""
        assert self.redactor is not None
        text = self.redactor.quoted if _named_by(arguments) else self.redactor.text
        exc.message = text(exc.message, table, where)
        exc.hint = self.redactor.text(exc.hint, table, where)
        exc.details = self.redactor.walk(exc.details, table, where)
        exc.args = (exc.message,)

    def view(self, table: Placeholders) -> list[RedactionView]:
        return [RedactionView(placeholder=e.placeholder, rule=e.rule, where=e.where, at=e.at) for e in table.entries()]


def _joined(entries: list[OutputEntry], kind: str) -> str:
    return "".join(e.text for e in entries if e.type == kind)


def _size(answer: Any) -> int:
    """About how much text ``answer`` holds: its JSON's length (encoded in C, a few microseconds), else
    the characters of its strings."""
    try:
        return len(_ENCODE(answer))
    except (TypeError, ValueError):
        return text_size(answer, OFF_LOOP_CHARS)


_ENCODE = msgspec.json.Encoder().encode


def _named_by(arguments: dict[str, Any]) -> bool:
    return any(isinstance(v := arguments.get(k), str) and secret_expression(v) for k in _NAMED_BY)


def _put_back_fields(item: Any, table: Placeholders, put: Callable[[str, Placeholders, SubstituteMode], str]) -> Any:
    if not isinstance(item, msgspec.Struct):
        return item
    changes = {
        f: put(v, table, mode)
        for f, mode in _BREAKPOINT_FIELDS.items()
        if isinstance(v := getattr(item, f, None), str) and "[" in v
    }
    return msgspec.structs.replace(item, **changes) if changes else item
