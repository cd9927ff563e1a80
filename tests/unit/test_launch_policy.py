"""What a launch may ask for: paths inside the operator's roots (resolved first), allowed images,
a non-root user, limits no higher than configured. Each refusal names the setting."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from debugrelay.config import Settings, load_settings
from debugrelay.errors import InvalidRequest, Refused
from debugrelay.launchers.attach_policy import check_attach_pid
from debugrelay.launchers.policy import TARGET_USER, LaunchPolicy, memory_bytes
from debugrelay.models import ResourceLimits


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "project").mkdir(parents=True)
    (root / "project" / "main.py").write_text("print('hi')\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s3cret\n")
    return root


def policy_for(workspace: Path, **settings: object) -> LaunchPolicy:
    return LaunchPolicy.from_settings(Settings(workspace=str(workspace), **settings))  # type: ignore[arg-type]


def refused(call: object, setting: str) -> Refused:
    with pytest.raises(Refused) as info:
        call()  # type: ignore[operator]
    err = info.value
    assert err.status == 403 and err.code == "refused"
    assert setting in err.details["setting"] and err.hint
    return err


def test_paths_inside_the_workspace_are_allowed(workspace: Path) -> None:
    policy = policy_for(workspace)
    assert policy.inside(str(workspace / "project" / "main.py"), what="script") == str(
        (workspace / "project" / "main.py").resolve()
    )
    assert policy.mount_source(str(workspace / "project"), what="cwd", writable=False) == str(
        (workspace / "project").resolve()
    )


def test_host_paths_outside_the_roots_are_refused(workspace: Path) -> None:
    policy = policy_for(workspace)
    err = refused(lambda: policy.mount_source("/etc", what="mounts", writable=False), "DEBUGRELAY_ALLOWED_ROOTS")
    assert "outside the folders" in err.message and err.details["path"] == "/etc"
    refused(lambda: policy.inside("/etc", what="cwd"), "DEBUGRELAY_WORKSPACE")
    refused(lambda: policy.inside("/etc/passwd", what="script"), "DEBUGRELAY_WORKSPACE")


def test_a_symlink_inside_the_workspace_to_the_outside_is_refused(workspace: Path) -> None:
    (workspace / "project" / "escape").symlink_to(workspace.parent / "outside")
    policy = policy_for(workspace)
    path = str(workspace / "project" / "escape")
    err = refused(lambda: policy.mount_source(path, what="mounts", writable=False), "DEBUGRELAY_ALLOWED_ROOTS")
    assert err.details["resolved"] == str((workspace.parent / "outside").resolve())
    assert "resolves to" in err.message
    refused(lambda: policy.inside(path + "/secret.txt", what="script"), "DEBUGRELAY_WORKSPACE")


def test_dot_dot_tricks_are_folded_before_the_check(workspace: Path) -> None:
    policy = policy_for(workspace)
    sneaky = f"{workspace}/project/../../outside"
    err = refused(lambda: policy.mount_source(sneaky, what="cwd", writable=False), "DEBUGRELAY_ALLOWED_ROOTS")
    assert err.details["resolved"] == str((workspace.parent / "outside").resolve())
    refused(lambda: policy.inside(f"{workspace}/../../../../etc/shadow", what="script"), "DEBUGRELAY_WORKSPACE")
    # a workspace whose name is a prefix of another folder's does not let that folder in
    (workspace.parent / "workspace-evil").mkdir()
    refused(lambda: policy.inside(f"{workspace}-evil", what="cwd"), "DEBUGRELAY_WORKSPACE")


def test_relative_paths_are_refused(workspace: Path) -> None:
    with pytest.raises(InvalidRequest):
        policy_for(workspace).inside("project/main.py", what="mounts")


def test_extra_roots_from_the_settings(workspace: Path) -> None:
    outside = workspace.parent / "outside"
    policy = policy_for(workspace, allowed_roots=f"{outside},/nonexistent")
    assert policy.mount_source(str(outside), what="mounts", writable=False) == str(outside.resolve())


def test_the_docker_socket_and_system_folders_are_never_mountable(workspace: Path, tmp_path: Path) -> None:
    policy = policy_for(workspace, allowed_roots="/")
    for path in ("/var/run/docker.sock", "/run", "/var/run", "/proc", "/sys/kernel", "/dev", "/"):
        err = refused(lambda p=path: policy.mount_source(p, what="mounts", writable=False), "none")
        assert "No setting allows this" in err.hint, path
    # any socket, wherever it is: it would hand the target the service behind it
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(workspace / "service.sock"))
        err = refused(
            lambda: policy_for(workspace).mount_source(str(workspace / "service.sock"), what="mounts", writable=False),
            "none",
        )
        assert "socket" in err.message


def test_writable_mounts_only_under_the_writable_roots(workspace: Path) -> None:
    project = str(workspace / "project")
    err = refused(lambda: policy_for(workspace).mount_source(project, what="cwd", writable=True), "WRITABLE_ROOTS")
    assert err.details["writable_roots"] == []
    allowed = policy_for(workspace, writable_roots=project)
    assert allowed.mount_source(project, what="cwd", writable=True) == str(Path(project).resolve())
    refused(lambda: allowed.mount_source(str(workspace), what="cwd", writable=True), "DEBUGRELAY_WRITABLE_ROOTS")


def test_missing_mount_sources_are_a_bad_request(workspace: Path) -> None:
    with pytest.raises(InvalidRequest, match="does not exist"):
        policy_for(workspace).mount_source(str(workspace / "nope"), what="mounts", writable=False)


def test_images_come_from_the_allowlist(workspace: Path) -> None:
    policy = policy_for(workspace)
    for image in ("debugrelay/target:latest", "debugrelay/target", "debugrelay/base:bookworm"):
        assert policy.image(image) == image
    err = refused(lambda: policy.image("python:3.12"), "DEBUGRELAY_ALLOWED_IMAGES")
    assert "debugrelay/target:*" in err.details["allowed"]
    refused(lambda: policy.image("evil/debugrelay/target:latest"), "DEBUGRELAY_ALLOWED_IMAGES")
    extended = policy_for(workspace, allowed_images="myorg/*:*, python:3.12-slim")
    assert extended.image("myorg/app:1.2") == "myorg/app:1.2"
    assert extended.image("python:3.12-slim") == "python:3.12-slim"
    refused(lambda: extended.image("python:3.12"), "DEBUGRELAY_ALLOWED_IMAGES")


def test_images_a_kubelet_pulls_are_the_configured_one_and_the_operator_s_only(workspace: Path) -> None:
    configured = "registry.example.com/debugrelay/target:0.1.0"
    settings = Settings(workspace=str(workspace), kubernetes_image=configured)
    pulled = LaunchPolicy.from_settings(settings, pulled=True)
    assert pulled.images == (configured,)
    assert pulled.image(configured) == configured
    for public in ("debugrelay/target:latest", "debugrelay/target:anything", "debugrelay/base:bookworm"):
        refused(lambda image=public: pulled.image(image), "DEBUGRELAY_ALLOWED_IMAGES")
    settings.allowed_images = "registry.example.com/team/*:*"
    assert LaunchPolicy.from_settings(settings, pulled=True).image("registry.example.com/team/app:2") is not None


def test_targets_run_as_a_non_root_user_unless_the_operator_allows_root(workspace: Path) -> None:
    assert policy_for(workspace).user(root=False) == TARGET_USER != "0:0"
    err = refused(lambda: policy_for(workspace).user(root=True), "DEBUGRELAY_ALLOW_ROOT_TARGETS")
    assert "non-root" in err.message
    assert policy_for(workspace, allow_root_targets=True).user(root=True) == "0:0"
    assert policy_for(workspace, allow_root_targets=True).user(root=False) == TARGET_USER


def test_a_launch_may_lower_the_limits_never_raise_them(workspace: Path) -> None:
    policy = policy_for(workspace, docker_memory="512m", docker_cpus=1.0, docker_pids=256)
    default = policy.limits(None)
    assert (default.memory, default.nano_cpus, default.pids) == ("512m", 1_000_000_000, 256)
    lower = policy.limits(ResourceLimits(memory="256m", cpus=0.5, pids=64))
    assert (lower.memory, lower.nano_cpus, lower.pids) == ("256m", 500_000_000, 64)
    err = refused(lambda: policy.limits(ResourceLimits(memory="64g")), "DEBUGRELAY_DOCKER_MEMORY")
    assert err.details == {
        "limit": "memory",
        "requested": "64g",
        "ceiling": "512m",
        "setting": "DEBUGRELAY_DOCKER_MEMORY",
    }
    refused(lambda: policy.limits(ResourceLimits(cpus=2)), "DEBUGRELAY_DOCKER_CPUS")
    refused(lambda: policy.limits(ResourceLimits(pids=1_000_000)), "DEBUGRELAY_DOCKER_PIDS")
    with pytest.raises(InvalidRequest):
        policy.limits(ResourceLimits(memory="lots"))
    with pytest.raises(InvalidRequest):
        policy.limits(ResourceLimits(pids=0))


def test_memory_notation() -> None:
    assert memory_bytes("512m") == 512 * 1024**2
    assert memory_bytes("1g") == memory_bytes("1024m") == memory_bytes("1GB")
    assert memory_bytes("1048576") == 1024**2


def test_sources_are_served_from_the_roots_and_pythons_library_only(workspace: Path) -> None:
    policy = policy_for(workspace)
    assert policy.source(str(workspace / "project" / "main.py"))
    assert policy.source(os.__file__)
    refused(lambda: policy.source("/proc/self/environ"), "DEBUGRELAY_WORKSPACE")
    refused(lambda: policy.source(str(workspace.parent / "outside" / "secret.txt")), "DEBUGRELAY_WORKSPACE")


def test_defaults_workspace_is_the_working_directory_and_launchers_are_a_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("WORKSPACE", "LAUNCHERS", "DEFAULT_LAUNCHER"):
        monkeypatch.delenv(f"DEBUGRELAY_{name}", raising=False)
    settings = load_settings()
    assert settings.workspace == str(tmp_path)
    assert settings.launchers == "local,docker" and settings.default_launcher == "local"
    monkeypatch.setenv("DEBUGRELAY_LAUNCHERS", "docker")
    docker_only = load_settings()
    assert docker_only.launchers == "docker" and docker_only.default_launcher == "docker"


def test_the_machines_init_is_never_attached_to() -> None:
    """pid 1 is above every process, the relay's too: refused before anything reaches it, whoever owns it."""
    for settings in (load_settings(), load_settings(attach_other_users=True)):
        with pytest.raises(Refused, match="runs under"):
            check_attach_pid(settings, 1)
