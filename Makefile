# One entry point per job. `make serve` starts the relay; `make test` runs every test.
PY      ?= python3
VENV    ?= .venv
BIN      = $(VENV)/bin
STAMP    = $(VENV)/.installed
CHECKOV  = $(VENV)/tools/checkov/bin/checkov
PORT    ?= 8765
# pytest workers: most tests wait on debugpy, containers or a relay, not on a core; a worker that runs out of
# tests takes some of another's (worksteal), so that the run does not end on one worker's long queue
JOBS    ?= 3
COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose)

.PHONY: serve test test-fast screenshot system-deps test-images checkov images up lint typecheck images up down bench bench-conditions clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

## serve: install and start the relay on 127.0.0.1:$(PORT) (local targets, in-memory state)
serve: $(STAMP)
	$(BIN)/debugrelay serve --port $(PORT)

## system-deps: redis-server for the state-store tests, chromium + its driver for the /ui tests (Debian; root)
system-deps:
	@command -v redis-server >/dev/null || { \
	  echo "[deps] installing redis-server"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }
	@{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || { \
	  echo "[deps] installing chromium and chromium-driver (the live view's browser tests)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    chromium chromium-driver >/dev/null || echo "[deps] chromium not installed: the browser tests will be skipped"; }

## test-images: the images the container tests run: targets, and the relay, Redis and example app that the
## compose, image and store tests start (skipped where there is no Docker engine)
test-images:
	@if docker info >/dev/null 2>&1; then docker/build-images.sh all; \
	else echo "[images] no Docker engine: container tests will be skipped"; fi

## checkov: the static checker of deploy/'s rendered manifests (tests/unit/test_deploy_checkov.py), in a
## venv of its own: its pinned dependencies never meet the project's
checkov: $(CHECKOV)
$(CHECKOV): | $(BIN)/python
	$(PY) -m venv $(VENV)/tools/checkov
	$(VENV)/tools/checkov/bin/pip install -q 'checkov>=3.2,<4' || echo "[checkov] not installed: the static check of deploy/ will be skipped"

## test: install what the tests need and run the whole suite
test: $(STAMP) system-deps test-images $(CHECKOV)
	$(BIN)/python -m pytest -n $(JOBS) --dist worksteal --durations=15

## test-fast: the fast tier and the unit tests (no debugpy, Redis or Docker needed)
test-fast: $(STAMP)
	$(BIN)/python -m pytest tests/fast tests/unit -q

## screenshot: refresh docs/ui.png, the README's picture of a paused session in the live view (a real browser)
screenshot: $(STAMP) system-deps
	DEBUGRELAY_TEST_SCREENSHOT=docs/ui.png $(BIN)/python -m pytest tests/integration/test_ui.py -q \
	  -k test_the_sessions_list_shows_a_paused_session_at_its_line

## images: build the container images offline (debootstrap base, wheels from the host)
images:
	docker/build-images.sh all

## up: build the images and start relay + Redis + example app with docker-compose
up: images
	@umask 077; scripts/compose-env > .env.new && mv .env.new .env  # the token: readable by its owner only
	$(COMPOSE) up -d
	@scripts/wait-healthy "http://127.0.0.1:$$(sed -n 's/^DEBUGRELAY_PORT=//p' .env)"
	@echo "debugrelay is up: http://127.0.0.1:$$(sed -n 's/^DEBUGRELAY_PORT=//p' .env)  (token: see .env)"

down:
	$(COMPOSE) down

## bench-conditions: what a breakpoint costs inside the program (pyperformance workloads): relay vs debugpy alone
bench-conditions: $(STAMP)
	$(BIN)/pip install -q -e '.[test,bench]'
	$(BIN)/python -m bench.conditions

## bench: debugrelay against raw debugpy (a table, and JSON in bench/results/); takes about 5 minutes
bench: $(STAMP)
	$(BIN)/python -m bench

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
