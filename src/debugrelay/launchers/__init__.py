"""Launchers start debug targets: local subprocesses, containers, or nothing (attach)."""

from .base import Launcher, Target
from .local import LocalLauncher, LocalTarget, free_port, kill_tree

__all__ = ["Launcher", "LocalLauncher", "LocalTarget", "Target", "free_port", "kill_tree"]
