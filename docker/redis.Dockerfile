# debugrelay/redis: Redis for the relay's shared session store. AOF persistence, data in /data.
# protected-mode is off and it binds 0.0.0.0: keep it on a private network (no published port) and give it
# a password, on its standard input rather than its command line (compose.yaml shows how).
#
# Offline (default):  BASE=debugrelay/base:bookworm, which already has redis-server (Debian's, 7.0)
# With a registry:    --build-arg BASE=python:3.11-slim  (redis-server is apt-installed then)
ARG BASE=debugrelay/base:bookworm
FROM ${BASE}
RUN set -eu; \
    if ! command -v redis-server >/dev/null; then \
        apt-get update; \
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server; \
        rm -rf /var/lib/apt/lists/*; \
    fi; \
    mkdir -p /data; \
    chown redis:redis /data
VOLUME /data
WORKDIR /data
USER redis
EXPOSE 6379
CMD ["redis-server", "--appendonly", "yes", "--protected-mode", "no", "--bind", "0.0.0.0", "--dir", "/data"]
