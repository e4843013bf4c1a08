# The short commands. Each one installs what it needs first (scripts/setup.sh).
#   make demo    compile a model, run it, print result, cost and memory
#   make test    every test: C (host and ASan/UBSan), cross builds, Python
#   make size    the runtime core's footprint on each Cortex-M target
#   make bench   instruction-count benchmarks
#   make fuzz    the structure-aware fuzzer for FUZZ_SECONDS (default 1800), with coverage
PYTHON := /usr/bin/python3
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TARGET ?= cortex-m55
FUZZ_SECONDS ?= 1800
export PTEC_SHARED ?= $(abspath $(CURDIR)/../shared)

.PHONY: all setup host host-asan cross test test-c test-python test-fuzz demo size bench fuzz clean

all: host

setup:
	@scripts/setup.sh

host: setup
	@cmake --preset host >/dev/null
	@cmake --build --preset host -j $(JOBS)

host-asan: setup
	@cmake --preset host-asan >/dev/null
	@cmake --build --preset host-asan -j $(JOBS)

cross: setup
	@for t in cortex-m55 cortex-m33; do \
	  cmake --preset $$t >/dev/null && cmake --build --preset $$t -j $(JOBS) || exit 1; \
	done

test-c: host host-asan cross
	@ctest --preset host -j $(JOBS)
	@ctest --preset host-asan -j $(JOBS)

test-python: host
	@if [ -d tests/python ] && ls tests/python/test_*.py >/dev/null 2>&1; then \
	  PTEC_STRICT=1 PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q tests/python; \
	fi

# A short fuzz run from the seeds alone (fixed seed, 50 s); `make fuzz` is the long one.
test-fuzz: setup
	@scripts/fuzz.sh --seconds 50 --fresh

test: test-c test-python test-fuzz

# The demo builds what it needs (ptec-run, the runner) quietly, with a
# progress line per step.
demo: setup
	@scripts/demo.sh $(TARGET)

size: setup
	@scripts/size.sh

bench: host
	@bench/run_all.sh

fuzz: setup
	@scripts/fuzz.sh --seconds $(FUZZ_SECONDS) --coverage

clean:
	rm -rf build
