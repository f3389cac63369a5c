# The two commands a newcomer needs: `make run` and `make test`. Each installs
# what is missing, builds, fetches the models, then does its job.

BUILD_DIR ?= build
ASAN_BUILD_DIR ?= build-asan
JOBS ?= $(shell nproc)
LADDER := $(BUILD_DIR)/bin/ladder
PYTHON := .venv/bin/python

.PHONY: all deps build build-asan model model-gemma3 model-draft-pair run test test-unit test-asan \
	test-python test-avx2-path clean

all: build

deps:
	@scripts/install_deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The GGUF loader's hostile-file tests also run under AddressSanitizer.
build-asan: deps
	@cmake -S . -B $(ASAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLADDER_ASAN=ON > /dev/null
	@cmake --build $(ASAN_BUILD_DIR) -j $(JOBS) --target unit_gguf

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

# An OpenAI-compatible server on http://127.0.0.1:8080 (README, "Serving");
# Ctrl-C drains and stops it.
run: build model
	$(LADDER) serve

test: build model model-gemma3 model-draft-pair test-unit test-asan test-python test-avx2-path

test-unit: build model-draft-pair
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	@cd $(ASAN_BUILD_DIR) && ctest --output-on-failure -R '^Gguf'

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

clean:
	rm -rf $(BUILD_DIR) $(ASAN_BUILD_DIR)
