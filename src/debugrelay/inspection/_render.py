"""Compact rendering of DAP variables: truncation, lengths, circular references, failed reprs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from debugrelay.errors import RelayError
from debugrelay.models import cut_text, is_cut
from debugrelay.sessions import RefMeta

if TYPE_CHECKING:
    from debugrelay.sessions import Session

# debugpy's synthetic groups are not variables
GROUPS = frozenset({"special variables", "function variables", "class variables", "protected variables"})


# pytest's assertion rewriting leaves these in a test's locals: half the bytes of a failing test's stop
REWRITE_PREFIXES = ("@py_assert", "@py_format")
JUDGED = "reprs_judged"  # render_variables' mark: the target told every failed repr (no probe needed)
TARGET_FACTS = "debugrelay"  # the target's hook adds [id, length, repr_failed] to each variable (_boot)
DEFAULT_PAGE = 100  # items of a long sequence per page unless asked otherwise
SLICEABLE = frozenset({"list", "tuple", "str", "bytes", "bytearray", "range", "deque"})


def render_one(var: dict[str, Any], max_chars: int) -> dict[str, Any]:
    name = var.get("name", "")
    value: str = var.get("value", "")
    vtype = var.get("type") or None
    out: dict[str, Any] = {"name": name, "value": value, "type": vtype}
    if value.startswith("Unable to get repr for"):
        out["value"] = f"<{vtype or 'object'} object>"
        out["repr_error"] = True
    elif len(value) > max_chars:
        out["value"] = cut_text(value, max_chars)
        out["truncated"] = True
    elif is_cut(value):  # the target's repr cut a nested or long container
        out["truncated"] = True
    facts = target_facts(var)
    if facts is not None and facts[2]:  # the class's own __repr__ raised: debugpy shows the default one
        out["repr_error"] = True
    ref = var.get("variablesReference") or 0
    if ref:
        out["variable_reference"] = ref
        out["expandable"] = True
    if name.isdigit():
        out["index"] = int(name)
        out["name"] = str(int(name))
    return out


def target_facts(var: dict[str, Any]) -> tuple[int, int | None, bool] | None:
    """``(id, length, repr_failed)`` as the target's hook gave them with the variable; None without it."""
    facts = var.get(TARGET_FACTS)
    if not isinstance(facts, list) or len(facts) != 3:
        return None
    obj_id, length, failed = facts
    if not isinstance(obj_id, int) or not (length is None or isinstance(length, int)):
        return None
    return obj_id, length, bool(failed)


async def render_variables(
    session: Session, ref: int, raw: list[dict[str, Any]], start: int, count: int | None
) -> dict[str, Any]:
    """Filter, page and render children of ``ref``; add lengths and circular marks when the probe runs."""
    meta = session.ref_meta(ref)
    items = [v for v in raw if v.get("name") not in GROUPS]
    hidden = 0
    if meta is not None and not meta.chain and meta.evaluate_name is None:  # a frame's scope
        kept = [v for v in items if not str(v.get("name", "")).startswith(REWRITE_PREFIXES)]
        hidden = len(items) - len(kept)
        items = kept
    total = len(items)
    if meta is not None and meta.kind in SLICEABLE and meta.length is not None:
        # debugpy lists the first items of a sequence plus 'len()' and 'more' entries
        items = [v for v in items if v.get("name", "").isdigit()]
        total = meta.length
        count = DEFAULT_PAGE if count is None else count
    page = items[start : start + count] if count is not None else items[start:]
    wanted = (total if count is None else min(total, start + count)) - start
    if meta is not None and meta.evaluate_name and total > len(items) and len(page) < wanted:
        page = await _slice(session, meta, start, wanted) or page
    max_chars = session.settings.value_max_chars
    rendered = [render_one(v, max_chars) for v in page]
    if meta is not None:
        await _augment(session, meta, page, rendered)
    out: dict[str, Any] = {"variables": rendered, "total": total, "has_more": start + len(page) < total}
    if hidden:
        out["hidden"] = hidden
    if all(target_facts(v) is not None for v in page):
        out[JUDGED] = True
    return out


async def _slice(session: Session, meta: RefMeta, start: int, count: int) -> list[dict[str, Any]] | None:
    """Items ``start .. start+count`` of a long sequence, which debugpy alone never lists."""
    client = session.channel
    if client is None or count <= 0:
        return None
    window = f"({meta.evaluate_name})[{start}:{start + count}]"
    try:
        body = await client.request("evaluate", {"expression": window, "frameId": meta.frame_id, "context": "watch"})
        ref = body.get("variablesReference") or 0
        children = (await client.request("variables", {"variablesReference": ref}))["variables"] if ref else []
    except RelayError:
        return None
    out = []
    for child in children:
        name = child.get("name", "")
        if name.isdigit():
            index = start + int(name)
            out.append({**child, "name": str(index), "evaluateName": f"({meta.evaluate_name})[{index}]"})
    return out


async def _augment(session: Session, meta: RefMeta, page: list[dict[str, Any]], rendered: list[dict[str, Any]]) -> None:
    picked = [
        i
        for i, r in enumerate(rendered)
        if (r.get("expandable") or r.get("truncated") or r.get("repr_error")) and page[i].get("evaluateName")
    ]
    if not picked:
        return
    parent_known = not meta.evaluate_name or meta.obj_id is not None
    given = [target_facts(page[i]) for i in picked]
    if parent_known and all(f is not None for f in given):  # the variables answer said it all
        facts: list[Any] = [list(f) for f in given if f is not None]
        parent_id = meta.obj_id if meta.evaluate_name else None
    else:
        probed = await _probe_facts(session, meta, [page[i]["evaluateName"] for i in picked])
        if probed is None:
            return
        facts, parent_id = probed
    ancestors = {*meta.chain, *([parent_id] if parent_id is not None else [])}
    child_chain = (*meta.chain, parent_id) if parent_id is not None else meta.chain
    for i, (obj_id, length, _) in zip(picked, facts, strict=False):
        out = rendered[i]
        if length is not None:
            out["length"] = length
        if out.get("repr_error") and " at 0x" not in out["value"]:
            out["value"] = f"<{out.get('type') or 'object'} object at {hex(obj_id)}>"
        if obj_id in ancestors:
            out["value"] = f"<circular: {_ancestor_name(meta)}>"
            out["circular"] = True
        child_ref = page[i].get("variablesReference") or 0
        if child_ref:
            session.remember_ref(
                child_ref,
                RefMeta(
                    frame_id=meta.frame_id,
                    evaluate_name=page[i]["evaluateName"],
                    chain=tuple(c for c in child_chain if c is not None),
                    obj_id=obj_id,
                    length=length,
                    kind=out.get("type"),
                ),
            )


async def _probe_facts(session: Session, meta: RefMeta, exprs: list[str]) -> tuple[list[Any], int | None] | None:
    """Each expression's ``[id, length, circular]`` and the parent's id, asked of the target's probe."""
    if meta.evaluate_name:
        exprs = [meta.evaluate_name, *exprs]
    call = f"meta([{', '.join(exprs)}], {list(meta.chain)!r})"
    raw = await session.probe(meta.frame_id, f"__import__('_debugrelay_probe').{call}")
    if raw is None:
        return None
    try:
        facts = json.loads(raw)
    except ValueError:
        return None
    parent_id = facts.pop(0)[0] if meta.evaluate_name else None
    return facts, parent_id


def _ancestor_name(meta: RefMeta) -> str:
    return meta.evaluate_name or "parent"
