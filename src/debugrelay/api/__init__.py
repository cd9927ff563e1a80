"""HTTP API: a thin Litestar layer over the session manager."""

from .app import build_manager, create_app

__all__ = ["build_manager", "create_app"]
