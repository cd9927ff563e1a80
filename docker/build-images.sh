#!/usr/bin/env bash
# Build debugrelay's container images without a container registry.
#
#   docker/build-images.sh [base|target|relay|redis|example|all]     (default: all)
#
#   base     debugrelay/base:bookworm     Debian bookworm minbase rootfs (debootstrap) + `docker import`
#            debugrelay/base:trixie       the same from Debian trixie (Python 3.13), for the target
#   target   debugrelay/target:latest     python3 + debugpy in /opt/venv, user debuggee (uid 10001)
#   relay    debugrelay/relay:latest      the debugrelay project in /opt/venv, user relay (uid 10000)
#   redis    debugrelay/redis:latest      redis-server, AOF on, data in the /data volume
#   example  debugrelay/example-app:latest  a toy app under `debugpy --listen 0.0.0.0:5678`
#
# Each image is also tagged with the package's version (pyproject.toml), e.g. debugrelay/relay:0.1.0: the
# tag deploy/ names, as a cluster pulls it (compose and the tests run `latest`).
#
# Environment:
#   BASE_IMAGE=python:3.11-slim   build relay/redis FROM this image instead (needs a registry); skips debootstrap
#   TARGET_SUITE=trixie           Debian release of the target (and example) image: trixie (Python 3.13,
#                                 debugpy on sys.monitoring: ~1x speed) or bookworm (3.11: several times slower)
#   TARGET_BASE_IMAGE=python:3.13-slim  build the target FROM this image instead; skips its debootstrap
#   FORCE=1                       rebuild the base, re-fetch the wheels, `docker build --no-cache`
#   VERBOSE=1                     stream debootstrap/pip/docker output instead of logging it to .build/logs
#   PYTHON=python3                host interpreter used for `pip download` / `pip wheel` (must be CPython 3.11)
#   DEBUGPY_SPEC=debugpy==1.8.22  debugpy for the target image (and pinned the same in the relay image)
#   DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR   apt mirrors for debootstrap; default: the ones this
#                                 machine's apt uses (docker/apt_mirror.py reads /etc/apt)
#
# Python wheels are fetched on the host (pip inside `docker build` cannot verify TLS here) and the
# Dockerfiles install them with `pip install --no-index`. Everything generated lives in docker/.build/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
BUILD="$HERE/.build"
LOGS="$BUILD/logs"
WHEELS="$BUILD/wheels"

# The relay and redis images stay on bookworm: the relay's wheels are built by the host's CPython 3.11.
BASE_TAG="debugrelay/base:bookworm"
BASE_IMAGE="${BASE_IMAGE:-$BASE_TAG}"
TARGET_SUITE="${TARGET_SUITE:-trixie}"
TARGET_BASE_TAG="debugrelay/base:$TARGET_SUITE"
TARGET_BASE_IMAGE="${TARGET_BASE_IMAGE:-$TARGET_BASE_TAG}"
FORCE="${FORCE:-0}"
VERBOSE="${VERBOSE:-0}"
PYTHON="${PYTHON:-python3}"
VERSION="$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$REPO/pyproject.toml" | head -n1)"
DEBUGPY_SPEC="${DEBUGPY_SPEC:-debugpy==1.8.22}"
BASE_PACKAGES="python3,python3-venv,python3-pip,ca-certificates,procps"
# each Debian release's python3 and glibc, for the wheels fetched on the host
declare -A SUITE_PYTHON=([bookworm]=3.11 [trixie]=3.13)
declare -A SUITE_GLIBC=([bookworm]=36 [trixie]=41)
[[ -n "${SUITE_PYTHON[$TARGET_SUITE]:-}" ]] || { echo "[images] ERROR: TARGET_SUITE must be bookworm or trixie" >&2; exit 1; }

# --------------------------------------------------------------------------------------------- helpers

T0=$EPOCHREALTIME
log() { printf '[images] %s\n' "$*"; }
die() { printf '[images] ERROR: %s\n' "$*" >&2; exit 1; }
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", b - a }'; }
have_image() { docker image inspect "$1" >/dev/null 2>&1; }
image_size() { docker image inspect --format '{{.Size}}' "$1" | awk '{ printf "%.0f MB", $1 / 1000 / 1000 }'; }

# run NAME CMD...: run a command, its output going to .build/logs/NAME.log (or the terminal with
# VERBOSE=1); on failure show the log's tail and stop.
run() {
    local name="$1"; shift
    mkdir -p "$LOGS"
    if [[ "$VERBOSE" == 1 ]]; then
        "$@" 2>&1 | tee "$LOGS/$name.log"
        return "${PIPESTATUS[0]}"
    fi
    if ! "$@" >"$LOGS/$name.log" 2>&1; then
        tail -n 40 "$LOGS/$name.log" >&2
        die "$name failed (full log: $LOGS/$name.log)"
    fi
}

sha() { sha256sum | cut -c1-16; }

# ------------------------------------------------------------------------------------------ base image

ROOTFS="$BUILD/rootfs"

# chroot into the rootfs inside a private mount namespace: /proc is mounted there and vanishes with
# the namespace, so nothing stays mounted under docker/.build even if the build is interrupted.
in_rootfs() {
    unshare --mount --propagation private -- sh -c '
        rootfs="$1"; shift
        mount -t proc proc "$rootfs/proc"
        exec chroot "$rootfs" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
            DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
    ' in_rootfs "$ROOTFS" "$@"
}

remove_rootfs() {
    [[ -e "$ROOTFS" ]] || return 0
    if findmnt -rn -o TARGET | grep -qF "$ROOTFS"; then
        die "something is mounted under $ROOTFS; unmount it first"
    fi
    rm -rf --one-file-system "$ROOTFS"
}

# The Debian mirrors: DEBIAN_MIRROR / DEBIAN_SECURITY_MIRROR, else the ones this machine's apt uses.
resolve_mirrors() {
    [[ -n "${DEBIAN_MIRROR:-}" && -n "${DEBIAN_SECURITY_MIRROR:-}" ]] && return 0
    local found
    if [[ -z "${DEBIAN_MIRROR:-}" ]]; then
        found="$("$PYTHON" "$HERE/apt_mirror.py")" || die "set DEBIAN_MIRROR (see above)"
        DEBIAN_MIRROR="$(sed -n 's/^DEBIAN_MIRROR=//p' <<<"$found")"
        DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-$(sed -n 's/^DEBIAN_SECURITY_MIRROR=//p' <<<"$found")}"
    else
        DEBIAN_SECURITY_MIRROR="${DEBIAN_MIRROR%/}-security"
    fi
}

# build_base SUITE TAG IMAGE [EXTRA_PACKAGES]: debootstrap SUITE and import it as TAG (unless IMAGE,
# the image to build from, is another one).
build_base() {
    local SUITE="$1" BASE_TAG="$2" BASE_IMAGE="$3" packages="$BASE_PACKAGES${4:+,$4}"
    if [[ "$BASE_IMAGE" != "$BASE_TAG" ]]; then
        log "base: $BASE_IMAGE instead of $BASE_TAG, skipping debootstrap (docker pulls it when needed)"
        return 0
    fi
    if have_image "$BASE_TAG" && [[ "$FORCE" != 1 ]]; then
        log "base: $BASE_TAG exists ($(image_size "$BASE_TAG")), skipping (FORCE=1 rebuilds)"
        return 0
    fi
    [[ $EUID -eq 0 ]] || die "debootstrap needs root"
    resolve_mirrors
    local t=$EPOCHREALTIME step

    if ! command -v debootstrap >/dev/null; then
        log "base: installing debootstrap on the host"
        run apt-debootstrap sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y --no-install-recommends debootstrap debian-archive-keyring'
    fi

    remove_rootfs
    mkdir -p "$BUILD/debootstrap-cache/$SUITE"
    step=$EPOCHREALTIME
    log "base: debootstrap --variant=minbase $SUITE ($packages) from $DEBIAN_MIRROR"
    run "debootstrap-$SUITE" debootstrap --variant=minbase --include="$packages" \
        --cache-dir="$BUILD/debootstrap-cache/$SUITE" "$SUITE" "$ROOTFS" "$DEBIAN_MIRROR"
    log "base: debootstrap done in $(elapsed "$step")"

    step=$EPOCHREALTIME
    log "base: configuring apt/dpkg, applying $SUITE-updates and $SUITE-security"
    # The same trimming the official debian:*-slim images do, so later `apt-get install`s stay small.
    cat >"$ROOTFS/etc/apt/sources.list" <<EOF
deb $DEBIAN_MIRROR $SUITE main
deb $DEBIAN_MIRROR $SUITE-updates main
deb $DEBIAN_SECURITY_MIRROR $SUITE-security main
EOF
    cat >"$ROOTFS/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOF
    cat >"$ROOTFS/etc/apt/apt.conf.d/docker-slim" <<'EOF'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Languages "none";
Acquire::GzipIndexes "true";
Acquire::CompressionTypes::Order:: "gz";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    # no service may start inside the chroot
    printf '#!/bin/sh\nexit 101\n' >"$ROOTFS/usr/sbin/policy-rc.d"
    chmod 755 "$ROOTFS/usr/sbin/policy-rc.d"
    run "apt-upgrade-$SUITE" in_rootfs sh -c 'apt-get update -qq && apt-get -y -o Dpkg::Options::=--force-confold dist-upgrade'
    log "base: upgrade done in $(elapsed "$step")"

    step=$EPOCHREALTIME
    log "base: cleaning the rootfs"
    in_rootfs sh -c 'apt-get clean; rm -rf /var/lib/apt/lists/*'
    rm -f "$ROOTFS/usr/sbin/policy-rc.d"
    (
        cd "$ROOTFS"
        find usr/share/doc -mindepth 1 -not -name copyright -not -type d -delete
        find usr/share/doc -mindepth 1 -type d -empty -delete
        rm -rf usr/share/man/* usr/share/info/* usr/share/groff/* usr/share/lintian/* usr/share/linda/* \
            usr/share/locale/* var/cache/debconf/*-old var/lib/dpkg/*-old var/cache/apt/* \
            var/cache/ldconfig/aux-cache tmp/* var/tmp/* root/.cache
        find var/log -type f -exec truncate -s 0 {} +
        : >etc/resolv.conf        # docker provides these at run time
        echo localhost >etc/hostname
        rm -f etc/machine-id var/lib/dbus/machine-id
    )

    log "base: importing into docker as $BASE_TAG"
    tar --numeric-owner --xattrs -C "$ROOTFS" --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' -c . |
        docker import \
            --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' \
            --change 'CMD ["bash"]' \
            --message "debootstrap --variant=minbase $SUITE + $packages" \
            - "$BASE_TAG" >/dev/null
    remove_rootfs
    log "base: cleanup + import done in $(elapsed "$step")"
    log "base: $BASE_TAG built in $(elapsed "$t"), $(image_size "$BASE_TAG")"
}

# the relay's and redis's base (bookworm, with redis-server) and the target's (TARGET_SUITE)
relay_base() { build_base bookworm "$BASE_TAG" "$BASE_IMAGE" redis-server; }
target_base() {
    if [[ "$TARGET_SUITE" == bookworm ]]; then relay_base; else build_base "$TARGET_SUITE" "$TARGET_BASE_TAG" "$TARGET_BASE_IMAGE"; fi
}
ensure_base() {
    if [[ "$BASE_IMAGE" == "$BASE_TAG" ]] && ! have_image "$BASE_TAG"; then relay_base; fi
}
ensure_target_base() {
    if [[ "$TARGET_BASE_IMAGE" == "$TARGET_BASE_TAG" ]] && ! have_image "$TARGET_BASE_TAG"; then target_base; fi
}

# --------------------------------------------------------------------------------------------- wheels

check_python() {
    "$PYTHON" - <<'EOF' || die "PYTHON=$PYTHON must be CPython 3.11 on linux x86_64 (the images' python)"
import platform, sys
ok = sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11) and platform.machine() == "x86_64"
sys.exit(0 if ok else 1)
EOF
}

# pip does not expand `--platform manylinux_2_36_x86_64` to older glibc tags by itself: list them all
# (bookworm has glibc 2.36, trixie 2.41). Without them pip silently falls back to debugpy's
# py2.py3-none-any wheel, which lacks the compiled pydevd speedups for Linux.
MANYLINUX_PLATFORMS=(--platform manylinux1_x86_64 --platform manylinux2010_x86_64 --platform manylinux2014_x86_64)
for minor in $(seq 17 "${SUITE_GLIBC[$TARGET_SUITE]}"); do MANYLINUX_PLATFORMS+=(--platform "manylinux_2_${minor}_x86_64"); done

# debugpy for the target image: binary wheels for the target suite's CPython / glibc x86_64, whatever
# the host is.
wheels_target() {
    local dir="$WHEELS/target" stamp py="${SUITE_PYTHON[$TARGET_SUITE]}"
    stamp="$(echo "$DEBUGPY_SPEC $py ${MANYLINUX_PLATFORMS[*]}" | sha)"
    if [[ "$FORCE" != 1 && -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$stamp" ]]; then
        log "wheels: target wheels up to date ($(ls "$dir"/*.whl | xargs -n1 basename | tr '\n' ' '))"
        return 0
    fi
    local t=$EPOCHREALTIME
    log "wheels: pip download $DEBUGPY_SPEC (cp${py/./} manylinux x86_64)"
    rm -rf "$dir" && mkdir -p "$dir"
    run pip-target "$PYTHON" -m pip download --disable-pip-version-check --no-cache-dir -d "$dir" \
        --only-binary=:all: --implementation cp --python-version "$py" --abi "cp${py/./}" \
        "${MANYLINUX_PLATFORMS[@]}" "$DEBUGPY_SPEC"
    echo "$stamp" >"$dir/.stamp"
    log "wheels: target wheels in $(elapsed "$t"): $(ls "$dir"/*.whl | xargs -n1 basename | tr '\n' ' ')"
}

# complete_wheels DIR: resolve DIR/requirements.txt from DIR alone with the *image's* python
# (--network none) and fetch on the host whatever it misses. The host evaluates environment markers
# for its own python: e.g. redis needs async-timeout only if python_full_version < "3.11.3", true
# for bookworm's 3.11.2, false for the host's 3.11.7.
complete_wheels() {
    local dir="$1" out missing i
    for i in 1 2 3 4 5 6; do
        if out="$(docker run --rm --network none --user 0 -v "$dir:/wheels:ro" --entrypoint python3 "$BASE_IMAGE" \
                -m pip download --disable-pip-version-check --no-index --find-links /wheels -d /tmp/resolve \
                -r /wheels/requirements.txt 2>&1)"; then
            return 0
        fi
        missing="$(sed -n 's/.*No matching distribution found for \([^;]*\).*/\1/p' <<<"$out" | sed 's/ *$//' | head -n1)"
        [[ -n "$missing" ]] || { echo "$out" | tail -n 20 >&2; die "cannot resolve the relay's dependencies in $BASE_IMAGE"; }
        log "wheels: the image's python also needs '$missing', fetching it"
        run "pip-extra-$i" "$PYTHON" -m pip wheel --disable-pip-version-check -w "$dir" \
            -c "$BUILD/constraints.txt" --prefer-binary "$missing"
    done
    die "wheel set in $dir still incomplete after $i rounds"
}

# The relay image's wheels, in two sets so a change in src/ rebuilds only the project's layer:
#   .build/wheels/relay/    the dependencies ([project].dependencies) + requirements.txt
#   .build/wheels/project/  debugrelay itself, built from a copy of pyproject.toml + src/ (so the
#                           build never writes egg-info or build/ into the work tree)
wheels_relay() {
    check_python
    local deps="$WHEELS/relay" own="$WHEELS/project" tools="$WHEELS/build-tools" project="$BUILD/project"
    local reqs stamp t=$EPOCHREALTIME
    rm -rf "$project" && mkdir -p "$project"
    cp "$REPO/pyproject.toml" "$project/"
    tar -C "$REPO" --exclude='__pycache__' --exclude='*.egg-info' --exclude='*.pyc' -c src | tar -C "$project" -x
    for f in README.md LICENSE LICENSE.txt; do
        if [[ -f "$REPO/$f" ]]; then cp "$REPO/$f" "$project/"; fi
    done
    # pyproject.toml names README.md as the readme: don't let its absence fail the wheel build
    [[ -f "$project/README.md" ]] || echo "# debugrelay" >"$project/README.md"

    reqs="$("$PYTHON" -c 'import sys, tomllib; print("\n".join(tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]))' \
        "$REPO/pyproject.toml")"
    stamp="$(printf '%s\n%s\n%s\n' "$reqs" "$DEBUGPY_SPEC" "$BASE_IMAGE" | sha)"
    if [[ "$FORCE" == 1 || ! -f "$deps/.stamp" || "$(cat "$deps/.stamp")" != "$stamp" ]]; then
        log "wheels: pip wheel of the relay's dependencies (host python $("$PYTHON" -c 'import platform; print(platform.python_version())'))"
        rm -rf "$deps" "$tools" && mkdir -p "$deps" "$tools"
        echo "$DEBUGPY_SPEC" >"$BUILD/constraints.txt"
        printf '%s\n' "$reqs" >"$deps/requirements.txt"
        # setuptools + wheel kept aside, so rebuilding the project wheel needs no network
        run pip-build-tools "$PYTHON" -m pip download --disable-pip-version-check -d "$tools" \
            --only-binary=:all: "setuptools>=68" wheel
        run pip-relay-deps "$PYTHON" -m pip wheel --disable-pip-version-check -w "$deps" \
            -c "$BUILD/constraints.txt" --prefer-binary -r "$deps/requirements.txt"
        complete_wheels "$deps"
        echo "$stamp" >"$deps/.stamp"
    else
        log "wheels: relay dependencies up to date ($(ls "$deps"/*.whl | wc -l) wheels)"
    fi
    rm -rf "$own" && mkdir -p "$own"
    run pip-project "$PYTHON" -m pip wheel --disable-pip-version-check -w "$own" \
        --no-index --find-links "$tools" --no-deps "$project"
    log "wheels: relay wheels in $(elapsed "$t"): $(ls "$own"/*.whl | xargs -n1 basename), $(ls "$deps"/*.whl | wc -l) dependencies, $(du -sh "$deps" | cut -f1)"
}

# ---------------------------------------------------------------------------------------------- images

# docker_build NAME TAG DOCKERFILE FROM [ARGS...]; the build context is docker/ (see docker/.dockerignore).
docker_build() {
    local name="$1" tag="$2" dockerfile="$3" from="$4" t=$EPOCHREALTIME; shift 4
    local args=(--force-rm --tag "$tag" --tag "${tag%:*}:$VERSION" --file "$HERE/$dockerfile")
    [[ "$FORCE" == 1 ]] && args+=(--no-cache)
    log "$name: docker build $tag from $dockerfile (FROM $from)"
    run "docker-$name" env DOCKER_BUILDKIT=0 docker build "${args[@]}" "$@" "$HERE"
    log "$name: $tag (and :$VERSION) built in $(elapsed "$t"), $(image_size "$tag")"
}

build_target() {
    ensure_target_base
    wheels_target
    docker_build target debugrelay/target:latest target.Dockerfile "$TARGET_BASE_IMAGE" \
        --build-arg "BASE=$TARGET_BASE_IMAGE"
}

build_relay() {
    ensure_base
    wheels_relay
    docker_build relay debugrelay/relay:latest relay.Dockerfile "$BASE_IMAGE" --build-arg "BASE=$BASE_IMAGE"
}

build_redis() {
    ensure_base
    docker_build redis debugrelay/redis:latest redis.Dockerfile "$BASE_IMAGE" --build-arg "BASE=$BASE_IMAGE"
}

build_example() {
    # the example is FROM the target image: (re)build it first unless `all` just did
    [[ "${_built_target:-0}" == 1 ]] || build_target
    docker_build example debugrelay/example-app:latest example-app.Dockerfile debugrelay/target:latest \
        --build-arg "TARGET=debugrelay/target:latest"
}

# ------------------------------------------------------------------------------------------------ main

what="${1:-all}"
# 1980-01-01: the project wheel comes out byte-identical for unchanged sources, so the relay image's
# COPY of the wheels (and everything after it) stays cached across runs.
export SOURCE_DATE_EPOCH=315532800
command -v docker >/dev/null || die "docker not found"
docker info >/dev/null 2>&1 || die "cannot talk to the docker engine"
mkdir -p "$BUILD"
[[ -n "$VERSION" ]] || die "no version = \"...\" in $REPO/pyproject.toml"

case "$what" in
    base) relay_base; target_base ;;
    target) build_target ;;
    relay) build_relay ;;
    redis) build_redis ;;
    example) build_example ;;
    all)
        relay_base
        target_base
        build_target; _built_target=1
        build_relay
        build_redis
        build_example
        ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown image '$what' (use base|target|relay|redis|example|all)" ;;
esac

log "done in $(elapsed "$T0")"
docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' | grep '^debugrelay/' | sed 's/^/[images]   /' || true
