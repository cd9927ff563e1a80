"""The live view's HTML, rendered by the relay (no template engine, no script inline, nothing fetched).

Every value shown here comes from the redacting service (or the trail, recorded after redaction);
everything is escaped on the way into the page.
"""

from __future__ import annotations

import ast
import html
import os
import time
from dataclasses import dataclass, field
from typing import Any

from debugrelay import __version__
from debugrelay.models import (
    BreakpointView,
    CallRun,
    FrameView,
    OutputLine,
    ProcessInfo,
    SessionDetail,
    SessionSummary,
    SourceText,
    Trace,
    TracedCall,
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
class TraceRows:
    """A traced function and its newest calls (newest first)."""

    trace: Trace
    calls: list[TracedCall]


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
    traces: list[TraceRows] = field(default_factory=list)
    traces_note: str | None = None


@dataclass
class CallView:
    """One traced call's page: its run, and the source of its function (when it could be read)."""

    session_id: str
    session_name: str
    run: CallRun
    source: SourceText | None = None
    source_note: str | None = None


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
        f"<tr class='{'ok' if t.ok else 'failed'}'><td>{_ago(t.at)}</td>"
        f"{f'<td class=who>{e(t.who)}</td>' if t.who else ''}<td><code>{e(t.call)}</code></td>"
        f"<td><code>{e(t.detail)}</code></td><td>{e(t.result)}</td></tr>"
        for t in reversed(v.trail)
    )
    return f"<table class=trail><tbody>{rows}</tbody></table>"


def _call_link(session_id: str, call_id: str) -> str:
    return f"<a href='/ui/sessions/{e(session_id)}/calls/{e(call_id)}'>{e(call_id)}</a>"


def _args_text(args: dict[str, str], limit: int = 120) -> str:
    return _clip(", ".join(f"{name}={value}" for name, value in args.items()), limit)


def _outcome(c: TracedCall, limit: int = 80) -> str:
    if c.running:
        return "<span class=note>running</span>"
    if c.raised is not None:
        where = f" <span class=loc>(line {c.raised_line})</span>" if c.raised_line else ""
        return f"<span class=err>raised {_clip(c.raised, limit)}</span>{where}"
    return f"→ <span class=value>{_clip(c.returned or '', limit)}</span>"


def _traces(v: SessionView) -> str:
    if v.traces_note:
        return f"<section class=traces><h2>Traces</h2><p class=note>{e(v.traces_note)}</p></section>"
    if not v.traces:
        return ""
    sid = v.detail.session_id
    out = ["<section class=traces><h2>Traces <span class=hint>each traced function's newest calls first</span></h2>"]
    for rows in v.traces:
        t = rows.trace
        loaded = "" if t.found or t.total else " <span class=note>(not loaded by the program yet)</span>"
        out.append(
            f"<div class=trace data-trace='{e(t.trace_id)}'><div class=trhead>"
            f"<code title='{e(t.file)}'>{e(_short(t.file))}:{e(t.qualname)}</code> <span class=counts>"
            f"{t.calls} kept · {t.total} made · {t.dropped} dropped</span>{loaded}</div>"
        )
        if not rows.calls:
            out.append("<p class=note>no calls yet</p></div>")
            continue
        body = "".join(
            f"<tr data-call='{e(c.call_id)}'><td>{_call_link(sid, c.call_id)}</td><td><code>{_args_text(c.args)}"
            f"</code></td><td><code>{_outcome(c)}</code></td><td>{e(c.thread or '')}</td></tr>"
            for c in rows.calls
        )
        older = t.calls - len(rows.calls)
        more = f"<p class=more>… {older} older calls not shown</p>" if older > 0 else ""
        out.append(
            "<table class=calls><thead><tr><th>Call</th><th>Arguments</th><th>Result</th><th>Thread</th></tr>"
            f"</thead><tbody>{body}</tbody></table>{more}</div>"
        )
    out.append("</section>")
    return "".join(out)


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
        f"<h2>Watches</h2>{_watches(v)}{_processes(v)}</section></div>{_traces(v)}"
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


def forbidden_page(session_id: str, message: str, *, signed_in: bool = False) -> str:
    body = f"<h1>Not yours: '{e(session_id)}'</h1><p>{e(message)}</p><p><a href='/ui'>Your sessions</a></p>"
    return page("debugrelay: not your session", body, view="forbidden", signed_in=signed_in)


# -- one traced call's page --------------------------------------------------------------------------


def _changes(changed: Any) -> str:
    if not isinstance(changed, dict) or not changed:
        return ""
    return ", ".join(
        f"<span class=name>{e(str(name))}</span> → <span class=value>{_clip(str(value), 80)}</span>"
        for name, value in changed.items()
    )


RUNS_SHOWN = 3  # a line run more than once outside a folded loop: the changes of its first runs


def line_notes(run: CallRun) -> tuple[dict[int, str], int]:
    """What each line of the call did, as HTML beside it (changes; a folded loop's count and its first and last
    values), and how many line runs were cut from the record."""
    plain: dict[int, list[dict[str, Any]]] = {}
    notes: dict[int, list[str]] = {}
    cut = 0
    for event in run.events:
        if isinstance(event.get("line"), int):
            changed = event.get("changed")
            plain.setdefault(event["line"], []).append(changed if isinstance(changed, dict) else {})
        elif isinstance(event.get("loop"), list) and event["loop"]:
            head = event["loop"][0]
            if isinstance(head, int):
                notes.setdefault(head, []).append(
                    f"<span class=loop>loop: {int(event.get('iterations') or 0)} iterations</span>"
                )
            for item in event.get("lines") or []:
                if not isinstance(item, dict) or not isinstance(item.get("line"), int):
                    continue
                parts = [f"<span class=count>&times;{int(item.get('count') or 0)}</span>"]
                first, last = _changes(item.get("first")), _changes(item.get("last"))
                if first:
                    parts.append(f"first {first}")
                if last and item.get("last") != item.get("first"):
                    parts.append(f"last {last}")
                notes.setdefault(item["line"], []).append(" ".join(parts))
        elif isinstance(event.get("cut"), int):
            cut += event["cut"]
    for line, runs in plain.items():
        shown = [_changes(c) for c in runs[:RUNS_SHOWN]]
        text = " · ".join(s for s in shown if s)
        if len(runs) > 1:
            more = f" · … {len(runs) - RUNS_SHOWN} more" if len(runs) > RUNS_SHOWN else ""
            text = f"<span class=count>&times;{len(runs)}</span> {text}{more}"
        if text:
            notes.setdefault(line, []).insert(0, text)
    return {line: " · ".join(parts) for line, parts in notes.items()}, cut


def _call_source(v: CallView) -> str:
    run = v.run
    if v.source is None:
        return f"<p class=note>{e(v.source_note or 'no source')}</p>"
    src = v.source
    notes, cut = line_notes(run)
    ran = set(run.lines) | set(notes)
    lines = []
    for n, text in enumerate(src.content.splitlines(), start=src.start):
        cls = ["ln", "ran" if n in ran else "idle"]
        mark = "•" if n in ran else ""
        if run.raised is not None and n == run.raised_line:
            cls.append("raised")
            mark = "✗"
        note = notes.get(n, "")
        lines.append(
            f"<div class='{' '.join(cls)}' data-line='{n}'><span class=gut>{mark}</span><span class=no>{n}</span>"
            f"<span class=code>{e(text) or ' '}</span>{f'<span class=chg>{note}</span>' if note else ''}</div>"
        )
    title = f"{e(src.path)} · lines {src.start}-{src.end} of {src.total_lines} · • ran, dimmed: not run in this call"
    cut_note = f"<p class=cut>{cut} line runs in the middle of the call were not recorded</p>" if cut else ""
    return f"<div class=srchead>{title}</div><div class='source fn' id=source>{''.join(lines)}</div>{cut_note}"


CALLEES_SHOWN = 50


def call_page(v: CallView, *, signed_in: bool = False) -> str:
    r, sid = v.run, v.session_id
    args = "".join(
        f"<li class=leaf><span class=name>{e(name)}</span> = <span class=value>{_clip(value)}</span></li>"
        for name, value in r.args.items()
    )
    args_html = f"<ul class=vars>{args}</ul>" if args else "<p class=note>no arguments</p>"
    if r.running:
        result = "<p class=note>still running when read (the program is paused in it)</p>"
    elif r.raised is not None:
        where = f" at line {r.raised_line}" if r.raised_line else ""
        result = f"<p class='err raised'>raised <code>{_clip(r.raised)}</code>{e(where)}</p>"
    else:
        result = f"<p class=returned>returned <code class=value>{_clip(r.returned or '')}</code></p>"
    parent = _call_link(sid, r.parent) if r.parent else "<span class=note>none (not called from a traced call)</span>"
    callees = " ".join(_call_link(sid, c) for c in r.callees[:CALLEES_SHOWN]) or "<span class=note>none</span>"
    if len(r.callees) > CALLEES_SHOWN:
        callees += f" <span class=more>… {len(r.callees) - CALLEES_SHOWN} more</span>"
    cut = ""
    if r.cut:
        cut = (
            "<p class=cut>left out to keep the call bounded: "
            + e(", ".join(f"{k} {n}" for k, n in r.cut.items()))
            + "</p>"
        )
    body = (
        f"<h1><code>{e(r.function)}</code> <span class=sid>call {e(r.call_id)}</span></h1>"
        f"<p class=meta>session <a href='/ui/sessions/{e(sid)}'>{e(v.session_name)}</a> · "
        f"<span class=loc>{e(_short(r.file))}:{r.line}</span> · thread {e(r.thread or '?')}"
        f"{f' · pid {r.pid}' if r.pid is not None else ''}</p>"
        f"<div class=grid><section class=src><h2>Lines run</h2>{_call_source(v)}{cut}</section>"
        f"<section><h2>Arguments</h2><div id=args>{args_html}</div><h2>Result</h2><div id=result>{result}</div>"
        f"<h2>Called from</h2><p id=parent>{parent}</p><h2>Calls it made <span class=hint>traced ones</span></h2>"
        f"<p id=callees>{callees}</p></section></div>"
    )
    return page(f"debugrelay: call {r.call_id}", body, view="call", session_id=sid, signed_in=signed_in)


def call_not_found_page(session_id: str, call_id: str, message: str, *, signed_in: bool = False) -> str:
    body = (
        f"<h1>No call '{e(call_id)}'</h1><p class=note>{e(message)}</p>"
        f"<p><a href='/ui/sessions/{e(session_id)}'>Back to the session</a> · <a href='/ui'>All sessions</a></p>"
    )
    return page("debugrelay: no such call", body, view="missing", session_id=session_id, signed_in=signed_in)


def function_span(content: str, line: int, ran: list[int]) -> tuple[int, int]:
    """The first and last line of the function defined at ``line`` (its def, or its first decorator) in a
    file's text: from ``ast``, else by indentation; never short of a line it ran."""
    lines = content.splitlines()
    last_ran = max([n for n in ran if n <= len(lines)], default=line)
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                if line in (node.lineno, first):
                    return first, max(node.end_lineno or node.lineno, last_ran)
    if not 0 < line <= len(lines):
        return line, max(line, last_ran)
    header = line
    while header < len(lines) and lines[header - 1].lstrip().startswith("@"):  # decorators, then the def
        header += 1
    indent = len(lines[header - 1]) - len(lines[header - 1].lstrip())
    end = header
    for n in range(header + 1, len(lines) + 1):
        text = lines[n - 1]
        if text.strip() and len(text) - len(text.lstrip()) <= indent and not text.lstrip().startswith((")", "]")):
            break
        if text.strip():
            end = n
    return line, max(end, last_ran)
