"""The relay's log lines as JSON objects (``DEBUGRELAY_LOG_FORMAT=json``): one a line on stderr, with the
time, level, logger and message, and inside a request its method and route.

Only these fields are written: the message and its traceback are what the redaction filter
(:mod:`debugrelay.redaction`) has cleaned; the request is named by its route template, never by its query.
"""

from __future__ import annotations

import asyncio
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import msgspec

from debugrelay.metrics import ASGIApp, route_of

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# the request being answered: method, route template, the task answering it
REQUEST: ContextVar[tuple[str, str, asyncio.Task[Any] | None] | None] = ContextVar("debugrelay_request", default=None)
_encode = msgspec.json.Encoder().encode


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message"[, "method", "route"]}``; a traceback ends the message."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            message = f"{message}\n{record.exc_text}"
        if record.stack_info:
            message = f"{message}\n{self.formatStack(record.stack_info)}"
        line: dict[str, str] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": message,
        }
        request = getattr(record, "request", None)
        if request is not None:
            line["method"], line["route"] = request
        return _encode(line).decode()


class RequestFields(logging.Filter):
    """Names the request a record was logged in, read where it is logged (a queue's listener is another
    thread). Only in the request's own task: a task it started (a session's event reader) goes on after it."""

    def filter(self, record: logging.LogRecord) -> bool:
        request = REQUEST.get()
        if request is not None and request[2] is _current_task():
            record.request = request[:2]
        return True


def _current_task() -> asyncio.Task[Any] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # a thread without an event loop
        return None


def request_fields(app: ASGIApp) -> ASGIApp:
    """ASGI middleware (after routing): the request's method and route template, for the records it logs."""

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        token = REQUEST.set((scope["method"], route_of(scope), _current_task()))
        try:
            await app(scope, receive, send)
        finally:
            REQUEST.reset(token)

    return middleware


def configure_logging(log_format: str, level: int = logging.INFO) -> None:
    """The root logger's handler until the app configures its own (in the same format)."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level, handlers=[handler])
    if log_format == "json":
        logging.captureWarnings(True)  # Python's warnings as log records too, not lines of their own
