"""Patching one of debugpy's modules right after it is imported: the start-up hook runs before
debugpy is loaded, and a patch must never keep the program from running."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from typing import Any


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``name`` as the path finders would, and runs ``patch`` on it once it has executed."""

    def __init__(self, name: str, patch: Callable[[Any], None], what: str) -> None:
        self.name, self.patch, self.what = name, patch, what

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        with contextlib.suppress(ValueError):  # found once: the program's import machinery is as it was
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return None
        loader = spec.loader
        execute = loader.exec_module

        def exec_module(module: Any) -> None:
            execute(module)
            try:
                self.patch(module)
            except Exception as exc:
                print(f"debugrelay: {self.what}: {exc!r}", file=sys.stderr)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def when_imported(name: str, patch: Callable[[Any], None], what: str) -> None:
    """Run ``patch(module)`` now if ``name`` is loaded, else right after it is; ``what`` says in a
    failure's message what is lost (the program then runs as debugpy alone would run it)."""
    module = sys.modules.get(name)
    if module is not None:
        patch(module)
    elif not any(isinstance(f, _Finder) and f.name == name for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder(name, patch, what))
