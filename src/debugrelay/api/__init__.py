"""HTTP API: a thin Litestar layer over the relay's services."""

from .app import create_app

__all__ = ["create_app"]
