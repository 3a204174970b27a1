#!/usr/bin/env bash
# Runs every libFuzzer harness for a while, under ASan and UBSan, from seeds made out of the
# golden vectors. Fails on the first crash, leak or sanitizer report, and names the reproducer.
# Usage: tests/fuzz/run.sh <fuzz-build-dir> <seconds-per-harness>
set -euo pipefail
dir=$1
seconds=$2
corpus=$dir/corpus
artifacts=$dir/artifacts
mkdir -p "$artifacts"
node "$(dirname "$0")/seeds.mjs" "$corpus"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
for exe in "$dir"/fuzz_*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  harness=${exe##*/fuzz_}
  case $harness in *.log) continue ;; esac
  echo "[fuzz] $harness for ${seconds}s"
  log=$dir/fuzz_$harness.log
  mkdir -p "$corpus/$harness"
  if ! "$exe" "$corpus/$harness" -max_total_time="$seconds" -max_len=200000 \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/$harness-" \
      >"$log" 2>&1; then
    tail -40 "$log"
    echo "[fuzz] $harness FAILED: reproduce with $dir/fuzz_$harness <artifact> (artifacts in $artifacts)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  echo "[fuzz] $harness ok: $runs runs, no crash"
done
