# Two commands do all setup on a fresh clone: `make run` and `make test`.
# uv is installed with pip when missing; everything else comes from uv.lock. Bytecode is
# compiled at install (uv does not by default): every process then starts ~2 s sooner. The
# workspace's own packages are installed editable, so uv leaves them out: compileall does them
# (and the tests' helper modules), for the processes the suite spawns; a source changed later
# is compiled afresh by Python as always.
TASK ?= 查询订单 ORD-2024-001 的状态并计算折扣
UV = $(shell command -v uv >/dev/null 2>&1 && echo uv || echo python3 -m uv)
PACKAGES = packages/tether/tether packages/langchain-tether/langchain_tether packages/tether-local/tether_local packages/tether-world/tether_world packages/tether-cli/tether_cli packages/tether-bench/tether_bench packages/tether-replay/tether_replay

.PHONY: setup run test test-fast lint soak docs notebooks
setup:
	@command -v uv >/dev/null 2>&1 || python3 -m uv --version >/dev/null 2>&1 \
		|| python3 -m pip install --quiet "uv>=0.9"
	$(UV) sync --locked --quiet --compile-bytecode
	$(UV) run --locked --quiet python -m compileall -q -j 0 packages tests

# tether run exits 1 when a run ends with a status other than completed (a small model may
# end at a cap): that is the loop working, so only errors (2) fail this target.
run: setup
	$(UV) run tether run --tools demo "$(TASK)"; code=$$?; [ $$code -ne 2 ] || exit $$code

lint: setup
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy $(PACKAGES)

# Everything: servers, PostgreSQL, spawned CLIs, notebooks, the benchmark harness; one
# worker per core, each test file on one worker (its servers start once).
test: lint
	$(UV) run pytest -n 2 --dist loadfile

# The core in well under a minute: no servers, no spawned processes, no notebooks, no bench.
test-fast: setup
	$(UV) run pytest -q -n 2 -m "not slow and not server and not postgres and not bench"

# The long soak behind the reliability figures in the README (26 min to about an hour on 2 cores):
# 10,000 generated runs, 1,000 faulted payment flows, 100 SIGKILLs with resume.
soak: setup
	SOAK_EXAMPLES=10000 SOAK_FLOWS=1000 SOAK_KILLS=100 $(UV) run pytest -q --timeout 3600 \
		tests/test_untrusted.py tests/test_payment_flows.py tests/test_kill_resume.py

# The documentation as a site (MkDocs with Material; the API reference from the docstrings).
docs: setup
	NO_MKDOCS_2_WARNING=1 $(UV) run mkdocs serve --strict -a 127.0.0.1:8001

# The notebooks in JupyterLab, from the locked environment (127.0.0.1 only).
notebooks: setup
	$(UV) run jupyter lab --ip 127.0.0.1 --port 8888 notebooks/
