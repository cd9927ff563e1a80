"""Launchers start debug targets: local subprocesses, containers, or nothing (attach)."""

from .base import Launcher, Target
from .local import LocalLauncher, LocalTarget, find_adapter, free_port, kill_tree

__all__ = ["Launcher", "LocalLauncher", "LocalTarget", "Target", "find_adapter", "free_port", "kill_tree"]
