# tallmc — build, serve and test. Each target installs what is missing and skips what is present.
#
#   make build   release CLI (target/release/tallmc) and the playground's wasm (www/pkg)
#   make serve   build, then serve www/ on http://127.0.0.1:$(PORT)/ (default 8080)
#   make test    every test: fmt, clippy, Rust tests, no_std targets, browser tests

PORT ?= 8080
HOST ?= 127.0.0.1
NICE ?= nice
CARGO ?= cargo
export PATH := $(HOME)/.cargo/bin:$(PATH)

# The wasm-bindgen CLI must match the wasm-bindgen crate in Cargo.lock exactly.
WBG_VERSION := $(shell awk '$$0 == "name = \"wasm-bindgen\"" { getline; gsub(/"/, "", $$3); print $$3; exit }' Cargo.lock)
WASM := target/wasm32-unknown-unknown/release/tallmc_web.wasm
RUST_TARGETS := wasm32-unknown-unknown thumbv7em-none-eabihf
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: build serve test deps rust-targets wasm-bindgen-cli node-deps chromium cli wasm vendor \
        rust-checks browser-test bench

build: cli wasm vendor

serve: build
	@echo "tallmc playground: http://$(HOST):$(PORT)/"
	node www/serve.mjs --root www --host $(HOST) --port $(PORT)

test: deps rust-checks build browser-test

# ---------------------------------------------------------------------------------------------
# Tests

rust-checks: rust-targets
	$(CARGO) fmt --all -- --check
	$(NICE) $(CARGO) clippy --workspace --all-targets -- -D warnings
	$(NICE) $(CARGO) test --workspace --release
	$(NICE) $(CARGO) build -p tallmc-core --target wasm32-unknown-unknown
	$(NICE) $(CARGO) build -p tallmc-core --target thumbv7em-none-eabihf

browser-test: node-deps chromium build
	node --test --test-concurrency=1 tests/browser/

# The wasm/native speed ratio of one seeded chain (recorded in BENCHMARKS.md).
bench: node-deps chromium build
	node tests/browser/bench.mjs

# ---------------------------------------------------------------------------------------------
# Build

cli:
	$(NICE) $(CARGO) build --release -p tallmc

wasm: rust-targets wasm-bindgen-cli
	$(NICE) $(CARGO) build -p tallmc-web --release --target wasm32-unknown-unknown
	wasm-bindgen --target web --out-dir www/pkg $(WASM)

# uPlot is served from www/vendor (copied from node_modules; no CDN).
vendor: node-deps
	mkdir -p www/vendor
	cp node_modules/uplot/dist/uPlot.esm.js node_modules/uplot/dist/uPlot.min.css www/vendor/

# ---------------------------------------------------------------------------------------------
# Installers: each checks first and does nothing when the tool is present.

deps: rust-targets wasm-bindgen-cli node-deps chromium

rust-targets:
	@installed="$$(rustup target list --installed)"; \
	for t in $(RUST_TARGETS); do \
	  echo "$$installed" | grep -qx "$$t" || rustup target add "$$t"; \
	done

wasm-bindgen-cli:
	@if [ "$$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(WBG_VERSION)" ]; then \
	  echo "installing wasm-bindgen-cli $(WBG_VERSION)"; \
	  $(NICE) $(CARGO) install wasm-bindgen-cli --version $(WBG_VERSION) --locked --force; \
	fi

node-deps:
	@command -v npm >/dev/null || ($(SUDO) apt-get update && $(SUDO) apt-get install -y nodejs npm)
	@if [ ! -d node_modules/uplot ] || [ ! -d node_modules/playwright-core ]; then npm ci; fi

chromium:
	@if [ ! -x /usr/bin/chromium ]; then $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; fi
