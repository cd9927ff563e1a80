"""Secrets never reach an agent: detection, stable per-session placeholders, and their way back in."""

from ._known import ENCODED_MAX, KNOWN_MIN_CHARS
from ._logging import RedactingFilter, install_log_filter
from ._patterns import PatternsError, load_patterns
from ._redactor import ANSWER_MAX_CHARS, OFF_LOOP_CHARS, PAGE_MAX_CHARS, Budget, Redactor, SubstituteMode, text_size
from ._rules import BUILTIN_RULES, PLACEHOLDER, Rule, expression_name, luhn, secret_expression, secret_name
from ._seam import RedactionSeam
from ._table import MAX_PLACEHOLDERS, Entry, Placeholders

__all__ = [
    "ANSWER_MAX_CHARS",
    "BUILTIN_RULES",
    "ENCODED_MAX",
    "KNOWN_MIN_CHARS",
    "MAX_PLACEHOLDERS",
    "OFF_LOOP_CHARS",
    "PAGE_MAX_CHARS",
    "PLACEHOLDER",
    "Budget",
    "Entry",
    "PatternsError",
    "Placeholders",
    "RedactingFilter",
    "RedactionSeam",
    "Redactor",
    "Rule",
    "SubstituteMode",
    "expression_name",
    "install_log_filter",
    "load_patterns",
    "luhn",
    "secret_expression",
    "secret_name",
    "text_size",
]
