# irisc: the two commands a newcomer needs are `make demo` and `make test`.
# Both install what is missing first (scripts/setup.sh is idempotent).

CARGO ?= cargo
LLVM_BIN := /usr/lib/llvm-22/bin

.PHONY: all setup build build-release build-cuda gpu-bundle gpu-check demo test test-rust test-lit check-cycles bench bench-quick fmt clean-demo

all: build

setup:
	@./scripts/setup.sh

build: setup
	$(CARGO) build -p irisc-runtime -p irisc

build-release: setup
	$(CARGO) build --release -p irisc-runtime -p irisc

# irisc and a runtime archive with its GPU path (the runtime's `cuda` feature: the CUDA driver
# is loaded at run time, so this builds on a machine without CUDA). Executables built with
# `irisc build --target cuda` link this archive.
build-cuda: setup
	$(CARGO) build --release -p irisc
	$(CARGO) build --release -p irisc-runtime --features cuda

# What a GPU machine without Rust needs, stripped and compressed to fit what travels there
# (gpu-bundle/, ignored by git): irisc, the runtime archive and irisc-bench, all with their GPU
# paths. There: scripts/gpu_session.sh.
gpu-bundle: build-cuda
	$(CARGO) build --release -p irisc-bench --features cuda
	rm -rf gpu-bundle && mkdir -p gpu-bundle
	for f in irisc irisc-bench libirisc_runtime.a; do cp target/release/$$f gpu-bundle/$$f; done
	strip gpu-bundle/irisc gpu-bundle/irisc-bench
	strip --strip-debug gpu-bundle/libirisc_runtime.a
	xz -6 -T0 gpu-bundle/irisc gpu-bundle/irisc-bench gpu-bundle/libirisc_runtime.a
	du -sh gpu-bundle

# On a machine with an NVIDIA GPU: every example with three parties on the GPU against the
# plaintext definition, a CPU party with GPU parties, compute-sanitizer (scripts/gpu_check.sh).
gpu-check:
	./scripts/gpu_check.sh

# Compiles examples/iris_ids.irs, generates a gallery, keys and shares, runs the three parties
# as separate processes over TLS on localhost and prints each query's answer and the time taken.
demo: build-release
	@./scripts/demo.sh

# Every test: unit and property tests, end-to-end runs of three processes, lit tests of each stage.
test: build check-cycles test-rust test-lit

# No import cycle between the modules of either crate (scripts/check_import_cycles.py).
check-cycles:
	python3 scripts/check_import_cycles.py --self-test
	python3 scripts/check_import_cycles.py

test-rust:
	$(CARGO) test --workspace -- --test-threads=2

test-lit:
	IRISC=$(CURDIR)/target/debug/irisc $(LLVM_BIN)/lit -sv tests/lit

# Benchmarks (the irisc-bench crate): DIR/<section>.json and PNG charts. The runtime archive is
# built first because the sections that compile programs link it into their executables.
# Options: make bench BENCH_ARGS="--sections dot,table2 --out DIR --records N".
BENCH_ARGS ?=
bench: setup
	$(CARGO) build --release -p irisc-runtime
	$(CARGO) run --release -p irisc-bench -- $(BENCH_ARGS)

# Every section at tiny sizes: checks the pipeline in a minute or two; the figures mean little.
bench-quick: setup
	$(CARGO) build --release -p irisc-runtime
	$(CARGO) run --release -p irisc-bench -- --quick --out bench-out/quick $(BENCH_ARGS)

fmt:
	$(CARGO) fmt --all

clean-demo:
	rm -rf out/demo
