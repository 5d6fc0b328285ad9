#!/usr/bin/env bash
# Re-runs the cases of issue 19's table against target/release/tallmc and prints, per case,
# the exit code, the wall seconds and the first line of stderr (cut at 160 characters).
# Not part of `make test` (cli/tests/hostile.rs and bounded.rs assert each row); this is the
# table as a user would see it:  tests/hostile-table.sh
set -u
BIN=${BIN:-$(dirname "$0")/../target/release/tallmc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$BIN" simulate --model logistic --n 200 --d 3 --seed 1 --out "$T/lg.csv"
"$BIN" simulate --model gmm --n 200 --seed 1 --out "$T/gmm.csv"
"$BIN" simulate --model pmf --n 200 --seed 1 --out "$T/pmf.csv"
python3 - "$T" <<'PY'
import sys
t = sys.argv[1]
open(f"{t}/wide.csv", "w").write(",".join(f"c{i}" for i in range(5_000_000)) + "\n" + ",".join("1" for _ in range(5_000_000)) + "\n")
open(f"{t}/cell.csv", "w").write("y,x\n1," + "9" * 50_000_000 + "e999999\n0,1\n")
PY
run() {
  local label=$1; shift
  local t0=$(date +%s.%N)
  timeout 600 "$@" > "$T/out.txt" 2> "$T/err.txt"
  local rc=$?
  local t1=$(date +%s.%N)
  printf '%-52s exit %3s %7.1f s  %s\n' "$label" "$rc" "$(echo "$t1 - $t0" | bc)" \
    "$(grep -v '^$' "$T/err.txt" | head -1 | cut -c1-160)"
}
R=(run --data "$T/lg.csv" --model logistic --response y --chains 2 --out "$T/o")
run "run --draws 1e9"                "$BIN" "${R[@]}" --sampler rwmh --draws 1000000000
run "run --draws 1e12"               "$BIN" "${R[@]}" --sampler rwmh --draws 1000000000000
run "run --draws 1e8"                "$BIN" "${R[@]}" --sampler rwmh --draws 100000000
run "run --warmup 1e12"              "$BIN" "${R[@]}" --sampler rwmh --warmup 1000000000000
run "hmc-ecs m=1e12"                 "$BIN" "${R[@]}" --sampler hmc-ecs --set m=1000000000000
run "hmc-ecs-signed m=1e12"          "$BIN" "${R[@]}" --sampler hmc-ecs-signed --set m=1000000000000
run "simulate --n 1e12"              "$BIN" simulate --model logistic --n 1000000000000 --out "$T/x.csv"
run "header of 5 000 000 columns"    "$BIN" run --data "$T/wide.csv" --model logistic --response c0 --sampler rwmh --out "$T/o"
run "pmf + sgld, 200 rows"           "$BIN" run --data "$T/pmf.csv" --model pmf --sampler sgld --chains 1 --warmup 100 --draws 100 --out "$T/o"
run "hmc step_size=1e10"             "$BIN" "${R[@]}" --sampler hmc --set step_size=1e10
run "sgld step_size=1e300"           "$BIN" "${R[@]}" --sampler sgld --set step_size=1e300
run "50 MB non-finite cell"          "$BIN" run --data "$T/cell.csv" --model logistic --response y --sampler rwmh --out "$T/o"
run "--draws 18446744073709551615"   "$BIN" "${R[@]}" --sampler rwmh --draws 18446744073709551615
run "gmm without --response"         "$BIN" run --data "$T/gmm.csv" --model gmm --sampler sgld --out "$T/o"
"$BIN" samplers | grep -c 'inf\]' | xargs printf '%-52s %s\n' "help lines with a closed infinite bound:"
"$BIN" samplers | grep -cE '0{20}' | xargs printf '%-52s %s\n' "help lines with 20 zeros in a row:"
