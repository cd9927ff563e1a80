# debugrelay/target: the image a debug target runs in: python3 + debugpy in /opt/venv, non-root
# user debuggee (uid 10001), WORKDIR /workspace. No entrypoint: the relay runs
#   python -m debugpy --listen 0.0.0.0:5678 --wait-for-client ...
#
# Offline (default):  BASE=debugrelay/base:trixie  (docker/build-images.sh builds it with debootstrap)
# With a registry:    --build-arg BASE=python:3.13-slim  (same file)
# Python 3.12+ matters: debugpy uses sys.monitoring there, and a program under it runs at about
# full speed (3.11: several times slower). The base needs `python3` with venv and pip >= 22.3
# (`pip --python`): trixie has 25.1, bookworm 23.0.1.
# Context: docker/, with the debugpy wheel in docker/.build/wheels/target (build-images.sh fetches it).
# Written for the classic builder (Docker 20.10 without BuildKit/buildx): few instructions, since
# each one is a container commit there.
ARG BASE=debugrelay/base:trixie

FROM ${BASE} AS venv
COPY .build/wheels/target/ /tmp/wheels/
# a venv without its own pip/setuptools (-1000 files, -5 MB); the base's pip installs into it
RUN python3 -m venv --without-pip /opt/venv \
 && python3 -m pip --python /opt/venv/bin/python install --no-index --find-links /tmp/wheels \
        --disable-pip-version-check --no-warn-script-location debugpy \
 && /opt/venv/bin/python -c "import debugpy; print('debugpy', debugpy.__version__)"

FROM ${BASE}
RUN groupadd --gid 10001 debuggee \
 && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash debuggee \
 && mkdir -p /workspace \
 && chown debuggee:debuggee /workspace
COPY --from=venv /opt/venv /opt/venv
# PYTHONDONTWRITEBYTECODE: don't litter a mounted workspace with __pycache__ owned by uid 10001
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /workspace
# numeric, so runAsNonRoot-style checks can verify it without reading /etc/passwd
USER 10001:10001
CMD ["python"]
