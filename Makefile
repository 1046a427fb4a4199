# The two commands of a fresh clone (README "Quick start"):
#   make run    set up, then a conformance run of scenario smoke on all encodings (local Spark, record files)
#   make test   set up, then the suite's own tests
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: setup run test test-fast test-kafka golden-check java

setup: java $(INSTALLED)

# Spark needs a Java 17 runtime; install it from Debian when the machine has none.
java:
	@java -version 2>&1 | grep -q 'version "\(17\|21\)' || { \
	  echo "installing a Java 17 runtime (openjdk-17-jre-headless)"; \
	  apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null; }

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,kafka]'
	touch $(INSTALLED)

run: setup
	$(BIN)/ticdc-conformance run --scenario smoke --protocol all --report reports/

test: setup
	$(BIN)/pytest

test-fast: setup
	$(BIN)/pytest -m "not slow and not kafka and not spark"

# The Kafka transport's tests alone (docs/kafka.md); `make test` runs them too.
test-kafka: setup
	$(BIN)/pytest -m kafka tests/e2e/test_kafka_transport.py

golden-check: setup
	$(BIN)/ticdc-conformance golden --check
