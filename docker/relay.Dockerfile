# debugrelay/relay: the relay server (HTTP API on 8765) with the project installed in /opt/venv.
# To launch docker targets it needs the engine's socket:
#   docker run -v /var/run/docker.sock:/var/run/docker.sock --group-add "$(stat -c %g /var/run/docker.sock)" ...
#
# Offline (default):  BASE=debugrelay/base:bookworm  (docker/build-images.sh builds it with debootstrap)
# With a registry:    --build-arg BASE=python:3.11-slim
# Context: docker/, with the project wheel + dependencies in docker/.build/wheels/relay.
ARG BASE=debugrelay/base:bookworm

FROM ${BASE} AS venv
COPY .build/wheels/relay/ /tmp/wheels/
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/python -m pip install --no-index --find-links /tmp/wheels --disable-pip-version-check \
        --no-warn-script-location debugrelay \
 && /opt/venv/bin/python -m pip check

FROM ${BASE}
LABEL org.opencontainers.image.title="debugrelay relay" \
      org.opencontainers.image.description="Relay that debugs Python programs over debugpy/DAP"
RUN groupadd --gid 10000 relay \
 && useradd --uid 10000 --gid 10000 --create-home --shell /bin/bash relay
COPY --from=venv /opt/venv /opt/venv
ENV VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1
WORKDIR /home/relay
USER 10000:10000
EXPOSE 8765
CMD ["debugrelay", "serve", "--host", "0.0.0.0", "--port", "8765"]
