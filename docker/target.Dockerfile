# debugrelay/target: the image a debug target runs in. Python + debugpy in /opt/venv, non-root.
# The relay starts programs in it with `python -m debugpy --listen 0.0.0.0:5678 --wait-for-client ...`.
#
# Offline (default):  BASE=debugrelay/base:bookworm  (docker/build-images.sh builds it with debootstrap)
# With a registry:    --build-arg BASE=python:3.11-slim  (same file; python is found as `python3`)
# Context: docker/, with debugpy wheels in docker/.build/wheels/target (build-images.sh fetches them).
# Classic builder compatible (Docker 20.10 without BuildKit).
ARG BASE=debugrelay/base:bookworm

FROM ${BASE} AS venv
COPY .build/wheels/target/ /tmp/wheels/
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/python -m pip install --no-index --find-links /tmp/wheels --disable-pip-version-check \
        --no-warn-script-location debugpy \
 && /opt/venv/bin/python -c "import debugpy; print('debugpy', debugpy.__version__)"

FROM ${BASE}
LABEL org.opencontainers.image.title="debugrelay target" \
      org.opencontainers.image.description="Python + debugpy for programs debugged through debugrelay"
RUN groupadd --gid 10001 debuggee \
 && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash debuggee \
 && mkdir -p /workspace \
 && chown debuggee:debuggee /workspace
COPY --from=venv /opt/venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1
WORKDIR /workspace
# numeric, so "runAsNonRoot"-style checks can verify it without /etc/passwd
USER 10001:10001
CMD ["python3"]
