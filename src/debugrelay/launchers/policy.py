"""What a launch may ask for: folders, mounts, images, users and limits, as the operator allows.

A debug target is untrusted code and the API token goes to agents the debugged code can steer, so
every path a container launch names is resolved first (symlinks followed, ``..`` folded) and must
then lie inside the operator's roots; images come from an allowlist; targets run as a non-root uid;
a launch may lower the configured limits, never raise them. Each refusal names the setting that
would allow it. Nothing here starts anything or imports a web framework.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
import sysconfig
from dataclasses import dataclass, field

from debugrelay.config import Settings, split_list
from debugrelay.errors import InvalidRequest, Refused
from debugrelay.models import ResourceLimits

TARGET_USER = "10001:10001"  # the target image's `debuggee`; any image runs as it unless root is allowed
OWN_IMAGES = ("debugrelay/target:*", "debugrelay/base:*")
KNOWN_LAUNCHERS = ("local", "docker", "kubernetes")
ROOTS_SETTING = "DEBUGRELAY_WORKSPACE, DEBUGRELAY_ALLOWED_ROOTS"
# never handed to a target, whatever the roots say: the host's root and kernel interfaces
_NEVER = ("/proc", "/sys", "/dev")
_DOCKER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock")
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmg]?)b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
# entries a launch's mounted folders may hold in all, for the socket check (about 0.2 s for 50,000)
SCAN_ENTRIES = 50_000


def memory_bytes(value: str) -> int:
    """Docker's memory notation (``512m``, ``1g``, ``1048576``) in bytes."""
    match = _MEMORY.match(value)
    if match is None:
        raise InvalidRequest(
            f"memory limit '{value}' is not a size",
            details={"memory": value},
            hint="Use a number of bytes or one with a unit: 256m, 1g.",
        )
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def real(path: str) -> str:
    """``path`` with every symlink followed and ``..`` folded (it need not exist)."""
    return os.path.realpath(path)


def under(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or inside it (both resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def docker_sockets() -> list[str]:
    """Where the engine's socket may be, resolved (``DOCKER_HOST`` included)."""
    paths = list(_DOCKER_SOCKETS)
    host = os.environ.get("DOCKER_HOST", "")
    if host.startswith("unix://"):
        paths.append(host[len("unix://") :])
    return sorted({real(p) for p in paths})


@dataclass(frozen=True)
class Limits:
    memory: str
    nano_cpus: int
    pids: int


@dataclass(frozen=True)
class LaunchPolicy:
    """The operator's rules for container launches, read from the settings once."""

    roots: tuple[str, ...]
    writable_roots: tuple[str, ...] = ()
    images: tuple[str, ...] = OWN_IMAGES
    allow_root: bool = False
    memory: str = "512m"
    cpus: float = 1.0
    pids: int = 256
    source_roots: tuple[str, ...] = field(default_factory=tuple)

    @classmethod
    def from_settings(cls, settings: Settings, *, pulled: bool = False) -> LaunchPolicy:
        """The policy of ``settings``; ``pulled``: for images a cluster's kubelet pulls from a registry,
        where a pattern such as ``debugrelay/target:*`` would admit any tag anyone pushes to that public
        name: then only the configured target image and the operator's own patterns."""
        roots = [settings.workspace or os.getcwd(), *split_list(settings.allowed_roots)]
        if pulled:
            images = [settings.kubernetes_image or settings.docker_image]
        else:
            images = [*OWN_IMAGES, settings.docker_image, settings.kubernetes_image]
        images = [i for i in images if i] + split_list(settings.allowed_images, colons=False)
        library = {sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")}
        return cls(
            roots=tuple(dict.fromkeys(real(r) for r in roots)),
            writable_roots=tuple(dict.fromkeys(real(r) for r in split_list(settings.writable_roots))),
            images=tuple(dict.fromkeys(images)),
            allow_root=settings.allow_root_targets,
            memory=settings.docker_memory,
            cpus=settings.docker_cpus,
            pids=settings.docker_pids,
            source_roots=tuple(sorted(real(p) for p in library if p)),
        )

    # -- paths -------------------------------------------------------------------------------

    def inside(self, path: str, *, what: str) -> str:
        """``path`` resolved, if it lies inside a root; else :class:`Refused`."""
        if not os.path.isabs(path):
            raise InvalidRequest(f"{what} '{path}' must be an absolute path", details={"field": what, "path": path})
        resolved = real(path)
        if not any(under(resolved, root) for root in self.roots):
            shown = "" if resolved == os.path.normpath(path) else f" (resolves to '{resolved}')"
            raise Refused(
                f"{what} '{path}'{shown} is outside the folders this relay lets launches use",
                details={
                    "field": what,
                    "path": path,
                    "resolved": resolved,
                    "roots": list(self.roots),
                    "setting": ROOTS_SETTING,
                },
                hint="Use a path inside details.roots; the operator can add folders with DEBUGRELAY_ALLOWED_ROOTS.",
            )
        return resolved

    def mount_source(self, path: str, *, what: str, writable: bool) -> str:
        """A folder or file to bind-mount into a target: inside the roots, never the host's root,
        kernel interfaces or the engine's socket; writable only under the writable roots."""
        resolved = self.inside(path, what=what)
        forbidden = [p for p in _NEVER if under(resolved, p)]
        sockets = [s for s in docker_sockets() if under(s, resolved)]
        if resolved == "/" or forbidden or sockets:
            raise Refused(
                f"{what} '{path}' would hand the target "
                + ("the container engine's socket" if sockets else "the host's system folders"),
                details={"field": what, "path": path, "resolved": resolved, "setting": "none"},
                hint="No setting allows this: mount a project folder instead.",
            )
        try:
            mode = os.stat(resolved).st_mode
        except OSError:
            raise InvalidRequest(
                f"{what} '{path}' does not exist", details={"field": what, "path": path, "resolved": resolved}
            ) from None
        if stat.S_ISSOCK(mode) or stat.S_ISFIFO(mode):
            kind = "socket" if stat.S_ISSOCK(mode) else "FIFO"
            raise Refused(
                f"{what} '{path}' is a {kind}: sockets and FIFOs are never mounted into a target",
                details={"field": what, "path": path, "resolved": resolved, "setting": "none"},
                hint=f"No setting allows this: a {kind} would give the target the process behind it.",
            )
        if writable and not any(under(resolved, root) for root in self.writable_roots):
            raise Refused(
                f"{what} '{path}' cannot be mounted writable: it is outside the writable folders",
                details={
                    "field": what,
                    "path": path,
                    "resolved": resolved,
                    "writable_roots": list(self.writable_roots),
                    "setting": "DEBUGRELAY_WRITABLE_ROOTS",
                },
                hint="Launch without 'writable' (sources are mounted read-only), or ask the operator to list "
                "the folder in DEBUGRELAY_WRITABLE_ROOTS.",
            )
        return resolved

    def no_pipes_inside(self, mounted: list[tuple[str, str, str]], user: str) -> None:
        """Refuse the launch if a mounted folder holds a socket or a FIFO the target could open.

        ``mounted`` lists (field, path as asked, resolved folder). A socket or a FIFO reaches the
        process behind it through any bind mount, read-only included, so none may be inside; a
        subfolder the target's ``user`` cannot enter (by its mode bits) is not looked into. At most
        :data:`SCAN_ENTRIES` entries are looked at in all: a bigger tree is refused, not half-checked.
        """
        budget = SCAN_ENTRIES
        for what, path, folder in mounted:
            found, budget = _find_pipe(folder, user, budget)
            if budget < 0:
                raise Refused(
                    f"{what} '{path}' holds more than {SCAN_ENTRIES:,} files and folders: too many to check "
                    "that no socket is inside",
                    details={"field": what, "path": path, "resolved": folder, "limit": SCAN_ENTRIES, "setting": "none"},
                    hint="Mount a smaller folder: the program's own folder, without virtualenvs, node_modules "
                    "or data (set 'cwd', 'mounts' and 'pythonpath' to the folders the program needs).",
                )
            if found is None:
                continue
            special, kind = found
            details = {"field": what, "path": path, "resolved": folder, "found": special, "setting": "none"}
            if kind == "folder":
                raise Refused(
                    f"{what} '{path}' holds a folder the relay cannot look into, '{special}', and the target "
                    "could: it is not mounted unchecked (a socket inside would reach the process behind it)",
                    details=details,
                    hint=f"Let the relay's user list '{special}' (chmod o+rx), or mount a folder without it.",
                )
            raise Refused(
                f"{what} '{path}' holds a {kind}, '{special}': a {kind} in a mounted folder reaches the "
                "process behind it, so such a folder is never mounted into a target",
                details=details,
                hint=f"Mount a folder without it (a subfolder of '{folder}' not holding '{special}'), or move "
                f"the {kind} elsewhere (a service's socket belongs in /run or $XDG_RUNTIME_DIR).",
            )

    def source(self, path: str) -> str:
        """A file the relay may read for ``GET /source``: inside the roots or Python's own library."""
        resolved = real(path)
        if any(under(resolved, root) for root in (*self.roots, *self.source_roots)):
            return resolved
        raise Refused(
            f"'{path}' is outside the folders this relay serves sources from",
            details={"path": path, "resolved": resolved, "roots": list(self.roots), "setting": ROOTS_SETTING},
            hint="Ask for files under details.roots (a stack frame's 'file' of your own code).",
        )

    # -- images, users, limits ----------------------------------------------------------------

    def image(self, image: str) -> str:
        """``image`` if a pattern of the allowlist matches it (a name without a tag means ``:latest``)."""
        name = image if "@" in image or ":" in image.rsplit("/", 1)[-1] else f"{image}:latest"
        if any(fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(image, pattern) for pattern in self.images):
            return image
        raise Refused(
            f"image '{image}' is not on this relay's list of allowed images",
            details={"image": image, "allowed": list(self.images), "setting": "DEBUGRELAY_ALLOWED_IMAGES"},
            hint="Use an image matching details.allowed, or ask the operator to add a pattern to "
            "DEBUGRELAY_ALLOWED_IMAGES.",
        )

    def user(self, root: bool) -> str:
        """The uid:gid a target runs as: never root unless the operator allows it and the launch asks."""
        if not root:
            return TARGET_USER
        if not self.allow_root:
            raise Refused(
                "targets run as a non-root user on this relay",
                details={"root": True, "user": TARGET_USER, "setting": "DEBUGRELAY_ALLOW_ROOT_TARGETS"},
                hint="Launch without 'root'; only the operator can allow root targets.",
            )
        return "0:0"

    def user_for(self, root: bool, paths: list[tuple[str, bool]]) -> str:
        """The uid:gid a target runs as, given the (path, is_folder) pairs it must read.

        The target's own user when it can read them all; else the owner of the one it cannot read
        (a folder of mode 0700, as ``mktemp -d`` makes, or a private home), when that owner is not
        root and can read them all: the user's own files, read as the user. Otherwise the launch
        fails here with the fix, rather than the target dying in debugpy with a PermissionError.
        """
        user = self.user(root)
        if root:
            return user
        blocked = next((p for p, folder in paths if not _can_read(p, folder, TARGET_USER)), None)
        if blocked is None:
            return user
        info = os.stat(blocked)
        owner = f"{info.st_uid}:{info.st_gid}"
        if info.st_uid != 0 and all(_can_read(p, folder, owner) for p, folder in paths):
            return owner
        raise _unreadable(blocked, dict(paths)[blocked], info)

    def limits(self, requested: ResourceLimits | None) -> Limits:
        """The configured limits, lowered where the launch asks; a request above them is refused."""
        memory, cpus, pids = self.memory, self.cpus, self.pids
        asked = requested or ResourceLimits()
        if asked.memory is not None:
            if memory_bytes(asked.memory) > memory_bytes(self.memory):
                raise _above("memory", asked.memory, self.memory, "DEBUGRELAY_DOCKER_MEMORY")
            memory = asked.memory
        if asked.cpus is not None:
            if asked.cpus <= 0:
                raise InvalidRequest("cpus must be above 0", details={"cpus": asked.cpus})
            if asked.cpus > self.cpus:
                raise _above("cpus", asked.cpus, self.cpus, "DEBUGRELAY_DOCKER_CPUS")
            cpus = asked.cpus
        if asked.pids is not None:
            if asked.pids <= 0:
                raise InvalidRequest("pids must be above 0", details={"pids": asked.pids})
            if asked.pids > self.pids:
                raise _above("pids", asked.pids, self.pids, "DEBUGRELAY_DOCKER_PIDS")
            pids = asked.pids
        return Limits(memory=memory, nano_cpus=int(1e9 * cpus), pids=pids)


def _above(name: str, asked: object, ceiling: object, setting: str) -> Refused:
    return Refused(
        f"limits.{name} {asked} is above this relay's ceiling of {ceiling}",
        details={"limit": name, "requested": asked, "ceiling": ceiling, "setting": setting},
        hint=f"Ask for at most {ceiling} (or leave it out); a launch may lower the limits, never raise them.",
    )


def _find_pipe(folder: str, user: str, budget: int) -> tuple[tuple[str, str] | None, int]:
    """The first socket or FIFO under ``folder`` that uid:gid ``user`` can reach (or a folder the relay
    cannot list), with its kind, and what is left of ``budget`` (below 0: the tree has more entries).
    Symlinks are not followed: in the container they resolve inside the container's own tree."""
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            # a folder the target can enter and the relay cannot list: unchecked, so refused
            return (current, "folder"), budget
        budget -= len(entries)
        if budget < 0:
            return None, budget
        for entry in entries:
            if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            if stat.S_ISDIR(info.st_mode):
                if _can_enter(info, user):
                    pending.append(entry.path)
            elif stat.S_ISSOCK(info.st_mode):
                return (entry.path, "socket"), budget
            elif stat.S_ISFIFO(info.st_mode):
                return (entry.path, "FIFO"), budget
    return None, budget


def _can_enter(info: os.stat_result, user: str) -> bool:
    """Whether uid:gid ``user`` may pass through a folder, by its mode bits (root always may)."""
    uid, _, gid = user.partition(":")
    if int(uid) == 0:
        return True
    if int(uid) == info.st_uid:
        bits = info.st_mode >> 6
    elif int(gid) == info.st_gid:
        bits = info.st_mode >> 3
    else:
        bits = info.st_mode
    return bool(bits & 0o1)


def _can_read(path: str, folder: bool, user: str) -> bool:
    """Whether uid:gid ``user`` may read ``path`` (and list a folder), by its mode bits alone."""
    try:
        info = os.stat(path)
    except OSError:
        return True  # a missing path is reported by the checks that need it
    uid, _, gid = user.partition(":")
    if int(uid) == info.st_uid:
        bits = info.st_mode >> 6
    elif int(gid) == info.st_gid:
        bits = info.st_mode >> 3
    else:
        bits = info.st_mode
    need = 0o5 if folder else 0o4
    return bits & need == need


def _unreadable(path: str, folder: bool, info: os.stat_result) -> InvalidRequest:
    kind = "folder" if folder else "file"
    fix = f"chmod o+rx '{path}'" if folder else f"chmod o+r '{path}'"
    return InvalidRequest(
        f"the target cannot read the {kind} '{path}' (mode {stat.S_IMODE(info.st_mode):04o}, owned by uid "
        f"{info.st_uid}): it runs as uid {TARGET_USER.partition(':')[0]}, not as root",
        details={
            "path": path,
            "mode": f"{stat.S_IMODE(info.st_mode):04o}",
            "owner_uid": info.st_uid,
            "target_user": TARGET_USER,
        },
        hint=f"Let others read it ({fix}; files inside need o+r), or put the script in a folder not owned by root "
        "(the target then runs as that folder's owner).",
    )


def refused_launcher(name: str, offered: list[str]) -> Refused:
    """A launcher this relay knows but does not offer (e.g. local processes beside a containerized relay)."""
    return Refused(
        f"launcher '{name}' is not offered by this relay",
        details={"launcher": name, "available": offered, "setting": "DEBUGRELAY_LAUNCHERS"},
        hint="Use one of details.available. A local target would run inside the relay itself: the operator "
        "turns it on with DEBUGRELAY_LAUNCHERS.",
    )


__all__ = [
    "KNOWN_LAUNCHERS",
    "OWN_IMAGES",
    "TARGET_USER",
    "LaunchPolicy",
    "Limits",
    "memory_bytes",
    "real",
    "refused_launcher",
]
