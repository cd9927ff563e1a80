"""debugrelay: interactive Python debugging for AI agents through stateless calls."""

__version__ = "0.1.0"
__all__ = ["__version__"]
