"""``/schema``: the API's operations as one page the relay renders itself (no script, nothing fetched).

Third-party API explorers load their code from a CDN into the relay's own origin, and do not work on a
machine without network. This page lists every operation with its parameters, request body and
answers, linking to ``/schema/openapi.json`` for tools.
"""

from __future__ import annotations

import html
from typing import Any

from litestar import Request
from litestar.openapi.plugins import JsonRenderPlugin, OpenAPIRenderPlugin

METHODS = ("get", "post", "put", "patch", "delete")
# the page and every answer of the relay: nothing loads from anywhere, nothing frames it
CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:60em;padding:0 1em;color:#222}
code,.path{font-family:ui-monospace,monospace}.op{border-top:1px solid #ddd;padding:.6em 0}
.m{display:inline-block;width:4.5em;font-weight:bold;text-transform:uppercase}.get{color:#06c}
.post{color:#080}.patch{color:#a60}.delete{color:#c00}.d{color:#555;margin:.2em 0 0 4.5em}
"""


def _ref_name(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    if ref:
        return str(ref).rsplit("/", 1)[-1]
    options = schema.get("oneOf") or schema.get("anyOf")
    if options:
        return " | ".join(_ref_name(o) for o in options)
    kind = schema.get("type")
    if kind == "array":
        return f"list[{_ref_name(schema.get('items') or {})}]"
    return str(kind or "object")


def _operation(path: str, method: str, op: dict[str, Any]) -> str:
    e = html.escape
    params = ", ".join(
        f"{e(p['name'])}{'' if p.get('required') else '?'}" for p in op.get("parameters", []) if p.get("in") == "query"
    )
    body: dict[str, Any] = op.get("requestBody", {}).get("content", {})
    request = _ref_name(next(iter(body.values())).get("schema", {})) if body else ""
    answers = []
    for status, answer in sorted(op.get("responses", {}).items()):
        content: dict[str, Any] = answer.get("content") or {}
        schema: dict[str, Any] = next(iter(content.values())).get("schema", {}) if content else {}
        answers.append(f"{e(status)} {e(_ref_name(schema))}" if schema else e(status))
    details = [f"query: <code>{params}</code>"] if params else []
    if request:
        details.append(f"body: <code>{e(request)}</code>")
    details.append("answers: " + ", ".join(f"<code>{a}</code>" for a in answers))
    return (
        f'<div class="op"><span class="m {method}">{method}</span><span class="path">{e(path)}</span>'
        f' — {e(op.get("summary", ""))}<div class="d">{" · ".join(details)}</div></div>'
    )


class SchemaPage(OpenAPIRenderPlugin):
    """Renders the OpenAPI document as a page with no script and no outside resource."""

    def __init__(self) -> None:
        super().__init__(path="/", favicon="", style="")

    def render(self, request: Request[Any, Any, Any], openapi_schema: dict[str, Any]) -> bytes:
        info = openapi_schema.get("info", {})
        ops = [
            _operation(path, method, item[method])
            for path, item in sorted(openapi_schema.get("paths", {}).items())
            for method in METHODS
            if method in item
        ]
        title = html.escape(f"{info.get('title', 'debugrelay')} {info.get('version', '')}")
        page = (
            f"<!doctype html><html><head><meta charset=utf-8><title>{title}</title><style>{_STYLE}</style>"
            f'</head><body><h1>{title}</h1><p>Every error is <code>{{"error": {{code, message, details, hint}}}}'
            f'</code>. Machine-readable: <a href="{html.escape(self.get_openapi_json_route(request))}">'
            f"openapi.json</a>.</p>{''.join(ops)}</body></html>"
        )
        return page.encode()


def render_plugins() -> list[OpenAPIRenderPlugin]:
    return [SchemaPage(), JsonRenderPlugin()]
