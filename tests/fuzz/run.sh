#!/usr/bin/env bash
# Runs the libFuzzer harnesses (under ASan and UBSan) in one of two modes:
#
#   smoke <fuzz-build-dir> <seconds>          (make fuzz-smoke, in make test and CI)
#     Replays every seed (made from the golden vectors by seeds.mjs) and every input of the saved
#     corpus (tests/fuzz/corpus/<name>/) through its harness, one input at a time, so a finding
#     that was fixed can never come back unnoticed; then fuzzes each harness for <seconds>.
#   depth <fuzz-build-dir> <seconds> <runs>   (make fuzz)
#     The same replay, then each harness until it reaches <runs> executions or <seconds>, whichever
#     comes first, with a status line while it runs; then merges what it found into the saved
#     corpus (-merge=1: only inputs that add edges beyond the seeds, smallest first), kept under
#     FUZZ_CORPUS_KIB (default 24) per harness.
#
# FUZZ_ONLY="a b" limits a run to those harnesses (names without fuzz_). Every harness runs even
# after one fails; the run fails at the end naming each failing harness, its input or artifact,
# and the command that reproduces it. Per-harness figures go to <fuzz-build-dir>/figures.tsv.
set -euo pipefail
mode=${1:?usage: run.sh smoke|depth <fuzz-build-dir> <seconds> [runs]}
dir=${2:?fuzz build dir}
seconds=${3:?seconds per harness}
runs=${4:-0}
case $mode in smoke | depth) ;; *) echo "run.sh: mode is smoke or depth, not '$mode'" >&2 && exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
saved_root=$here/corpus
seeds_root=$dir/seeds
work_root=$dir/corpus
artifacts=$dir/artifacts
budget_kib=${FUZZ_CORPUS_KIB:-24}
figures=$dir/figures.tsv
mkdir -p "$artifacts" "$saved_root"
rm -rf "$seeds_root"
node "$here/seeds.mjs" "$seeds_root" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# -entropic=0: libFuzzer's entropic schedule updates a frequency for every rare feature an input
# touches, and the stateful harnesses (a bus, a mailbox, a relay per input) touch 10,000 to 20,000:
# it took 37% of fuzz_mailbox_request's CPU and 29% of fuzz_bus_envelope's, and turning it off
# cuts their CPU per run by 35 to 45% (tests/fuzz/README.md § Cost per run). FUZZ_ENTROPIC=1 keeps it.
common=(-max_len=200000 -rss_limit_mb=2048 -timeout=10 -entropic="${FUZZ_ENTROPIC:-0}")
printf 'harness\truns\texec_per_s\tcov\tft\tcorpus_units\tsaved_units\tsaved_kib\tseconds\tcpu_seconds\texec_per_cpu_s\n' >"$figures"

failures=()
fail() {
  failures+=("$1")
  echo "[fuzz] $1" >&2
}

# The libFuzzer status fields of the last status line in a log: "runs cov ft corp exec/s".
last_status() {
  grep -E '^#[0-9]+' "$1" 2>/dev/null | tail -1 |
    sed -E 's/^#([0-9]+).*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+\/[^ ]+).*exec\/s: ([0-9]+).*/\1 \2 \3 \4 \5/;t;d'
}

# Replays the seeds and the saved corpus one input at a time; a crash names the input.
replay() {
  local h=$1 exe=$2 log=$dir/fuzz_$1.replay.log
  local inputs=()
  shopt -s nullglob
  inputs=("$seeds_root/$h"/* "$saved_root/$h"/*)
  shopt -u nullglob
  [ ${#inputs[@]} -gt 0 ] || return 0
  if ! "$exe" "${common[@]}" -runs=1 "${inputs[@]}" >"$log" 2>&1; then
    local input
    input=$(grep -o '^Running: .*' "$log" | tail -1 | cut -c10-)
    tail -30 "$log"
    fail "$h FAILED replaying ${input:-an input}: reproduce with $exe ${input:-<input>}"
    return 1
  fi
  echo "[fuzz] $h: replayed ${#inputs[@]} inputs (seeds and saved corpus), clean"
}

# Fuzzes from seeds + saved corpus in a fresh work corpus, printing a status line meanwhile.
fuzz() {
  local h=$1 exe=$2 log=$dir/fuzz_$1.log work=$work_root/$1
  rm -rf "$work"
  mkdir -p "$work"
  cp "$seeds_root/$h"/* "$work"/ 2>/dev/null || true
  cp "$saved_root/$h"/* "$work"/ 2>/dev/null || true
  local limit=(-max_total_time="$seconds")
  [ "$runs" -gt 0 ] && limit+=(-runs="$runs")
  local start=$SECONDS
  # CPU seconds as well as wall ones: on a shared machine at nice 19 the wall rate measures the
  # other jobs, the CPU rate what the harness costs.
  (
    TIMEFORMAT='%U %S'
    time "$exe" "$work" "${common[@]}" "${limit[@]}" -print_final_stats=1 \
      -artifact_prefix="$artifacts/$h-" >"$log" 2>&1
  ) 2>"$dir/fuzz_$h.cpu" &
  local pid=$! tick=0
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    tick=$((tick + 1))
    if [ -t 1 ] || [ $((tick % 30)) -eq 0 ]; then
      read -r r c f corp eps <<<"$(last_status "$log")" || true
      local line="[fuzz] $h: ${r:-0} runs, ${eps:-?} exec/s, cov ${c:-?}, corpus ${corp:-?}, $((SECONDS - start))s of ${seconds}s"
      if [ -t 1 ]; then printf '\r\033[K%s' "$line"; else echo "$line"; fi
    fi
  done
  [ -t 1 ] && printf '\r\033[K'
  local rc=0
  wait "$pid" || rc=$?
  local elapsed=$((SECONDS - start))
  local done_runs eps
  done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  read -r r c f corp _ <<<"$(last_status "$log")" || true
  local cpu eps_cpu
  cpu=$(tail -1 "$dir/fuzz_$h.cpu" 2>/dev/null | awk '{printf "%.1f", $1 + $2}')
  eps_cpu=$(awk -v r="${done_runs:-0}" -v c="${cpu:-0}" 'BEGIN {if (c > 0) printf "%d", r / c; else print "-"}')
  if [ "$rc" -ne 0 ]; then
    tail -40 "$log"
    local artifact
    artifact=$(grep -o "Test unit written to .*" "$log" | tail -1 | cut -c22-)
    fail "$h FAILED after ${r:-?} runs: reproduce with $exe ${artifact:-<artifact in $artifacts>} (log $log)"
    return 1
  fi
  local saved_units=- saved_kib=-
  [ "$mode" = depth ] && save_corpus "$h" "$exe" && {
    saved_units=$(find "$saved_root/$h" -type f | wc -l)
    saved_kib=$(($(find "$saved_root/$h" -type f -printf '%s\n' | awk '{t += $1} END {print t + 0}') / 1024))
  }
  echo "[fuzz] $h ok: ${done_runs:-${r:-?}} runs in ${elapsed}s, ${eps:-?} exec/s (${eps_cpu} per CPU second), cov ${c:-?} ft ${f:-?}, corpus ${corp:-?}, saved ${saved_units} inputs (${saved_kib} KiB), no finding"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$h" "${done_runs:-${r:-}}" "${eps:-}" "${c:-}" "${f:-}" \
    "${corp%%/*}" "$saved_units" "$saved_kib" "$elapsed" "${cpu:-}" "$eps_cpu" >>"$figures"
}

# Minimises the work corpus against the seeds into tests/fuzz/corpus/<h>/: only inputs that add
# edges the seeds lack are kept (the seeds are rebuilt from the golden vectors on every run).
# Inputs named regress-* (a fixed finding's reproducer, added by hand) are always kept. Over the
# byte budget, the largest of the others go first.
save_corpus() {
  local h=$1 exe=$2 merged=$dir/merge/$1
  rm -rf "$merged"
  mkdir -p "$merged"
  cp "$seeds_root/$h"/* "$merged"/ 2>/dev/null || true
  local regressions=$dir/merge/$1.regress
  rm -rf "$regressions"
  mkdir -p "$regressions"
  cp "$saved_root/$h"/regress-* "$regressions"/ 2>/dev/null || true
  cp "$regressions"/* "$merged"/ 2>/dev/null || true
  # -use_counters=0: an input is kept for a new edge, not for a new hit count of a known one,
  # which keeps the saved corpus to a few hundred small files.
  if ! "$exe" -merge=1 -use_counters=0 "${common[@]}" "$merged" "$work_root/$h" >"$dir/fuzz_$h.merge.log" 2>&1; then
    tail -20 "$dir/fuzz_$h.merge.log"
    fail "$h: merging its corpus failed (log $dir/fuzz_$h.merge.log); the saved corpus is unchanged"
    return 1
  fi
  rm -f "$merged"/seed-* "$merged"/regress-*
  local total=0 kept=0 dropped=0 size file
  rm -rf "$saved_root/$h"
  mkdir -p "$saved_root/$h"
  cp "$regressions"/* "$saved_root/$h"/ 2>/dev/null || true
  while read -r size file; do
    if [ $((total + size)) -le $((budget_kib * 1024)) ]; then
      cp "$file" "$saved_root/$h/"
      total=$((total + size))
      kept=$((kept + 1))
    else
      dropped=$((dropped + 1))
    fi
  done < <(find "$merged" -type f -printf '%s %p\n' | sort -n)
  [ "$dropped" -eq 0 ] || echo "[fuzz] $h: $dropped of $((kept + dropped)) minimised inputs dropped, over the ${budget_kib} KiB budget (largest first)"
}

for exe in "$dir"/fuzz_*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  h=${exe##*/fuzz_}
  if [ -n "${FUZZ_ONLY:-}" ] && [[ " $FUZZ_ONLY " != *" $h "* ]]; then continue; fi
  replay "$h" "$exe" || continue
  echo "[fuzz] $h: fuzzing for ${seconds}s$([ "$runs" -gt 0 ] && echo " or $runs runs")"
  fuzz "$h" "$exe" || continue
done

if [ ${#failures[@]} -gt 0 ]; then
  echo "[fuzz] ${#failures[@]} harness(es) failed:" >&2
  printf '  %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "[fuzz] every harness clean; figures in $figures"
