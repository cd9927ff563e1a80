# debugrelay/relay: the relay server (HTTP API on 8765), the project installed in /opt/venv,
# non-root user relay (uid 10000). To launch docker targets it needs the engine's socket:
#   docker run -v /var/run/docker.sock:/var/run/docker.sock \
#              --group-add "$(stat -c %g /var/run/docker.sock)" -p 8765:8765 debugrelay/relay
#
# Offline (default):  BASE=debugrelay/base:bookworm  (docker/build-images.sh builds it with debootstrap)
# With a registry:    --build-arg BASE=python:3.11-slim  (same file)
# The base needs `python3` with venv and pip >= 22.3 (`pip --python`): bookworm has 23.0.1.
# Context: docker/, with wheels in docker/.build/wheels/relay (dependencies + requirements.txt)
# and docker/.build/wheels/project (debugrelay itself); build-images.sh makes both.
ARG BASE=debugrelay/base:bookworm

# the dependencies: cached until pyproject.toml's dependencies change
FROM ${BASE} AS deps
COPY .build/wheels/relay/ /tmp/wheels/
RUN python3 -m venv --without-pip /opt/venv \
 && python3 -m pip --python /opt/venv/bin/python install --no-index --find-links /tmp/wheels \
        --disable-pip-version-check --no-warn-script-location -r /tmp/wheels/requirements.txt

FROM ${BASE}
RUN groupadd --gid 10000 relay \
 && useradd --uid 10000 --gid 10000 --create-home --shell /bin/bash relay
COPY --from=deps /opt/venv /opt/venv
# a local target would run inside the relay's container, beside the Docker socket: containers only
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    DEBUGRELAY_LAUNCHERS=docker
WORKDIR /home/relay
EXPOSE 8765
CMD ["debugrelay", "serve", "--host", "0.0.0.0", "--port", "8765"]
# the project itself, last: a change in src/ rebuilds only these three steps (a few seconds).
# `python3` is the venv's now (no pip in it): use the base's interpreter and its pip.
COPY .build/wheels/project/ /tmp/project/
RUN pip="$(PATH=/usr/local/bin:/usr/bin:/bin command -v python3) -m pip --disable-pip-version-check --python /opt/venv/bin/python" \
 && $pip install --no-index --no-deps --no-warn-script-location /tmp/project/*.whl \
 && $pip check \
 && rm -rf /tmp/project
USER 10000:10000
