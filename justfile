# Glimmer tasks. `just --list` shows them all.

# Create .venv with Glimmer (editable) and the dev tools.
setup:
    hack/setup

# Static checks and every test tier that runs on this machine.
test *ARGS:
    hack/test {{ARGS}}

# Only the fast pure-core unit tests.
unit:
    .venv/bin/pytest -q tests/unit

lint:
    .venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy && .venv/bin/lint-imports

fmt:
    .venv/bin/ruff format . && .venv/bin/ruff check --fix .

# Build (or reuse) kube-apiserver, etcd, kubectl and KWOK; prints the assets dir last.
envtest:
    hack/envtest

# Contract + verdict throughput and memory figures.
bench-contract:
    .venv/bin/python bench/contract/run.py

# Chaos: SIGKILL the manager at 50 random instants over BurnInRuns on simulated nodes.
chaos:
    GLIMMER_CHAOS_KILLS=50 .venv/bin/pytest -q -s tests/e2e/test_chaos.py
