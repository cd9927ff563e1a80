"""What a breakpoint costs inside the debugged program, on code no one here wrote: pyperformance's richards
and nbody (a bench dependency, from PyPI) and the test suite of more-itertools (its sdist, from PyPI, run
with pytest). Each runs plain, plain with the relay's start-up hooks, under debugpy alone (a raw DAP client
sends the same breakpoint) and under the relay: with no breakpoint, one in the hot file never reached, a
false condition on the hot line, a hit count never reached there, both, a logpoint printing every
1,000th run, and a capture point whose condition never holds. Local targets on this Python and container
targets on the target image's (3.13). The programs time themselves (pytest its own run), so start-up and
attach are not counted.

``make bench-conditions`` (or ``.venv/bin/python -m bench.conditions [--runs N] [--suite-runs N] [--only
richards,suite] [--where local,container] [--kinds condition,logpoint]``): prints seconds (median of N
runs; the suite once by default, a debugged run of it takes minutes on 3.11) and the ratio relay /
debugpy alone per case; every process and container it starts is ended. About 40 minutes in all."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._dap import Dap
from ._harness import ROOT, Cleanup, Relay, docker_status, free_port, kill_tree, until

SUITE = "more-itertools==10.8.0"  # its sdist: the library and its tests, as released
_TIMED = re.compile(r"workload_s ([0-9.]+)|passed[^\n]* in ([0-9.]+)s")
NEVER = "100000000"  # a hit count the run never reaches: every run of the line is counted
LOG_EVERY = "% 1000"  # the logpoint's hit condition: one message per 1,000 runs of the hot line


@dataclass
class Workload:
    """A program, where its time goes (the hot line and a condition never true there) and a line of the
    same file it never runs."""

    name: str
    file: str  # the hot file
    line: int
    condition: str
    unreached: int
    argv: list[str]  # after the interpreter
    cwd: str
    module: str | None = None  # the relay's launch: a module instead of argv[0] as the script
    kinds: tuple[str, ...] = ()
    pythonpath: list[str] = field(default_factory=list)  # in a container: what the image lacks (pytest)


def _line(path: str, text: str) -> int:
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        if line.strip().startswith(text):
            return number
    raise LookupError(f"no line {text!r} in {path}")


def _benchmarks() -> Path:
    try:
        import pyperformance
    except ImportError as exc:
        raise SystemExit("pyperformance is not installed: make bench-conditions installs it") from exc
    return Path(pyperformance.__file__).parent / "data-files" / "benchmarks"


KINDS = ("none", "unreached", "condition", "hit_count", "condition+hit_count", "logpoint", "capture")


def workloads(workdir: Path, chosen: set[str]) -> list[Workload]:
    """The workloads, copied into ``workdir`` (the relay's workspace, mounted into container targets)."""
    found: list[Workload] = []
    drive = workdir / "cond_drive.py"
    shutil.copy(ROOT / "bench" / "cond_drive.py", drive)
    places = {
        "richards": ("if t.isTaskHoldingOrWaiting():", "t is None", "1"),
        "nbody": ("dx = x1 - x2", "m1 > 1e9", "15000"),
    }
    for name, (hot, condition, loops) in places.items():
        if name not in chosen:
            continue
        file = workdir / f"bm_{name}.py"
        shutil.copy(_benchmarks() / f"bm_{name}" / "run_benchmark.py", file)
        found.append(
            Workload(
                name,
                str(file),
                _line(str(file), hot),
                condition,
                _line(str(file), "runner = pyperf.Runner("),  # under `__main__`: never run by the driver
                [str(drive), str(file), name, loops],
                str(workdir),
                kinds=KINDS,
            )
        )
    if "suite" in chosen:
        found.append(_suite(workdir))
    return found


def _suite(workdir: Path) -> Workload:
    """more-itertools' own tests, a condition in one of its functions that the suite calls often
    (``dotproduct``, under other recipes)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", SUITE, "-d", str(workdir)],
        check=True,
    )
    archive = next(workdir.glob("more_itertools-*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    root = next(p for p in workdir.glob("more_itertools-*") if p.is_dir())
    # pytest for a container target's Python (the image has none): pure-Python wheels
    site = workdir / "site"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "-q", "--target", str(site), "--python-version", "3.13"),
            *("--only-binary", ":all:", "pytest>=8,<9"),
        ],
        check=True,
    )
    hot = str(root / "more_itertools" / "recipes.py")
    args = ["-q", "-p", "no:cacheprovider", "tests"]
    return Workload(
        "suite",
        hot,
        _line(hot, "return sum(map(mul, vec1, vec2))"),  # dotproduct: about a million runs in the suite
        "vec1 is None",
        _line(hot, "raise ValueError('prime or under 5')"),  # never run (`pragma: no cover`)
        ["-m", "pytest", *args],
        str(root),
        module="pytest",
        kinds=("none", "unreached", "condition"),
        pythonpath=[str(site)],
    )


def breakpoint_of(kind: str, work: Workload) -> dict[str, Any] | None:
    """The breakpoint a case sets (None: none at all), in DAP's words."""
    line = {"line": work.line}
    cases: dict[str, dict[str, Any] | None] = {
        "none": None,
        "unreached": {"line": work.unreached},
        "condition": {**line, "condition": work.condition},
        "hit_count": {**line, "hitCondition": NEVER},
        "condition+hit_count": {**line, "condition": work.condition, "hitCondition": NEVER},
        "logpoint": {**line, "hitCondition": LOG_EVERY, "logMessage": "run {__name__}"},
        # a capture point that records a row when its condition holds (never here): debugpy's own is a logpoint
        "capture": {**line, "condition": work.condition, "logMessage": "{__name__}"},
    }
    return cases[kind]


def seconds(text: str) -> float:
    """The time the program took by its own clock (the driver's line, or pytest's summary)."""
    found = _TIMED.findall(text)
    if not found:
        raise RuntimeError(f"the workload printed no timing: {text[-800:]!r}")
    timed, pytest_s = found[-1]
    return float(timed or pytest_s)


# --- one run each way ------------------------------------------------------------------------------


def plain(work: Workload, *, hooks: bool, boot: Path) -> float:
    """On this Python, no debugger; with ``hooks`` the relay's start-up folder on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if hooks:
        env["PYTHONPATH"] = str(boot)
    done = subprocess.run(
        [sys.executable, *work.argv], cwd=work.cwd, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    return seconds(done.stdout)


def plain_container(work: Workload, *, hooks: bool, boot: Path, workdir: Path) -> float:
    """In the target image, no debugger; with ``hooks`` the relay's start-up folder on the path."""
    import docker
    from debugrelay.config import Settings

    client = docker.from_env()
    try:
        path = [*([str(boot)] if hooks else []), *work.pythonpath]
        out = client.containers.run(
            Settings().docker_image,
            ["python", "-Xfrozen_modules=off", *work.argv],
            volumes={str(workdir): {"bind": str(workdir), "mode": "ro"}},
            working_dir=work.cwd,
            environment={"PYTHONPATH": os.pathsep.join(path), "PYTHONDONTWRITEBYTECODE": "1"},
            user="10001:10001",
            network_disabled=True,
            remove=True,
        )
        return seconds(out.decode())
    finally:
        client.close()


def _drive(dap: Dap, work: Workload, kind: str, output: Callable[[], str]) -> float:
    """Attach as the relay does, set the case's breakpoint, let the program run, read its own timing
    (draining debugpy's events meanwhile: a logpoint's messages must not fill the socket)."""
    from debugrelay.dap import ATTACH_ARGS

    attach = dap.send("attach", {**ATTACH_ARGS, "justMyCode": False, "subProcess": False, "pathMappings": []})
    dap.event("initialized")
    bp = breakpoint_of(kind, work)
    dap.request("setBreakpoints", {"source": {"path": work.file}, "breakpoints": [bp] if bp else []})
    # as the relay's default: a test run pauses at a failing test (debugpy's "uncaught"), nothing else does
    dap.request("setExceptionBreakpoints", {"filters": ["uncaught"] if work.module == "pytest" else []})
    dap.request("configurationDone")
    dap.response(attach)

    def timed() -> float | None:
        dap.drain()
        try:
            return seconds(output())
        except RuntimeError:
            return None

    result: float = until(timed, "the workload's timing", 1800, every=0.05)
    return result


def debugpy_alone(work: Workload, kind: str, workdir: Path, cleanup: Cleanup) -> float:
    """Stock debugpy on this Python, its breakpoint sent by a raw DAP client: the floor."""
    port = free_port()
    output = workdir / f"debugpy-{port}.out"
    out = output.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{port}", "--wait-for-client", *work.argv],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=work.cwd,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    done = cleanup.add(f"debugpy {port}", lambda: kill_tree(proc.pid))
    dap = Dap.ready("127.0.0.1", port)
    try:
        return _drive(dap, work, kind, lambda: output.read_text(errors="replace"))
    finally:
        dap.close()
        done()
        out.close()


def debugpy_alone_container(work: Workload, kind: str, workdir: Path, cleanup: Cleanup) -> float:
    """Stock debugpy in the target image (the image's own, without the relay's start-up folder),
    started in a container as the relay's Docker launcher starts one, driven by a raw DAP client."""
    from debugrelay.config import load_settings
    from debugrelay.launchers.docker import DockerLauncher
    from debugrelay.models import LaunchRequest

    launcher = DockerLauncher(load_settings(state_dir=str(workdir / "state-raw"), workspace=str(workdir)))
    spec = LaunchRequest(
        script=None if work.module else work.argv[0],
        module=work.module,
        args=work.argv[2:] if work.module else work.argv[1:],
        cwd=work.cwd,
        launcher="docker",
        pool=False,
        pythonpath=work.pythonpath,
    )
    kwargs, mounts, with_debugpy = launcher._plan(spec, f"bench_floor_{os.getpid()}")
    kwargs["environment"] = {**kwargs["environment"], "PYTHONPATH": os.pathsep.join(work.pythonpath)}
    target: Any = launcher._run(kwargs, mounts, with_debugpy)
    container = target.container
    done = cleanup.add(f"container {container.short_id}", lambda: asyncio.run(target.terminate()))  # and its network
    dap = Dap.ready(target.host, target.port)
    try:
        return _drive(dap, work, kind, lambda: container.logs().decode(errors="replace"))
    finally:
        dap.close()
        done()


def under_relay(relay: Relay, work: Workload, kind: str, launcher: str) -> float:
    """The same case through the relay's API, as an agent sets it up."""
    http = relay.http
    sid = relay.call("POST", "/sessions", json={})["session_id"]
    try:
        bp = breakpoint_of(kind, work)
        if kind == "capture" and bp is not None:
            capture = {"file": work.file, "line": bp["line"], "expressions": ["__name__"], "condition": work.condition}
            relay.call("POST", f"/sessions/{sid}/captures", json=capture)
        elif bp is not None:
            body: dict[str, Any] = {"source": {"path": work.file}, "line": bp["line"]}
            named = (("condition", "condition"), ("hitCondition", "hit_condition"), ("logMessage", "log_message"))
            body.update({ours: bp[theirs] for theirs, ours in named if theirs in bp})
            relay.call("POST", f"/sessions/{sid}/breakpoints", json=body)
        launch: dict[str, Any] = {"cwd": work.cwd, "pool": False, "launcher": launcher}
        if work.module:
            launch |= {"module": work.module, "args": work.argv[2:]}
        else:
            launch |= {"script": work.argv[0], "args": work.argv[1:]}
        if launcher == "docker" and work.pythonpath:
            launch["pythonpath"] = work.pythonpath
        relay.call("POST", f"/sessions/{sid}/launch", json=launch)
        while (status := relay.call("POST", f"/sessions/{sid}/wait", json={"timeout": 90}))["status"] == "running":
            pass
        if status["status"] != "terminated":
            raise RuntimeError(f"the {kind} breakpoint stopped the run: {status}")
        page = http.get(f"/sessions/{sid}/output", params={"limit": 1000}).json()
        return seconds("".join(line["text"] for line in page["outputs"]))
    finally:
        http.delete(f"/sessions/{sid}")


def measure(
    place: str,
    work: Workload,
    *,
    kinds: list[str],
    runs: int,
    relay: Relay,
    workdir: Path,
    boot: Path,
    cleanup: Cleanup,
) -> list[list[str]]:
    """One workload's rows in one place: plain, with the hooks, then each breakpoint kind both ways."""

    def median(run: Callable[[], float]) -> float:
        return statistics.median(run() for _ in range(runs))

    in_box = place == "container"
    if in_box:
        base = median(lambda: plain_container(work, hooks=False, boot=boot, workdir=workdir))
        hooked = median(lambda: plain_container(work, hooks=True, boot=boot, workdir=workdir))
    else:
        base = median(lambda: plain(work, hooks=False, boot=boot))
        hooked = median(lambda: plain(work, hooks=True, boot=boot))
    floor = debugpy_alone_container if in_box else debugpy_alone
    rows: list[list[str]] = []
    for kind in (k for k in work.kinds if k in kinds):
        alone = median(lambda: floor(work, kind, workdir, cleanup))  # noqa: B023 (called at once)
        relayed = median(lambda: under_relay(relay, work, kind, "docker" if in_box else "local"))  # noqa: B023
        row = [place, work.name, kind, f"{base:.3f}", f"{hooked / base:.2f}", f"{alone:.3f}", f"{relayed:.3f}"]
        rows.append([*row, f"{alone / base:.2f}", f"{relayed / alone:.2f}"])
        print("  ".join(rows[-1]), flush=True)
    return rows


# --- the table -------------------------------------------------------------------------------------


def main(argv_: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--suite-runs", type=int, default=1, help="runs of the test suite (minutes each, debugged)")
    parser.add_argument("--only", default="richards,nbody,suite", help="comma-separated workloads")
    parser.add_argument("--where", default="local,container", help="local, container or both")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated breakpoint kinds")
    args = parser.parse_args(argv_)
    where = args.where.split(",")
    if "container" in where:
        usable, why = docker_status()
        if not usable:
            print(f"container targets skipped: {why}")
            where.remove("container")
    cleanup = Cleanup()
    rows: list[list[str]] = []
    with cleanup.installed(), tempfile.TemporaryDirectory(prefix="bench-conditions-") as tmp:
        workdir = Path(tmp)
        os.chmod(workdir, 0o755)  # a container target runs as a user of its own: it must read the copies
        from debugrelay.launchers.boot import prepare_boot_dir

        boot = prepare_boot_dir(workdir / "boot")
        chosen = workloads(workdir, set(args.only.split(",")))
        for path in workdir.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        launchers = "local,docker" if "container" in where else "local"
        env = {"DEBUGRELAY_WORKSPACE": str(workdir), "DEBUGRELAY_LAUNCHERS": launchers}
        relay = Relay(workdir, cleanup, "conditions", env=env)
        for place in where:
            for work in chosen:
                rows += measure(
                    place,
                    work,
                    kinds=args.kinds.split(","),
                    runs=args.suite_runs if work.name == "suite" else args.runs,
                    relay=relay,
                    workdir=workdir,
                    boot=boot,
                    cleanup=cleanup,
                )
        relay.stop()
    head = ["where", "workload", "breakpoint", "plain s", "hooks/plain", "debugpy s", "relay s"]
    head += ["debugpy/plain", "relay/debugpy"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    print(
        f"\nlocal: Python {sys.version_info[0]}.{sys.version_info[1]}; container: the target image; "
        f"median of {args.runs} runs ({time.strftime('%Y-%m-%d %H:%M')})"
    )
    for row in [head, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
