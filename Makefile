# Kenning: `make up` runs the platform, `make test` installs test dependencies and runs lint + the suite.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.kenning-installed

.PHONY: up install test lint unit unit-default unit-valkey-search bench clean

up: $(STAMP)
	@echo "==> starting Kenning (Ctrl-C stops it). In a second terminal:"
	@echo "    $(VENV)/bin/kenning token create --name my-agent --scope write   # a token for your MCP client"
	@echo "    $(VENV)/bin/kenning doctor                                       # check every part"
	$(VENV)/bin/kenning up

install: $(STAMP)
	@echo "==> installed. Next: make up (runs Kenning), then kenning token create; make test runs the suite."

# torch first, pinned, so pip takes the CPU build instead of resolving a CUDA one. pip shows its progress
# (a first install downloads about 1 GB and takes minutes).
$(STAMP): pyproject.toml
	@echo "==> [1/4] virtualenv $(VENV)"
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "==> [2/4] pip"
	$(PIP) install --progress-bar on --upgrade pip
	@echo "==> [3/4] torch 2.13.0, CPU build (the largest download)"
	$(PIP) install --progress-bar on torch==2.13.0
	@echo "==> [4/4] Kenning and its test dependencies"
	$(PIP) install --progress-bar on -e '.[test,export]'
	touch $(STAMP)
	@echo "==> installed into $(VENV)"

# The third-party MCP clients the suite connects to Kenning (tests/mcp_server/test_clients.py), pinned
# in tests/clients/package-lock.json; npm writes the hidden lockfile last, so it marks a finished install.
CLIENTS := tests/clients/node_modules/.package-lock.json

$(CLIENTS): tests/clients/package.json tests/clients/package-lock.json
	@echo "==> the MCP clients of the suite: npm ci --prefix tests/clients"
	npm ci --prefix tests/clients --no-audit --no-fund

LINTED := kenning kenning_cli serving mcp_server web_ui feed_worker tests bench scripts

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy

# valkey-search, the production engine (no registry ships it; ../shared holds a build, see its README).
# The suite runs twice: on the embedded default (RediSearch) and on valkey-search, when
# KENNING_SEARCH_MODULE names it or the shared build exists. tests/kenning/test_engines.py runs every
# query shape on both engines in either pass, so it needs valkey-search even in the first.
VALKEY_SEARCH_MODULE ?= $(or $(KENNING_SEARCH_MODULE),$(wildcard $(abspath ../shared/valkey-search/libsearch.so)))

# pytest exits 5 when it collected nothing: that is a failure here, never a pass.
PYTEST = $(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

unit: unit-default unit-valkey-search

unit-default: $(STAMP) $(CLIENTS)
	@echo "== pass 1: the embedded default (RediSearch)"
	env -u KENNING_SEARCH_MODULE KENNING_TEST_VALKEY_SEARCH_MODULE=$(VALKEY_SEARCH_MODULE) $(PYTEST)

unit-valkey-search: $(STAMP) $(CLIENTS) unit-default
	@if [ -z "$(VALKEY_SEARCH_MODULE)" ]; then \
		echo "== pass 2 not run: no valkey-search (set KENNING_SEARCH_MODULE to its libsearch.so)"; \
	else \
		echo "== pass 2: valkey-search ($(VALKEY_SEARCH_MODULE))"; \
		KENNING_SEARCH_MODULE=$(VALKEY_SEARCH_MODULE) $(PYTEST); \
	fi

test: lint unit

# The 10k corpus by default (BENCH_ARGS="--size 100k" for the big one); the bench extra draws the chart.
bench: $(STAMP)
	$(PIP) install --quiet -e '.[bench]'
	$(VENV)/bin/kenning bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
