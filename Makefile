# The two commands of a fresh clone (README "Quick start"):
#   make run    set up, then a conformance run of scenario smoke on all encodings (local Spark, record files)
#   make test   set up, then the suite's own checks in timed stages (.ci/stages.py): lint, types,
#               import contracts, the fast tests, the Spark tests, the Kafka tests, the slow rest
PYTHON ?= python3
# Compiled modules are kept under .cache/pycache even where the environment turns writing them off
# (PYTHONDONTWRITEBYTECODE): otherwise every test process, CLI child and Spark worker compiles the
# suite's modules from source at its start, and each pytest process rewrites every test module's
# asserts again (collecting the suite took 19 s a process without the cache, 6 s with it).
export PYTHONPYCACHEPREFIX := $(CURDIR)/.cache/pycache
export PYTHONDONTWRITEBYTECODE :=
VENV := .venv
BIN := $(VENV)/bin
STAGES := $(BIN)/python .ci/stages.py
INSTALLED := $(VENV)/.installed

.PHONY: setup run test lint types imports test-fast test-spark test-kafka test-slow test-nightly golden-check java postgres chromium

setup: java postgres chromium $(INSTALLED)

# Spark needs a Java 17 runtime; install it from Debian when the machine has none.
java:
	@java -version 2>&1 | grep -q 'version "\(17\|21\)' || { \
	  echo "installing a Java 17 runtime (openjdk-17-jre-headless)"; \
	  apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }

# The `kafka:` mode's jdbc output starts a scratch PostgreSQL server (transport/postgres.py); install
# Debian's when the machine has none and apt-get can (otherwise those tests skip, saying why).
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && { \
	    echo "installing a PostgreSQL server (postgresql)"; \
	    apt-get update -qq && apt-get install -y -qq postgresql >/dev/null; } \
	  || echo "no PostgreSQL server here and none installed: the kafka: jdbc tests will skip"; }

# The HTML report's test renders the page in headless Chromium (tests/report/test_html_chromium.py);
# install Debian's when the machine has none and apt-get can (otherwise that test skips, saying why).
chromium:
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { \
	  command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && { \
	    echo "installing a headless browser for the HTML report's test (chromium)"; \
	    apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
	  || echo "no chromium here and none installed: the HTML report's browser test will skip"; }

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[spark,test,kafka,lint]'
	touch $(INSTALLED)

run: setup
	$(BIN)/ticdc-conformance run --scenario smoke --protocol all --report reports/

# Every stage in turn, each timed, then a table of the stage times; fails if any stage failed.
test: setup
	$(STAGES)

# One stage alone. Each test belongs to exactly one of fast, spark, kafka and slow.
lint: setup
	$(STAGES) lint

types: setup
	$(STAGES) types

# The import contracts of pyproject.toml [tool.importlinter] (docs/import-contracts.md).
imports: setup
	$(BIN)/lint-imports

test-fast: setup
	$(STAGES) fast

test-spark: setup
	$(STAGES) spark

# The Kafka transport's tests (docs/kafka.md).
test-kafka: setup
	$(STAGES) kafka

test-slow: setup
	$(STAGES) slow

# The long matrices and the nightly fuzz budget (docs/fuzz.md); not part of `make test`.
test-nightly: setup
	$(STAGES) nightly
	TICDC_FUZZ_PROFILE=nightly $(STAGES) fuzz

golden-check: setup
	$(BIN)/ticdc-conformance golden --check
