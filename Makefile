# The two commands a newcomer needs: `make run` and `make test`. Each installs
# what is missing, builds, fetches the models, then does its job.

BUILD_DIR ?= build
TSAN_BUILD_DIR ?= build-tsan
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 2
JOBS ?= $(shell nproc)
LADDER := $(BUILD_DIR)/bin/ladder
PYTHON := .venv/bin/python

.PHONY: all deps build build-tsan build-fuzz sanitizer-builds model model-gemma3 model-draft-pair run fleet test \
	test-unit test-asan test-tsan fuzz test-python test-avx2-path test-scalar-path test-soak test-long clean

all: build

deps:
	@scripts/install_deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The sanitizer builds link the Release build's xgrammar rather than compiling
# it again (cmake/xgrammar.cmake says why).
PREBUILT_XGRAMMAR := -DLADDER_XGRAMMAR_PREBUILT=$(abspath $(BUILD_DIR))/lib/libxgrammar.a

# The kernels too: the sanitizer builds leave them uninstrumented
# (src/ladder/kernels/cpu/CMakeLists.txt says why).
PREBUILT_KERNELS := -DLADDER_KERNELS_PREBUILT=$(abspath $(BUILD_DIR))/lib/libladder_kernels_cpu.a

# The engine and server unit tests under ThreadSanitizer.
define build_tsan
	@cmake -S . -B $(TSAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLADDER_TSAN=ON \
		-DLADDER_WERROR=OFF $(PREBUILT_XGRAMMAR) $(PREBUILT_KERNELS) > /dev/null
	@cmake --build $(TSAN_BUILD_DIR) -j $(JOBS) --target unit_engine unit_server
endef
build-tsan: build
	$(build_tsan)

# The fuzz targets of tests/fuzz/, with clang, libFuzzer, ASan and UBSan; and
# the GGUF loader's hostile-file tests (unit_gguf), which want exactly those
# sanitizers on the loader: this build has them on every library, so it runs
# them too rather than a third sanitizer build compiling the loader again.
define build_fuzz
	@cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLADDER_FUZZ=ON \
		-DLADDER_WERROR=OFF $(PREBUILT_XGRAMMAR) $(PREBUILT_KERNELS) \
		-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ > /dev/null
	@cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target fuzzers unit_gguf
endef
build-fuzz: build
	$(build_fuzz)

# The two sanitizer builds, for `test` to run in the background once the
# Release build is done (it is their only prerequisite: its
# libxgrammar.a and kernels).
sanitizer-builds:
	$(build_tsan)
	$(build_fuzz)

model: deps
	@scripts/fetch_model.sh smollm2

# Gemma 3 270M: a SentencePiece vocabulary of 262k tokens and the second
# architecture; `make test` fetches it for its fidelity tests.
model-gemma3: deps
	@scripts/fetch_model.sh gemma3

# The draft-model pair of the speculative decoding tests and benchmarks: a
# Q8_0 copy of SmolLM2 as the target (written by the build's own GGUF writer
# and reference quantizers, never committed); the Q4_1 file drafts for it.
DRAFT_PAIR_TARGET := $(BUILD_DIR)/fixtures/SmolLM2-135M-Instruct.Q8_0.gguf
model-draft-pair: build model
	@test -f $(DRAFT_PAIR_TARGET) || { mkdir -p $(dir $(DRAFT_PAIR_TARGET)) && \
		$(BUILD_DIR)/bin/make_target_copy models/SmolLM2-135M-Instruct.Q4_1.gguf \
			$(DRAFT_PAIR_TARGET).tmp Q8_0 && mv $(DRAFT_PAIR_TARGET).tmp $(DRAFT_PAIR_TARGET); }

# An OpenAI-compatible server on http://127.0.0.1:8080 (README, "Serving"),
# with a chat and a live dashboard at that address in a browser; Ctrl-C
# drains and stops it.
run: build model
	$(LADDER) serve

# A fleet on loopback, in the foreground (README, "A fleet behind HAProxy"):
# redis-server, FLEET_REPLICAS (default 2) replicas with -t 1 and HAProxy on
# http://127.0.0.1:8080, routing by prompt prefix. Ctrl-C stops them all.
fleet: build model
	@LADDER=$(abspath $(LADDER)) scripts/fleet.sh

# Every test. The Release build's test stages leave a good share of the CPU
# idle (model loads, servers waiting on their sockets, one-thread phases), so
# the sanitizer builds compile meanwhile in the background at the lowest
# priority (nice 19: they take what the tests leave and barely slow them).
# Their output goes to SANITIZER_BUILD_LOG, printed if they fail. The
# sanitizer and fuzz stages run once both are done.
SANITIZER_BUILD_LOG := $(BUILD_DIR)/logs/sanitizer-builds.log
test: build model model-gemma3 model-draft-pair
	@mkdir -p $(dir $(SANITIZER_BUILD_LOG))
	@nice -n 19 $(MAKE) --no-print-directory sanitizer-builds > $(SANITIZER_BUILD_LOG) 2>&1 & \
	builds=$$!; \
	$(MAKE) --no-print-directory test-unit test-python test-avx2-path test-scalar-path test-soak; \
	tests=$$?; \
	if ! wait $$builds; then \
		echo "the sanitizer builds failed:"; cat $(SANITIZER_BUILD_LOG); exit 1; \
	fi; \
	[ $$tests -eq 0 ] || exit $$tests
	@$(MAKE) --no-print-directory test-asan test-tsan fuzz

test-unit: build model-draft-pair
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

test-asan: build-fuzz
	@$(FUZZ_BUILD_DIR)/bin/unit_gguf --gtest_brief=1

# Once each, one process per binary (the model loads once); any report fails.
# The speculative-decoding engine tests are left out here: they verify
# outputs token for token over many steps (minutes of CPU without the
# sanitizer) and add no threads of their own; test-unit runs them.
test-tsan: build-tsan model
	@TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(TSAN_BUILD_DIR)/bin/unit_engine --gtest_brief=1 \
		--gtest_filter='-Speculative*'
	@TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(TSAN_BUILD_DIR)/bin/unit_server --gtest_brief=1

# Each fuzz target for FUZZ_SECONDS, FUZZ_JOBS at a time; any crash fails.
fuzz: build-fuzz model model-gemma3
	@scripts/run_fuzzers.sh $(FUZZ_BUILD_DIR) $(FUZZ_SECONDS) $(FUZZ_JOBS)

test-python: build model
	@LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) -m pytest -q tests/model
	@# A session of its own: tests/model imports helpers from its conftest module.
	@LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) -m pytest -q tests/e2e

# The model fidelity and batch-invariance tests again on the AVX2 kernels, which
# the default run skips on an AVX-512 CPU (every path must give llama.cpp's
# tokens; the kernel tests compare each path with the scalar reference).
test-avx2-path: build model model-gemma3
	@if grep -q avx512_vnni /proc/cpuinfo 2>/dev/null; then \
		LADDER_CPU=avx2 LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) -m pytest -q \
			tests/model/test_fidelity.py tests/model/test_batch_invariance.py; \
	else echo "test-avx2-path: no AVX-512 VNNI here, the default run was the avx2 path"; fi

# The fidelity tests on the scalar kernels (what a CPU without AVX2 runs: the
# x86 lane order in plain C++): greedy continuations of the five prompts on
# both models, and batch invariance. Left out, as minutes of CPU on this path:
# the next-token distributions, perplexity and Gemma 3's 1600-token sequence
# past its sliding window. The avx2 and avx512 runs have them, and the kernel
# tests show every path gives the scalar path's bits, prefill and decode. Also
# left out: decoding after a 700-token prefix, which exists for the split
# attention of the SIMD paths (the scalar path has none) and took four and a
# half of this target's six minutes.
test-scalar-path: build model model-gemma3
	@LADDER_CPU=scalar LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) -m pytest -q \
		tests/model/test_fidelity.py tests/model/test_batch_invariance.py \
		-k "not perplexity and not sliding_window and not next_token_distributions \
			and not long_context"

# Two minutes of mixed traffic, hang-ups and bad input against a fresh server
# (scripts/soak.py): its memory and KV blocks must stay flat, every answer be
# the expected one.
test-soak: build model
	@LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) scripts/soak.py --duration 120 --sample 20

# The model tests marked long (minutes of CPU each, left out of `make test`):
# fast attention against exact over a 4,096-token context on both models.
test-long: build model model-gemma3
	@LADDER_LONG_TESTS=1 LADDER_BIN=$(abspath $(LADDER)) $(PYTHON) -m pytest -q tests/model -m long

clean:
	rm -rf $(BUILD_DIR) $(TSAN_BUILD_DIR) $(FUZZ_BUILD_DIR)
