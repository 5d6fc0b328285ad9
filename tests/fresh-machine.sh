#!/usr/bin/env bash
# Fresh-machine check: the README's two set-up commands on a clean clone, as a new user runs them.
#
#   tests/fresh-machine.sh            (about 15–20 min on 2 cores; not part of `make test`)
#
# The clone gets an empty cargo home (so every crate and every cargo-installed tool is fetched and
# built again), a PATH holding only the system directories and the rustup proxies (no wasm-bindgen,
# no wasm-pack), no node_modules and no www/pkg. It then runs `make serve` until the playground
# answers (page, wasm package and its package.json served), stops the server, and runs `make test`.
# It prints the wall time of each step; the last result goes in the README's set-up section.
# What it cannot make fresh: Debian packages already installed (Chromium, Node.js) stay installed.
set -euo pipefail

src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d "${TMPDIR:-/tmp}/tallmc-fresh.XXXXXX")
port=${PORT:-18080}
keep=${KEEP:-0}
server=""
cleanup() {
  [ -n "$server" ] && kill -- "-$server" 2>/dev/null || true
  [ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

# Only the rustup proxies from the existing toolchain install; nothing else cargo installed.
rustup_bin=$(dirname "$(command -v rustup)")
mkdir -p "$work/bin" "$work/cargo-home"
for tool in cargo rustc rustup rustdoc rustfmt cargo-fmt cargo-clippy clippy-driver; do
  [ -e "$rustup_bin/$tool" ] && ln -s "$rustup_bin/$tool" "$work/bin/$tool"
done
export CARGO_HOME="$work/cargo-home"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export PATH="$work/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
unset CARGO_TARGET_DIR
for tool in wasm-bindgen wasm-pack; do
  if command -v "$tool" >/dev/null; then echo "fresh-machine: $tool is on PATH: $(command -v "$tool")"; exit 1; fi
done

declare -a steps=()
now() { date +%s.%N; }
step() { # step NAME SECONDS
  steps+=("$(printf '%-34s %8.1f s' "$1" "$2")")
  echo "== fresh-machine: $1: $(printf '%.1f' "$2") s"
}

t0=$(now)
git clone -q "$src" "$work/repo"
cd "$work/repo"
[ ! -e node_modules ] && [ ! -e www/pkg ] || { echo "fresh-machine: the clone is not clean"; exit 1; }
step "git clone" "$(echo "$(now) - $t0" | bc)"

# `make serve` installs and builds, then serves forever: wait for the page, then stop it.
t0=$(now)
setsid make serve PORT="$port" > "$work/serve.log" 2>&1 &
server=$!
up=0
while kill -0 "$server" 2>/dev/null; do
  if curl -fsS "http://127.0.0.1:$port/" -o /dev/null 2>/dev/null; then up=1; break; fi
  sleep 2
done
if [ "$up" != 1 ]; then
  tail -30 "$work/serve.log"; echo "fresh-machine: make serve stopped before the playground answered"; exit 1
fi
step "make serve (until the page answers)" "$(echo "$(now) - $t0" | bc)"
curl -fsS "http://127.0.0.1:$port/index.html" | grep -q 'data-testid="run-button"' \
  || { echo "fresh-machine: the page has no run button"; exit 1; }
curl -fsS "http://127.0.0.1:$port/pkg/package.json" | grep -q '"name": "tallmc-web"' \
  || { echo "fresh-machine: www/pkg/package.json is not served"; exit 1; }
curl -fsS "http://127.0.0.1:$port/pkg/tallmc_web_bg.wasm" -o /dev/null \
  || { echo "fresh-machine: the wasm module is not served"; exit 1; }
kill -- "-$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
server=""

t0=$(now)
if ! make test > "$work/test.log" 2>&1; then
  tail -40 "$work/test.log"; echo "fresh-machine: make test failed (log: $work/test.log)"; keep=1; exit 1
fi
step "make test" "$(echo "$(now) - $t0" | bc)"
grep -E '^# (tests|pass|fail) ' "$work/test.log" || true

echo
echo "fresh-machine: passed on $(date -u +%F) ($(nproc) cores, $(uname -m))"
printf '  %s\n' "${steps[@]}"
