"""The live view's HTML, rendered by the relay (no template engine, no script inline, nothing fetched).

Every value shown here comes from the redacting service (or the trail, recorded after redaction);
everything is escaped on the way into the page.
"""

from __future__ import annotations

import html
import os
import time
from dataclasses import dataclass, field

from debugrelay import __version__
from debugrelay.models import (
    BreakpointView,
    FrameView,
    OutputLine,
    ProcessInfo,
    SessionDetail,
    SessionSummary,
    SourceText,
    Variable,
    WatchValue,
)
from debugrelay.service import TrailEntry

e = html.escape
VALUE_CLIP = 200  # characters of a value in a table cell; the rest is marked as cut


@dataclass
class ListRow:
    summary: SessionSummary
    program: str
    created_at: float
    stop_at: float | None
    stop_seq: int
    owner: str
    here: bool


@dataclass
class SessionView:
    detail: SessionDetail
    program: str
    owner: str
    stop_at: float | None = None
    stop_seq: int = 0
    source: SourceText | None = None
    source_note: str | None = None
    frames: list[FrameView] = field(default_factory=list)
    total_frames: int = 0
    local_vars: list[Variable] = field(default_factory=list)
    locals_total: int = 0
    locals_note: str | None = None
    watches: list[WatchValue] = field(default_factory=list)
    breakpoints: list[BreakpointView] = field(default_factory=list)
    trail: list[TrailEntry] = field(default_factory=list)
    processes: list[ProcessInfo] = field(default_factory=list)  # when the program has started others


def page(title: str, body: str, *, view: str, events: str = "", session_id: str = "", signed_in: bool = False) -> str:
    """The page frame: one stylesheet and one script, both served by the relay under /ui/static; with a
    view session, a button that ends it."""
    sign_out = "<button id=signout type=button title='end this view session'>Sign out</button>" if signed_in else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{e(title)}</title>"
        "<link rel=stylesheet href='/ui/static/ui.css'></head>"
        f"<body data-view='{e(view)}' data-events='{e(events)}' data-session='{e(session_id)}'>"
        f"<header><a href='/ui' class=brand>debugrelay</a> <span class=ver>{e(__version__)}</span>"
        f"<span id=conn class=conn title='live updates'></span>{sign_out}</header>"
        f"<main>{body}</main><script src='/ui/static/ui.js'></script></body></html>"
    )


def login_page(failed: bool = False) -> str:
    body = (
        "<section class=login><h1>Sign in</h1><p>This relay needs its API token, once: the view then keeps "
        "a view session in a cookie (not the token; HttpOnly, SameSite=Strict), good for this view only and "
        "for a limited time; <i>Sign out</i> ends it. The token never appears in a URL.</p>"
        "<form id=login><input id=token type=password autocomplete=current-password "
        "placeholder='API token' aria-label='API token' autofocus>"
        "<button type=submit>Open the view</button></form>"
        f"<p id=login-error class=err{'' if failed else ' hidden'}>wrong token</p></section>"
    )
    return page("debugrelay: sign in", body, view="login")


def clip_label(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ago(at: float | None) -> str:
    """A timestamp the page's script keeps current ('3 min ago')."""
    if not at:
        return ""
    return f"<span class=ago data-at='{at:.3f}'>{e(_ago_text(time.time() - at))}</span>"


def _ago_text(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    return f"{int(seconds // 3600)} h ago"


def _short(path: str | None) -> str:
    return os.path.basename(path) if path else "?"


def _clip(text: str, limit: int = VALUE_CLIP) -> str:
    if len(text) <= limit:
        return e(text)
    return f"{e(text[:limit])}<span class=cut title='{len(text) - limit} more characters not shown'>…</span>"


def _where(s: SessionSummary) -> str:
    if s.status != "paused" or s.location is None:
        if s.status == "terminated" and isinstance(s.exit_code, int):
            return f"exit code {s.exit_code}"
        return e(s.message or "")
    loc = s.location
    why = s.reason or "paused"
    if s.exception is not None:
        why = f"{s.exception.type}: {s.exception.message or ''}"
    return (
        f"<span class=loc>{e(_short(loc.file))}:{loc.line}</span> in <code>{e(loc.function or '?')}</code>"
        f" <span class=why>({_clip(why, 80)})</span>"
    )


def sessions_table(rows: list[ListRow]) -> str:
    if not rows:
        return "<p class=empty>No sessions. An agent's sessions appear here as soon as it creates them.</p>"
    out = [
        "<table class=sessions><thead><tr><th>Session</th><th>Program</th><th>Status</th>"
        "<th>Paused where, why</th><th>Age</th><th>Replica</th></tr></thead><tbody>"
    ]
    for r in rows:
        s = r.summary
        name = e(s.name or s.session_id)
        link = f"<a href='/ui/sessions/{e(s.session_id)}'>{name}</a>"
        stop = f" data-stop-seq='{r.stop_seq}' data-session='{e(s.session_id)}'" if s.status == "paused" else ""
        since = f" {_ago(r.stop_at)}" if s.status == "paused" and r.stop_at else ""
        out.append(
            f"<tr class='st-{e(s.status)}'{stop}><td>{link}<div class=sid>{e(s.session_id)}</div></td>"
            f"<td><code>{_clip(r.program, 60)}</code></td><td><span class='badge {e(s.status)}'>{e(s.status)}"
            f"</span><span class=unseen hidden>new stop</span></td><td>{_where(s)}{since}</td>"
            f"<td>{_ago(r.created_at)}</td><td>{e(r.owner)}{'' if r.here else ' (other replica)'}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def list_page(rows: list[ListRow], *, signed_in: bool = False) -> str:
    body = f"<h1>Sessions</h1><div id=live>{sessions_table(rows)}</div>"
    return page("debugrelay: sessions", body, view="list", events="/ui/events", signed_in=signed_in)


def _source(v: SessionView) -> str:
    loc = v.detail.location
    if v.source is None:
        note = v.source_note or ("the program is not paused" if v.detail.status != "paused" else "no source")
        return f"<p class=note>{e(note)}</p>"
    src = v.source
    marks = {
        b.actual_line or b.line
        for b in v.breakpoints
        if b.file and loc is not None and loc.file and os.path.basename(b.file) == os.path.basename(loc.file)
    }
    current = loc.line if loc is not None else None
    lines = []
    for n, text in enumerate(src.content.splitlines(), start=src.start):
        cls = ["ln"]
        if n == current:
            cls.append("cur")
        if n in marks:
            cls.append("bp")
        arrow = "▶" if n == current else ""
        dot = "●" if n in marks else ""
        lines.append(
            f"<div class='{' '.join(cls)}' data-line='{n}'><span class=gut>{dot}{arrow}</span>"
            f"<span class=no>{n}</span><span class=code>{e(text) or ' '}</span></div>"
        )
    title = f"{e(src.path)} · lines {src.start}-{src.end} of {src.total_lines}"
    return f"<div class=srchead>{title}</div><div class=source id=source>{''.join(lines)}</div>"


def variable_rows(variables: list[Variable], *, more: int = 0) -> str:
    """Variables as a list; an expandable one opens to its children, fetched when opened."""
    out = ["<ul class=vars>"]
    for var in variables:
        kind = f" <span class=type>{e(var.type)}</span>" if var.type else ""
        value = _clip(var.value)
        if var.truncated:
            value += "<span class=cut title='the value was cut by the relay'>…</span>"
        head = f"<span class=name>{e(var.name)}</span>{kind} = <span class=value>{value}</span>"
        if var.variable_reference:  # an expandable value (its reference says so)
            out.append(
                f"<li><details data-ref='{var.variable_reference}' data-name='{e(var.name)}'>"
                f"<summary>{head}</summary><div class=children>…</div></details></li>"
            )
        else:
            out.append(f"<li class=leaf>{head}</li>")
    if more > 0:
        out.append(f"<li class=more>… {more} more not shown</li>")
    out.append("</ul>")
    return "".join(out)


def _stack(v: SessionView) -> str:
    if not v.frames:
        return "<p class=note>—</p>"
    items = "".join(
        f"<li{' class=top' if i == 0 else ''}><code>{e(f.name or '?')}</code> "
        f"<span class=loc>{e(_short(f.file))}:{f.line}</span></li>"
        for i, f in enumerate(v.frames)
    )
    more = v.total_frames - len(v.frames)
    tail = f"<li class=more>… {more} more frames</li>" if more > 0 else ""
    return f"<ol class=stack>{items}{tail}</ol>"


def _processes(v: SessionView) -> str:
    if len(v.processes) < 2:
        return ""
    rows = "".join(
        f"<tr class='st-{e(p.state)}{' shown' if p.shown else ''}'><td>{p.pid}</td><td>{e(p.state)}"
        f"{' (shown)' if p.shown else ''}{'' if p.debugged else ', not debugged'}"
        f"{f', exit {p.exit_code}' if p.exit_code is not None else ''}</td><td><code>{_clip(p.command or '', 120)}"
        "</code></td></tr>"
        for p in v.processes
    )
    return f"<h2>Processes</h2><table class=processes><tbody>{rows}</tbody></table>"


def _watches(v: SessionView) -> str:
    if not v.watches:
        return "<p class=note>no watch expressions</p>"
    rows = []
    for w in v.watches:
        if w.result is not None:
            shown = f"<span class=value>{_clip(w.result)}</span>"
        else:
            shown = f"<span class=err>{e(w.error or 'not available')}</span>"
        rows.append(f"<li><code>{e(w.expression)}</code> = {shown}</li>")
    return f"<ul class=watches>{''.join(rows)}</ul>"


def _trail(v: SessionView) -> str:
    if not v.trail:
        return "<p class=note>no calls yet</p>"
    rows = "".join(
        f"<tr class='{'ok' if t.ok else 'failed'}'><td>{_ago(t.at)}</td><td><code>{e(t.call)}</code></td>"
        f"<td><code>{e(t.detail)}</code></td><td>{e(t.result)}</td></tr>"
        for t in reversed(v.trail)
    )
    return f"<table class=trail><tbody>{rows}</tbody></table>"


def session_panel(v: SessionView) -> str:
    """The part of the session page that every change re-renders."""
    d = v.detail
    summary = _where(d)
    stop = ""
    if d.status == "paused":
        stop = f" data-stop-seq='{v.stop_seq}'"
    head = (
        f"<div class='status st-{e(d.status)}'{stop}><span class='badge {e(d.status)}'>{e(d.status)}</span> "
        f"{summary} {_ago(v.stop_at) if d.status == 'paused' else ''}"
        "<span class=unseen hidden>new stop</span></div>"
    )
    if d.published:  # a service's ports, where a browser reaches them
        links = " ".join(
            f"<a href='{e(p.url)}' target=_blank rel=noopener>{p.port} → {e(p.url)}</a>"
            if p.url
            else f"<span class=err>{p.port}: {e(p.error or 'not published')}</span>"
            for p in d.published
        )
        head += f"<p class=published>service: {links}</p>"
    locals_html = variable_rows(v.local_vars, more=v.locals_total - len(v.local_vars))
    if v.locals_note:
        locals_html = f"<p class=note>{e(v.locals_note)}</p>"
    return (
        f"{head}<div class=grid><section class=src><h2>Source</h2>{_source(v)}</section>"
        f"<section><h2>Stack</h2>{_stack(v)}<h2>Locals</h2><div id=locals>{locals_html}</div>"
        f"<h2>Watches</h2>{_watches(v)}{_processes(v)}</section></div>"
        f"<section><h2>Agent's trail <span class=hint>last calls on this session, newest first</span></h2>"
        f"{_trail(v)}</section>"
    )


def output_lines(lines: list[OutputLine]) -> str:
    return "".join(f"<span class='o {e(o.type)}'>{e(o.text)}</span>" for o in lines)


def session_page(v: SessionView, tail: list[OutputLine], earlier: bool, *, signed_in: bool = False) -> str:
    d = v.detail
    title = d.name or d.session_id
    cut = "<div class=cut id=out-cut>earlier output not shown</div>" if earlier else ""
    body = (
        f"<h1>{e(title)} <span class=sid>{e(d.session_id)}</span></h1>"
        f"<p class=meta><code>{_clip(v.program, 120)}</code> · replica {e(v.owner)} · created {_ago(d.created_at)}</p>"
        f"<div id=live>{session_panel(v)}</div>"
        f"<section><h2>Output</h2>{cut}<pre id=out class=out>{output_lines(tail)}</pre></section>"
    )
    sid = d.session_id
    events = f"/ui/sessions/{sid}/events"
    return page(f"debugrelay: {title}", body, view="session", events=events, session_id=sid, signed_in=signed_in)


def elsewhere_page(summary: SessionSummary, owner: str, *, signed_in: bool = False) -> str:
    body = (
        f"<h1>{e(summary.name or summary.session_id)}</h1><p class=note>This session is held by the relay "
        f"replica <b>{e(owner)}</b>: its live view is on that replica's <code>/ui</code>.</p>"
        f"<p>{_where(summary)}</p>"
    )
    return page("debugrelay: session elsewhere", body, view="elsewhere", signed_in=signed_in)


def not_found_page(session_id: str, *, signed_in: bool = False) -> str:
    body = f"<h1>No session '{e(session_id)}'</h1><p><a href='/ui'>All sessions</a></p>"
    return page("debugrelay: no such session", body, view="missing", signed_in=signed_in)
