# jtac — the two commands for a fresh machine are `make demo` and `make test`; each runs the
# (idempotent) setup first. See README.md.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
BUILD := build/py
PYTEST := $(PY) -m pytest
CPP_SOURCES = $(shell git ls-files '*.cpp' '*.hpp')

.PHONY: setup setup-demo setup-franka-sim setup-peers demo test test-cpp test-py test-franka lint format sanitize bench bench-gripper bench-mcap bench-pair bench-peers fuzz fuzz-modes clean

# Everything: the venv with every pinned wheel, the ROS interfaces, the C++ libraries, module and tests.
setup:
	@scripts/setup.sh

# Only what the demo needs: no ROS wheels or interfaces, no test tools, no C++ tests (a later
# `make setup` or `make test` adds them to the same venv and build tree).
setup-demo:
	@scripts/setup.sh --demo

# The main job: the simulated FR3 executes a trajectory with admittance while it is pushed; prints
# the results and writes plots to build/demo/.
demo: setup-demo
	$(PY) examples/02_simulated_arm_with_admittance.py

# Everything CI runs: lint, C++ tests (incl. malloc_tests), then pytest layer by layer.
test: setup lint test-cpp test-py test-franka

test-cpp:
	ctest --test-dir $(BUILD) --output-on-failure

test-py:
	$(PYTEST) test/unit
	$(PYTEST) test/core
	$(PYTEST) test/loop
	$(PYTEST) test/ros
	$(PYTEST) test/examples

# franka-sim (the robot's network protocol, limits enforced) in its own venv .venv-sim, on loopback:
# the libfranka device end to end (test/franka/README.md).
setup-franka-sim:
	@scripts/setup_franka_sim.sh

test-franka: setup-franka-sim setup-peers
	$(PYTEST) test/franka

# The Franka stacks bench/bench_franka_peers.py measures jtac against, each in a venv of its own (none
# is a dependency of jtac): test/franka/test_peer_harness.py runs one short run per peer.
setup-peers:
	@scripts/setup_peers.sh

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/clang-format --dry-run -Werror $(CPP_SOURCES)
	$(PY) -m jtac_py.robots.generate --check
	$(PY) -m jtac_py.parameters --check
	$(PY) scripts/check_layers.py
	$(MAKE) --no-print-directory docs DOCS_GENERATE=--check
	$(PY) scripts/check_version.py
	$(PY) scripts/run_clang_tidy.py $(BUILD)

# clang-tidy alone (.clang-tidy; which checks and why: docs/lint.md), over the build's compile commands.
.PHONY: tidy
tidy:
	$(PY) scripts/run_clang_tidy.py $(BUILD)

format:
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
	$(VENV)/bin/clang-format -i $(CPP_SOURCES)

# C++ tests under AddressSanitizer + UndefinedBehaviorSanitizer (malloc_tests excluded: ASan
# owns malloc).
sanitize: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY) -DJTAC_BUILD_INTERFACES=OFF -DJTAC_SANITIZE=ON
	cmake --build build/sanitize --parallel
	ctest --test-dir build/sanitize --output-on-failure

# The seeded invariant suite (malloc_tests/test_engine_fuzz.cpp) at 10^6 scenarios, about 25 min;
# `make test` runs 10^4 of them through ctest. JTAC_FUZZ_SCENARIOS, JTAC_FUZZ_SEED and
# JTAC_FUZZ_CONTINUE=1 (count violations per invariant instead of stopping) pass through.
fuzz: setup
	cmake --build $(BUILD) --target test_engine_fuzz test_mode_fuzz
	JTAC_FUZZ_SCENARIOS=$${JTAC_FUZZ_SCENARIOS:-1000000} $(BUILD)/malloc_tests/test_engine_fuzz \
	  --gtest_filter='EngineFuzz.RandomScenarios*'
	$(MAKE) --no-print-directory fuzz-modes

# The mode-transition suite (jtac_loop/test/test_mode_fuzz.cpp) at 10^6 sequences on the kinematic arm,
# in two processes (one per core, seeds split in halves); `make test` runs 10^4 on the MuJoCo arm.
# JTAC_MODE_FUZZ_SEQUENCES, JTAC_MODE_FUZZ_SEED and JTAC_MODE_FUZZ_CONTINUE=1 pass through.
fuzz-modes:
	@n=$${JTAC_MODE_FUZZ_SEQUENCES:-1000000}; s=$${JTAC_MODE_FUZZ_SEED:-1}; half=$$((n / 2)); \
	JTAC_MODE_FUZZ_ARM=kinematic JTAC_MODE_FUZZ_SEQUENCES=$$half JTAC_MODE_FUZZ_SEED=$$s \
	  $(BUILD)/jtac_loop/test/test_mode_fuzz > $(BUILD)/mode_fuzz_1.log 2>&1 & p1=$$!; \
	JTAC_MODE_FUZZ_ARM=kinematic JTAC_MODE_FUZZ_SEQUENCES=$$((n - half)) JTAC_MODE_FUZZ_SEED=$$((s + half)) \
	  $(BUILD)/jtac_loop/test/test_mode_fuzz > $(BUILD)/mode_fuzz_2.log 2>&1; r2=$$?; wait $$p1; r1=$$?; \
	grep -h "mode fuzz:" $(BUILD)/mode_fuzz_1.log $(BUILD)/mode_fuzz_2.log; \
	grep -h "^seed" $(BUILD)/mode_fuzz_1.log $(BUILD)/mode_fuzz_2.log | head -20; \
	test $$r1 = 0 && test $$r2 = 0

# Benchmarks print ratios against a baseline measured in the same run (see bench/README.md).
bench: setup
	PATH=$(CURDIR)/$(VENV)/bin:$$PATH cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release \
	  -DPython_EXECUTABLE=$(CURDIR)/$(PY) -DJTAC_BUILD_INTERFACES=OFF -DJTAC_BUILD_TESTS=OFF -DJTAC_BUILD_BENCH=ON
	cmake --build build/bench --parallel
	build/bench/bench/bench_kinematics
	build/bench/bench/bench_trajectory_update
	build/bench/bench/bench_jtac_update
	$(PY) bench/bench_python_stall.py

# The Franka Hand on franka-sim: jtac's Gripper against pylibfranka.Gripper, and the arm beside it
# (about 2 minutes; not in `make test`). --write-figures updates docs/gripper_figures.md.
bench-gripper: setup setup-franka-sim
	$(PY) bench/bench_gripper.py $(BENCH_GRIPPER_ARGS)

# Recordings as MCAP: a 60 s, 1 kHz lockstep recording's size and write time, and the largest device
# command gap in real time with and without writing .mcap (about 30 s; not in `make test`).
# Figures in bench/README.md, "Recordings as MCAP".
bench-mcap: setup
	$(PY) bench/bench_mcap.py $(BENCH_MCAP_ARGS)

# Two arms in one ArmGroup on two franka-sim servers: start skew, both running, a dead link, the
# thread layout (about 2 minutes; not in `make test`). Figures in bench/README.md, "Two arms".
bench-pair: setup setup-franka-sim
	$(PY) bench/bench_pair.py $(BENCH_PAIR_ARGS)

# jtac beside franky, franka-rs, aiofranka and a bare pylibfranka loop on franka-sim, from the robot's
# side: 4 workloads x 3 link faults, each peer in its own venv (scripts/setup_peers.sh). About 30 minutes
# with 5 runs per cell, 7 with BENCH_PEERS_ARGS=--quick; not in `make test`. Figures in bench/README.md,
# "Side by side with every Franka stack".
bench-peers: setup setup-franka-sim setup-peers
	$(PY) bench/bench_franka_peers.py $(BENCH_PEERS_ARGS)

# The wheel (scripts/build_wheel.sh): build/wheel/dist/jtac_py-<version>-cp311-cp311-manylinux_*.whl,
# built in build/wheel/cmake without the C++ tests and repaired by auditwheel (docs/setup.md, "The wheel").
.PHONY: wheel test-wheel
wheel: setup-demo
	@scripts/build_wheel.sh

# The wheel as a user gets it: installed into an empty venv under /tmp, then `jtac demo --lockstep`,
# `jtac doctor` and the public API's smoke test run from outside the tree (scripts/test_wheel.sh);
# first the same demo verb and the version check in the tree (test/wheel).
test-wheel: setup
	$(PYTEST) test/wheel
	@scripts/test_wheel.sh

# The reference docs (mkdocs.yml): the guides in docs/ and the API reference from the docstrings
# (docs/reference/, written from jtac_py.__all__ by docs/gen_reference.py), built with --strict (a
# warning, e.g. a broken link or cross-reference, fails) into build/docs/: open build/docs/index.html.
# Installs requirements-docs.txt into the venv first when it changed. About 5 s; `make lint` runs it
# with DOCS_GENERATE=--check (the generated pages must be current).
DOCS_GENERATE ?=
.PHONY: docs
docs:
	@want=$$(sha256sum requirements-docs.txt | cut -d' ' -f1); \
	if [ "$$(cat $(VENV)/.jtac-requirements-docs.sha256 2>/dev/null)" != "$$want" ]; then \
	  $(PY) -m pip install -q -r requirements-docs.txt -c requirements.txt && echo "$$want" > $(VENV)/.jtac-requirements-docs.sha256; \
	fi
	$(PY) docs/gen_reference.py $(DOCS_GENERATE)
	$(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf build $(VENV) .venv-sim
