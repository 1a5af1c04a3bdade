# The two commands of the quick start: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# rules call `planaudit`; put the environment's commands first on the path
export PATH := $(abspath $(BIN)):$(PATH)
STAMP  := $(VENV)/.installed
CORES  ?= all

.PHONY: run test lint suite clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

suite: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) suite

test: $(STAMP)
	$(BIN)/pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/snakemake --lint --cores 1

clean:
	rm -rf results
