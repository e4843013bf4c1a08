# The short commands. Each one installs what it needs first (scripts/setup.sh).
#   make demo    compile a model, run it, print result, cost and memory
#                (TARGET=cortex-m33, cortex-m7, cortex-m4 or cortex-m3, or BOARD=<folder of boards/>;
#                NPU=1: person detection on an emulated M55 + Ethos-U55 model)
#   make test    every test: C (host and ASan/UBSan), cross builds, Python
#   make size    the runtime core's footprint on each Cortex-M target
#   make bench   instruction-count benchmarks
#   make fuzz    the structure-aware fuzzer for FUZZ_SECONDS (default 1800), with coverage
#   make mutate  plant each bug of tests/mutants/mutants.json, expect a test to catch it
#   make dist    source drops for vendor IDEs and Makefiles (host and TARGET) in build/dist
PYTHON := /usr/bin/python3
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TARGET ?= cortex-m55
FUZZ_SECONDS ?= 1800
export PTEC_SHARED ?= $(abspath $(CURDIR)/../shared)

.PHONY: all setup host host-asan cross test test-c test-python test-fuzz test-logs-clean demo size bench fuzz mutate dist clean

all: host

setup:
	@scripts/setup.sh

host: setup
	@cmake --preset host >/dev/null
	@cmake --build --preset host -j $(JOBS)

host-asan: setup
	@cmake --preset host-asan >/dev/null
	@cmake --build --preset host-asan -j $(JOBS)

# Every core's default board, then the i.MX93 M33 (remoteproc) board and
# its QEMU simulation.
cross: setup
	@for t in $$(scripts/cortex_m_cores.sh) imx93-m33 imx93-m33-sim; do \
	  cmake --preset $$t >/dev/null && cmake --build --preset $$t -j $(JOBS) || exit 1; \
	done

# Each runner leaves its JUnit report and exit status in TEST_LOGS for the
# summary at the end of `make test`, which runs every runner before failing.
TEST_LOGS := $(CURDIR)/build/test-logs
run_logged = mkdir -p $(TEST_LOGS); { $(2); rc=$$?; echo $$rc >$(TEST_LOGS)/$(1).rc; \
	[ "$(TEST_KEEP_GOING)" = 1 ] || exit $$rc; }

test-c: host host-asan cross
	@$(call run_logged,ctest-host,ctest --preset host -j $(JOBS) --output-junit $(TEST_LOGS)/ctest-host.xml)
	@$(call run_logged,ctest-asan,ctest --preset host-asan -j $(JOBS) --output-junit $(TEST_LOGS)/ctest-asan.xml)

# On $(JOBS) workers like ctest (pytest-xdist; scripts/setup.sh installs it),
# a test file per worker at a time (--dist loadfile), so a module's compiled
# models are built once, not once per worker. Without xdist: serially, and said.
test-python: host
	@if $(PYTHON) -c 'import xdist' 2>/dev/null; then par="-n $(JOBS) --dist loadfile"; else par=""; \
	  echo "test-python: pytest-xdist missing (scripts/setup.sh installs python3-pytest-xdist): running serially" >&2; fi; \
	$(call run_logged,pytest,PTEC_STRICT=1 PYTHONPATH=$(CURDIR)/python $(PYTHON) -m pytest -q $$par tests/python \
	  --junitxml=$(TEST_LOGS)/pytest.xml)

# A short fuzz run from the seeds alone (fixed seed, 50 s), then 20 s on the
# NPU model's command streams, 10 s on its weight decoder and 10 s on the
# i.MX93 model server behind RPMsg; `make fuzz` is
# the long one.
test-fuzz: setup
	@$(call run_logged,fuzz,scripts/fuzz.sh --seconds 50 --fresh)
	@$(call run_logged,fuzz-npu,scripts/fuzz.sh --seconds 20 --fresh --npu)
	@$(call run_logged,fuzz-mlw,scripts/fuzz.sh --seconds 10 --fresh --mlw)
	@$(call run_logged,fuzz-rpmsg,scripts/fuzz.sh --seconds 10 --fresh --rpmsg)

# Strict: a missing tool or data folder is a configuration error, and a skip
# not on tests/skip-allowlist.txt fails the summary.
test: export PTEC_STRICT = 1
test: TEST_KEEP_GOING = 1
test: test-logs-clean test-c test-python test-fuzz
	@$(PYTHON) scripts/test_summary.py $(TEST_LOGS) --allowlist tests/skip-allowlist.txt --strict

test-logs-clean:
	@rm -rf $(TEST_LOGS)

# The demo builds what it needs (ptec-run, the runner) quietly, with a
# progress line per step.
demo: setup
	@$(if $(filter 1,$(NPU)),scripts/demo_npu.sh,scripts/demo.sh $(if $(BOARD),$(BOARD),$(TARGET)))

size: setup
	@scripts/size.sh

bench: host cross
	@bench/run_all.sh

fuzz: setup
	@scripts/fuzz.sh --seconds $(FUZZ_SECONDS) --coverage

mutate: setup
	@$(PYTHON) scripts/mutate.py

dist: host
	@cmake --build --preset host --target ptec_dist
	@cmake --preset $(TARGET) >/dev/null && cmake --build --preset $(TARGET) --target ptec_dist

clean:
	rm -rf build
