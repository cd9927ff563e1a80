"""Who may do what: named credentials with roles, the caller of a request, and the rules per session."""

from debugrelay.errors import Forbidden

from ._caller import SCOPE_KEY, Caller, acting_as, current
from ._credentials import (
    ROLES,
    Credential,
    CredentialFile,
    CredentialSet,
    CredentialsInvalid,
    Role,
    digest,
    parse_credentials,
    single_token,
)
from ._limits import RateLimited, RequestRates
from ._rules import ACCESSES, ROLE_PREFIX, Access, authorize, may_see, shared_with

__all__ = [
    "ACCESSES",
    "ROLES",
    "ROLE_PREFIX",
    "SCOPE_KEY",
    "Access",
    "Caller",
    "Credential",
    "CredentialFile",
    "CredentialSet",
    "CredentialsInvalid",
    "Forbidden",
    "RateLimited",
    "RequestRates",
    "Role",
    "acting_as",
    "authorize",
    "current",
    "digest",
    "may_see",
    "parse_credentials",
    "shared_with",
    "single_token",
]
