# One target per habit. `make run` and `make test` are the README's quickstart.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SERVERS := scripts/local-servers

.PHONY: bootstrap ext servers image run test test-fast lint format typecheck bench synth clean

bootstrap:            ## install everything (Debian packages, venv, node tools)
	scripts/bootstrap

ext:                  ## recompile the event loops' hot path (src/benchwright/runner/_fastloop.c) in place
	$(PY) hatch_build.py

servers: bootstrap    ## start the throwaway local database servers
	$(SERVERS) start

run: bootstrap        ## the quickstart benchmark, locally: its own throwaway servers, gone when it ends
	$(BIN)/benchwright run examples/quickstart.yaml

image: bootstrap      ## the runner image (scripts/runner-image: podman or docker); the rehearsal tests use it
	@if command -v podman >/dev/null 2>&1 || { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }; \
	then scripts/runner-image build >/dev/null || echo "make image: the build failed (see above): the rehearsal tests will say so"; \
	else echo "make image: no podman or docker: the rehearsal tests (tests/rehearse) will skip"; fi

test: servers image   ## every test: unit, runner (real servers), functions, state machines, infra, e2e, rehearsals
	$(BIN)/pytest -q -p no:cacheprovider

test-fast:            ## tests that need no servers
	$(BIN)/pytest -q -m "not servers and not rehearse"

lint:                 ## ruff lint + format, mypy --strict, pylint's size rules
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/pylint src/benchwright

format:
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: servers        ## side-by-side figures against the native tools
	$(PY) benchmarks/run_all.py

synth: bootstrap      ## synthesize the CDK app and run the offline AWS checks
	scripts/synth

clean:
	rm -rf cdk.out .pytest_cache .mypy_cache .ruff_cache
