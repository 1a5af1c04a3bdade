# The two commands of the quick start: `make run` and `make test`; `make run-local`: a real
# model on this CPU (local/server.sh builds its server, local/run.py runs config/local.yaml).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# rules call `planaudit`; put the environment's commands first on the path
export PATH := $(abspath $(BIN)):$(PATH)
STAMP  := $(VENV)/.installed
# Bytecode is written (into __pycache__/, ignored by git) even where the environment sets
# PYTHONDONTWRITEBYTECODE, which Python reads as unset when empty: every job, test worker
# and Snakemake start is a fresh process that would otherwise compile planaudit's modules
# anew (about 0.1 s of CPU each, measured; docs/explain/contributing.md).
export PYTHONDONTWRITEBYTECODE :=
CORES  ?= all
# `make test`: pytest-xdist workers, one more than the CPUs this process may use: many
# tests wait (on a Snakemake run's jobs, SLURM, a model server, a browser), and measured in
# CI a worker was busy twice as long as its CPU seconds; each worker takes whole files
# (loadfile), so a module's fixtures are built once, in the order tests/conftest.py gives
# (the slow files first)
TEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
# Every Eval Ever's validator (tests/test_eee.py); see pyproject.toml's `interop` extra
EEE    := every-eval-ever==0.3.0

.PHONY: run run-local study-demo study-local test check lint docs suite clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-deps --ignore-requires-python $(EEE)
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

run-local: $(STAMP)
	$(BIN)/python local/run.py --config config/local.yaml --cores 2

# a study with SIMULATED participants (Chromium), from server to the report's People section
study-demo: $(STAMP)
	$(BIN)/python demo/study_demo.py --cores 2

# the assistant arm with a real model: SmolLM2 on this CPU behind the study (SIMULATED people)
study-local: $(STAMP)
	$(BIN)/python local/study.py

suite: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) suite

test: $(STAMP)
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

# the inner loop while editing: every test that starts no service, no Snakemake run and no
# browser (tests/conftest.py's `heavy` marker; one that starts one unmarked fails here)
check: $(STAMP)
	PLANAUDIT_CHECK=1 $(BIN)/pytest -q -n logical --dist loadfile --no-loadscope-reorder \
	  -m "not heavy" --durations=15

# the documentation site, warnings as errors: docs/_build/html/index.html
docs: $(STAMP)
	$(BIN)/sphinx-build -W --keep-going -q -b html docs docs/_build/html

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks demo local docs
	$(BIN)/snakemake --lint --cores 1

clean:
	rm -rf results docs/_build
