"""What handlers are given: the relay's services, its session manager and its settings (by name)."""

from __future__ import annotations

from litestar.di import NamedDependency

from debugrelay.config import Settings
from debugrelay.service import RelayService
from debugrelay.sessions import SessionManager

from .auth import Gatekeeper

Service = NamedDependency[RelayService]
Manager = NamedDependency[SessionManager]
Config = NamedDependency[Settings]
Gate = NamedDependency[Gatekeeper]
