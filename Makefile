# One entry point per job. `make serve` starts the relay; `make test` runs every test.
PY      ?= python3
VENV    ?= .venv
BIN      = $(VENV)/bin
STAMP    = $(VENV)/.installed
PORT    ?= 8765

.PHONY: serve test system-deps lint typecheck images up down bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

## serve: install and start the relay on 127.0.0.1:$(PORT) (local targets, in-memory state)
serve: $(STAMP)
	$(BIN)/debugrelay serve --port $(PORT)

## system-deps: redis-server for the state-store tests (Debian packages; needs root)
system-deps:
	@command -v redis-server >/dev/null || { \
	  echo "[deps] installing redis-server"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null; }

## test: install what the tests need and run the whole suite
test: $(STAMP) system-deps
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
