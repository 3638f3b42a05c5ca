# Kenning: `make up` runs the platform, `make test` installs test dependencies and runs lint + the suite.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.kenning-installed

.PHONY: up install test lint unit bench clean

up: $(STAMP)
	$(VENV)/bin/kenning up

install: $(STAMP)

# torch first, pinned, so pip takes the CPU build instead of resolving a CUDA one.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[test]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check kenning kenning_cli mcp_server web_ui feed_worker tests bench
	$(VENV)/bin/mypy

# pytest exits 5 when it collected nothing: that is a failure here, never a pass.
unit: $(STAMP)
	$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

test: lint unit

# The 10k corpus by default (BENCH_ARGS="--size 100k" for the big one); the bench extra draws the chart.
bench: $(STAMP)
	$(PIP) install --quiet -e '.[bench]'
	$(VENV)/bin/kenning bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
