# One target per habit. `make run` and `make test` are the README's quickstart.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SERVERS := scripts/local-servers

.PHONY: bootstrap servers run test test-fast lint format typecheck bench synth clean

bootstrap:            ## install everything (Debian packages, venv, node tools)
	scripts/bootstrap

servers: bootstrap    ## start the throwaway local database servers
	$(SERVERS) start

run: servers          ## the quickstart benchmark, locally
	$(BIN)/benchwright run examples/quickstart.yaml

test: servers         ## every test: unit, runner (real servers), functions, state machines, infra, e2e
	$(BIN)/pytest -q -p no:cacheprovider

test-fast:            ## tests that need no servers
	$(BIN)/pytest -q -m "not servers"

lint:                 ## ruff lint + format check, mypy on src/
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format:
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: servers        ## side-by-side figures against the native tools
	$(PY) benchmarks/run_all.py

synth: bootstrap      ## synthesize the CDK app and run the offline AWS checks
	scripts/synth

clean:
	rm -rf cdk.out .pytest_cache .mypy_cache .ruff_cache
