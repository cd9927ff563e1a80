"""The OpenAPI document as a faithful contract: request bodies exactly as the relay decodes them, the
rules across fields no type can say, the bodies handlers read themselves, and links from the answers
that create things (a session, a breakpoint, a watch, a profile) to the operations that use them.

Litestar's schemas of msgspec Structs drop ``forbid_unknown_fields`` and some bounds (``gt``); msgspec's
own schema of the same Struct is what the decoder enforces, so request bodies are described by it.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
from litestar import Litestar
from litestar._openapi.plugin import OpenAPIPlugin

from debugrelay.models import Input
from debugrelay.models.limits import MAX_BREAKPOINTS_PER_REQUEST
from debugrelay.sessions.breakpoints import BreakpointRequest

from ._derived import routes
from .sessions import ResumeBody, SessionCreate

_REF = "#/components/schemas/{name}"
_METHODS = ("get", "post", "put", "patch", "delete")


def _text(field: str) -> dict[str, Any]:
    return {"properties": {field: {"type": "string", "minLength": 1}}, "required": [field]}


def _given(field: str, kind: str) -> dict[str, Any]:
    return {"properties": {field: {"type": kind}}, "required": [field]}


# Rules across fields, checked by the operations (prepare_launch, attach, input, profiles, watches).
RULES: dict[str, dict[str, Any]] = {
    "LaunchRequest": {"oneOf": [_text("script"), _text("module")]},  # exactly one of them
    "SessionCreate": {
        "anyOf": [
            {"not": {"required": ["mode"]}},
            {"properties": {"mode": {"const": "launch"}}},
            _given("port", "integer"),
            _given("pid", "integer"),
        ]
    },
    "InputBody": {"anyOf": [_given("input", "string"), _given("text", "string"), _given("data", "string")]},
    "ProfileBody": {"oneOf": [_given("session_id", "string"), _given("breakpoints", "array")]},
}
# Rules of one operation's body (an attach spec inside an export may lack them: it is not used there).
OPERATION_RULES: dict[tuple[str, str], dict[str, Any]] = {
    ("post", "/sessions/{session_id}/attach"): {"anyOf": [_given("port", "integer"), _given("pid", "integer")]},
}
# Fields the operations refine beyond their type: a watch is a non-blank expression, a profile's name
# letters, digits and ``_.@-``.
FIELDS: dict[tuple[str, str], dict[str, Any]] = {
    ("WatchBody", "expression"): {"pattern": r"\S"},
    ("ProfileBody", "name"): {"pattern": r"^[A-Za-z0-9_.@-]{1,100}$"},
}
# Handlers that read their (optional) body themselves, so that an empty body means the defaults.
RAW_BODIES: dict[tuple[str, str], tuple[Any, bool]] = {
    ("post", "/sessions"): (SessionCreate, False),
    ("post", "/sessions/{session_id}/continue"): (ResumeBody, False),
    ("post", "/sessions/{session_id}/step-over"): (ResumeBody, False),
    ("post", "/sessions/{session_id}/step-into"): (ResumeBody, False),
    ("post", "/sessions/{session_id}/step-out"): (ResumeBody, False),
}
_ONE = {"$ref": _REF.format(name="BreakpointRequest")}
_MANY = {"type": "array", "items": _ONE, "minItems": 1, "maxItems": MAX_BREAKPOINTS_PER_REQUEST}
# POST /sessions/{id}/breakpoints: one breakpoint, a list of them, or {"breakpoints": [...]}
BREAKPOINTS_BODY = {
    "anyOf": [
        _ONE,
        _MANY,
        {
            "type": "object",
            "properties": {"breakpoints": _MANY},
            "required": ["breakpoints"],
            "additionalProperties": False,
        },
    ]
}
# Answers whose handler returns a plain mapping, with the Struct that describes them (none left: every
# handler answers a Struct).
ANSWERS: dict[tuple[str, str], type[msgspec.Struct]] = {}
# Where a created thing's id comes from, and the path parameter it fills.
CREATORS = {
    ("post", "/sessions"): ("201", "session_id", "$response.body#/session_id"),
    ("post", "/sessions/{session_id}/breakpoints"): ("200", "bp_id", "$response.body#/breakpoint_id"),
    ("post", "/sessions/{session_id}/watch"): ("200", "watch_id", "$response.body#/watch_id"),
    ("post", "/breakpoint-profiles"): ("201", "name", "$response.body#/name"),
}


def _inputs() -> dict[str, type[Input]]:
    found: dict[str, type[Input]] = {}
    todo: list[type[Input]] = [Input]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        found.setdefault(cls.__name__, cls)
    return found


# an action answers what its MCP tool answers (docs/agents.md): these fields where it is about a run
ACTION_ANSWER: dict[str, Any] = {
    "type": "object",
    "description": "What the action's MCP tool answers: an event (a stop, the end, still running) or a read",
    "properties": {
        "session_id": {"type": "string"},
        "status": {"type": "string"},
        "reason": {"type": "string"},
        "location": {"type": "object", "description": "file, line, function"},
        "code": {"type": "string", "description": "the source line paused at"},
        "locals": {"type": "object", "additionalProperties": {"type": "string"}},
        "output": {"type": "string", "description": "what the program printed since the previous answer"},
        "hint": {"type": "string", "description": "the next step, said once per session"},
        "persisted": {"type": "boolean"},
    },
    "additionalProperties": True,
}


def refine(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` (Litestar's OpenAPI as a dict) made faithful, in place; returned for convenience."""
    components: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    inputs = _inputs()
    named = [cls for name, cls in inputs.items() if name in components]
    bodies = {**RAW_BODIES, **{where: (kind, False) for where, kind in routes()[1].items()}}
    raw = [kind for kind, _ in bodies.values()]
    types = [*named, *raw, *ANSWERS.values(), BreakpointRequest]
    schemas, defs = msgspec.json.schema_components(types, ref_template=_REF)
    for name, schema in defs.items():
        if name in inputs or name not in components:
            components[name] = schema
    for name, extra in RULES.items():
        if name in components:
            components[name].update(extra)
    for (name, field), extra in FIELDS.items():
        if name in components:
            components[name]["properties"][field].update(extra)
    paths: dict[str, Any] = document.get("paths", {})
    offset = len(named)
    for index, ((method, path), (_, required)) in enumerate(bodies.items()):
        operation = paths.get(path, {}).get(method)
        if operation is not None:
            content = {"application/json": {"schema": schemas[offset + index]}}
            operation["requestBody"] = {"required": required, "content": content}
    operation = paths.get("/sessions/{session_id}/breakpoints", {}).get("post")
    if operation is not None:
        operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": BREAKPOINTS_BODY}}}
    offset += len(raw)
    for index, (method, path) in enumerate(ANSWERS):
        operation = paths.get(path, {}).get(method)
        if operation is not None:
            ok = next(code for code in operation["responses"] if code.startswith("2"))
            operation["responses"][ok]["content"] = {"application/json": {"schema": schemas[offset + index]}}
    operation = paths.get("/agent/{action}", {}).get("post")
    if operation is not None:
        ok = next(code for code in operation["responses"] if code.startswith("2"))
        operation["responses"][ok]["content"] = {"application/json": {"schema": ACTION_ANSWER}}
    for (method, path), extra in OPERATION_RULES.items():
        operation = paths.get(path, {}).get(method)
        if operation is not None:
            media = operation["requestBody"]["content"]["application/json"]
            media["schema"] = {"allOf": [media["schema"], extra]}
    _link(paths)
    return document


def _link(paths: dict[str, Any]) -> None:
    """Each creating operation's answer linked to every operation whose path takes the id it made."""
    for (method, path), (status, parameter, source) in CREATORS.items():
        creator = paths.get(path, {}).get(method)
        if creator is None:
            continue
        links: dict[str, Any] = {}
        for target_path, item in paths.items():
            if "{" + parameter + "}" not in target_path or not target_path.startswith(path.rstrip("/")):
                continue
            known = set(re.findall(r"{(\w+)}", path))
            for target_method, operation in item.items():
                if target_method not in _METHODS:
                    continue
                parameters = {parameter: source}
                parameters.update({name: f"$request.path.{name}" for name in known})
                links[operation["operationId"]] = {"operationId": operation["operationId"], "parameters": parameters}
        if links:
            creator["responses"][status]["links"] = links


def openapi_document(app: Litestar) -> dict[str, Any]:
    """The app's OpenAPI document (as served at /schema/openapi.json), refined once."""
    plugin = app.plugins.get(OpenAPIPlugin)
    document = plugin.provide_openapi_schema()
    if not app.state.get("openapi_refined"):
        refine(document)
        app.state["openapi_refined"] = True
    return document
