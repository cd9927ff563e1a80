"""deploy/ rendered the way a platform engineer renders it: `kubectl kustomize`, with the kustomize that
kubectl carries. The kustomizations use components, transformer configurations and a Namespace named by
the overlay's `namespace:`, which need kustomize 5.0 (kubectl 1.27) or newer; Debian's kubectl 1.20
carries kustomize 2.0, which cannot render them."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
MIN_KUSTOMIZE = (5, 0)
MIN_KUBECTL = "1.27"  # the first kubectl carrying kustomize 5.0
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def kustomize_version(client: dict[str, Any]) -> tuple[int, ...] | None:
    """The kustomize inside kubectl from `kubectl version --client -o json` (kubectl before 1.24 does not
    say: those carry kustomize 2.0 to 4.5, all older than what deploy/ needs)."""
    found = re.match(r"v?(\d+)\.(\d+)", str(client.get("kustomizeVersion", "")))
    return (int(found[1]), int(found[2])) if found else None


def kubectl_problem() -> str | None:
    """Why deploy/ cannot be rendered here, or None when kubectl's kustomize can."""
    if shutil.which("kubectl") is None:
        return f"kubectl is not installed (deploy/ needs kubectl {MIN_KUBECTL}+, kustomize 5.0+)"
    out = subprocess.run(["kubectl", "version", "--client", "-o", "json"], capture_output=True, text=True, check=False)
    try:
        client = json.loads(out.stdout)
    except json.JSONDecodeError:
        client = {}
    found = kustomize_version(client)
    if found is None or found < MIN_KUSTOMIZE:
        kubectl = client.get("clientVersion", {}).get("gitVersion", "of an unknown version")
        kustomize = (
            f"kustomize {client['kustomizeVersion']}"
            if client.get("kustomizeVersion")
            else "a kustomize older than 5.0 (kubectl before 1.24 does not report which)"
        )
        return (
            f"kubectl {kubectl} carries {kustomize}: deploy/'s overlays need kustomize 5.0+ "
            f"(kubectl {MIN_KUBECTL}+; a release from https://kubernetes.io/releases/download/)"
        )
    return None


def build(path: Path) -> list[dict[str, Any]]:
    """The objects `kubectl kustomize path` renders."""
    out = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def build_text(path: Path) -> str:
    out = subprocess.run(["kubectl", "kustomize", str(path)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def overlay(tmp: Path, text: str) -> Path:
    """A kustomization of one's own in ``tmp`` (``text``; ``{deploy}`` is deploy/'s path), as a team
    writes one over deploy/."""
    tmp.mkdir(parents=True, exist_ok=True)
    # kustomize takes bases by relative path only
    (tmp / "kustomization.yaml").write_text(text.replace("{deploy}", os.path.relpath(DEPLOY, tmp)))
    return tmp
