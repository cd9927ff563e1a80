"""Custom patterns: a TOML file of ``[[pattern]]`` tables (name, regex, prefix), read once at start.

Example::

    [[pattern]]
    name = "internal_id"
    regex = 'ID-\\d{8}-[A-Z]{3}'
    prefix = "INTERNAL_ID"      # placeholders [INTERNAL_ID_1], ...; default SECRET
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from ._rules import BUILTIN_RULES, Rule

_PREFIX = re.compile(r"[A-Z][A-Z0-9_]{0,30}")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,50}")


class PatternsError(ValueError):
    """The custom patterns file cannot be used; the message says which file, which pattern and why."""


def load_patterns(path: str | None) -> tuple[Rule, ...]:
    """The built-in rules followed by the custom ones from ``path`` (none when ``path`` is empty)."""
    if not path:
        return BUILTIN_RULES
    where = f"DEBUGRELAY_REDACTION_PATTERNS ({path})"
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PatternsError(f"{where}: cannot read the file: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PatternsError(f"{where}: not valid TOML: {exc}") from None
    unknown = set(data) - {"pattern"}
    if unknown:
        raise PatternsError(f"{where}: unknown top-level key(s) {sorted(unknown)}; write [[pattern]] tables")
    entries = data.get("pattern", [])
    if not isinstance(entries, list):
        raise PatternsError(f"{where}: 'pattern' must be an array of tables: [[pattern]]")
    taken = {r.name for r in BUILTIN_RULES}
    rules: list[Rule] = []
    for i, entry in enumerate(entries, 1):
        rules.append(_rule(entry, f"{where}, pattern {i}", taken))
        taken.add(rules[-1].name)
    return (*BUILTIN_RULES, *rules)


def _rule(entry: object, where: str, taken: set[str]) -> Rule:
    if not isinstance(entry, dict):
        raise PatternsError(f"{where}: must be a table with name, regex and prefix")
    extra = set(entry) - {"name", "regex", "prefix"}
    if extra:
        raise PatternsError(f"{where}: unknown key(s) {sorted(extra)}; a pattern has name, regex and prefix")
    name, regex, prefix = entry.get("name"), entry.get("regex"), entry.get("prefix", "SECRET")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PatternsError(f"{where}: 'name' must be lowercase letters, digits and '_' (got {name!r})")
    if name in taken:
        raise PatternsError(f"{where}: the name '{name}' is taken (built-in rules and earlier patterns)")
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise PatternsError(f"{where} ('{name}'): 'prefix' must be uppercase letters, digits and '_' (got {prefix!r})")
    if not isinstance(regex, str) or not regex:
        raise PatternsError(f"{where} ('{name}'): 'regex' must be a non-empty string")
    try:
        compiled = re.compile(regex)
    except re.error as exc:
        raise PatternsError(f"{where} ('{name}'): the regex does not compile: {exc}") from None
    if compiled.fullmatch(""):
        raise PatternsError(f"{where} ('{name}'): the regex matches the empty string")
    return Rule(name, prefix, compiled, custom=True)
