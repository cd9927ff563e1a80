"""The ``debugrelay`` command: ``serve`` starts the relay; the other commands talk to one."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import sys
from collections.abc import Sequence

from debugrelay import __version__
from debugrelay.config import DEFAULT_PORT, Settings, load_settings


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings) -> str | None:
    """Refuse a non-loopback bind without a token; return the warning to print, if any."""
    if is_loopback(settings.host):
        return None
    if not settings.token:
        raise SystemExit(
            f"debugrelay: refusing to listen on {settings.host} without an API token.\n"
            "Anyone who reaches this port could run code in your debug targets. Set DEBUGRELAY_TOKEN\n"
            "(clients send 'Authorization: Bearer <token>'), or bind to 127.0.0.1."
        )
    return (
        f"WARNING: debugrelay listens on {settings.host}, not only on this machine. Every request "
        "must carry the API token; debug targets run code on request, so keep the token secret."
    )


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    from debugrelay.api import create_app

    settings = load_settings(host=args.host, port=args.port, redis_url=args.redis_url)
    warning = check_bind(settings)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    app = create_app(settings)
    print(f"debugrelay {__version__} listening on http://{settings.host}:{settings.port} "
          f"(API docs at /schema)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", access_log=False)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="debugrelay", description="Debug Python programs through stateless calls.")
    parser.add_argument("--version", action="version", version=f"debugrelay {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="start the relay (HTTP API)")
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1; others need DEBUGRELAY_TOKEN)")
    p.add_argument("--port", type=int, default=None, help=f"port (default {DEFAULT_PORT})")
    p.add_argument("--redis-url", default=None, help="keep state in Redis (default: in memory)")
    p.set_defaults(func=serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
