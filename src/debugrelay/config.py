"""Settings, read once from ``DEBUGRELAY_*`` environment variables (CLI flags override them)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import msgspec

DEFAULT_PORT = 8765  # debugpy's own default is 5678: keep clear of it
DEFAULT_URL = f"http://127.0.0.1:{DEFAULT_PORT}"  # where clients find a relay of this machine by default
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
_LISTS = ("allowed_hosts", "cors_origins", "attach_hosts")  # comma-separated in the environment
_SWITCHES = {"on": "true", "yes": "true", "off": "false", "no": "false"}  # words for booleans


class Settings(msgspec.Struct, kw_only=True):
    """Everything the relay can be configured with; ``GET /config`` shows it without secrets."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    credentials: str | None = None  # a TOML file of named credentials with roles (README, "A team's relay")
    redis_url: str | None = None
    redis_namespace: str = "debugrelay"  # key prefix: relays sharing a Redis see the same sessions
    instance_id: str = ""
    advertise_url: str = ""  # where other replicas reach this one; default http://{host}:{port}
    allowed_hosts: list[str] = msgspec.field(default_factory=list)  # Host names beyond loopback (any port)
    cors_origins: list[str] = msgspec.field(default_factory=list)  # browser origins let in, with CORS headers
    attach_hosts: list[str] = msgspec.field(default_factory=list)  # hosts or networks attach may reach beyond loopback
    attach_other_users: bool = False  # attach by PID to processes of other users too
    keep_targets_on_shutdown: bool | None = None  # None: keep them when the store is durable
    lease_ttl: float = 10.0  # a session's owner renews its lease every ttl/3 seconds
    default_launcher: str = "local"
    session_timeout_minutes: float = 60.0
    ui_session_minutes: float = 480.0  # a live view sign-in lasts this long at most
    ui_idle_minutes: float = 60.0  # and ends sooner after this long without a request from its page
    max_sessions: int = 100
    audit_entries: int = 10_000  # audit entries kept, the newest (and each credential's newest tenth besides)
    output_buffer_entries: int = 10_000
    output_buffer_bytes: int = 8 * 1024 * 1024  # output kept per session, in UTF-8 bytes: the oldest go first
    output_entry_max_chars: int = 65_536
    request_timeout: float = 10.0
    launch_timeout: float = 20.0  # a launch answers by then: started, or `starting` (its debugger still starts)
    start_timeout: float = 300.0  # a target's debugger may start this long while its process lives
    value_max_chars: int = 200
    stop_history: int = 20
    state_dir: str = ""
    docker_image: str = "debugrelay/target:latest"
    workspace: str = ""  # the folder launches may use; default: the relay's working directory
    workspace_host: str = ""  # the same folder as the Docker engine sees it (a relay in a container)
    allowed_roots: str = ""  # more folders launches may use, comma or colon separated
    writable_roots: str = ""  # folders a launch may mount writable (default: none)
    allowed_images: str = ""  # image patterns (fnmatch, comma separated) besides the project's own target images
    allow_root_targets: bool = False  # a launch may ask to run its container as root
    # where a container target's ports are published (launch "ports"): loopback by default; a relay in a
    # container binds every address of its container, on a range its compose file maps to the host
    publish_host: str = "127.0.0.1"
    publish_ports: str = ""  # "49200-49209": the host ports to publish on (default: any free one)
    launchers: str = (
        "local,docker"  # launchers offered (local, docker, kubernetes); compose: docker, deploy/: kubernetes
    )
    docker_memory: str = "512m"
    docker_cpus: float = 1.0
    docker_pids: int = 256
    pool_size: int = 2  # warm local interpreters (0: every launch starts cold)
    docker_pool_size: int = 0  # warm containers per (image, folder, limits) once a launch used them
    kubernetes_namespace: str = ""  # where target pods run (default: the relay's own, from its service account)
    kubernetes_image: str = ""  # a launch's image when it names none (default: docker_image)
    kubernetes_boot_image: str = ""  # the init container's image, with debugpy (default: the relay pod's own)
    kubernetes_port: int = 5678  # the keeper's port in every target pod
    kubernetes_start_timeout: float = 300.0  # a pod's scheduling, pull, init and start; launch_timeout: then debugpy
    redaction: bool = True  # secrets in answers and logs become placeholders; off only when said so
    redaction_patterns: str = ""  # a TOML file of custom [[pattern]] tables (name, regex, prefix)
    log_format: Literal["text", "json"] = "text"  # json: each log line on stderr is one JSON object
    otel: bool = False  # OpenTelemetry traces (the otel extra); also on when OTEL_EXPORTER_OTLP_ENDPOINT is set

    def public(self) -> PublicSettings:
        """The settings as shown to clients: the token is never echoed."""
        data: dict[str, object] = msgspec.to_builtins(self)
        data["token"] = "***" if self.token else None
        if self.redis_url:
            data["redis_url"] = hide_password(self.redis_url)
        data["store"] = "redis" if self.redis_url else "memory"
        return msgspec.convert(data, PublicSettings)

    def reachable_hosts(self) -> list[str]:
        """The names requests may carry in ``Host`` (any port): loopback, the bind address unless it is a
        wildcard, the advertised URL's host (replicas forward there) and ``DEBUGRELAY_ALLOWED_HOSTS``."""
        names = [*LOOPBACK_HOSTS, *self.allowed_hosts, urlsplit(self.advertise_url).hostname or ""]
        if self.host not in WILDCARD_HOSTS:
            names.append(self.host)
        return [name for name in dict.fromkeys(host_name(n) for n in names) if name]


def host_name(authority: str) -> str:
    """The host of ``name``, ``name:port`` or ``[v6]:port``, lowercased, without port or trailing dot."""
    authority = authority.strip().lower()
    if authority.startswith("["):
        name = authority[1:].partition("]")[0]
    elif authority.count(":") > 1:
        name = authority  # a bare IPv6 address
    else:
        name = authority.partition(":")[0]
    return name.rstrip(".")


def normalize_origin(origin: str) -> str:
    """An ``Origin`` as browsers send it: lowercased, no trailing slash."""
    return origin.strip().lower().rstrip("/")


class PublicSettings(Settings, kw_only=True):
    """``GET /config``: the settings in force, secrets hidden, and which store that makes."""

    store: str


SECRET_QUERY_KEYS = frozenset({"password", "passwd", "pass", "token", "secret", "key", "auth"})


def hide_password(url: str) -> str:
    """``url`` with the password of its userinfo and any secret-looking query value shown as ``***``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        creds, _, host = netloc.rpartition("@")
        user, colon, _ = creds.partition(":")
        netloc = f"{user}:***@{host}" if colon else f"{creds}@{host}"
    query = [
        (k, "***" if k.lower() in SECRET_QUERY_KEYS else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe="*"), parts.fragment))


def split_list(value: str, *, colons: bool = True) -> list[str]:
    """A setting listing several values: comma (or, for paths, colon) separated, blanks dropped."""
    if colons:
        value = value.replace(":", ",")
    return [part.strip() for part in value.split(",") if part.strip()]


def offered_launchers(settings: Settings) -> list[str]:
    return split_list(settings.launchers)


def in_container() -> bool:
    """Whether this process runs in a container (Docker, Podman, a Kubernetes pod), by its marks."""
    return (
        Path("/.dockerenv").exists() or Path("/run/.containerenv").exists() or "KUBERNETES_SERVICE_HOST" in os.environ
    )


def _advertised_host(host: str) -> str:
    """A host other replicas can reach: the bind address, or this machine's address for a wildcard."""
    if host not in WILDCARD_HOSTS:
        return f"[{host}]" if ":" in host else host
    import socket

    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return socket.gethostname()


def _env(name: str) -> str | None:
    value = os.environ.get(f"DEBUGRELAY_{name.upper()}")
    return value if value not in (None, "") else None


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, then apply explicit overrides that are not None."""
    raw: dict[str, object] = {}
    for field in msgspec.structs.fields(Settings):
        value = _env(field.name)
        if value is not None:
            if field.name in _LISTS:
                raw[field.name] = [v.strip() for v in value.split(",") if v.strip()]
            else:
                raw[field.name] = _SWITCHES.get(value.strip().lower(), value) if field.type is bool else value
    raw.update({k: v for k, v in overrides.items() if v is not None})
    settings = msgspec.convert(raw, Settings, strict=False)
    if not settings.instance_id:
        settings.instance_id = f"{socket.gethostname()}-{os.getpid()}"
    if not settings.advertise_url:
        settings.advertise_url = f"http://{_advertised_host(settings.host)}:{settings.port}"
    if not settings.workspace:
        settings.workspace = os.getcwd()
    offered = offered_launchers(settings)
    if settings.default_launcher not in offered and offered:
        settings.default_launcher = offered[0]
    if not settings.state_dir:
        settings.state_dir = str(Path.home() / ".debugrelay")
    return settings
