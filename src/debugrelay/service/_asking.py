"""The folder an agent asks from: where its relative paths start, on every interface alike.

The CLI and ``debugrelay mcp`` send their working folder with each request (``X-Debugrelay-Folder``); an
MCP server running the relay in its own process asks from its own folder. A request without one takes a
relative path from the session's launch folder (its ``cwd``, else its script's folder).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

FOLDER_HEADER = "x-debugrelay-folder"

_FOLDER: contextvars.ContextVar[str | None] = contextvars.ContextVar("debugrelay_asking_folder", default=None)


def asking_folder() -> str | None:
    """The asker's folder, when it said (an absolute path)."""
    return _FOLDER.get()


@contextlib.contextmanager
def asked_from(folder: str | None) -> Iterator[None]:
    """Run the block as a request asked from ``folder`` (ignored unless absolute)."""
    token = _FOLDER.set(folder if folder and os.path.isabs(folder) else None)
    try:
        yield
    finally:
        _FOLDER.reset(token)


def ask_from(folder: str | None) -> None:
    """From here on (this task and those it starts), requests are asked from ``folder``."""
    _FOLDER.set(folder if folder and os.path.isabs(folder) else None)
