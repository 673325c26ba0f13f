# dynpmu: the two commands of the README, and the builds behind them.
#   make demo   build, then run the main job on the simulated cluster
#   make test   build with sanitizers and run every test
JOBS ?= 2
CMAKE ?= cmake

.PHONY: all build demo test test-main test-clang test-tsan test-aarch64 perf-aarch64 bench clean

all: build

build:
	@scripts/deps.sh build
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DDPMU_TESTS=OFF >/dev/null
	$(CMAKE) --build build -j$(JOBS)

demo:
	@scripts/deps.sh demo
	$(CMAKE) -S . -B build -DCMAKE_BUILD_TYPE=Release -DDPMU_TESTS=OFF >/dev/null
	$(CMAKE) --build build -j$(JOBS)
	build/dynpmu demo

test:
	@scripts/deps.sh test
	$(MAKE) --no-print-directory test-main test-clang test-tsan test-aarch64

# gcc at make demo's optimisation level (its optimiser finds warnings -O0
# hides), AddressSanitizer + UndefinedBehaviorSanitizer, every test.
# The arm64 kernel test (tests/vm) runs the static perf-only dynpmu in
# the guest: perf-aarch64 builds it first.
test-main: perf-aarch64
	$(CMAKE) -S . -B build-test -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=gcc \
		-DDPMU_SANITIZE=address,undefined \
		-DDPMU_VM_DYNPMU=$(CURDIR)/build-perf-aarch64/dynpmu >/dev/null
	$(CMAKE) --build build-test -j$(JOBS)
	cd build-test && ctest --output-on-failure -j$(JOBS)

# clang must build everything warning-free too; its build also holds the
# libFuzzer targets, run briefly from their checked-in corpus.
test-clang:
	$(CMAKE) -S . -B build-clang -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang >/dev/null
	$(CMAKE) --build build-clang -j$(JOBS)
	cd build-clang && ctest --output-on-failure -L fuzz

# The collector under ThreadSanitizer.
test-tsan:
	$(CMAKE) -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
		-DDPMU_SANITIZE=thread -DDPMU_ONLY_COLLECT=ON >/dev/null
	$(CMAKE) --build build-tsan -j$(JOBS)
	cd build-tsan && ctest --output-on-failure

# The collector's aarch64 platform layer, cross-built and run under qemu-aarch64.
test-aarch64:
	$(CMAKE) -S . -B build-aarch64 -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DDPMU_ONLY_COLLECT=ON >/dev/null
	$(CMAKE) --build build-aarch64 -j$(JOBS)
	cd build-aarch64 && ctest --output-on-failure
	$(MAKE) --no-print-directory perf-aarch64
	cd build-perf-aarch64 && ctest --output-on-failure -L perf

# dynpmu for real arm64 Linux: the perf backend only, linked statically
# (build-perf-aarch64/dynpmu; docs/hardware.md). The arm64 kernel test
# (tests/vm) runs it inside the guest.
perf-aarch64:
	@scripts/deps.sh perf-aarch64
	@scripts/arm64-jansson.sh build-perf-aarch64/arm64-deps
	$(CMAKE) -S . -B build-perf-aarch64 -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DDPMU_PERF_ONLY=ON \
		-DDPMU_STATIC=ON -DDPMU_TESTS=OFF \
		-DDPMU_DEPS_ROOT=$(CURDIR)/build-perf-aarch64/arm64-deps >/dev/null
	$(CMAKE) --build build-perf-aarch64 -j$(JOBS) --target dynpmu

bench: build
	@for b in build/bench/bench_*; do [ -x "$$b" ] && "$$b"; done

clean:
	rm -rf build build-test build-clang build-tsan build-aarch64 build-perf-aarch64
