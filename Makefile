# Entry points for developers and CI: on a fresh Debian 12 machine `make demo` and `make test`
# install what is missing (scripts/setup.sh), build, and run. `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

JOBS ?= 2
PREFIX ?= /usr/local
BUILD_TYPE ?= RelWithDebInfo
CMAKE_ARGS ?=
CTEST_TIMEOUT ?= 300
VENV := .venv
VBIN := $(VENV)/bin
CMAKE_CONFIGURE = cmake -S . -G Ninja $(CMAKE_ARGS)
CTEST = ctest --output-on-failure --timeout $(CTEST_TIMEOUT) -j$(JOBS)
FORMAT_DIRS := src include tests bench tools examples
# ThreadSanitizer covers the threaded code: the daemon (in process and as the client tests'
# server) and the client. The interposer's end-to-end test preloads into uninstrumented
# programs, which TSan cannot do, so it is left to the ASan run.
TSAN_TARGETS := iorelayd daemon_test daemon_startup_test client_daemon_test relay_test
TSAN_SKIP := preload_e2e|PreloadEndToEnd
# Sanitizer runs: fail on the first report, with stack traces.
SAN_ENV := ASAN_OPTIONS=detect_leaks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

.PHONY: help deps build test test-cxx test-python lint test-asan test-tsan tsa-check ci demo \
	demo-testbed install examples format format-check bench fuzz testbed-deps clean distclean

help:
	@echo "make demo        install deps, build, fio through 2 daemons, default exploration, report"
	@echo "                 (on the testbed as root with /dev/fuse, its packages installed first;"
	@echo "                 else locally; DEMO_ON=local|testbed chooses)"
	@echo "make demo-testbed  (root) the exploration on the testbed: where forwarding wins"
	@echo "make test        install deps, build, run the C++ (ctest) and Python (pytest) tests"
	@echo "make test-asan   build in build-asan with AddressSanitizer and run ctest"
	@echo "make test-tsan   build in build-tsan with ThreadSanitizer and run ctest -L daemon"
	@echo "make tsa-check   clang -Wthread-safety -Werror over the daemon's and client's sources"
	@echo "                 (the lock annotations of src/common/mutex.h), in build-tsa"
	@echo "make examples    build examples/ against an install in a temporary prefix, run them"
	@echo "make ci          what CI runs: testbed-deps, test, examples, lint, format-check,"
	@echo "                 tsa-check, test-asan, test-tsan, fuzz"
	@echo "make fuzz        clang libFuzzer build in build-fuzz; each target FUZZ_SECONDS (60)"
	@echo "make bench       micro-benchmarks (scheduler decision cost, placement, request rate)"
	@echo "                 JSON in results/bench; a few minutes"
	@echo "make testbed-deps  the packages of \`iorelay testbed\` (GlusterFS, Slurm, munge); root"
	@echo "make deps | build | lint | format | format-check | install [PREFIX=...] | clean | distclean"
	@echo "long benchmarks (each writes bench/results/): .venv/bin/python bench/datapath.py,"
	@echo "  bench/schedulers.py, bench/two_apps.py"

deps:
	bash scripts/setup.sh

build: deps
	$(CMAKE_CONFIGURE) -B build -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DIORELAY_WERROR=ON
	cmake --build build -j$(JOBS)

# Chromium too (scripts/setup.sh browser): a test renders the analysis report in it.
test: build
	bash scripts/setup.sh browser
	$(CTEST) --test-dir build
	$(VBIN)/pytest -q python/tests

# Only the C++ or only the Python tests, without re-running setup (for quick iterations).
test-cxx:
	$(CTEST) --test-dir build

test-python:
	$(VBIN)/pytest -q python/tests

lint: deps
	$(VBIN)/ruff check python bench tools
	$(VBIN)/ruff format --check python bench tools

test-asan: deps
	$(CMAKE_CONFIGURE) -B build-asan -DCMAKE_BUILD_TYPE=Debug -DIORELAY_WERROR=ON \
		-DIORELAY_SANITIZE=address
	cmake --build build-asan -j$(JOBS)
	$(SAN_ENV) $(CTEST) --test-dir build-asan

test-tsan: deps
	$(CMAKE_CONFIGURE) -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DIORELAY_WERROR=ON \
		-DIORELAY_SANITIZE=thread
	cmake --build build-tsan -j$(JOBS) --target $(TSAN_TARGETS)
	$(SAN_ENV) $(CTEST) --test-dir build-tsan -L daemon -E '$(TSAN_SKIP)'

# Lock discipline checked by the compiler: clang's thread-safety analysis of the annotations of
# src/common/mutex.h (GUARDED_BY, REQUIRES...), as errors, over the object files of the daemon's
# and the client's libraries and the interposer (TSA_DIRS; not tests, benchmarks or tools). No
# optimisation and no debug information: only the front end's diagnostics matter here.
TSA_DIRS := common backend dispatch daemon client preload relay
tsa-check:
	bash scripts/setup.sh fuzz
	CC=clang-14 CXX=clang++-14 $(CMAKE_CONFIGURE) -B build-tsa -DCMAKE_BUILD_TYPE= \
		-DIORELAY_WERROR=ON -DIORELAY_THREAD_SAFETY=ON -DIORELAY_BUILD_TESTS=OFF \
		-DIORELAY_BUILD_BENCH=OFF >/dev/null
	objects=$$(ninja -C build-tsa -t targets all | \
		grep -oE '^src/($(shell echo $(TSA_DIRS) | tr ' ' '|'))/CMakeFiles/[^:]+\.o'); \
	ninja -C build-tsa -j$(JOBS) $$objects

# Sequential on purpose: each step uses both cores, and a failure stops the run early.
# CI is root: testbed-deps lets `make test` run the testbed tests (~30 s; python/tests/test_testbed.py).
ci:
	$(MAKE) testbed-deps
	$(MAKE) test
	$(MAKE) examples
	$(MAKE) lint
	$(MAKE) format-check
	$(MAKE) tsa-check
	$(MAKE) test-asan
	$(MAKE) test-tsan
	$(MAKE) fuzz

# A verified fio run through 2 daemons, then the default exploration and its report: on the
# testbed when this machine can build one (as root with /dev/fuse it installs the testbed's
# packages first, as `make testbed-deps`), else on local daemons, saying why
# (scripts/demo_explore.sh). DEMO_ON=local or DEMO_ON=testbed chooses. Both are resumable (a
# second `make demo` reuses the results directory); their wall times are in the README.
DEMO_ON ?= auto
DEMO_DIR ?= results/demo
DEMO_TESTBED_DIR ?= results/demo-testbed
demo: build
	$(VBIN)/iorelay demo
	DEMO_ON=$(DEMO_ON) DEMO_DIR=$(DEMO_DIR) DEMO_TESTBED_DIR=$(DEMO_TESTBED_DIR) \
		IORELAY=$(VBIN)/iorelay bash scripts/demo_explore.sh

# The exploration on the testbed (root; make testbed-deps): holds the testbed (brings one up
# unless one is up), runs sweep_testbed.toml (resumable), writes the report; the testbed's last
# user takes down a testbed brought up so.
demo-testbed: build
	$(VBIN)/iorelay demo --testbed --out $(DEMO_TESTBED_DIR)
	@echo "report: $(DEMO_TESTBED_DIR)/report/report.html"

install: build
	cmake --install build --prefix $(PREFIX)

# examples/ built as a user builds them, against the install (`make install PREFIX=` into a
# temporary prefix), and run through daemons started by `iorelay run` (examples/README.md).
examples: build
	prefix=$$(mktemp -d /tmp/iorelay-prefix-XXXXXX); trap 'rm -rf "$$prefix"' EXIT; \
	cmake --install build --prefix "$$prefix" >/dev/null; \
	bash examples/run_examples.sh "$$prefix" $(VBIN)/iorelay

# C and C++ sources under FORMAT_DIRS, in the style of .clang-format.
FORMAT_FILES = $$(find $(FORMAT_DIRS) -type f \( -name '*.cc' -o -name '*.h' -o -name '*.c' \
	-o -name '*.cpp' -o -name '*.hpp' \))

format:
	clang-format -i $(FORMAT_FILES)
	@if [[ -x $(VBIN)/ruff ]]; then $(VBIN)/ruff format python bench tools; fi

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

# The micro-benchmarks (a few minutes): every Google Benchmark program and the forwarded
# request rate, JSON results in results/bench. The long benchmarks are their own commands:
# bench/datapath.py, bench/schedulers.py, bench/two_apps.py (see README).
bench: build
	$(VBIN)/python bench/micro.py --out results/bench

# libFuzzer targets (tests/fuzz) under ASan+UBSan, each for FUZZ_SECONDS from the seed corpus
# in tests/fuzz/corpus (copied: what the run finds stays in build-fuzz/corpus). A finding
# fails the target and leaves its input in build-fuzz/ as crash-* or leak-*.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := frame_fuzz path_fuzz session_fuzz
fuzz:
	bash scripts/setup.sh fuzz
	CC=clang-14 CXX=clang++-14 $(CMAKE_CONFIGURE) -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DIORELAY_SANITIZE=fuzzer -DIORELAY_BUILD_TESTS=OFF -DIORELAY_BUILD_BENCH=OFF
	cmake --build build-fuzz -j$(JOBS) --target $(FUZZ_TARGETS)
	for t in $(FUZZ_TARGETS); do \
		corpus=build-fuzz/corpus/$${t%_fuzz}; mkdir -p $$corpus; \
		cp -n tests/fuzz/corpus/$${t%_fuzz}/* $$corpus/; \
		(cd build-fuzz && $(SAN_ENV) tests/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) \
			-print_final_stats=1 corpus/$${t%_fuzz}) 2>&1 | tail -n 12; \
	done

# The testbed's packages (GlusterFS, Slurm, munge; docs/testbed.md). `make demo` installs them
# too as root with /dev/fuse; `make test` never does. Their services are kept from starting.
testbed-deps:
	bash scripts/setup.sh testbed

clean:
	rm -rf build build-asan build-tsan build-tsa build-fuzz

distclean: clean
	rm -rf $(VENV) results .pytest_cache .ruff_cache
	find python -name __pycache__ -type d -prune -exec rm -rf {} +
