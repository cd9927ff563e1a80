"""Who may do what: named credentials with roles, the caller of a request, and the rules per session."""

from ._caller import SCOPE_KEY, Caller, acting_as, current
from ._credentials import ROLES, CredentialFile, CredentialSet, CredentialsInvalid, Role, single_token
from ._limits import RequestRates
from ._rules import Access, authorize, may_see

__all__ = [
    "ROLES",
    "SCOPE_KEY",
    "Access",
    "Caller",
    "CredentialFile",
    "CredentialSet",
    "CredentialsInvalid",
    "RequestRates",
    "Role",
    "acting_as",
    "authorize",
    "current",
    "may_see",
    "single_token",
]
