"""deploy/'s rendered manifests through checkov (a maintained static checker of Kubernetes manifests):
every finding is fixed or skipped here with its reason, and the README lists the skipped ones.

checkov pins many dependencies of its own, so it lives in a virtualenv of its own, `.venv/tools/checkov`,
which `make test` (and `make checkov`) creates; it is never one of the project's dependencies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.kustomize import DEPLOY, ROOT, build_text, kubectl_problem, overlay

# Each skipped check and why it does not apply; README.md ("On Kubernetes") lists the same.
SKIPPED = {
    "CKV_K8S_15": "imagePullPolicy Always: the tags are versions that never move, so IfNotPresent pulls each "
    "once per node, and lets a local cluster run images loaded into its nodes",
    "CKV_K8S_35": "secrets as files: the relay reads its token and Redis URL from the environment only, and "
    "redis-server's password reaches it from its environment, on its standard input",
    "CKV_K8S_38": "service account token mounted: the relays call the Kubernetes API (their target pods); "
    "Redis and the targets mount none",
    "CKV_K8S_43": "image digests: the images are built by whoever deploys them; `images:` with `digest:` in "
    "one's overlay pins them",
}
CHECKOV_VENV = Path(sys.prefix) / "tools" / "checkov"  # `make checkov`, next to the project's own venv


def checkov() -> str:
    found = CHECKOV_VENV / "bin" / "checkov"
    if found.exists():
        return str(found)
    on_path = shutil.which("checkov")
    if on_path is None:
        pytest.skip(
            f"checkov is not installed: `make checkov` puts it in {CHECKOV_VENV} "
            f"(python3 -m venv {CHECKOV_VENV} && {CHECKOV_VENV}/bin/pip install 'checkov>=3.2,<4')"
        )
    return on_path


def test_checkov_finds_nothing_unexplained_in_any_overlay(tmp_path: Path) -> None:
    binary = checkov()
    if (why := kubectl_problem()) is not None:
        pytest.skip(why)
    rendered = tmp_path / "rendered"
    rendered.mkdir()
    everything = overlay(
        tmp_path / "everything",
        "namespace: debugrelay\nresources: [{deploy}/overlays/team]\ncomponents:\n"
        + "".join(f"  - {{deploy}}/components/{c.name}\n" for c in sorted((DEPLOY / "components").iterdir())),
    )
    sources = {
        "dev": DEPLOY / "overlays" / "dev",
        "team": DEPLOY / "overlays" / "team",
        "namespace": DEPLOY / "namespace",
        "team-with-every-component": everything,
    }
    for name, source in sources.items():
        (rendered / f"{name}.yaml").write_text(build_text(source))
    out = subprocess.run(
        [
            binary,
            "--directory",
            str(rendered),
            "--framework",
            "kubernetes",
            "--output",
            "json",
            "--quiet",
            "--skip-download",
            "--skip-check",
            ",".join(SKIPPED),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert out.returncode in (0, 1), out.stderr  # 1: findings, listed below
    reports = json.loads(out.stdout) if out.stdout.strip() else {}
    reports = reports if isinstance(reports, list) else [reports]
    failed = [
        f"{c['file_path']}: {c['check_id']} {c['check_name']} ({c['resource']})"
        for report in reports
        for c in report.get("results", {}).get("failed_checks", [])
    ]
    assert not failed, "\n".join(failed)
    summary = [report.get("summary", {}) for report in reports]
    assert sum(s.get("passed", 0) for s in summary) > 100  # checkov did read the rendered files
    assert not sum(s.get("parsing_errors", 0) for s in summary)


def test_every_skipped_check_is_justified_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    for check in SKIPPED:
        assert f"`{check}`" in readme, check
