#!/usr/bin/env python3
"""Print the Debian mirrors this machine's apt already uses, for debootstrap.

    python3 docker/apt_mirror.py [APT_ETC]      (default /etc/apt)

prints two lines, ``DEBIAN_MIRROR=<uri>`` and ``DEBIAN_SECURITY_MIRROR=<uri>``, read from
``sources.list``, ``sources.list.d/*.list`` (one-line format) and ``sources.list.d/*.sources``
(deb822). An entry is Debian's when one of its suites is a Debian release name (``trixie``,
``bookworm-updates``, ``stable``...); the security mirror is the one serving a ``*-security``
suite, else the main mirror's URI with ``-security`` appended (Debian's own layout). Exits 1 with
a hint when there is none: no host name is guessed. The build script runs it only when the
environment does not set ``DEBIAN_MIRROR`` itself.
"""

from __future__ import annotations

import sys
from pathlib import Path

RELEASES = {
    "buster", "bullseye", "bookworm", "trixie", "forky", "duke", "sid",
    "oldoldstable", "oldstable", "stable", "testing", "unstable",
}  # fmt: skip
SUFFIXES = ("-security", "-updates", "-backports", "-proposed-updates", "/updates")
SCHEMES = ("http://", "https://", "ftp://", "file:/")


def _release(suite: str) -> tuple[str, bool] | None:
    """(release, is_security) for a Debian suite name, None for any other archive's."""
    for suffix in SUFFIXES:
        if suite.endswith(suffix):
            base = suite[: -len(suffix)]
            return (base, suffix in ("-security", "/updates")) if base in RELEASES else None
    return (suite, False) if suite in RELEASES else None


def _one_line(text: str) -> list[tuple[str, list[str]]]:
    entries = []
    for raw in text.splitlines():
        words = raw.split("#", 1)[0].split()
        if not words or words[0] != "deb":
            continue
        words = words[1:]
        if words and words[0].startswith("["):  # [arch=amd64 signed-by=...]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2:
            entries.append((words[0], [words[1]]))
    return entries


def _deb822(text: str) -> list[tuple[str, list[str]]]:
    entries = []
    for stanza in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0].isspace() and key:  # a continuation line
                fields[key] += " " + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                fields[key] = value.strip()
        if "deb" not in fields.get("types", "").split():
            continue
        if fields.get("enabled", "yes").lower() in ("no", "false", "0"):
            continue
        suites = fields.get("suites", "").split()
        entries.extend((uri, suites) for uri in fields.get("uris", "").split())
    return entries


def mirrors(apt_etc: Path) -> tuple[str, str] | None:
    """(main, security) mirror URIs from the apt sources under ``apt_etc``, None if none."""
    files = [apt_etc / "sources.list"]
    parts = apt_etc / "sources.list.d"
    if parts.is_dir():
        files += sorted(p for p in parts.iterdir() if p.suffix in (".list", ".sources"))
    main = security = None
    for path in files:
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for uri, suites in _deb822(text) if path.suffix == ".sources" else _one_line(text):
            if not uri.startswith(SCHEMES):
                continue
            for suite in suites:
                found = _release(suite)
                if found is None:
                    continue
                if found[1]:
                    security = security or uri.rstrip("/")
                else:
                    main = main or uri.rstrip("/")
    if main is None:
        return None
    return main, security or main + "-security"


def main(argv: list[str]) -> int:
    apt_etc = Path(argv[1] if len(argv) > 1 else "/etc/apt")
    found = mirrors(apt_etc)
    if found is None:
        print(
            f"no Debian mirror in the apt sources under {apt_etc} (sources.list, sources.list.d/); "
            "set DEBIAN_MIRROR=<uri of a Debian mirror> (and DEBIAN_SECURITY_MIRROR)",
            file=sys.stderr,
        )
        return 1
    print(f"DEBIAN_MIRROR={found[0]}\nDEBIAN_SECURITY_MIRROR={found[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
