"""Variables of a frame by scope (locals, arguments, globals) and expansion by path (``self.repo._conn``)."""

from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from debugrelay.errors import InvalidReference, InvalidRequest, RelayError
from debugrelay.models import cut_text
from debugrelay.sessions import RefMeta

from ._probe import ProbeUnavailable, call_probe, dap
from ._reads import variables_raw
from ._render import GROUPS, JUDGED, render_variables

if TYPE_CHECKING:
    from debugrelay.sessions import Session

SCOPES = ("locals", "arguments", "globals", "all")
GROUPS_AND_SPECIAL = GROUPS
SYNTHETIC = frozenset({"len()"})  # debugpy's own entry in a container's children; the length is shown
CHILD_VALUE_CHARS = 80
_DEFAULT_REPR = re.compile(r"^<[\w.]+ object at 0x[0-9a-fA-F]+>$")
_TOKEN = re.compile(r"\s*(?:\.?\s*([^\s.\[\]]+)|\[\s*([^\]]+?)\s*\])")


async def scope_refs(session: Session, frame_id: int) -> dict[str, int]:
    """``{"Locals": ref, "Globals": ref}`` of a DAP frame, registered for rendering."""
    body = await dap(session, "scopes", {"frameId": frame_id}, stable=True)
    refs: dict[str, int] = {}
    for scope in body.get("scopes", []):
        ref = int(scope.get("variablesReference") or 0)
        if ref:
            session.remember_ref(ref, RefMeta(frame_id=frame_id, evaluate_name=None, chain=()))
            refs.setdefault(str(scope.get("name")), ref)
    return refs


async def children(session: Session, ref: int, limit: int | None = None) -> dict[str, Any]:
    """Rendered children of ``ref`` (lengths, circular marks, failed reprs), at most ``limit``."""
    body = await dap(session, "variables", {"variablesReference": ref})
    return await render_variables(session, ref, body.get("variables", []), 0, limit)


async def argument_names(session: Session, frame_id: int) -> list[str] | None:
    """The frame's parameters as its code object declares them; None when the probe cannot tell."""
    try:
        info = await call_probe(session, frame_id, "frame_info()", stable=True)
    except ProbeUnavailable:
        return None
    if not isinstance(info, dict) or "args" not in info:
        return None
    return [str(a) for a in info["args"]]


async def mark_failed_reprs(session: Session, frame_id: int, variables: list[dict[str, Any]]) -> None:
    """Mark ``repr_error`` where debugpy fell back to ``<Class object at 0x..>`` because the class's own
    ``__repr__`` raised (it does not say so itself)."""
    suspects = [
        v for v in variables if _DEFAULT_REPR.match(str(v.get("value", ""))) and str(v.get("name", "")).isidentifier()
    ]
    if not suspects:
        return
    names = ", ".join(v["name"] for v in suspects)
    try:
        flags = await call_probe(session, frame_id, f"custom_repr([{names}])")
    except ProbeUnavailable:
        return
    if isinstance(flags, list):
        for var, failed in zip(suspects, flags, strict=False):
            if failed:
                var["repr_error"] = True


def compact(var: dict[str, Any]) -> dict[str, Any]:
    """Drop what the rest says already (``expandable`` goes with ``variable_reference``) and empty fields."""
    return {k: v for k, v in var.items() if v is not None and k != "expandable"}


def short(var: dict[str, Any]) -> dict[str, Any]:
    """A nested value: name, type and a short repr."""
    out = compact(var)
    value = str(out.get("value", ""))
    if len(value) > CHILD_VALUE_CHARS:
        out["value"] = cut_text(value, CHILD_VALUE_CHARS)
        out["truncated"] = True
    return out


async def expand_one_level(session: Session, var: dict[str, Any], limit: int) -> None:
    """Put the immediate attributes/items of ``var`` under ``children``: nested values as type, short repr."""
    ref = var.get("variable_reference")
    if not ref:
        return
    try:
        listing = await children(session, ref, limit)
    except RelayError as exc:
        var["children_error"] = exc.message
        return
    shown = [short(c) for c in listing["variables"] if c.get("name") not in SYNTHETIC]
    var["children"] = shown
    total = var.get("length")
    if not isinstance(total, int):
        total = listing["total"] - sum(1 for c in listing["variables"] if c.get("name") in SYNTHETIC)
    if listing["has_more"] or total > len(shown):
        var["children_total"] = total
        var["children_truncated"] = True


async def frame_variables(
    session: Session,
    *,
    scope: str = "all",
    frame_index: int = 0,
    thread_id: int | None = None,
    expand: str | None = None,
    start: int = 0,
    count: int | None = None,
) -> dict[str, Any]:
    """``variables_get``: a frame's variables by scope, or the children of a variable path."""
    if scope not in SCOPES:
        raise InvalidRequest(
            f"unknown scope '{scope}'", details={"scope": scope}, hint="Use " + ", ".join(SCOPES) + "."
        )
    if start < 0 or (count is not None and not 1 <= count <= 1000):
        raise InvalidRequest(
            "start must be >= 0 and count between 1 and 1000", details={"start": start, "count": count}
        )
    session.require_paused()
    fid = await session.frame_id(frame_index, thread_id)
    refs = await scope_refs(session, fid)
    if expand:
        return await _expand_path(session, refs, expand, frame_index=frame_index, start=start, count=count)
    items: list[dict[str, Any]] = []
    found: dict[str, Any] = {}
    out: dict[str, Any] = {"frame_id": frame_index, "scope": scope}
    if scope != "globals":
        local_ref = refs.get("Locals") or next(iter(refs.values()), 0)
        found = await children(session, local_ref) if local_ref else {}
        listing = found.get("variables", [])
        if found.get("hidden"):
            out["hidden"] = found["hidden"]
        args = await argument_names(session, fid)
        if args is None:
            out["arguments_known"] = False
            args = []
        by_name = {v["name"]: v for v in listing}
        arguments = [by_name[a] for a in args if a in by_name]
        others = [v for v in listing if v["name"] not in set(args)]
        if scope in ("arguments", "all"):
            items += [{**v, "scope": "argument"} if scope == "all" else v for v in arguments]
        if scope in ("locals", "all"):
            items += [{**v, "scope": "local"} if scope == "all" else v for v in others]
    else:
        global_ref = refs.get("Globals")
        items = (await children(session, global_ref))["variables"] if global_ref else []
    page = items[start : start + count] if count is not None else items[start:]
    if scope != "globals" and not found.get(JUDGED):
        await mark_failed_reprs(session, fid, page)
    out.update(variables=[compact(v) for v in page], total=len(items), has_more=start + len(page) < len(items))
    return out


def parse_path(path: str) -> list[str]:
    """``self.items[0]['k'].x`` -> ``["self", "items", "0", "'k'", "x"]``: names as debugpy shows."""
    tokens: list[str] = []
    pos = 0
    text = path.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise InvalidRequest(
                f"cannot parse variable path '{path}'",
                details={"expand": path},
                hint="Use names, dots and [index] or ['key'], e.g. self.repo._conn or items[0].",
            )
        tokens.append(match.group(1) or match.group(2))
        pos = match.end()
    if not tokens:
        raise InvalidRequest("empty variable path", details={"expand": path})
    return tokens


def _matches(name: str, token: str) -> bool:
    if name == token:
        return True
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return name in (repr(token[1:-1]), token[1:-1])
    return False


async def _expand_path(
    session: Session, refs: dict[str, int], path: str, *, frame_index: int, start: int, count: int | None
) -> dict[str, Any]:
    tokens = parse_path(path)
    ref = 0
    found: dict[str, Any] | None = None
    for scope_name in ("Locals", "Globals"):
        scope_ref = refs.get(scope_name)
        if not scope_ref:
            continue
        listing = (await children(session, scope_ref))["variables"]
        found = next((v for v in listing if v["name"] == tokens[0]), None)
        if found is not None:
            break
    if found is None:
        raise InvalidReference(
            f"no variable '{tokens[0]}' in frame {frame_index}",
            details={"expand": path, "frame_index": frame_index},
            hint="List the frame's variables (scope all).",
        )
    walked = tokens[0]
    for token in tokens[1:]:
        ref = found.get("variable_reference") or 0
        if not ref:
            raise InvalidReference(f"'{walked}' has no children", details={"expand": path, "at": walked})
        listing = (await children(session, ref))["variables"]
        found = next((v for v in listing if _matches(str(v["name"]), token)), None)
        if found is None:
            names = [str(v["name"]) for v in listing][:30]
            raise InvalidReference(
                f"'{walked}' has no child '{token}'",
                details={"expand": path, "at": walked, "children": names},
                hint="details.children lists the names that are there.",
            )
        walked += f"[{token}]" if token[0].isdigit() or token[0] in "'\"" else f".{token}"
    ref = found.get("variable_reference") or 0
    out: dict[str, Any] = {
        "frame_id": frame_index,
        "parent": path,
        "type": found.get("type"),
        "value": found.get("value"),
    }
    if not ref:
        out.update(variables=[], total=0, has_more=False)
        return out
    listing = await variables_raw(session, ref, start, count)
    out.update(
        variable_reference=ref,
        variables=[compact(v) for v in listing["variables"]],
        total=listing["total"],
        has_more=listing["has_more"],
    )
    return out


async def gather_limited(coros: list[Any], limit: int = 8) -> list[Any]:
    """Run ``coros`` concurrently, at most ``limit`` in flight (DAP requests pipeline on one connection)."""
    sem = asyncio.Semaphore(limit)

    async def run(coro: Any) -> Any:
        async with sem:
            return await coro

    return await asyncio.gather(*(run(c) for c in coros))
