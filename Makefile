# tallmc — build, serve and test. Each target installs what is missing and skips what is present.
#
#   make build   release CLI (target/release/tallmc) and the playground's wasm (www/pkg)
#   make serve   build, then serve www/ on http://127.0.0.1:$(PORT)/ (default 8080)
#   make test    every test: fmt, clippy, Rust tests, no_std targets, browser tests, Python tests
#   make npm     the npm package `tallmc` (www/npm/): target/npm/tallmc-<version>.tgz
#   make python  the Python wheel (target/wheels) in the venv target/venv (created if missing)
#   make bench-peers  tallmc against NumPyro HMCECS and BlackJAX SGLD on one 10^6-row file
#                (bench/peers/; its own venv target/peers-venv; never part of make test)
#   make fuzz    the fuzz targets (tests/tests/fuzz.rs, tests/browser/url-params.test.mjs) with
#                FUZZ_CASES (10^6) generated inputs each

PORT ?= 8080
HOST ?= 127.0.0.1
NICE ?= nice
CARGO ?= cargo
# Tools that cargo installs land in $(CARGO_HOME)/bin (default ~/.cargo/bin).
CARGO_BIN := $(or $(CARGO_HOME),$(HOME)/.cargo)/bin
export PATH := $(CARGO_BIN):$(PATH)

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
WBG_VERSION := $(shell awk '$$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $$3); print $$3; exit }' Cargo.lock)
RUST_TARGETS := wasm32-unknown-unknown thumbv7em-none-eabihf
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: build serve test deps rust-targets wasm-bindgen-cli wasm-pack node-deps chromium cli wasm \
        vendor rust-checks browser-test bench bench-peers peers-venv fuzz npm python python-venv python-test

build: cli wasm vendor

serve: build
	@echo "tallmc playground: http://$(HOST):$(PORT)/"
	node www/serve.mjs --root www --host $(HOST) --port $(PORT)

test: deps rust-checks build browser-test python-test

# ---------------------------------------------------------------------------------------------
# Tests

# tallmc-python has no Rust tests (cli/python/tests test it, and maturin builds it for python-test).
rust-checks: rust-targets
	$(CARGO) fmt --all -- --check
	$(NICE) $(CARGO) clippy --workspace --all-targets -- -D warnings
	$(NICE) $(CARGO) test --workspace --release --exclude tallmc-python
	$(NICE) $(CARGO) build -p tallmc-core --target wasm32-unknown-unknown
	$(NICE) $(CARGO) build -p tallmc-core --target thumbv7em-none-eabihf

browser-test: node-deps chromium build npm
	TALLMC_NPM_TARBALL=$(NPM_TARBALL) node --test --test-concurrency=1 tests/browser/

# The Python package's tests (cli/python/tests): the same draws as the CLI, the API, Ctrl-C, the
# built wheel in a fresh venv, and the Dask example on a local cluster.
python-test: cli python
	$(NICE) $(VENV)/bin/python -m pytest cli/python/tests -q

# CSV parsing, settings, the web bindings and the playground's URL parameters driven by generated
# input (seeded; one line per target with its counts and duration). `make test` runs 3 000 cases
# per Rust target and 5 000 URL queries.
FUZZ_CASES ?= 1000000
fuzz:
	TALLMC_FUZZ_CASES=$(FUZZ_CASES) $(NICE) $(CARGO) test -p tallmc-tests --release --test all fuzz:: -- --nocapture --test-threads=2
	TALLMC_FUZZ_CASES=$(FUZZ_CASES) node --test tests/browser/url-params.test.mjs

# Every ratio claimed in BENCHMARKS.md, each from one run on this machine: HMC-ECS vs NUTS,
# SGLD vs a full gradient, SMH-2 vs MH, minibatch MH vs AustereMH (`tallmc bench`; BENCH_FULL=1
# for the full sizes), then wasm vs native and the playground's stop latency (browser).
bench: node-deps chromium build
	target/release/tallmc bench $(if $(BENCH_FULL),--full)
	node tests/browser/bench.mjs

# tallmc against its JAX peers (issue 21): NumPyro HMCECS (NUTS inside, m = 1 300, 500 + 2 000)
# and BlackJAX SGLD (batch 1 300, 20 000 iterations in lax.scan) on the same CSV file as `tallmc
# run`, one table of ratios (bench/peers/README.md). A few minutes; the data file (587 MB, ~50 s
# to write) and the venv are made once. Not part of `make test`.
PEERS_VENV ?= target/peers-venv
PEERS_DATA ?= target/peers/logistic_1e6.csv
bench-peers: cli peers-venv
	@if [ ! -f $(PEERS_DATA) ]; then \
	  mkdir -p $(dir $(PEERS_DATA)) && \
	  $(PEERS_VENV)/bin/python bench/peers/gen_data.py $(PEERS_DATA) || \
	    { echo "make: cannot write $(PEERS_DATA) (bench/peers/gen_data.py failed; see above)"; exit 1; }; \
	fi
	$(PEERS_VENV)/bin/python bench/peers/run.py --data $(PEERS_DATA) --tallmc target/release/tallmc --out $(dir $(PEERS_DATA))

# The peers' venv holds exactly bench/peers/requirements.txt (a copy kept in the venv says which
# requirements it was made from; a different file makes a new venv).
peers-venv:
	@if [ ! -x $(PEERS_VENV)/bin/python ] || ! cmp -s bench/peers/requirements.txt $(PEERS_VENV)/requirements.txt; then \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	    { echo "make: the peers need Python 3.11 or newer ($(PYTHON) is older; PYTHON=... to pick one)"; exit 1; }; \
	  rm -rf $(PEERS_VENV); \
	  echo "creating $(PEERS_VENV) from bench/peers/requirements.txt (about 40 s)"; \
	  $(PYTHON) -m venv $(PEERS_VENV) || \
	    { echo "make: cannot create the venv $(PEERS_VENV) ($(PYTHON) -m venv failed; apt-get install python3-venv)"; exit 1; }; \
	  $(PEERS_VENV)/bin/python -m pip install --quiet -r bench/peers/requirements.txt || \
	    { echo "make: cannot install bench/peers/requirements.txt (pip install failed; see above)"; exit 1; }; \
	  cp bench/peers/requirements.txt $(PEERS_VENV)/requirements.txt; \
	fi

# ---------------------------------------------------------------------------------------------
# Build

# `make test` builds the CLI together with tallmc-web (target-specific, so for every prerequisite
# of `test`): the test build's features are the whole workspace's (tallmc-web's wasm-bindgen
# macros enable more of syn), and the CLI alone would resolve fewer and build syn, serde, clap,
# parquet and itself again (97 s on a clean clone).
test: CLI_WITH := -p tallmc-web
cli:
	$(NICE) $(CARGO) build --release -p tallmc $(CLI_WITH)

# wasm-pack builds www/pkg (with its package.json) using the wasm-bindgen CLI on PATH, pinned to
# Cargo.lock's version; `--mode no-install` forbids it to download anything. wasm-opt is off in
# web/Cargo.toml (see the comment there).
wasm: rust-targets wasm-bindgen-cli wasm-pack
	$(NICE) wasm-pack --quiet build web --release --target web --mode no-install --out-dir ../www/pkg

# The npm package: www/pkg, embed.js and what it loads (workers, wasm), www/npm/'s package.json, README
# and declarations, staged in target/npm/tallmc/ and packed by `npm pack` (www/npm/build.mjs).
# tests/browser/npm-package.test.mjs installs the tarball into a scratch site.
CRATE_VERSION := $(shell awk -F'"' '/^\[workspace\.package\]/ { p = 1 } p && /^version *=/ { print $$2; exit }' Cargo.toml)
NPM_TARBALL := $(CURDIR)/target/npm/tallmc-$(CRATE_VERSION).tgz
npm: wasm node-deps
	node www/npm/build.mjs --out target/npm

# uPlot is served from www/vendor (copied from node_modules; no CDN).
vendor: node-deps
	mkdir -p www/vendor
	cp node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css www/vendor/

# The Python package: maturin builds the abi3 wheel (CPython >= 3.11) into target/wheels, then it
# is installed into the venv. Cargo builds the extension like the other crates (crates.io).
VENV ?= target/venv
PYTHON ?= python3
PY_DEPS := maturin numpy pandas polars arviz pytest tqdm "dask[distributed]"

python: python-venv
	rm -f target/wheels/tallmc-*.whl
	$(NICE) $(VENV)/bin/maturin build --quiet --release -m cli/python/Cargo.toml --out target/wheels
	$(VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps target/wheels/tallmc-*.whl

# ---------------------------------------------------------------------------------------------
# Installers: each checks first and does nothing when the tool is present.

python-venv:
	@if [ ! -x $(VENV)/bin/python ]; then \
	  $(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
	    { echo "make: the Python package needs Python 3.11 or newer ($(PYTHON) is older; PYTHON=... to pick one)"; exit 1; }; \
	  $(PYTHON) -m venv $(VENV) || \
	    { echo "make: cannot create the venv $(VENV) ($(PYTHON) -m venv failed; apt-get install python3-venv)"; exit 1; }; \
	fi
	@if [ ! -x $(VENV)/bin/maturin ] || ! $(VENV)/bin/python -c 'import numpy, pandas, polars, arviz, pytest, tqdm, distributed' 2>/dev/null; then \
	  echo "installing the Python packages into $(VENV): $(PY_DEPS)"; \
	  $(VENV)/bin/python -m pip install --quiet $(PY_DEPS) || \
	    { echo "make: cannot install the Python packages (pip install failed; see above)"; exit 1; }; \
	fi

deps: rust-targets wasm-bindgen-cli wasm-pack node-deps chromium

rust-targets:
	@command -v rustup >/dev/null || { echo "make: cannot add the Rust targets: rustup is not installed (https://rustup.rs)"; exit 1; }
	@installed="$$(rustup target list --installed)"; \
	for t in $(RUST_TARGETS); do \
	  echo "$$installed" | grep -qx "$$t" || rustup target add "$$t" || \
	    { echo "make: cannot install the Rust target $$t (rustup target add $$t failed)"; exit 1; }; \
	done

# Never `--locked`: the tools' own lock files pin crates the registry no longer serves.
wasm-bindgen-cli:
	@if [ "$$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(WBG_VERSION)" ]; then \
	  echo "installing wasm-bindgen-cli $(WBG_VERSION) (about 2.5 min on 2 cores)"; \
	  $(NICE) $(CARGO) install wasm-bindgen-cli --version $(WBG_VERSION) --force || \
	    { echo "make: cannot install wasm-bindgen-cli $(WBG_VERSION) (cargo install failed; see above)"; exit 1; }; \
	fi

wasm-pack:
	@if ! wasm-pack --version >/dev/null 2>&1; then \
	  echo "installing wasm-pack (about 3 min on 2 cores)"; \
	  $(NICE) $(CARGO) install wasm-pack || \
	    { echo "make: cannot install wasm-pack (cargo install failed; see above)"; exit 1; }; \
	fi

node-deps:
	@command -v npm >/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y nodejs npm) || \
	  { echo "make: cannot install node and npm (apt-get failed); install Node.js 18 or newer by hand"; exit 1; }
	@if [ ! -d node_modules/uplot ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/typescript ]; then \
	  npm ci --no-audit --no-fund || { echo "make: cannot install the npm packages (npm ci failed; see above)"; exit 1; }; \
	fi

chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
	  ($(SUDO) apt-get update && $(SUDO) apt-get install -y chromium) || \
	    { echo "make: cannot install Chromium for the browser tests (apt-get install chromium failed)"; exit 1; }; \
	fi
