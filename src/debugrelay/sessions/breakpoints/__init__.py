"""Breakpoints: validated from the source before debugpy sees them, then reconciled per file.

debugpy 1.8 answers ``verified: true`` for a blank line (moving it backwards), a line past the end,
or any function name, and never stops (nor says why) when a condition raises. The relay checks the
source itself, resolves function names to lines, counts hit conditions in the target and turns a
failing condition into a stop with a note, so the agent hears the truth.
"""

from debugrelay.models import BreakpointRequest, BreakpointUpdate, SourceRef

from ._checks import resolve_function, search_roots, verify_locally
from ._common import EXCEPTION_FILTERS, NEVER_HIT, PENDING_FILE, PENDING_FUNCTION, BreakpointExists, BreakpointState
from ._exceptions import apply_exception_filters, exception_wanted, set_exception_filters, type_matches
from ._launch import drop_entry, entry_breakpoint, prepare_launch
from ._operations import add, drop_captures, find, listing, never_hit, remove, remove_all, update, view
from ._profiles import apply_saved, profile_entry, requests_from_saved
from ._requests import (
    check_log_message,
    compile_expression,
    decode_requests,
    normalize_hit_condition,
    parse_requests,
    record_from,
    validate_all,
    validate_request,
)
from ._sync import (
    hit_test,
    mark_unhit,
    on_hit,
    on_runs_report,
    read_hits,
    recheck_pending,
    reset_run,
    sync_all,
    sync_file,
    sync_functions,
)

__all__ = [
    "EXCEPTION_FILTERS",
    "NEVER_HIT",
    "PENDING_FILE",
    "PENDING_FUNCTION",
    "BreakpointExists",
    "BreakpointRequest",
    "BreakpointState",
    "BreakpointUpdate",
    "SourceRef",
    "add",
    "apply_exception_filters",
    "apply_saved",
    "check_log_message",
    "compile_expression",
    "decode_requests",
    "drop_captures",
    "drop_entry",
    "entry_breakpoint",
    "exception_wanted",
    "find",
    "hit_test",
    "listing",
    "mark_unhit",
    "never_hit",
    "normalize_hit_condition",
    "on_hit",
    "on_runs_report",
    "parse_requests",
    "prepare_launch",
    "profile_entry",
    "read_hits",
    "recheck_pending",
    "record_from",
    "remove",
    "remove_all",
    "requests_from_saved",
    "reset_run",
    "resolve_function",
    "search_roots",
    "set_exception_filters",
    "sync_all",
    "sync_file",
    "sync_functions",
    "type_matches",
    "update",
    "validate_all",
    "validate_request",
    "verify_locally",
    "view",
]
