"""Secrets never reach an agent: detection, stable per-session placeholders, and their way back in."""

from ._logging import RedactingFilter, install_log_filter
from ._patterns import PatternsError, load_patterns
from ._redactor import Redactor, SubstituteMode
from ._rules import BUILTIN_RULES, PLACEHOLDER, Rule, expression_name, luhn, secret_expression, secret_name
from ._table import MAX_PLACEHOLDERS, Entry, Placeholders

__all__ = [
    "BUILTIN_RULES",
    "MAX_PLACEHOLDERS",
    "PLACEHOLDER",
    "Entry",
    "PatternsError",
    "Placeholders",
    "RedactingFilter",
    "Redactor",
    "Rule",
    "SubstituteMode",
    "expression_name",
    "install_log_filter",
    "load_patterns",
    "luhn",
    "secret_expression",
    "secret_name",
]
