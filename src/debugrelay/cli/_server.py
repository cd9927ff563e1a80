"""``debugrelay serve`` and ``debugrelay mcp``: the relay and the MCP server started from a shell, after
the checks that stop them early, saying why (a bind without a token, unusable redaction patterns or keys)."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys

from debugrelay import __version__
from debugrelay.config import Settings, load_settings

from ._client import token_of

log = logging.getLogger("debugrelay")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> str | None:
    """Refuse a non-loopback bind without a token or credentials; return the warning to print, if any."""
    if is_loopback(settings.host):
        return None
    if not settings.token and not settings.credentials:
        raise SystemExit(
            f"debugrelay: refusing to listen on {settings.host} without an API token.\n"
            "Anyone who reaches this port could run code in your debug targets. Set DEBUGRELAY_TOKEN\n"
            "(clients send 'Authorization: Bearer <token>'), or DEBUGRELAY_CREDENTIALS, or bind to 127.0.0.1."
        )
    return (
        f"WARNING: debugrelay listens on {settings.host}, not only on this machine. Every request "
        "must carry the API token; debug targets run code on request, so keep the token secret."
    )


def check_redaction(settings: Settings) -> None:
    """Custom redaction patterns that cannot be used stop the relay at start, saying why."""
    if not settings.redaction:
        return
    from debugrelay.redaction import PatternsError, Redactor, load_patterns

    try:
        Redactor(load_patterns(settings.redaction_patterns))
    except PatternsError as exc:
        raise SystemExit(f"debugrelay: {exc}") from None


def check_credentials(settings: Settings) -> None:
    """A credentials file that cannot be read or used stops the relay at start, saying why (later, a bad
    edit keeps the last good one)."""
    if not settings.credentials:
        return
    from pathlib import Path

    from debugrelay.access import CredentialFile, CredentialsInvalid

    try:
        CredentialFile(Path(settings.credentials))
    except CredentialsInvalid as exc:
        raise SystemExit(f"debugrelay: DEBUGRELAY_CREDENTIALS: {exc.message}") from None


def check_keys(settings: Settings) -> None:
    """A key file that cannot be made or read stops the relay at start, saying why (see debugrelay.trust)."""
    from debugrelay.trust import KeyFileError, RelayKeys

    try:
        RelayKeys.for_settings(settings, durable=bool(settings.redis_url))
    except KeyFileError as exc:
        raise SystemExit(f"debugrelay: {exc.message}. {exc.hint}") from None


def view_host(host: str) -> str:
    """Where a browser on this machine reaches the relay: loopback for a wildcard bind."""
    if host in ("0.0.0.0", "::", ""):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host else host


def serve(args: argparse.Namespace) -> int:
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from debugrelay.api import create_app
    from debugrelay.api.peers import guarded_protocol
    from debugrelay.logs import configure_logging

    settings = load_settings(host=args.host, port=args.port, redis_url=args.redis_url)
    check_redaction(settings)
    check_credentials(settings)
    check_keys(settings)
    warning = check_bind(settings)
    configure_logging(settings.log_format)
    json_logs = settings.log_format == "json"  # then every line on stderr is a JSON object: these too
    if warning and not json_logs:
        print(warning, file=sys.stderr, flush=True)
    app = create_app(settings)
    banner = (
        f"debugrelay {__version__} listening on http://{settings.host}:{settings.port} (API docs at /schema)\n"
        f"live view of the sessions: http://{view_host(settings.host)}:{settings.port}/ui"
    )
    if json_logs:
        if warning:
            log.warning(warning)
        log.info(banner.replace("\n", "; "))
    else:
        print(banner, file=sys.stderr, flush=True)
    # proxy_headers off: X-Forwarded-For from any local process would otherwise name the client (and
    # choose whose failed tries and event streams a request counts against)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        http=guarded_protocol(app),  # a debug target's connection is closed unread
        log_level="warning",
        log_config=None if json_logs else LOGGING_CONFIG,  # None: uvicorn's lines go through the relay's handler
        access_log=False,
        proxy_headers=False,
    )
    return 0


def mcp(args: argparse.Namespace) -> int:
    # httpcore imports trio, when it is installed, to support it (about 0.2 s before the first answer); this
    # server runs on asyncio only
    sys.modules.setdefault("trio", None)  # type: ignore[arg-type]
    from debugrelay.mcp_server import run_stdio

    if not args.url:
        settings = load_settings()
        check_redaction(settings)
        check_keys(settings)
    return run_stdio(args.url, token_of(args))
