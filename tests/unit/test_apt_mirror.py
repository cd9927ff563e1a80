"""The image build takes its Debian mirror from the machine's own apt sources (docker/apt_mirror.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "docker" / "apt_mirror.py"


def mirrors(apt_etc: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(apt_etc)], capture_output=True, text=True, check=False)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_deb822_sources_give_the_main_and_security_mirrors(tmp_path: Path) -> None:
    write(
        tmp_path / "sources.list.d" / "debian.sources",
        "Types: deb\n# a comment\nURIs: http://mirror.example.org/debian/\nSuites: trixie trixie-updates\n"
        "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb\nURIs: http://security.example.org/debian-security\nSuites: trixie-security\nComponents: main\n",
    )
    # another vendor's archive and a disabled file are not Debian mirrors
    write(
        tmp_path / "sources.list.d" / "vendor.sources",
        "Types: deb\nURIs: https://apt.vendor.example\nSuites: nodistro\n",
    )
    write(tmp_path / "sources.list.d" / "old.list.disabled", "deb http://wrong.example/debian bookworm main\n")
    out = mirrors(tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "DEBIAN_MIRROR=http://mirror.example.org/debian",
        "DEBIAN_SECURITY_MIRROR=http://security.example.org/debian-security",
    ]


def test_one_line_sources_list_with_options(tmp_path: Path) -> None:
    write(
        tmp_path / "sources.list",
        "# deb http://commented.example/debian bookworm main\n"
        "deb https://packages.vendor.example/apt cloud-sdk-bookworm main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian.gpg] http://local.example/debian bookworm main\n"
        "deb-src http://src.example/debian bookworm main\n",
    )
    out = mirrors(tmp_path)
    assert out.returncode == 0, out.stderr
    # no security suite listed: Debian's layout, the main mirror with -security
    assert out.stdout.splitlines() == [
        "DEBIAN_MIRROR=http://local.example/debian",
        "DEBIAN_SECURITY_MIRROR=http://local.example/debian-security",
    ]


def test_disabled_deb822_stanza_is_skipped(tmp_path: Path) -> None:
    write(
        tmp_path / "sources.list.d" / "debian.sources",
        "Types: deb\nURIs: http://off.example/debian\nSuites: stable\nEnabled: no\n\n"
        "Types: deb\nURIs: http://on.example/debian\nSuites: stable\n",
    )
    assert mirrors(tmp_path).stdout.splitlines()[0] == "DEBIAN_MIRROR=http://on.example/debian"


def test_no_debian_source_fails_with_a_hint(tmp_path: Path) -> None:
    write(tmp_path / "sources.list.d" / "vendor.list", "deb https://apt.vendor.example stable-tools main\n")
    out = mirrors(tmp_path)
    assert out.returncode == 1
    assert out.stdout == ""
    assert "set DEBIAN_MIRROR=" in out.stderr


def test_the_build_script_names_no_mirror_host() -> None:
    root = SCRIPT.parent.parent
    for path in [root / "docker" / "build-images.sh", root / "docker" / "README.md", root / "README.md"]:
        assert "deb.debian.org" not in path.read_text(), path
