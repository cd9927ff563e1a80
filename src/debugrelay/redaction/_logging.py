"""The relay's own log lines pass through the same rules before any handler writes them."""

from __future__ import annotations

import logging

from ._redactor import Redactor
from ._table import Placeholders

MAX_LOG_CHARS = 8192  # of one record's message and of its traceback: a request can name a huge value


def _bounded(text: str) -> str:
    if len(text) <= MAX_LOG_CHARS:
        return text
    return f"{text[:MAX_LOG_CHARS]}... <cut: {len(text) - MAX_LOG_CHARS} more characters>"


class RedactingFilter(logging.Filter):
    """Replaces secrets in a record's message (placeholders of the log's own table) and bounds its length."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor
        self.table = Placeholders()

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        clean = self.redactor.text(_bounded(message), self.table, "log")
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(_bounded(record.exc_text), self.table, "log")
        self.table.take_pending()  # the log's table is never stored
        return True


def install_log_filter(redactor: Redactor, logger: logging.Logger | None = None) -> RedactingFilter:
    """Put the filter on every handler of ``logger`` (the root by default), where every record passes."""
    target = logger or logging.getLogger()
    found = next((f for h in target.handlers for f in h.filters if isinstance(f, RedactingFilter)), None)
    if found is not None:
        found.redactor = redactor
        return found
    flt = RedactingFilter(redactor)
    for handler in target.handlers:
        handler.addFilter(flt)
    return flt
