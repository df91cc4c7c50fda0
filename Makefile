# One target per habit. `make run` and `make test` are the README's quickstart.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
SERVERS := scripts/local-servers

.PHONY: bootstrap ext servers image run test test-fast sanitize lint format typecheck bench synth clean

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

# The tier that needs no server runs on every core (pytest-xdist), with the shared servers' ports
# pointed at a closed one: a test that reaches a server without its `servers` marker fails there.
# Then scripts/server-tiers runs the rehearsals (their own servers, moto and containers) beside the
# tests of the shared servers, each on workers of its own. `make test-fast` is the edit loop: the
# server-free tests but those marked `slow` (a real synth with bundling, headless Chromium, eleven
# nightly runs), which `make test` runs with the rest.
SERVER_FREE := not servers and not rehearse
FAST := $(SERVER_FREE) and not slow
# two pytest-xdist workers per core: the server-free tests wait on subprocesses, timers and sockets
# about half their time (test-fast on 2 cores: 2:42 with 2 workers, 2:21 with 4)
WORKERS := $(shell echo $$(( $$(nproc) * 2 )))
NO_SERVERS := BENCHWRIGHT_PG_PORT=9 BENCHWRIGHT_MYSQL_PORT=9 BENCHWRIGHT_REDIS_PORT=9

test: servers image   ## every test: unit, runner (real servers), functions, state machines, infra, e2e, rehearsals
	$(NO_SERVERS) $(BIN)/pytest -q -p no:cacheprovider -m "$(SERVER_FREE)" -n $(WORKERS) --durations=30
	BIN=$(BIN) scripts/server-tiers

sanitize:             ## the C hot path under AddressSanitizer + UBSan, with the tests that drive it
	BIN=$(BIN) scripts/sanitize

test-fast:            ## the edit loop: tests that need no server and are not marked slow, on every core
	$(NO_SERVERS) $(BIN)/pytest -q -p no:cacheprovider -m "$(FAST)" -n $(WORKERS) --durations=30

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
